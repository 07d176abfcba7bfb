/**
 * Several dist/intake instances on one PostgreSQL database (CONTRACT 10):
 * what test/e2e/instances.test.ts and bench/instances-rounds.ts share.
 *
 * - `startInstances`: N instances on one database, the first alone (it makes
 *   the schema and prints the key), the others together.
 * - `webhookReceiver`: a receiver on 127.0.0.1 that records every delivery.
 * - `RoundRobin`: a client that spreads requests over the instances as a load
 *   balancer does: a request that could not connect goes to the next
 *   instance; a request that connected is never sent again, whatever came of
 *   it (a create or an answer sent twice would be two operations).
 * - `startLoad`: workers creating forms (with a callback_url) and answering
 *   them through that client, writing every acknowledged operation into a
 *   ledger: form ids from 201 creates, response ids from 201 answers. A
 *   request that connected and got no answer is in neither; `settleUnknown`
 *   says afterwards whether the server did it (a create is sent again with
 *   its Idempotency-Key, an answer's form is read).
 * - `rollingRestart`: the scenario. Three instances under that load; in each
 *   round every instance in turn gets SIGTERM, must exit 0, and is started
 *   again on its port before the next one goes. After each round every
 *   operation acknowledged in it is read back and every acknowledged
 *   answer's webhook must have arrived.
 *
 * Everything stays on 127.0.0.1.
 */
import { type RunningIntake, request, startIntake } from './binary.ts'

/** What every instance here runs with: no rate limit (all traffic comes from one address and one key). */
export const INSTANCE_SETTINGS: Record<string, string> = {
  SERVICE_RATE_LIMIT: '0',
  SERVICE_PUBLIC_RATE_LIMIT: '0',
  // The receivers are on 127.0.0.1.
  SERVICE_WEBHOOK_BLOCK_PRIVATE: 'false',
}

export interface InstanceOptions {
  databaseUrl: string
  /** The working directory (nothing is written there on PostgreSQL). */
  cwd: string
  /** Settings on top of INSTANCE_SETTINGS. */
  env?: Record<string, string>
}

/** Starts one instance, on `port` (a free one when 0). */
export function startInstance(binary: string, options: InstanceOptions & { port?: number }): Promise<RunningIntake> {
  return startIntake(binary, {
    cwd: options.cwd,
    args: ['serve'],
    env: {
      ...INSTANCE_SETTINGS,
      SERVICE_DATABASE_URL: options.databaseUrl,
      SERVICE_PORT: String(options.port ?? 0),
      ...options.env,
    },
  })
}

/**
 * `count` instances on one database. The first starts alone, so it is the one
 * that makes the schema and prints the key; the others start together.
 */
export async function startInstances(
  binary: string,
  options: InstanceOptions & { count: number },
): Promise<{ instances: RunningIntake[]; key: string }> {
  const first = await startInstance(binary, options)
  if (!first.apiKey) throw new Error(`the first instance printed no key\n${first.stdout()}`)
  const others = await Promise.all(Array.from({ length: options.count - 1 }, () => startInstance(binary, options)))
  return { instances: [first, ...others], key: first.apiKey }
}

/** Waits until `condition` holds, looking every 25 ms; gives up (throws) after `ms`. */
export async function until(condition: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up after ${ms} ms waiting for: ${what}`)
    await Bun.sleep(25)
  }
}

/** One webhook request as the receiver saw it. */
export interface ReceivedDelivery {
  deliveryId: string
  formId: string
  responseId: string
  /** Date.now() when it arrived. */
  at: number
}

/**
 * A webhook receiver on 127.0.0.1 that records every request. It answers 200,
 * or what `answer` says (which may hold the request).
 */
export function webhookReceiver(
  options: { answer?: (delivery: ReceivedDelivery) => Response | Promise<Response> } = {},
) {
  const received: ReceivedDelivery[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const body = JSON.parse(await req.text()) as { form_id: string; response_id: string }
      const delivery = {
        deliveryId: req.headers.get('x-service-delivery') ?? '',
        formId: body.form_id,
        responseId: body.response_id,
        at: Date.now(),
      }
      received.push(delivery)
      return options.answer ? options.answer(delivery) : new Response('ok')
    },
  })
  return { url: `http://127.0.0.1:${server.port}/hook`, port: server.port!, received, stop: () => server.stop(true) }
}

