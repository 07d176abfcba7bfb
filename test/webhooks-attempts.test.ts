/**
 * Webhooks and waiting for the answer (spec 6; CONTRACT 5, 7, 8): the signed
 * form.completed delivery as a receiver sees it, retries and their timing,
 * timeouts, the durable outbox, expiry by the background loop, the delivery
 * log and redeliver, long-polling, and the optional refusal of private targets.
 *
 * Time: the loop decides what is due from the test clock (t.clock) and sleeps
 * with real timers, so a retry is made due by advancing the clock and waking
 * the loop. Nothing here asserts on elapsed wall-clock time: conditions are
 * awaited with `until`, which fails with a clear message when they never hold.
 *
 * Receivers are real HTTP servers (and raw sockets) on 127.0.0.1 only.
 */

import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import { Webhook } from 'standardwebhooks'
import packageJson from '../package.json' with { type: 'json' }
import { PARALLEL_ATTEMPTS, PARALLEL_ATTEMPTS_PER_HOST } from '../src/modules/webhooks/worker.ts'
import {
  API_TIME_PATTERN,
  apiClient,
  contextsPerTest,
  type Delivery,
  postForm,
  type Resolver,
  send,
  stubResolver,
  submit,
  type TestContext,
  track,
  ULID_PATTERN,
  UNKNOWN_ID,
  until,
} from './utils.ts'

setDefaultTimeout(20_000)

// ---------------------------------------------------------------- context and cleanup

let t: TestContext
/** `cleanups`: receivers and sockets to stop, run before the app closes, so no attempt is left hanging. */
const { create, cleanups } = contextsPerTest()

async function setup(env: Record<string, string> = {}, resolver?: Resolver): Promise<TestContext> {
  return (t = await create(env, { resolver }))
}

// ---------------------------------------------------------------- waiting

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** How long a negative check gives the loop to (wrongly) act. Not a timing assertion. */
const QUIET_MS = 300

/** Moves the test clock and wakes the loop: what is due now gets done. */
function advanceAndWake(ms: number) {
  t.clock.advance(ms)
  t.background.wake()
}

/** A datetime as the API writes it (UTC, milliseconds, no Z). */
const apiTime = (ms: number) => new Date(ms).toISOString().slice(0, -1)

// ---------------------------------------------------------------- receivers (127.0.0.1 only)

interface Received {
  method: string
  path: string
  headers: Record<string, string>
  /** The raw body bytes. */
  body: Buffer
  text: string
}

/** A real HTTP receiver; `reply` gets the 1-based number of the request. */
function receiver(reply: (n: number) => Response | Promise<Response> = () => new Response('ok')) {
  const received: Received[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const body = Buffer.from(await request.arrayBuffer())
      received.push({
        method: request.method,
        path: new URL(request.url).pathname,
        headers: Object.fromEntries(request.headers),
        body,
        text: body.toString('utf8'),
      })
      return reply(received.length)
    },
  })
  cleanups.push(() => server.stop(true))
  const port = server.port as number
  return { url: `http://127.0.0.1:${port}/hook`, port, received }
}

/** Replies with these statuses in turn; the last one repeats. */
const replyWith =
  (...statuses: number[]) =>
  (n: number) => {
    const status = statuses[Math.min(n, statuses.length) - 1]!
    return new Response(status === 204 ? null : `reply ${status}`, { status })
  }

