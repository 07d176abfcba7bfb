/**
 * The main benchmark: intake against the limits of this machine, in one run.
 *
 *   bun run build && bun run bench
 *
 * It never builds: it runs dist/intake as `bun run build` left it (a copy
 * taken at the start, so that a build during the run changes nothing), on
 * fresh databases in temp dirs, on 127.0.0.1 only, with rate limits off. Steps:
 *   1. the disk's write limit: bench/write-limit.ts, a plain bun:sqlite loop
 *      committing one row per transaction with intake's pragmas (WAL,
 *      synchronous=FULL), ~3 s, in a process of its own: rows per second;
 *   2. start to first 200: spawn intake on a fresh temp dir and poll
 *      GET /healthz over a fresh connection each time, as fast as possible;
 *      20 times, median and max, and the CPU time (user + sys) each
 *      start took from spawn to its exit after that 200 (less noisy than
 *      the wall time on a shared machine);
 *   3. the main intake (its request log to a file): RSS idle; one real
 *      response per route captured and handed to bench/bare-server.ts, a bare
 *      Bun.serve in its own process answering the very same bytes (the HTTP
 *      limit); then wrk (same threads, connections and duration for both) on
 *      GET /api/v1/forms/<id>, GET /f/<id>, POST /api/v1/forms, then forms
 *      created over the API until there are at least 100,000 (RSS measured
 *      there), then POST /f/<id> with JSON answers and as an HTML form post,
 *      every request answering a different form not yet answered; RSS after
 *      the run and its peak; every status intake logged;
 *   4. webhook latency (bench/webhooks.ts): answer sent -> first attempt
 *      arrived, 500 answers, 16 in flight; then the account's event feed
 *      (bench/events.ts): answer sent -> a waiting `GET /api/v1/events`
 *      answered, 200 samples one at a time (with BENCH_DATABASE_URL also
 *      across two instances on PostgreSQL); `bun run bench:events` alone
 *      adds the idle cost of 1,000 waiting feed requests;
 *   5. list pages: GET /api/v1/forms?limit=20, first page and a page from the
 *      middle, 2,000 sequential requests each, for one account with 1,000 and
 *      with 1,000,000 forms (seeded directly into the database);
 *   6. one Markdown table per section, on stdout and in bench/results.md
 *      ("Latest run" replaced, "Changes" kept).
 *
 * Targets are printed next to the figures with a pass or miss mark and never
 * fail the run. It exits 1 when a measurement is not valid (intake failed
 * requests, crashed, answered a form twice...), after reporting what it has.
 *
 * Quick runs: BENCH_DURATION (seconds per wrk run, default 10),
 * BENCH_CONNECTIONS (default 32), BENCH_LIST_FORMS (the large list, default
 * 1,000,000).
 *
 * Two more, each adding a section (without them the run is as above, SQLite
 * only):
 *
 *   BENCH_BASELINE=/path/to/another/intake-binary (bench/baseline.sh REV
 *     builds the binary of a git revision and prints its path):
 *     this build against that one on SQLite, side by side in the same run.
 *     Starts (step 2) take turns, A B B A...; in step 3 the baseline runs
 *     beside the main intake, each on its own database, and every wrk run
 *     (same threads, connections, duration, warm-up) goes to each in turn,
 *     the order alternating from route to route; webhooks (step 4) run twice
 *     for each, A B B A. A table gives each figure (req/s per route, start,
 *     RSS, webhook latency) for both, their ratio, and whether this build is
 *     within 10% of the baseline. The bare server copies this build's answers.
 *   BENCH_DATABASE_URL=postgres://user@host:port/db (a server the bench may
 *     create databases on; scripts/postgres-cluster.sh start makes a
 *     throwaway one): after the SQLite steps, intake on PostgreSQL. The bench
 *     creates fresh databases, intake_bench_<random> and ..._limit,
 *     ..._answers_1, ..._answers_n, ..._list_small, ..._list_large, and drops
 *     them at the end (or on Ctrl-C); it measures PostgreSQL's write limit
 *     (bench/pg-write-limit.ts in its own process: one-row transactions on 8
 *     connections at once, synchronous_commit on, 3 s, before and after), then
 *     step 3 with dist/intake on SERVICE_DATABASE_URL (no --db) and a bare
 *     server copying its answers: creates and submissions against that write
 *     limit (target 1.0 ×), reads against the bare server (target 0.3 ×); for
 *     context, what PostgreSQL alone commits of an answer's writes
 *     (bench/pg-answer-limit.ts, 1 and 8 per transaction); then step 5's list
 *     pages, the forms seeded into PostgreSQL directly; then several
 *     instances on one database (bench/instances.ts, ~2 minutes; alone:
 *     `bun run bench:instances`): 1, 2 and 3 instances and a control of 3 on
 *     a database each, reads, creates and submissions under the same load,
 *     and a long-poll woken by an answer through another instance. Without
 *     BENCH_DATABASE_URL that section is one line saying it was skipped.
 */

import { Database } from 'bun:sqlite'
import { chmodSync, copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { SQL } from 'bun'
import { monotonicFactory } from 'ulidx'
import {
  alive,
  type BenchState,
  BINARY,
  type Child,
  fmt,
  intakeEnv,
  machineLine,
  makeTempDir,
  printedKey,
  removeTempDir,
  startIntake,
  stopIntake,
  track,
  whenReady,
} from '../test/e2e/intake-child.ts'
import type { CapturedResponse, CapturedResponses } from './bare-server.ts'
import { WAKE_SAMPLES as EVENT_SAMPLES, type EventFigures, eventNotes, eventRows, measureEvents } from './events.ts'
import { INSTANCES_SKIPPED, type InstancesFigures, measureInstances, renderInstances } from './instances.ts'
import {
  BenchError,
  binaryPresent,
  log,
  markdownTable,
  PROJECT_ROOT,
  peakRssKiB,
  percentile,
  privateRssKiB,
  rssKiB,
  runBench,
  sleep,
} from './lib.ts'
import { createBenchDatabases, redactUrl } from './pg.ts'
import {
  measureWebhooks,
  TARGET_P50_MS,
  TARGET_P99_MS,
  SUBMIT_CONCURRENCY as WEBHOOK_CONCURRENCY,
  FORMS as WEBHOOK_FORMS,
  type WebhookFigures,
} from './webhooks.ts'
import { combineRounds, runWrk, type WrkResult, writePerFormScript, writeStaticScript, wrkPresent } from './wrk.ts'

// ---------------------------------------------------------------------------
// Settings

function envNumber(name: string, fallback: number, unit = ''): number {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  const n = Number(unit ? raw.trim().replace(new RegExp(`${unit}$`), '') : raw.trim())
  if (!Number.isInteger(n) || n < 1)
    throw new BenchError(
      `${name}=${raw}: expected a whole number${unit ? ` (of seconds, "${unit}" optional)` : ''} >= 1`,
    )
  return n
}

/** Seconds per wrk run, the same for intake and the bare server. */
const DURATION_S = envNumber('BENCH_DURATION', 10, 's')
/** wrk connections, the same for intake and the bare server. */
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 32)
/**
 * One wrk thread: on 2 cores, one core for the load and one for the server.
 * Two threads take CPU from the server under test, and more from the bare
 * server (which needs all of one core) than from intake, so they flatter the ratios.
 */
const THREADS = 1
/**
 * Reads and creates are measured in this many rounds, intake and the bare
 * server taking turns (DURATION_S split between the rounds): this machine's
 * speed drifts by a third over tens of seconds, and a ratio of two runs a
 * minute apart measured that drift as much as intake.
 */
const ROUNDS = Math.min(5, DURATION_S)
/** A short wrk run before each measured one, on each server (JIT, caches, connections). */
const WARMUP_S = Math.min(2, DURATION_S)
const SUBMIT_WARMUP_S = 1
/** Forms created through the API before "RSS after 100,000 forms". */
const FORMS_FOR_RSS = 100_000
const WRITE_LIMIT_S = 3
const START_REPEATS = 20
/** RSS "idle" is read this long after the first 200. */
const IDLE_AFTER_MS = 500
const LIST_SMALL = 1_000
const LIST_LARGE = envNumber('BENCH_LIST_FORMS', 1_000_000)
const LIST_REQUESTS = 2_000
const LIST_WARMUP = 200
const LIST_LIMIT = 20
/** Another intake binary to measure beside dist/intake on SQLite (see the top). */
const BASELINE = process.env.BENCH_BASELINE?.trim() || undefined
/** A PostgreSQL server to measure intake on as well (see the top). */
const DATABASE_URL = process.env.BENCH_DATABASE_URL?.trim() || undefined
/** Connections committing at once in PostgreSQL's write limit. */
const PG_WRITERS = 8
/** The answer limit's batched run: answers per transaction, about what intake's group commit reaches under load. */
const ANSWERS_PER_BATCH = 8
/** How much worse than the baseline a figure may be. */
const BASELINE_TOLERANCE = 0.1

const TARGET = {
  apiGetRatio: 0.5,
  pageRatio: 0.4,
  /** Creates and submissions per second, as a multiple of the disk's write limit. */
  writeRatio: 1.0,
  startMs: 100,
  rssIdleMiB: 60,
  rssFormsMiB: 150,
  listRatio: 1.5,
  /** On PostgreSQL: reads as a multiple of the bare server; creates and submissions as a multiple of PostgreSQL's write limit. */
  pgReadRatio: 0.3,
  pgWriteRatio: 1.0,
}

const RESULTS = join(import.meta.dir, 'results.md')

/**
 * The intake the run measures: a copy of dist/intake taken at the start (in a
 * temp dir), so that a `bun run build` during the run changes nothing.
 */
let intakeBinary = BINARY

// ---------------------------------------------------------------------------
// What is sent

/** A form as an agent would create it: five fields of four types, a context, an expiry. */
const FORM = {
  title: 'Book the team dinner',
  description: 'Pick what suits you; we book on Friday.',
  fields: [
    { key: 'name', type: 'text', label: 'Your name', required: true },
    { key: 'email', type: 'email', label: 'Email' },
    { key: 'guests', type: 'number', label: 'Guests', config: { min: 1, max: 8 } },
    {
      key: 'menu',
      type: 'select',
      label: 'Menu',
      config: { options: ['fish', { value: 'veg', label: 'Vegetarian' }] },
    },
    { key: 'agree', type: 'checkbox', label: 'I can come on Friday', required: true },
  ],
  context: { thread: 'T-1234' },
  expires_in: '24h',
}
const CREATE_BODY = JSON.stringify(FORM)
/** The answer as a custom front end sends it (JSON, 201) and as the page's form posts it (303). */
const ANSWER_JSON = JSON.stringify({
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  guests: 2,
  menu: 'veg',
  agree: true,
})
const ANSWER_FORM = new URLSearchParams({
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  guests: '2',
  menu: 'veg',
  agree: 'true',
}).toString()
const JSON_TYPE = 'application/json'
const FORM_TYPE = 'application/x-www-form-urlencoded'

// ---------------------------------------------------------------------------
// Small helpers

const mib = (kib: number) => kib / 1024
const ms = (n: number) => (Number.isFinite(n) ? `${fmt(n, n < 10 ? 2 : 1)} ms` : 'n/a')
const mark = (pass: boolean) => (pass ? '✓ pass' : '✗ miss')
const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  )

/** Everything that makes the run's figures untrustworthy; reported at the end (exit 1 if any). */
const problems: string[] = []

