/**
 * The crash loop's state (test/e2e/crashloop.ts runs it): its settings, the
 * ledger of every operation the storm sent and what came back, the HTTP calls
 * to intake, and the flaky webhook receiver. The storm (crashloop-storm.ts)
 * and the checks (crashloop-checks.ts) read and write it.
 */
import { type BenchState, type Child, expectedSignature } from './intake-child.ts'

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

// ---------------------------------------------------------------------------
// Seeded randomness

/** mulberry32: small, fast, good enough to pick operations and moments. */
function seededRandom(seed: number): () => number {
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

export type FormStatus = 'active' | 'completed' | 'cancelled' | 'expired'
export const FINAL: ReadonlySet<FormStatus> = new Set(['completed', 'cancelled', 'expired'])

export const FIELDS = [
  { key: 'note', type: 'text', label: 'Note', required: true },
  { key: 'n', type: 'number', label: 'A number', config: { min: 0, max: 1000 } },
  { key: 'ok', type: 'checkbox', label: 'OK' },
]

export interface Answer {
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

export interface FormEntry {
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

export interface Counts {
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

export const zeroCounts = (): Counts => ({
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

export interface Reply {
  status: number
  headers: Headers
  text: string
  json: any
}

export class NetworkError extends Error {}

export const apiTime = (text: string | null | undefined) =>
  text === null || text === undefined ? null : Date.parse(`${text}Z`)
export const showTime = (ms: number | null) => (ms === null ? 'null' : new Date(ms).toISOString())

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
          await Bun.sleep(config.webhookTimeoutSeconds * 1000 + 500 + random() * 1000)
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
// The run's state

export class CrashloopRun {
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
        await Bun.sleep(100)
      }
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

  /** A form for a write: mostly an open one; sometimes any (likely closed), to hit 409/410 too. */
  pickForm(anyForm: boolean): FormEntry | undefined {
    const id = anyForm || this.open.length === 0 ? this.pick(this.all) : this.pick(this.open)
    return id === undefined ? undefined : this.forms.get(id)
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
}
