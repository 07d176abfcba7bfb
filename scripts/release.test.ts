/**
 * `bun run release:test` (`bun test ./scripts/release.test.ts`): checks what
 * `bun run release` left in dist/release/. It builds nothing; run
 * `bun run release` first.
 *
 * - the five executables exist, named intake-<package.json version>-<os>-<arch>,
 *   and nothing else is in the folder but SHA256SUMS;
 * - each one's header bytes say the right format and architecture (ELF,
 *   Mach-O 64 or PE32+; x86-64 or arm64), and the Unix ones are executable;
 * - SHA256SUMS lists exactly these five with the hashes computed here, and
 *   `sha256sum -c` agrees;
 * - the executable for this machine (linux-x64 here: the only one that runs)
 *   prints the version and the commit it was built from for --version, and
 *   `serve --port 0` in a fresh empty directory prints its listening line and
 *   a new API key, answers /healthz and exits 0 on SIGTERM. On 127.0.0.1 only.
 *
 * It lives outside bunfig.toml's test root (./test), so `bun test` and .ci/run
 * never pick it up: they do not cross-compile.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Subprocess } from 'bun'
import packageJson from '../package.json' with { type: 'json' }

const PROJECT_ROOT = resolve(import.meta.dir, '..')
const RELEASE_DIR = join(PROJECT_ROOT, 'dist', 'release')
const SUMS = join(RELEASE_DIR, 'SHA256SUMS')
const VERSION = packageJson.version
const RUN_FIRST = 'run `bun run release` first (this test builds nothing)'

type Format = 'ELF' | 'Mach-O' | 'PE'
type Arch = 'x86-64' | 'arm64'

interface Artifact {
  name: string
  format: Format
  arch: Arch
  /** process.platform / process.arch of the machines that run it. */
  platform: NodeJS.Platform
  nodeArch: string
}

/** What `bun run release` must produce, stated here rather than taken from scripts/release.ts. */
const ARTIFACTS: Artifact[] = [
  { name: `intake-${VERSION}-linux-x64`, format: 'ELF', arch: 'x86-64', platform: 'linux', nodeArch: 'x64' },
  { name: `intake-${VERSION}-linux-arm64`, format: 'ELF', arch: 'arm64', platform: 'linux', nodeArch: 'arm64' },
  { name: `intake-${VERSION}-darwin-arm64`, format: 'Mach-O', arch: 'arm64', platform: 'darwin', nodeArch: 'arm64' },
  { name: `intake-${VERSION}-darwin-x64`, format: 'Mach-O', arch: 'x86-64', platform: 'darwin', nodeArch: 'x64' },
  { name: `intake-${VERSION}-windows-x64.exe`, format: 'PE', arch: 'x86-64', platform: 'win32', nodeArch: 'x64' },
]

const pathOf = (artifact: Artifact) => join(RELEASE_DIR, artifact.name)

/** The artifact's path, or a failure that says how to make it. */
function requireArtifact(artifact: Artifact): string {
  const path = pathOf(artifact)
  if (!existsSync(path)) throw new Error(`${path} does not exist: ${RUN_FIRST}`)
  return path
}

// ------------------------------------------------------------------ header bytes

/** `length` bytes of `path` from `offset` (fewer at the end of the file). */
function readBytes(path: string, offset: number, length: number): Buffer {
  const fd = openSync(path, 'r')
  try {
    const buffer = Buffer.alloc(length)
    const read = readSync(fd, buffer, 0, length, offset)
    return buffer.subarray(0, read)
  } finally {
    closeSync(fd)
  }
}

interface Header {
  format: Format | 'unknown'
  arch: Arch | 'unknown'
  /** Everything read, for the failure message. */
  detail: string
}

const hex = (n: number | undefined, width = 4) =>
  n === undefined ? 'none' : `0x${n.toString(16).padStart(width, '0')}`

