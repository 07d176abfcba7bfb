/**
 * Event-feed benchmark (CONTRACT 12, issue #15): what 1,000 agents waiting on
 * the account's feed cost the server while nothing happens, and how soon a
 * waiting feed request is answered once a form ends.
 *
 *   bun run build && bun run bench:events
 *
 * It runs dist/intake as built (it never builds), on a fresh database in a
 * temp dir, on 127.0.0.1 only, with rate limits off. Steps:
 *   1. start intake (`serve --port 0`), read the port and the printed key;
 *      create the forms the run answers (creating a form adds no event);
 *   2. (the crowd; `bun run bench` leaves it out) an idle window with no
 *      waiter (the baseline: the background loop); then 1,000 concurrent
 *      `GET /api/v1/events?after=latest&wait=60` on the one account (what an
 *      agent starting to listen sends; one account is the worst case for a
 *      wake: every event wakes all of them), wait until the server holds them
 *      all, then intake's CPU time (/proc/<pid>/stat) over the same idle
 *      window and its RSS (/proc/<pid>/status), as bench/longpoll.ts does;
 *      then answer one form and time "answer sent -> the last of the 1,000
 *      answered", each having to hold exactly that form's form.completed;
 *   3. the wake, one waiter at a time (an agent and its form): for each of
 *      200 forms, `GET /api/v1/events?after=<the last next>&wait=30`, 50 ms
 *      for it to reach its wait, then the answer (JSON POST /f/<id>); time
 *      "answer sent -> feed request answered", which must hold exactly that
 *      form's form.completed event (the next cursor carries on);
 *   4. with BENCH_DATABASE_URL (a PostgreSQL server the bench may create a
 *      database on, as bench/run.ts): step 3 across two instances on one
 *      fresh database, the feed request on one and the answer through the
 *      other (taking turns which is which);
 *   5. stop intake with SIGTERM and print a Markdown table of the figures.
 *
 * Times are performance.now() in this process (one clock). It asserts no
 * timing; it exits 1 only when something is wrong (a request failed, a waiter
 * answered before the change or with the wrong body).
 */

import {
  type BenchState,
  type Child,
  fmt,
  makeTempDir,
  removeTempDir,
  startIntake,
  stopIntake,
  whenReady,
} from '../test/e2e/intake-child.ts'
import {
  BenchError,
  binaryPresent,
  clockTicksPerSecond,
  cpuTicks,
  createForms,
  describeIdleCpu,
  exitCodeFor,
  type IdleWindow,
  idleWindow,
  log,
  logFigures,
  percentile,
  requireRoomForWaiters,
  rerunWithHttpRequests,
  runBench,
  sleep,
  socketCount,
} from './lib.ts'
import { createBenchDatabases, redactUrl } from './pg.ts'

/** Feed requests waiting at once in the idle measure. */
export const WAITERS = 1000
/** Wake samples, one waiter at a time (and as many across instances on PostgreSQL). */
export const WAKE_SAMPLES = 200
const CROWD_WAIT_S = 60
const WAKE_WAIT_S = 30
const IDLE_WINDOW_MS = 10_000
/** After the server has accepted every feed connection, let the requests reach their wait. */
const SETTLE_MS = 2000
/** Between sending a wake sample's feed request and the answer: time for it to reach its wait. */
const WAKE_SETTLE_MS = 50
const CREATE_CONCURRENCY = 32
/** Bun's fetch sends at most 256 requests at once unless told otherwise when it starts (BUN_CONFIG_MAX_HTTP_REQUESTS). */
export const HTTP_REQUESTS_NEEDED = WAITERS + 64 + 64
/** Each side holds one socket per waiter, plus some spare. */
const OPEN_FILES_NEEDED = WAITERS + 300

if (import.meta.main) await rerunWithHttpRequests(HTTP_REQUESTS_NEEDED)

// ---------------------------------------------------------------------------
// Helpers

const FORM = (i: number) => ({
  title: `Events bench form ${i + 1}`,
  fields: [{ key: 'answer', type: 'text', label: 'Answer', required: true }],
  expires_in: '1h',
})

