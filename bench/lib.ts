/**
 * What the benchmarks share: running dist/intake as a child on a fresh
 * database in a temp dir (127.0.0.1, rate limits off), reading its port and
 * key, stopping it; CPU and RSS from /proc; percentiles; a concurrency pool;
 * the machine line and Markdown tables; the signature a webhook must carry;
 * and `runBench`, which cleans up every child process and
 * temp dir it was told of whatever happens (error, Ctrl-C, SIGTERM).
 *
 * Nothing here builds: the scripts run dist/intake as `bun run build` left it.
 */

import { createHmac } from 'node:crypto'
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  rmSync,
} from 'node:fs'
import { cpus, release, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Subprocess } from 'bun'

export const PROJECT_ROOT = resolve(import.meta.dir, '..')
export const BINARY = join(PROJECT_ROOT, 'dist', 'intake')

// ---------------------------------------------------------------------------
// Small helpers

export const log = (line: string) => console.log(line)
/** A number with thousands separators and a fixed count of decimals. */
export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
export const sleep = (ms: number) => Bun.sleep(ms)

/** Something went wrong in the run (not a timing): reported as "bench failed", exit 1. */
export class BenchError extends Error {}

/** Nearest-rank percentile of sorted values. */
export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN

/** Runs `task(i)` for i in 0..count-1 with at most `concurrency` at once. */
export async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < count) await task(next++)
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
}

/**
 * Each writer commits, one transaction after another, until `seconds` have
 * passed (a limit script's timed loop). `commit` says how many units its
 * transaction wrote; the total, and the time from the start to the last commit.
 */
export async function commitFor<W>(
  writers: W[],
  seconds: number,
  commit: (writer: W) => Promise<number>,
): Promise<{ units: number; ms: number }> {
  let units = 0
  const started = performance.now()
  const until = started + seconds * 1000
  let last = started
  await Promise.all(
    writers.map(async (writer) => {
      while (performance.now() < until) {
        // Not `units += await ...`, which would read `units` before the wait and lose the other writers' counts.
        const written = await commit(writer)
        units += written
      }
      last = Math.max(last, performance.now())
    }),
  )
  return { units, ms: last - started }
}

/** A Markdown table: the header row, the separator, a row per entry. */
export function markdownTable(header: string[], rows: string[][]): string[] {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ]
}

/** What a bench prints at the end of its run: `## heading`, a table of measures and values, the machine line. */
export function logFigures(heading: string, rows: [string, string][]): void {
  log('')
  log(`## ${heading}`)
  log('')
  for (const line of markdownTable(['measure', 'value'], rows)) log(line)
  log('')
  log(`Machine: ${machineLine()}`)
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

/** False (after telling the user how to build it) when dist/intake is missing. */
export function binaryPresent(): boolean {
  if (existsSync(BINARY)) return true
  console.error(`${BINARY} not found. Build it first:\n\n  bun run build\n`)
  return false
}

// ---------------------------------------------------------------------------
// /proc and the machine

export function clockTicksPerSecond(): number {
  try {
    const out = Bun.spawnSync(['getconf', 'CLK_TCK'], { stdout: 'pipe', stderr: 'ignore' })
    const n = Number(out.stdout.toString().trim())
    return Number.isFinite(n) && n > 0 ? n : 100
  } catch {
    return 100
  }
}

/** utime + stime of the whole process (every thread), in clock ticks. */
export function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // Fields after "(comm)": state is field 3, utime 14, stime 15.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(rest[11]) + Number(rest[12])
}

/** VmRSS in KiB. */
export function rssKiB(pid: number): number {
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) : NaN
}

