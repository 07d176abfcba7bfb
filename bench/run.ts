/**
 * The main benchmark: intake against the limits of this machine, in one run.
 *
 *   bun run build && bun run bench
 *
 * It never builds: it runs dist/intake as `bun run build` left it, on fresh
 * databases in temp dirs, on 127.0.0.1 only, with rate limits off. Steps:
 *   1. the disk's write limit: bench/write-limit.ts, a plain bun:sqlite loop
 *      committing one row per transaction with intake's pragmas (WAL,
 *      synchronous=FULL), ~3 s, in a process of its own: rows per second;
 *   2. start to first 200: spawn intake on a fresh temp dir and poll
 *      GET /healthz over a fresh connection each time, as fast as possible;
 *      10 times, median and max;
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
 *      arrived, 500 answers, 16 in flight;
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
 */
import { Database } from 'bun:sqlite'
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { monotonicFactory } from 'ulidx'
import type { CapturedResponse, CapturedResponses } from './bare-server.ts'
import {
  BINARY,
  BenchError,
  PROJECT_ROOT,
  alive,
  binaryPresent,
  fmt,
  intakeEnv,
  log,
  machineLine,
  makeTempDir,
  markdownTable,
  peakRssKiB,
  percentile,
  printedKey,
  removeTempDir,
  rssKiB,
  runBench,
  sleep,
  startIntake,
  stopIntake,
  track,
  whenReady,
  type BenchState,
  type Child,
} from './lib.ts'
import { FORMS as WEBHOOK_FORMS, SUBMIT_CONCURRENCY as WEBHOOK_CONCURRENCY, TARGET_P50_MS, TARGET_P99_MS, measureWebhooks, type WebhookFigures } from './webhooks.ts'
import { runWrk, wrkPresent, writePerFormScript, writeStaticScript, type WrkResult } from './wrk.ts'

// ---------------------------------------------------------------------------
// Settings

function envNumber(name: string, fallback: number, unit = ''): number {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  const n = Number(unit ? raw.trim().replace(new RegExp(`${unit}$`), '') : raw.trim())
  if (!Number.isInteger(n) || n < 1) throw new BenchError(`${name}=${raw}: expected a whole number${unit ? ` (of seconds, "${unit}" optional)` : ''} >= 1`)
  return n
}

/** Seconds per wrk run, the same for intake and the bare server. */
const DURATION_S = envNumber('BENCH_DURATION', 10, 's')
/** wrk connections (and threads: two, as this machine's cores), the same for intake and the bare server. */
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 32)
const THREADS = Math.min(2, CONNECTIONS)
/** A short wrk run before each measured one, on each server (JIT, caches, connections). */
const WARMUP_S = Math.min(2, DURATION_S)
const SUBMIT_WARMUP_S = 1
/** Forms created through the API before "RSS after 100,000 forms". */
const FORMS_FOR_RSS = 100_000
const WRITE_LIMIT_S = 3
const START_REPEATS = 10
/** RSS "idle" is read this long after the first 200. */
const IDLE_AFTER_MS = 500
const LIST_SMALL = 1_000
const LIST_LARGE = envNumber('BENCH_LIST_FORMS', 1_000_000)
const LIST_REQUESTS = 2_000
const LIST_WARMUP = 200
const LIST_LIMIT = 20

const TARGET = {
  apiGetRatio: 0.5,
  pageRatio: 0.4,
  /** Creates and submissions per second, as a multiple of the disk's write limit. */
  writeRatio: 1.0,
  startMs: 150,
  rssIdleMiB: 60,
  rssFormsMiB: 150,
  listRatio: 1.5,
}

