/**
 * Helpers for tests that drive the real, compiled executable (dist/intake):
 * build it once per test process, start it as a child process, read what it
 * prints, and stop it the way an operator would (SIGTERM).
 *
 * Every child started here is tracked; call `killAllChildren()` in afterAll so
 * nothing outlives the tests, even when one of them fails half-way.
 */
import { afterAll, beforeAll } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Subprocess } from 'bun'

/** The project root (/work/main), found from this file rather than from the test's cwd. */
export const PROJECT_ROOT = resolve(import.meta.dir, '..', '..')
const BINARY_PATH = join(PROJECT_ROOT, 'dist', 'intake')

/** `intake <version> listening on http://127.0.0.1:<port>`, and on later starts ` (data: <path>)` after it */
export const LISTENING_LINE = /^intake (\S+) listening on (http:\/\/127\.0\.0\.1:(\d+))(?: \(.*\))?\s*$/m

/** Every `svc_live_` key in `text`. */
export const keysIn = (text: string): string[] => text.match(/svc_live_[0-9a-f]{48}/g) ?? []

let building: Promise<string> | undefined

/** Building the executable takes a few seconds; allow for a slow machine. */
const BUILD_TIMEOUT = 60_000

/**
 * For a test file that runs the executable: builds it before the file's tests,
 * and afterwards kills every child still running and removes the temp dirs.
 */
export function useBuiltBinary(tempPrefix: string) {
  let path = ''
  const dirs: string[] = []
  beforeAll(async () => {
    path = await builtBinary()
  }, BUILD_TIMEOUT)
  afterAll(async () => {
    await killAllChildren()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })
  return {
    /** Absolute path of dist/intake (once the file's tests run). */
    get path() {
      return path
    },
    /** A fresh empty directory, removed after the file's tests. */
    tempDir() {
      const dir = mkdtempSync(join(tmpdir(), tempPrefix))
      dirs.push(dir)
      return dir
    },
  }
}

/**
 * Runs `bun run build` once per test process and returns the absolute path of
 * dist/intake. A failed build fails loudly, with everything the build printed.
 */
function builtBinary(): Promise<string> {
  building ??= (async () => {
    const proc = Bun.spawn([process.execPath, 'run', 'build'], {
      cwd: PROJECT_ROOT,
      env: childEnv(),
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    if (code !== 0) {
      throw new Error(
        `\`bun run build\` failed with exit code ${code} in ${PROJECT_ROOT}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`,
      )
    }
    if (!existsSync(BINARY_PATH)) {
      throw new Error(
        `\`bun run build\` succeeded but ${BINARY_PATH} does not exist\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`,
      )
    }
    return BINARY_PATH
  })()
  return building
}

/**
 * The environment a child gets: ours without any SERVICE_* setting (so the
 * machine running the tests cannot change what is tested), no drain (a stop
 * closes at once, as tests of what a stop does expect; the drain's own tests
 * set it), plus `extra`.
 */
export function childEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('SERVICE_')) env[name] = value
  }
  env.SERVICE_DRAIN_SECONDS = '0'
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name]
    else env[name] = value
  }
  return env
}

const children = new Set<Subprocess>()

/** Kills (SIGKILL) every child still running. For afterAll and for failures. */
export async function killAllChildren(): Promise<void> {
  const running = [...children]
  for (const child of running) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
  await Promise.all(running.map((child) => child.exited.catch(() => undefined)))
  children.clear()
}

/** Starts `binary args` in `cwd` with the cleaned environment plus `env`, output piped; tracked until it exits. */
function spawnChild(binary: string, args: string[], cwd: string, env?: Record<string, string | undefined>) {
  return track(
    Bun.spawn([binary, ...args], { cwd, env: childEnv(env), stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' }),
  )
}

/**
 * Like spawnChild, with stdout on a descriptor the test holds (a pipe it reads
 * only when it chooses: Bun reads a 'pipe' for the test eagerly, so it never fills).
 */
export function spawnWithStdout(
  binary: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined>; stdout: number },
) {
  return track(
    Bun.spawn([binary, ...args], {
      cwd: options.cwd,
      env: childEnv(options.env),
      stdin: 'ignore',
      stdout: options.stdout,
      stderr: 'pipe',
    }),
  )
}

function track<T extends Subprocess>(proc: T): T {
  children.add(proc)
  void proc.exited.then(() => children.delete(proc))
  return proc
}

process.once('exit', () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
})

/** Collects a stream into a string as it arrives, and lets callers wait for a pattern. */
function collect(stream: ReadableStream<Uint8Array>) {
  let text = ''
  let ended = false
  const waiters = new Set<() => void>()
  const notify = () => {
    for (const waiter of waiters) waiter()
  }
  const done = (async () => {
    const decoder = new TextDecoder()
    const reader = stream.getReader()
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        text += decoder.decode(value, { stream: true })
        notify()
      }
      text += decoder.decode()
    } catch {
      // The child was killed; what we have is what there is.
    } finally {
      ended = true
      notify()
    }
  })()
  return {
    get text() {
      return text
    },
    get ended() {
      return ended
    },
    done,
    onChange(waiter: () => void) {
      waiters.add(waiter)
      return () => waiters.delete(waiter)
    },
  }
}

