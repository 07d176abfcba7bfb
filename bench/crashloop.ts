/**
 * Crash loop: the real executable under a mixed storm, killed with SIGKILL at
 * random moments, restarted on the same database, and checked each time.
 *
 *   bun run build && bun run bench:crashloop
 *   CRASH_ROUNDS=50 CRASH_SEED=1234 bun run bench:crashloop
 *
 * It runs dist/intake as built (it never builds) on a database in a temp dir,
 * 127.0.0.1 only, rate limits off, SERVICE_WEBHOOK_TIMEOUT=1. Each round:
 *   1. a storm from this process: creates (with an Idempotency-Key; some with
 *      a callback_url to a flaky receiver this process runs, some expiring in a
 *      minute), answers (JSON and form posts, sometimes two at once on one
 *      form), cancels, short expiries (PATCH expires_at 1..2 s ahead), reads
 *      (a form, its responses, long-polls with wait=1, list pages, the delivery
 *      log). Every acknowledged operation goes into a ledger (a 201 create and
 *      its id; a 201 JSON answer with its response id, a 303 form post; a 200
 *      cancel; a 200 expiry change), every refusal (409, 410) too: it says the
 *      form was in a final state then, which it must still be in;
 *   2. SIGKILL at a random moment (seeded: CRASH_SEED, printed); in most
 *      rounds 0..10 ms after a burst of 8..31 writes sent at once, so that
 *      the kill lands while some are being committed or answered;
 *   3. with intake stopped, the database file, read-only: PRAGMA
 *      integrity_check 'ok', foreign_key_check empty, every acknowledged
 *      form, answer and cancel in it, and the state rules row by row;
 *   4. restart on the same database (the same port when it can be had) and
 *      check the same through the API, every form the ledger knows (its
 *      state, expiry, context, response and data), the list pages (every form
 *      once, none unknown), and settle what was in doubt (a request cut off
 *      by the kill): a create is sent again with its Idempotency-Key, which
 *      must return the form if it was committed;
 * Then the receiver turns healthy, intake is left running, every delivery that
 * ended `failed` is redelivered, and every answered form with a callback must
 * arrive at the receiver at least once (signed, its body the same on every
 * attempt, never more attempts received than the log counts), with the log
 * showing it delivered. Finally SIGTERM (exit 0) and one more integrity_check.
 *
 * It exits 1 and lists every violation (round, seed, what was expected, what
 * was found, the intake log lines naming the form) when anything is wrong.
 *
 * Settings (env): CRASH_ROUNDS (20), CRASH_SEED (random), CRASH_STORM_MIN_MS /
 * CRASH_STORM_MAX_MS (kill between 1000 and 5000 ms into a storm),
 * CRASH_WORKERS (16 loops sending requests), CRASH_THINK_MAX_MS (each pauses
 * 0..6 ms between requests), CRASH_WEBHOOK_MAX_RETRIES (3).
 *
 * Not a violation, printed as a note: a round whose last attempt is cut off by
 * a kill starts one attempt more than 1 + SERVICE_WEBHOOK_MAX_RETRIES, since
 * the cut-off one counts and is made again (docs/webhooks.md: Durable and
 * Delivery log).
 *
 * Why 3 retries and not 10: retries come 1, 5, 25, 125, 625... s after a
 * failure, and a pending delivery cannot be redelivered (409). With a receiver
 * failing a third of the time, and attempts cut off by the kills counting too,
 * some delivery would fail four or five times in a row and wait 125 or 625 s.
 * With 3 it ends `failed` after at most a 25 s wait, and is redelivered.
 */
import { Database } from 'bun:sqlite'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  alive,
  BenchError,
  type BenchState,
  binaryPresent,
  type Child,
  exitCodeFor,
  expectedSignature,
  fmt,
  log,
  machineLine,
  makeTempDir,
  pool,
  type Ready,
  runBench,
  sleep,
  startIntake,
  stopIntake,
  whenReady,
} from './lib.ts'

// ---------------------------------------------------------------------------
// Settings

export interface CrashloopConfig {
  rounds: number
  seed: number
  /** The kill comes between these many ms after a storm starts. */
  stormMinMs: number
  stormMaxMs: number
  /** Loops sending requests at once. */
  workers: number
  /** Each loop pauses 0..thinkMaxMs between two operations. */
  thinkMaxMs: number
  /** Share of rounds whose kill comes 0..10 ms after a burst of 8..31 writes sent at once. */
  burstShare: number
  /** Share of webhook attempts the receiver answers 500 (while flaky). */
  failureRate: number
  /** Share it holds past the webhook timeout, then answers 500. */
  hangRate: number
  webhookTimeoutSeconds: number
  webhookMaxRetries: number
  /** SERVICE_WEBHOOK_RETRY_SCHEDULE (intake's default when not given). */
  webhookRetrySchedule?: string
  /** At the end, wait this long past the latest next_attempt_at the delivery log shows. */
  deliveryGraceMs: number
  /** ...but never longer than this in all. */
  deliveryMaxWaitMs: number
  /** The executable (dist/intake unless a test gives its own). */
  binary?: string
  /** Where the round lines go. */
  print: (line: string) => void
}

const envNumber = (name: string, fallback: number) => {
  const text = process.env[name]
  if (text === undefined || text === '') return fallback
  const n = Number(text)
  if (!Number.isFinite(n)) throw new BenchError(`${name}=${text} is not a number`)
  return n
}

export function configFromEnv(): CrashloopConfig {
  return {
    rounds: envNumber('CRASH_ROUNDS', 20),
    seed: envNumber('CRASH_SEED', Math.floor(Math.random() * 2 ** 31)),
    stormMinMs: envNumber('CRASH_STORM_MIN_MS', 1000),
    stormMaxMs: envNumber('CRASH_STORM_MAX_MS', 5000),
    workers: envNumber('CRASH_WORKERS', 16),
    thinkMaxMs: envNumber('CRASH_THINK_MAX_MS', 6),
    burstShare: 0.7,
    failureRate: 0.3,
    hangRate: 0.05,
    webhookTimeoutSeconds: 1,
    webhookMaxRetries: envNumber('CRASH_WEBHOOK_MAX_RETRIES', 3),
    deliveryGraceMs: 20_000,
    deliveryMaxWaitMs: 15 * 60_000,
    print: log,
  }
}

// ---------------------------------------------------------------------------
// Seeded randomness

/** mulberry32: small, fast, good enough to pick operations and moments. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

// ---------------------------------------------------------------------------
// The ledger

type FormStatus = 'active' | 'completed' | 'cancelled' | 'expired'
const FINAL: ReadonlySet<FormStatus> = new Set(['completed', 'cancelled', 'expired'])

const FIELDS = [
  { key: 'note', type: 'text', label: 'Note', required: true },
  { key: 'n', type: 'number', label: 'A number', config: { min: 0, max: 1000 } },
  { key: 'ok', type: 'checkbox', label: 'OK' },
]

interface Answer {
  nonce: string
  kind: 'json' | 'post'
  n: number
  ok: boolean
  round: number
  /** acked: 201/303; refused: 409/410; doubt: cut off (no reply); committed: found in the database after a restart. */
  outcome: 'sent' | 'acked' | 'refused' | 'doubt' | 'committed' | 'lost'
  /** The response id a 201 gave. */
  responseId?: string
}

interface FormEntry {
  id: string
  title: string
  callback: boolean
  context: Record<string, unknown>
  round: number
  answers: Map<string, Answer>
  /** The acknowledged answer, if any. */
  acked?: Answer
  cancel: 'none' | 'acked' | 'doubt'
  /** When the acknowledged answer or cancel came back (performance.now()), for reads sent later. */
  settledAt?: number
  /** expires_at in ms (null: never), as last acknowledged; and values sent without a reply since. */
  expiresAt: number | null
  expiryInDoubt: number[]
  /** The final states a refusal (409, 410) allows, with why. */
  allowed?: Set<FormStatus>
  allowedWhy: string[]
  /** What the last check found (after a restart): a final state never changes, a response never goes. */
  seenStatus?: FormStatus
  seenResponseId?: string
  seenRound?: number
  /** A PATCH is in flight: no second one at once, so the ledger knows the last expiry. */
  patching: boolean
  /** Known not to be active: the storm rarely picks it. */
  closed: boolean
}

interface PendingCreate {
  key: string
  body: Record<string, unknown>
  nonce: string
  round: number
}

