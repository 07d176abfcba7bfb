/**
 * What the webhook tests (test/webhooks-*.test.ts, test/long-poll.test.ts) share:
 * receivers on 127.0.0.1 (HTTP servers and raw sockets), the signatures a
 * receiver checks, and the requests and waits made on the test file's context.
 *
 * Time: the loop decides what is due from the test clock (t.clock) and sleeps
 * with real timers, so a retry is made due by advancing the clock and waking
 * the loop. Nothing asserts on elapsed wall-clock time: conditions are awaited
 * with `until`, which fails with a clear message when they never hold.
 */
import { createHmac } from 'node:crypto'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { type Delivery, send, submit, type TestContext, until } from './utils.ts'

// ---------------------------------------------------------------- waiting

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** How long a negative check gives the loop to (wrongly) act. Not a timing assertion. */
export const QUIET_MS = 300
/** Only a hang takes this long: a wait for what must happen. */
const HANG_MS = 30_000

/** A datetime as the API writes it (UTC, milliseconds, no Z). */
export const apiTime = (ms: number) => new Date(ms).toISOString().slice(0, -1)

// ---------------------------------------------------------------- receivers (127.0.0.1 only)

export interface Received {
  method: string
  path: string
  headers: Record<string, string>
  /** The raw body bytes. */
  body: Buffer
  text: string
}

/** Replies with these statuses in turn; the last one repeats. */
export const replyWith =
  (...statuses: number[]) =>
  (n: number) => {
    const status = statuses[Math.min(n, statuses.length) - 1]!
    return new Response(status === 204 ? null : `reply ${status}`, { status })
  }

/** A URL on 127.0.0.1 whose port was just bound and closed again: nothing listens there. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}/hook`
}

// ---------------------------------------------------------------- forms, answers, the delivery log

export const DELIVERY_KEYS = [
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

export const hexHmac = (secret: string, body: Buffer | string) =>
  createHmac('sha256', secret).update(body).digest('hex')

/** A verifier from the official Standard Webhooks library, keyed with the 32 bytes the hex secret encodes. */
export const standardVerifier = (secretHex: string) => new Webhook(Buffer.from(secretHex, 'hex').toString('base64'))

export const waitForReceived = (rx: { received: Received[] }, n: number) =>
  until(
    () => rx.received.length >= n,
    HANG_MS,
    `the receiver to get ${n} request(s)`,
    () => rx.received.length,
  )

/** Retry n of a round comes 5^(n-1) seconds after the failed attempt. */
export const retryDelay = (n: number) => 5 ** (n - 1) * 1000

/** The webhook tests' requests and waits, made on the context `current` returns (the test file's own);
 * receivers are stopped by `cleanups` (contextsPerTest's, before the app closes). */
export function webhookRequests(current: () => TestContext, cleanups: Array<() => unknown>) {
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

  /** Moves the test clock and wakes the loop: what is due now gets done. */
  function advanceAndWake(ms: number) {
    current().clock.advance(ms)
    current().background.wake()
  }

  /** The per-form secret, as an API client computes it from its own key. */
  const secretOf = (formId: string, key = current().key) => createHmac('sha256', key).update(formId).digest('hex')

  const hookedForm = (url: string, overrides: Record<string, unknown> = {}) =>
    current().api.createForm({ callback_url: url, ...overrides })

  /** Answers a form with a JSON submission; fails unless it is recorded. */
  async function answer(formId: string, data: unknown = { name: 'Ada' }, headers: Record<string, string> = {}) {
    const res = await submit(current().app, formId, data, headers)
    if (res.status !== 201) throw new Error(`submission not recorded: ${res.status} ${res.text}`)
    return res.body as { id: string; form_id: string; submitted_at: string }
  }

  /** GET /forms/<id>/deliveries, which must answer 200 with an array. */
  async function deliveryLog(formId: string): Promise<Delivery[]> {
    const res = await current().api.get(`/forms/${formId}/deliveries`)
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
      HANG_MS,
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
        (d.status !== 'pending' ||
          (d.next_attempt_at !== null && Date.parse(`${d.next_attempt_at}Z`) > current().clock())),
      `${n} attempt(s) recorded`,
    )

  /** A JSON-RPC call to /mcp with the test's key. */
  async function mcpCall(method: string, params: unknown) {
    const res = await send(current().app, 'POST', '/mcp', {
      key: current().key,
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
    const res = await current().api.get('/events?limit=100')
    if (res.status !== 200) throw new Error(`feed: ${res.status} ${res.text}`)
    return res.body.events
  }

  return {
    receiver,
    rawServer,
    advanceAndWake,
    secretOf,
    hookedForm,
    answer,
    deliveryLog,
    waitForDelivery,
    waitForAttempts,
    mcpCall,
    feed,
  }
}
