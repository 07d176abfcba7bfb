/**
 * What the benchmarks share: running dist/intake as a child on a fresh
 * database in a temp dir (127.0.0.1, rate limits off), reading its port and
 * key, stopping it; CPU and RSS from /proc; percentiles; a concurrency pool;
 * the machine line; and `runBench`, which cleans up the child and the temp
 * dir whatever happens (error, Ctrl-C, SIGTERM).
 *
 * Nothing here builds: the scripts run dist/intake as `bun run build` left it.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { cpus, release } from 'node:os'
import { join, resolve } from 'node:path'

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
export const machineLine = () => `${cpuModel()}, ${navigator.hardwareConcurrency} cores, Linux ${release()}, Bun ${Bun.version}`

// ---------------------------------------------------------------------------
// Intake as a child process

/** Reads a stream as it comes (so the child never blocks on a full pipe), keeping the start and the end. */
function drain(stream: ReadableStream<Uint8Array>) {
  const KEEP = 64 * 1024
  let head = ''
  let tail = ''
  let changed = () => {}
  const done = (async () => {
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
    done,
    onChange(f: () => void) {
      changed = f
    },
  }
}

export type Child = ReturnType<typeof spawnIntake>

/**
 * Starts `dist/intake serve` on 127.0.0.1, a free port and `<dir>/intake.db`,
 * with no SERVICE_* setting inherited from this shell, both rate limits off,
 * then `env` on top.
 */
export function spawnIntake(dir: string, env: Record<string, string> = {}) {
  const childEnv: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('SERVICE_') && name !== 'BUN_CONFIG_MAX_HTTP_REQUESTS') childEnv[name] = value
  }
  childEnv.SERVICE_RATE_LIMIT = '0'
  childEnv.SERVICE_PUBLIC_RATE_LIMIT = '0'
  Object.assign(childEnv, env)
  const proc = Bun.spawn([BINARY, 'serve', '--host', '127.0.0.1', '--port', '0', '--db', join(dir, 'intake.db')], {
    cwd: dir,
    env: childEnv,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  return { proc, out: drain(proc.stdout), err: drain(proc.stderr) }
}

export const alive = (child: Child) => child.proc.exitCode === null && child.proc.signalCode === null

/** Waits for the listening line and the key line (printed in one write), then for /healthz. */
export async function whenReady(child: Child, timeoutMs = 15_000): Promise<{ url: string; port: number; version: string; key: string }> {
  const found = await new Promise<{ url: string; port: number; version: string; key: string }>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new BenchError(`intake printed no listening line within ${timeoutMs} ms`)), timeoutMs)
    const check = () => {
      const listening = /^intake (\S+) listening on (http:\/\/127\.0\.0\.1:(\d+))\s*$/m.exec(child.out.head)
      const key = /^API key: (svc_live_[0-9a-f]{48})\s*$/m.exec(child.out.head)
      if (listening && key) {
        clearTimeout(timer)
        resolvePromise({ version: listening[1]!, url: listening[2]!, port: Number(listening[3]), key: key[1]! })
      } else if (listening) {
        clearTimeout(timer)
        reject(new BenchError('intake started without printing an API key (the database should have been new)'))
      }
    }
    child.out.onChange(check)
    void child.proc.exited.then(() => {
      clearTimeout(timer)
      reject(new BenchError(`intake exited (code ${child.proc.exitCode}, signal ${child.proc.signalCode}) before it was ready`))
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
    if (res.status !== 201 || typeof created.id !== 'string') throw new BenchError(`creating form ${i + 1}: ${res.status} ${JSON.stringify(created)}`)
    ids[i] = created.id
  })
  return { ids, ms: performance.now() - started }
}

// ---------------------------------------------------------------------------
// Running a bench: clean up the child and the temp dir whatever happens.

export interface BenchState {
  /** The intake child, once spawned: killed on the way out if still running. */
  child?: Child
  /** The temp dir, once made: removed on the way out. */
  dir?: string
  /** Aborted on the way out: pass its signal to every fetch. */
  abort: AbortController
}

/**
 * Runs `run` and exits with its code (1 if it throws, after printing the end of
 * intake's stderr). On any exit, SIGINT or SIGTERM the child is killed and the
 * temp dir removed.
 */
export async function runBench(run: (state: BenchState) => Promise<number>): Promise<never> {
  const state: BenchState = { abort: new AbortController() }

  const cleanUpNow = () => {
    state.abort.abort()
    if (state.child && alive(state.child)) state.child.proc.kill('SIGKILL')
    if (state.dir) rmSync(state.dir, { recursive: true, force: true })
    state.dir = undefined
  }

  process.on('exit', cleanUpNow)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      console.error(`\n${signal}: stopping intake and removing ${state.dir ?? 'the temp dir'}`)
      cleanUpNow()
      process.exit(130)
    })
  }

  let exitCode = 1
  try {
    exitCode = await run(state)
  } catch (error) {
    console.error(`\nbench failed: ${error instanceof Error ? error.message : String(error)}`)
    if (state.child) {
      const err = state.child.err.tail.trim()
      if (err) console.error(`--- intake stderr (end) ---\n${err}`)
    }
  } finally {
    state.abort.abort()
    if (state.child && alive(state.child)) await stopIntake(state.child, 5000)
    cleanUpNow()
  }
  process.exit(exitCode)
}