const ELF_MACHINES: Record<number, Arch> = { 62: 'x86-64', 183: 'arm64' }
const MACHO_CPUS: Record<number, Arch> = { 16777223: 'x86-64', 16777228: 'arm64' }
const PE_MACHINES: Record<number, Arch> = { 34404: 'x86-64', 43620: 'arm64' }

/** The executable format and architecture `path` declares in its first bytes. */
function readHeader(path: string): Header {
  const head = readBytes(path, 0, 64)
  const u16 = (b: Buffer, at: number) => (at + 2 <= b.length ? b.readUInt16LE(at) : undefined)
  const u32 = (b: Buffer, at: number) => (at + 4 <= b.length ? b.readUInt32LE(at) : undefined)

  // ELF: 7f 'E' 'L' 'F'; EI_CLASS 2 = 64-bit, EI_DATA 1 = little-endian; e_type (2 EXEC, 3 DYN) at 16; e_machine at 18.
  if (head.subarray(0, 4).equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]))) {
    const [elfClass, data, type, machine] = [head[4], head[5], u16(head, 16), u16(head, 18)]
    const executable = elfClass === 2 && data === 1 && (type === 2 || type === 3)
    return {
      format: executable ? 'ELF' : 'unknown',
      arch: (machine !== undefined && ELF_MACHINES[machine]) || 'unknown',
      detail: `ELF class ${elfClass}, data ${data}, e_type ${type}, e_machine ${hex(machine)}`,
    }
  }
  // Mach-O 64, little-endian: cf fa ed fe (MH_MAGIC_64); cputype at 4; filetype at 12 (2 = MH_EXECUTE).
  if (head.subarray(0, 4).equals(Buffer.from([0xcf, 0xfa, 0xed, 0xfe]))) {
    const [cpu, fileType] = [u32(head, 4), u32(head, 12)]
    return {
      format: fileType === 2 ? 'Mach-O' : 'unknown',
      arch: (cpu !== undefined && MACHO_CPUS[cpu]) || 'unknown',
      detail: `Mach-O 64 cputype ${hex(cpu, 8)}, filetype ${fileType}`,
    }
  }
  // PE: 'MZ'; e_lfanew at 0x3c; there 'PE\0\0', Machine (+4), Characteristics (+22), then the optional header's magic (+24, 0x20b = PE32+).
  if (head.subarray(0, 2).toString('latin1') === 'MZ') {
    const lfanew = u32(head, 0x3c)
    if (lfanew === undefined) return { format: 'unknown', arch: 'unknown', detail: 'MZ, too short for e_lfanew' }
    const pe = readBytes(path, lfanew, 26)
    const signature = pe.subarray(0, 4)
    const [machine, characteristics, magic] = [u16(pe, 4), u16(pe, 22), u16(pe, 24)]
    const executableImage =
      characteristics !== undefined && (characteristics & 0x0002) !== 0 && (characteristics & 0x2000) === 0
    const ok = signature.equals(Buffer.from('PE\0\0', 'latin1')) && magic === 0x20b && executableImage
    return {
      format: ok ? 'PE' : 'unknown',
      arch: (machine !== undefined && PE_MACHINES[machine]) || 'unknown',
      detail: `MZ, e_lfanew ${hex(lfanew)}, signature ${JSON.stringify(signature.toString('latin1'))}, machine ${hex(machine)}, characteristics ${hex(characteristics)}, optional header magic ${hex(magic)}`,
    }
  }
  return { format: 'unknown', arch: 'unknown', detail: `first bytes ${head.subarray(0, 8).toString('hex')}` }
}

async function sha256(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher('sha256')
  for await (const chunk of Bun.file(path).stream()) hasher.update(chunk)
  return hasher.digest('hex')
}

// ------------------------------------------------------------------ the files

