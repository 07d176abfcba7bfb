/**
 * What the durability tests (test/e2e/durability-*.test.ts) share: receivers on
 * 127.0.0.1 that can hold an answer, a Scope that stops a scenario's processes and
 * receivers (and starts the scenario over when a port could not be taken again),
 * and the checks of a delivered form.completed webhook and of the database file.
 */
import { Database } from 'bun:sqlite'
import { expect } from 'bun:test'
import { createHmac } from 'node:crypto'
import type { Delivery } from '../utils.ts'
import { type RunningIntake, request, type StartOptions, startIntake } from './binary.ts'

export const TEST_TIMEOUT = 60_000
/** Retries are 1, 5 and 25 s after a failed attempt: allow for the longest wait and a slow machine. */
export const ARRIVAL_DEADLINE_MS = 40_000
/** Tries of a whole scenario when the port a receiver must take again is no longer free. */
const PORT_TRIES = 3

// ---------------------------------------------------------------------------
// Receivers: real HTTP servers on 127.0.0.1.

type BunServer = ReturnType<typeof Bun.serve>

export interface ReceivedRequest {
  /** X-Service-Delivery */
  deliveryId: string
  path: string
  headers: Headers
  /** The raw body, as received. */
  body: string
}

export interface Receiver {
  port: number
  received: ReceivedRequest[]
  /** Closes the listener and every connection; requests held open are answered 503 first. */
  stop(): Promise<void>
}

/** How a receiver answers a request it has read in full; `hold()` parks it unanswered until the receiver stops. */
export type Answer = (got: ReceivedRequest, hold: () => Promise<Response>) => Response | Promise<Response>

/** Binding the port a receiver must take again failed: the scenario starts over on another port. */
class PortTaken extends Error {}

const allReceivers = new Set<Receiver>()
/** Stops every receiver still running (a failed scenario's), at the end of a file. */
export const stopAllReceivers = () => Promise.all([...allReceivers].map((r) => r.stop()))

/**
 * Starts a receiver on 127.0.0.1:`port` (0 for any free port). `onReceived`
 * runs as soon as a request (headers and body) has arrived, before it is answered.
 */
function startReceiver(port: number, answer: Answer, onReceived?: (got: ReceivedRequest) => void): Receiver {
  const received: ReceivedRequest[] = []
  const held = new Set<(response: Response) => void>()
  let server: BunServer
  try {
    server = Bun.serve({
      hostname: '127.0.0.1',
      port,
      // A receiver that holds requests must not have them cut by its own idle timer.
      idleTimeout: 0,
      async fetch(req) {
        const got: ReceivedRequest = {
          deliveryId: req.headers.get('x-service-delivery') ?? '',
          path: new URL(req.url).pathname,
          headers: req.headers,
          body: await req.text(),
        }
        received.push(got)
        onReceived?.(got)
        return answer(got, () => new Promise<Response>((resolve) => held.add(resolve)))
      },
    })
  } catch (error) {
    throw new PortTaken(
      `cannot bind 127.0.0.1:${port} for a receiver: ${error instanceof Error ? error.message : String(error)}`,
    )
  }
  let stopped: Promise<void> | undefined
  const receiver: Receiver = {
    port: server.port!,
    received,
    stop: () =>
      (stopped ??= (async () => {
        for (const release of held) release(new Response('receiver stopped', { status: 503 }))
        held.clear()
        await server.stop(true)
        allReceivers.delete(receiver)
      })()),
  }
  allReceivers.add(receiver)
  return receiver
}

export const answer200: Answer = () => new Response('ok', { status: 200 })
/** Reads each request in full and never answers it (until the receiver stops). */
export const answerNever: Answer = (_got, hold) => hold()

/** A port that was free a moment ago and is closed now: connections to it are refused. */
export function reserveClosedPort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('probe') })
  const port = probe.port!
  void probe.stop(true)
  return port
}

// ---------------------------------------------------------------------------
// Processes and resources of one scenario: everything is stopped when the
// scenario ends, except what it explicitly keeps for a later test.

export class Scope {
  constructor(private binary: string) {}
  private intakes: RunningIntake[] = []
  private receivers: Receiver[] = []
  private kept = new Set<RunningIntake>()

  async intake(options: StartOptions): Promise<RunningIntake> {
    const running = await startIntake(this.binary, options)
    this.intakes.push(running)
    return running
  }

  receiver(port: number, answer: Answer, onReceived?: (got: ReceivedRequest) => void): Receiver {
    const receiver = startReceiver(port, answer, onReceived)
    this.receivers.push(receiver)
    return receiver
  }

  keep(running: RunningIntake) {
    this.kept.add(running)
  }

  async close() {
    await Promise.all(this.receivers.map((r) => r.stop()))
    for (const running of this.intakes) {
      if (this.kept.has(running)) continue
      const { proc } = running
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
      await proc.exited
    }
  }
}

/**
 * Runs a scenario in its own Scope; when a receiver could not take a port again
 * (PortTaken), everything is torn down and the whole scenario starts over.
 */
export async function scenario(binary: string, run: (scope: Scope) => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const scope = new Scope(binary)
    try {
      await run(scope)
      return
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt >= PORT_TRIES) throw error
    } finally {
      await scope.close()
    }
  }
}

// ---------------------------------------------------------------------------
// Helpers.

