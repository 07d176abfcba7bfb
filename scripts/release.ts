#!/usr/bin/env bun
/**
 * `bun run release`: cross-compiles intake for every platform it ships on,
 * into dist/release/, with a SHA256SUMS file beside the executables.
 *
 *   dist/release/intake-<version>-linux-x64
 *   dist/release/intake-<version>-linux-arm64
 *   dist/release/intake-<version>-darwin-arm64
 *   dist/release/intake-<version>-darwin-x64
 *   dist/release/intake-<version>-windows-x64.exe
 *   dist/release/SHA256SUMS        (`cd dist/release && sha256sum -c SHA256SUMS`)
 *
 * The version is package.json's, and CHANGELOG.md must describe it: a
 * `## [<version>] - YYYY-MM-DD` section (scripts/changelog.ts), else the script
 * says so in one line and exits 1 before building anything. The folder is
 * emptied first, so it only ever holds one release; when a target fails to
 * compile the script prints what the compiler said, empties the folder again
 * (no half release to upload by mistake) and exits 1.
 *
 * Each target is `bun build` with the flags of package.json's "build" script
 * and `--target=bun-<os>-<arch>`, and carries the commit it was built from
 * (`intake --version`); Bun fetches the target's runtime from the npm
 * registry the first time. Checked by `bun run release:test`
 * (scripts/release.test.ts), which `bun test` and .ci/run leave out.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import packageJson from '../package.json' with { type: 'json' }
import { changelogProblem } from './changelog.ts'

const PROJECT_ROOT = resolve(import.meta.dir, '..')
const RELEASE_DIR = join(PROJECT_ROOT, 'dist', 'release')
const SUMS_FILE = 'SHA256SUMS'
const CHANGELOG = join(PROJECT_ROOT, 'CHANGELOG.md')

const ENTRY = 'src/main.ts'
/** The flags of the "build" script besides --target and --outfile (checked below: the two must not drift apart). */
// Settings come from the environment and flags only: a .env or bunfig.toml in the working directory is not read.
const BUILD_FLAGS = [
  '--bytecode',
  '--format=esm',
  '--sourcemap=none',
  '--no-compile-autoload-dotenv',
  '--no-compile-autoload-bunfig',
]
/** src/version.ts's COMMIT, as the "build" script's shell computes it; releaseCommit() below is the same for each target. */
const COMMIT_DEFINE = `--define INTAKE_BUILD_COMMIT=\\"$(git rev-parse --short HEAD 2>/dev/null || echo unknown)\\"`
const BUILD_SCRIPT = `bun build --compile --target=bun ${BUILD_FLAGS.join(' ')} ${COMMIT_DEFINE} ${ENTRY} --outfile dist/intake`

interface Target {
  os: 'linux' | 'darwin' | 'windows'
  arch: 'x64' | 'arm64'
  /** Whether this target is compiled with --bytecode (see below). */
  bytecode: boolean
}

/**
 * --bytecode on cross targets: the bytecode is produced by the JavaScriptCore
 * of the Bun doing the build (this host's), and only the target's Bun reads it.
 * Upstream has had bugs where that failed, the binary crashing at start on its
 * target (oven-sh/bun#18416: Windows <-> Linux, Bun 1.2). With Bun 1.4.5 every
 * target compiles with --bytecode, and the cross-compiled ones that could be
 * run from a Linux x64 host started: linux-arm64 under qemu-aarch64, and
 * windows-x64 under Wine 8 (given a stub bcryptprimitives.dll, which Wine 8
 * lacks). Both printed --version, served /healthz and loaded
 * faster than without --bytecode (so they used the bytecode rather than
 * ignoring it). The darwin targets could not be run there. So all five keep
 * --bytecode. If a target crashes at start after a Bun upgrade, set its
 * `bytecode` to false: without --bytecode the target parses the bundled source
 * at start (slower, never wrong).
 */
const TARGETS: readonly Target[] = [
  { os: 'linux', arch: 'x64', bytecode: true },
  { os: 'linux', arch: 'arm64', bytecode: true },
  { os: 'darwin', arch: 'arm64', bytecode: true },
  { os: 'darwin', arch: 'x64', bytecode: true },
  { os: 'windows', arch: 'x64', bytecode: true },
]

const VERSION: string = packageJson.version

const artifactName = (target: Target, version = VERSION) =>
  `intake-${version}-${target.os}-${target.arch}${target.os === 'windows' ? '.exe' : ''}`

function fail(message: string): never {
  console.error(`\nrelease failed: ${message}`)
  process.exit(1)
}

/** The short hash of the checkout's HEAD, or "unknown", as the "build" script's `git rev-parse` gives it. */
function releaseCommit(): string {
  try {
    const git = Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], {
      cwd: PROJECT_ROOT,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'ignore',
    })
    const hash = git.stdout.toString().trim()
    return git.exitCode === 0 && hash !== '' ? hash : 'unknown'
  } catch {
    return 'unknown'
  }
}