describe('dist/release', () => {
  test('holds the five executables, named with the version from package.json', () => {
    if (!existsSync(RELEASE_DIR)) throw new Error(`${RELEASE_DIR} does not exist: ${RUN_FIRST}`)
    const missing = ARTIFACTS.filter((artifact) => !existsSync(pathOf(artifact))).map((artifact) => artifact.name)
    if (missing.length > 0) {
      throw new Error(
        `missing from dist/release/: ${missing.join(', ')} (it holds: ${readdirSync(RELEASE_DIR).join(', ') || 'nothing'}); ${RUN_FIRST}`,
      )
    }
    for (const artifact of ARTIFACTS) {
      const stat = statSync(pathOf(artifact))
      expect({ name: artifact.name, file: stat.isFile(), overOneMiB: stat.size > 1024 * 1024 }).toEqual({
        name: artifact.name,
        file: true,
        overOneMiB: true,
      })
    }
  })

  test('holds nothing else but SHA256SUMS (no stale files of an earlier release)', () => {
    if (!existsSync(RELEASE_DIR)) throw new Error(`${RELEASE_DIR} does not exist: ${RUN_FIRST}`)
    expect(readdirSync(RELEASE_DIR).sort()).toEqual(
      [...ARTIFACTS.map((artifact) => artifact.name), 'SHA256SUMS'].sort(),
    )
  })

  for (const artifact of ARTIFACTS) {
    test(`${artifact.name}: ${artifact.format} ${artifact.arch} executable`, () => {
      const path = requireArtifact(artifact)
      const header = readHeader(path)
      expect({ name: artifact.name, format: header.format, arch: header.arch, detail: header.detail }).toEqual({
        name: artifact.name,
        format: artifact.format,
        arch: artifact.arch,
        detail: header.detail,
      })
      // Unix executables keep their executable bit: a user can run them once downloaded and unpacked.
      if (artifact.format !== 'PE')
        expect({ name: artifact.name, executable: (statSync(path).mode & 0o111) !== 0 }).toEqual({
          name: artifact.name,
          executable: true,
        })
    })
  }
})

describe('SHA256SUMS', () => {
  const readSums = () => {
    if (!existsSync(SUMS)) throw new Error(`${SUMS} does not exist: ${RUN_FIRST}`)
    return readFileSync(SUMS, 'utf8')
  }

  test('lists exactly the five executables, each with its SHA-256, in the sha256sum format', async () => {
    const text = readSums()
    expect(text.endsWith('\n')).toBe(true)
    const lines = text.slice(0, -1).split('\n')
    const listed = new Map<string, string>()
    for (const line of lines) {
      // "<64 lowercase hex>  <name>": two spaces, the text-mode separator `sha256sum` writes.
      const match = /^([0-9a-f]{64}) {2}(\S+)$/.exec(line)
      expect({ line, wellFormed: match !== null }).toEqual({ line, wellFormed: true })
      expect({ line, duplicate: listed.has(match![2]!) }).toEqual({ line, duplicate: false })
      listed.set(match![2]!, match![1]!)
    }
    expect([...listed.keys()].sort()).toEqual(ARTIFACTS.map((artifact) => artifact.name).sort())
    for (const artifact of ARTIFACTS) {
      const actual = await sha256(requireArtifact(artifact))
      expect({ name: artifact.name, sha256: listed.get(artifact.name) }).toEqual({
        name: artifact.name,
        sha256: actual,
      })
    }
  }, 60_000)

  test('`sha256sum -c --strict SHA256SUMS` in dist/release/ passes', async () => {
    readSums()
    const proc = Bun.spawn(['sha256sum', '-c', '--strict', 'SHA256SUMS'], {
      cwd: RELEASE_DIR,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    expect({ code, stdout, stderr }).toEqual({ code: 0, stdout, stderr: '' })
    expect(stdout.trim().split('\n').sort()).toEqual(ARTIFACTS.map((artifact) => `${artifact.name}: OK`).sort())
  }, 60_000)
})

// ------------------------------------------------------------------ the executable for this machine

/** The one artifact this machine can run (linux-x64 here). */
const runnable = ARTIFACTS.find(
  (artifact) => artifact.platform === process.platform && artifact.nodeArch === process.arch,
)

/** The environment without SERVICE_* settings: the machine running the test must not change what is tested (the host stays 127.0.0.1). */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && !name.startsWith('SERVICE_')) env[name] = value
  return env
}

