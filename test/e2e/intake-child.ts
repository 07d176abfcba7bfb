/**
 * dist/intake as a child process, for the end-to-end tests that run it under
 * their own control (the crash loop) and for the benchmarks: started on a
 * fresh database in a temp dir (127.0.0.1, rate limits off), its port and key
 * read from what it prints, stopped; every child and temp dir remembered in a
 * state cleaned up whatever happens. With the small helpers such a run prints
 * and checks with: thousands separators, a concurrency pool, the machine line,
 * the signature a webhook must carry.
 *
 * Nothing here builds: a run gives the executable its build left, or gets
 * dist/intake as `bun run build` left it. bench/ uses this file, never the
 * reverse.
 */

import { createHmac } from 'node:crypto'
import { closeSync, fstatSync, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs'
import { cpus, release, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Subprocess } from 'bun'

export const BINARY = resolve(import.meta.dir, '..', '..', 'dist', 'intake')

// ---------------------------------------------------------------------------
// Small helpers

/** A number with thousands separators and a fixed count of decimals. */
export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** Runs `task(i)` for i in 0..count-1 with at most `concurrency` at once. */
export async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < count) await task(next++)
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
}

/**
 * The X-Service-Signature a delivery of form `formId` must carry, worked out
 * as a receiver holding the API key does: sha256=<hex HMAC of the raw body,
 * keyed with the form's secret>, the secret being the hex HMAC of the form id
 * keyed with the API key.
 */