/** Polls `probe` until it returns something other than undefined; fails with the last state seen. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  describeState?: () => unknown,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() >= deadline) {
      const state = describeState ? `\nlast state: ${JSON.stringify(describeState(), null, 2)}` : ''
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${state}`)
    }
    await Bun.sleep(50)
  }
}

/** Waits for a child to exit without signalling it (a second SIGTERM would bypass the graceful handler). */
export async function exitOf(
  running: RunningIntake,
  timeoutMs: number,
): Promise<{ code: number | null; signal: string | null }> {
  let timer: Timer | undefined
  const outcome = await Promise.race([
    running.proc.exited.then(() => 'exited' as const),
    new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs))),
  ])
  clearTimeout(timer)
  if (outcome === 'timeout') {
    throw new Error(
      `intake did not exit within ${timeoutMs} ms\n--- stdout ---\n${running.stdout()}\n--- stderr ---\n${running.stderr()}`,
    )
  }
  return {
    code: running.proc.exitCode,
    signal: running.proc.signalCode === null ? null : String(running.proc.signalCode),
  }
}

export async function crash(running: RunningIntake) {
  running.proc.kill('SIGKILL')
  await running.proc.exited
  expect(running.proc.signalCode as string | null).toBe('SIGKILL')
}

export async function deliveriesOf(url: string, key: string, formId: string): Promise<Delivery[]> {
  const res = await request(`${url}/api/v1/forms/${formId}/deliveries`, { key })
  if (res.status !== 200) throw new Error(`GET deliveries of ${formId}: ${res.status} ${res.text}`)
  return res.body as Delivery[]
}

/** A form with a callback_url, answered once (201) over JSON. */
export interface AnsweredForm {
  formId: string
  title: string
  callbackUrl: string
  callbackMetadata: Record<string, unknown>
  context: Record<string, unknown>
  data: Record<string, string | number>
  userAgent: string
  receipt: { id: string; form_id: string; submitted_at: string }
}

const FIELDS = [
  { key: 'name', type: 'text', label: 'Name', required: true },
  { key: 'count', type: 'number', label: 'Count' },
]

export async function createForm(url: string, key: string, n: number, callbackUrl: string) {
  const title = `Durable ${n}`
  const callbackMetadata = { run: 'durability', n }
  const context = { agent: 'durability-test', step: n, note: `form ${n}` }
  const created = await request(`${url}/api/v1/forms`, {
    key,
    body: { title, fields: FIELDS, callback_url: callbackUrl, callback_metadata: callbackMetadata, context },
  })
  expect(created.status).toBe(201)
  return { formId: created.body.id as string, title, callbackUrl, callbackMetadata, context }
}

export async function answer(
  url: string,
  form: Awaited<ReturnType<typeof createForm>>,
  n: number,
): Promise<AnsweredForm> {
  const data = { name: `Person ${n}`, count: n }
  const userAgent = `durability-test/${n}`
  const res = await request(`${url}/f/${form.formId}`, {
    method: 'POST',
    body: data,
    headers: { 'user-agent': userAgent },
  })
  expect({ form: form.formId, status: res.status, body: res.body }).toEqual({
    form: form.formId,
    status: 201,
    body: expect.anything(),
  })
  expect(res.body.form_id).toBe(form.formId)
  return { ...form, data, userAgent, receipt: res.body }
}

const webhookSecret = (key: string, formId: string) => createHmac('sha256', key).update(formId).digest('hex')

/** The request is a form.completed webhook for `form`: headers, both signatures and the payload. */
export function expectCompletedWebhook(got: ReceivedRequest, form: AnsweredForm, key: string, version: string) {
  const secret = webhookSecret(key, form.formId)
  expect(got.path).toBe(new URL(form.callbackUrl).pathname)
  expect(got.headers.get('content-type')).toBe('application/json')
  expect(got.headers.get('x-service-event')).toBe('form.completed')
  expect(got.headers.get('user-agent')).toBe(`intake/${version}`)
  expect(got.headers.get('webhook-id')).toBe(got.deliveryId)
  expect(got.headers.get('x-service-signature')).toBe(
    `sha256=${createHmac('sha256', secret).update(got.body).digest('hex')}`,
  )
  const timestamp = got.headers.get('webhook-timestamp') ?? ''
  expect(timestamp).toMatch(/^\d+$/)
  const standard = createHmac('sha256', Buffer.from(secret, 'hex'))
    .update(`${got.deliveryId}.${timestamp}.${got.body}`)
    .digest('base64')
  expect(got.headers.get('webhook-signature')).toBe(`v1,${standard}`)

  const payload = JSON.parse(got.body)
  expect(payload).toEqual({
    event: 'form.completed',
    form_id: form.formId,
    form_title: form.title,
    completed_at: `${form.receipt.submitted_at}Z`,
    response_id: form.receipt.id,
    data: form.data,
    metadata: { ip: expect.any(String), user_agent: form.userAgent },
    callback_metadata: form.callbackMetadata,
    context: form.context,
  })
  expect(Object.keys(payload).sort()).toEqual(
    [
      'event',
      'form_id',
      'form_title',
      'completed_at',
      'response_id',
      'data',
      'metadata',
      'callback_metadata',
      'context',
    ].sort(),
  )
}

/** Requests grouped by X-Service-Delivery. */
export function byDelivery(received: ReceivedRequest[]): Map<string, ReceivedRequest[]> {
  const groups = new Map<string, ReceivedRequest[]>()
  for (const got of received) groups.set(got.deliveryId, [...(groups.get(got.deliveryId) ?? []), got])
  return groups
}

export function integrityCheck(dbPath: string) {
  const db = new Database(dbPath, { readonly: true })
  try {
    const integrity = db.query('PRAGMA integrity_check').all()
    const foreignKeys = db.query('PRAGMA foreign_key_check').all()
    const responses = db.query('SELECT id, form_id FROM responses ORDER BY id').all() as {
      id: string
      form_id: string
    }[]
    const deliveries = db.query('SELECT id, form_id, status FROM deliveries ORDER BY id').all() as {
      id: string
      form_id: string
      status: string
    }[]
    return { integrity, foreignKeys, responses, deliveries }
  } finally {
    db.close()
  }
}