interface FeedEvent {
  id?: unknown
  type?: unknown
  form_id?: unknown
  occurred_at?: unknown
  payload?: { event?: unknown; form_id?: unknown; data?: { answer?: unknown } }
}
interface FeedAnswer {
  status: number
  text: string
  at: number
  body?: { events?: FeedEvent[]; next?: unknown }
}

/** GET /api/v1/events?..., never throwing: status 0 and the error's message when the request failed. */
async function feed(url: string, key: string, query: string, signal: AbortSignal): Promise<FeedAnswer> {
  try {
    const res = await fetch(`${url}/api/v1/events?${query}`, { headers: { authorization: `Bearer ${key}` }, signal })
    const text = await res.text()
    const at = performance.now()
    let body: FeedAnswer['body']
    try {
      body = JSON.parse(text) as FeedAnswer['body']
    } catch {
      // not JSON: wrong below
    }
    return { status: res.status, text, at, body }
  } catch (error) {
    return { status: 0, text: error instanceof Error ? error.message : String(error), at: performance.now() }
  }
}

/** What is wrong with a feed answer that should hold exactly form `formId`'s form.completed with `answer` (undefined: nothing). */
function wrongAnswer(a: FeedAnswer, formId: string, answer: string): string | undefined {
  const events = a.body?.events
  const e = Array.isArray(events) && events.length === 1 ? events[0]! : undefined
  if (
    a.status !== 200 ||
    typeof a.body?.next !== 'string' ||
    !e ||
    e.type !== 'form.completed' ||
    e.form_id !== formId ||
    typeof e.id !== 'string' ||
    e.payload?.event !== 'form.completed' ||
    e.payload?.form_id !== formId ||
    e.payload?.data?.answer !== answer
  ) {
    return `${a.status} ${a.text.slice(0, 240)}`
  }
  return undefined
}