/** A raw HTTP/1.1 exchange over a fresh connection (closed after): what wrk sends and gets, byte for byte. */
function rawRequest(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body = '',
): Promise<CapturedResponse> {
  const head = [
    `${method} ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    ...Object.entries(headers).map(([n, v]) => `${n}: ${v}`),
    ...(body || method === 'POST' ? [`Content-Length: ${Buffer.byteLength(body)}`] : []),
    'Connection: close',
    '',
    '',
  ].join('\r\n')
  return new Promise((resolvePromise, reject) => {
    const chunks: Buffer[] = []
    let settled = false
    const finish = (error?: Error) => {
      if (settled) return
      settled = true
      if (error) return reject(error)
      try {
        resolvePromise(parseRawResponse(Buffer.concat(chunks)))
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)))
      }
    }
    Bun.connect({
      hostname: '127.0.0.1',
      port,
      socket: {
        open(socket) {
          socket.write(head + body)
        },
        data(_socket, data) {
          chunks.push(Buffer.from(data))
        },
        close() {
          finish()
        },
        error(_socket, error) {
          finish(error)
        },
        connectError(_socket, error) {
          finish(error)
        },
      },
    }).catch((error: unknown) => finish(error instanceof Error ? error : new Error(String(error))))
  })
}

function parseRawResponse(raw: Buffer): CapturedResponse {
  const end = raw.indexOf('\r\n\r\n')
  if (end < 0) throw new Error(`incomplete HTTP response (${raw.length} bytes)`)
  const lines = raw.subarray(0, end).toString('latin1').split('\r\n')
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1])
  if (!Number.isInteger(status)) throw new Error(`not an HTTP status line: ${lines[0]}`)
  const headers = lines.slice(1).map((line): [string, string] => {
    const colon = line.indexOf(':')
    return [line.slice(0, colon).trim(), line.slice(colon + 1).trim()]
  })
  let bodyBytes = raw.subarray(end + 4)
  const header = (name: string) => headers.find(([n]) => n.toLowerCase() === name)?.[1]
  if (header('transfer-encoding')?.toLowerCase() === 'chunked') {
    const parts: Buffer[] = []
    let at = 0
    for (;;) {
      const lineEnd = bodyBytes.indexOf('\r\n', at)
      const size = parseInt(bodyBytes.subarray(at, lineEnd).toString('latin1'), 16)
      if (!(size > 0)) break
      parts.push(bodyBytes.subarray(lineEnd + 2, lineEnd + 2 + size))
      at = lineEnd + 2 + size + 2
    }
    bodyBytes = Buffer.concat(parts)
  } else if (header('content-length') !== undefined) {
    bodyBytes = bodyBytes.subarray(0, Number(header('content-length')))
  }
  return { status, headers, body: bodyBytes.toString('utf8') }
}

/** Opens intake's database read-only for one look (WAL: never in intake's way). */
function lookAt<T>(dbPath: string, look: (db: Database) => T): T {
  const db = new Database(dbPath, { readonly: true })
  try {
    db.exec('PRAGMA busy_timeout = 5000')
    return look(db)
  } finally {
    db.close()
  }
}

const countRows = (dbPath: string, table: 'forms' | 'responses') =>
  lookAt(dbPath, (db) => (db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n)

/** Forms ever inserted (nothing is deleted in this run): the last rowid, found without counting. */
const formsInserted = (dbPath: string) =>
  lookAt(dbPath, (db) => (db.query('SELECT max(rowid) AS n FROM forms').get() as { n: number | null }).n ?? 0)

/** Active forms (so not yet answered), oldest first. */
const unansweredForms = (dbPath: string) =>
  lookAt(dbPath, (db) =>
    (db.query(`SELECT id FROM forms WHERE status = 'active' ORDER BY id`).all() as { id: string }[]).map((r) => r.id),
  )

/** A port free right now on 127.0.0.1. */
function freePort(): number {
  const listener = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = listener.port
  listener.stop(true)
  return port
}

function fileSystemOf(path: string): string {
  const out = Bun.spawnSync(['df', '--output=fstype,source', path], { stdout: 'pipe', stderr: 'ignore' })
  const row = out.stdout.toString().trim().split('\n')[1]?.trim().split(/\s+/)
  return row && row.length === 2 ? `${row[0]} (${row[1]})` : 'unknown file system'
}

/** The commit checked out, and whether src/ or views/ differ from it (dist/intake is built from the working tree). */
function sourceLine(): string {
  const git = (...args: string[]) =>
    Bun.spawnSync(['git', '-C', PROJECT_ROOT, ...args], { stdout: 'pipe', stderr: 'ignore' })
      .stdout.toString()
      .trim()
  const head = git('log', '-1', '--format=%h %s')
  if (!head) return 'no git commit found'
  const subject = head.length > 90 ? `${head.slice(0, 87)}...` : head
  const modified = git('status', '--porcelain', '--', 'src', 'views') !== ''
  return `HEAD ${subject}${modified ? ' (src/ or views/ modified since)' : ''}`
}

const loadAverage = () => {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  } catch {
    return '?'
  }
}

// ---------------------------------------------------------------------------
// 1. The disk's write limit

/** Runs a limit script of bench/ (write-limit.ts and the like) in a process of its own; its last line of output, as JSON. */
async function runLimitScript<T>(state: BenchState, script: string, args: string[]): Promise<T> {
  const proc = track(
    state,
    Bun.spawn([process.execPath, join(import.meta.dir, script), ...args], {
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    }),
  )
  const [out, err] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  if (proc.exitCode !== 0) throw new BenchError(`bench/${script} failed (${proc.exitCode}): ${err.trim()}`)
  return JSON.parse(out.trim().split('\n').at(-1)!) as T
}

interface WriteLimit {
  rows: number
  ms: number
  rowsPerSecond: number
}

async function measureWriteLimit(state: BenchState, dir: string, when: string): Promise<WriteLimit> {
  log(`write limit (${when}): one row per transaction, WAL, synchronous=FULL, ${WRITE_LIMIT_S} s...`)
  const result = await runLimitScript<WriteLimit>(state, 'write-limit.ts', [
    join(dir, 'write-limit.db'),
    String(WRITE_LIMIT_S),
  ])
  log(`  ${fmt(result.rowsPerSecond)} rows/s (${fmt(result.rows)} rows in ${fmt(result.ms)} ms)`)
  return result
}

// ---------------------------------------------------------------------------
// 2. Start to first 200

/** The status of GET /healthz over a fresh connection, or undefined when nothing answers. */
async function healthStatus(port: number): Promise<number | undefined> {
  try {
    return (await rawRequest(port, 'GET', '/healthz')).status
  } catch {
    return undefined
  }
}

/** Each binary's starts: ms from spawn to the first 200, and the CPU ms (user + sys) of its life, spawn to exit after that 200. */
interface StartFigures {
  times: number[]
  cpu: number[]
}

/** START_REPEATS starts of each binary, taking turns (A, B, B, A, A, B...); the figures per binary, in the order given. */
async function measureStartTimes(state: BenchState, flavors: Flavor[]): Promise<StartFigures[]> {
  log(
    `start to first 200: ${START_REPEATS} starts on fresh temp dirs${flavors.length > 1 ? ` for each of ${flavors.map((f) => f.label).join(' and ')}, taking turns` : ''}...`,
  )
  const times = flavors.map((): number[] => [])
  const cpu = flavors.map((): number[] => [])
  for (let i = 0; i < START_REPEATS; i++) {
    for (const k of turn(flavors.length, i)) {
      const flavor = flavors[k]!
      const dir = makeTempDir(state, 'start')
      const port = freePort()
      const t0 = performance.now()
      const child = startIntake(state, dir, {}, { port, logToFile: true, binary: flavor.binary })
      for (;;) {
        if ((await healthStatus(port)) === 200) break
        if (!alive(child))
          throw new BenchError(
            `${flavor.label} exited (code ${child.proc.exitCode}) before answering /healthz: ${child.err.tail.trim()}`,
          )
        if (performance.now() - t0 > 15_000)
          throw new BenchError(`${flavor.label} did not answer /healthz with 200 within 15 s of its start`)
      }
      times[k]!.push(performance.now() - t0)
      const stopped = await stopIntake(child)
      const usage = child.proc.resourceUsage()
      if (usage) cpu[k]!.push(Number(usage.cpuTime.user + usage.cpuTime.system) / 1000)
      if (stopped.code !== 0)
        problems.push(
          `start ${i + 1}${k > 0 ? ` (${flavor.label})` : ''}: intake exited with code ${stopped.code} on SIGTERM`,
        )
      removeTempDir(state, dir)
    }
  }
  flavors.forEach((flavor, k) =>
    log(
      `  ${k > 0 || flavors.length > 1 ? `${flavor.label}: ` : ''}${times[k]!.map((t) => fmt(t)).join(', ')} ms; CPU ${cpu[k]!.map((t) => fmt(t)).join(', ')} ms`,
    ),
  )
  return flavors.map((_, k) => ({ times: times[k]!, cpu: cpu[k]! }))
}

// ---------------------------------------------------------------------------
// 3. The main intake and the bare server under wrk

/** A build of intake on a store: dist/intake on SQLite, the BENCH_BASELINE binary on SQLite, dist/intake on PostgreSQL. */
interface Flavor {
  /** Its name in the log and in problems: "intake" for dist/intake on SQLite. */
  label: string
  /** Its temp dirs' name. */
  tag: string
  binary: string
  /** PostgreSQL: the database (SERVICE_DATABASE_URL; no --db). */
  databaseUrl?: string
  /**
   * No top-up to FORMS_FOR_RSS forms after the creates (nor "RSS after
   * 100,000 forms"): submissions then answer forms of a smaller table. For
   * PostgreSQL, where that top-up alone takes minutes and no target needs it.
   */
  noRssTopUp?: boolean
}

/**
 * The order of `count` things in turn `i`: as given on even turns, reversed on
 * odd ones (A B, B A, A B...), so that drift during a run hits each alike.
 */
function turn(count: number, i: number): number[] {
  const order = Array.from({ length: count }, (_, k) => k)
  return i % 2 === 0 ? order : order.reverse()
}

/** What the bench reads in intake's database, whichever it is; never in intake's way. */
interface DbView {
  count(table: 'forms' | 'responses'): Promise<number>
  /** Forms ever inserted (nothing is deleted in this run), as cheaply as the store allows: asked while wrk runs. */
  inserted(): Promise<number>
  /** Active forms (so not yet answered), oldest first. */
  unanswered(): Promise<string[]>
  /** How often `inserted` may be asked while wrk runs. */
  pollMs: number
  close(): Promise<void>
}

function sqliteView(dbPath: string): DbView {
  return {
    count: async (table) => countRows(dbPath, table),
    inserted: async () => formsInserted(dbPath),
    unanswered: async () => unansweredForms(dbPath),
    pollMs: 100,
    close: async () => {},
  }
}

function postgresView(url: string): DbView {
  const sql = new SQL({ url, max: 1 })
  const count = async (table: 'forms' | 'responses') =>
    Number(((await sql.unsafe(`SELECT count(*)::int8 AS n FROM ${table}`)) as { n: string | number }[])[0]!.n)
  return {
    count,
    inserted: () => count('forms'),
    unanswered: async () =>
      ((await sql`SELECT id FROM forms WHERE status = 'active' ORDER BY id`) as { id: string }[]).map((r) => r.id),
    pollMs: 250,
    close: () => sql.close(),
  }
}

interface Pair {
  route: string
  intake: WrkResult
  bare: WrkResult
  /** What the intake run changed in the database: rows added, and wrk's count of good answers. */
  note?: string
}

/** What one intake of measureMain gave. */
interface IntakeFigures {
  label: string
  version: string
  rssIdleKiB: number
  /** The private part (RssAnon) of rssIdleKiB. */
  rssIdlePrivateKiB: number
  rssAfterFormsKiB: number
  formsAtRss: number
  rssAfterRunKiB: number
  peakKiB: number
  /** wrk's measured run per route. */
  results: Map<string, WrkResult>
  notes: Map<string, string>
  formsCreated: number
  logSummary: string
  /** Its log's first error and warning lines, as written. */
  logLines: string[]
}

interface MainFigures {
  /** The routes in the order run. */
  routes: string[]
  /** The bare server's run per route (answering the bytes of the first intake). */
  bare: Map<string, WrkResult>
  /** One per flavor, in the order given: the first is the one the bare server copies. */
  intakes: IntakeFigures[]
}

/** The first intake's runs next to the bare server's. */
const pairsOf = (main: MainFigures, k = 0): Pair[] =>
  main.routes.map((route) => ({
    route,
    intake: main.intakes[k]!.results.get(route)!,
    bare: main.bare.get(route)!,
    note: main.intakes[k]!.notes.get(route),
  }))

/** Reads the bare server's listening line. */
async function startBare(
  state: BenchState,
  responsesFile: string,
): Promise<{ url: string; port: number; stop: () => Promise<unknown> }> {
  const proc = track(
    state,
    Bun.spawn([process.execPath, join(import.meta.dir, 'bare-server.ts'), responsesFile], {
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'inherit',
    }),
  )
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let text = ''
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline) {
    const { value, done } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
    const match = /^bare listening on (http:\/\/127\.0\.0\.1:(\d+))$/m.exec(text)
    if (match) {
      void (async () => {
        // keep the pipe drained
        while (!(await reader.read()).done);
      })().catch(() => {})
      const stop = () => {
        proc.kill('SIGTERM')
        return proc.exited
      }
      return { url: match[1]!, port: Number(match[2]), stop }
    }
  }
  throw new BenchError(`the bare server did not start: ${text.trim()}`)
}

/** An intake of measureMain while it runs. */
interface Live {
  flavor: Flavor
  dir: string
  child: Child
  pid: number
  url: string
  port: number
  auth: Record<string, string>
  version: string
  view: DbView
  rssIdleKiB: number
  rssIdlePrivateKiB: number
  /** The form every GET asks for. */
  formId: string
  /** The forms answered for `captured`. */
  jsonTarget: string
  formTarget: string
  captured: CapturedResponses
  /** Filled in as the runs go. */
  createScript: string
  createRate: number
  rssAfterFormsKiB: number
  formsAtRss: number
  results: Map<string, WrkResult>
  notes: Map<string, string>
}

/**
 * Every flavor's intake started side by side (each on its own database), then
 * route by route: each intake in turn (the order alternating from route to
 * route), then the bare server answering what the first intake answered.
 */
async function measureMain(state: BenchState, flavors: Flavor[]): Promise<MainFigures> {
  // One real answer per route, as wrk will get it.
  const expect = (what: string, res: CapturedResponse, status: number) => {
    if (res.status !== status)
      throw new BenchError(`${what}: expected ${status}, intake answered ${res.status} ${res.body.slice(0, 300)}`)
    return res
  }
  const lives: Live[] = []
  for (const flavor of flavors) {
    const dir = makeTempDir(state, flavor.tag)
    const child = startIntake(
      state,
      dir,
      {},
      { logToFile: true, binary: flavor.binary, databaseUrl: flavor.databaseUrl },
    )
    const pid = child.proc.pid
    const { url, port, key, version } = await whenReady(child, flavor.databaseUrl ? 60_000 : 15_000)
    await sleep(IDLE_AFTER_MS)
    const rssIdleKiB = rssKiB(pid)
    const rssIdlePrivateKiB = privateRssKiB(pid)
    const where = flavor.databaseUrl ? `database ${redactUrl(flavor.databaseUrl)}, log in ${dir}` : `database in ${dir}`
    log(
      `${flavor.label === 'intake' ? '' : `${flavor.label}: `}intake ${version} (pid ${pid}) on ${url}, ${where}; RSS idle ${fmt(mib(rssIdleKiB), 1)} MiB`,
    )
    const auth = { Authorization: `Bearer ${key}` }
    const view = flavor.databaseUrl ? postgresView(flavor.databaseUrl) : sqliteView(join(dir, 'intake.db'))
    const createOne = async () => {
      const res = expect(
        `${flavor.label}: POST /api/v1/forms`,
        await rawRequest(port, 'POST', '/api/v1/forms', { ...auth, 'Content-Type': JSON_TYPE }, CREATE_BODY),
        201,
      )
      return { res, id: (JSON.parse(res.body) as { id: string }).id }
    }
    const created = await createOne()
    const formId = created.id
    const jsonTarget = (await createOne()).id
    const formTarget = (await createOne()).id
    const captured: CapturedResponses = {
      create: created.res,
      apiForm: expect(
        `${flavor.label}: GET /api/v1/forms/<id>`,
        await rawRequest(port, 'GET', `/api/v1/forms/${formId}`, auth),
        200,
      ),
      page: expect(`${flavor.label}: GET /f/<id>`, await rawRequest(port, 'GET', `/f/${formId}`), 200),
      submitJson: expect(
        `${flavor.label}: POST /f/<id> (JSON)`,
        await rawRequest(port, 'POST', `/f/${jsonTarget}`, { 'Content-Type': JSON_TYPE }, ANSWER_JSON),
        201,
      ),
      submitForm: expect(
        `${flavor.label}: POST /f/<id> (form post)`,
        await rawRequest(port, 'POST', `/f/${formTarget}`, { 'Content-Type': FORM_TYPE }, ANSWER_FORM),
        303,
      ),
    }
    lives.push({
      flavor,
      dir,
      child,
      pid,
      url,
      port,
      auth,
      version,
      view,
      rssIdleKiB,
      rssIdlePrivateKiB,
      formId,
      jsonTarget,
      formTarget,
      captured,
      createScript: writeStaticScript(dir, 'create', 'POST', { ...auth, 'Content-Type': JSON_TYPE }, CREATE_BODY),
      createRate: 100,
      rssAfterFormsKiB: NaN,
      formsAtRss: 0,
      results: new Map(),
      notes: new Map(),
    })
  }
  const first = lives[0]!
  const ensureAlive = (l: Live, during: string) => {
    if (alive(l.child)) return
    // Its last lines other than request lines say why (e.g. "shutting down" and the signal it got).
    const last = l.child.out.tail
      .split('\n')
      .slice(1) // the first may be cut
      .filter((line) => line.trim() && !line.includes('"msg":"request"'))
      .slice(-5)
      .join('\n')
    throw new BenchError(
      `${l.flavor.label} exited during ${during} (code ${l.child.proc.exitCode}, signal ${l.child.proc.signalCode}); its last lines other than requests:\n${last}`,
    )
  }

  const responsesFile = join(first.dir, 'responses.json')
  writeFileSync(responsesFile, JSON.stringify(first.captured))
  const bare = await startBare(state, responsesFile)
  log(
    `bare server on ${bare.url}, answering the captured bytes of each route${lives.length > 1 ? ` (${first.flavor.label}'s)` : ''}`,
  )

  // The bare server must answer what intake answered.
  const checks: [keyof CapturedResponses, CapturedResponse][] = [
    [
      'create',
      await rawRequest(bare.port, 'POST', '/api/v1/forms', { ...first.auth, 'Content-Type': JSON_TYPE }, CREATE_BODY),
    ],
    ['apiForm', await rawRequest(bare.port, 'GET', `/api/v1/forms/${first.formId}`, first.auth)],
    ['page', await rawRequest(bare.port, 'GET', `/f/${first.formId}`)],
    [
      'submitJson',
      await rawRequest(bare.port, 'POST', `/f/${first.jsonTarget}`, { 'Content-Type': JSON_TYPE }, ANSWER_JSON),
    ],
    [
      'submitForm',
      await rawRequest(bare.port, 'POST', `/f/${first.formTarget}`, { 'Content-Type': FORM_TYPE }, ANSWER_FORM),
    ],
  ]
  const headerNames = (r: CapturedResponse) =>
    r.headers
      .map(([n]) => n.toLowerCase())
      .filter((n) => n !== 'date' && n !== 'connection')
      .sort()
      .join(',')
  for (const [name, got] of checks) {
    const want = first.captured[name]
    if (got.status !== want.status || got.body !== want.body || headerNames(got) !== headerNames(want)) {
      throw new BenchError(
        `the bare server's ${name} answer differs from intake's: ${got.status} [${headerNames(got)}] vs ${want.status} [${headerNames(want)}]`,
      )
    }
  }

  const base = { threads: THREADS, connections: CONNECTIONS }
  const short = (r: WrkResult) =>
    `${fmt(r.requestsPerSecond)} req/s, p50 ${ms(r.p50Ms)}, p99 ${ms(r.p99Ms)}` +
    (r.badStatus ? `, ${fmt(r.badStatus)} non-2xx/3xx` : '') +
    (r.exhausted ? `, ${fmt(r.exhausted)} with no form left` : '')
  const check = (route: string, server: string, r: WrkResult) => {
    const sockets = r.socketErrors.connect + r.socketErrors.read + r.socketErrors.write + r.socketErrors.timeout
    if (r.badStatus > 0) problems.push(`${route} (${server}): ${fmt(r.badStatus)} responses with a status > 399`)
    if (r.exhausted > 0)
      problems.push(
        `${route} (${server}): ${fmt(r.exhausted)} requests found no unanswered form left (too few forms made)`,
      )
    if (sockets > 0) problems.push(`${route} (${server}): socket errors ${JSON.stringify(r.socketErrors)}`)
  }
  const routes: string[] = []
  const bareResults = new Map<string, WrkResult>()
  /** The intakes in this route's turn. */
  const inTurn = () => turn(lives.length, routes.length).map((k) => lives[k]!)
  const who = lives.length > 1 ? `${lives.map((l) => l.flavor.label).join(' and ')} taking turns` : 'intake'

  /** Warm-up then a measured run on each intake in turn, then the same on the bare server. */
  async function pair(
    route: string,
    path: (l: Live) => string,
    options: { script?: (l: Live) => string; headers?: (l: Live) => Record<string, string>; warmupS: number },
  ): Promise<void> {
    const targets: [string, string, Live, Live | undefined][] = [
      ...inTurn().map((l): [string, string, Live, Live] => [l.flavor.label, l.url, l, l]),
      ['bare', bare.url, first, undefined],
    ]
    routes.push(route)
    const rounds = targets.map((): WrkResult[] => [])
    for (let round = 0; round < ROUNDS; round++) {
      for (const [k, [, origin, like, l]] of targets.entries()) {
        const run = {
          ...base,
          url: `${origin}${path(like)}`,
          script: options.script?.(like),
          headers: options.headers?.(like),
        }
        if (round === 0 && options.warmupS > 0) await runWrk(state, { ...run, seconds: options.warmupS })
        rounds[k]!.push(await runWrk(state, { ...run, seconds: DURATION_S / ROUNDS }))
        if (l) ensureAlive(l, route)
      }
    }
    for (const [k, [server, , , l]] of targets.entries()) {
      const r = combineRounds(rounds[k]!)
      check(route, server, r)
      log(
        `  ${route}, ${server}: ${short(r)} (rounds: ${rounds[k]!.map((one) => fmt(one.requestsPerSecond)).join(', ')} req/s)`,
      )
      if (l) l.results.set(route, r)
      else bareResults.set(route, r)
    }
  }
  const runLabel = `wrk -t${THREADS} -c${CONNECTIONS}, ${ROUNDS} rounds of ${DURATION_S / ROUNDS} s taking turns with the bare server, after a ${WARMUP_S} s warm-up`

  // GETs.
  log(`GET /api/v1/forms/<id> (${runLabel}, ${who} then bare)...`)
  await pair('GET /api/v1/forms/<id>', (l) => `/api/v1/forms/${l.formId}`, {
    headers: (l) => l.auth,
    warmupS: WARMUP_S,
  })
  log(`GET /f/<id> (${runLabel})...`)
  await pair('GET /f/<id>', (l) => `/f/${l.formId}`, { warmupS: WARMUP_S })

  // Creates: the same body every time.
  log(`POST /api/v1/forms (${runLabel})...`)
  const formsBefore = await Promise.all(lives.map((l) => l.view.count('forms')))
  await pair('POST /api/v1/forms', () => '/api/v1/forms', { script: (l) => l.createScript, warmupS: WARMUP_S })
  for (const [k, l] of lives.entries()) {
    const formsAfter = await l.view.count('forms')
    l.notes.set('POST /api/v1/forms', `${fmt(formsAfter - formsBefore[k]!)} forms written (warm-up included)`)
    l.createRate = Math.max(100, l.results.get('POST /api/v1/forms')!.requestsPerSecond)
  }

  /** Creates forms over the API (wrk, same script) until the database holds `total`: wrk is stopped once it does. */
  async function topUp(l: Live, total: number, why: string) {
    for (;;) {
      const have = await l.view.count('forms')
      if (have >= total) return
      const seconds = Math.min(300, Math.max(2, Math.ceil(((total - have) / l.createRate) * 2)))
      log(
        `  ${lives.length > 1 ? `${l.flavor.label}: ` : ''}${fmt(have)} forms: creating ${fmt(total - have)} more over the API (${why})...`,
      )
      const r = await runWrk(
        state,
        { ...base, url: `${l.url}/api/v1/forms`, script: l.createScript, seconds },
        async () => (await l.view.inserted()) >= total,
        l.view.pollMs,
      )
      ensureAlive(l, 'the top-up of forms')
      check('POST /api/v1/forms (top-up)', l.flavor.label, r)
      log(`  top-up: ${short(r)} for ${fmt(r.seconds, 1)} s`)
    }
  }
  for (const l of lives) {
    if (l.flavor.noRssTopUp) {
      log(
        `  ${l.flavor.label}: ${fmt(await l.view.count('forms'))} forms, no top-up to ${fmt(FORMS_FOR_RSS)} (RSS after ${fmt(FORMS_FOR_RSS)} forms is measured on SQLite)`,
      )
      continue
    }
    await topUp(l, FORMS_FOR_RSS, `to ${fmt(FORMS_FOR_RSS)}`)
    await sleep(IDLE_AFTER_MS)
    l.formsAtRss = await l.view.count('forms')
    l.rssAfterFormsKiB = rssKiB(l.pid)
    log(
      `  ${lives.length > 1 ? `${l.flavor.label}: ` : ''}${fmt(l.formsAtRss)} forms created over the API; intake RSS ${fmt(mib(l.rssAfterFormsKiB), 1)} MiB`,
    )
  }

  // Submissions: every request answers another form, never answered before.
  async function submissions(route: string, name: string, contentType: string, body: string): Promise<void> {
    const headers = { 'Content-Type': contentType }
    /** The per-form script for intake, and the same ids going round for the bare server (which answers no form). */
    const script = (l: Live, ids: string[], tag: string) => {
      const idsFile = join(l.dir, `${name}-${tag}.ids`)
      writeFileSync(idsFile, `${ids.join('\n')}\n`)
      return {
        intake: writePerFormScript(l.dir, `${name}-${tag}`, idsFile, THREADS, headers, body),
        bare: writePerFormScript(l.dir, `${name}-${tag}-bare`, idsFile, THREADS, headers, body, true),
      }
    }
    log(
      `${route} (wrk -t${THREADS} -c${CONNECTIONS} -d${DURATION_S}s after a ${SUBMIT_WARMUP_S} s warm-up, each form answered once${lives.length > 1 ? `, ${who}` : ''})...`,
    )
    const order = inTurn()
    routes.push(route)
    let bareScript = ''
    for (const l of order) {
      const label = l.flavor.label
      // Warm-up; its rate tells how many forms the measured run may answer.
      // Enough for three times the create rate (wrk counts what is left over, should that be too few).
      const warmIds = (await l.view.unanswered()).slice(
        0,
        Math.ceil(Math.max(l.createRate, 5000) * SUBMIT_WARMUP_S * 3),
      )
      const warmScript = script(l, warmIds, 'warmup')
      const warm = await runWrk(state, { ...base, url: l.url, script: warmScript.intake, seconds: SUBMIT_WARMUP_S })
      ensureAlive(l, `${route} warm-up`)
      check(`${route} warm-up`, label, warm)
      const rate = Math.max(warm.requestsPerSecond, l.createRate)
      const needed = Math.ceil(rate * DURATION_S * 1.3) + 100 * CONNECTIONS
      const left = (await l.view.unanswered()).length
      if (left < needed) await topUp(l, (await l.view.count('forms')) + (needed - left), `for ${route}`)

      const ids = await l.view.unanswered()
      const runScript = script(l, ids, 'run')
      if (l === first) bareScript = runScript.bare
      const responsesBefore = await l.view.count('responses')
      const intakeRun = await runWrk(state, { ...base, url: l.url, script: runScript.intake, seconds: DURATION_S })
      ensureAlive(l, route)
      const written = (await l.view.count('responses')) - responsesBefore
      check(route, label, intakeRun)
      log(
        `  ${route}, ${label}: ${short(intakeRun)} (${fmt(ids.length)} forms were ready, ${fmt(written)} responses written)`,
      )
      const answered = intakeRun.requests - intakeRun.badStatus
      if (written < answered)
        problems.push(
          `${route}${lives.length > 1 ? ` (${label})` : ''}: wrk counted ${fmt(answered)} good answers but only ${fmt(written)} responses were written`,
        )
      l.results.set(route, intakeRun)
      l.notes.set(route, `${fmt(written)} responses written`)
    }
    await runWrk(state, { ...base, url: bare.url, script: bareScript, seconds: SUBMIT_WARMUP_S })
    const bareRun = await runWrk(state, { ...base, url: bare.url, script: bareScript, seconds: DURATION_S })
    check(route, 'bare', bareRun)
    log(`  ${route}, bare: ${short(bareRun)}`)
    bareResults.set(route, bareRun)
  }
  await submissions('POST /f/<id> (JSON, 201)', 'submit-json', JSON_TYPE, ANSWER_JSON)
  await submissions('POST /f/<id> (form post, 303)', 'submit-form', FORM_TYPE, ANSWER_FORM)

  await sleep(IDLE_AFTER_MS)
  const intakes: IntakeFigures[] = []
  for (const l of lives) {
    const rssAfterRunKiB = rssKiB(l.pid)
    const peakKiB = peakRssKiB(l.pid)
    const formsCreated = await l.view.count('forms')
    await l.view.close()
    const stopped = await stopIntake(l.child)
    if (stopped.code !== 0)
      problems.push(
        `${l === first && l.flavor.label === 'intake' ? 'main intake' : l.flavor.label} exited with code ${stopped.code} on SIGTERM`,
      )
    const { summary: logSummary, lines: logLines } = summarizeLog(
      join(l.dir, 'intake.stdout.log'),
      l.child,
      l.flavor.label,
    )
    log(
      `  ${lives.length > 1 ? `${l.flavor.label}: ` : ''}intake stopped in ${fmt(stopped.ms)} ms; its log: ${logSummary}`,
    )
    for (const line of logLines) log(`    ${line}`)
    removeTempDir(state, l.dir)
    intakes.push({
      label: l.flavor.label,
      version: l.version,
      rssIdleKiB: l.rssIdleKiB,
      rssIdlePrivateKiB: l.rssIdlePrivateKiB,
      rssAfterFormsKiB: l.rssAfterFormsKiB,
      formsAtRss: l.formsAtRss,
      rssAfterRunKiB,
      peakKiB,
      results: l.results,
      notes: l.notes,
      formsCreated,
      logSummary,
      logLines,
    })
  }
  await bare.stop()
  return { routes, bare: bareResults, intakes }
}

/** Log lines quoted as they are, at most this many per intake. */
const QUOTED_LOG_LINES = 5

/** Statuses intake logged (one JSON line per request), error and warning lines counted with grep, the first few quoted. */
function summarizeLog(file: string, child: Child, label: string): { summary: string; lines: string[] } {
  const sh = (command: string) =>
    Bun.spawnSync(['sh', '-c', command], {
      stdout: 'pipe',
      stderr: 'ignore',
      env: { ...process.env, LC_ALL: 'C', FILE: file },
    }).stdout.toString()
  const statuses = sh(`grep -o '"status":[0-9]*' "$FILE" | sort | uniq -c`)
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [count, status] = line.trim().split(/\s+"status":/)
      return { status: Number(status), count: Number(count) }
    })
  const errors = Number(sh(`grep -c '"level":"error"' "$FILE"`).trim() || 0)
  const warnings = Number(sh(`grep -c '"level":"warn"' "$FILE"`).trim() || 0)
  const lines = sh(`grep -E '"level":"(error|warn)"' "$FILE" | head -n ${QUOTED_LOG_LINES}`)
    .split('\n')
    .filter(Boolean)
    .map((line) => (line.length > 600 ? `${line.slice(0, 600)}...` : line))
  const stderrLines = child.err.tail.trim()
  for (const { status, count } of statuses) {
    if (status >= 400) problems.push(`${label} logged ${fmt(count)} responses with status ${status}`)
  }
  if (errors > 0)
    problems.push(
      `${label} logged ${fmt(errors)} error lines, the first: ${lines.find((l) => l.includes('"level":"error"'))}`,
    )
  if (stderrLines) problems.push(`${label} wrote to stderr: ${stderrLines.slice(-300)}`)
  const total = statuses.reduce((sum, s) => sum + s.count, 0)
  const summary =
    `${fmt(total)} requests logged (${statuses.map((s) => `${s.status} × ${fmt(s.count)}`).join(', ') || 'no status found'}), ${fmt(errors)} error lines` +
    (warnings > 0 ? `, ${fmt(warnings)} warnings` : '')
  return { summary, lines }
}

// ---------------------------------------------------------------------------
// 5. List pages on seeded databases

interface ListFigures {
  forms: number
  seedMs: number
  first: number[]
  deep: number[]
}

/** A key for account "bench", made by dist/intake itself (which also creates the schema), in the SQLite file or the PostgreSQL database. */
function createKey(dbPath: string, databaseUrl?: string): string {
  const store = databaseUrl === undefined ? ['--db', dbPath] : []
  const env = intakeEnv(databaseUrl === undefined ? {} : { SERVICE_DATABASE_URL: databaseUrl })
  const out = Bun.spawnSync([intakeBinary, 'keys', 'create', '--account', 'bench', ...store], {
    stdout: 'pipe',
    stderr: 'pipe',
    env,
  })
  const key = printedKey(out.stdout.toString())
  if (out.exitCode !== 0 || !key)
    throw new BenchError(
      `intake keys create failed (${out.exitCode}): ${out.stderr.toString().trim() || out.stdout.toString().trim()}`,
    )
  return key
}

/**
 * `count` forms for account "bench", in one transaction with one prepared
 * statement, ids increasing ULIDs (10 ms apart, the newest now). Returns the
 * id of the form in the middle.
 */
async function seedForms(dbPath: string, count: number): Promise<string> {
  const db = new Database(dbPath, { strict: true })
  try {
    // Seeding only: no WAL, no fsync (intake switches back to WAL when it opens the file).
    db.exec('PRAGMA journal_mode = DELETE')
    db.exec('PRAGMA synchronous = OFF')
    db.exec('PRAGMA cache_size = -262144')
    const account = db.query('SELECT id FROM accounts WHERE name = ?').get('bench') as { id: string } | null
    if (!account) throw new BenchError('no account "bench" after intake keys create')
    const insert = db.query(
      `INSERT INTO forms (id, account_id, title, description, fields, fields_count, callback_url, callback_metadata,
         webhook_secret, context, settings, status, expires_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, NULL, '{}', NULL, ?, '{}', 'active', ?, ?, ?)`,
    )
    const fields = JSON.stringify(FORM.fields)
    const context = JSON.stringify(FORM.context)
    const newId = monotonicFactory()
    const now = Date.now()
    const CHUNK = 100_000
    let middle = ''
    db.exec('BEGIN IMMEDIATE')
    try {
      for (let i = 0; i < count; i++) {
        const createdAt = now - (count - i) * 10
        const id = newId(createdAt)
        if (i === Math.floor(count / 2)) middle = id
        insert.run(
          id,
          account.id,
          `${FORM.title} ${i + 1}`,
          FORM.description,
          fields,
          FORM.fields.length,
          context,
          createdAt + 24 * 3_600_000,
          createdAt,
          createdAt,
        )
        if ((i + 1) % CHUNK === 0 && i + 1 < count) {
          log(`  seeded ${fmt(i + 1)} of ${fmt(count)} forms...`)
          await sleep(0) // let Ctrl-C through
        }
      }
      db.exec('COMMIT')
    } catch (error) {
      db.exec('ROLLBACK')
      throw error
    }
    return middle
  } finally {
    db.close()
  }
}

/**
 * seedForms on PostgreSQL: the same rows (ids, titles, times), written in one
 * transaction (synchronous_commit off: seeding only) by one INSERT ... SELECT
 * per 50,000 forms, the ids passed as one comma-separated text; then ANALYZE,
 * as autovacuum would soon. Returns the id of the form in the middle.
 */
async function seedFormsPostgres(url: string, count: number): Promise<string> {
  const sql = new SQL({ url, max: 1 })
  try {
    const [account] = (await sql`SELECT id FROM accounts WHERE name = 'bench'`) as { id: string }[]
    if (!account) throw new BenchError('no account "bench" after intake keys create')
    const newId = monotonicFactory()
    const now = Date.now()
    const CHUNK = 50_000
    let middle = ''
    await sql.begin(async (tx) => {
      await tx.unsafe('SET LOCAL synchronous_commit = off')
      for (let offset = 0; offset < count; offset += CHUNK) {
        const ids: string[] = []
        for (let i = offset; i < Math.min(count, offset + CHUNK); i++) {
          const id = newId(now - (count - i) * 10)
          if (i === Math.floor(count / 2)) middle = id
          ids.push(id)
        }
        // Form i (from 0) is created at now - (count - i) * 10 ms, and titled "<title> <i + 1>".
        await tx.unsafe(
          `INSERT INTO forms (id, account_id, title, description, fields, fields_count, callback_url, callback_metadata,
             webhook_secret, context, settings, status, expires_at, created_at, updated_at)
           SELECT u.id, $1, $2 || ' ' || ($3::int8 + u.n)::text, $4, $5, $6, NULL, '{}', NULL, $7, '{}', 'active', c.at + 86400000, c.at, c.at
           FROM unnest(string_to_array($8, ',')) WITH ORDINALITY AS u(id, n)
           CROSS JOIN LATERAL (SELECT $9::int8 - ($10::int8 - ($3::int8 + u.n - 1)) * 10 AS at) c`,
          [
            account.id,
            FORM.title,
            offset,
            FORM.description,
            JSON.stringify(FORM.fields),
            FORM.fields.length,
            JSON.stringify(FORM.context),
            ids.join(','),
            now,
            count,
          ],
        )
        if (offset + CHUNK < count && (offset + CHUNK) % 100_000 === 0)
          log(`  seeded ${fmt(offset + CHUNK)} of ${fmt(count)} forms...`)
      }
    })
    await sql.unsafe('ANALYZE forms')
    return middle
  } finally {
    await sql.close()
  }
}

/** With `databaseUrl`, on that (fresh) PostgreSQL database instead of a SQLite file. */
async function measureList(state: BenchState, forms: number, databaseUrl?: string): Promise<ListFigures> {
  const dir = makeTempDir(state, 'list')
  const dbPath = join(dir, 'intake.db')
  const key = createKey(dbPath, databaseUrl)
  log(
    `list page, ${fmt(forms)} forms${databaseUrl ? ' on PostgreSQL' : ''}: seeding ${databaseUrl ? redactUrl(databaseUrl) : dbPath}...`,
  )
  const seedStart = performance.now()
  const middle = databaseUrl ? await seedFormsPostgres(databaseUrl, forms) : await seedForms(dbPath, forms)
  const seedMs = performance.now() - seedStart
  log(`  seeded ${fmt(forms)} forms in ${fmt(seedMs)} ms`)

  const child = startIntake(state, dir, {}, { logToFile: true, databaseUrl, binary: intakeBinary })
  const { url } = await whenReady(child, 60_000, { key })
  const headers = { authorization: `Bearer ${key}` }
  const firstUrl = `${url}/api/v1/forms?limit=${LIST_LIMIT}`
  const deepUrl = `${firstUrl}&cursor=${middle}`

  // Both pages are what they should be: 20 forms, the right ones, and a next link.
  for (const [name, pageUrl, firstIndex] of [
    ['first page', firstUrl, forms - 1],
    ['deep page', deepUrl, Math.floor(forms / 2) - 1],
  ] as const) {
    const res = await fetch(pageUrl, { headers, signal: state.abort.signal })
    const list = (await res.json()) as { title?: string }[]
    if (
      res.status !== 200 ||
      !Array.isArray(list) ||
      list.length !== LIST_LIMIT ||
      list[0]?.title !== `${FORM.title} ${firstIndex + 1}` ||
      !res.headers.get('link')
    ) {
      throw new BenchError(
        `list ${name} of ${fmt(forms)} forms: ${res.status}, ${Array.isArray(list) ? list.length : '?'} forms, first "${list[0]?.title}", link ${res.headers.get('link')}`,
      )
    }
  }

  const timed = async (pageUrl: string, count: number) => {
    const latencies: number[] = []
    let bad = 0
    for (let i = 0; i < count; i++) {
      const t0 = performance.now()
      const res = await fetch(pageUrl, { headers, signal: state.abort.signal })
      await res.arrayBuffer()
      latencies.push(performance.now() - t0)
      if (res.status !== 200) bad++
    }
    if (bad > 0) problems.push(`list page (${fmt(forms)} forms): ${bad} of ${count} requests were not 200`)
    return latencies.sort((a, b) => a - b)
  }
  await timed(firstUrl, LIST_WARMUP)
  await timed(deepUrl, LIST_WARMUP)
  const first = await timed(firstUrl, LIST_REQUESTS)
  const deep = await timed(deepUrl, LIST_REQUESTS)
  log(
    `  first page p50 ${ms(percentile(first, 50))} p99 ${ms(percentile(first, 99))}; deep page p50 ${ms(percentile(deep, 50))} p99 ${ms(percentile(deep, 99))}`,
  )
  if (!alive(child)) throw new BenchError(`intake exited during the list pages (code ${child.proc.exitCode})`)
  const stopped = await stopIntake(child)
  if (stopped.code !== 0) problems.push(`list intake (${fmt(forms)} forms) exited with code ${stopped.code} on SIGTERM`)
  removeTempDir(state, dir)
  return { forms, seedMs, first, deep }
}

// ---------------------------------------------------------------------------
// After the SQLite steps: PostgreSQL (BENCH_DATABASE_URL)

interface PgWriteLimit extends WriteLimit {
  connections: number
  /** The cluster's durability settings, as the writers' sessions saw them. */
  settings: Record<string, string>
}

async function measurePgWriteLimit(state: BenchState, url: string, when: string): Promise<PgWriteLimit> {
  log(
    `PostgreSQL write limit (${when}): one row per transaction on ${PG_WRITERS} connections at once, synchronous_commit on, ${WRITE_LIMIT_S} s...`,
  )
  const result = await runLimitScript<PgWriteLimit>(state, 'pg-write-limit.ts', [
    url,
    String(WRITE_LIMIT_S),
    String(PG_WRITERS),
  ])
  log(`  ${fmt(result.rowsPerSecond)} rows/s (${fmt(result.rows)} rows in ${fmt(result.ms)} ms)`)
  return result
}

interface PgAnswerLimit {
  answers: number
  ms: number
  answersPerSecond: number
  walBytesPerAnswer: number
  connections: number
  perTransaction: number
}

/** The answer limit: PostgreSQL alone committing what answers write (bench/pg-answer-limit.ts), a fresh database each. */
async function measurePgAnswerLimit(state: BenchState, url: string, perTransaction: number): Promise<PgAnswerLimit> {
  log(
    `PostgreSQL answer limit: the writes of ${perTransaction} answer${perTransaction === 1 ? '' : 's'} per transaction on ${PG_WRITERS} connections at once, ${WRITE_LIMIT_S} s...`,
  )
  const result = await runLimitScript<PgAnswerLimit>(state, 'pg-answer-limit.ts', [
    url,
    String(WRITE_LIMIT_S),
    String(PG_WRITERS),
    String(perTransaction),
  ])
  log(
    `  ${fmt(result.answersPerSecond)} answers/s (${fmt(result.answers)} in ${fmt(result.ms)} ms, ${fmt(result.walBytesPerAnswer)} WAL bytes each)`,
  )
  return result
}

interface PostgresFigures {
  /** BENCH_DATABASE_URL without its password. */
  server: string
  database: string
  /** Measured before the HTTP runs and after them: the target is their mean. */
  writeLimits: [PgWriteLimit, PgWriteLimit]
  /** Context, not a target: what PostgreSQL alone commits of answers, one per transaction and ANSWERS_PER_BATCH per transaction. */
  answerLimits: [PgAnswerLimit, PgAnswerLimit]
  main: MainFigures
  /** The list pages at LIST_SMALL and LIST_LARGE forms, on PostgreSQL. */
  lists: [ListFigures, ListFigures]
  seconds: number
}

/** A quick look that BENCH_DATABASE_URL answers, before minutes of SQLite runs. */
async function checkDatabaseServer(url: string): Promise<string> {
  const sql = new SQL({ url, max: 1, connectionTimeout: 10 })
  try {
    const [row] = (await sql`SELECT current_setting('server_version') AS v`) as { v: string }[]
    return row!.v
  } catch (error) {
    throw new BenchError(
      `BENCH_DATABASE_URL (${redactUrl(url)}) does not answer: ${error instanceof Error ? error.message : String(error)}`,
    )
  } finally {
    await sql.close()
  }
}

async function measurePostgres(state: BenchState, server: string): Promise<PostgresFigures> {
  const t0 = performance.now()
  const dbs = await createBenchDatabases(state, server, [
    'intake',
    'limit',
    'answers_1',
    'answers_n',
    'list_small',
    'list_large',
  ])
  const { urls } = dbs
  log(
    `PostgreSQL on ${redactUrl(server)}: fresh databases ${dbs.name} (intake's), ${dbs.name}_limit (the write limit's), ${dbs.name}_list_small and _list_large (the list pages')`,
  )
  try {
    const before = await measurePgWriteLimit(state, urls.limit!, 'before the HTTP runs')
    // The write limit commits with synchronous_commit on; intake's sessions take the server's setting.
    if (before.settings.synchronous_commit !== 'on' || before.settings.fsync !== 'on') {
      problems.push(
        `PostgreSQL at ${redactUrl(server)} runs with synchronous_commit ${before.settings.synchronous_commit}, fsync ${before.settings.fsync}: ` +
          'intake commits there without waiting for the disk, the write limit waits for it; the write figures are not comparable (use a cluster with both on)',
      )
    }
    const main = await measureMain(state, [
      { label: 'postgres', tag: 'pg', binary: intakeBinary, databaseUrl: urls.intake!, noRssTopUp: true },
    ])
    const after = await measurePgWriteLimit(state, urls.limit!, 'after them')
    const answerLimits: [PgAnswerLimit, PgAnswerLimit] = [
      await measurePgAnswerLimit(state, urls.answers_1!, 1),
      await measurePgAnswerLimit(state, urls.answers_n!, ANSWERS_PER_BATCH),
    ]
    const lists: [ListFigures, ListFigures] = [
      await measureList(state, LIST_SMALL, urls.list_small!),
      await measureList(state, LIST_LARGE, urls.list_large!),
    ]
    return {
      server: redactUrl(server),
      database: dbs.name,
      writeLimits: [before, after],
      answerLimits,
      main,
      lists,
      seconds: (performance.now() - t0) / 1000,
    }
  } finally {
    await dbs.drop()
    log(`dropped ${dbs.name} and the others`)
  }
}

// ---------------------------------------------------------------------------
// 6. The report

interface Report {
  startedAt: Date
  seconds: number
  source: string
  binaryBuilt: Date
  machine: string
  fileSystem: string
  loadBefore: string
  loadAfter: string
  binaryBytes: number
  /** Measured before the HTTP runs and after them: the target is their mean. */
  writeLimits: [WriteLimit, WriteLimit]
  startTimes: number[]
  startCpu: number[]
  main: MainFigures
  webhooks: WebhookFigures
  events: EventFigures
  lists: [ListFigures, ListFigures]
  /** With BENCH_BASELINE: the baseline's figures are main.intakes[1]. */
  baseline?: BaselineFigures
  /** With BENCH_DATABASE_URL. */
  postgres?: PostgresFigures
  /** With BENCH_DATABASE_URL: several instances on one database. */
  instances?: InstancesFigures
}

interface BaselineFigures {
  binary: string
  /** What it was built from, when bench/baseline.sh left a note beside it. */
  commit: string | undefined
  built: Date
  bytes: number
  startTimes: number[]
  startCpu: number[]
  /** Its webhook runs, and this build's (taking turns with it). */
  webhooks: WebhookFigures[]
  thisWebhooks: WebhookFigures[]
}

function render(r: Report): string[] {
  const { webhooks } = r
  const main = r.main.intakes[0]!
  const pairs = pairsOf(r.main)
  const writeLimit = (r.writeLimits[0].rowsPerSecond + r.writeLimits[1].rowsPerSecond) / 2
  const out: string[] = []
  const minute = (d: Date) => `${d.toISOString().replace('T', ' ').slice(0, 16)} UTC`
  out.push(
    `Run ${minute(r.startedAt)}, ${fmt(r.seconds)} s, intake ${main.version}: \`dist/intake\` built ${minute(r.binaryBuilt)}; ${r.source}.`,
  )
  out.push('')
  out.push(
    `Machine: ${r.machine}. Temp dirs on ${r.fileSystem}. Load average before / after: ${r.loadBefore} / ${r.loadAfter}.`,
  )
  out.push('')

  // HTTP.
  out.push(`### HTTP: intake against a bare Bun.serve answering the same bytes`)
  out.push('')
  out.push(
    `wrk -t${THREADS} -c${CONNECTIONS} --latency, ${DURATION_S} s on each server after a warm-up run (${WARMUP_S} s; ${SUBMIT_WARMUP_S} s for submissions). ` +
      `Reads and creates in ${ROUNDS} rounds of ${DURATION_S / ROUNDS} s, intake and the bare server taking turns (req/s: all requests over all rounds; p50: the median round's; p99: the highest); ` +
      `submissions in one run each. Rate limits off; intake logs each request to a file.`,
  )
  out.push('')
  const writeTarget = `≥ ${fmt(TARGET.writeRatio, 1)} × write limit (${fmt(writeLimit)}/s)`
  const rows = pairs.map((p) => {
    const ratio = p.intake.requestsPerSecond / p.bare.requestsPerSecond
    let target: string
    let result: string
    if (p.route.startsWith('GET /api')) {
      target = `≥ ${TARGET.apiGetRatio} × limit`
      result = mark(ratio >= TARGET.apiGetRatio)
    } else if (p.route.startsWith('GET /f')) {
      target = `≥ ${TARGET.pageRatio} × limit`
      result = mark(ratio >= TARGET.pageRatio)
    } else {
      const vsDisk = p.intake.requestsPerSecond / writeLimit
      target = writeTarget
      result = `${fmt(vsDisk, 2)} × ${mark(vsDisk >= TARGET.writeRatio)}`
    }
    const errors = (w: WrkResult) =>
      fmt(
        w.badStatus +
          w.exhausted +
          w.socketErrors.connect +
          w.socketErrors.read +
          w.socketErrors.write +
          w.socketErrors.timeout,
      )
    return [
      `\`${p.route}\``,
      fmt(p.intake.requestsPerSecond),
      fmt(p.bare.requestsPerSecond),
      fmt(ratio, 2),
      ms(p.intake.p50Ms),
      ms(p.intake.p99Ms),
      ms(p.bare.p50Ms),
      ms(p.bare.p99Ms),
      `${errors(p.intake)} / ${errors(p.bare)}`,
      target,
      result,
    ]
  })
  out.push(
    ...markdownTable(
      [
        'route',
        'intake req/s',
        'limit req/s',
        'ratio',
        'intake p50',
        'intake p99',
        'limit p50',
        'limit p99',
        'failed (intake / limit)',
        'target',
        'result',
      ],
      rows,
    ),
  )
  out.push('')
  out.push(
    '"limit" is bench/bare-server.ts: Bun.serve in its own process answering the status, headers and body intake answered for that route, doing no work. ' +
      '"failed" counts status > 399, socket errors and requests that found no unanswered form left. ' +
      'Each submission answers a different form, created over the API beforehand and never answered before.',
  )
  for (const p of pairs) if (p.note) out.push(`\`${p.route}\`: ${p.note}.`)
  out.push(`intake's log: ${main.logSummary}.`)
  out.push(...quotedLog(main))
  out.push('')

  // Write limit.
  out.push('### Disk write limit')
  out.push('')
  const writeRow = (when: string, w: WriteLimit) => [
    when,
    `${fmt(w.rowsPerSecond)} rows/s (${fmt(w.rows)} rows in ${fmt(w.ms)} ms)`,
  ]
  out.push(
    ...markdownTable(
      ['measure', 'value'],
      [
        writeRow('before the HTTP runs', r.writeLimits[0]),
        writeRow('after the HTTP runs', r.writeLimits[1]),
        ['write limit (mean): the target for creates and submissions', `${fmt(writeLimit)} rows/s`],
      ],
    ),
  )
  out.push('')
  out.push(
    `bench/write-limit.ts in its own process: a plain bun:sqlite loop on a fresh file in a temp dir, one INSERT per transaction (BEGIN IMMEDIATE), ` +
      `intake's pragmas (WAL, synchronous=FULL), ${WRITE_LIMIT_S} s, no HTTP; intake and the bare server idle or stopped meanwhile.`,
  )
  out.push('')

  // Webhooks.
  const lat = webhooks.latencies
  const p50 = percentile(lat, 50)
  const p99 = percentile(lat, 99)
  out.push(`### Webhooks: ${fmt(WEBHOOK_FORMS)} submissions, ${WEBHOOK_CONCURRENCY} at a time`)
  out.push('')
  out.push(
    ...markdownTable(
      ['measure', 'value', 'target', 'result'],
      [
        ['answer sent → first attempt arrived, p50', ms(p50), `≤ ${TARGET_P50_MS} ms`, mark(p50 <= TARGET_P50_MS)],
        ['answer sent → first attempt arrived, p99', ms(p99), `≤ ${TARGET_P99_MS} ms`, mark(p99 <= TARGET_P99_MS)],
        ['answer sent → first attempt arrived, max', ms(lat.at(-1) ?? NaN), '', ''],
        [
          'answer sent → 201 receipt, p50 / p99',
          `${ms(percentile(webhooks.submitLatencies, 50))} / ${ms(percentile(webhooks.submitLatencies, 99))}`,
          '',
          '',
        ],
        [
          'deliveries arrived exactly once, correctly signed',
          `${fmt(webhooks.exactlyOnce)} / ${fmt(lat.length)} of ${fmt(webhooks.forms)}`,
          '',
          '',
        ],
        [
          'delivered on the first attempt (delivery log)',
          `${fmt(webhooks.firstTry)} of ${fmt(webhooks.forms)}`,
          '',
          '',
        ],
      ],
    ),
  )
  out.push('')
  out.push(
    'From bench/webhooks.ts (`bun run bench:webhooks` runs it alone): a receiver in the bench process, one clock for both ends.',
  )
  out.push('')

  // Event feed.
  out.push(
    `### Event feed: a waiting \`GET /api/v1/events\` woken by an answer, ${fmt(EVENT_SAMPLES)} samples one at a time`,
  )
  out.push('')
  out.push(...markdownTable(['measure', 'value'], eventRows(r.events)))
  out.push('')
  out.push(
    [
      ...eventNotes(r.events),
      'From bench/events.ts (`bun run bench:events` runs it alone, adding the idle cost of 1,000 waiting feed requests and one answer waking them all).',
    ].join(' '),
  )
  out.push('')

  // Start and memory.
  const startMedian = median(r.startTimes)
  const startMax = Math.max(...r.startTimes)
  const idle = mib(main.rssIdleKiB)
  const afterForms = mib(main.rssAfterFormsKiB)
  const afterRun = mib(main.rssAfterRunKiB)
  out.push('### Start and memory')
  out.push('')
  out.push(
    ...markdownTable(
      ['measure', 'value', 'target', 'result'],
      [
        [
          `spawn → first 200 on /healthz, median of ${r.startTimes.length}`,
          ms(startMedian),
          `≤ ${TARGET.startMs} ms`,
          mark(startMedian <= TARGET.startMs),
        ],
        [`spawn → first 200 on /healthz, max of ${r.startTimes.length}`, ms(startMax), '', ''],
        [
          `CPU (user + sys) of a start, spawn → exit after the first 200, median of ${r.startCpu.length}`,
          ms(median(r.startCpu)),
          '',
          '',
        ],
        [
          `RSS idle (${IDLE_AFTER_MS} ms after the first 200)`,
          `${fmt(idle, 1)} MiB`,
          `≤ ${TARGET.rssIdleMiB} MiB`,
          mark(idle <= TARGET.rssIdleMiB),
        ],
        ['RSS idle, private part (RssAnon)', `${fmt(mib(main.rssIdlePrivateKiB), 1)} MiB`, '', ''],
        [
          `RSS after ${fmt(main.formsAtRss)} forms created over the API`,
          `${fmt(afterForms, 1)} MiB`,
          `≤ ${TARGET.rssFormsMiB} MiB`,
          mark(afterForms <= TARGET.rssFormsMiB),
        ],
        [
          `RSS after the run (${fmt(main.formsCreated)} forms, every route above)`,
          `${fmt(afterRun, 1)} MiB`,
          `≤ ${TARGET.rssFormsMiB} MiB`,
          mark(afterRun <= TARGET.rssFormsMiB),
        ],
        ['peak RSS (VmHWM)', `${fmt(mib(main.peakKiB), 1)} MiB`, '', ''],
        [
          'binary size (dist/intake)',
          `${fmt(r.binaryBytes / 1e6, 1)} MB (${fmt(r.binaryBytes / 2 ** 20, 1)} MiB)`,
          '',
          '',
        ],
      ],
    ),
  )
  out.push('')
  out.push(
    `Each start is on a fresh temp dir (so it creates the database and a key), polled over a fresh connection per try, with no pause. ` +
      `Start times: ${r.startTimes.map((t) => fmt(t)).join(', ')} ms. RSS is VmRSS / VmHWM of the main intake from /proc/<pid>/status; MB in targets read as MiB.`,
  )
  out.push('')

  // List pages.
  out.push(`### List page: \`GET /api/v1/forms?limit=${LIST_LIMIT}\`, ${fmt(LIST_REQUESTS)} sequential requests`)
  out.push('')
  out.push(...listTable(r.lists))
  out.push('')

  if (r.baseline) out.push(...renderBaseline(r, r.baseline))
  if (r.postgres) out.push(...renderPostgres(r.postgres, r.main))
  out.push(...(r.instances ? renderInstances(r.instances) : [INSTANCES_SKIPPED, '']))

  if (problems.length > 0) {
    out.push('### Problems: these figures are not valid')
    out.push('')
    for (const p of problems) out.push(`- ${p}`)
    out.push('')
  }
  return out
}

/** The list pages' table and its note: the small list against the large one. */
function listTable([small, large]: [ListFigures, ListFigures]): string[] {
  const listRow = (name: string, pick: (l: ListFigures) => number[]) => {
    const a = pick(small)
    const b = pick(large)
    const ratio = percentile(b, 50) / percentile(a, 50)
    return [
      name,
      `${ms(percentile(a, 50))} / ${ms(percentile(a, 99))}`,
      `${ms(percentile(b, 50))} / ${ms(percentile(b, 99))}`,
      fmt(ratio, 2),
      `≤ ${TARGET.listRatio}`,
      mark(ratio <= TARGET.listRatio),
    ]
  }
  return [
    ...markdownTable(
      [
        'page',
        `${fmt(small.forms)} forms p50 / p99`,
        `${fmt(large.forms)} forms p50 / p99`,
        'ratio of p50',
        'target',
        'result',
      ],
      [listRow('first page', (l) => l.first), listRow('deep page (cursor: the middle form)', (l) => l.deep)],
    ),
    '',
    `One account owning all the forms, seeded into the database directly (one transaction: ${fmt(small.forms)} in ${fmt(small.seedMs)} ms, ` +
      `${fmt(large.forms)} in ${fmt(large.seedMs / 1000, 1)} s), after ${LIST_WARMUP} warm-up requests per page; latency is the bench's fetch, keep-alive, one at a time.`,
  ]
}

/** An intake's first error and warning log lines, quoted as written (nothing when there are none). */
function quotedLog(f: IntakeFigures): string[] {
  if (f.logLines.length === 0) return []
  return [
    `First error and warning lines of ${f.label === 'intake' ? "intake's" : `${f.label}'s`} log, as written:`,
    '',
    '```',
    ...f.logLines,
    '```',
  ]
}

/** This build against BENCH_BASELINE, figure by figure. */
function renderBaseline(r: Report, b: BaselineFigures): string[] {
  const current = r.main.intakes[0]!
  const base = r.main.intakes[1]!
  const out: string[] = []
  const minute = (d: Date) => `${d.toISOString().replace('T', ' ').slice(0, 16)} UTC`
  out.push(`### SQLite: this build against the baseline, side by side`)
  out.push('')
  out.push(
    `Baseline: \`${b.binary}\`${b.commit ? ` (commit ${b.commit.length > 80 ? `${b.commit.slice(0, 77)}...` : b.commit})` : ''}, built ${minute(b.built)}, intake ${base.version}. ` +
      `This build: \`dist/intake\`, intake ${current.version}.`,
  )
  out.push('')
  /** A figure of both; `higher`: more is better (req/s), else less is (ms, MiB). */
  const row = (
    name: string,
    baseline: number,
    mine: number,
    show: (n: number) => string,
    higher: boolean,
    judged = true,
  ) => {
    const ratio = mine / baseline
    const worse = higher ? 1 - ratio : ratio - 1
    const verdict = !judged
      ? ''
      : !Number.isFinite(ratio)
        ? 'n/a'
        : `${worse <= BASELINE_TOLERANCE ? '✓' : '✗'} ${Math.abs(worse) < 0.005 ? 'same' : `${fmt(Math.abs(worse) * 100, 0)}% ${worse > 0 ? 'worse' : 'better'}`}`
    return [name, show(baseline), show(mine), fmt(ratio, 2), verdict]
  }
  const rate = (n: number) => `${fmt(n)} req/s`
  const mb = (kib: number) => `${fmt(mib(kib), 1)} MiB`
  const pooled = (runs: WebhookFigures[]) => runs.flatMap((w) => w.latencies).sort((x, y) => x - y)
  const hooksBase = pooled(b.webhooks)
  const hooksMine = pooled(b.thisWebhooks)
  const rows: string[][] = [
    ...r.main.routes.map((route) =>
      row(
        `\`${route}\``,
        base.results.get(route)!.requestsPerSecond,
        current.results.get(route)!.requestsPerSecond,
        rate,
        true,
      ),
    ),
    row(
      `webhooks: answer sent → first attempt arrived, p50 (${b.webhooks.length} runs each)`,
      percentile(hooksBase, 50),
      percentile(hooksMine, 50),
      ms,
      false,
    ),
    row(
      `webhooks: answer sent → first attempt arrived, p99 (${b.webhooks.length} runs each)`,
      percentile(hooksBase, 99),
      percentile(hooksMine, 99),
      ms,
      false,
    ),
    row(
      `spawn → first 200 on /healthz, median of ${b.startTimes.length}`,
      median(b.startTimes),
      median(r.startTimes),
      ms,
      false,
    ),
    row(
      `CPU (user + sys) of a start, spawn → exit after the first 200, median of ${b.startCpu.length}`,
      median(b.startCpu),
      median(r.startCpu),
      ms,
      false,
    ),
    row(`RSS idle (${IDLE_AFTER_MS} ms after the first 200)`, base.rssIdleKiB, current.rssIdleKiB, mb, false),
    row(
      "RSS idle, private part (RssAnon: heaps, not the executable's pages)",
      base.rssIdlePrivateKiB,
      current.rssIdlePrivateKiB,
      mb,
      false,
    ),
    row(
      `RSS after ${fmt(FORMS_FOR_RSS)}+ forms created over the API (${fmt(base.formsAtRss)} / ${fmt(current.formsAtRss)})`,
      base.rssAfterFormsKiB,
      current.rssAfterFormsKiB,
      mb,
      false,
    ),
    row(
      `RSS after the run (${fmt(base.formsCreated)} / ${fmt(current.formsCreated)} forms)`,
      base.rssAfterRunKiB,
      current.rssAfterRunKiB,
      mb,
      false,
    ),
    row('peak RSS (VmHWM)', base.peakKiB, current.peakKiB, mb, false, false),
    row('binary size', b.bytes / 2 ** 20, r.binaryBytes / 2 ** 20, (n) => `${fmt(n, 1)} MiB`, false, false),
  ]
  out.push(
    ...markdownTable(
      ['figure', 'baseline', 'this build', 'ratio (this build / baseline)', `within ${fmt(BASELINE_TOLERANCE * 100)}%`],
      rows,
    ),
  )
  out.push('')
  const latency = (route: string) => {
    const x = base.results.get(route)!
    const y = current.results.get(route)!
    return `\`${route}\` ${ms(x.p50Ms)} / ${ms(x.p99Ms)} → ${ms(y.p50Ms)} / ${ms(y.p99Ms)}`
  }
  out.push(
    `Same machine, same run, same wrk settings (-t${THREADS} -c${CONNECTIONS}, the same rounds and warm-ups), each intake on a database of its own, both running throughout; ` +
      `on each route the two ran one after the other, the order alternating from route to route (this build first on the 1st, 3rd and 5th). ` +
      `Starts took turns (A B B A...), webhooks ran A B B A (latencies pooled). "within ${fmt(BASELINE_TOLERANCE * 100)}%": this build at most ${fmt(BASELINE_TOLERANCE * 100)}% worse (fewer req/s; more ms or MiB). ` +
      `wrk p50 / p99, baseline → this build: ${r.main.routes.map(latency).join('; ')}.`,
  )
  out.push(
    `Baseline start times: ${b.startTimes.map((t) => fmt(t)).join(', ')} ms. Baseline's log: ${base.logSummary}.`,
  )
  out.push(...quotedLog(base))
  out.push('')
  return out
}

/** Intake on PostgreSQL: reads against the bare server, writes against PostgreSQL's own write limit. */
function renderPostgres(pg: PostgresFigures, sqlite: MainFigures): string[] {
  const intake = pg.main.intakes[0]!
  const writeLimit = (pg.writeLimits[0].rowsPerSecond + pg.writeLimits[1].rowsPerSecond) / 2
  const settings = pg.writeLimits[0].settings
  const out: string[] = []
  out.push(`### PostgreSQL: intake on PostgreSQL against the bare server and PostgreSQL's write limit`)
  out.push('')
  out.push(
    `PostgreSQL ${settings.server_version} at ${pg.server}, a fresh database (${pg.database}, dropped after): synchronous_commit ${settings.synchronous_commit}, fsync ${settings.fsync}, ` +
      `wal_sync_method ${settings.wal_sync_method}, commit_delay ${settings.commit_delay}. ` +
      `dist/intake with SERVICE_DATABASE_URL (no --db), the same wrk runs as above (wrk -t${THREADS} -c${CONNECTIONS} --latency, the same rounds and warm-ups), ` +
      `after the SQLite runs; ${fmt(pg.seconds)} s in all.`,
  )
  out.push('')
  const writeTarget = `≥ ${fmt(TARGET.pgWriteRatio, 1)} × PostgreSQL write limit (${fmt(writeLimit)}/s)`
  const errors = (w: WrkResult) =>
    fmt(
      w.badStatus +
        w.exhausted +
        w.socketErrors.connect +
        w.socketErrors.read +
        w.socketErrors.write +
        w.socketErrors.timeout,
    )
  const rows = pairsOf(pg.main).map((p) => {
    const onSqlite = sqlite.intakes[0]!.results.get(p.route)
    const write = p.route.startsWith('POST')
    const limit = write ? writeLimit : p.bare.requestsPerSecond
    const ratio = p.intake.requestsPerSecond / limit
    const need = write ? TARGET.pgWriteRatio : TARGET.pgReadRatio
    return [
      `\`${p.route}\``,
      fmt(p.intake.requestsPerSecond),
      onSqlite ? fmt(onSqlite.requestsPerSecond) : 'n/a',
      `${fmt(limit)}${write ? ' rows/s (PostgreSQL)' : ' (bare)'}`,
      fmt(ratio, 2),
      ms(p.intake.p50Ms),
      ms(p.intake.p99Ms),
      `${errors(p.intake)} / ${errors(p.bare)}`,
      write ? writeTarget : `≥ ${TARGET.pgReadRatio} × bare`,
      `${fmt(ratio, 2)} × ${mark(ratio >= need)}`,
    ]
  })
  out.push(
    ...markdownTable(
      [
        'route',
        'intake on PostgreSQL req/s',
        'intake on SQLite req/s (above)',
        'limit',
        'ratio',
        'p50',
        'p99',
        'failed (intake / bare)',
        'target',
        'result',
      ],
      rows,
    ),
  )
  out.push('')
  out.push(
    `"bare" is bench/bare-server.ts answering the bytes intake on PostgreSQL answered (reads: ${pairsOf(pg.main)
      .filter((p) => p.route.startsWith('GET'))
      .map((p) => `\`${p.route}\` ${fmt(p.bare.requestsPerSecond)} req/s`)
      .join(', ')}; writes: ${pairsOf(pg.main)
      .filter((p) => p.route.startsWith('POST'))
      .map((p) => `${fmt(p.bare.requestsPerSecond)}`)
      .join(', ')} req/s).`,
  )
  for (const p of pairsOf(pg.main)) if (p.note) out.push(`\`${p.route}\`: ${p.note}.`)
  out.push(
    `No top-up to ${fmt(FORMS_FOR_RSS)} forms here (it serves the RSS figure, measured on SQLite): the submissions answered forms created over the API for them, ${fmt(intake.formsCreated)} forms in all by the end.`,
  )
  out.push(`intake's log: ${intake.logSummary}.`)
  out.push(...quotedLog(intake))
  out.push('')
  const writeRow = (when: string, w: PgWriteLimit) => [
    when,
    `${fmt(w.rowsPerSecond)} rows/s (${fmt(w.rows)} rows in ${fmt(w.ms)} ms, ${w.connections} connections)`,
  ]
  out.push(
    ...markdownTable(
      ['measure', 'value'],
      [
        writeRow('PostgreSQL write limit before the HTTP runs', pg.writeLimits[0]),
        writeRow('PostgreSQL write limit after the HTTP runs', pg.writeLimits[1]),
        ['write limit (mean): the target for creates and submissions', `${fmt(writeLimit)} rows/s`],
        ...pg.answerLimits.map((a) => [
          `answer limit, ${a.perTransaction} answer${a.perTransaction === 1 ? '' : 's'} per transaction (context, not a target)`,
          `${fmt(a.answersPerSecond)} answers/s (${fmt(a.answers)} in ${fmt(a.ms)} ms, ${fmt(a.walBytesPerAnswer)} WAL bytes each)`,
        ]),
        [`RSS idle (${IDLE_AFTER_MS} ms after the first 200)`, `${fmt(mib(intake.rssIdleKiB), 1)} MiB`],
        [`RSS after the run (${fmt(intake.formsCreated)} forms)`, `${fmt(mib(intake.rssAfterRunKiB), 1)} MiB`],
        ['peak RSS (VmHWM)', `${fmt(mib(intake.peakKiB), 1)} MiB`],
      ],
    ),
  )
  out.push('')
  out.push(
    `bench/pg-write-limit.ts in its own process, on a database of its own on the same cluster: a plain Bun.SQL loop, one INSERT of a form-sized row per transaction ` +
      `(BEGIN, INSERT, COMMIT), ${PG_WRITERS} connections committing at once (PostgreSQL, unlike SQLite, commits in parallel), synchronous_commit on, ${WRITE_LIMIT_S} s; intake stopped meanwhile. ` +
      `The cluster shares this machine's cores and disk with intake and wrk. ` +
      `The answer limit is bench/pg-answer-limit.ts, likewise alone: on intake's schema (its migrations, indexes and foreign keys), each answer the UPDATE of an active form to completed ` +
      `and the INSERT of its response, as intake's submission unit writes them, ${PG_WRITERS} connections; one answer per transaction, and ${ANSWERS_PER_BATCH} (what group commit makes of them).`,
  )
  out.push('')
  out.push(
    `List page on PostgreSQL: \`GET /api/v1/forms?limit=${LIST_LIMIT}\`, ${fmt(LIST_REQUESTS)} sequential requests, as for SQLite, each list on a fresh database:`,
  )
  out.push('')
  out.push(...listTable(pg.lists))
  out.push('')
  return out
}