const RESULTS = join(import.meta.dir, 'results.md')

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
    { key: 'menu', type: 'select', label: 'Menu', config: { options: ['fish', { value: 'veg', label: 'Vegetarian' }] } },
    { key: 'agree', type: 'checkbox', label: 'I can come on Friday', required: true },
  ],
  context: { thread: 'T-1234' },
  expires_in: '24h',
}
const CREATE_BODY = JSON.stringify(FORM)
/** The answer as a custom front end sends it (JSON, 201) and as the page's form posts it (303). */
const ANSWER_JSON = JSON.stringify({ name: 'Ada Lovelace', email: 'ada@example.com', guests: 2, menu: 'veg', agree: true })
const ANSWER_FORM = new URLSearchParams({ name: 'Ada Lovelace', email: 'ada@example.com', guests: '2', menu: 'veg', agree: 'true' }).toString()
const JSON_TYPE = 'application/json'
const FORM_TYPE = 'application/x-www-form-urlencoded'

// ---------------------------------------------------------------------------
// Small helpers

const mib = (kib: number) => kib / 1024
const ms = (n: number) => (Number.isFinite(n) ? `${fmt(n, n < 10 ? 2 : 1)} ms` : 'n/a')
const mark = (pass: boolean) => (pass ? '✓ pass' : '✗ miss')
const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50)

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
const formsInserted = (dbPath: string) => lookAt(dbPath, (db) => (db.query('SELECT max(rowid) AS n FROM forms').get() as { n: number | null }).n ?? 0)

/** Active forms (so not yet answered), oldest first. */
const unansweredForms = (dbPath: string) =>
  lookAt(dbPath, (db) => (db.query(`SELECT id FROM forms WHERE status = 'active' ORDER BY id`).all() as { id: string }[]).map((r) => r.id))

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
  const git = (...args: string[]) => Bun.spawnSync(['git', '-C', PROJECT_ROOT, ...args], { stdout: 'pipe', stderr: 'ignore' }).stdout.toString().trim()
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

interface WriteLimit {
  rows: number
  ms: number
  rowsPerSecond: number
}