/** The `bun build` command line for one target. */
function buildCommand(target: Target, outfile: string, commit: string): string[] {
  const flags = target.bytecode ? BUILD_FLAGS : BUILD_FLAGS.filter((flag) => flag !== '--bytecode')
  return [
    process.execPath,
    'build',
    '--compile',
    `--target=bun-${target.os}-${target.arch}`,
    ...flags,
    '--define',
    `INTAKE_BUILD_COMMIT=${JSON.stringify(commit)}`,
    ENTRY,
    '--outfile',
    outfile,
  ]
}

async function sha256(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher('sha256')
  for await (const chunk of Bun.file(path).stream()) hasher.update(chunk)
  return hasher.digest('hex')
}

const mebibytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

function emptyReleaseDir() {
  rmSync(RELEASE_DIR, { recursive: true, force: true })
  mkdirSync(RELEASE_DIR, { recursive: true })
}

async function release() {
  // A version that is not plain semver would make odd file names (or paths).
  if (!/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.test(VERSION)) {
    fail(`package.json's version ${JSON.stringify(VERSION)} is not a semver version`)
  }
  if (packageJson.scripts.build !== BUILD_SCRIPT) {
    fail(
      `package.json's "build" script is not the one scripts/release.ts copies its flags from:\n` +
        `  package.json:        ${packageJson.scripts.build}\n` +
        `  scripts/release.ts:  ${BUILD_SCRIPT}\n` +
        `Update BUILD_FLAGS (and ENTRY) in scripts/release.ts to match, so releases are built like dist/intake.`,
    )
  }
  if (!existsSync(CHANGELOG)) fail('there is no CHANGELOG.md to say what this release changes')
  const undescribed = changelogProblem(readFileSync(CHANGELOG, 'utf8'), VERSION)
  if (undescribed !== undefined) fail(`${undescribed}; nothing was built`)
  const commit = releaseCommit()

  // Stale files of earlier releases (another version's names, an old SHA256SUMS) go first.
  emptyReleaseDir()
  console.log(
    `intake ${VERSION} (commit ${commit}): building ${TARGETS.length} targets into ${relative(PROJECT_ROOT, RELEASE_DIR)}/ with bun ${Bun.version}`,
  )

  const built: Array<{ name: string; size: number; sha256: string }> = []
  for (const target of TARGETS) {
    const name = artifactName(target)
    const outfile = join(RELEASE_DIR, name)
    const command = buildCommand(target, outfile, commit)
    const startedAt = performance.now()
    const proc = Bun.spawn(command, { cwd: PROJECT_ROOT, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    let size = -1
    try {
      size = statSync(outfile).size
    } catch {
      // Reported below.
    }
    if (code !== 0 || size <= 0) {
      emptyReleaseDir()
      const shown = [
        'bun',
        ...command.slice(1).map((arg) => (arg === outfile ? relative(PROJECT_ROOT, arg) : arg)),
      ].join(' ')
      console.error(`\n$ ${shown}\n--- stdout ---\n${stdout}--- stderr ---\n${stderr}`)
      fail(
        code !== 0
          ? `bun build for bun-${target.os}-${target.arch} exited with code ${code} (its output is above); dist/release/ was emptied`
          : `bun build for bun-${target.os}-${target.arch} exited 0 but wrote no ${name}; dist/release/ was emptied`,
      )
    }
    console.log(
      `  ${name}${target.bytecode ? '' : ' (no --bytecode)'}: ${((performance.now() - startedAt) / 1000).toFixed(1)} s`,
    )
    built.push({ name, size, sha256: await sha256(outfile) })
  }

  // The `sha256sum` format: "<hex>  <name>" (two spaces: text mode), one line each, in build order.
  writeFileSync(join(RELEASE_DIR, SUMS_FILE), built.map(({ name, sha256 }) => `${sha256}  ${name}\n`).join(''))

  const unexpected = readdirSync(RELEASE_DIR).filter(
    (file) => file !== SUMS_FILE && !built.some(({ name }) => name === file),
  )
  if (unexpected.length > 0) fail(`dist/release/ holds files no target wrote: ${unexpected.join(', ')}`)

  const nameWidth = Math.max('name'.length, ...built.map(({ name }) => name.length))
  const sizeWidth = Math.max('size'.length, ...built.map(({ size }) => mebibytes(size).length))
  const row = (name: string, size: string, hash: string) =>
    `${name.padEnd(nameWidth)}  ${size.padStart(sizeWidth)}  ${hash}`
  console.log(`\n${row('name', 'size', 'sha256')}`)
  for (const { name, size, sha256 } of built) console.log(row(name, mebibytes(size), sha256))
  console.log(
    `\nwrote ${relative(PROJECT_ROOT, join(RELEASE_DIR, SUMS_FILE))}; check with: cd dist/release && sha256sum -c ${SUMS_FILE}`,
  )
}

await release()