/** A raw TCP server on 127.0.0.1; `onRequest` runs once the first bytes of a request arrive. */
async function rawServer(onRequest: (socket: Socket) => void) {
  const sockets = new Set<Socket>()
  const state = { connections: 0, requests: 0 }
  const server = createServer((socket) => {
    state.connections++
    sockets.add(socket)
    socket.on('error', () => {})
    socket.on('close', () => sockets.delete(socket))
    let seen = false
    socket.on('data', () => {
      if (seen) return
      seen = true
      state.requests++
      onRequest(socket)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  cleanups.push(() => {
    for (const socket of sockets) socket.destroy()
    server.close()
  })
  return { url: `http://127.0.0.1:${port}/hook`, state }
}

/** A URL on 127.0.0.1 whose port was just bound and closed again: nothing listens there. */
async function closedPortUrl(): Promise<string> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}/hook`
}

// ---------------------------------------------------------------- forms, answers, the delivery log

const DELIVERY_KEYS = [
  'attempts',
  'created_at',
  'delivered_at',
  'event',
  'id',
  'last_error',
  'last_status_code',
  'next_attempt_at',
  'status',
]

/** The per-form secret, as an API client computes it from its own key. */
const secretOf = (formId: string, key = t.key) => createHmac('sha256', key).update(formId).digest('hex')

const hexHmac = (secret: string, body: Buffer | string) => createHmac('sha256', secret).update(body).digest('hex')

/** A verifier from the official Standard Webhooks library, keyed with the 32 bytes the hex secret encodes. */
const standardVerifier = (secretHex: string) => new Webhook(Buffer.from(secretHex, 'hex').toString('base64'))

const hookedForm = (url: string, overrides: Record<string, unknown> = {}) =>
  t.api.createForm({ callback_url: url, ...overrides })

/** Answers a form with a JSON submission; fails unless it is recorded. */
async function answer(formId: string, data: unknown = { name: 'Ada' }, headers: Record<string, string> = {}) {
  const res = await submit(t.app, formId, data, headers)
  if (res.status !== 201) throw new Error(`submission not recorded: ${res.status} ${res.text}`)
  return res.body as { id: string; form_id: string; submitted_at: string }
}

/** GET /forms/<id>/deliveries, which must answer 200 with an array. */
async function deliveryLog(formId: string): Promise<Delivery[]> {
  const res = await t.api.get(`/forms/${formId}/deliveries`)
  if (res.status !== 200 || !Array.isArray(res.body)) throw new Error(`delivery log: ${res.status} ${res.text}`)
  return res.body as Delivery[]
}

/** Waits until the form's single delivery satisfies `condition`, and returns it. */
async function waitForDelivery(formId: string, condition: (d: Delivery) => boolean, what: string): Promise<Delivery> {
  let last: Delivery[] = []
  await until(
    async () => {
      last = await deliveryLog(formId)
      return last.length === 1 && condition(last[0]!)
    },
    5000,
    `delivery of form ${formId}: ${what}`,
    () => last,
  )
  return last[0]!
}

/**
 * n attempts made and the last one's outcome recorded. An attempt counts from
 * its start; while it is in flight the delivery is still due (next_attempt_at
 * not in the future), and recording a failure moves next_attempt_at ahead.
 */
const waitForAttempts = (formId: string, n: number) =>
  waitForDelivery(
    formId,
    (d) =>
      d.attempts === n &&
      (d.status !== 'pending' || (d.next_attempt_at !== null && Date.parse(`${d.next_attempt_at}Z`) > t.clock())),
    `${n} attempt(s) recorded`,
  )

const waitForReceived = (rx: { received: Received[] }, n: number) =>
  until(
    () => rx.received.length >= n,
    5000,
    `the receiver to get ${n} request(s)`,
    () => rx.received.length,
  )

/** Retry n of a round comes 5^(n-1) seconds after the failed attempt. */
const retryDelay = (n: number) => 5 ** (n - 1) * 1000

// ================================================================= 1. signing and shape

describe('a delivery as the receiver sees it', () => {
  test('carries every documented header, both signatures verify, and the payload is that of spec 6.2', async () => {
    await setup({ SERVICE_TRUST_PROXY: 'true' })
    const rx = receiver()
    const callbackMetadata = { run: 'r-42', tags: ['a', 'b'], nested: { ok: true } }
    const context = { agent: 'planner', step: 3, state: { ids: [1, 2, 3] }, note: 'Zoë' }
    const form = await hookedForm(rx.url, {
      title: 'Trip to Lisbon',
      callback_metadata: callbackMetadata,
      context,
      fields: [
        { key: 'name', type: 'text', label: 'Name', required: true },
        { key: 'guests', type: 'number', label: 'Guests' },
      ],
    })
    t.background.start()
    const receipt = await answer(
      form.id,
      { name: 'Ada', guests: 2 },
      { 'user-agent': 'ua-test/1', 'x-forwarded-for': '203.0.113.7' },
    )
    await waitForReceived(rx, 1)
    const delivery = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')
    const hook = rx.received[0]!
    const secret = secretOf(form.id)
    expect(secret).toMatch(/^[0-9a-f]{64}$/)

    expect(hook.method).toBe('POST')
    expect(hook.path).toBe('/hook')
    expect(hook.headers['content-type']).toBe('application/json')
    expect(hook.headers['x-service-event']).toBe('form.completed')
    expect(hook.headers['user-agent']).toBe(`intake/${packageJson.version}`)
    expect(hook.headers['x-service-delivery']).toBe(delivery.id)
    expect(hook.headers['webhook-id']).toBe(delivery.id)
    expect(hook.headers['webhook-timestamp']).toBe(String(Math.floor(t.clock() / 1000)))

    // X-Service-Signature: lowercase hex HMAC-SHA256 of the raw body, keyed with the 64-hex secret.
    expect(hook.headers['x-service-signature']).toMatch(/^sha256=[0-9a-f]{64}$/)
    expect(hook.headers['x-service-signature']).toBe(`sha256=${hexHmac(secret, hook.body)}`)
    // Standard Webhooks, checked by the official library; a different secret does not verify.
    expect(standardVerifier(secret).verify(hook.text, hook.headers)).toEqual(JSON.parse(hook.text))
    const otherSecret = secretOf(form.id, (await t.createKey('someone-else')).key)
    expect(() => standardVerifier(otherSecret).verify(hook.text, hook.headers)).toThrow()

    const stored = (await t.api.get(`/forms/${form.id}/responses`)).body[0]
    const payload = JSON.parse(hook.text)
    expect(Object.keys(payload).sort()).toEqual(
      [
        'callback_metadata',
        'completed_at',
        'context',
        'data',
        'event',
        'form_id',
        'form_title',
        'metadata',
        'response_id',
      ].sort(),
    )
    expect(payload).toEqual({
      event: 'form.completed',
      form_id: form.id,
      form_title: 'Trip to Lisbon',
      completed_at: `${stored.submitted_at}Z`,
      response_id: receipt.id,
      data: { name: 'Ada', guests: 2 },
      metadata: { ip: '203.0.113.7', user_agent: 'ua-test/1' },
      callback_metadata: callbackMetadata,
      context,
    })
    expect(payload.completed_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(payload.response_id).toMatch(ULID_PATTERN)
  })

  test('an HTML form post is delivered too; callback_metadata is {} and context null when none were given', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url, {
      fields: [
        { key: 'name', type: 'text', label: 'Name', required: true },
        { key: 'guests', type: 'number', label: 'Guests' },
        { key: 'agree', type: 'checkbox', label: 'I agree' },
      ],
    })
    t.background.start()
    const posted = await postForm(
      t.app,
      form.id,
      { name: 'Grace', guests: '4' },
      { 'user-agent': 'Mozilla/5.0 (test)' },
    )
    expect(posted.status).toBe(303)
    await waitForReceived(rx, 1)
    const hook = rx.received[0]!
    expect(hook.headers['x-service-signature']).toBe(`sha256=${hexHmac(secretOf(form.id), hook.body)}`)
    expect(() => standardVerifier(secretOf(form.id)).verify(hook.text, hook.headers)).not.toThrow()

    const stored = (await t.api.get(`/forms/${form.id}/responses`)).body[0]
    const payload = JSON.parse(hook.text)
    expect(payload.callback_metadata).toEqual({})
    expect(payload).toHaveProperty('context', null)
    expect(payload.data).toEqual({ name: 'Grace', guests: 4, agree: false })
    expect(payload.data).toEqual(stored.data)
    expect(payload.metadata).toEqual(stored.metadata)
    expect(payload.metadata.user_agent).toBe('Mozilla/5.0 (test)')
    expect(payload.response_id).toBe(stored.id)
    expect(payload.completed_at).toBe(`${stored.submitted_at}Z`)
  })

  test("every attempt of a delivery has the same body bytes and delivery id; webhook-timestamp is the attempt's own time", async () => {
    await setup()
    const rx = receiver(replyWith(500, 503, 200))
    const form = await hookedForm(rx.url, { context: { step: 1 }, callback_metadata: { run: 7 } })
    t.background.start()
    await answer(form.id)
    const times: number[] = [t.clock()]
    await waitForReceived(rx, 1)
    await waitForAttempts(form.id, 1)

    advanceAndWake(retryDelay(1))
    times.push(t.clock())
    await waitForReceived(rx, 2)
    await waitForAttempts(form.id, 2)

    advanceAndWake(retryDelay(2))
    times.push(t.clock())
    await waitForReceived(rx, 3)
    const delivery = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered on the third attempt')

    expect(rx.received).toHaveLength(3)
    expect(delivery.attempts).toBe(3)
    expect(delivery.last_status_code).toBe(200)
    expect(delivery.last_error).toBeNull()
    expect(delivery.delivered_at).toBe(apiTime(times[2]!))
    const secret = secretOf(form.id)
    rx.received.forEach((hook, i) => {
      expect(hook.body.equals(rx.received[0]!.body)).toBe(true)
      expect(hook.headers['x-service-delivery']).toBe(delivery.id)
      expect(hook.headers['webhook-id']).toBe(delivery.id)
      expect(hook.headers['x-service-signature']).toBe(`sha256=${hexHmac(secret, rx.received[0]!.body)}`)
      expect(hook.headers['webhook-timestamp']).toBe(String(Math.floor(times[i]! / 1000)))
      expect(() => standardVerifier(secret).verify(hook.text, hook.headers)).not.toThrow()
    })
    const stamps = rx.received.map((hook) => Number(hook.headers['webhook-timestamp']))
    expect(stamps[1]! - stamps[0]!).toBe(1)
    expect(stamps[2]! - stamps[0]!).toBe(6)
  })
})

// ================================================================= 2. delivery rules

describe('attempts and retries', () => {
  const budgets: Array<[string, Record<string, string>, number]> = [
    ['default (3 retries)', {}, 4],
    ['SERVICE_WEBHOOK_MAX_RETRIES=0', { SERVICE_WEBHOOK_MAX_RETRIES: '0' }, 1],
    ['SERVICE_WEBHOOK_MAX_RETRIES=1', { SERVICE_WEBHOOK_MAX_RETRIES: '1' }, 2],
  ]
  for (const [name, env, total] of budgets) {
    test(`${name}: ${total} attempt(s), then failed, and nothing more however long the clock runs`, async () => {
      await setup(env)
      const rx = receiver(replyWith(500))
      const form = await hookedForm(rx.url)
      t.background.start()
      await answer(form.id)
      for (let n = 1; n <= total; n++) {
        await waitForReceived(rx, n)
        const d = await waitForAttempts(form.id, n)
        if (n < total) {
          expect(d.status).toBe('pending')
          advanceAndWake(retryDelay(n))
        }
      }
      const failed = await waitForDelivery(form.id, (d) => d.status === 'failed', 'failed')
      expect(failed.attempts).toBe(total)
      expect(failed.last_status_code).toBe(500)
      expect(typeof failed.last_error).toBe('string')
      expect(failed.last_error!.length).toBeGreaterThan(0)
      expect(failed.next_attempt_at).toBeNull()
      expect(failed.delivered_at).toBeNull()

      for (const ms of [retryDelay(total + 1), 3_600_000, 7 * 86_400_000]) {
        advanceAndWake(ms)
        await sleep(QUIET_MS)
      }
      expect(rx.received).toHaveLength(total)
      const after = (await deliveryLog(form.id))[0]!
      expect(after.status).toBe('failed')
      expect(after.attempts).toBe(total)
    })
  }

  test('retry n comes only once 5^(n-1) s have passed, as next_attempt_at shows', async () => {
    await setup()
    const rx = receiver(replyWith(500))
    const form = await hookedForm(rx.url)
    t.background.start()
    await answer(form.id)
    for (let n = 1; n <= 3; n++) {
      await waitForReceived(rx, n)
      const d = await waitForAttempts(form.id, n)
      expect(d.status).toBe('pending')
      expect(d.next_attempt_at).toBe(apiTime(t.clock() + retryDelay(n)))

      advanceAndWake(retryDelay(n) - 100)
      await sleep(QUIET_MS)
      expect(rx.received).toHaveLength(n)
      const early = (await deliveryLog(form.id))[0]!
      expect(early.attempts).toBe(n)
      expect(early.status).toBe('pending')

      advanceAndWake(100)
      await waitForReceived(rx, n + 1)
    }
    const failed = await waitForDelivery(form.id, (d) => d.status === 'failed', 'failed after 4 attempts')
    expect(failed.attempts).toBe(4)
    expect(rx.received).toHaveLength(4)
  })

  for (const status of [200, 201, 202, 204, 299]) {
    test(`a ${status} reply is a success`, async () => {
      await setup({ SERVICE_WEBHOOK_MAX_RETRIES: '0' })
      const rx = receiver(replyWith(status))
      const form = await hookedForm(rx.url)
      t.background.start()
      await answer(form.id)
      const d = await waitForDelivery(form.id, (x) => x.status !== 'pending', 'an outcome')
      expect(d.status).toBe('delivered')
      expect(d.attempts).toBe(1)
      expect(d.last_status_code).toBe(status)
      expect(d.last_error).toBeNull()
      expect(d.delivered_at).toBe(apiTime(t.clock()))
      expect(d.next_attempt_at).toBeNull()
      expect(rx.received).toHaveLength(1)
    })
  }

  for (const status of [301, 302, 303, 307, 308]) {
    test(`a ${status} redirect is not followed and counts as a failure`, async () => {
      await setup({ SERVICE_WEBHOOK_MAX_RETRIES: '0' })
      const target = receiver()
      const rx = receiver(() => new Response(null, { status, headers: { location: target.url } }))
      const form = await hookedForm(rx.url)
      t.background.start()
      await answer(form.id)
      const d = await waitForDelivery(form.id, (x) => x.status !== 'pending', 'an outcome')
      expect(d.status).toBe('failed')
      expect(d.last_status_code).toBe(status)
      expect(d.last_error).toBeString()
      expect(d.delivered_at).toBeNull()
      expect(rx.received).toHaveLength(1)
      await sleep(QUIET_MS)
      expect(target.received).toHaveLength(0)
    })
  }

  for (const status of [400, 401, 404, 410, 429, 500, 502, 503]) {
    test(`a ${status} reply is a failure`, async () => {
      await setup({ SERVICE_WEBHOOK_MAX_RETRIES: '0' })
      const rx = receiver(replyWith(status))
      const form = await hookedForm(rx.url)
      t.background.start()
      await answer(form.id)
      const d = await waitForDelivery(form.id, (x) => x.status !== 'pending', 'an outcome')
      expect(d.status).toBe('failed')
      expect(d.attempts).toBe(1)
      expect(d.last_status_code).toBe(status)
      expect(d.last_error).toBeString()
      expect(d.last_error!.length).toBeGreaterThan(0)
      expect(d.delivered_at).toBeNull()
      expect(rx.received).toHaveLength(1)
    })
  }
})

describe('SERVICE_WEBHOOK_TIMEOUT bounds each attempt whole; connection failures are failed attempts', () => {
  const targets: Array<[string, () => Promise<{ url: string; state?: { requests: number } }>, boolean]> = [
    ['a server that accepts and never answers', () => rawServer(() => {}), true],
    [
      'a server that sends headers, then trickles the body a byte every 200 ms',
      () =>
        rawServer((socket) => {
          socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n')
          const timer = setInterval(() => socket.write('x'), 200)
          socket.on('close', () => clearInterval(timer))
          socket.on('error', () => clearInterval(timer))
        }),
      false,
    ],
    [
      'a server that resets the connection',
      () =>
        rawServer((socket) => {
          if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy()
          else socket.destroy()
        }),
      true,
    ],
    ['a closed port', async () => ({ url: await closedPortUrl() }), true],
  ]

  for (const [name, make, noStatus] of targets) {
    test(`${name}: each attempt is recorded as failed with an error, and the loop goes on`, async () => {
      await setup({ SERVICE_WEBHOOK_TIMEOUT: '0.5', SERVICE_WEBHOOK_MAX_RETRIES: '1' })
      const target = await make()
      const form = await hookedForm(target.url)
      t.background.start()
      await answer(form.id)

      const first = await waitForAttempts(form.id, 1)
      expect(first.status).toBe('pending')
      expect(first.last_error).toBeString()
      expect(first.last_error!.length).toBeGreaterThan(0)
      expect(first.delivered_at).toBeNull()
      if (noStatus) expect(first.last_status_code).toBeNull()

      advanceAndWake(retryDelay(1))
      const second = await waitForAttempts(form.id, 2)
      expect(second.status).toBe('failed')
      expect(second.last_error).toBeString()
      expect(second.last_error!.length).toBeGreaterThan(0)
      expect(second.delivered_at).toBeNull()
      if (noStatus) expect(second.last_status_code).toBeNull()
      if (target.state) expect(target.state.requests).toBe(2)

      // The loop is still working: another form's delivery to a healthy receiver arrives.
      const healthy = receiver()
      const other = await hookedForm(healthy.url)
      await answer(other.id)
      await waitForReceived(healthy, 1)
      await waitForDelivery(other.id, (d) => d.status === 'delivered', 'delivered after the failures')
    })
  }

  test('while one receiver hangs, a delivery for another form to a healthy receiver still arrives', async () => {
    await setup({ SERVICE_WEBHOOK_TIMEOUT: '30' })
    const hanging = await rawServer(() => {})
    const healthy = receiver()
    const slowForm = await hookedForm(hanging.url)
    const quickForm = await hookedForm(healthy.url)
    t.background.start()
    await answer(slowForm.id)
    await until(
      () => hanging.state.requests === 1,
      5000,
      'the first attempt to reach the hanging receiver',
      () => hanging.state,
    )

    await answer(quickForm.id)
    await waitForReceived(healthy, 1)
    await waitForDelivery(quickForm.id, (d) => d.status === 'delivered', 'delivered while the other attempt hangs')
    // Its one attempt is still in flight: counted, with no outcome yet.
    const stuck = (await deliveryLog(slowForm.id))[0]!
    expect(stuck.status).toBe('pending')
    expect(stuck.attempts).toBe(1)
    expect(stuck.last_status_code).toBeNull()
    expect(stuck.last_error).toBeNull()
    // afterEach destroys the hanging socket before closing the app, so the attempt ends at once.
  })

  test('a receiver that hangs on more deliveries than one host may hold cannot take every slot from another receiver', async () => {
    await setup({ SERVICE_WEBHOOK_TIMEOUT: '30' })
    const hanging = await rawServer(() => {})
    const healthy = receiver()
    const slowForms = await Promise.all(Array.from({ length: PARALLEL_ATTEMPTS }, () => hookedForm(hanging.url)))
    const quickForm = await hookedForm(healthy.url)
    for (const form of slowForms) await answer(form.id)
    t.background.start()
    // The hanging host gets its share of the slots, and no more.
    await until(
      () => hanging.state.requests === PARALLEL_ATTEMPTS_PER_HOST,
      5000,
      'the hanging receiver to hold its share',
      () => hanging.state,
    )

    await answer(quickForm.id)
    await waitForReceived(healthy, 1)
    await waitForDelivery(
      quickForm.id,
      (d) => d.status === 'delivered',
      'delivered while the other host holds its share',
    )
    expect(hanging.state.requests).toBe(PARALLEL_ATTEMPTS_PER_HOST)
  })
})

// ================================================================= 3. durable rows and waking

describe('the outbox', () => {
  test('the delivery row is listed as pending right after the submission, before the loop runs, and is delivered once it starts', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url)
    await answer(form.id)
    const log = await deliveryLog(form.id)
    expect(log).toHaveLength(1)
    const pending = log[0]!
    expect(pending.status).toBe('pending')
    expect(pending.attempts).toBe(0)
    expect(pending.last_status_code).toBeNull()
    expect(pending.last_error).toBeNull()
    expect(pending.delivered_at).toBeNull()
    expect(pending.created_at).toBe(apiTime(t.clock()))
    expect(pending.next_attempt_at).toMatch(API_TIME_PATTERN)
    expect(pending.next_attempt_at! <= apiTime(t.clock())).toBe(true)

    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(0)

    t.background.start()
    await waitForReceived(rx, 1)
    const delivered = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')
    expect(delivered.id).toBe(pending.id)
    expect(rx.received[0]!.headers['x-service-delivery']).toBe(pending.id)
  })

  test('a running loop is woken by the submission itself: no clock advance, no wake call', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url)
    t.background.start()
    await sleep(50)
    await answer(form.id)
    await waitForReceived(rx, 1)
    await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')
  })

  test('deleting the answered form drops its pending delivery', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url)
    await answer(form.id)
    expect(await deliveryLog(form.id)).toHaveLength(1)
    expect((await t.api.delete(`/forms/${form.id}`)).status).toBe(204)
    t.background.start()
    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(0)
    expect((await t.api.get(`/forms/${form.id}/deliveries`)).status).toBe(404)
  })
})

// ================================================================= 4. expiry by the loop

describe('expiry written by the background loop', () => {
  const storedForm = async (id: string) =>
    (
      (await t.sql('select status, context from forms where id = ?', id)) as Array<{
        status: string
        context: string | null
      }>
    )[0] ?? null

  test('a form past expires_at gets the stored status expired and loses its context; one not yet due stays active', async () => {
    await setup()
    const due = await t.api.createForm({ expires_in: '1m', context: { step: 1 } })
    const later = await t.api.createForm({ expires_in: '2m', context: { step: 2 } })
    t.background.start()
    await sleep(QUIET_MS)
    expect(await storedForm(due.id)).toEqual({ status: 'active', context: '{"step":1}' })

    advanceAndWake(61_000)
    await until(
      async () => (await storedForm(due.id))?.status === 'expired',
      5000,
      'the loop to write expired',
      () => storedForm(due.id),
    )
    expect(await storedForm(due.id)).toEqual({ status: 'expired', context: null })
    expect(await storedForm(later.id)).toEqual({ status: 'active', context: '{"step":2}' })

    const read = await t.api.get(`/forms/${due.id}`)
    expect(read.body.status).toBe('expired')
    expect(read.body.context).toBeNull()
    expect((await t.api.get(`/forms/${later.id}`)).body.status).toBe('active')
  })
})

// ================================================================= 5. delivery log and redeliver

describe('GET /forms/<id>/deliveries and redeliver', () => {
  test('empty before an answer; then one entry of the documented shape, times without Z', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url)
    const before = await t.api.get(`/forms/${form.id}/deliveries`)
    expect(before.status).toBe(200)
    expect(before.headers.get('content-type')).toContain('application/json')
    expect(before.body).toEqual([])

    await answer(form.id)
    const [pending] = await deliveryLog(form.id)
    expect(Object.keys(pending!).sort()).toEqual(DELIVERY_KEYS)
    expect(pending!.id).toBeString()
    expect(pending!.id.length).toBeGreaterThan(0)
    expect(pending!.event).toBe('form.completed')
    expect(pending!.status).toBe('pending')
    expect(pending!.created_at).toMatch(API_TIME_PATTERN)

    t.background.start()
    const delivered = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')
    expect(Object.keys(delivered).sort()).toEqual(DELIVERY_KEYS)
    expect(delivered).toEqual({
      id: pending!.id,
      event: 'form.completed',
      status: 'delivered',
      attempts: 1,
      last_status_code: 200,
      last_error: null,
      next_attempt_at: null,
      delivered_at: apiTime(t.clock()),
      created_at: pending!.created_at,
    })
    expect(delivered.delivered_at).toMatch(API_TIME_PATTERN)
  })

  test('a form without callback_url has no deliveries after its answer', async () => {
    await setup()
    const form = await t.api.createForm()
    await answer(form.id)
    const res = await t.api.get(`/forms/${form.id}/deliveries`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual([])
  })

  test('redeliver of a failed delivery: 202, a fresh round with the full attempt budget, attempts keeps counting', async () => {
    await setup({ SERVICE_WEBHOOK_MAX_RETRIES: '1' })
    const rx = receiver(replyWith(500))
    const form = await hookedForm(rx.url)
    t.background.start()
    await answer(form.id)
    await waitForAttempts(form.id, 1)
    advanceAndWake(retryDelay(1))
    const failed = await waitForDelivery(form.id, (d) => d.status === 'failed', 'failed after 2 attempts')
    expect(failed.attempts).toBe(2)
    expect(rx.received).toHaveLength(2)

    const res = await t.api.post(`/forms/${form.id}/deliveries/${failed.id}/redeliver`)
    expect(res.status).toBe(202)
    expect(res.body.id).toBe(failed.id)
    expect(res.body.status).toBe('pending')
    expect(res.body.attempts).toBe(2)

    await waitForReceived(rx, 3)
    const third = await waitForAttempts(form.id, 3)
    expect(third.status).toBe('pending')
    advanceAndWake(retryDelay(1))
    await waitForReceived(rx, 4)
    const again = await waitForDelivery(
      form.id,
      (d) => d.status === 'failed' && d.attempts === 4,
      'failed again after 4 attempts in total',
    )
    expect(again.id).toBe(failed.id)

    advanceAndWake(3_600_000)
    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(4)
    for (const hook of rx.received) {
      expect(hook.body.equals(rx.received[0]!.body)).toBe(true)
      expect(hook.headers['x-service-delivery']).toBe(failed.id)
    }
  })

  test('redeliver of a delivered delivery sends it again with the same id and body', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url)
    t.background.start()
    await answer(form.id)
    const delivered = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')
    expect(rx.received).toHaveLength(1)

    const res = await t.api.post(`/forms/${form.id}/deliveries/${delivered.id}/redeliver`)
    expect(res.status).toBe(202)
    await waitForReceived(rx, 2)
    const again = await waitForDelivery(form.id, (d) => d.status === 'delivered' && d.attempts === 2, 'delivered again')
    expect(again.id).toBe(delivered.id)
    expect(rx.received[1]!.body.equals(rx.received[0]!.body)).toBe(true)
    expect(rx.received[1]!.headers['x-service-delivery']).toBe(delivered.id)
    expect(rx.received[1]!.headers['webhook-id']).toBe(delivered.id)
    expect(rx.received[1]!.headers['x-service-signature']).toBe(rx.received[0]!.headers['x-service-signature'])
  })

  test('redeliver of a pending delivery is 409 and changes nothing', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url)
    await answer(form.id)
    const [pending] = await deliveryLog(form.id)
    const res = await t.api.post(`/forms/${form.id}/deliveries/${pending!.id}/redeliver`)
    expect(res.status).toBe(409)
    expect(res.body.detail).toBeString()
    expect(await deliveryLog(form.id)).toEqual([pending!])
  })

  test('an unknown delivery id, or one of another form, is 404', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url)
    const sibling = await hookedForm(rx.url)
    t.background.start()
    await answer(form.id)
    const delivered = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')

    for (const id of [UNKNOWN_ID, 'not-a-delivery']) {
      const res = await t.api.post(`/forms/${form.id}/deliveries/${id}/redeliver`)
      expect(res.status).toBe(404)
      expect(res.body.detail).toBeString()
    }
    const crossed = await t.api.post(`/forms/${sibling.id}/deliveries/${delivered.id}/redeliver`)
    expect(crossed.status).toBe(404)
    expect((await t.api.post(`/forms/${UNKNOWN_ID}/deliveries/${delivered.id}/redeliver`)).status).toBe(404)
    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(1)
    expect((await deliveryLog(form.id))[0]!.attempts).toBe(1)
  })

  test("another account's form is 404 on both routes; without a key it is 403", async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url)
    t.background.start()
    await answer(form.id)
    const delivered = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')

    const other = apiClient(t.app, (await t.createKey('other-account')).key)
    const list = await other.get(`/forms/${form.id}/deliveries`)
    expect(list.status).toBe(404)
    expect(list.body).toEqual({ detail: 'Form not found' })
    const redeliver = await other.post(`/forms/${form.id}/deliveries/${delivered.id}/redeliver`)
    expect(redeliver.status).toBe(404)
    expect(redeliver.body).toEqual({ detail: 'Form not found' })

    const anonymousList = await send(t.app, 'GET', `/api/v1/forms/${form.id}/deliveries`)
    expect(anonymousList.status).toBe(403)
    expect(anonymousList.body).toEqual({ detail: 'Not authenticated' })
    const anonymousRedeliver = await send(
      t.app,
      'POST',
      `/api/v1/forms/${form.id}/deliveries/${delivered.id}/redeliver`,
    )
    expect(anonymousRedeliver.status).toBe(403)
    expect(anonymousRedeliver.body).toEqual({ detail: 'Not authenticated' })

    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(1)
    expect((await deliveryLog(form.id))[0]).toEqual(delivered)
  })
})

// ================================================================= 6. long-poll

describe('GET /forms/<id>/responses?wait=N', () => {
  /** Starts a long-poll and checks that it is held (still open after a quiet moment). */
  async function heldWaiter(formId: string, wait: number) {
    const waiter = track(t.api.get(`/forms/${formId}/responses?wait=${wait}`))
    await sleep(QUIET_MS)
    expect(waiter.settled).toBe(false)
    return waiter
  }

  test('holds an active unanswered form until a submission arrives, then returns it', async () => {
    await setup()
    const form = await t.api.createForm({ context: { step: 9 } })
    const waiter = await heldWaiter(form.id, 30)
    const receipt = await answer(form.id, { name: 'Ada' })
    const res = await waiter.promise
    expect(res.status).toBe(200)
    expect(res.body).toHaveLength(1)
    expect(res.body[0].id).toBe(receipt.id)
    expect(res.body[0].data).toEqual({ name: 'Ada' })
    expect(res.body[0].context).toEqual({ step: 9 })
  })

  test('returns [] when the form is cancelled while waiting', async () => {
    await setup()
    const form = await t.api.createForm()
    const waiter = await heldWaiter(form.id, 30)
    expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
    const res = await waiter.promise
    expect(res.status).toBe(200)
    expect(res.body).toEqual([])
  })

  test('returns 404 when the form is deleted while waiting', async () => {
    await setup()
    const form = await t.api.createForm()
    const waiter = await heldWaiter(form.id, 30)
    expect((await t.api.delete(`/forms/${form.id}`)).status).toBe(204)
    const res = await waiter.promise
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ detail: 'Form not found' })
  })

  test('returns [] when the time is up', async () => {
    await setup()
    const form = await t.api.createForm()
    const res = await t.api.get(`/forms/${form.id}/responses?wait=1`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual([])
    expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('active')
  })

  test('answers at once when the form is already answered, cancelled or expired', async () => {
    await setup()
    const answered = await t.api.createForm()
    const receipt = await answer(answered.id)
    const cancelled = await t.api.createForm()
    expect((await t.api.patch(`/forms/${cancelled.id}`, { status: 'cancelled' })).status).toBe(200)
    const expired = await t.api.createForm({ expires_in: '1m' })
    t.clock.advance(61_000)

    const cases: Array<[string, string, unknown[] | ((body: any) => void)]> = [
      ['answered', answered.id, (body) => expect(body.map((r: { id: string }) => r.id)).toEqual([receipt.id])],
      ['cancelled', cancelled.id, []],
      ['expired', expired.id, []],
    ]
    for (const [name, id, expected] of cases) {
      const waiter = track(t.api.get(`/forms/${id}/responses?wait=60`))
      await until(() => waiter.settled, 5000, `the long-poll on the ${name} form to answer without waiting`)
      const res = await waiter.promise
      expect(res.status).toBe(200)
      if (typeof expected === 'function') expected(res.body)
      else expect(res.body).toEqual(expected)
    }
  })

  for (const wait of ['0', '61', 'abc', '1.5', '-1']) {
    test(`wait=${wait} is 422`, async () => {
      await setup()
      const form = await t.api.createForm()
      const res = await t.api.get(`/forms/${form.id}/responses?wait=${wait}`)
      expect(res.status).toBe(422)
      expect(res.body.detail).toBeString()
    })
  }

  test('a waiter returns [] when the loop expires the form', async () => {
    await setup()
    const form = await t.api.createForm({ expires_in: '1m', context: { step: 1 } })
    t.background.start()
    const waiter = await heldWaiter(form.id, 30)
    advanceAndWake(61_000)
    await until(() => waiter.settled, 5000, 'the waiter to return once the loop expires the form')
    const res = await waiter.promise
    expect(res.status).toBe(200)
    expect(res.body).toEqual([])
    const read = await t.api.get(`/forms/${form.id}`)
    expect(read.body.status).toBe('expired')
    expect(read.body.context).toBeNull()
  })
})

// ================================================================= 7. private targets

describe('SERVICE_WEBHOOK_BLOCK_PRIVATE', () => {
  async function expectRefused(callback: string, names: string) {
    const form = await hookedForm(callback)
    t.background.start()
    await answer(form.id)
    const d = await waitForDelivery(form.id, (x) => x.status !== 'pending', 'an outcome')
    expect(d.status).toBe('failed')
    expect(d.attempts).toBe(1)
    expect(d.last_status_code).toBeNull()
    expect(d.last_error).toBeString()
    expect(d.last_error).toContain(names)
    return d
  }

  test('a loopback IPv4 literal (a live receiver) is refused', async () => {
    const dns = stubResolver({})
    await setup({ SERVICE_WEBHOOK_BLOCK_PRIVATE: 'true', SERVICE_WEBHOOK_MAX_RETRIES: '0' }, dns.resolver)
    const rx = receiver()
    await expectRefused(rx.url, '127.0.0.1')
    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(0)
  })

  test('a loopback IPv6 literal [::1] is refused', async () => {
    const dns = stubResolver({})
    await setup({ SERVICE_WEBHOOK_BLOCK_PRIVATE: 'true', SERVICE_WEBHOOK_MAX_RETRIES: '0' }, dns.resolver)
    const rx = receiver()
    await expectRefused(`http://[::1]:${rx.port}/hook`, '::1')
    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(0)
  })

  test('an IPv4-mapped loopback literal [::ffff:127.0.0.1] is refused', async () => {
    const dns = stubResolver({})
    await setup({ SERVICE_WEBHOOK_BLOCK_PRIVATE: 'true', SERVICE_WEBHOOK_MAX_RETRIES: '0' }, dns.resolver)
    const rx = receiver()
    await expectRefused(`http://[::ffff:127.0.0.1]:${rx.port}/hook`, 'ffff')
    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(0)
  })

  test('localhost resolving to 127.0.0.1 is refused', async () => {
    const dns = stubResolver({ localhost: ['127.0.0.1'] })
    await setup({ SERVICE_WEBHOOK_BLOCK_PRIVATE: 'true', SERVICE_WEBHOOK_MAX_RETRIES: '0' }, dns.resolver)
    const rx = receiver()
    await expectRefused(`http://localhost:${rx.port}/hook`, '127.0.0.1')
    expect(dns.asked).toContain('localhost')
    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(0)
  })

  test('a host with one private address among public ones is refused before any connection', async () => {
    const dns = stubResolver({ 'hooks.example.com': ['93.184.216.34', '10.0.0.1'] })
    await setup({ SERVICE_WEBHOOK_BLOCK_PRIVATE: 'true', SERVICE_WEBHOOK_MAX_RETRIES: '0' }, dns.resolver)
    await expectRefused('http://hooks.example.com:8080/hook', '10.0.0.1')
    expect(dns.asked).toEqual(['hooks.example.com'])
  })

  test('with the option off (the default), the loopback receiver gets the delivery', async () => {
    await setup({ SERVICE_WEBHOOK_MAX_RETRIES: '0' })
    const rx = receiver()
    const form = await hookedForm(rx.url)
    t.background.start()
    await answer(form.id)
    await waitForReceived(rx, 1)
    const d = await waitForDelivery(form.id, (x) => x.status === 'delivered', 'delivered')
    expect(d.last_status_code).toBe(200)
  })
})