const CHANGES_DEFAULT = [
  '## Changes',
  '',
  'Record before/after figures of a change here (this section is kept as it is by `bun run bench`).',
  '',
].join('\n')

function writeResults(latest: string[]): void {
  let changes = CHANGES_DEFAULT
  if (existsSync(RESULTS)) {
    const text = readFileSync(RESULTS, 'utf8')
    const at = text.search(/^## Changes\s*$/m)
    if (at >= 0) changes = text.slice(at)
  }
  const head = [
    '# Benchmark results',
    '',
    'Written by `bun run bench` (bench/run.ts). "Latest run" is replaced on every run; "Changes" is kept.',
    '',
    '## Latest run',
    '',
  ]
  writeFileSync(RESULTS, [...head, ...latest, changes.endsWith('\n') ? changes : `${changes}\n`].join('\n'))
}

// ---------------------------------------------------------------------------
// The run

async function run(state: BenchState): Promise<number> {
  if (!wrkPresent() || !binaryPresent()) return 1
  if (BASELINE !== undefined && !existsSync(BASELINE)) {
    console.error(`BENCH_BASELINE=${BASELINE}: no such file. Build one with:\n\n  bench/baseline.sh <git revision>\n`)
    return 1
  }
  const startedAt = new Date()
  const t0 = performance.now()
  const machine = machineLine()
  const loadBefore = loadAverage()
  const binary = statSync(BINARY)
  const binaryBytes = binary.size
  const source = sourceLine()
  const scratch = makeTempDir(state, 'scratch')
  const fileSystem = fileSystemOf(scratch)
  log(`intake bench: ${machine}; temp dirs on ${fileSystem}; load ${loadBefore}`)
  log(`dist/intake built ${binary.mtime.toISOString()} (the run uses a copy taken now); ${source}`)
  log(
    `wrk -t${THREADS} -c${CONNECTIONS} -d${DURATION_S}s; list pages at ${fmt(LIST_SMALL)} and ${fmt(LIST_LARGE)} forms`,
  )
  // The copy the whole run uses (see intakeBinary).
  intakeBinary = join(makeTempDir(state, 'binary'), 'intake')
  copyFileSync(BINARY, intakeBinary)
  chmodSync(intakeBinary, 0o755)
  const flavors: Flavor[] = [{ label: 'intake', tag: 'main', binary: intakeBinary }]
  let baselineFile: { binary: string; commit: string | undefined; built: Date; bytes: number } | undefined
  if (BASELINE !== undefined) {
    const stat = statSync(BASELINE)
    const noteFile = join(dirname(BASELINE), 'commit')
    const commit = existsSync(noteFile) ? readFileSync(noteFile, 'utf8').trim() || undefined : undefined
    baselineFile = { binary: BASELINE, commit, built: stat.mtime, bytes: stat.size }
    // A copy taken now, as of dist/intake: a file just written sits in the page cache as the other does, so
    // the two map their executables' pages alike (RSS counts them; an older file measured 5 MiB less).
    const baselineBinary = join(makeTempDir(state, 'baseline-binary'), 'intake')
    copyFileSync(BASELINE, baselineBinary)
    chmodSync(baselineBinary, 0o755)
    flavors.push({ label: 'baseline', tag: 'baseline', binary: baselineBinary })
    log(
      `baseline (BENCH_BASELINE): ${BASELINE}${commit ? `, commit ${commit}` : ''}, built ${stat.mtime.toISOString()} (the run uses a copy taken now)`,
    )
  }
  if (DATABASE_URL !== undefined)
    log(
      `PostgreSQL (BENCH_DATABASE_URL): ${redactUrl(DATABASE_URL)}, server ${await checkDatabaseServer(DATABASE_URL)}`,
    )
  log('')

  const writeBefore = await measureWriteLimit(state, scratch, 'before the HTTP runs')
  removeTempDir(state, scratch)
  const starts = await measureStartTimes(state, flavors)
  const main = await measureMain(state, flavors)
  const scratchAfter = makeTempDir(state, 'scratch')
  const writeAfter = await measureWriteLimit(state, scratchAfter, 'after them')
  removeTempDir(state, scratchAfter)
  // With a baseline: two runs each, A B B A.
  const webhookRuns = flavors.map((): WebhookFigures[] => [])
  const rounds = flavors.length > 1 ? 2 : 1
  for (let i = 0; i < rounds; i++) {
    for (const k of turn(flavors.length, i)) {
      const flavor = flavors[k]!
      log(`webhooks (bench/webhooks.ts)${flavors.length > 1 ? `, ${flavor.label}, run ${i + 1} of ${rounds}` : ''}...`)
      const figures = await measureWebhooks(state, { binary: flavor.binary })
      problems.push(...figures.problems.map((p) => `webhooks${k > 0 ? ` (${flavor.label})` : ''}: ${p}`))
      webhookRuns[k]!.push(figures)
    }
  }
  const webhooks = webhookRuns[0]![0]!
  log('event feed (bench/events.ts)...')
  const events = await measureEvents(state, { binary: intakeBinary, databaseUrl: DATABASE_URL })
  problems.push(...events.problems.map((p) => `event feed: ${p}`))
  const lists: [ListFigures, ListFigures] = [await measureList(state, LIST_SMALL), await measureList(state, LIST_LARGE)]
  const postgres = DATABASE_URL !== undefined ? await measurePostgres(state, DATABASE_URL) : undefined
  const instances =
    DATABASE_URL !== undefined ? await measureInstances(state, DATABASE_URL, { binary: intakeBinary }) : undefined
  if (instances) problems.push(...instances.problems.map((p) => `several instances: ${p}`))
  else log(INSTANCES_SKIPPED)

  const report = render({
    startedAt,
    seconds: (performance.now() - t0) / 1000,
    source,
    binaryBuilt: binary.mtime,
    machine,
    fileSystem,
    loadBefore,
    loadAfter: loadAverage(),
    binaryBytes,
    writeLimits: [writeBefore, writeAfter],
    startTimes: starts[0]!.times,
    startCpu: starts[0]!.cpu,
    main,
    webhooks,
    events,
    lists,
    baseline: baselineFile && {
      ...baselineFile,
      startTimes: starts[1]!.times,
      startCpu: starts[1]!.cpu,
      webhooks: webhookRuns[1]!,
      thisWebhooks: webhookRuns[0]!,
    },
    postgres,
    instances,
  })
  log('')
  for (const line of report) log(line)
  writeResults(report)
  log(`Written to ${RESULTS}.`)
  if (problems.length > 0) {
    console.error(`\n${problems.length} problem(s): the run is not valid (see above).`)
    return 1
  }
  return 0
}

await runBench(run)