interface Problem {
  round: number | 'end'
  message: string
  /** Form and delivery ids whose intake log lines go with the report. */
  ids: string[]
}

interface Counts {
  creates: number
  answersJson: number
  answersPost: number
  cancels: number
  expiries: number
  reads: number
  refused: number
  doubt: number
  /** Writes cut off by a kill, settled after the restart: found in the database, or not. */
  doubtCommitted: number
  doubtLost: number
  errors5xx: number
}

const zeroCounts = (): Counts => ({
  creates: 0,
  answersJson: 0,
  answersPost: 0,
  cancels: 0,
  expiries: 0,
  reads: 0,
  refused: 0,
  doubt: 0,
  doubtCommitted: 0,
  doubtLost: 0,
  errors5xx: 0,
})

export interface RoundSummary {
  round: number
  killAtMs: number
  counts: Counts
  forms: number
  responses: number
  deliveries: number
  restartMs: number
  samePort: boolean
  /** Requests sent and not answered when the SIGKILL went. */
  inFlightAtKill: { reads: number; writes: number }
  /** Writes sent in a burst just before the kill (0: none). */
  burst: number
  problems: number
}

export interface CrashloopReport {
  config: Omit<CrashloopConfig, 'print'>
  /** Deliveries whose round started more than 1 + max retries attempts, a cut-off last attempt made again (not a violation). */
  overBudgetDeliveries: string[]
  rounds: RoundSummary[]
  totals: Counts
  forms: number
  answered: number
  /** Deliveries expected at the end, and how they went. */
  deliveries: {
    expected: number
    arrived: number
    redelivered: number
    waitedMs: number
    receiverRequests: number
    duplicates: number
  }
  problems: string[]
}

// ---------------------------------------------------------------------------
// HTTP

interface Reply {
  status: number
  headers: Headers
  text: string
  json: any
}

class NetworkError extends Error {}

const apiTime = (text: string | null | undefined) =>
  text === null || text === undefined ? null : Date.parse(`${text}Z`)
const showTime = (ms: number | null) => (ms === null ? 'null' : new Date(ms).toISOString())

// ---------------------------------------------------------------------------
// The flaky receiver

interface Received {
  count: number
  bodies: Set<string>
  formId: string
  responseId: string
  /** Answered 2xx (this many times). */
  delivered: boolean
  okCount: number
}

function startReceiver(
  config: CrashloopConfig,
  random: () => number,
  onProblem: (message: string, ids: string[]) => void,
) {
  const seen = new Map<string, Received>()
  const stats = { requests: 0, ok: 0, failed: 0, hung: 0 }
  let key = ''
  let healthy = false
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 30,
    async fetch(request) {
      const deliveryId = request.headers.get('x-service-delivery') ?? ''
      const signature = request.headers.get('x-service-signature') ?? ''
      const body = await request.text()
      stats.requests++
      let formId = ''
      let responseId = ''
      try {
        const payload = JSON.parse(body) as { form_id?: string; response_id?: string; event?: string }
        formId = String(payload.form_id)
        responseId = String(payload.response_id)
        if (payload.event !== 'form.completed')
          onProblem(`webhook ${deliveryId}: event ${JSON.stringify(payload.event)}, expected "form.completed"`, [
            deliveryId,
          ])
      } catch {
        onProblem(`webhook ${deliveryId}: the body is not JSON: ${body.slice(0, 200)}`, [deliveryId])
      }
      const expected = expectedSignature(key, formId, body)
      if (signature !== expected)
        onProblem(`webhook ${deliveryId} for form ${formId}: X-Service-Signature ${signature} is not ${expected}`, [
          deliveryId,
          formId,
        ])
      let got = seen.get(deliveryId)
      if (!got)
        seen.set(deliveryId, (got = { count: 0, bodies: new Set(), formId, responseId, delivered: false, okCount: 0 }))
      got.count++
      got.bodies.add(body)
      if (!healthy) {
        const r = random()
        if (r < config.hangRate) {
          stats.hung++
          await sleep(config.webhookTimeoutSeconds * 1000 + 500 + random() * 1000)
          return new Response('held too long', { status: 500 })
        }
        if (r < config.hangRate + config.failureRate) {
          stats.failed++
          return new Response('flaky', { status: 500 })
        }
      }
      stats.ok++
      got.delivered = true
      got.okCount++
      return new Response(null, { status: 204 })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    seen,
    stats,
    setKey(k: string) {
      key = k
    },
    heal() {
      healthy = true
    },
    stop: () => server.stop(true),
  }
}

// ---------------------------------------------------------------------------
// The run

/**
 * Runs the whole crash loop: `config.rounds` storms each ended by SIGKILL and
 * checked, then the deliveries. Children and temp dirs are registered in
 * `state` (cleaned up by runBench, or by the caller with disposeBenchState).
 */
export async function runCrashloop(state: BenchState, config: CrashloopConfig): Promise<CrashloopReport> {
  const loop = new Crashloop(state, config)
  try {
    return await loop.run()
  } finally {
    loop.receiver.stop()
  }
}

class Crashloop {
  readonly random: () => number
  readonly receiver: ReturnType<typeof startReceiver>
  readonly forms = new Map<string, FormEntry>()
  readonly pendingCreates: PendingCreate[] = []
  readonly problems: Problem[] = []
  readonly rounds: RoundSummary[] = []
  readonly totals = zeroCounts()
  counts = zeroCounts()
  dir = ''
  child: Child | undefined
  url = ''
  port = 0
  key = ''
  round = 0
  killed = false
  seq = 0
  /** Deliveries whose round started more than 1 + SERVICE_WEBHOOK_MAX_RETRIES attempts (its last one cut off by a kill and made again). */
  readonly overBudget = new Set<string>()
  /** Requests sent and not yet answered: reads and writes. */
  inFlight = { reads: 0, writes: 0 }
  /** Forms the storm may pick for answers, cancels, expiries: not known to be closed. */
  open: string[] = []
  all: string[] = []

  constructor(
    readonly state: BenchState,
    readonly config: CrashloopConfig,
  ) {
    this.random = seededRandom(config.seed)
    this.receiver = startReceiver(config, seededRandom(config.seed ^ 0x5eed), (message, ids) =>
      this.problem(message, ids),
    )
  }

  problem(message: string, ids: string[] = []) {
    this.problems.push({ round: this.round > this.config.rounds ? 'end' : this.round, message, ids })
  }

  pick<T>(items: readonly T[]): T | undefined {
    return items.length === 0 ? undefined : items[Math.floor(this.random() * items.length)]
  }

  get env(): Record<string, string> {
    return {
      SERVICE_WEBHOOK_TIMEOUT: String(this.config.webhookTimeoutSeconds),
      SERVICE_WEBHOOK_MAX_RETRIES: String(this.config.webhookMaxRetries),
      ...(this.config.webhookRetrySchedule ? { SERVICE_WEBHOOK_RETRY_SCHEDULE: this.config.webhookRetrySchedule } : {}),
      SERVICE_WEBHOOK_BLOCK_PRIVATE: 'false',
    }
  }