/** Soft "Max open files" of a process, from /proc/<pid>/limits (after Bun raised its own to the hard limit). */
export function openFileLimit(pid: number | 'self'): number | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/limits`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'))
    const soft = line?.split(/\s{2,}/)[1]
    return soft === undefined ? undefined : soft === 'unlimited' ? Infinity : Number(soft)
  } catch {
    return undefined
  }
}

/** Sockets the process holds open (listener plus connections). */
export function socketCount(pid: number): number {
  let count = 0
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) count++
    } catch {
      // closed while we looked
    }
  }
  return count
}

/** A process's CPU time and RSS over a window in which nothing is asked of it. */
export interface IdleWindow {
  cpuMs: number
  wallMs: number
  rssKiB: number
}

/** Watches `pid` for `ms` of nothing happening (CPU in clock ticks of `tickMs`). */
export async function idleWindow(pid: number, tickMs: number, ms: number): Promise<IdleWindow> {
  const t0 = performance.now()
  const c0 = cpuTicks(pid)
  await sleep(ms)
  const c1 = cpuTicks(pid)
  const t1 = performance.now()
  return { cpuMs: (c1 - c0) * tickMs, wallMs: t1 - t0, rssKiB: rssKiB(pid) }
}

/** An idle window's CPU as a reader takes it: "50 ms in 10.00 s (0.50 % of one core)". */
export const describeIdleCpu = (w: IdleWindow) =>
  `${fmt(w.cpuMs)} ms in ${fmt(w.wallMs / 1000, 2)} s (${fmt((100 * w.cpuMs) / w.wallMs, 2)} % of one core)`

/**
 * Bun's fetch sends at most 256 requests at once unless told otherwise when it
 * starts (BUN_CONFIG_MAX_HTTP_REQUESTS, read once): a bench that holds more
 * runs its file again with it set, passing Ctrl-C and SIGTERM on, and exits
 * as that run does. Call at the top of the file, when it runs as the main script.
 */
export async function rerunWithHttpRequests(needed: number): Promise<void> {
  if (Number(process.env.BUN_CONFIG_MAX_HTTP_REQUESTS ?? 0) >= needed) return
  const again = Bun.spawn([process.execPath, Bun.main, ...process.argv.slice(2)], {
    env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: String(needed) },
    stdio: ['inherit', 'inherit', 'inherit'],
  })
  // The run cleans up on SIGINT / SIGTERM; pass them on (Ctrl-C may deliver it twice: harmless).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => again.kill(signal))
  process.exit(await again.exited)
}

/**
 * Refuses (BenchError) a process that cannot hold `waiters` requests at once:
 * fetch's limit on requests in flight, and the open-file limits of this
 * process and of intake (`pid`, when started).
 */
export function requireRoomForWaiters(
  httpRequestsNeeded: number,
  openFilesNeeded: number,
  pid: number | 'self' = 'self',
): void {
  if (pid === 'self' && Number(process.env.BUN_CONFIG_MAX_HTTP_REQUESTS ?? 0) < httpRequestsNeeded) {
    throw new BenchError(
      `start the bench with BUN_CONFIG_MAX_HTTP_REQUESTS=${httpRequestsNeeded}: Bun's fetch would queue the waiters past the 256th`,
    )
  }
  const limit = openFileLimit(pid)
  if (limit !== undefined && limit < openFilesNeeded) {
    const whose = pid === 'self' ? 'The bench' : 'intake'
    throw new BenchError(
      `${whose}'s open-file limit is ${limit}; it needs about ${openFilesNeeded} (one socket per waiter on each side). Raise it in this shell and run again: ulimit -n 4096`,
    )
  }
}

/**
 * The private part of a process's RSS (RssAnon): its heaps and stacks. The
 * rest (RssFile) is the executable's pages that happen to be mapped, which
 * the kernel maps more or fewer of around each one touched depending on how
 * the file sits in the page cache: the same binary measures 42 or 47 MiB
 * idle, whether just copied or not (see bench/results.md).
 */
export function privateRssKiB(pid: number): number {
  const match = /^RssAnon:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) : NaN
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

/** VmHWM (peak resident set since the process started) in KiB. */
export function peakRssKiB(pid: number): number {
  const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) : NaN
}

// ---------------------------------------------------------------------------
// Intake as a child process

const KEEP = 64 * 1024

/** What a child wrote on stdout or stderr: its start and its end. */
export interface Output {
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

/** This process's environment without any SERVICE_* setting, both rate limits off, then `env` on top. */
export function intakeEnv(env: Record<string, string> = {}): Record<string, string> {
  const childEnv: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('SERVICE_') && name !== 'BUN_CONFIG_MAX_HTTP_REQUESTS')
      childEnv[name] = value
  }
  childEnv.SERVICE_RATE_LIMIT = '0'
  childEnv.SERVICE_PUBLIC_RATE_LIMIT = '0'
  return Object.assign(childEnv, env)
}

