/**
 * Webhook benchmark: how soon the first delivery attempt reaches the callback
 * after a human's answer is sent, for 500 answers, 16 in flight.
 *
 *   bun run build && bun run bench:webhooks
 *
 * It runs dist/intake as built (it never builds), on a fresh database in a
 * temp dir, on 127.0.0.1 only, with rate limits off. Steps:
 *   1. start a receiver in this process (Bun.serve on 127.0.0.1): it notes the
 *      arrival time of every request, keeps the body and headers, answers 204;
 *   2. start intake (`serve --port 0`), read the port and the printed key;
 *   3. create 500 forms whose callback_url is the receiver;
 *   4. answer them (JSON POST /f/<id>), 16 at a time, noting performance.now()
 *      just before each POST is sent;
 *   5. wait for the deliveries, then a little longer for any duplicate;
 *   6. check every delivery: exactly one per form, X-Service-Signature right
 *      (sha256= hex HMAC of the raw body keyed with the form's secret, itself
 *      the hex HMAC of the form id keyed with the API key), the body the one
 *      answered; and that intake's delivery log agrees;
 *   7. stop intake with SIGTERM and print the figures and a Markdown table.
 *
 * Latency is "receiver saw the request" minus "answer about to be sent", both
 * performance.now() in this process: one clock, no skew. It covers the answer's
 * trip, intake recording it, the background loop waking, the signed POST, and
 * this process getting round to the receiver's handler. Only correct
 * deliveries count. It asserts no timing; it exits 1 only when something is
 * wrong (a delivery missing, duplicated or wrongly signed; a request failed).
 */
import { timingSafeEqual } from 'node:crypto'
import { loadConfig } from '../src/config.ts'
import {
  type BenchState,
  expectedSignature,
  fmt,
  makeTempDir,
  pool,
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
  exitCodeFor,
  log,
  logFigures,
  percentile,
  rssKiB,
  runBench,
  sleep,
} from './lib.ts'

export const FORMS = 500
/** Answers in flight at once (over keep-alive connections). */
export const SUBMIT_CONCURRENCY = 16
const CREATE_CONCURRENCY = 32
/** Requests in flight while reading intake's delivery log afterwards. */
const CHECK_CONCURRENCY = 32
/** Give up waiting for deliveries this long after the last answer's receipt. */
const ARRIVAL_TIMEOUT_MS = 30_000
/** Keep listening this long after the last expected delivery: twice the wait before the first retry of a failed attempt (1 s). */
const QUIET_MS = 2 * loadConfig({}).webhookRetryScheduleMs[0]!
/** What the claim is (printed, never asserted). */
export const TARGET_P50_MS = 20
export const TARGET_P99_MS = 100

/** One request the receiver got. */
interface Arrival {
  /** performance.now() when the handler started, before the body was read. */
  at: number
  method: string
  delivery: string | null
  signature: string | null
  body: string
}

interface Submission {
  formId: string
  answer: string
  /** performance.now() just before the POST was handed to fetch. */
  sentAt?: number
  /** When the 201 receipt (or a failure) came back. */
  receiptAt?: number
}

/** Starts the receiver on a free loopback port. */
function startReceiver() {
  const arrivals: Arrival[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const at = performance.now()
      const body = await request.text()
      arrivals.push({
        at,
        method: request.method,
        delivery: request.headers.get('x-service-delivery'),
        signature: request.headers.get('x-service-signature'),
        body,
      })
      return new Response(null, { status: 204 })
    },
  })
  return { server, arrivals, url: `http://127.0.0.1:${server.port}/hooks/form-completed` }
}