export type WebhookReceiver = ReturnType<typeof webhookReceiver>

/** What became of a request sent through the load balancer. */
export type Outcome =
  | { answered: true; status: number; body: any; headers: Headers; instance: number }
  /** It connected but no answer came back (the connection was cut): it may or may not have been done. */
  | { answered: false; error: string }

/** Bun's fetch says ECONNREFUSED when nothing listens on the port: the request never left. */
const refusedToConnect = (error: unknown) => (error as { code?: string } | null)?.code === 'ECONNREFUSED'

/**
 * Spreads requests over the instances in turn, like a load balancer. Only a
 * request that could not connect is sent again, to the next instance: one
 * that connected may have been done, so whatever happened to it is its outcome.
 */
export class RoundRobin {
  private next = 0
  /** Requests that found an instance not listening and went to another. */
  connectRetries = 0

  constructor(readonly urls: string[]) {}

  async send(
    path: string,
    options: { key?: string; body?: unknown; method?: string; headers?: Record<string, string> } = {},
  ): Promise<Outcome> {
    const first = this.next++
    for (let tried = 0; ; tried++) {
      const instance = (first + tried) % this.urls.length
      try {
        const res = await request(`${this.urls[instance]}${path}`, options)
        return { answered: true, status: res.status, body: res.body, headers: res.headers, instance }
      } catch (error) {
        // Every instance refused for a few seconds: no balancer would wait longer.
        if (!refusedToConnect(error) || tried >= this.urls.length * 40) return { answered: false, error: String(error) }
        this.connectRetries++
        if ((tried + 1) % this.urls.length === 0) await Bun.sleep(50)
      }
    }
  }

  /** A read, which may be sent again: until it is answered with something other than a 5xx (a few tries). */
  async read(path: string, key: string): Promise<Outcome> {
    let outcome: Outcome = { answered: false, error: 'not sent' }
    for (let tries = 0; tries < 5; tries++) {
      outcome = await this.send(path, { key })
      if (outcome.answered && outcome.status < 500) return outcome
      await Bun.sleep(100)
    }
    return outcome
  }
}

/** The load's form: one text field, a callback to the receiver. */
const LOAD_FORM = { title: 'Rolling restart', fields: [{ key: 'name', type: 'text', label: 'Name' }] }

/** Every operation the load had acknowledged, and what else came back. */
export interface Ledger {
  /** Forms whose create was answered 201. */
  creates: Array<{ formId: string; at: number }>
  /** Answers answered 201, with the response id of the receipt. */
  submissions: Array<{ formId: string; responseId: string; at: number }>
  /**
   * Requests that connected but got no answer: their outcome is unknown, so
   * they are in no list above. A create's Idempotency-Key, an answer's form,
   * say afterwards whether it was done (`settleUnknown`).
   */
  unknown: Array<
    | { what: 'create'; idempotencyKey: string; error: string; at: number }
    | { what: 'submission'; formId: string; error: string; at: number }
  >
  /** Answers other than 201, with what they said. */
  refused: Array<{ what: 'create' | 'submission'; status: number; body: unknown; at: number }>
}

export interface Load {
  ledger: Ledger
  /** Stops the workers after the requests they have in flight. */
  stop(): Promise<void>
  /**
   * Whether each request of `unknown` was done: a create is sent again with
   * its Idempotency-Key (a replay says the first was done; otherwise it is
   * done now), an answer's form is read. Those done, one line each: the
   * server did them and the answer never came back.
   */
  settleUnknown(unknown: Ledger['unknown']): Promise<{ done: string[]; notDone: number }>
}

/**
 * `workers` loops, each creating a form (with callback_url) and answering it,
 * every request through `client`, pausing `pauseMs` between rounds of its own.
 */