// ================================================================= 7. lifecycle events (CONTRACT 12)

describe('callback_events', () => {
  test('Get Form returns ["form.completed"] by default, and the events given, in their order', async () => {
    await setup()
    const plain = await t.api.createForm()
    const hooked = await hookedForm('https://agent.example.org/hook')
    const chosen = await hookedForm('https://agent.example.org/hook', {
      callback_events: ['form.expired', 'form.completed', 'form.cancelled'],
    })
    expect((await t.api.get(`/forms/${plain.id}`)).body.callback_events).toEqual(['form.completed'])
    expect((await t.api.get(`/forms/${hooked.id}`)).body.callback_events).toEqual(['form.completed'])
    expect((await t.api.get(`/forms/${chosen.id}`)).body.callback_events).toEqual([
      'form.expired',
      'form.completed',
      'form.cancelled',
    ])
  })

  test.each([
    ['an empty array', [], '/callback_events', 'too_short'],
    ['an unknown event', ['form.answered'], '/callback_events/0', undefined],
    ['form.deleted, which only the feed has', ['form.deleted'], '/callback_events/0', undefined],
    ['the same event twice', ['form.expired', 'form.expired'], '/callback_events', 'not_unique'],
    ['a string', 'form.expired', '/callback_events', 'invalid_type'],
    ['null', null, '/callback_events', 'invalid_type'],
  ])('%s is 422 at its path', async (_, events, path, code) => {
    await setup()
    const res = await t.api.post('/forms', {
      title: 'T',
      fields: [{ key: 'a', type: 'text', label: 'A' }],
      callback_url: 'https://agent.example.org/hook',
      callback_events: events,
    })
    expect(res.status).toBe(422)
    const problem = (res.body.errors as Array<{ path: string; code: string }>).find((p) => p.path === path)
    expect(problem).toBeDefined()
    if (code) expect(problem!.code).toBe(code)
  })

  test('given without callback_url (absent or null) it is 422 at /callback_url, code required', async () => {
    await setup()
    for (const callbackUrl of [undefined, null]) {
      const res = await t.api.post('/forms', {
        title: 'T',
        fields: [{ key: 'a', type: 'text', label: 'A' }],
        callback_url: callbackUrl,
        callback_events: ['form.expired'],
      })
      expect(res.status).toBe(422)
      expect(res.body.errors).toContainEqual({
        path: '/callback_url',
        message: expect.stringContaining('callback_events'),
        code: 'required',
      })
    }
    expect((await t.api.get('/forms')).body).toEqual([])
  })

  test('the OpenAPI document and the MCP create_form tool describe it', async () => {
    await setup()
    const doc = (await send(t.app, 'GET', '/api/v1/openapi.json')).body
    const text = JSON.stringify(doc)
    expect(text).toContain('callback_events')
    expect(text).toContain('/api/v1/events')
    const tools = await mcpCall('tools/list', {})
    const create = tools.result.tools.find((tool: { name: string }) => tool.name === 'create_form')
    expect(
      create.inputSchema.properties.callback_events.items.anyOf.map((s: { const: string }) => s.const).sort(),
    ).toEqual(['form.cancelled', 'form.completed', 'form.expired'])
    expect(tools.result.tools.map((tool: { name: string }) => tool.name)).toContain('wait_for_events')
  })
})