export function expectedSignature(apiKey: string, formId: string, rawBody: string): string {
  const secret = createHmac('sha256', apiKey).update(formId).digest('hex')
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`
}

function cpuModel(): string {
  const fromOs = cpus()[0]?.model?.trim()
  if (fromOs) return fromOs
  try {
    return /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? 'unknown CPU'
  } catch {
    return 'unknown CPU'
  }
}

/** CPU model, cores, kernel and Bun version, for the "Machine:" line under a table. */
export const machineLine = () =>
  `${cpuModel()}, ${navigator.hardwareConcurrency} cores, Linux ${release()}, Bun ${Bun.version}`

// ---------------------------------------------------------------------------
// Intake as a child process

const KEEP = 64 * 1024

/** What a child wrote on stdout or stderr: its start and its end. */
interface Output {
  readonly head: string
  readonly tail: string
  /** Called when more arrived (pipes only: a file is read when asked). */
  onChange(f: () => void): void
}

/** Reads a stream as it comes (so the child never blocks on a full pipe), keeping the start and the end. */
function drain(stream: ReadableStream<Uint8Array>): Output {
  let head = ''
  let tail = ''
  let changed = () => {}
  void (async () => {
    const decoder = new TextDecoder()
    try {
      for await (const chunk of stream) {
        const text = decoder.decode(chunk, { stream: true })
        if (head.length < KEEP) head += text
        tail = (tail + text).slice(-KEEP)
        changed()
      }
    } catch {
      // the child went away
    }
  })()
  return {
    get head() {
      return head
    },
    get tail() {
      return tail
    },
    onChange(f: () => void) {
      changed = f
    },
  }
}

/** The first or last KEEP bytes of a file, as text ('' when it is not there). */
function readPart(path: string, from: 'start' | 'end'): string {
  let fd: number | undefined
  try {
    fd = openSync(path, 'r')
    const size = fstatSync(fd).size
    const length = Math.min(KEEP, size)
    const buffer = Buffer.alloc(length)
    readSync(fd, buffer, 0, length, from === 'start' ? 0 : size - length)
    return buffer.toString('utf8')
  } catch {
    return ''
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** A child's output sent to a file: the kernel takes it, nobody has to read it as it comes. */
function fileOutput(path: string): Output {
  return {
    get head() {
      return readPart(path, 'start')
    },
    get tail() {
      return readPart(path, 'end')
    },
    onChange() {},
  }
}

export interface IntakeOptions {
  /** Port to bind; 0 (the default) picks a free one, read back from the listening line. */
  port?: number
  /**
   * Send stdout (one JSON line per request) to `<dir>/intake.stdout.log`
   * instead of a pipe this process reads: under load, reading the log would
   * take CPU from the very machine being measured.
   */
  logToFile?: boolean
  /** With `logToFile`: the file's name in `dir` instead of `intake.stdout.log` (one per restart, say). */
  logName?: string
  /** The executable to run instead of dist/intake (a test passes the path its build gave; the bench, BENCH_BASELINE). */
  binary?: string
  /**
   * A PostgreSQL database for it (SERVICE_DATABASE_URL) instead of the SQLite
   * file `<dir>/intake.db`: no --db is given then.
   */
  databaseUrl?: string
}

export type Child = ReturnType<typeof spawnIntake>

/** This process's environment without any SERVICE_* setting, both rate limits off, no drain, then `env` on top. */
export function intakeEnv(env: Record<string, string> = {}): Record<string, string> {
  const childEnv: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('SERVICE_') && name !== 'BUN_CONFIG_MAX_HTTP_REQUESTS')
      childEnv[name] = value
  }
  childEnv.SERVICE_RATE_LIMIT = '0'
  childEnv.SERVICE_PUBLIC_RATE_LIMIT = '0'
  childEnv.SERVICE_DRAIN_SECONDS = '0'
  return Object.assign(childEnv, env)
}

/**
 * Starts `dist/intake serve` on 127.0.0.1, a free port and `<dir>/intake.db`
 * (or the PostgreSQL database `options.databaseUrl`), with no SERVICE_*
 * setting inherited from this shell, both rate limits off, then `env` on top.
 */
function spawnIntake(dir: string, env: Record<string, string> = {}, options: IntakeOptions = {}) {
  const childEnv = intakeEnv(
    options.databaseUrl === undefined ? env : { ...env, SERVICE_DATABASE_URL: options.databaseUrl },
  )
  const logFile = options.logToFile ? join(dir, options.logName ?? 'intake.stdout.log') : undefined
  const store = options.databaseUrl === undefined ? ['--db', join(dir, 'intake.db')] : []
  const args = [options.binary ?? BINARY, 'serve', '--host', '127.0.0.1', '--port', String(options.port ?? 0), ...store]
  const proc = Bun.spawn(args, {
    cwd: dir,
    env: childEnv,
    stdin: 'ignore',
    stdout: logFile ? Bun.file(logFile) : 'pipe',
    stderr: 'pipe',
  })
  const out = logFile ? fileOutput(logFile) : drain(proc.stdout as ReadableStream<Uint8Array>)
  return { proc, out, err: drain(proc.stderr), dir }
}

export const alive = (child: { proc: { exitCode: number | null; signalCode: unknown } }) =>
  child.proc.exitCode === null && child.proc.signalCode === null

/** The key in the "API key: svc_live_..." line intake prints (on a first start, and for `intake keys create`), if `text` holds one. */
export const printedKey = (text: string) => /^API key: (svc_live_[0-9a-f]{48})\s*$/m.exec(text)?.[1]

export interface Ready {
  url: string
  port: number
  version: string
  key: string
}

/**
 * Waits for the listening line and the key line (printed in one write), then
 * for /healthz. With `key`, the database already has that key and intake
 * prints none: only the listening line is awaited, and `key` is returned.
 */
export async function whenReady(child: Child, timeoutMs = 15_000, options: { key?: string } = {}): Promise<Ready> {
  const found = await new Promise<Ready>((resolvePromise, reject) => {
    let poll: ReturnType<typeof setInterval> | undefined
    const finish = (error?: Error, ready?: Ready) => {
      clearTimeout(timer)
      clearInterval(poll)
      if (error) reject(error)
      else resolvePromise(ready!)
    }
    const timer = setTimeout(
      () => finish(new Error(`intake printed no listening line within ${timeoutMs} ms`)),
      timeoutMs,
    )
    const check = () => {
      const head = child.out.head
      const listening = /^intake (\S+) listening on (http:\/\/127\.0\.0\.1:(\d+))(?: \(.*\))?\s*$/m.exec(head)
      if (!listening) return
      const ready = { version: listening[1]!, url: listening[2]!, port: Number(listening[3]) }
      if (options.key !== undefined) return finish(undefined, { ...ready, key: options.key })
      const key = printedKey(head)
      if (key) finish(undefined, { ...ready, key })
      else finish(new Error('intake started without printing an API key (the database should have been new)'))
    }
    child.out.onChange(check)
    // A file is not watched: look every few milliseconds (a pipe calls `check` itself, this is harmless there).
    poll = setInterval(check, 5)
    void child.proc.exited.then(() => {
      check()
      finish(
        new Error(`intake exited (code ${child.proc.exitCode}, signal ${child.proc.signalCode}) before it was ready`),
      )
    })
    check()
  })
  const deadline = Date.now() + 10_000
  for (;;) {
    try {
      const res = await fetch(`${found.url}/healthz`)
      await res.arrayBuffer()
      if (res.status === 200) return found
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`${found.url}/healthz did not answer 200 within 10 s`)
    await Bun.sleep(50)
  }
}

/** SIGTERM, then SIGKILL if it is still running after `timeoutMs`. */
export async function stopIntake(child: Child, timeoutMs = 15_000): Promise<{ code: number | null; ms: number }> {
  const started = performance.now()
  if (alive(child)) child.proc.kill('SIGTERM')
  const timer = setTimeout(() => alive(child) && child.proc.kill('SIGKILL'), timeoutMs)
  await child.proc.exited
  clearTimeout(timer)
  return { code: child.proc.exitCode, ms: performance.now() - started }
}

// ---------------------------------------------------------------------------
// Running a bench: clean up children and temp dirs whatever happens.

export interface BenchState {
  /** Every intake started with `startIntake`: stopped (or killed) on the way out if still running. */
  children: Set<Child>
  /** Every other child process registered with `track` (load generator, bare server...): killed on the way out. */
  processes: Set<Subprocess>
  /** Every temp dir made with `makeTempDir`: removed on the way out. */
  dirs: Set<string>
  /** Aborted on the way out: pass its signal to every fetch. */
  abort: AbortController
  /**
   * Run once on the way out, after the children are gone, synchronously (so
   * also on Ctrl-C): what cannot be removed like a temp dir, e.g. a database
   * the bench made on a PostgreSQL server. Delete an entry once it is done.
   */
  exitHooks: Set<() => void>
}

/** A fresh dir under the system temp dir, removed on the way out (or earlier with `removeTempDir`). */
export function makeTempDir(state: BenchState, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `intake-bench-${name}-`))
  state.dirs.add(dir)
  return dir
}

export function removeTempDir(state: BenchState, dir: string): void {
  rmSync(dir, { recursive: true, force: true })
  state.dirs.delete(dir)
}

/** `spawnIntake`, remembered so that it is stopped on the way out. */
export function startIntake(
  state: BenchState,
  dir: string,
  env: Record<string, string> = {},
  options: IntakeOptions = {},
): Child {
  const child = spawnIntake(dir, env, options)
  state.children.add(child)
  return child
}

/** Remembers a child process, so that it is killed on the way out; returns it. */
export function track<T extends Subprocess>(state: BenchState, proc: T): T {
  state.processes.add(proc)
  void proc.exited.then(() => state.processes.delete(proc))
  return proc
}

/** A fresh BenchState, for code that cleans up itself (a test) instead of through `runBench`. */
export function createBenchState(): BenchState {
  return {
    children: new Set(),
    processes: new Set(),
    dirs: new Set(),
    abort: new AbortController(),
    exitHooks: new Set(),
  }
}

/** Runs each exit hook once, a failing one reported, not thrown. */
export function runExitHooks(state: BenchState): void {
  for (const hook of state.exitHooks) {
    state.exitHooks.delete(hook)
    try {
      hook()
    } catch (error) {
      console.error(`cleaning up: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
}

/** What `runBench` does on the way out, for a BenchState made with `createBenchState`: kill every child, remove every temp dir. */
export async function disposeBenchState(state: BenchState): Promise<void> {
  state.abort.abort()
  const procs = [...[...state.children].map((child) => child.proc), ...state.processes]
  for (const proc of procs) if (alive({ proc })) proc.kill('SIGKILL')
  await Promise.race([Promise.all(procs.map((proc) => proc.exited)), Bun.sleep(2000)])
  for (const dir of state.dirs) rmSync(dir, { recursive: true, force: true })
  state.dirs.clear()
  runExitHooks(state)
}