/** Whether `header` is the signature the delivery must carry (`expectedSignature`), compared in constant time. */
function signatureValid(apiKey: string, formId: string, rawBody: string, header: string | null): boolean {
  if (header === null) return false
  const expected = Buffer.from(expectedSignature(apiKey, formId, rawBody))
  const given = Buffer.from(header)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** What `measureWebhooks` found. */
export interface WebhookFigures {
  version: string
  forms: number
  createMs: number
  submitMs: number
  /** Answer sent -> 201 receipt, sorted, ms. */
  submitLatencies: number[]
  /** Answer sent -> first attempt arrived at the receiver, correct deliveries only, sorted, ms. */
  latencies: number[]
  /** First answer sent -> last delivery arrived, ms. */
  lastArrivalMs: number
  /** intake CPU from the first answer to the last delivery, ms, over `wallMs`. */
  cpuMs: number
  wallMs: number
  rssAfterKiB: number
  exactlyOnce: number
  /** Deliveries the log shows delivered with the id received; of which on the first attempt. */
  logAgrees: number
  firstTry: number
  tickMs: number
  stopped: { code: number | null; ms: number }
  /** What went wrong (empty when all is well): the figures are not to be trusted if any. */
  problems: string[]
}

/**
 * Steps 1 to 7 above: a receiver in this process and an intake of its own
 * (stopped, and its temp dir removed, before it returns); `binary` runs
 * another build than dist/intake (bench/run.ts's BENCH_BASELINE).
 */
export async function measureWebhooks(state: BenchState, options: { binary?: string } = {}): Promise<WebhookFigures> {
  // 1. The receiver, in this process.
  const receiver = startReceiver()
  try {
    return await measure(state, receiver, options.binary)
  } finally {
    receiver.server.stop(true)
  }
}

async function run(state: BenchState): Promise<number> {
  if (!binaryPresent()) return 1
  const f = await measureWebhooks(state)
  const ms = (n: number) => `${fmt(n, 1)} ms`
  const { latencies, submitLatencies, forms } = f
  log('')
  log(
    `submitted ${fmt(forms)} answers in ${fmt(f.submitMs)} ms: ${fmt((forms * 1000) / f.submitMs)} submissions/s, ${SUBMIT_CONCURRENCY} in flight`,
  )
  log(
    `answer sent → first attempt arrived (${fmt(latencies.length)} correct deliveries): p50 ${ms(percentile(latencies, 50))}, ` +
      `p90 ${ms(percentile(latencies, 90))}, p99 ${ms(percentile(latencies, 99))}, max ${ms(latencies.at(-1) ?? NaN)}`,
  )

  const rows: [string, string][] = [
    ['forms created (with callback_url)', `${fmt(forms)} in ${fmt(f.createMs)} ms (${CREATE_CONCURRENCY} in flight)`],
    ['answers sent', `${fmt(forms)} in ${fmt(f.submitMs)} ms (${SUBMIT_CONCURRENCY} in flight)`],
    ['submissions per second', fmt((forms * 1000) / f.submitMs)],
    [
      'answer sent → 201 receipt, p50 / p99',
      `${ms(percentile(submitLatencies, 50))} / ${ms(percentile(submitLatencies, 99))}`,
    ],
    ['answer sent → first attempt arrived, p50', ms(percentile(latencies, 50))],
    ['answer sent → first attempt arrived, p90', ms(percentile(latencies, 90))],
    ['answer sent → first attempt arrived, p99', ms(percentile(latencies, 99))],
    ['answer sent → first attempt arrived, max', ms(latencies.at(-1) ?? NaN)],
    ['first answer sent → last delivery arrived', `${fmt(f.lastArrivalMs)} ms`],
    [
      'intake CPU, first answer → last delivery',
      `${fmt(f.cpuMs)} ms in ${fmt(f.wallMs / 1000, 2)} s (${fmt(f.cpuMs / forms, 2)} ms per answer)`,
    ],
    ['intake RSS after the run', `${fmt(f.rssAfterKiB / 1024, 1)} MiB`],
    ['deliveries arrived exactly once', `${fmt(f.exactlyOnce)} of ${fmt(forms)}`],
    ['correctly signed and with the right body', `${fmt(latencies.length)} of ${fmt(forms)}`],
    [
      'delivery log: delivered, id as received',
      `${fmt(f.logAgrees)} of ${fmt(forms)} (${fmt(f.firstTry)} on the first attempt)`,
    ],
  ]
  logFigures(`Webhooks: ${fmt(forms)} answers, ${SUBMIT_CONCURRENCY} in flight, intake ${f.version}`, rows)
  log(
    `Target (not asserted): first attempt p50 ≤ ${TARGET_P50_MS} ms, p99 ≤ ${TARGET_P99_MS} ms. Bench, receiver and intake share this machine; both times are performance.now() in the bench process.`,
  )
  log(
    `CPU time is utime+stime of the intake process from /proc/<pid>/stat, counted in ${fmt(f.tickMs, 0)} ms clock ticks.`,
  )
  log(`intake stopped by SIGTERM in ${fmt(f.stopped.ms)} ms, exit code ${f.stopped.code}`)

  return exitCodeFor(f.problems)
}

async function measure(
  state: BenchState,
  receiver: ReturnType<typeof startReceiver>,
  binary?: string,
): Promise<WebhookFigures> {
  const tickMs = 1000 / clockTicksPerSecond()
  const { arrivals } = receiver

  // 2. Intake. Private targets must be allowed: the receiver is on loopback (the default; set here so no shell setting leaks in).
  const dir = makeTempDir(state, 'webhooks')
  const child = startIntake(state, dir, { SERVICE_WEBHOOK_BLOCK_PRIVATE: 'false' }, { binary })
  const pid = child.proc.pid
  const { url, key, version } = await whenReady(child)
  log(`intake ${version} (pid ${pid}) on ${url}, database in ${dir}`)
  log(`receiver on ${receiver.url}`)

  // 3. Forms with a callback to the receiver.
  const { ids: formIds, ms: createMs } = await createForms(
    { url, key, signal: state.abort.signal },
    FORMS,
    CREATE_CONCURRENCY,
    (i) => ({
      title: `Webhook bench form ${i + 1}`,
      fields: [{ key: 'answer', type: 'text', label: 'Answer', required: true }],
      callback_url: receiver.url,
      callback_metadata: { n: i },
      expires_in: '1h',
    }),
  )
  log(
    `created ${fmt(FORMS)} forms with a callback_url in ${fmt(createMs)} ms (${fmt((FORMS * 1000) / createMs)} forms/s)`,
  )
  if (arrivals.length > 0)
    throw new BenchError(`the receiver got ${arrivals.length} request(s) before any answer was sent`)
  await sleep(500)

  // 4. Answer every form, SUBMIT_CONCURRENCY at a time.
  const submissions: Submission[] = formIds.map((formId, i) => ({ formId, answer: `answer ${i + 1}` }))
  const submitFailures: string[] = []
  log(`answering ${fmt(FORMS)} forms, ${SUBMIT_CONCURRENCY} at a time...`)
  const cpu0 = cpuTicks(pid)
  const runStart = performance.now()
  await pool(FORMS, SUBMIT_CONCURRENCY, async (i) => {
    const s = submissions[i]!
    const body = JSON.stringify({ answer: s.answer })
    s.sentAt = performance.now()
    try {
      const res = await fetch(`${url}/f/${s.formId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: state.abort.signal,
      })
      const text = await res.text()
      s.receiptAt = performance.now()
      if (res.status !== 201) submitFailures.push(`form ${i + 1}: ${res.status} ${text.slice(0, 200)}`)
    } catch (error) {
      s.receiptAt = performance.now()
      submitFailures.push(`form ${i + 1}: ${error instanceof Error ? error.message : String(error)}`)
    }
  })
  const submitEnd = performance.now()
  const submitMs = submitEnd - runStart

  // 5. Wait for one delivery per form (or the timeout), then listen a while for duplicates.
  const expected = FORMS - submitFailures.length
  const arrivalDeadline = submitEnd + ARRIVAL_TIMEOUT_MS
  while (arrivals.length < expected && performance.now() < arrivalDeadline) await sleep(10)
  const cpu1 = cpuTicks(pid)
  const runEnd = performance.now()
  const rssAfter = rssKiB(pid)
  const lastArrival = arrivals.length > 0 ? Math.max(...arrivals.map((a) => a.at)) : NaN
  log(`${fmt(arrivals.length)} deliveries arrived; listening ${fmt(QUIET_MS / 1000)} s more for duplicates...`)
  await sleep(QUIET_MS)

  // 6. Check every delivery against its form.
  const indexOf = new Map(formIds.map((id, i) => [id, i]))
  const perForm: Arrival[][] = formIds.map(() => [])
  const strays: string[] = []
  for (const a of arrivals) {
    let formId: unknown
    try {
      formId = (JSON.parse(a.body) as { form_id?: unknown }).form_id
    } catch {
      // not JSON: a stray below
    }
    const i = typeof formId === 'string' ? indexOf.get(formId) : undefined
    if (i === undefined || a.method !== 'POST') strays.push(`${a.method} ${a.body.slice(0, 120)}`)
    else perForm[i]!.push(a)
  }

  const missing: string[] = []
  const duplicated: string[] = []
  const badSignature: string[] = []
  const badBody: string[] = []
  const latencies: number[] = []
  submissions.forEach((s, i) => {
    const got = perForm[i]!
    if (got.length === 0) {
      missing.push(`form ${i + 1} (${s.formId})`)
      return
    }
    if (got.length > 1)
      duplicated.push(
        `form ${i + 1} (${s.formId}): ${got.length} arrivals, deliveries ${got.map((a) => a.delivery).join(', ')}`,
      )
    const first = got[0]!
    let correct = true
    for (const a of got) {
      if (!signatureValid(key, s.formId, a.body, a.signature)) {
        badSignature.push(`form ${i + 1} (${s.formId}): X-Service-Signature ${a.signature ?? '(none)'}`)
        correct = false
      }
    }
    const payload = JSON.parse(first.body) as { event?: unknown; data?: { answer?: unknown } }
    if (payload.event !== 'form.completed' || payload.data?.answer !== s.answer || !first.delivery) {
      badBody.push(`form ${i + 1}: delivery ${first.delivery ?? '(no X-Service-Delivery)'} ${first.body.slice(0, 160)}`)
      correct = false
    }
    if (correct && s.sentAt !== undefined) latencies.push(first.at - s.sentAt)
  })
  latencies.sort((a, b) => a - b)

  // ... and intake's own delivery log: one delivery per form, delivered, the id the receiver saw.
  const logMismatch: string[] = []
  let firstTry = 0
  await pool(FORMS, CHECK_CONCURRENCY, async (i) => {
    const formId = formIds[i]!
    const res = await fetch(`${url}/api/v1/forms/${formId}/deliveries`, {
      headers: { authorization: `Bearer ${key}` },
      signal: state.abort.signal,
    })
    const list = (await res.json()) as { id?: string; status?: string; attempts?: number }[]
    const seen = perForm[i]![0]?.delivery
    if (
      res.status !== 200 ||
      !Array.isArray(list) ||
      list.length !== 1 ||
      list[0]!.status !== 'delivered' ||
      list[0]!.id !== seen
    ) {
      logMismatch.push(
        `form ${i + 1} (${formId}): ${res.status} ${JSON.stringify(list).slice(0, 200)}, receiver saw ${seen ?? 'nothing'}`,
      )
    } else if (list[0]!.attempts === 1) firstTry++
  })

  // 7. Stop.
  const stopped = await stopIntake(child)
  removeTempDir(state, dir)

  const exactlyOnce = FORMS - missing.length - duplicated.length
  const submitLatencies = submissions
    .filter((s) => s.sentAt !== undefined && s.receiptAt !== undefined)
    .map((s) => s.receiptAt! - s.sentAt!)
    .sort((a, b) => a - b)
  log(
    exactlyOnce === FORMS && badSignature.length === 0 && strays.length === 0
      ? `all ${fmt(FORMS)} deliveries arrived exactly once, each correctly signed`
      : `${fmt(exactlyOnce)} of ${fmt(FORMS)} deliveries arrived exactly once (${missing.length} missing, ${duplicated.length} duplicated, ${badSignature.length} wrongly signed, ${strays.length} stray requests)`,
  )

  const listed = (label: string, items: string[]) => [
    ...items.slice(0, 5).map((s) => `${label}: ${s}`),
    ...(items.length > 5 ? [`... ${items.length - 5} more: ${label}`] : []),
  ]
  const problems = [
    ...listed('answer failed', submitFailures),
    ...listed('delivery missing', missing),
    ...listed('delivery duplicated', duplicated),
    ...listed('wrong signature', badSignature),
    ...listed('wrong delivery body or headers', badBody),
    ...listed('request to the receiver that is no delivery of these forms', strays),
    ...listed("intake's delivery log disagrees", logMismatch),
    ...(stopped.code !== 0 ? [`intake exited with code ${stopped.code} on SIGTERM`] : []),
  ]
  return {
    version,
    forms: FORMS,
    createMs,
    submitMs,
    submitLatencies,
    latencies,
    lastArrivalMs: lastArrival - runStart,
    cpuMs: (cpu1 - cpu0) * tickMs,
    wallMs: runEnd - runStart,
    rssAfterKiB: rssAfter,
    exactlyOnce,
    logAgrees: FORMS - logMismatch.length,
    firstTry,
    tickMs,
    stopped,
    problems,
  }
}

if (import.meta.main) await runBench(run)
