/**
 * Durability of webhook delivery, end to end: the real executable (dist/intake),
 * killed with SIGKILL or stopped with SIGTERM while deliveries are pending or in
 * flight, and restarted on the same database. Receivers are real HTTP servers on
 * 127.0.0.1 that these tests start; nothing leaves the loopback interface.
 *
 * What must hold (CONTRACT.md sections 1 and 8): the delivery row is committed
 * with the response, so a crash never loses it; an attempt in flight during a
 * crash is made again after restart (at-least-once, same X-Service-Delivery and
 * the same body bytes); SIGTERM lets an attempt in flight finish, then exits 0.
 */

import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { join } from 'node:path'
import type { Delivery } from '../utils.ts'
import {
  killAllChildren,
  type RunningIntake,
  request,
  type StartOptions,
  startIntake,
  useBuiltBinary,
} from './binary.ts'

const TEST_TIMEOUT = 60_000
/** Retries are 1, 5 and 25 s after a failed attempt: allow for the longest wait and a slow machine. */
const ARRIVAL_DEADLINE_MS = 40_000
/** Tries of a whole scenario when the port a receiver must take again is no longer free. */
const PORT_TRIES = 3

const intake = useBuiltBinary('intake-durable-')

// ---------------------------------------------------------------------------
// Receivers: real HTTP servers on 127.0.0.1.

type BunServer = ReturnType<typeof Bun.serve>

interface ReceivedRequest {
  /** X-Service-Delivery */
  deliveryId: string
  path: string
  headers: Headers
  /** The raw body, as received. */
  body: string
}

interface Receiver {
  port: number
  received: ReceivedRequest[]
  /** Closes the listener and every connection; requests held open are answered 503 first. */
  stop(): Promise<void>
}

/** How a receiver answers a request it has read in full; `hold()` parks it unanswered until the receiver stops. */
type Answer = (got: ReceivedRequest, hold: () => Promise<Response>) => Response | Promise<Response>

/** Binding the port a receiver must take again failed: the scenario starts over on another port. */
class PortTaken extends Error {}

const allReceivers = new Set<Receiver>()

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

const answer200: Answer = () => new Response('ok', { status: 200 })
/** Reads each request in full and never answers it (until the receiver stops). */
const answerNever: Answer = (_got, hold) => hold()

/** A port that was free a moment ago and is closed now: connections to it are refused. */
function reserveClosedPort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('probe') })
  const port = probe.port!
  void probe.stop(true)
  return port
}

// ---------------------------------------------------------------------------
// Processes and resources of one scenario: everything is stopped when the
// scenario ends, except what it explicitly keeps for a later test.

class Scope {
  private intakes: RunningIntake[] = []
  private receivers: Receiver[] = []
  private kept = new Set<RunningIntake>()