/** Answers form `formId` with `answer` (JSON POST /f/<id>); the error, if it failed. */
async function answerForm(
  url: string,
  formId: string,
  answer: string,
  signal: AbortSignal,
): Promise<string | undefined> {
  try {
    const res = await fetch(`${url}/f/${formId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ answer }),
      signal,
    })
    const text = await res.text()
    return res.status === 201 ? undefined : `${res.status} ${text.slice(0, 200)}`
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

// ---------------------------------------------------------------------------
// The figures

/** 1,000 waiters on one account: idle cost, and one event waking them all. */
export interface CrowdFigures {
  waiters: number
  baseline: IdleWindow
  loaded: IdleWindow
  /** Waiters pending when the loaded idle window started, and when it ended. */
  pendingBefore: number
  pendingAfter: number
  /** Answer sent -> its 201, ms. */
  receiptMs: number
  /** Answer sent -> first / last of the waiters answered, ms. */
  firstMs: number
  lastMs: number
  /** Answer sent -> each waiter answered, sorted, ms. */
  latencies: number[]
  /** intake CPU from the answer sent to the last waiter answered, ms. */
  wakeCpuMs: number
  /** Waiters answered with exactly that form's form.completed. */
  correct: number
}

/** One waiter at a time: answer sent -> feed request answered. */
export interface WakeFigures {
  samples: number
  /** Sorted, ms: correct answers only. */
  latencies: number[]
  /** Answer sent -> its 201, sorted, ms. */
  receipts: number[]
}

/** What `measureEvents` found. */
export interface EventFigures {
  version: string
  tickMs: number
  /** Absent when not asked for (bench/run.ts). */
  crowd?: CrowdFigures
  wake: WakeFigures
  /** With a PostgreSQL server: the waiter on one instance, the answer through the other. */
  postgres?: WakeFigures & { server: string; database: string }
  stopped: { code: number | null; ms: number }
  /** What went wrong (empty when all is well): the figures are not to be trusted if any. */
  problems: string[]
}

export interface EventOptions {
  /** Another build than dist/intake (bench/run.ts's copy). */
  binary?: string
  /** Measure the 1,000 waiters (idle cost, one wake for all): needs BUN_CONFIG_MAX_HTTP_REQUESTS >= HTTP_REQUESTS_NEEDED. */
  crowd?: boolean
  /** A PostgreSQL server (BENCH_DATABASE_URL): also the wake across two instances on a fresh database there. */
  databaseUrl?: string
}

// ---------------------------------------------------------------------------
// The run

/**
 * `samples` wakes, one at a time: a feed request on `waitOn(n)`, then the
 * answer of form n through `answerVia(n)`. The cursor is carried from each
 * answer's `next`.
 */
async function measureWake(
  state: BenchState,
  key: string,
  formIds: string[],
  waitOn: (n: number) => string,
  answerVia: (n: number) => string,
  label: string,
  problems: string[],
): Promise<WakeFigures> {
  const signal = state.abort.signal
  const head = await feed(waitOn(0), key, 'after=latest', signal)
  if (head.status !== 200 || typeof head.body?.next !== 'string' || head.body.events?.length !== 0) {
    throw new BenchError(`${label}: GET /api/v1/events?after=latest answered ${head.status} ${head.text.slice(0, 200)}`)
  }
  let cursor = head.body.next
  const latencies: number[] = []
  const receipts: number[] = []
  let failures = 0
  for (const [n, formId] of formIds.entries()) {
    const answer = `wake ${n + 1}`
    const where = `${label}, sample ${n + 1} (form ${formId})`
    const polled = feed(waitOn(n), key, `after=${encodeURIComponent(cursor)}&wait=${WAKE_WAIT_S}`, signal)
    await sleep(WAKE_SETTLE_MS)
    const sentAt = performance.now()
    const failed = await answerForm(answerVia(n), formId, answer, signal)
    receipts.push(performance.now() - sentAt)
    if (failed) problems.push(`${where}: the answer failed: ${failed}`)
    const got = await polled
    const wrong = wrongAnswer(got, formId, answer)
    if (got.at < sentAt) {
      problems.push(
        `${where}: the feed request was answered before the change was sent: ${got.status} ${got.text.slice(0, 200)}`,
      )
      failures++
    } else if (wrong) {
      problems.push(`${where}: wrong feed answer: ${wrong}`)
      failures++
    } else latencies.push(got.at - sentAt)
    if (typeof got.body?.next === 'string') cursor = got.body.next
    else break
    if (failures > 5) {
      problems.push(`${label}: stopped after ${failures} wrong samples`)
      break
    }
  }
  latencies.sort((a, b) => a - b)
  receipts.sort((a, b) => a - b)
  log(
    `  wake, ${label}: p50 ${fmt(percentile(latencies, 50), 1)} ms, p99 ${fmt(percentile(latencies, 99), 1)} ms, max ${fmt(latencies.at(-1) ?? NaN, 1)} ms ` +
      `(${fmt(latencies.length)} of ${fmt(formIds.length)} correct); answer → 201 p50 ${fmt(percentile(receipts, 50), 1)} ms`,
  )
  return { samples: formIds.length, latencies, receipts }
}

/** Step 2: the idle window without and with WAITERS feed requests, then one answer waking them all. */
async function measureCrowd(
  state: BenchState,
  child: Child,
  url: string,
  key: string,
  formId: string,
  tickMs: number,
  problems: string[],
): Promise<CrowdFigures> {
  const pid = child.proc.pid
  const signal = state.abort.signal
  await sleep(2000)
  log(`measuring ${IDLE_WINDOW_MS / 1000} s idle with no waiter (baseline)...`)
  const baseline = await idleWindow(pid, tickMs, IDLE_WINDOW_MS)
  const baseSockets = socketCount(pid)

  let pending = 0
  const answers: (FeedAnswer | undefined)[] = new Array(WAITERS)
  const openStart = performance.now()
  const polls = Array.from({ length: WAITERS }, async (_, i) => {
    pending++
    try {
      answers[i] = await feed(url, key, `after=latest&wait=${CROWD_WAIT_S}`, signal)
    } finally {
      pending--
    }
  })
  const connectDeadline = Date.now() + 30_000
  let sockets = socketCount(pid)
  // The bench's keep-alive connections from creating the forms are reused by the first waiters: the listener plus one per waiter.
  while (sockets < WAITERS + 1 && Date.now() < connectDeadline && pending > 0) {
    await sleep(100)
    sockets = socketCount(pid)
  }
  log(
    `intake holds ${fmt(sockets)} sockets (${fmt(baseSockets)} before) ${fmt(performance.now() - openStart)} ms after opening ${fmt(WAITERS)} feed requests`,
  )
  if (sockets < WAITERS + 1) log('warning: intake holds fewer sockets than waiters after 30 s; measuring anyway')
  await sleep(SETTLE_MS)
  const pendingBefore = pending
  log(
    `measuring ${IDLE_WINDOW_MS / 1000} s idle with ${fmt(pendingBefore)} feed requests waiting (after=latest&wait=${CROWD_WAIT_S})...`,
  )
  const loaded = await idleWindow(pid, tickMs, IDLE_WINDOW_MS)
  const pendingAfter = pending
  const early = answers.filter((a) => a !== undefined)
  if (early.length > 0)
    problems.push(
      `${early.length} feed request(s) answered before any change: ${early[0]!.status} ${early[0]!.text.slice(0, 200)}`,
    )
  if (pendingBefore < WAITERS)
    problems.push(`only ${pendingBefore} of ${WAITERS} feed requests were waiting when the idle window started`)

  log(`one answer to wake all ${fmt(WAITERS)}...`)
  const answer = 'crowd'
  const c0 = cpuTicks(pid)
  const sentAt = performance.now()
  const failed = await answerForm(url, formId, answer, signal)
  const receiptMs = performance.now() - sentAt
  if (failed) problems.push(`the answer waking the crowd failed: ${failed}`)
  await Promise.race([Promise.all(polls), sleep((CROWD_WAIT_S + 5) * 1000)])
  const c1 = cpuTicks(pid)
  const latencies: number[] = []
  const wrong: string[] = []
  for (const [i, a] of answers.entries()) {
    if (!a) wrong.push(`waiter ${i + 1}: no answer`)
    else {
      const w = wrongAnswer(a, formId, answer)
      if (w) wrong.push(`waiter ${i + 1}: ${w}`)
      else if (a.at >= sentAt) latencies.push(a.at - sentAt)
    }
  }
  latencies.sort((a, b) => a - b)
  problems.push(...wrong.slice(0, 5).map((w) => `crowd: wrong feed answer: ${w}`))
  if (wrong.length > 5) problems.push(`... ${wrong.length - 5} more wrong feed answers in the crowd`)
  log(
    `  all woken: first ${fmt(latencies[0] ?? NaN, 1)} ms, last ${fmt(latencies.at(-1) ?? NaN, 1)} ms after the answer was sent (${fmt(latencies.length)} of ${fmt(WAITERS)} correct)`,
  )
  return {
    waiters: WAITERS,
    baseline,
    loaded,
    pendingBefore,
    pendingAfter,
    receiptMs,
    firstMs: latencies[0] ?? NaN,
    lastMs: latencies.at(-1) ?? NaN,
    latencies,
    wakeCpuMs: (c1 - c0) * tickMs,
    correct: WAITERS - wrong.length,
  }
}

/** Step 4: two instances on a fresh PostgreSQL database; the feed request on one, the answer through the other. */
async function measurePostgresWake(
  state: BenchState,
  server: string,
  binary: string | undefined,
  problems: string[],
): Promise<NonNullable<EventFigures['postgres']>> {
  const dbs = await createBenchDatabases(state, server, ['events'])
  const dbUrl = dbs.urls.events!
  log(`PostgreSQL on ${redactUrl(server)}: fresh database ${dbs.name}, two instances`)
  const children: Child[] = []
  const dirs: string[] = []
  try {
    const start = async (k: number, key?: string) => {
      const dir = makeTempDir(state, `events-pg-${k + 1}`)
      dirs.push(dir)
      const child = startIntake(state, dir, {}, { binary, databaseUrl: dbUrl })
      children.push(child)
      return whenReady(child, 60_000, key === undefined ? {} : { key })
    }
    const a = await start(0)
    const b = await start(1, a.key)
    const { ids } = await createForms(
      { url: a.url, key: a.key, signal: state.abort.signal },
      WAKE_SAMPLES,
      CREATE_CONCURRENCY,
      FORM,
    )
    const urls = [a.url, b.url]
    // Even samples wait on A and answer through B; odd ones the other way round.
    const wake = await measureWake(
      state,
      a.key,
      ids,
      (n) => urls[n % 2]!,
      (n) => urls[(n + 1) % 2]!,
      'PostgreSQL, across two instances',
      problems,
    )
    for (const child of children) {
      const stopped = await stopIntake(child)
      if (stopped.code !== 0) problems.push(`an intake on PostgreSQL exited with code ${stopped.code} on SIGTERM`)
    }
    return { ...wake, server: redactUrl(server), database: dbs.name }
  } finally {
    for (const child of children) await stopIntake(child, 5000)
    for (const dir of dirs) removeTempDir(state, dir)
    await dbs.drop()
    log(`dropped ${dbs.name}`)
  }
}

/**
 * Steps 1 to 5 above, on an intake of its own (stopped, and its temp dir
 * removed, before it returns). With `crowd`, the process must have been
 * started with BUN_CONFIG_MAX_HTTP_REQUESTS >= HTTP_REQUESTS_NEEDED.
 */
export async function measureEvents(state: BenchState, options: EventOptions = {}): Promise<EventFigures> {
  const crowd = options.crowd ?? false
  if (crowd) requireRoomForWaiters(HTTP_REQUESTS_NEEDED, OPEN_FILES_NEEDED)
  const problems: string[] = []
  const tickMs = 1000 / clockTicksPerSecond()
  const dir = makeTempDir(state, 'events')
  const child = startIntake(state, dir, {}, { binary: options.binary })
  const pid = child.proc.pid
  const { url, key, version } = await whenReady(child)
  log(`intake ${version} (pid ${pid}) on ${url}, database in ${dir}`)
  if (crowd) requireRoomForWaiters(HTTP_REQUESTS_NEEDED, OPEN_FILES_NEEDED, pid)

  // 1. The forms: one for the crowd, one per wake sample.
  const { ids } = await createForms(
    { url, key, signal: state.abort.signal },
    WAKE_SAMPLES + 1,
    CREATE_CONCURRENCY,
    FORM,
  )

  // 2. The crowd.
  const crowdFigures = crowd ? await measureCrowd(state, child, url, key, ids[0]!, tickMs, problems) : undefined

  // 3. One waiter at a time.
  log(`wake: ${fmt(WAKE_SAMPLES)} samples, one feed request waiting at a time...`)
  const wake = await measureWake(
    state,
    key,
    ids.slice(1),
    () => url,
    () => url,
    'SQLite, one instance',
    problems,
  )

  // 5. Stop (before PostgreSQL, so that the two do not share the cores).
  const stopped = await stopIntake(child)
  removeTempDir(state, dir)
  if (stopped.code !== 0) problems.push(`intake exited with code ${stopped.code} on SIGTERM`)

  // 4. Across instances on PostgreSQL.
  const postgres =
    options.databaseUrl !== undefined
      ? await measurePostgresWake(state, options.databaseUrl, options.binary, problems)
      : undefined

  return { version, tickMs, crowd: crowdFigures, wake, postgres, stopped, problems }
}

// ---------------------------------------------------------------------------
// Rendering

const ms = (n: number) => (Number.isFinite(n) ? `${fmt(n, n < 10 ? 2 : 1)} ms` : 'n/a')
const mib = (kib: number) => `${fmt(kib / 1024, 1)} MiB`
const cpu = describeIdleCpu

/** The measure / value rows of the figures (what `bun run bench:events` prints, and bench/run.ts's section). */
export function eventRows(f: EventFigures): [string, string][] {
  const rows: [string, string][] = []
  const wakeRows = (w: WakeFigures, what: string): [string, string][] => [
    [`change sent → feed request answered, p50${what}`, ms(percentile(w.latencies, 50))],
    [`change sent → feed request answered, p99${what}`, ms(percentile(w.latencies, 99))],
    [`change sent → feed request answered, max${what}`, ms(w.latencies.at(-1) ?? NaN)],
    [
      `answer sent → its 201, p50 / p99${what}`,
      `${ms(percentile(w.receipts, 50))} / ${ms(percentile(w.receipts, 99))}`,
    ],
    [
      `feed answers holding exactly that form's form.completed${what}`,
      `${fmt(w.latencies.length)} of ${fmt(w.samples)}`,
    ],
  ]
  rows.push(...wakeRows(f.wake, ''))
  if (f.postgres) rows.push(...wakeRows(f.postgres, ', PostgreSQL, across two instances'))
  const c = f.crowd
  if (c) {
    rows.push(
      ['idle CPU, no waiter (baseline)', cpu(c.baseline)],
      [`idle CPU, ${fmt(c.pendingBefore)} feed requests waiting`, cpu(c.loaded)],
      ['CPU added by the waiters', `${fmt(c.loaded.cpuMs - c.baseline.cpuMs)} ms per ${fmt(IDLE_WINDOW_MS / 1000)} s`],
      ['RSS, no waiter', mib(c.baseline.rssKiB)],
      [
        `RSS, ${fmt(c.pendingBefore)} waiting`,
        `${mib(c.loaded.rssKiB)} (${fmt((c.loaded.rssKiB - c.baseline.rssKiB) / Math.max(1, c.pendingBefore), 1)} KiB more per waiter)`,
      ],
      ['feed requests still waiting after the idle window', `${fmt(c.pendingAfter)} of ${fmt(c.waiters)}`],
      [
        `one answer waking all ${fmt(c.waiters)}: first / p50 / last answered`,
        `${ms(c.firstMs)} / ${ms(percentile(c.latencies, 50))} / ${ms(c.lastMs)} (its 201: ${ms(c.receiptMs)})`,
      ],
      [`intake CPU for that wake`, `${fmt(c.wakeCpuMs)} ms`],
      [`waiters answered with exactly that form's form.completed`, `${fmt(c.correct)} of ${fmt(c.waiters)}`],
    )
  }
  return rows
}