async function measureWriteLimit(state: BenchState, dir: string, when: string): Promise<WriteLimit> {
  log(`write limit (${when}): one row per transaction, WAL, synchronous=FULL, ${WRITE_LIMIT_S} s...`)
  const proc = track(
    state,
    Bun.spawn([process.execPath, join(import.meta.dir, 'write-limit.ts'), join(dir, 'write-limit.db'), String(WRITE_LIMIT_S)], {
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    }),
  )
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (proc.exitCode !== 0) throw new BenchError(`bench/write-limit.ts failed (${proc.exitCode}): ${err.trim()}`)
  const result = JSON.parse(out.trim().split('\n').at(-1)!) as WriteLimit
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

async function measureStartTimes(state: BenchState): Promise<number[]> {
  log(`start to first 200: ${START_REPEATS} starts on fresh temp dirs...`)
  const times: number[] = []
  for (let i = 0; i < START_REPEATS; i++) {
    const dir = makeTempDir(state, 'start')
    const port = freePort()
    const t0 = performance.now()
    const child = startIntake(state, dir, {}, { port, logToFile: true })
    for (;;) {
      if ((await healthStatus(port)) === 200) break
      if (!alive(child)) throw new BenchError(`intake exited (code ${child.proc.exitCode}) before answering /healthz: ${child.err.tail.trim()}`)
      if (performance.now() - t0 > 15_000) throw new BenchError('intake did not answer /healthz with 200 within 15 s of its start')
    }
    times.push(performance.now() - t0)
    const stopped = await stopIntake(child)
    if (stopped.code !== 0) problems.push(`start ${i + 1}: intake exited with code ${stopped.code} on SIGTERM`)
    removeTempDir(state, dir)
  }
  log(`  ${times.map((t) => fmt(t)).join(', ')} ms`)
  return times
}

// ---------------------------------------------------------------------------
// 3. The main intake and the bare server under wrk

interface Pair {
  route: string
  intake: WrkResult
  bare: WrkResult
  /** What the intake run changed in the database: rows added, and wrk's count of good answers. */
  note?: string
}

interface MainFigures {
  version: string
  rssIdleKiB: number
  rssAfterFormsKiB: number
  formsAtRss: number
  rssAfterRunKiB: number
  peakKiB: number
  pairs: Pair[]
  formsCreated: number
  logSummary: string
}

/** Reads the bare server's listening line. */
async function startBare(state: BenchState, responsesFile: string): Promise<{ url: string; port: number; stop: () => Promise<unknown> }> {
  const proc = track(
    state,
    Bun.spawn([process.execPath, join(import.meta.dir, 'bare-server.ts'), responsesFile], { stdin: 'ignore', stdout: 'pipe', stderr: 'inherit' }),
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

async function measureMain(state: BenchState): Promise<MainFigures> {
  const dir = makeTempDir(state, 'main')
  const dbPath = join(dir, 'intake.db')
  const child = startIntake(state, dir, {}, { logToFile: true })
  const pid = child.proc.pid
  const { url, port, key, version } = await whenReady(child)
  await sleep(IDLE_AFTER_MS)
  const rssIdleKiB = rssKiB(pid)
  log(`intake ${version} (pid ${pid}) on ${url}, database in ${dir}; RSS idle ${fmt(mib(rssIdleKiB), 1)} MiB`)
  const auth = { Authorization: `Bearer ${key}` }
  const ensureAlive = (during: string) => {
    if (alive(child)) return
    // Its last lines other than request lines say why (e.g. "shutting down" and the signal it got).
    const last = child.out.tail
      .split('\n')
      .slice(1) // the first may be cut
      .filter((line) => line.trim() && !line.includes('"msg":"request"'))
      .slice(-5)
      .join('\n')
    throw new BenchError(`intake exited during ${during} (code ${child.proc.exitCode}, signal ${child.proc.signalCode}); its last lines other than requests:\n${last}`)
  }

  // One real answer per route, as wrk will get it.
  const expect = (what: string, res: CapturedResponse, status: number) => {
    if (res.status !== status) throw new BenchError(`${what}: expected ${status}, intake answered ${res.status} ${res.body.slice(0, 300)}`)
    return res
  }
  const createOne = async () => {
    const res = expect('POST /api/v1/forms', await rawRequest(port, 'POST', '/api/v1/forms', { ...auth, 'Content-Type': JSON_TYPE }, CREATE_BODY), 201)
    return { res, id: (JSON.parse(res.body) as { id: string }).id }
  }
  const created = await createOne()
  const formId = created.id
  const jsonTarget = (await createOne()).id
  const formTarget = (await createOne()).id
  const captured: CapturedResponses = {
    create: created.res,
    apiForm: expect('GET /api/v1/forms/<id>', await rawRequest(port, 'GET', `/api/v1/forms/${formId}`, auth), 200),
    page: expect('GET /f/<id>', await rawRequest(port, 'GET', `/f/${formId}`), 200),
    submitJson: expect('POST /f/<id> (JSON)', await rawRequest(port, 'POST', `/f/${jsonTarget}`, { 'Content-Type': JSON_TYPE }, ANSWER_JSON), 201),
    submitForm: expect('POST /f/<id> (form post)', await rawRequest(port, 'POST', `/f/${formTarget}`, { 'Content-Type': FORM_TYPE }, ANSWER_FORM), 303),
  }
  const responsesFile = join(dir, 'responses.json')
  writeFileSync(responsesFile, JSON.stringify(captured))
  const bare = await startBare(state, responsesFile)
  log(`bare server on ${bare.url}, answering the captured bytes of each route`)

  // The bare server must answer what intake answered.
  const checks: [keyof CapturedResponses, CapturedResponse][] = [
    ['create', await rawRequest(bare.port, 'POST', '/api/v1/forms', { ...auth, 'Content-Type': JSON_TYPE }, CREATE_BODY)],
    ['apiForm', await rawRequest(bare.port, 'GET', `/api/v1/forms/${formId}`, auth)],
    ['page', await rawRequest(bare.port, 'GET', `/f/${formId}`)],
    ['submitJson', await rawRequest(bare.port, 'POST', `/f/${jsonTarget}`, { 'Content-Type': JSON_TYPE }, ANSWER_JSON)],
    ['submitForm', await rawRequest(bare.port, 'POST', `/f/${formTarget}`, { 'Content-Type': FORM_TYPE }, ANSWER_FORM)],
  ]
  const headerNames = (r: CapturedResponse) =>
    r.headers
      .map(([n]) => n.toLowerCase())
      .filter((n) => n !== 'date' && n !== 'connection')
      .sort()
      .join(',')
  for (const [name, got] of checks) {
    const want = captured[name]
    if (got.status !== want.status || got.body !== want.body || headerNames(got) !== headerNames(want)) {
      throw new BenchError(`the bare server's ${name} answer differs from intake's: ${got.status} [${headerNames(got)}] vs ${want.status} [${headerNames(want)}]`)
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
    if (r.exhausted > 0) problems.push(`${route} (${server}): ${fmt(r.exhausted)} requests found no unanswered form left (too few forms made)`)
    if (sockets > 0) problems.push(`${route} (${server}): socket errors ${JSON.stringify(r.socketErrors)}`)
  }
  /** Warm-up then a measured run on intake, then the same on the bare server. */
  async function pair(route: string, path: string, options: { script?: string; headers?: Record<string, string>; warmupS: number }): Promise<Pair> {
    const results: WrkResult[] = []
    for (const [server, origin] of [
      ['intake', url],
      ['bare', bare.url],
    ] as const) {
      const run = { ...base, url: `${origin}${path}`, script: options.script, headers: options.headers }
      if (options.warmupS > 0) await runWrk(state, { ...run, seconds: options.warmupS })
      const r = await runWrk(state, { ...run, seconds: DURATION_S })
      if (server === 'intake') ensureAlive(route)
      check(route, server, r)
      log(`  ${route}, ${server}: ${short(r)}`)
      results.push(r)
    }
    return { route, intake: results[0]!, bare: results[1]! }
  }
  const pairs: Pair[] = []
  const runLabel = `wrk -t${THREADS} -c${CONNECTIONS} -d${DURATION_S}s after a ${WARMUP_S} s warm-up`

  // GETs.
  log(`GET /api/v1/forms/<id> (${runLabel}, intake then bare)...`)
  pairs.push(await pair('GET /api/v1/forms/<id>', `/api/v1/forms/${formId}`, { headers: auth, warmupS: WARMUP_S }))
  log(`GET /f/<id> (${runLabel})...`)
  pairs.push(await pair('GET /f/<id>', `/f/${formId}`, { warmupS: WARMUP_S }))

  // Creates: the same body every time.
  const createScript = writeStaticScript(dir, 'create', 'POST', { ...auth, 'Content-Type': JSON_TYPE }, CREATE_BODY)
  log(`POST /api/v1/forms (${runLabel})...`)
  const formsBefore = countRows(dbPath, 'forms')
  const createPair = await pair('POST /api/v1/forms', '/api/v1/forms', { script: createScript, warmupS: WARMUP_S })
  const formsAfter = countRows(dbPath, 'forms')
  createPair.note = `${fmt(formsAfter - formsBefore)} forms written (warm-up included)`
  pairs.push(createPair)
  const createRate = Math.max(100, createPair.intake.requestsPerSecond)

  /** Creates forms over the API (wrk, same script) until the database holds `total`: wrk is stopped once it does. */
  async function topUp(total: number, why: string) {
    for (;;) {
      const have = countRows(dbPath, 'forms')
      if (have >= total) return
      const seconds = Math.min(300, Math.max(2, Math.ceil(((total - have) / createRate) * 2)))
      log(`  ${fmt(have)} forms: creating ${fmt(total - have)} more over the API (${why})...`)
      const r = await runWrk(state, { ...base, url: `${url}/api/v1/forms`, script: createScript, seconds }, () => formsInserted(dbPath) >= total)
      ensureAlive('the top-up of forms')
      check('POST /api/v1/forms (top-up)', 'intake', r)
      log(`  top-up: ${short(r)} for ${fmt(r.seconds, 1)} s`)
    }
  }
  await topUp(FORMS_FOR_RSS, `to ${fmt(FORMS_FOR_RSS)}`)
  await sleep(IDLE_AFTER_MS)
  const formsAtRss = countRows(dbPath, 'forms')
  const rssAfterFormsKiB = rssKiB(pid)
  log(`  ${fmt(formsAtRss)} forms created over the API; intake RSS ${fmt(mib(rssAfterFormsKiB), 1)} MiB`)

  // Submissions: every request answers another form, never answered before.
  async function submissions(route: string, name: string, contentType: string, body: string): Promise<Pair> {
    const headers = { 'Content-Type': contentType }
    /** The per-form script for intake, and the same ids going round for the bare server (which answers no form). */
    const script = (ids: string[], tag: string) => {
      const idsFile = join(dir, `${name}-${tag}.ids`)
      writeFileSync(idsFile, ids.join('\n') + '\n')
      return {
        intake: writePerFormScript(dir, `${name}-${tag}`, idsFile, THREADS, headers, body),
        bare: writePerFormScript(dir, `${name}-${tag}-bare`, idsFile, THREADS, headers, body, true),
      }
    }
    log(`${route} (${runLabel.replace(`${WARMUP_S} s`, `${SUBMIT_WARMUP_S} s`)}, each form answered once)...`)
    // Warm-up on each server; intake's tells how many forms the measured run may answer.
    // Enough for three times the create rate (wrk counts what is left over, should that be too few).
    const warmIds = unansweredForms(dbPath).slice(0, Math.ceil(Math.max(createRate, 5000) * SUBMIT_WARMUP_S * 3))
    const warmScript = script(warmIds, 'warmup')
    const warm = await runWrk(state, { ...base, url, script: warmScript.intake, seconds: SUBMIT_WARMUP_S })
    ensureAlive(`${route} warm-up`)
    check(`${route} warm-up`, 'intake', warm)
    await runWrk(state, { ...base, url: bare.url, script: warmScript.bare, seconds: SUBMIT_WARMUP_S })
    const rate = Math.max(warm.requestsPerSecond, createRate)
    const needed = Math.ceil(rate * DURATION_S * 1.3) + 100 * CONNECTIONS
    const left = unansweredForms(dbPath).length
    if (left < needed) await topUp(countRows(dbPath, 'forms') + (needed - left), `for ${route}`)

    const ids = unansweredForms(dbPath)
    const runScript = script(ids, 'run')
    const responsesBefore = countRows(dbPath, 'responses')
    const intakeRun = await runWrk(state, { ...base, url, script: runScript.intake, seconds: DURATION_S })
    ensureAlive(route)
    const written = countRows(dbPath, 'responses') - responsesBefore
    check(route, 'intake', intakeRun)
    log(`  ${route}, intake: ${short(intakeRun)} (${fmt(ids.length)} forms were ready, ${fmt(written)} responses written)`)
    const answered = intakeRun.requests - intakeRun.badStatus
    if (written < answered) problems.push(`${route}: wrk counted ${fmt(answered)} good answers but only ${fmt(written)} responses were written`)
    const bareRun = await runWrk(state, { ...base, url: bare.url, script: runScript.bare, seconds: DURATION_S })
    check(route, 'bare', bareRun)
    log(`  ${route}, bare: ${short(bareRun)}`)
    return { route, intake: intakeRun, bare: bareRun, note: `${fmt(written)} responses written` }
  }
  pairs.push(await submissions('POST /f/<id> (JSON, 201)', 'submit-json', JSON_TYPE, ANSWER_JSON))
  pairs.push(await submissions('POST /f/<id> (form post, 303)', 'submit-form', FORM_TYPE, ANSWER_FORM))

  await sleep(IDLE_AFTER_MS)
  const rssAfterRunKiB = rssKiB(pid)
  const peakKiB = peakRssKiB(pid)
  const formsCreated = countRows(dbPath, 'forms')
  const stopped = await stopIntake(child)
  await bare.stop()
  if (stopped.code !== 0) problems.push(`main intake exited with code ${stopped.code} on SIGTERM`)
  const logSummary = summarizeLog(join(dir, 'intake.stdout.log'), child)
  log(`  intake stopped in ${fmt(stopped.ms)} ms; its log: ${logSummary}`)
  removeTempDir(state, dir)
  return { version, rssIdleKiB, rssAfterFormsKiB, formsAtRss, rssAfterRunKiB, peakKiB, pairs, formsCreated, logSummary }
}

/** Statuses intake logged (one JSON line per request) and any error line, counted with grep. */
function summarizeLog(file: string, child: Child): string {
  const sh = (command: string) => Bun.spawnSync(['sh', '-c', command], { stdout: 'pipe', stderr: 'ignore', env: { ...process.env, LC_ALL: 'C', FILE: file } }).stdout.toString()
  const statuses = sh(`grep -o '"status":[0-9]*' "$FILE" | sort | uniq -c`)
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [count, status] = line.trim().split(/\s+"status":/)
      return { status: Number(status), count: Number(count) }
    })
  const errors = Number(sh(`grep -c '"level":"error"' "$FILE"`).trim() || 0)
  const stderrLines = child.err.tail.trim()
  for (const { status, count } of statuses) {
    if (status >= 400) problems.push(`intake logged ${fmt(count)} responses with status ${status}`)
  }
  if (errors > 0) problems.push(`intake logged ${fmt(errors)} error lines`)
  if (stderrLines) problems.push(`intake wrote to stderr: ${stderrLines.slice(-300)}`)
  const total = statuses.reduce((sum, s) => sum + s.count, 0)
  return `${fmt(total)} requests logged (${statuses.map((s) => `${s.status} × ${fmt(s.count)}`).join(', ') || 'no status found'}), ${fmt(errors)} error lines`
}

// ---------------------------------------------------------------------------
// 5. List pages on seeded databases

interface ListFigures {
  forms: number
  seedMs: number
  first: number[]
  deep: number[]
}

/** A key for account "bench", made by dist/intake itself (which also creates the schema). */
function createKey(dbPath: string): string {
  const out = Bun.spawnSync([BINARY, 'keys', 'create', '--account', 'bench', '--db', dbPath], { stdout: 'pipe', stderr: 'pipe', env: intakeEnv() })
  const key = printedKey(out.stdout.toString())
  if (out.exitCode !== 0 || !key) throw new BenchError(`intake keys create failed (${out.exitCode}): ${out.stderr.toString().trim() || out.stdout.toString().trim()}`)
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
        insert.run(id, account.id, `${FORM.title} ${i + 1}`, FORM.description, fields, FORM.fields.length, context, createdAt + 24 * 3_600_000, createdAt, createdAt)
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

async function measureList(state: BenchState, forms: number): Promise<ListFigures> {
  const dir = makeTempDir(state, 'list')
  const dbPath = join(dir, 'intake.db')
  const key = createKey(dbPath)
  log(`list page, ${fmt(forms)} forms: seeding ${dbPath}...`)
  const seedStart = performance.now()
  const middle = await seedForms(dbPath, forms)
  const seedMs = performance.now() - seedStart
  log(`  seeded ${fmt(forms)} forms in ${fmt(seedMs)} ms`)

  const child = startIntake(state, dir, {}, { logToFile: true })
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
    if (res.status !== 200 || !Array.isArray(list) || list.length !== LIST_LIMIT || list[0]?.title !== `${FORM.title} ${firstIndex + 1}` || !res.headers.get('link')) {
      throw new BenchError(`list ${name} of ${fmt(forms)} forms: ${res.status}, ${Array.isArray(list) ? list.length : '?'} forms, first "${list[0]?.title}", link ${res.headers.get('link')}`)
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
  log(`  first page p50 ${ms(percentile(first, 50))} p99 ${ms(percentile(first, 99))}; deep page p50 ${ms(percentile(deep, 50))} p99 ${ms(percentile(deep, 99))}`)
  if (!alive(child)) throw new BenchError(`intake exited during the list pages (code ${child.proc.exitCode})`)
  const stopped = await stopIntake(child)
  if (stopped.code !== 0) problems.push(`list intake (${fmt(forms)} forms) exited with code ${stopped.code} on SIGTERM`)
  removeTempDir(state, dir)
  return { forms, seedMs, first, deep }
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
  main: MainFigures
  webhooks: WebhookFigures
  lists: [ListFigures, ListFigures]
}

function render(r: Report): string[] {
  const { main, webhooks } = r
  const writeLimit = (r.writeLimits[0].rowsPerSecond + r.writeLimits[1].rowsPerSecond) / 2
  const out: string[] = []
  const minute = (d: Date) => `${d.toISOString().replace('T', ' ').slice(0, 16)} UTC`
  out.push(`Run ${minute(r.startedAt)}, ${fmt(r.seconds)} s, intake ${main.version}: \`dist/intake\` built ${minute(r.binaryBuilt)}; ${r.source}.`)
  out.push('')
  out.push(`Machine: ${r.machine}. Temp dirs on ${r.fileSystem}. Load average before / after: ${r.loadBefore} / ${r.loadAfter}.`)
  out.push('')

  // HTTP.
  out.push(`### HTTP: intake against a bare Bun.serve answering the same bytes`)
  out.push('')
  out.push(
    `wrk -t${THREADS} -c${CONNECTIONS} -d${DURATION_S}s --latency on each, after a warm-up run (${WARMUP_S} s; ${SUBMIT_WARMUP_S} s for submissions). ` +
      `Rate limits off; intake logs each request to a file.`,
  )
  out.push('')
  const writeTarget = `≥ ${fmt(TARGET.writeRatio, 1)} × write limit (${fmt(writeLimit)}/s)`
  const rows = main.pairs.map((p) => {
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
    const errors = (w: WrkResult) => fmt(w.badStatus + w.exhausted + w.socketErrors.connect + w.socketErrors.read + w.socketErrors.write + w.socketErrors.timeout)
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
    ...markdownTable(['route', 'intake req/s', 'limit req/s', 'ratio', 'intake p50', 'intake p99', 'limit p50', 'limit p99', 'failed (intake / limit)', 'target', 'result'], rows),
  )
  out.push('')
  out.push(
    '"limit" is bench/bare-server.ts: Bun.serve in its own process answering the status, headers and body intake answered for that route, doing no work. ' +
      '"failed" counts status > 399, socket errors and requests that found no unanswered form left. ' +
      'Each submission answers a different form, created over the API beforehand and never answered before.',
  )
  for (const p of main.pairs) if (p.note) out.push(`\`${p.route}\`: ${p.note}.`)
  out.push(`intake's log: ${main.logSummary}.`)
  out.push('')

  // Write limit.
  out.push('### Disk write limit')
  out.push('')
  const writeRow = (when: string, w: WriteLimit) => [when, `${fmt(w.rowsPerSecond)} rows/s (${fmt(w.rows)} rows in ${fmt(w.ms)} ms)`]
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
        ['answer sent → 201 receipt, p50 / p99', `${ms(percentile(webhooks.submitLatencies, 50))} / ${ms(percentile(webhooks.submitLatencies, 99))}`, '', ''],
        ['deliveries arrived exactly once, correctly signed', `${fmt(webhooks.exactlyOnce)} / ${fmt(lat.length)} of ${fmt(webhooks.forms)}`, '', ''],
        ['delivered on the first attempt (delivery log)', `${fmt(webhooks.firstTry)} of ${fmt(webhooks.forms)}`, '', ''],
      ],
    ),
  )
  out.push('')
  out.push('From bench/webhooks.ts (`bun run bench:webhooks` runs it alone): a receiver in the bench process, one clock for both ends.')
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
        [`spawn → first 200 on /healthz, median of ${r.startTimes.length}`, ms(startMedian), `≤ ${TARGET.startMs} ms`, mark(startMedian <= TARGET.startMs)],
        [`spawn → first 200 on /healthz, max of ${r.startTimes.length}`, ms(startMax), '', ''],
        [`RSS idle (${IDLE_AFTER_MS} ms after the first 200)`, `${fmt(idle, 1)} MiB`, `≤ ${TARGET.rssIdleMiB} MiB`, mark(idle <= TARGET.rssIdleMiB)],
        [`RSS after ${fmt(main.formsAtRss)} forms created over the API`, `${fmt(afterForms, 1)} MiB`, `≤ ${TARGET.rssFormsMiB} MiB`, mark(afterForms <= TARGET.rssFormsMiB)],
        [`RSS after the run (${fmt(main.formsCreated)} forms, every route above)`, `${fmt(afterRun, 1)} MiB`, `≤ ${TARGET.rssFormsMiB} MiB`, mark(afterRun <= TARGET.rssFormsMiB)],
        ['peak RSS (VmHWM)', `${fmt(mib(main.peakKiB), 1)} MiB`, '', ''],
        ['binary size (dist/intake)', `${fmt(r.binaryBytes / 1e6, 1)} MB (${fmt(r.binaryBytes / 2 ** 20, 1)} MiB)`, '', ''],
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
  const [small, large] = r.lists
  out.push(`### List page: \`GET /api/v1/forms?limit=${LIST_LIMIT}\`, ${fmt(LIST_REQUESTS)} sequential requests`)
  out.push('')
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
  out.push(
    ...markdownTable(
      ['page', `${fmt(small.forms)} forms p50 / p99`, `${fmt(large.forms)} forms p50 / p99`, 'ratio of p50', 'target', 'result'],
      [listRow('first page', (l) => l.first), listRow('deep page (cursor: the middle form)', (l) => l.deep)],
    ),
  )
  out.push('')
  out.push(
    `One account owning all the forms, seeded into the database directly (one transaction: ${fmt(small.forms)} in ${fmt(small.seedMs)} ms, ` +
      `${fmt(large.forms)} in ${fmt(large.seedMs / 1000, 1)} s), after ${LIST_WARMUP} warm-up requests per page; latency is the bench's fetch, keep-alive, one at a time.`,
  )
  out.push('')

  if (problems.length > 0) {
    out.push('### Problems: these figures are not valid')
    out.push('')
    for (const p of problems) out.push(`- ${p}`)
    out.push('')
  }
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
  log(`dist/intake built ${binary.mtime.toISOString()}; ${source}`)
  log(`wrk -t${THREADS} -c${CONNECTIONS} -d${DURATION_S}s; list pages at ${fmt(LIST_SMALL)} and ${fmt(LIST_LARGE)} forms`)
  log('')

  const writeBefore = await measureWriteLimit(state, scratch, 'before the HTTP runs')
  removeTempDir(state, scratch)
  const startTimes = await measureStartTimes(state)
  const main = await measureMain(state)
  const scratchAfter = makeTempDir(state, 'scratch')
  const writeAfter = await measureWriteLimit(state, scratchAfter, 'after them')
  removeTempDir(state, scratchAfter)
  log('webhooks (bench/webhooks.ts)...')
  const webhooks = await measureWebhooks(state)
  problems.push(...webhooks.problems.map((p) => `webhooks: ${p}`))
  const lists: [ListFigures, ListFigures] = [await measureList(state, LIST_SMALL), await measureList(state, LIST_LARGE)]

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
    startTimes,
    main,
    webhooks,
    lists,
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