/**
 * Starts `dist/intake serve` on 127.0.0.1, a free port and `<dir>/intake.db`
 * (or the PostgreSQL database `options.databaseUrl`), with no SERVICE_*
 * setting inherited from this shell, both rate limits off, then `env` on top.
 */
export function spawnIntake(dir: string, env: Record<string, string> = {}, options: IntakeOptions = {}) {
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
      () => finish(new BenchError(`intake printed no listening line within ${timeoutMs} ms`)),
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
      else finish(new BenchError('intake started without printing an API key (the database should have been new)'))
    }
    child.out.onChange(check)
    // A file is not watched: look every few milliseconds (a pipe calls `check` itself, this is harmless there).
    poll = setInterval(check, 5)
    void child.proc.exited.then(() => {
      check()
      finish(
        new BenchError(
          `intake exited (code ${child.proc.exitCode}, signal ${child.proc.signalCode}) before it was ready`,
        ),
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
    if (Date.now() > deadline) throw new BenchError(`${found.url}/healthz did not answer 200 within 10 s`)
    await sleep(50)
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

/**
 * Creates `count` forms over the API, `concurrency` requests in flight (over
 * keep-alive connections); `body(i)` is the create body of form i. Returns the
 * ids in order and the time taken.
 */
export async function createForms(
  api: { url: string; key: string; signal: AbortSignal },
  count: number,
  concurrency: number,
  body: (i: number) => Record<string, unknown>,
): Promise<{ ids: string[]; ms: number }> {
  const ids: string[] = new Array(count)
  const started = performance.now()
  await pool(count, concurrency, async (i) => {
    const res = await fetch(`${api.url}/api/v1/forms`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body(i)),
      signal: api.signal,
    })
    const created = (await res.json()) as { id?: string; detail?: string }
    if (res.status !== 201 || typeof created.id !== 'string')
      throw new BenchError(`creating form ${i + 1}: ${res.status} ${JSON.stringify(created)}`)
    ids[i] = created.id
  })
  return { ids, ms: performance.now() - started }
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

function runExitHooks(state: BenchState): void {
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
  await Promise.race([Promise.all(procs.map((proc) => proc.exited)), sleep(2000)])
  for (const dir of state.dirs) rmSync(dir, { recursive: true, force: true })
  state.dirs.clear()
  runExitHooks(state)
}

/**
 * Runs `run` and exits with its code (1 if it throws, after printing the end of
 * the last intake's stderr). On any exit, SIGINT or SIGTERM every child is
 * killed and every temp dir removed.
 */
export async function runBench(run: (state: BenchState) => Promise<number>): Promise<never> {
  const state = createBenchState()

  const cleanUpNow = () => {
    state.abort.abort()
    for (const child of state.children) if (alive(child)) child.proc.kill('SIGKILL')
    for (const proc of state.processes) if (alive({ proc })) proc.kill('SIGKILL')
    for (const dir of state.dirs) rmSync(dir, { recursive: true, force: true })
    state.dirs.clear()
    runExitHooks(state)
  }

  process.on('exit', cleanUpNow)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      console.error(`\n${signal}: stopping every child and removing ${[...state.dirs].join(', ') || 'the temp dirs'}`)
      cleanUpNow()
      process.exit(130)
    })
  }

  let exitCode = 1
  try {
    exitCode = await run(state)
  } catch (error) {
    console.error(`\nbench failed: ${error instanceof Error ? error.message : String(error)}`)
    const last = [...state.children].at(-1)
    if (last) {
      const err = last.err.tail.trim()
      if (err) console.error(`--- intake stderr (end) ---\n${err}`)
      if (!alive(last))
        console.error(`(that intake exited: code ${last.proc.exitCode}, signal ${last.proc.signalCode})`)
    }
  } finally {
    state.abort.abort()
    await Promise.all([...state.children].filter(alive).map((child) => stopIntake(child, 5000)))
    const others = [...state.processes]
    cleanUpNow()
    // Reap what was killed, so that no zombie is left behind.
    await Promise.race([Promise.all(others.map((proc) => proc.exited)), sleep(2000)])
  }
  process.exit(exitCode)
}

/** Lists what went wrong (correctness, never speed) and gives the script's exit code: 1 when anything did. */
export function exitCodeFor(problems: string[]): number {
  if (problems.length === 0) return 0
  console.error('\nProblems:')
  for (const problem of problems) console.error(`- ${problem}`)
  return 1
}