/** What was measured, in a few sentences (under the table). */
export function eventNotes(f: EventFigures): string[] {
  const notes = [
    `Wake: ${fmt(WAKE_SAMPLES)} forms, one at a time, on one account: \`GET /api/v1/events?after=<the last next>&wait=${WAKE_WAIT_S}\`, ${WAKE_SETTLE_MS} ms for it to reach its wait, ` +
      `then the form answered (JSON \`POST /f/<id>\`); change sent → feed request answered, performance.now() in the bench process (one clock). ` +
      `Each answer must hold exactly that form's \`form.completed\` (payload included); its \`next\` is the next sample's cursor.`,
  ]
  if (f.postgres) {
    notes.push(
      `PostgreSQL: ${f.postgres.server}, a fresh database (${f.postgres.database}, dropped after), two instances of dist/intake on it; the feed request on one, the answer through the other (taking turns).`,
    )
  }
  if (f.crowd) {
    notes.push(
      `Idle: ${fmt(f.crowd.waiters)} concurrent \`GET /api/v1/events?after=latest&wait=${CROWD_WAIT_S}\` on one account (one key: the feed is per account, and one account is the worst case for a wake, ` +
        `every event waking all of them), against the same ${fmt(IDLE_WINDOW_MS / 1000)} s window with none, as bench/longpoll.ts measures. ` +
        `CPU time is utime+stime of the intake process from /proc/<pid>/stat, in ${fmt(f.tickMs, 0)} ms clock ticks (one tick either way is noise); RSS is VmRSS.`,
    )
  }
  return notes
}

async function run(state: BenchState): Promise<number> {
  if (!binaryPresent()) return 1
  const databaseUrl = process.env.BENCH_DATABASE_URL?.trim() || undefined
  if (databaseUrl === undefined) log('BENCH_DATABASE_URL not set: the wake across instances on PostgreSQL is left out.')
  const f = await measureEvents(state, { crowd: true, databaseUrl })
  logFigures(`Event feed: wake latency and ${fmt(WAITERS)} idle waiters, intake ${f.version}`, eventRows(f))
  log('')
  for (const note of eventNotes(f)) log(note)
  log(`intake stopped by SIGTERM in ${fmt(f.stopped.ms)} ms, exit code ${f.stopped.code}`)
  return exitCodeFor(f.problems)
}

if (import.meta.main) await runBench(run)