/** A JSON-RPC call to /mcp with the test's key. */
async function mcpCall(method: string, params: unknown) {
  const res = await send(t.app, 'POST', '/mcp', {
    key: t.key,
    body: { jsonrpc: '2.0', id: 1, method, params },
    headers: { accept: 'application/json, text/event-stream' },
  })
  if (res.status !== 200) throw new Error(`MCP ${method}: ${res.status} ${res.text}`)
  return res.body as { result: any }
}

/** Every event of the account's feed, read from the start. */
async function feed(): Promise<
  Array<{ id: string; type: string; form_id: string; occurred_at: string; payload: any }>
> {
  const res = await t.api.get('/events?limit=100')
  if (res.status !== 200) throw new Error(`feed: ${res.status} ${res.text}`)
  return res.body.events
}

describe('form.cancelled and form.expired deliveries', () => {
  test('a cancel of a subscribed form is delivered once, signed, with X-Service-Event form.cancelled and the body of CONTRACT 12', async () => {
    await setup()
    const rx = receiver()
    const context = { agent: 'planner', note: 'Zoë' }
    const form = await hookedForm(rx.url, {
      callback_events: ['form.cancelled'],
      callback_metadata: { run: 'r-7' },
      context,
    })
    t.background.start()
    const cancelledAt = t.clock()
    expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
    // A repeated cancel changes nothing and tells no one.
    expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
    await waitForReceived(rx, 1)
    const delivery = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')
    expect(delivery.event).toBe('form.cancelled')
    const hook = rx.received[0]!
    expect(hook.headers['x-service-event']).toBe('form.cancelled')
    expect(hook.headers['x-service-delivery']).toBe(delivery.id)
    const secret = secretOf(form.id)
    expect(hook.headers['x-service-signature']).toBe(`sha256=${hexHmac(secret, hook.body)}`)
    expect(standardVerifier(secret).verify(hook.text, hook.headers)).toEqual(JSON.parse(hook.text))
    expect(JSON.parse(hook.text)).toEqual({
      event: 'form.cancelled',
      form_id: form.id,
      status: 'cancelled',
      occurred_at: new Date(cancelledAt).toISOString(),
      callback_metadata: { run: 'r-7' },
      context,
    })
    // The feed's event carries the same body as its payload.
    const events = await feed()
    expect(events.map((e) => e.type)).toEqual(['form.cancelled'])
    expect(events[0]!.payload).toEqual(JSON.parse(hook.text))
    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(1)
    expect(await deliveryLog(form.id)).toHaveLength(1)
  })

  test("expiry of a subscribed form is delivered within the loop's second, with expires_at and the context the form had", async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url, {
      callback_events: ['form.completed', 'form.expired'],
      expires_in: '1m',
      context: { step: 4 },
    })
    const expiresAt = Date.parse(`${form.expires_at}Z`)
    t.background.start()
    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(0)
    advanceAndWake(61_000)
    await waitForReceived(rx, 1)
    const hook = rx.received[0]!
    expect(hook.headers['x-service-event']).toBe('form.expired')
    expect(JSON.parse(hook.text)).toEqual({
      event: 'form.expired',
      form_id: form.id,
      status: 'expired',
      occurred_at: new Date(expiresAt).toISOString(),
      callback_metadata: {},
      context: { step: 4 },
    })
    // The form itself has lost its context: the event and its delivery alone keep it.
    expect((await t.api.get(`/forms/${form.id}`)).body).toMatchObject({ status: 'expired', context: null })
    const delivery = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')
    expect(delivery.event).toBe('form.expired')
    // Redeliver sends the same body again.
    expect((await t.api.post(`/forms/${form.id}/deliveries/${delivery.id}/redeliver`)).status).toBe(202)
    await waitForReceived(rx, 2)
    expect(rx.received[1]!.body.equals(hook.body)).toBe(true)
    expect(rx.received[1]!.headers['x-service-event']).toBe('form.expired')
  })

  test('endings a form is not subscribed to are in the feed but never delivered', async () => {
    await setup()
    const rx = receiver()
    const onlyCompleted = await hookedForm(rx.url, { expires_in: '1m' })
    const cancelledDefault = await hookedForm(rx.url)
    const onlyExpired = await hookedForm(rx.url, { callback_events: ['form.expired'], expires_in: '2m' })
    t.background.start()
    await t.api.patch(`/forms/${cancelledDefault.id}`, { status: 'cancelled' })
    await answer(onlyExpired.id)
    advanceAndWake(61_000)
    await until(async () => (await feed()).length === 3, 5000, 'three events in the feed', feed)
    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(0)
    for (const form of [onlyCompleted, cancelledDefault, onlyExpired]) expect(await deliveryLog(form.id)).toEqual([])
    expect((await feed()).map((e) => [e.type, e.form_id])).toEqual([
      ['form.cancelled', cancelledDefault.id],
      ['form.completed', onlyExpired.id],
      ['form.expired', onlyCompleted.id],
    ])
  })

  test('a cancel racing expiry: once expires_at has passed a cancel is 409, and the form ends once, expired', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url, { callback_events: ['form.expired', 'form.cancelled'], expires_in: '1m' })
    t.clock.advance(60_000)
    const attempts = await Promise.all([1, 2, 3].map(() => t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })))
    expect(attempts.map((res) => res.status)).toEqual([409, 409, 409])
    t.background.start()
    await waitForReceived(rx, 1)
    await sleep(QUIET_MS)
    expect(rx.received.map((hook) => hook.headers['x-service-event'])).toEqual(['form.expired'])
    expect((await feed()).map((e) => e.type)).toEqual(['form.expired'])
  })

  test('concurrent cancels of one form record one form.cancelled and queue one delivery', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url, { callback_events: ['form.cancelled'] })
    const results = await Promise.all(
      Array.from({ length: 8 }, () => t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })),
    )
    expect(results.every((res) => res.status === 200 && res.body.status === 'cancelled')).toBe(true)
    expect((await feed()).map((e) => e.type)).toEqual(['form.cancelled'])
    expect(await deliveryLog(form.id)).toHaveLength(1)
  })

  test('several instances sweeping together expire each form once: one event and one delivery per form', async () => {
    await setup()
    const rx = receiver()
    const forms = await Promise.all(
      Array.from({ length: 40 }, () => hookedForm(rx.url, { callback_events: ['form.expired'], expires_in: '1m' })),
    )
    const others = [await t.anotherServer(), await t.anotherServer()]
    t.clock.advance(61_000)
    t.background.start()
    for (const other of others) other.background.start()
    await until(
      async () => (await feed()).length >= forms.length,
      10_000,
      'every form expired',
      async () => (await feed()).length,
    )
    await waitForReceived(rx, forms.length)
    await sleep(QUIET_MS)
    const events = await feed()
    expect(events.map((e) => e.form_id).sort()).toEqual(forms.map((f) => f.id).sort())
    expect(events.every((e) => e.type === 'form.expired')).toBe(true)
    expect(rx.received.map((hook) => JSON.parse(hook.text).form_id).sort()).toEqual(forms.map((f) => f.id).sort())
    for (const form of forms) expect(await deliveryLog(form.id)).toHaveLength(1)
  })

  test('a sweep that fails after writing expired, before its event, writes nothing: the next one expires the form with its event, once', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url, {
      callback_events: ['form.expired'],
      expires_in: '1m',
      context: { keep: true },
    })
    // The event's insert fails, as a crash between the two writes would cut the transaction short.
    if (t.sqlite) {
      await t.sql(
        `CREATE TRIGGER fail_events BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'injected failure'); END`,
      )
    } else {
      await t.sql(
        `CREATE FUNCTION fail_events() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$`,
      )
      await t.sql('CREATE TRIGGER fail_events BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION fail_events()')
    }
    t.clock.advance(61_000)
    t.background.start()
    await until(
      () => t.logs.some((line) => line.msg === 'form sweep failed'),
      5000,
      'the sweep to fail',
      () => t.logs,
    )
    const stored = async () => (await t.sql('SELECT status, context FROM forms WHERE id = ?', form.id))[0]
    expect(await stored()).toEqual({ status: 'active', context: '{"keep":true}' })
    expect(await feed()).toEqual([])
    expect(await deliveryLog(form.id)).toEqual([])

    await t.sql(`DROP TRIGGER fail_events${t.sqlite ? '' : ' ON events'}`)
    advanceAndWake(1000)
    await waitForReceived(rx, 1)
    expect(JSON.parse(rx.received[0]!.text)).toMatchObject({
      event: 'form.expired',
      form_id: form.id,
      context: { keep: true },
    })
    expect(await stored()).toEqual({ status: 'expired', context: null })
    await sleep(QUIET_MS)
    expect((await feed()).map((e) => e.type)).toEqual(['form.expired'])
    expect(rx.received).toHaveLength(1)
  })

  test('a form.expired delivery, which holds the context, goes after 7 days; a form.completed one stays with its form', async () => {
    await setup()
    const rx = receiver()
    const expiring = await hookedForm(rx.url, {
      callback_events: ['form.expired'],
      expires_in: '1m',
      context: { secret: 'x' },
    })
    const answered = await hookedForm(rx.url, { context: { secret: 'y' } })
    t.background.start()
    await answer(answered.id)
    advanceAndWake(61_000)
    await waitForReceived(rx, 2)
    await waitForDelivery(expiring.id, (d) => d.status === 'delivered', 'delivered')
    await waitForDelivery(answered.id, (d) => d.status === 'delivered', 'delivered')

    advanceAndWake(7 * 86_400_000 + 60_000)
    await until(
      async () => (await deliveryLog(expiring.id)).length === 0,
      5000,
      'the expiry delivery to go',
      () => deliveryLog(expiring.id),
    )
    expect(await t.sql('SELECT count(*) AS n FROM deliveries WHERE payload LIKE ?', '%"secret":"x"%')).toEqual([
      { n: t.sqlite ? 0 : '0' },
    ])
    expect(await deliveryLog(answered.id)).toHaveLength(1)
    // The feed keeps events 7 days too: both are gone.
    expect(await feed()).toEqual([])
  })
})