const tempDirs: string[] = []
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'intake-release-'))
  tempDirs.push(dir)
  return dir
}

let server: Subprocess<'ignore', 'pipe', 'pipe'> | undefined

afterAll(async () => {
  if (server && server.exitCode === null && server.signalCode === null) {
    server.kill('SIGKILL')
    await server.exited
  }
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
})

/** Everything a stream has written so far, read as it arrives. */
function collect(stream: ReadableStream<Uint8Array>) {
  const state = { text: '', ended: false }
  void (async () => {
    const decoder = new TextDecoder()
    try {
      for await (const chunk of stream) state.text += decoder.decode(chunk, { stream: true })
    } catch {
      // Killed: what arrived is what there is.
    }
    state.ended = true
  })()
  return state
}

describe(`the executable for this machine (${runnable?.name ?? `none for ${process.platform}-${process.arch}`})`, () => {
  const artifactPath = () => {
    if (!runnable || runnable.platform === 'win32') {
      throw new Error(
        `this test runs the release's Linux or macOS executable; none of the five is for ${process.platform}-${process.arch}`,
      )
    }
    return requireArtifact(runnable)
  }

  test('--version prints the version from package.json and the commit the release was built from', async () => {
    const proc = Bun.spawn([artifactPath(), '--version'], {
      cwd: freshDir(),
      env: cleanEnv(),
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    const git = Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], { cwd: PROJECT_ROOT, stderr: 'ignore' })
    const commit = git.exitCode === 0 ? git.stdout.toString().trim() : 'unknown'
    expect(stdout.split('\n').slice(0, 2)).toEqual([`intake ${VERSION}`, `commit: ${commit}`])
  }, 30_000)

  test('serve --port 0 in a fresh empty directory: listening line, API key, GET /healthz, exit 0 on SIGTERM', async () => {
    const path = artifactPath()
    const cwd = freshDir()
    expect(readdirSync(cwd)).toEqual([])

    server = Bun.spawn([path, 'serve', '--port', '0'], {
      cwd,
      env: cleanEnv(),
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const proc = server
    const out = collect(proc.stdout)
    const err = collect(proc.stderr)
    const describeChild = () =>
      `exit code ${proc.exitCode}, signal ${proc.signalCode}\n--- stdout ---\n${out.text}\n--- stderr ---\n${err.text}`

    // The listening line and the new key (a fresh database: the first start creates one), within 15 s.
    // (A later start adds " (data: <path>)" to the line; a first one may too.)
    const listening = /^intake (\S+) listening on (http:\/\/127\.0\.0\.1:(\d+))(?: \(.*\))?\s*$/m
    const apiKey = /^API key: svc_live_[0-9a-f]{48}\s*$/m
    const deadline = Date.now() + 15_000
    while (!(listening.test(out.text) && apiKey.test(out.text))) {
      if (out.ended || proc.exitCode !== null || Date.now() > deadline) {
        throw new Error(
          `no listening line on 127.0.0.1 and API key line from ${path} serve --port 0\n${describeChild()}`,
        )
      }
      await Bun.sleep(25)
    }
    const [, version, url, port] = listening.exec(out.text)!
    expect(version).toBe(VERSION)
    expect(Number(port)).toBeGreaterThan(0)
    expect(existsSync(join(cwd, 'data', 'intake.db'))).toBe(true)

    const response = await fetch(`${url}/healthz`)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ status: 'ok' })

    proc.kill('SIGTERM')
    let timer: Timer | undefined
    const exited = await Promise.race([
      proc.exited,
      new Promise<'timeout'>((done) => (timer = setTimeout(() => done('timeout'), 15_000))),
    ])
    clearTimeout(timer)
    if (exited === 'timeout') throw new Error(`still running 15 s after SIGTERM\n${describeChild()}`)
    expect({ code: exited, signal: proc.signalCode, output: describeChild() }).toEqual({
      code: 0,
      signal: null,
      output: describeChild(),
    })
  }, 60_000)
})