export function startLoad(options: {
  client: RoundRobin
  key: string
  callbackUrl: string
  workers?: number
  pauseMs?: number
}): Load {
  const { client, key, callbackUrl } = options
  const body = { ...LOAD_FORM, callback_url: callbackUrl }
  const ledger: Ledger = { creates: [], submissions: [], unknown: [], refused: [] }
  const settled = new Map<Ledger['unknown'][number], string | undefined>()
  let stopped = false
  const worker = async (w: number) => {
    for (let n = 0; !stopped; n++) {
      const idempotencyKey = crypto.randomUUID()
      const created = await client.send('/api/v1/forms', { key, body, headers: { 'idempotency-key': idempotencyKey } })
      if (!created.answered) {
        ledger.unknown.push({ what: 'create', idempotencyKey, error: created.error, at: Date.now() })
        continue
      }
      if (created.status !== 201) {
        ledger.refused.push({ what: 'create', status: created.status, body: created.body, at: Date.now() })
        continue
      }
      const formId: string = created.body.id
      ledger.creates.push({ formId, at: Date.now() })
      const answered = await client.send(`/f/${formId}`, { body: { name: `worker ${w} answer ${n}` } })
      if (!answered.answered) ledger.unknown.push({ what: 'submission', formId, error: answered.error, at: Date.now() })
      else if (answered.status !== 201)
        ledger.refused.push({ what: 'submission', status: answered.status, body: answered.body, at: Date.now() })
      else ledger.submissions.push({ formId, responseId: answered.body.id, at: Date.now() })
      if (options.pauseMs) await Bun.sleep(options.pauseMs)
    }
  }
  const running = Promise.all(Array.from({ length: options.workers ?? 4 }, (_, w) => worker(w)))
  return {
    ledger,
    async stop() {
      stopped = true
      await running
    },
    async settleUnknown(unknown) {
      const done: string[] = []
      for (const request of unknown) {
        // Settled once: a create sent again is done from then on, whatever it was before.
        if (settled.has(request)) {
          const found = settled.get(request)
          if (found) done.push(found)
          continue
        }
        settled.set(request, undefined)
        if (request.what === 'create') {
          const again = await client.send('/api/v1/forms', {
            key,
            body,
            headers: { 'idempotency-key': request.idempotencyKey },
          })
          if (again.answered && again.headers.get('idempotent-replayed') === 'true') {
            settled.set(
              request,
              `create ${again.body.id} (Idempotency-Key ${request.idempotencyKey}) was made, but its answer never came (${request.error})`,
            )
          }
        } else {
          const read = await client.read(`/api/v1/forms/${request.formId}/responses`, key)
          if (read.answered && read.status === 200 && read.body.length > 0) {
            settled.set(
              request,
              `answer ${read.body[0].id} to form ${request.formId} was recorded, but its answer never came (${request.error})`,
            )
          }
        }
        const found = settled.get(request)
        if (found) done.push(found)
      }
      return { done, notDone: unknown.length - done.length }
    },
  }
}

/**
 * Reads back every acknowledged create and answer through `client`: each form
 * must exist, and each acknowledged answer must be its form's response. What
 * is missing, one line each.
 */
export async function findLost(
  client: RoundRobin,
  key: string,
  creates: Ledger['creates'],
  submissions: Ledger['submissions'],
): Promise<string[]> {
  const answerOf = new Map(submissions.map((s) => [s.formId, s.responseId]))
  const lost: string[] = []
  let next = 0
  const reader = async () => {
    while (next < creates.length) {
      const { formId } = creates[next++]!
      const read = await client.read(`/api/v1/forms/${formId}/responses`, key)
      if (!read.answered) lost.push(`form ${formId}: could not be read (${read.error})`)
      else if (read.status === 404) lost.push(`form ${formId}: acknowledged (201) but not found (404)`)
      else if (read.status !== 200)
        lost.push(`form ${formId}: read answered ${read.status} ${JSON.stringify(read.body)}`)
      else {
        const expected = answerOf.get(formId)
        const found = (read.body as Array<{ id: string }>).map((r) => r.id)
        if (expected !== undefined && !found.includes(expected))
          lost.push(
            `form ${formId}: answer ${expected} acknowledged (201) but the form's responses are ${JSON.stringify(found)}`,
          )
      }
    }
  }
  await Promise.all(Array.from({ length: 8 }, reader))
  return lost
}

