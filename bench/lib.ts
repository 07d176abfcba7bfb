/**
 * What the benchmarks share beyond test/e2e/intake-child.ts (dist/intake as a
 * child, the state that cleans up after it, the small helpers the crash loop
 * uses too): CPU and RSS from /proc; percentiles; Markdown tables and the
 * figures a bench prints; creating many forms; and `runBench`, which cleans
 * up every child process and temp dir it was told of whatever happens (error,
 * Ctrl-C, SIGTERM).
 *
 * Nothing here builds: the scripts run dist/intake as `bun run build` left it.
 */

import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { resolve } from 'node:path'
import {
  alive,
  type BenchState,
  BINARY,
  createBenchState,
  fmt,
  machineLine,
  pool,
  runExitHooks,
  stopIntake,
} from '../test/e2e/intake-child.ts'

export const PROJECT_ROOT = resolve(import.meta.dir, '..')

// ---------------------------------------------------------------------------
// Small helpers

export const log = (line: string) => console.log(line)
export const sleep = (ms: number) => Bun.sleep(ms)

/** Something went wrong in the run (not a timing): reported as "bench failed", exit 1. */
export class BenchError extends Error {}

/** Nearest-rank percentile of sorted values. */
export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN

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

/** VmHWM (peak resident set since the process started) in KiB. */
export function peakRssKiB(pid: number): number {
  const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) : NaN
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
