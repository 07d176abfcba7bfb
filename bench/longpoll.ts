/**
 * Long-poll benchmark: what 1,000 concurrent `?wait=60` waiters cost the
 * server while nothing happens, and how fast they wake once answered.
 *
 *   bun run build && bun run bench:longpoll
 *
 * It runs dist/intake as built (it never builds), on a fresh database in a
 * temp dir, on 127.0.0.1 only, with rate limits off. Steps:
 *   1. start intake (`serve --port 0`), read the port and the printed key;
 *   2. create 1,000 forms over the API;
 *   3. measure an idle window with no waiter (the baseline: the background loop);
 *   4. open one long-poll per form, wait until the server holds them all,
 *      then measure intake's CPU time (/proc/<pid>/stat) over an idle window
 *      and its RSS (/proc/<pid>/status);
 *   5. answer every form (JSON POST /f/<id>) and time "answer sent -> waiter
 *      returned", checking each waiter got exactly its one response;
 *   6. stop intake with SIGTERM and print a Markdown table of the figures.
 *
 * It prints figures and asserts no timing; it exits 1 only when something is
 * wrong (a request failed, a waiter returned early or with the wrong body).
 */

import {
  type BenchState,
  fmt,
  makeTempDir,
  pool,
  removeTempDir,
  startIntake,
  stopIntake,
  whenReady,
} from '../test/e2e/intake-child.ts'
import {
  binaryPresent,
  clockTicksPerSecond,
  createForms,
  describeIdleCpu,
  exitCodeFor,
  type IdleWindow,
  idleWindow,
  log,
  logFigures,
  openFileLimit,
  percentile,
  requireRoomForWaiters,
  rerunWithHttpRequests,
  runBench,
  sleep,
  socketCount,
} from './lib.ts'

const FORMS = 1000
const WAIT_SECONDS = 60
const IDLE_WINDOW_MS = 10_000
/** After the server has accepted every long-poll connection, let the requests reach their wait. */
const SETTLE_MS = 2000
/** Requests in flight while creating forms and while answering them (over keep-alive connections). */
const CREATE_CONCURRENCY = 32
const ANSWER_CONCURRENCY = 32
/** Bun's fetch sends at most 256 requests at once unless told otherwise when it starts (BUN_CONFIG_MAX_HTTP_REQUESTS). */
export const HTTP_REQUESTS_NEEDED = FORMS + Math.max(CREATE_CONCURRENCY, ANSWER_CONCURRENCY) + 64
/** Each side holds one socket per waiter, plus the submitters' sockets and some spare. */
const OPEN_FILES_NEEDED = FORMS + 300

if (import.meta.main) await rerunWithHttpRequests(HTTP_REQUESTS_NEEDED)

// ---------------------------------------------------------------------------
// The run

interface Waiter {
  formId: string
  /** When the answer to this form was sent (performance.now()). */
  answeredAt?: number
  returnedAt?: number
  status?: number
  body?: unknown
  error?: string
}

/** What `measureLongPoll` found. */
export interface LongPollFigures {
  version: string
  forms: number
  createMs: number
  baseline: IdleWindow
  loaded: IdleWindow
  /** Waiters pending when the loaded idle window started, and when it ended. */
  pendingBefore: number
  pendingAfter: number
  submitMs: number
  /** Answer sent -> waiter returned, sorted, in ms. */
  latencies: number[]
  /** First answer sent -> last waiter returned, ms. */
  allReturnedMs: number
  /** Waiters that got exactly their one response. */
  correct: number
  tickMs: number
  stopped: { code: number | null; ms: number }
  /** What went wrong (empty when all is well): the run is not to be trusted if any. */
  problems: string[]
}

/**
 * Steps 1 to 6 above, on an intake of its own (stopped, and its temp dir
 * removed, before it returns). The process must have been started with
 * BUN_CONFIG_MAX_HTTP_REQUESTS >= HTTP_REQUESTS_NEEDED.
 */