export interface DeliveryCount {
  expected: number
  arrived: number
  /** Acknowledged answers whose webhook had not arrived when the wait ended. */
  missing: string[]
  /** Deliveries (by X-Service-Delivery) that arrived more than once, and how many requests they made. */
  duplicates: number
  duplicateRequests: number
}

/** Waits (up to `ms`) until every acknowledged answer's webhook has arrived at least once; counts duplicates. */
export async function awaitDeliveries(
  receiver: WebhookReceiver,
  submissions: Ledger['submissions'],
  ms: number,
): Promise<DeliveryCount> {
  const arrivedFor = () => new Set(receiver.received.map((d) => d.responseId))
  const missingNow = () => {
    const arrived = arrivedFor()
    return submissions.filter((s) => !arrived.has(s.responseId))
  }
  await until(() => missingNow().length === 0, ms, 'the webhooks').catch(() => {})
  const missing = missingNow().map((s) => s.responseId)
  const ours = new Set(submissions.map((s) => s.responseId))
  const requestsPerDelivery = new Map<string, number>()
  for (const d of receiver.received)
    if (ours.has(d.responseId)) requestsPerDelivery.set(d.deliveryId, (requestsPerDelivery.get(d.deliveryId) ?? 0) + 1)
  const repeated = [...requestsPerDelivery.values()].filter((n) => n > 1)
  return {
    expected: submissions.length,
    arrived: submissions.length - missing.length,
    missing,
    duplicates: repeated.length,
    duplicateRequests: repeated.reduce((sum, n) => sum + n - 1, 0),
  }
}

interface Restart {
  instance: number
  /** SIGTERM to exit. */
  stopMs: number
  exitCode: number | null
  /** Started again on the same port: spawn to /healthz 200. */
  startMs: number
}

export interface RoundReport {
  round: number
  /** Acknowledged during the round. */
  creates: number
  submissions: number
  /** Acknowledged operations of the round not found when read back (must be none). */
  lost: string[]
  deliveries: DeliveryCount
  restarts: Restart[]
  /** Requests of the round that connected and got no answer (not in the ledger), and how many of them the server did nonetheless. */
  unknown: number
  /** Those of them the server did, one line each (must be none: a request in flight at a SIGTERM finishes). */
  doneUnanswered: string[]
  /** Answers of the round other than 201, as "status: count". */
  refused: Record<string, number>
  /** Requests that found an instance down and went to the next. */
  connectRetries: number
  ms: number
}

export interface RollingRestartReport {
  rounds: RoundReport[]
  /** Everything acknowledged over the whole run, read back after the load stopped. */
  total: {
    creates: number
    submissions: number
    lost: string[]
    deliveries: DeliveryCount
    unknown: number
    doneUnanswered: string[]
    refused: Record<string, number>
    connectRetries: number
  }
  /** Exit codes of the final SIGTERM of each instance. */
  finalExitCodes: Array<number | null>
  /** Unknown and refused outcomes, the first few, to say what they were. */
  examples: string[]
}

export interface RollingRestartOptions extends InstanceOptions {
  binary: string
  rounds: number
  instances?: number
  workers?: number
  pauseMs?: number
  /** How long to wait for a round's webhooks. */
  deliveryWaitMs?: number
  /** Told of each round as it ends. */
  onRound?: (report: RoundReport) => void
}

const countStatuses = (refused: Ledger['refused']) => {
  const counts: Record<string, number> = {}
  for (const r of refused) counts[r.status] = (counts[r.status] ?? 0) + 1
  return counts
}

/**
 * The rolling restart under load (see the top of this file). It reports what
 * it found and asserts nothing: the caller decides (the test expects nothing
 * lost and every webhook arrived; the bench prints and exits 1).
 */