  async intake(options: StartOptions): Promise<RunningIntake> {
    const running = await startIntake(intake.path, options)
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
async function scenario(run: (scope: Scope) => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const scope = new Scope()
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

afterAll(async () => {
  await Promise.all([...allReceivers].map((r) => r.stop()))
  await killAllChildren()
})

// ---------------------------------------------------------------------------
// Helpers.

/** Polls `probe` until it returns something other than undefined; fails with the last state seen. */
async function waitFor<T>(
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
async function exitOf(
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

async function crash(running: RunningIntake) {
  running.proc.kill('SIGKILL')
  await running.proc.exited
  expect(running.proc.signalCode as string | null).toBe('SIGKILL')
}

async function deliveriesOf(url: string, key: string, formId: string): Promise<Delivery[]> {
  const res = await request(`${url}/api/v1/forms/${formId}/deliveries`, { key })
  if (res.status !== 200) throw new Error(`GET deliveries of ${formId}: ${res.status} ${res.text}`)
  return res.body as Delivery[]
}

/** A form with a callback_url, answered once (201) over JSON. */
interface AnsweredForm {
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

async function createForm(url: string, key: string, n: number, callbackUrl: string) {
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

async function answer(url: string, form: Awaited<ReturnType<typeof createForm>>, n: number): Promise<AnsweredForm> {
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
function expectCompletedWebhook(got: ReceivedRequest, form: AnsweredForm, key: string, version: string) {
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
function byDelivery(received: ReceivedRequest[]): Map<string, ReceivedRequest[]> {
  const groups = new Map<string, ReceivedRequest[]>()
  for (const got of received) groups.set(got.deliveryId, [...(groups.get(got.deliveryId) ?? []), got])
  return groups
}

function integrityCheck(dbPath: string) {
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

// ---------------------------------------------------------------------------

describe('receiver down, intake killed (SIGKILL), receiver up, intake restarted on the same database', () => {
  const N = 10
  const env = { SERVICE_PUBLIC_RATE_LIMIT: '0' }
  let dbPath = ''
  let cwd = ''
  let key = ''
  let version = ''
  let answered: AnsweredForm[] = []
  let deliveryIdByForm = new Map<string, string>()
  /** The intake started after the crash, left running for the integrity test. */
  let restarted: RunningIntake | undefined

  test(
    '1. all 10 pending deliveries arrive after the restart, each a valid form.completed, and the log shows them delivered',
    async () => {
      await scenario(async (scope) => {
        restarted = undefined
        cwd = intake.tempDir()
        dbPath = join(cwd, 'db', 'intake.db')
        const args = ['serve', '--port', '0', '--db', dbPath]
        const downPort = reserveClosedPort()

        const first = await scope.intake({ cwd, args, env })
        expect(first.apiKey).toBeDefined()
        key = first.apiKey!
        version = first.version

        const forms = []
        for (let n = 0; n < N; n++)
          forms.push(await createForm(first.url, key, n, `http://127.0.0.1:${downPort}/hooks/${n}`))
        answered = await Promise.all(forms.map((form, n) => answer(first.url, form, n)))

        // Each delivery has been tried at least once, and failed: the receiver is down.
        let seen: Delivery[][] = []
        await waitFor(
          'a failed first attempt on every delivery',
          async () => {
            seen = await Promise.all(answered.map((form) => deliveriesOf(first.url, key, form.formId)))
            const ready = seen.every(
              (list) =>
                list.length === 1 &&
                list[0]!.attempts >= 1 &&
                list[0]!.status === 'pending' &&
                list[0]!.last_error !== null,
            )
            return ready ? true : undefined
          },
          15_000,
          () => seen,
        )
        for (const list of seen) {
          expect(list[0]!.last_status_code).toBeNull()
          expect(list[0]!.event).toBe('form.completed')
        }
        deliveryIdByForm = new Map(answered.map((form, i) => [form.formId, seen[i]![0]!.id]))
        expect(new Set(deliveryIdByForm.values()).size).toBe(N)

        await crash(first)

        // The receiver comes up on the port that refused the first attempts.
        const receiver = scope.receiver(downPort, answer200)
        const second = await scope.intake({ cwd, args, env })
        expect(second.apiKey).toBeUndefined()

        const expectedIds = [...deliveryIdByForm.values()].sort()
        await waitFor(
          'every one of the 10 deliveries at the receiver',
          () => (expectedIds.every((id) => receiver.received.some((got) => got.deliveryId === id)) ? true : undefined),
          ARRIVAL_DEADLINE_MS,
          () => ({
            arrived: [...new Set(receiver.received.map((got) => got.deliveryId))].sort(),
            expected: expectedIds,
          }),
        )

        // Deduplicated by X-Service-Delivery: exactly the 10 delivery ids, nothing else.
        const groups = byDelivery(receiver.received)
        expect([...groups.keys()].sort()).toEqual(expectedIds)
        for (const form of answered) {
          const attempts = groups.get(deliveryIdByForm.get(form.formId)!)!
          // Every copy of a delivery carries the same body bytes.
          expect(new Set(attempts.map((got) => got.body)).size).toBe(1)
          for (const got of attempts) expectCompletedWebhook(got, form, key, version)
        }

        // The delivery log shows each one delivered (the receiver answers before the outcome is written).
        let logs: Delivery[][] = []
        await waitFor(
          'every delivery marked delivered',
          async () => {
            logs = await Promise.all(answered.map((form) => deliveriesOf(second.url, key, form.formId)))
            return logs.every((list) => list.length === 1 && list[0]!.status === 'delivered') ? true : undefined
          },
          10_000,
          () => logs,
        )
        answered.forEach((form, i) => {
          const delivery = logs[i]![0]!
          expect(delivery.id).toBe(deliveryIdByForm.get(form.formId)!)
          expect(delivery.status).toBe('delivered')
          expect(delivery.last_status_code).toBe(200)
          expect(delivery.last_error).toBeNull()
          expect(delivery.delivered_at).not.toBeNull()
          expect(delivery.next_attempt_at).toBeNull()
          // The failed attempt(s) before the crash count, and the one that succeeded.
          expect(delivery.attempts).toBeGreaterThanOrEqual(2)
        })

        scope.keep(second)
        restarted = second
      })
    },
    TEST_TIMEOUT,
  )

  test(
    '4. after the crash and restart: every acknowledged response is readable, and the database passes integrity_check after another SIGKILL and after SIGTERM',
    async () => {
      if (!restarted) throw new Error('test 1 did not leave a restarted intake to check (see its failure)')
      const scope = new Scope()
      try {
        const expectResponsesViaApi = async (url: string) => {
          for (const form of answered) {
            const responses = await request(`${url}/api/v1/forms/${form.formId}/responses`, { key })
            expect(responses.status).toBe(200)
            expect(responses.body).toHaveLength(1)
            expect(responses.body[0].id).toBe(form.receipt.id)
            expect(responses.body[0].form_id).toBe(form.formId)
            expect(responses.body[0].submitted_at).toBe(form.receipt.submitted_at)
            expect(responses.body[0].data).toEqual(form.data)
            expect(responses.body[0].context).toEqual(form.context)
            const got = await request(`${url}/api/v1/forms/${form.formId}`, { key })
            expect(got.status).toBe(200)
            expect(got.body.status).toBe('completed')
          }
        }
        const expectDatabase = () => {
          const state = integrityCheck(dbPath)
          expect(state.integrity).toEqual([{ integrity_check: 'ok' }])
          expect(state.foreignKeys).toEqual([])
          expect(state.responses).toEqual(
            answered
              .map((form) => ({ id: form.receipt.id, form_id: form.formId }))
              .sort((a, b) => (a.id < b.id ? -1 : 1)),
          )
          expect(state.deliveries).toEqual(
            answered
              .map((form) => ({ id: deliveryIdByForm.get(form.formId)!, form_id: form.formId, status: 'delivered' }))
              .sort((a, b) => (a.id < b.id ? -1 : 1)),
          )
        }

        await expectResponsesViaApi(restarted.url)

        // Without SIGTERM: killed again, the file is still consistent.
        await crash(restarted)
        restarted = undefined
        expectDatabase()

        // And the next start serves all of it, then stops cleanly.
        const third = await scope.intake({ cwd, args: ['serve', '--port', '0', '--db', dbPath], env })
        await expectResponsesViaApi(third.url)
        const logs = await Promise.all(answered.map((form) => deliveriesOf(third.url, key, form.formId)))
        for (const list of logs) expect(list.map((d) => d.status)).toEqual(['delivered'])
        expect(await third.stop('SIGTERM')).toBe(0)
        expectDatabase()
      } finally {
        await scope.close()
      }
    },
    TEST_TIMEOUT,
  )
})

describe('an attempt in flight during a crash', () => {
  test(
    '2. is made again after the restart, with the same delivery id and body, and is then marked delivered',
    async () => {
      await scenario(async (scope) => {
        const cwd = intake.tempDir()
        const dbPath = join(cwd, 'intake.db')
        const args = ['serve', '--port', '0', '--db', dbPath]
        // Timeout 2 s: the lease of an attempt runs out 7 s after it was taken.
        const env = { SERVICE_PUBLIC_RATE_LIMIT: '0', SERVICE_WEBHOOK_TIMEOUT: '2' }

        const holding = scope.receiver(0, answerNever)
        const port = holding.port
        const first = await scope.intake({ cwd, args, env })
        const key = first.apiKey!
        const form = await answer(first.url, await createForm(first.url, key, 1, `http://127.0.0.1:${port}/hook`), 1)

        const held = await waitFor('the receiver to hold the first attempt open', () => holding.received[0], 10_000)
        // Still in flight: the attempt counts from its start, its outcome is not recorded yet.
        const before = await deliveriesOf(first.url, key, form.formId)
        expect(before).toHaveLength(1)
        expect(before[0]!.id).toBe(held.deliveryId)
        expect(before[0]!.status).toBe('pending')
        expect(before[0]!.attempts).toBe(1)
        expect(before[0]!.last_status_code).toBeNull()
        expect(before[0]!.last_error).toBeNull()
        await crash(first)
        expect(holding.received).toHaveLength(1)
        expectCompletedWebhook(held, form, key, first.version)

        // The receiver is replaced by one that answers 200 on the same port.
        await holding.stop()
        const receiver = scope.receiver(port, answer200)
        const second = await scope.intake({ cwd, args, env })

        const again = await waitFor(
          'the same delivery to arrive again',
          () => receiver.received[0],
          ARRIVAL_DEADLINE_MS,
        )
        expect(again.deliveryId).toBe(held.deliveryId)
        expect(again.body).toBe(held.body)
        expectCompletedWebhook(again, form, key, second.version)

        let log: Delivery[] = []
        await waitFor(
          'the delivery marked delivered',
          async () => {
            log = await deliveriesOf(second.url, key, form.formId)
            return log.length === 1 && log[0]!.status === 'delivered' ? true : undefined
          },
          10_000,
          () => log,
        )
        expect(log[0]!.id).toBe(held.deliveryId)
        expect(log[0]!.last_status_code).toBe(200)
        expect(log[0]!.last_error).toBeNull()
        expect(log[0]!.delivered_at).not.toBeNull()
        // The attempt cut off by the crash counts too.
        expect(log[0]!.attempts).toBeGreaterThanOrEqual(2)
        expect(new Set(receiver.received.map((got) => got.deliveryId))).toEqual(new Set([held.deliveryId]))
        expect(await second.stop('SIGTERM')).toBe(0)
      })
    },
    TEST_TIMEOUT,
  )
})

describe('graceful shutdown', () => {
  test(
    '3. SIGTERM during an attempt: intake exits 0 only after the attempt completed; the next start shows it delivered once',
    async () => {
      await scenario(async (scope) => {
        const cwd = intake.tempDir()
        const dbPath = join(cwd, 'intake.db')
        const args = ['serve', '--port', '0', '--db', dbPath]
        const env = { SERVICE_PUBLIC_RATE_LIMIT: '0', SERVICE_WEBHOOK_TIMEOUT: '5' }

        const events: string[] = []
        let first: RunningIntake | undefined
        const receiver = scope.receiver(
          0,
          async () => {
            await Bun.sleep(1500)
            events.push('answered')
            return new Response('ok', { status: 200 })
          },
          () => {
            events.push('received')
            // As soon as the request is here: stop intake the way an operator does.
            if (first && first.proc.exitCode === null) {
              first.proc.kill('SIGTERM')
              events.push('SIGTERM sent')
            }
          },
        )
        first = await scope.intake({ cwd, args, env })
        const key = first.apiKey!
        const form = await answer(
          first.url,
          await createForm(first.url, key, 1, `http://127.0.0.1:${receiver.port}/hook`),
          1,
        )

        await waitFor(
          'the receiver to get the attempt',
          () => (events.includes('SIGTERM sent') ? true : undefined),
          10_000,
          () => events,
        )
        const exit = await exitOf(first, 20_000)
        events.push('exited')
        expect(exit).toEqual({ code: 0, signal: null })
        // The attempt was answered before intake exited.
        expect(events).toEqual(['received', 'SIGTERM sent', 'answered', 'exited'])
        // And intake recorded its outcome before exiting.
        await first.waitForStdout(/"msg":"webhook attempt".*"delivered":true/, 5_000)
        expect(first.stdout()).toMatch(/"msg":"shutting down"/)

        expect(receiver.received).toHaveLength(1)
        expectCompletedWebhook(receiver.received[0]!, form, key, first.version)

        const second = await scope.intake({ cwd, args, env })
        const log = await deliveriesOf(second.url, key, form.formId)
        expect(log).toHaveLength(1)
        expect(log[0]!.id).toBe(receiver.received[0]!.deliveryId)
        expect(log[0]!.status).toBe('delivered')
        expect(log[0]!.attempts).toBe(1)
        expect(log[0]!.last_status_code).toBe(200)
        expect(log[0]!.last_error).toBeNull()
        expect(log[0]!.delivered_at).not.toBeNull()
        expect(await second.stop('SIGTERM')).toBe(0)
        expect(receiver.received).toHaveLength(1)
      })
    },
    TEST_TIMEOUT,
  )
})