export interface StartOptions {
  /** Working directory of the child (required: tests run it from a temp dir). */
  cwd: string
  /** Arguments after the executable. `serve --port 0` when not given. */
  args?: string[]
  /** Settings on top of the cleaned environment. */
  env?: Record<string, string | undefined>
  /** How long to wait for the listening line. */
  timeoutMs?: number
}

export interface RunningIntake {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  port: number
  /** http://127.0.0.1:<port> */
  url: string
  /** The version printed on the listening line. */
  version: string
  /** The key printed at start, or undefined when none was printed. */
  apiKey: string | undefined
  /** Everything the child printed so far. */
  stdout(): string
  stderr(): string
  /** Waits until stdout matches `pattern` (or the child exits, or the timeout passes). */
  waitForStdout(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>
  /** Sends SIGTERM (or `signal`) and resolves with the exit code once the child has exited. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>
}

/**
 * Starts the executable (serve, on --port 0 unless args say otherwise), waits
 * for the listening line and for /healthz, then reads the printed key, if any.
 */
export async function startIntake(binary: string, options: StartOptions): Promise<RunningIntake> {
  const args = options.args ?? ['serve', '--port', '0']
  const proc = spawnChild(binary, args, options.cwd, options.env)
  const out = collect(proc.stdout)
  const err = collect(proc.stderr)

  const describe = () =>
    `exit code ${proc.exitCode}, signal ${proc.signalCode}\n--- stdout ---\n${out.text}\n--- stderr ---\n${err.text}`

  const waitForStdout = (pattern: RegExp, timeoutMs = 15_000) =>
    new Promise<RegExpMatchArray>((resolvePromise, reject) => {
      const probe = new RegExp(pattern.source, pattern.flags.replace('g', ''))
      let off = () => {}
      const timer = setTimeout(() => {
        off()
        reject(
          new Error(
            `Timed out after ${timeoutMs} ms waiting for ${pattern} on stdout of intake ${args.join(' ')}\n${describe()}`,
          ),
        )
      }, timeoutMs)
      const check = () => {
        const match = probe.exec(out.text)
        if (match) {
          clearTimeout(timer)
          off()
          resolvePromise(match)
        } else if (out.ended) {
          clearTimeout(timer)
          off()
          reject(new Error(`intake ${args.join(' ')} closed its stdout before printing ${pattern}\n${describe()}`))
        }
      }
      off = out.onChange(check)
      check()
    })

  const stop = async (signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<number | null> => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal)
    let timer: Timer | undefined
    const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)))
    const outcome = await Promise.race([proc.exited, timedOut])
    clearTimeout(timer)
    if (outcome === 'timeout') {
      proc.kill('SIGKILL')
      await proc.exited
      throw new Error(`intake did not exit within ${timeoutMs} ms of ${signal}\n${describe()}`)
    }
    await Promise.all([out.done, err.done])
    return proc.exitCode
  }

  try {
    const listening = await waitForStdout(LISTENING_LINE, options.timeoutMs ?? 15_000)
    const version = listening[1]!
    const url = listening[2]!
    const port = Number(listening[3])
    // The start-up lines arrive in one write: with the listening line comes the key line, if any.
    await waitForHealth(url)
    const keyMatch = /^API key: (svc_live_[0-9a-f]{48})\s*$/m.exec(out.text)
    return {
      proc,
      port,
      url,
      version,
      apiKey: keyMatch?.[1],
      stdout: () => out.text,
      stderr: () => err.text,
      waitForStdout,
      stop,
    }
  } catch (error) {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
    await proc.exited
    throw error
  }
}

async function waitForHealth(url: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs
  let last = ''
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/healthz`)
      last = `${res.status} ${await res.text()}`
      if (res.status === 200) return
    } catch (error) {
      last = String(error)
    }
    await Bun.sleep(50)
  }
  throw new Error(`${url}/healthz did not answer 200 within ${timeoutMs} ms (last: ${last})`)
}

export interface CommandResult {
  code: number | null
  signal: string | null
  stdout: string
  stderr: string
}

/** Runs a one-shot command (`keys ...`, `backup ...`, `--help`) to completion. Killed after `timeoutMs`. */
export async function runIntake(
  binary: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined>; timeoutMs?: number },
): Promise<CommandResult> {
  const proc = spawnChild(binary, args, options.cwd, options.env)
  const timeoutMs = options.timeoutMs ?? 15_000
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    proc.kill('SIGKILL')
  }, timeoutMs)
  try {
    const [stdout, stderr] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    if (timedOut) {
      throw new Error(
        `intake ${args.join(' ')} was still running after ${timeoutMs} ms and was killed\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`,
      )
    }
    return { code: proc.exitCode, signal: proc.signalCode === null ? null : String(proc.signalCode), stdout, stderr }
  } finally {
    clearTimeout(timer)
  }
}

/** Makes a request with a bearer key and parses the JSON body (or keeps the text). */
export async function request(
  url: string,
  options: { method?: string; key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.key) headers.authorization = `Bearer ${options.key}`
  let body: string | undefined
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
    headers['content-type'] ??= 'application/json'
  }
  const res = await fetch(url, { method: options.method ?? (body === undefined ? 'GET' : 'POST'), headers, body })
  const text = await res.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {}
  return { status: res.status, headers: res.headers, body: parsed, text }
}