  async call(
    method: string,
    path: string,
    options: { json?: unknown; form?: string; key?: boolean; headers?: Record<string, string> } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers }
    if (options.key !== false) headers.authorization = `Bearer ${this.key}`
    let body: string | undefined
    if (options.json !== undefined) {
      body = JSON.stringify(options.json)
      headers['content-type'] = 'application/json'
    } else if (options.form !== undefined) {
      body = options.form
      headers['content-type'] = 'application/x-www-form-urlencoded'
    }
    let res: Response
    let text: string
    const kind = method === 'GET' ? 'reads' : 'writes'
    this.inFlight[kind]++
    try {
      res = await fetch(`${this.url}${path}`, {
        method,
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.any([this.state.abort.signal, AbortSignal.timeout(30_000)]),
      })
      text = await res.text()
    } catch (error) {
      if (this.state.abort.signal.aborted) throw error
      throw new NetworkError(`${method} ${path}: ${error instanceof Error ? error.message : String(error)}`)
    } finally {
      this.inFlight[kind]--
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: res.status, headers: res.headers, text, json }
  }

  /** A read made while intake is up and nothing kills it: a network error is retried twice, then it is a failure. */
  async read(path: string): Promise<Reply> {
    for (let tries = 1; ; tries++) {
      try {
        return await this.call('GET', path)
      } catch (error) {
        if (!(error instanceof NetworkError) || tries === 3) throw error
        await sleep(100)
      }
    }
  }

  // -------------------------------------------------------------------------

  async run(): Promise<CrashloopReport> {
    const { config } = this
    const started = performance.now()
    this.dir = makeTempDir(this.state, 'crashloop')
    config.print(
      `crashloop: ${config.rounds} rounds, seed ${config.seed} (CRASH_SEED=${config.seed} repeats the choices and kill moments; the interleaving is the machine's), ` +
        `${config.workers} workers, kill at ${config.stormMinMs}..${config.stormMaxMs} ms, webhook timeout ${config.webhookTimeoutSeconds} s, ${config.webhookMaxRetries} retries`,
    )
    config.print(
      `database and logs in ${this.dir}; receiver on ${this.receiver.url} (fails ${config.failureRate * 100}%, holds ${config.hangRate * 100}% past the timeout)`,
    )

    this.child = startIntake(this.state, this.dir, this.env, {
      logToFile: true,
      logName: 'intake.0.log',
      binary: config.binary,
    })
    const ready = await whenReady(this.child)
    this.url = ready.url
    this.port = ready.port
    this.key = ready.key
    this.receiver.setKey(ready.key)
    config.print(`intake ${ready.version} (pid ${this.child.proc.pid}) on ${ready.url}`)

    for (this.round = 1; this.round <= config.rounds; this.round++) await this.oneRound()
    const deliveries = await this.finish()

    const formsTotal = this.forms.size
    const answered = [...this.forms.values()].filter((f) => f.seenStatus === 'completed').length
    config.print('')
    config.print(
      `summary: ${config.rounds} rounds in ${fmt((performance.now() - started) / 1000, 1)} s, seed ${config.seed}; ` +
        `acknowledged ${fmt(this.totals.creates)} creates, ${fmt(this.totals.answersJson + this.totals.answersPost)} answers ` +
        `(${fmt(this.totals.answersJson)} JSON, ${fmt(this.totals.answersPost)} form posts), ${fmt(this.totals.cancels)} cancels, ` +
        `${fmt(this.totals.expiries)} expiry changes, ${fmt(this.totals.reads)} reads; ${fmt(this.totals.refused)} refused (409/410), ` +
        `${fmt(this.totals.doubt)} writes cut off by a kill (after the restart ${fmt(this.totals.doubtCommitted)} found committed, ${fmt(this.totals.doubtLost)} not)`,
    )
    config.print(
      `forms at the end: ${fmt(formsTotal)} (${fmt(answered)} answered); deliveries: ${fmt(deliveries.expected)} expected, ${fmt(deliveries.arrived)} arrived, ` +
        `${fmt(deliveries.redelivered)} redelivered after ending failed, ${fmt(deliveries.receiverRequests)} requests at the receiver ` +
        `(${fmt(deliveries.duplicates)} more 2xx for an id already answered 2xx: at least once, deduped by X-Service-Delivery), all in within ${fmt(deliveries.waitedMs / 1000, 1)} s of the receiver turning healthy`,
    )
    if (this.overBudget.size > 0) {
      config.print(
        `note: ${this.overBudget.size} deliveries started more than ${config.webhookMaxRetries + 1} attempts (1 + SERVICE_WEBHOOK_MAX_RETRIES) in one round: ` +
          `the round's last attempt was cut off by a kill, counted, and made again after its lease ran out (${[...this.overBudget].slice(0, 5).join(', ')}${this.overBudget.size > 5 ? ', ...' : ''})`,
      )
    }
    config.print(`machine: ${machineLine()}`)
    const problems = this.describeProblems()
    config.print(problems.length === 0 ? 'verdict: no violation' : `verdict: ${problems.length} violation(s)`)
    const { print: _print, ...rest } = config
    return {
      config: rest,
      overBudgetDeliveries: [...this.overBudget],
      rounds: this.rounds,
      totals: this.totals,
      forms: formsTotal,
      answered,
      deliveries,
      problems,
    }
  }

  /** One storm, the kill, the file check, the restart, the API check. */
  async oneRound() {
    const { config } = this
    const problemsBefore = this.problems.length
    this.counts = zeroCounts()
    this.killed = false
    const killAtMs = Math.round(config.stormMinMs + this.random() * (config.stormMaxMs - config.stormMinMs))
    const child = this.child!

    const workers = Array.from({ length: config.workers }, () => this.worker())
    await sleep(killAtMs)
    // Most rounds: a burst of writes just before the kill, so that it lands while some are being
    // committed or answered (the storm alone has only a few writes in flight at any moment).
    const burst: Array<Promise<void>> = []
    let burstLeadMs = 0
    if (this.random() < config.burstShare) {
      const size = 8 + Math.floor(this.random() * 24)
      for (let i = 0; i < size; i++) {
        const r = this.random()
        burst.push(
          r < 0.25 ? this.create() : r < 0.55 ? this.answer('json') : r < 0.85 ? this.answer('post') : this.cancel(),
        )
      }
      burstLeadMs = this.random() * 10
      await sleep(burstLeadMs)
    }
    this.killed = true
    child.proc.kill('SIGKILL')
    const inFlightAtKill = { ...this.inFlight }
    await child.proc.exited
    await Promise.all([...workers, ...burst])
    if (child.proc.signalCode !== 'SIGKILL') {
      this.problem(
        `intake was not killed by the SIGKILL sent at ${killAtMs} ms: it had exited already (code ${child.proc.exitCode}, signal ${child.proc.signalCode}); stderr: ${child.err.tail.slice(-2000)}`,
      )
    }
    const stderr = child.err.tail.trim()
    if (stderr) this.problem(`intake wrote on stderr before the kill: ${stderr.slice(-2000)}`)

    const file = this.checkDatabaseFile()

    const restartStarted = performance.now()
    const samePort = await this.restart()
    const restartMs = performance.now() - restartStarted

    await this.checkThroughApi(file.forms)

    for (const [name, n] of Object.entries(this.counts)) this.totals[name as keyof Counts] += n
    const c = this.counts
    const summary: RoundSummary = {
      round: this.round,
      killAtMs,
      counts: c,
      forms: file.forms,
      responses: file.responses,
      deliveries: file.deliveries,
      restartMs,
      samePort,
      inFlightAtKill,
      burst: burst.length,
      problems: this.problems.length - problemsBefore,
    }
    this.rounds.push(summary)
    const width = String(config.rounds).length
    config.print(
      `round ${String(this.round).padStart(width)}/${config.rounds}: killed at ${fmt(killAtMs / 1000, 2)} s ` +
        `${burst.length ? `${fmt(burstLeadMs, 1)} ms after a burst of ${burst.length} writes ` : ''}(${inFlightAtKill.writes} writes, ${inFlightAtKill.reads} reads in flight) | acked ${c.creates} creates, ` +
        `${c.answersJson + c.answersPost} answers (${c.answersJson} json, ${c.answersPost} post), ${c.cancels} cancels, ${c.expiries} expiries, ` +
        `${c.reads} reads; ${c.refused} refused; ${c.doubt} cut off (${c.doubtCommitted} of them committed) | file: ${fmt(file.forms)} forms, ${fmt(file.responses)} responses, ` +
        `${fmt(file.deliveries)} deliveries, ${file.ok ? 'integrity ok' : 'INTEGRITY FAILED'} | restart ${fmt(restartMs)} ms${samePort ? ', same port' : `, new port ${this.port}`} | ` +
        `${summary.problems === 0 ? 'checks ok' : `${summary.problems} VIOLATION(S)`}`,
    )
  }

  /** Restarts intake on the database; the same port if it can be bound, else another. */
  async restart(): Promise<boolean> {
    const logName = `intake.${this.round}.log`
    let child = startIntake(this.state, this.dir, this.env, {
      port: this.port,
      logToFile: true,
      logName,
      binary: this.config.binary,
    })
    let samePort = true
    let ready: Ready
    try {
      ready = await whenReady(child, 15_000, { key: this.key })
    } catch (error) {
      if (alive(child) || !/Cannot listen/.test(child.err.tail)) {
        throw new BenchError(
          `intake did not start again after the kill of round ${this.round}: ${error instanceof Error ? error.message : String(error)}\n${child.err.tail}`,
        )
      }
      samePort = false
      child = startIntake(this.state, this.dir, this.env, {
        port: 0,
        logToFile: true,
        logName: `intake.${this.round}b.log`,
        binary: this.config.binary,
      })
      ready = await whenReady(child, 15_000, { key: this.key })
    }
    this.state.children.delete(this.child!)
    this.child = child
    this.url = ready.url
    this.port = ready.port
    return samePort
  }

  // -------------------------------------------------------------------------
  // The storm

  async worker() {
    while (!this.killed) {
      try {
        await this.operation()
      } catch (error) {
        if (this.state.abort.signal.aborted) return
        throw error
      }
      await sleep(this.random() * this.config.thinkMaxMs)
    }
  }

  /** An unexpected reply or a cut-off request: the latter is expected only once the kill was sent. */
  unexpected(what: string, reply: Reply | Error, ids: string[] = []) {
    if (reply instanceof Error) {
      if (this.killed) return
      this.problem(`${what}: the request failed before any kill (intake unreachable?): ${reply.message}`, ids)
      return
    }
    if (reply.status >= 500) this.counts.errors5xx++
    this.problem(`${what}: unexpected ${reply.status} ${reply.text.slice(0, 300)}`, ids)
  }

  async operation() {
    const r = this.random()
    if (r < 0.14) return this.create()
    if (r < 0.29) return this.answer('json')
    if (r < 0.43) return this.answer('post')
    if (r < 0.47) return this.doubleAnswer()
    if (r < 0.53) return this.cancel()
    if (r < 0.6) return this.shortExpiry()
    return this.readSomething()
  }

  /** A form for a write: mostly an open one; sometimes any (likely closed), to hit 409/410 too. */
  pickForm(anyForm: boolean): FormEntry | undefined {
    const id = anyForm || this.open.length === 0 ? this.pick(this.all) : this.pick(this.open)
    return id === undefined ? undefined : this.forms.get(id)
  }

  async create() {
    const nonce = `${this.config.seed}-${this.round}-${++this.seq}`
    const r = this.random()
    const body: Record<string, unknown> = {
      title: `crashloop ${nonce}`,
      fields: FIELDS,
      context: { nonce, round: this.round },
      expires_in: r < 0.15 ? null : r < 0.3 ? '1m' : '1h',
    }
    if (this.random() < 0.6) {
      body.callback_url = `${this.receiver.url}/hooks/${nonce}`
      body.callback_metadata = { nonce }
    }
    const key = `crashloop-${nonce}`
    let reply: Reply
    try {
      reply = await this.call('POST', '/api/v1/forms', { json: body, headers: { 'idempotency-key': key } })
    } catch (error) {
      if (!(error instanceof NetworkError)) throw error
      if (this.killed) {
        this.counts.doubt++
        this.pendingCreates.push({ key, body, nonce, round: this.round })
      } else this.unexpected(`create ${nonce}`, error)
      return
    }
    if (reply.status !== 201 || typeof reply.json?.id !== 'string') return this.unexpected(`create ${nonce}`, reply)
    this.counts.creates++
    this.addForm(reply.json, body)
  }

  addForm(
    created: { id: string; status: string; expires_at: string | null; context: unknown },
    body: Record<string, unknown>,
  ) {
    const entry: FormEntry = {
      id: created.id,
      title: body.title as string,
      callback: body.callback_url !== undefined,
      context: body.context as Record<string, unknown>,
      round: this.round,
      answers: new Map(),
      cancel: 'none',
      expiresAt: apiTime(created.expires_at),
      expiryInDoubt: [],
      allowedWhy: [],
      patching: false,
      closed: false,
    }
    if (created.status !== 'active')
      this.problem(`create ${entry.title}: 201 with status ${created.status}, expected active`, [entry.id])
    if (!Bun.deepEquals(created.context, entry.context)) {
      this.problem(
        `create ${entry.title}: 201 with context ${JSON.stringify(created.context)}, expected ${JSON.stringify(entry.context)}`,
        [entry.id],
      )
    }
    this.forms.set(entry.id, entry)
    this.open.push(entry.id)
    this.all.push(entry.id)
  }

  /** A refusal says the form was in one of `statuses` then: final states never change, so it must be in one still. */
  constrain(entry: FormEntry, statuses: FormStatus[], why: string) {
    const next = new Set(statuses.filter((s) => entry.allowed === undefined || entry.allowed.has(s)))
    entry.allowed = next
    entry.allowedWhy.push(why)
    entry.closed = true
    if (next.size === 0)
      this.problem(`form ${entry.id}: the refusals contradict each other: ${entry.allowedWhy.join('; ')}`, [entry.id])
  }

  async answer(kind: 'json' | 'post', target?: FormEntry) {
    const entry = target ?? this.pickForm(this.random() < 0.1)
    if (!entry) return this.create()
    const nonce = `${this.config.seed}-${this.round}-${++this.seq}`
    const answer: Answer = {
      nonce,
      kind,
      n: this.seq % 1000,
      ok: this.random() < 0.5,
      round: this.round,
      outcome: 'sent',
    }
    entry.answers.set(nonce, answer)
    const what = `${kind === 'json' ? 'JSON answer' : 'form post'} ${nonce} to form ${entry.id}`
    let reply: Reply
    try {
      reply =
        kind === 'json'
          ? await this.call('POST', `/f/${entry.id}`, { key: false, json: { note: nonce, n: answer.n, ok: answer.ok } })
          : await this.call('POST', `/f/${entry.id}`, {
              key: false,
              form: new URLSearchParams({
                note: nonce,
                n: String(answer.n),
                ...(answer.ok ? { ok: 'on' } : {}),
                _submit: '1',
              }).toString(),
            })
    } catch (error) {
      if (!(error instanceof NetworkError)) throw error
      answer.outcome = 'doubt'
      if (this.killed) this.counts.doubt++
      else this.unexpected(what, error, [entry.id])
      return
    }
    const acked = kind === 'json' ? reply.status === 201 : reply.status === 303
    if (acked) {
      if (kind === 'json' && (reply.json?.form_id !== entry.id || typeof reply.json?.id !== 'string')) {
        this.problem(`${what}: 201 with an unexpected receipt ${reply.text.slice(0, 300)}`, [entry.id])
      }
      if (kind === 'post' && reply.headers.get('location') !== `/f/${entry.id}`) {
        this.problem(`${what}: 303 to ${reply.headers.get('location')}, expected /f/${entry.id}`, [entry.id])
      }
      answer.outcome = 'acked'
      answer.responseId = kind === 'json' ? reply.json?.id : undefined
      if (kind === 'json') this.counts.answersJson++
      else this.counts.answersPost++
      if (entry.acked) {
        this.problem(
          `form ${entry.id}: two answers acknowledged: ${entry.acked.kind} ${entry.acked.nonce} and ${kind} ${nonce} (a form takes one)`,
          [entry.id],
        )
      }
      if (entry.cancel === 'acked')
        this.problem(`form ${entry.id}: ${what} acknowledged after a cancel was acknowledged (200)`, [entry.id])
      entry.acked = answer
      entry.settledAt = performance.now()
      entry.closed = true
      return
    }
    if (reply.status === 409) {
      answer.outcome = 'refused'
      this.counts.refused++
      return this.constrain(entry, ['completed'], `${what}: 409 (answered already)`)
    }
    if (reply.status === 410) {
      answer.outcome = 'refused'
      this.counts.refused++
      return this.constrain(entry, ['cancelled', 'expired'], `${what}: 410 (cancelled or expired)`)
    }
    answer.outcome = 'refused'
    this.unexpected(what, reply, [entry.id])
  }

  /** Two answers to one open form at once: at most one may be acknowledged. */
  async doubleAnswer() {
    const entry = this.pickForm(false)
    if (!entry) return this.create()
    await Promise.all([this.answer('json', entry), this.answer('post', entry)])
  }

  async cancel() {
    const entry = this.pickForm(this.random() < 0.1)
    if (!entry || entry.patching) return this.readSomething()
    entry.patching = true
    const what = `cancel of form ${entry.id}`
    try {
      const reply = await this.call('PATCH', `/api/v1/forms/${entry.id}`, { json: { status: 'cancelled' } })
      if (reply.status === 200) {
        this.counts.cancels++
        if (reply.json?.status !== 'cancelled')
          this.problem(`${what}: 200 with status ${reply.json?.status}, expected cancelled`, [entry.id])
        if (entry.acked)
          this.problem(
            `form ${entry.id}: cancel acknowledged (200) although answer ${entry.acked.nonce} was acknowledged`,
            [entry.id],
          )
        entry.cancel = 'acked'
        entry.settledAt ??= performance.now()
        entry.closed = true
      } else if (reply.status === 409) {
        this.counts.refused++
        this.constrain(entry, ['completed', 'expired'], `${what}: 409`)
      } else this.unexpected(what, reply, [entry.id])
    } catch (error) {
      if (!(error instanceof NetworkError)) throw error
      if (this.killed) {
        // A cancel of a form whose cancel was acknowledged is a no-op either way: nothing in doubt.
        if (entry.cancel === 'none') {
          this.counts.doubt++
          entry.cancel = 'doubt'
        }
      } else this.unexpected(what, error, [entry.id])
    } finally {
      entry.patching = false
    }
  }

  async shortExpiry() {
    const entry = this.pickForm(this.random() < 0.05)
    if (!entry || entry.patching) return this.readSomething()
    entry.patching = true
    const at = Date.now() + 1000 + Math.floor(this.random() * 1000)
    const what = `expiry change of form ${entry.id} to ${showTime(at)}`
    try {
      const reply = await this.call('PATCH', `/api/v1/forms/${entry.id}`, {
        json: { expires_at: new Date(at).toISOString() },
      })
      if (reply.status === 200) {
        this.counts.expiries++
        if (apiTime(reply.json?.expires_at) !== at)
          this.problem(`${what}: 200 with expires_at ${reply.json?.expires_at}`, [entry.id])
        entry.expiresAt = at
        entry.expiryInDoubt = []
      } else if (reply.status === 409) {
        this.counts.refused++
        this.constrain(entry, ['completed', 'cancelled', 'expired'], `${what}: 409`)
      } else if (reply.status === 422 && /in the future/.test(reply.text)) {
        // The request took over a second to be read: refused, nothing changed.
        this.counts.refused++
      } else this.unexpected(what, reply, [entry.id])
    } catch (error) {
      if (!(error instanceof NetworkError)) throw error
      if (this.killed) {
        this.counts.doubt++
        entry.expiryInDoubt.push(at)
      } else this.unexpected(what, error, [entry.id])
    } finally {
      entry.patching = false
    }
  }

  async readSomething() {
    const r = this.random()
    const entry = this.pickForm(this.random() < 0.3)
    const sentAt = performance.now()
    let path: string
    if (r < 0.3 && entry) path = `/api/v1/forms/${entry.id}`
    else if (r < 0.55 && entry) path = `/api/v1/forms/${entry.id}/responses${this.random() < 0.3 ? '?wait=1' : ''}`
    else if (r < 0.65 && entry) path = `/api/v1/forms/${entry.id}/deliveries`
    else if (r < 0.8 && entry) path = `/f/${entry.id}`
    else
      path = `/api/v1/forms?limit=${1 + Math.floor(this.random() * 50)}${this.random() < 0.5 ? `&status=${this.pick(['active', 'completed', 'cancelled', 'expired'])}` : ''}`
    let reply: Reply
    try {
      reply = await this.call('GET', path, { key: !path.startsWith('/f/') })
    } catch (error) {
      if (!(error instanceof NetworkError)) throw error
      this.unexpected(`GET ${path}`, error, entry ? [entry.id] : [])
      return
    }
    const pageOk = path.startsWith('/f/') && (reply.status === 200 || reply.status === 410)
    if (reply.status !== 200 && !pageOk) return this.unexpected(`GET ${path}`, reply, entry ? [entry.id] : [])
    this.counts.reads++
    // Reads sent after an acknowledged answer or cancel see it.
    if (!entry || entry.settledAt === undefined || entry.settledAt > sentAt) return
    if (path === `/api/v1/forms/${entry.id}`) {
      const expected = entry.acked ? 'completed' : 'cancelled'
      if (reply.json?.status !== expected) {
        this.problem(
          `GET form ${entry.id} sent after its ${expected === 'completed' ? 'answer' : 'cancel'} was acknowledged: status ${reply.json?.status}`,
          [entry.id],
        )
      }
    } else if (path.startsWith(`/api/v1/forms/${entry.id}/responses`) && entry.acked) {
      const got = reply.json as Array<{ data?: { note?: string } }>
      if (!Array.isArray(got) || got.length !== 1 || got[0]?.data?.note !== entry.acked.nonce) {
        this.problem(
          `GET responses of form ${entry.id} sent after answer ${entry.acked.nonce} was acknowledged: ${reply.text.slice(0, 300)}`,
          [entry.id],
        )
      }
    }
  }

  // -------------------------------------------------------------------------
  // Checks: the database file, with intake stopped

  checkDatabaseFile(): { ok: boolean; forms: number; responses: number; deliveries: number } {
    const path = join(this.dir, 'intake.db')
    const now = Date.now()
    const db = new Database(path, { readonly: true })
    try {
      const integrity = db.query('PRAGMA integrity_check').all() as Array<{ integrity_check: string }>
      const ok = integrity.length === 1 && integrity[0]!.integrity_check === 'ok'
      if (!ok) this.problem(`PRAGMA integrity_check after the kill: ${JSON.stringify(integrity).slice(0, 2000)}`)
      const foreignKeys = db.query('PRAGMA foreign_key_check').all()
      if (foreignKeys.length > 0)
        this.problem(`PRAGMA foreign_key_check after the kill: ${JSON.stringify(foreignKeys).slice(0, 2000)}`)

      const forms = db
        .query(
          `SELECT id, status, expires_at, context IS NOT NULL AS has_context, callback_url IS NOT NULL AS has_callback FROM forms`,
        )
        .all() as Array<{
        id: string
        status: FormStatus
        expires_at: number | null
        has_context: number
        has_callback: number
      }>
      const responses = db
        .query(`SELECT id, form_id, json_extract(data, '$.note') AS note, submitted_at FROM responses`)
        .all() as Array<{ id: string; form_id: string; note: string; submitted_at: number }>
      const deliveries = db
        .query(
          `SELECT id, form_id, response_id, status, attempts, round_attempts, next_attempt_at, delivered_at,
                  json_extract(payload, '$.response_id') AS payload_response, json_extract(payload, '$.form_id') AS payload_form
             FROM deliveries`,
        )
        .all() as Array<{
        id: string
        form_id: string
        response_id: string
        status: string
        attempts: number
        round_attempts: number
        next_attempt_at: number | null
        delivered_at: number | null
        payload_response: string
        payload_form: string
      }>

      const formById = new Map(forms.map((f) => [f.id, f]))
      const responsesByForm = new Map<string, typeof responses>()
      for (const r of responses) responsesByForm.set(r.form_id, [...(responsesByForm.get(r.form_id) ?? []), r])
      const deliveriesByResponse = new Map<string, typeof deliveries>()
      for (const d of deliveries)
        deliveriesByResponse.set(d.response_id, [...(deliveriesByResponse.get(d.response_id) ?? []), d])

      const where = 'in the database file after the kill'
      // The state rules, row by row.
      for (const form of forms) {
        const own = responsesByForm.get(form.id) ?? []
        if (form.status === 'completed' && own.length !== 1)
          this.problem(`form ${form.id} is completed with ${own.length} responses ${where}`, [form.id])
        if (form.status !== 'completed' && own.length !== 0)
          this.problem(`form ${form.id} is ${form.status} with ${own.length} response(s) ${where}`, [form.id])
        if (form.status === 'expired' && (form.expires_at === null || form.expires_at > now)) {
          this.problem(
            `form ${form.id} is written expired ${where} but expires_at is ${showTime(form.expires_at)} (now ${showTime(now)})`,
            [form.id],
          )
        }
        if (form.status === 'expired' && form.has_context)
          this.problem(`form ${form.id} is written expired ${where} but keeps its context`, [form.id])
        for (const response of own) {
          if (form.expires_at !== null && response.submitted_at >= form.expires_at) {
            this.problem(
              `response ${response.id} of form ${form.id} was submitted at ${showTime(response.submitted_at)}, not before the form's expiry ${showTime(form.expires_at)}`,
              [form.id],
            )
          }
          const sent = deliveriesByResponse.get(response.id) ?? []
          if (form.has_callback && sent.length !== 1)
            this.problem(
              `response ${response.id} of form ${form.id} (with a callback) has ${sent.length} deliveries ${where}, expected 1`,
              [form.id],
            )
          if (!form.has_callback && sent.length !== 0)
            this.problem(
              `response ${response.id} of form ${form.id} (no callback) has ${sent.length} deliveries ${where}`,
              [form.id],
            )
        }
      }
      const responseById = new Map(responses.map((r) => [r.id, r]))
      for (const d of deliveries) {
        const response = responseById.get(d.response_id)
        if (d.form_id !== response?.form_id || d.payload_form !== d.form_id || d.payload_response !== d.response_id) {
          this.problem(
            `delivery ${d.id} ${where}: form ${d.form_id}, response ${d.response_id}, payload names form ${d.payload_form} and response ${d.payload_response}`,
            [d.id, d.form_id],
          )
        }
        const shape =
          d.status === 'delivered'
            ? d.delivered_at !== null && d.next_attempt_at === null
            : d.status === 'pending'
              ? d.next_attempt_at !== null
              : d.next_attempt_at === null
        if (!shape)
          this.problem(
            `delivery ${d.id} ${where} is ${d.status} with next_attempt_at ${d.next_attempt_at} and delivered_at ${d.delivered_at}`,
            [d.id, d.form_id],
          )
        if (d.round_attempts > d.attempts) {
          this.problem(
            `delivery ${d.id} ${where}: round_attempts ${d.round_attempts} above attempts ${d.attempts} (the total)`,
            [d.id, d.form_id],
          )
        }
        // Not a violation: a round's last attempt cut off by the kill counts and is made again (docs/webhooks.md: Durable, Delivery log).
        if (d.round_attempts > this.config.webhookMaxRetries + 1) this.overBudget.add(d.id)
      }

      // Everything acknowledged is in the file.
      for (const entry of this.forms.values()) {
        const form = formById.get(entry.id)
        if (!form) {
          this.problem(
            `form ${entry.id} (${entry.title}), created with a 201 in round ${entry.round}, is missing ${where}`,
            [entry.id],
          )
          continue
        }
        const effective: FormStatus =
          form.status === 'active' && form.expires_at !== null && form.expires_at <= now ? 'expired' : form.status
        const own = responsesByForm.get(entry.id) ?? []
        if (entry.acked) {
          const ack = entry.acked
          const found = own.find(
            (r) => r.note === ack.nonce && (ack.responseId === undefined || r.id === ack.responseId),
          )
          if (!found) {
            this.problem(
              `form ${entry.id}: the ${ack.kind === 'json' ? `JSON answer ${ack.nonce} acknowledged with 201 as response ${ack.responseId}` : `form post ${ack.nonce} acknowledged with 303`} ` +
                `(round ${ack.round}) is missing ${where}: found ${own.length === 0 ? 'no response' : own.map((r) => `${r.id} (note ${r.note})`).join(', ')}, form status ${form.status}`,
              [entry.id],
            )
          }
        }
        if (entry.cancel === 'acked' && form.status !== 'cancelled') {
          this.problem(`form ${entry.id}: its cancel was acknowledged (200) but it is ${form.status} ${where}`, [
            entry.id,
          ])
        }
        if (entry.seenStatus && FINAL.has(entry.seenStatus) && effective !== entry.seenStatus) {
          this.problem(
            `form ${entry.id} read ${entry.seenStatus} after round ${entry.seenRound}, now ${effective} ${where} (a final state never changes)`,
            [entry.id],
          )
        }
        if (entry.seenResponseId && !own.some((r) => r.id === entry.seenResponseId)) {
          this.problem(
            `form ${entry.id}: response ${entry.seenResponseId}, read after round ${entry.seenRound}, is missing ${where}`,
            [entry.id],
          )
        }
      }
      return { ok, forms: forms.length, responses: responses.length, deliveries: deliveries.length }
    } finally {
      db.close()
    }
  }

  // -------------------------------------------------------------------------
  // Checks: through the API, after the restart

  async checkThroughApi(formsInFile: number) {
    const entries = [...this.forms.values()]
    const seen = new Map<string, { status: FormStatus; responseId?: string; expiresAt: number | null }>()
    await pool(entries.length, 32, async (i) => {
      const entry = entries[i]!
      const result = await this.checkForm(entry)
      if (result) seen.set(entry.id, result)
    })

    // Every list page: each form once, as many as the file held, none unknown.
    const listed = new Map<string, { status: FormStatus; title: string; expiresAt: number | null }>()
    let query = 'limit=100'
    for (let pages = 0; ; pages++) {
      const readStart = Date.now()
      const reply = await this.read(`/api/v1/forms?${query}`)
      if (reply.status !== 200 || !Array.isArray(reply.json)) {
        this.problem(`GET /api/v1/forms?${query} after the restart: ${reply.status} ${reply.text.slice(0, 300)}`)
        break
      }
      for (const item of reply.json as Array<{
        id: string
        status: FormStatus
        title: string
        expires_at: string | null
      }>) {
        if (listed.has(item.id))
          this.problem(`form ${item.id} is listed twice in the list pages after the restart`, [item.id])
        const expiresAt = apiTime(item.expires_at)
        listed.set(item.id, { status: item.status, title: item.title, expiresAt })
        if (item.status === 'active' && expiresAt !== null && expiresAt <= readStart) {
          this.problem(
            `form ${item.id} is listed active after the restart, but its expires_at ${item.expires_at} had passed`,
            [item.id],
          )
        }
        const checked = seen.get(item.id)
        if (checked && checked.status !== item.status && !(checked.status === 'active' && item.status === 'expired')) {
          this.problem(`form ${item.id}: GET says ${checked.status}, the list says ${item.status}`, [item.id])
        }
      }
      const next = /<[^>]*\?([^>]*)>;\s*rel="next"/.exec(reply.headers.get('link') ?? '')
      if (!next) break
      query = next[1]!
      if (pages > 10_000) throw new BenchError('more than 10,000 list pages: the cursor does not advance')
    }
    if (listed.size !== formsInFile) {
      this.problem(`the list pages after the restart hold ${listed.size} forms, the database file held ${formsInFile}`)
    }
    for (const entry of entries) {
      if (!listed.has(entry.id))
        this.problem(`form ${entry.id} (acknowledged) is missing from the list pages after the restart`, [entry.id])
    }

    // Creates cut off by the kill: sent again with their Idempotency-Key.
    const byTitle = new Map<string, string[]>()
    for (const [id, item] of listed) byTitle.set(item.title, [...(byTitle.get(item.title) ?? []), id])
    const pending = this.pendingCreates.splice(0)
    for (const create of pending) {
      const title = create.body.title as string
      const committed = byTitle.get(title) ?? []
      if (committed.length > 1)
        this.problem(
          `create ${create.nonce} (cut off in round ${create.round}) made ${committed.length} forms: ${committed.join(', ')}`,
          committed,
        )
      let reply: Reply
      try {
        reply = await this.call('POST', '/api/v1/forms', {
          json: create.body,
          headers: { 'idempotency-key': create.key },
        })
      } catch (error) {
        this.problem(
          `create ${create.nonce} sent again after the restart: ${error instanceof Error ? error.message : String(error)}`,
        )
        continue
      }
      if (reply.status !== 201 || typeof reply.json?.id !== 'string') {
        this.problem(
          `create ${create.nonce} sent again with its Idempotency-Key after the restart: ${reply.status} ${reply.text.slice(0, 300)}`,
        )
        continue
      }
      const replayed = reply.headers.get('idempotent-replayed') === 'true'
      const id = reply.json.id as string
      this.counts[replayed ? 'doubtCommitted' : 'doubtLost']++
      if (committed.length > 0 && (!replayed || id !== committed[0])) {
        this.problem(
          `create ${create.nonce} was committed before the kill (form ${committed[0]}), but sending it again with its Idempotency-Key gave ` +
            `${replayed ? `form ${id}, replayed` : `a new form ${id}`}`,
          [committed[0]!, id],
        )
      }
      if (committed.length === 0 && replayed) {
        this.problem(
          `create ${create.nonce}: no such form in the list pages, yet its Idempotency-Key replays form ${id}`,
          [id],
        )
      }
      if (committed.length === 0 || id !== committed[0])
        listed.set(id, { status: 'active', title, expiresAt: apiTime(reply.json.expires_at) })
      this.addForm(reply.json, create.body)
      const entry = this.forms.get(id)!
      entry.round = create.round
      const result = await this.checkForm(entry)
      if (result) seen.set(id, result)
    }
    for (const [id, item] of listed) {
      if (!this.forms.has(id))
        this.problem(
          `form ${id} (${item.title}, ${item.status}) is in the list pages, but nothing this run sent made it`,
          [id],
        )
    }

    // What was in doubt is settled now: what the database holds after a restart is committed.
    for (const entry of this.forms.values()) {
      const found = seen.get(entry.id)
      if (!found) continue
      entry.seenStatus = found.status
      entry.seenResponseId = found.responseId
      entry.seenRound = this.round
      for (const at of entry.expiryInDoubt) this.counts[at === found.expiresAt ? 'doubtCommitted' : 'doubtLost']++
      entry.expiresAt = found.expiresAt
      entry.expiryInDoubt = []
      if (entry.cancel === 'doubt') {
        entry.cancel = found.status === 'cancelled' ? 'acked' : 'none'
        this.counts[entry.cancel === 'acked' ? 'doubtCommitted' : 'doubtLost']++
      }
      for (const answer of entry.answers.values()) {
        if (answer.outcome === 'doubt') {
          answer.outcome = 'lost'
          this.counts.doubtLost++
        }
      }
      entry.closed = found.status !== 'active'
    }
    this.open = [...this.forms.values()].filter((e) => !e.closed).map((e) => e.id)
  }

  /** One form through the API, against the ledger; what was found, or undefined when the form could not be read. */
  async checkForm(
    entry: FormEntry,
  ): Promise<{ status: FormStatus; responseId?: string; expiresAt: number | null } | undefined> {
    const ids = [entry.id]
    const readStart = Date.now()
    const formReply = await this.read(`/api/v1/forms/${entry.id}`)
    const responsesReply = await this.read(`/api/v1/forms/${entry.id}/responses`)
    const readEnd = Date.now()
    if (formReply.status !== 200) {
      this.problem(
        `form ${entry.id} (${entry.title}), created with a 201 in round ${entry.round}: GET after the restart is ${formReply.status} ${formReply.text.slice(0, 200)}`,
        ids,
      )
      return undefined
    }
    if (responsesReply.status !== 200 || !Array.isArray(responsesReply.json)) {
      this.problem(
        `GET responses of form ${entry.id} after the restart: ${responsesReply.status} ${responsesReply.text.slice(0, 200)}`,
        ids,
      )
      return undefined
    }
    const form = formReply.json as { status: FormStatus; expires_at: string | null; context: unknown }
    const responses = responsesReply.json as Array<{
      id: string
      form_id: string
      data: { note?: string; n?: number; ok?: boolean }
      submitted_at: string
    }>
    const status = form.status
    const expiresAt = apiTime(form.expires_at)
    const where = `after the restart (round ${this.round})`

    // (a) the acknowledged answer is there, exactly as sent.
    if (entry.acked) {
      const ack = entry.acked
      const got = responses[0]
      const expectedData = { note: ack.nonce, n: ack.n, ok: ack.ok }
      if (
        responses.length !== 1 ||
        !got ||
        got.data?.note !== ack.nonce ||
        (ack.responseId !== undefined && got.id !== ack.responseId)
      ) {
        this.problem(
          `form ${entry.id}: the ${ack.kind === 'json' ? `JSON answer acknowledged with 201 as response ${ack.responseId}` : 'form post acknowledged with 303'} ` +
            `(note ${ack.nonce}, round ${ack.round}) is missing ${where}: GET responses gave ${responsesReply.text.slice(0, 300)}; form status ${status}`,
          ids,
        )
      } else if (!Bun.deepEquals(got.data, expectedData, true) || got.form_id !== entry.id) {
        this.problem(
          `form ${entry.id}: response ${got.id} holds ${JSON.stringify(got.data)} for form ${got.form_id}, sent ${JSON.stringify(expectedData)}`,
          ids,
        )
      }
    }
    // (b) the state rules.
    if (status === 'completed' && responses.length !== 1)
      this.problem(`form ${entry.id} is completed with ${responses.length} responses ${where}`, ids)
    if (status !== 'completed' && responses.length !== 0)
      this.problem(`form ${entry.id} is ${status} with ${responses.length} response(s) ${where}`, ids)
    if (entry.acked && status !== 'completed')
      this.problem(
        `form ${entry.id}: its answer ${entry.acked.nonce} was acknowledged, but it is ${status} ${where}`,
        ids,
      )
    if (entry.cancel === 'acked' && status !== 'cancelled')
      this.problem(`form ${entry.id}: its cancel was acknowledged (200), but it is ${status} ${where}`, ids)
    if (entry.allowed && !entry.allowed.has(status)) {
      this.problem(
        `form ${entry.id} is ${status} ${where}, but earlier refusals said it was already ${[...entry.allowed].join(' or ')}: ${entry.allowedWhy.join('; ')}`,
        ids,
      )
    }
    if (entry.seenStatus && FINAL.has(entry.seenStatus) && status !== entry.seenStatus) {
      this.problem(
        `form ${entry.id} read ${entry.seenStatus} after round ${entry.seenRound}, now ${status} ${where} (a final state never changes)`,
        ids,
      )
    }
    if (entry.seenResponseId && responses[0]?.id !== entry.seenResponseId) {
      this.problem(
        `form ${entry.id}: response ${entry.seenResponseId}, read after round ${entry.seenRound}, is now ${responses[0]?.id ?? 'missing'} ${where}`,
        ids,
      )
    }
    const candidates = [entry.expiresAt, ...entry.expiryInDoubt]
    if (!candidates.includes(expiresAt)) {
      this.problem(
        `form ${entry.id}: expires_at is ${form.expires_at} ${where}, expected ${candidates.map(showTime).join(' or ')} (the last acknowledged${entry.expiryInDoubt.length ? ', or a change cut off by the kill' : ''})`,
        ids,
      )
    }
    if (status === 'active' && expiresAt !== null && expiresAt <= readStart) {
      this.problem(
        `form ${entry.id} reads active ${where} although its expires_at ${form.expires_at} had passed when it was read`,
        ids,
      )
    }
    if (status === 'expired' && (expiresAt === null || expiresAt > readEnd)) {
      this.problem(`form ${entry.id} reads expired ${where} although its expires_at is ${form.expires_at}`, ids)
    }
    const expectedContext = status === 'expired' ? null : entry.context
    if (!Bun.deepEquals(form.context, expectedContext)) {
      this.problem(
        `form ${entry.id} (${status}) has context ${JSON.stringify(form.context)} ${where}, expected ${JSON.stringify(expectedContext)}`,
        ids,
      )
    }
    const response = responses[0]
    if (response) {
      const answer = response.data?.note === undefined ? undefined : entry.answers.get(response.data.note)
      if (!answer) {
        this.problem(
          `form ${entry.id} holds response ${response.id} with ${JSON.stringify(response.data)}, which no answer sent to it carried`,
          ids,
        )
      } else if (answer.outcome === 'refused') {
        this.problem(
          `form ${entry.id} holds response ${response.id} from answer ${answer.nonce}, which was refused (409/410)`,
          ids,
        )
      } else {
        if (!Bun.deepEquals(response.data, { note: answer.nonce, n: answer.n, ok: answer.ok }, true)) {
          this.problem(
            `form ${entry.id}: response ${response.id} holds ${JSON.stringify(response.data)}, answer ${answer.nonce} sent ${JSON.stringify({ note: answer.nonce, n: answer.n, ok: answer.ok })}`,
            ids,
          )
        }
        if (answer.outcome === 'doubt' || answer.outcome === 'sent') {
          answer.outcome = 'committed'
          this.counts.doubtCommitted++
        }
        const submittedAt = apiTime(response.submitted_at)!
        if (expiresAt !== null && submittedAt >= expiresAt) {
          this.problem(
            `form ${entry.id}: response ${response.id} submitted at ${response.submitted_at}, not before the expiry ${form.expires_at}`,
            ids,
          )
        }
      }
    }
    return { status, responseId: response?.id, expiresAt }
  }

  // -------------------------------------------------------------------------
  // The end: every delivery arrives

  async finish(): Promise<CrashloopReport['deliveries']> {
    const { config } = this
    this.round = config.rounds + 1
    this.receiver.heal()
    const healedAt = performance.now()
    const expected = [...this.forms.values()].filter((e) => e.callback && e.seenStatus === 'completed')
    config.print('')
    config.print(
      `receiver healthy; waiting for the deliveries of ${fmt(expected.length)} answered forms with a callback (intake left running, pid ${this.child!.proc.pid})`,
    )

    const redelivered = new Map<string, number>()
    const logs = new Map<
      string,
      Array<{
        id: string
        status: string
        attempts: number
        last_error: string | null
        last_status_code: number | null
        next_attempt_at: string | null
      }>
    >()
    let deadline = performance.now() + config.deliveryGraceMs
    let lastPrint = performance.now()
    for (;;) {
      let latestDue = Date.now()
      await pool(expected.length, 32, async (i) => {
        const entry = expected[i]!
        const reply = await this.read(`/api/v1/forms/${entry.id}/deliveries`)
        if (reply.status !== 200 || !Array.isArray(reply.json)) {
          this.problem(`GET deliveries of form ${entry.id}: ${reply.status} ${reply.text.slice(0, 200)}`, [entry.id])
          return
        }
        logs.set(entry.id, reply.json)
        for (const d of reply.json as Array<{
          id: string
          status: string
          attempts: number
          last_status_code: number | null
          last_error: string | null
          next_attempt_at: string | null
        }>) {
          if (d.status === 'pending' && d.next_attempt_at) latestDue = Math.max(latestDue, apiTime(d.next_attempt_at)!)
          if (d.status !== 'failed') continue
          const times = redelivered.get(d.id) ?? 0
          if (times >= 2) continue
          if (times === 1) {
            this.problem(
              `delivery ${d.id} of form ${entry.id} ended failed again after it was redelivered to the healthy receiver: ` +
                `attempts ${d.attempts}, last_status_code ${d.last_status_code}, last_error ${JSON.stringify(d.last_error)}`,
              [entry.id, d.id],
            )
          }
          redelivered.set(d.id, times + 1)
          const again = await this.call('POST', `/api/v1/forms/${entry.id}/deliveries/${d.id}/redeliver`)
          if (again.status !== 202 && again.status !== 409)
            this.problem(`redeliver ${d.id} of form ${entry.id}: ${again.status} ${again.text.slice(0, 200)}`, [
              entry.id,
              d.id,
            ])
        }
      })
      const missing = expected.filter((entry) => {
        const list = logs.get(entry.id) ?? []
        return list.length !== 1 || list[0]!.status !== 'delivered' || !this.receiver.seen.get(list[0]!.id)?.delivered
      })
      // Intake says when each pending one is due: wait that long, and a grace for the lease and the attempt.
      deadline = Math.max(deadline, performance.now() + (latestDue - Date.now()) + config.deliveryGraceMs)
      const waited = performance.now() - healedAt
      if (missing.length === 0) break
      if (performance.now() > deadline || waited > config.deliveryMaxWaitMs) {
        for (const entry of missing) {
          const list = logs.get(entry.id) ?? []
          const d = list[0]
          this.problem(
            `form ${entry.id} (answered${entry.acked ? `, acknowledged in round ${entry.acked.round}` : ''}, callback): ` +
              (list.length !== 1
                ? `the delivery log has ${list.length} deliveries, expected 1: ${JSON.stringify(list).slice(0, 300)}`
                : `delivery ${d!.id} did not arrive within ${fmt(waited / 1000, 1)} s of the receiver turning healthy: log status ${d!.status}, attempts ${d!.attempts}, ` +
                  `last_status_code ${d!.last_status_code}, last_error ${JSON.stringify(d!.last_error)}, next_attempt_at ${d!.next_attempt_at}, ` +
                  `redelivered ${redelivered.get(d!.id) ?? 0} times; the receiver got it ${this.receiver.seen.get(d!.id)?.count ?? 0} times, answered 2xx: ${this.receiver.seen.get(d!.id)?.delivered ?? false}`),
            [entry.id, ...(d ? [d.id] : [])],
          )
        }
        break
      }
      if (performance.now() - lastPrint > 5000) {
        lastPrint = performance.now()
        config.print(
          `  ${fmt(missing.length)} still on their way after ${fmt(waited / 1000, 0)} s (the latest is due at ${new Date(latestDue).toISOString()})`,
        )
      }
      await sleep(500)
    }
    const waitedMs = performance.now() - healedAt

    // Each arrived signed (checked as received), with one body, never more often than the log counts attempts.
    const expectedIds = new Map<string, FormEntry>()
    let duplicates = 0
    for (const entry of expected) {
      const d = logs.get(entry.id)?.[0]
      if (!d) continue
      expectedIds.set(d.id, entry)
      const got = this.receiver.seen.get(d.id)
      if (!got) continue
      if (got.bodies.size !== 1)
        this.problem(`delivery ${d.id} of form ${entry.id} arrived with ${got.bodies.size} different bodies`, [
          entry.id,
          d.id,
        ])
      if (got.formId !== entry.id || got.responseId !== entry.seenResponseId) {
        this.problem(
          `delivery ${d.id} of form ${entry.id}: the body names form ${got.formId} and response ${got.responseId}, the form's response is ${entry.seenResponseId}`,
          [entry.id, d.id],
        )
      }
      if (got.count > d.attempts) {
        this.problem(
          `delivery ${d.id} of form ${entry.id} reached the receiver ${got.count} times, but the log counts ${d.attempts} attempts (an attempt counts from its start)`,
          [entry.id, d.id],
        )
      }
      duplicates += Math.max(0, got.okCount - 1)
    }
    for (const [id, got] of this.receiver.seen) {
      if (!expectedIds.has(id)) {
        this.problem(
          `the receiver got delivery ${id} (form ${got.formId}, response ${got.responseId}), which belongs to no answered form's log`,
          [id, got.formId],
        )
      }
    }
    const arrived = expected.filter((entry) => {
      const d = logs.get(entry.id)?.[0]
      return d !== undefined && this.receiver.seen.get(d.id)?.delivered === true
    }).length

    // A last clean stop: exit 0 and a sound file.
    const stopped = await stopIntake(this.child!, 20_000)
    if (stopped.code !== 0)
      this.problem(`intake stopped with SIGTERM exited with code ${stopped.code}: ${this.child!.err.tail.slice(-2000)}`)
    const file = this.checkDatabaseFile()
    config.print(
      `intake stopped with SIGTERM in ${fmt(stopped.ms)} ms (exit ${stopped.code}); database file: ${file.ok ? 'integrity ok' : 'INTEGRITY FAILED'}, ` +
        `${fmt(file.forms)} forms, ${fmt(file.responses)} responses, ${fmt(file.deliveries)} deliveries`,
    )
    return {
      expected: expected.length,
      arrived,
      redelivered: [...redelivered.values()].reduce((a, b) => a + b, 0),
      waitedMs,
      receiverRequests: this.receiver.stats.requests,
      duplicates,
    }
  }

  // -------------------------------------------------------------------------

  /** Each problem as one message with its round and seed, then the intake log lines that name its ids. */
  describeProblems(): string[] {
    if (this.problems.length === 0) return []
    let logs: Array<{ name: string; lines: string[] }> = []
    try {
      logs = readdirSync(this.dir)
        .filter((name) => /^intake\.\d+b?\.log$/.test(name))
        .sort((a, b) => parseInt(a.slice(7), 10) - parseInt(b.slice(7), 10))
        .map((name) => ({ name, lines: readFileSync(join(this.dir, name), 'utf8').split('\n') }))
    } catch {
      // no logs to quote
    }
    const MAX_DETAILED = 50
    return this.problems.map((p, i) => {
      let text = `round ${p.round} (seed ${this.config.seed}): ${p.message}`
      if (i >= MAX_DETAILED || p.ids.length === 0) return text
      // Writes and webhook attempts first: the reads (the end polls the delivery log) say little.
      const quoted: string[] = []
      let reads = 0
      for (const { name, lines } of logs) {
        for (const line of lines) {
          if (!p.ids.some((id) => line.includes(id))) continue
          if (line.includes('"method":"GET"')) reads++
          else quoted.push(`    ${name}: ${line}`)
        }
      }
      if (quoted.length > 0 || reads > 0) {
        text += `\n  intake log lines naming ${p.ids.join(', ')}: ${quoted.length} writes and webhook attempts (the last 16 below), ${reads} GETs`
        if (quoted.length > 0) text += `\n${quoted.slice(-16).join('\n')}`
      }
      return text
    })
  }
}

// ---------------------------------------------------------------------------

if (import.meta.main) {
  await runBench(async (state) => {
    if (!binaryPresent()) return 1
    const report = await runCrashloop(state, configFromEnv())
    return exitCodeFor(report.problems)
  })
}