export async function rollingRestart(options: RollingRestartOptions): Promise<RollingRestartReport> {
  const receiver = webhookReceiver()
  const { instances, key } = await startInstances(options.binary, { ...options, count: options.instances ?? 3 })
  // Started again on the same ports: the balancer's list of addresses never changes.
  const client = new RoundRobin(instances.map((instance) => instance.url))
  const load = startLoad({ client, key, callbackUrl: receiver.url, workers: options.workers, pauseMs: options.pauseMs })
  const { ledger } = load
  const rounds: RoundReport[] = []
  try {
    await until(() => ledger.submissions.length >= 10, 15_000, 'the load to get going')
    // Where the ledger stood when the round started: what came after is the round's.
    const mark = () => ({
      creates: ledger.creates.length,
      submissions: ledger.submissions.length,
      unknown: ledger.unknown.length,
      refused: ledger.refused.length,
      retries: client.connectRetries,
    })
    let from = mark()
    for (let round = 1; round <= options.rounds; round++) {
      const started = performance.now()
      const restarts: Restart[] = []
      for (let i = 0; i < instances.length; i++) {
        const stopping = performance.now()
        const exitCode = await instances[i]!.stop('SIGTERM', 30_000)
        const starting = performance.now()
        instances[i] = await startInstance(options.binary, { ...options, port: instances[i]!.port })
        restarts.push({ instance: i + 1, stopMs: starting - stopping, exitCode, startMs: performance.now() - starting })
      }
      const to = mark()
      const creates = ledger.creates.slice(from.creates, to.creates)
      const submissions = ledger.submissions.slice(from.submissions, to.submissions)
      const unknown = ledger.unknown.slice(from.unknown, to.unknown)
      const report: RoundReport = {
        round,
        creates: creates.length,
        submissions: submissions.length,
        lost: await findLost(client, key, creates, submissions),
        deliveries: await awaitDeliveries(receiver, submissions, options.deliveryWaitMs ?? 30_000),
        restarts,
        unknown: unknown.length,
        doneUnanswered: (await load.settleUnknown(unknown)).done,
        refused: countStatuses(ledger.refused.slice(from.refused, to.refused)),
        connectRetries: to.retries - from.retries,
        ms: performance.now() - started,
      }
      from = to
      rounds.push(report)
      options.onRound?.(report)
    }
  } finally {
    await load.stop()
  }
  const deliveries = await awaitDeliveries(receiver, ledger.submissions, options.deliveryWaitMs ?? 30_000)
  const lost = await findLost(client, key, ledger.creates, ledger.submissions)
  const { done: doneUnanswered } = await load.settleUnknown(ledger.unknown)
  const finalExitCodes: Array<number | null> = []
  for (const instance of instances) finalExitCodes.push(await instance.stop('SIGTERM', 30_000))
  await receiver.stop()
  return {
    rounds,
    total: {
      creates: ledger.creates.length,
      submissions: ledger.submissions.length,
      lost,
      deliveries,
      unknown: ledger.unknown.length,
      doneUnanswered,
      refused: countStatuses(ledger.refused),
      connectRetries: client.connectRetries,
    },
    finalExitCodes,
    examples: [
      ...ledger.unknown.slice(0, 5).map((u) => `${u.what}: no answer (${u.error})`),
      ...ledger.refused.slice(0, 5).map((r) => `${r.what}: ${r.status} ${JSON.stringify(r.body)}`),
    ],
  }
}

/** One line for a round: what was acknowledged, lost, delivered, and the restart times. */
export function describeRound(r: RoundReport): string {
  const restarts = r.restarts
    .map((s) => `#${s.instance} exit ${s.exitCode} stop ${Math.round(s.stopMs)} ms start ${Math.round(s.startMs)} ms`)
    .join(', ')
  const refused = Object.keys(r.refused).length ? `, answers other than 201 ${JSON.stringify(r.refused)}` : ''
  return (
    `round ${r.round}: ${r.creates} creates + ${r.submissions} answers acknowledged, ${r.lost.length} lost; ` +
    `deliveries ${r.deliveries.expected} expected, ${r.deliveries.arrived} arrived, ${r.deliveries.duplicates} duplicated; ` +
    `${r.unknown} without answer (${r.doneUnanswered.length} of them done)${refused}, ${r.connectRetries} connects retried; restarts: ${restarts}; ${(r.ms / 1000).toFixed(1)} s`
  )
}