export async function measureLongPoll(state: BenchState): Promise<LongPollFigures> {
  requireRoomForWaiters(HTTP_REQUESTS_NEEDED, OPEN_FILES_NEEDED)
  const ownLimit = openFileLimit('self')

  const tickMs = 1000 / clockTicksPerSecond()
  const dir = makeTempDir(state, 'longpoll')
  const child = startIntake(state, dir)
  const pid = child.proc.pid
  const { url, key, version } = await whenReady(child)
  log(`intake ${version} (pid ${pid}) on ${url}, database in ${dir}`)
  log(`open-file limit: bench ${ownLimit ?? '?'}, intake ${openFileLimit(pid) ?? '?'}; clock tick ${fmt(tickMs, 1)} ms`)
  requireRoomForWaiters(HTTP_REQUESTS_NEEDED, OPEN_FILES_NEEDED, pid)
  const auth = { authorization: `Bearer ${key}` }

  // 2. Forms, over keep-alive connections, CREATE_CONCURRENCY at a time.
  const { ids: formIds, ms: createMs } = await createForms(
    { url, key, signal: state.abort.signal },
    FORMS,
    CREATE_CONCURRENCY,
    (i) => ({
      title: `Bench form ${i + 1}`,
      fields: [{ key: 'answer', type: 'text', label: 'Answer', required: true }],
      context: { n: i },
      expires_in: '1h',
    }),
  )
  log(`created ${fmt(FORMS)} forms in ${fmt(createMs)} ms (${fmt((FORMS * 1000) / createMs)} forms/s)`)

  // 3. Baseline: the same idle window with no waiter.
  await sleep(1000)
  log(`measuring ${IDLE_WINDOW_MS / 1000} s idle with no waiter (baseline)...`)
  const baseline = await idleWindow(pid, tickMs, IDLE_WINDOW_MS)
  const baseSockets = socketCount(pid)

  // 4. One long-poll per form.
  const waiters: Waiter[] = formIds.map((formId) => ({ formId }))
  let pending = 0
  const openStart = performance.now()
  const polls = waiters.map(async (w) => {
    pending++
    try {
      const res = await fetch(`${url}/api/v1/forms/${w.formId}/responses?wait=${WAIT_SECONDS}`, {
        headers: auth,
        signal: state.abort.signal,
      })
      const text = await res.text()
      w.returnedAt = performance.now()
      w.status = res.status
      try {
        w.body = JSON.parse(text)
      } catch {
        w.body = text
      }
    } catch (error) {
      w.returnedAt = performance.now()
      w.error = error instanceof Error ? error.message : String(error)
    } finally {
      pending--
    }
  })

  // The server holds one connection per waiter: wait until it has them all (or 30 s), then let the requests settle.
  const connectDeadline = Date.now() + 30_000
  let sockets = socketCount(pid)
  while (sockets < FORMS + 1 && Date.now() < connectDeadline && pending > 0) {
    await sleep(100)
    sockets = socketCount(pid)
  }
  const connectMs = performance.now() - openStart
  log(
    `intake holds ${fmt(sockets)} sockets (${fmt(baseSockets)} before) ${fmt(connectMs)} ms after opening ${fmt(FORMS)} long-polls`,
  )
  if (sockets < FORMS + 1) log(`warning: intake holds fewer sockets than waiters after 30 s; measuring anyway`)
  await sleep(SETTLE_MS)
  const pendingBefore = pending
  log(`measuring ${IDLE_WINDOW_MS / 1000} s idle with ${fmt(pendingBefore)} waiters...`)
  const loaded = await idleWindow(pid, tickMs, IDLE_WINDOW_MS)
  const pendingAfter = pending
  const returnedEarly = waiters.filter((w) => w.returnedAt !== undefined).length

  // 5. Answer every form; each waiter should return with its one response.
  log(`answering ${fmt(FORMS)} forms, ${ANSWER_CONCURRENCY} at a time...`)
  const submitFailures: string[] = []
  const answerStart = performance.now()
  await pool(FORMS, ANSWER_CONCURRENCY, async (i) => {
    const w = waiters[i]!
    w.answeredAt = performance.now()
    const res = await fetch(`${url}/f/${w.formId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ answer: `answer ${i + 1}` }),
      signal: state.abort.signal,
    })
    const text = await res.text()
    if (res.status !== 201) submitFailures.push(`form ${i + 1}: ${res.status} ${text.slice(0, 200)}`)
  })
  const submitMs = performance.now() - answerStart
  await Promise.race([Promise.all(polls), sleep((WAIT_SECONDS + 5) * 1000)])
  const lastReturned = Math.max(...waiters.map((w) => w.returnedAt ?? NaN))
  const allReturnedMs = lastReturned - answerStart

  const badBodies: string[] = []
  const latencies: number[] = []
  waiters.forEach((w, i) => {
    const one =
      Array.isArray(w.body) && w.body.length === 1
        ? (w.body[0] as { form_id?: unknown; data?: { answer?: unknown } })
        : undefined
    if (w.error || w.status !== 200 || one?.form_id !== w.formId || one?.data?.answer !== `answer ${i + 1}`) {
      badBodies.push(`form ${i + 1}: ${w.error ?? `${w.status} ${JSON.stringify(w.body)?.slice(0, 200)}`}`)
    }
    if (w.answeredAt !== undefined && w.returnedAt !== undefined && w.returnedAt >= w.answeredAt)
      latencies.push(w.returnedAt - w.answeredAt)
  })
  latencies.sort((a, b) => a - b)

  // 6. Stop.
  const stopped = await stopIntake(child)
  removeTempDir(state, dir)

  const problems = [
    ...(returnedEarly > 0 ? [`${returnedEarly} waiter(s) returned before any answer was sent`] : []),
    ...(pendingBefore < FORMS
      ? [`only ${pendingBefore} of ${FORMS} waiters were pending when the idle window started`]
      : []),
    ...submitFailures.slice(0, 5).map((s) => `answer failed: ${s}`),
    ...badBodies.slice(0, 5).map((s) => `wrong long-poll result: ${s}`),
    ...(stopped.code !== 0 ? [`intake exited with code ${stopped.code} on SIGTERM`] : []),
  ]
  if (submitFailures.length > 5) problems.push(`... ${submitFailures.length - 5} more failed answers`)
  if (badBodies.length > 5) problems.push(`... ${badBodies.length - 5} more wrong long-poll results`)
  return {
    version,
    forms: FORMS,
    createMs,
    baseline,
    loaded,
    pendingBefore,
    pendingAfter,
    submitMs,
    latencies,
    allReturnedMs,
    correct: FORMS - badBodies.length,
    tickMs,
    stopped,
    problems,
  }
}

async function run(state: BenchState): Promise<number> {
  if (!binaryPresent()) return 1
  const f = await measureLongPoll(state)
  const kib = (n: number) => `${fmt(n / 1024, 1)} MiB`
  const cpu = describeIdleCpu
  const rows: [string, string][] = [
    ['forms created', `${fmt(f.forms)} in ${fmt(f.createMs)} ms (${CREATE_CONCURRENCY} in flight)`],
    ['idle CPU, no waiter (baseline)', cpu(f.baseline)],
    [`idle CPU, ${fmt(f.pendingBefore)} waiters`, cpu(f.loaded)],
    ['CPU added by the waiters', `${fmt(f.loaded.cpuMs - f.baseline.cpuMs)} ms per ${fmt(IDLE_WINDOW_MS / 1000)} s`],
    ['RSS, no waiter', kib(f.baseline.rssKiB)],
    [
      `RSS, ${fmt(f.pendingBefore)} waiters`,
      `${kib(f.loaded.rssKiB)} (${fmt((f.loaded.rssKiB - f.baseline.rssKiB) / Math.max(1, f.pendingBefore), 1)} KiB more per waiter)`,
    ],
    ['waiters pending after the idle window', `${fmt(f.pendingAfter)} of ${fmt(f.forms)}`],
    ['answers sent', `${fmt(f.forms)} in ${fmt(f.submitMs)} ms (${ANSWER_CONCURRENCY} in flight)`],
    ['answer sent → waiter returned, p50', `${fmt(percentile(f.latencies, 50), 1)} ms`],
    ['answer sent → waiter returned, p99', `${fmt(percentile(f.latencies, 99), 1)} ms`],
    ['answer sent → waiter returned, max', `${fmt(f.latencies.at(-1) ?? NaN, 1)} ms`],
    ['first answer sent → last waiter returned', `${fmt(f.allReturnedMs)} ms`],
    ['waiters with exactly their one response', `${fmt(f.correct)} of ${fmt(f.forms)}`],
  ]
  logFigures(`Long-poll: ${fmt(f.forms)} concurrent waiters (\`?wait=${WAIT_SECONDS}\`), intake ${f.version}`, rows)
  log(
    `CPU time is utime+stime of the intake process from /proc/<pid>/stat, counted in ${fmt(f.tickMs, 0)} ms clock ticks (one tick either way is noise).`,
  )
  log(`intake stopped by SIGTERM in ${fmt(f.stopped.ms)} ms, exit code ${f.stopped.code}`)

  return exitCodeFor(f.problems)
}

if (import.meta.main) await runBench(run)
