/**
 * Webhook receivers cannot stall or exhaust intake (CONTRACT 13): attempts in
 * flight are shared per account and per host, a healthy receiver's first
 * attempt leaves whatever other accounts' receivers do (how soon, within
 * the contract's 100 ms, is bench/check-bounds.ts's to judge), a
 * backlog of refused deliveries neither hides others nor keeps the loop
 * busy, and callback URLs reach logs and `last_error` as their origin only.
 *
 * Receivers are servers this file starts on loopback addresses only
 * (127.0.0.1, 127.0.0.2, 127.0.0.3): a "hanging" one accepts the request and
 * never answers. SERVICE_WEBHOOK_TIMEOUT is long enough that no hanging
 * attempt ends while a test looks; the cleanups stop the receivers first, so
 * the attempts end at once when the test is over.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import {
  PARALLEL_ATTEMPTS,
  PARALLEL_ATTEMPTS_PER_ACCOUNT,
  PARALLEL_ATTEMPTS_PER_HOST,
} from '../src/modules/webhooks/worker.ts'
import { reportFigure } from './figures.ts'
import {
  apiClient,
  contextsPerTest,
  type Delivery,
  longestStall,
  stubResolver,
  submit,
  TEST_STORE,
  type TestContext,
  until,
} from './utils.ts'

setDefaultTimeout(60_000)

/** Only a hang takes this long: how soon things happen is measured, not asserted. */
const HANG_MS = 30_000

const { create, cleanups } = contextsPerTest()

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// ---------------------------------------------------------------- receivers (loopback only)

/** A receiver that takes every request and never answers: the attempt hangs until intake's timeout. */
function hangingReceiver(hostname: '127.0.0.2' | '127.0.0.3') {
  const state = { requests: 0 }
  const server = Bun.serve({
    hostname,
    port: 0,
    idleTimeout: 0,
    fetch() {
      state.requests++
      return new Promise<Response>(() => {})
    },
  })
  cleanups.push(() => server.stop(true))
  return { url: `http://${hostname}:${server.port}/hook`, state }
}

/** A healthy receiver on 127.0.0.1: answers 204 at once and notes when each request arrived. */
function healthyReceiver() {
  const arrivals: number[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch() {
      arrivals.push(performance.now())
      return new Response(null, { status: 204 })
    },
  })
  cleanups.push(() => server.stop(true))
  return { url: `http://127.0.0.1:${server.port}/hook`, port: server.port as number, arrivals }
}

/** Requests all these receivers have taken (and hold). */
const held = (receivers: Array<{ state: { requests: number } }>) =>
  receivers.reduce((sum, r) => sum + r.state.requests, 0)

// ---------------------------------------------------------------- accounts and answers

/** An account of its own (accounts are made by the operator, as `intake keys create --account` does). */
async function account(t: TestContext, name: string) {
  return apiClient(t.app, (await t.createKey(name)).key)
}

type Client = Awaited<ReturnType<typeof account>>

/** Creates one answered form per callback URL: each answer queues one delivery. A few at a time, as clients would. */
async function answeredForms(t: TestContext, client: Client, urls: string[]): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < urls.length; i += 25) {
    const batch = await Promise.all(
      urls.slice(i, i + 25).map(async (url) => {
        const form = await client.createForm({ callback_url: url })
        const res = await submit(t.app, form.id, { name: 'Ada' })
        if (res.status !== 201) throw new Error(`submission not recorded: ${res.status} ${res.text}`)
        return form.id
      }),
    )
    ids.push(...batch)
  }
  return ids
}

/** `count` callback URLs spread over the receivers in turn. */
const spread = (receivers: Array<{ url: string }>, count: number) =>
  Array.from({ length: count }, (_, i) => `${receivers[i % receivers.length]!.url}?n=${i}`)

/**
 * Answers `rounds` forms of `client` whose callback is the healthy receiver,
 * one after another, and returns how long each took from just before the
 * answer was sent until its first attempt reached the receiver.
 */
async function firstAttemptLatencies(
  t: TestContext,
  client: Client,
  healthy: ReturnType<typeof healthyReceiver>,
  rounds: number,
) {
  const latencies: number[] = []
  for (let round = 0; round < rounds; round++) {
    const form = await client.createForm({ callback_url: healthy.url })
    const before = healthy.arrivals.length
    const sentAt = performance.now()
    const res = await submit(t.app, form.id, { name: 'Grace' })
    expect(res.status).toBe(201)
    await until(() => healthy.arrivals.length > before, HANG_MS, `the healthy receiver's delivery (round ${round + 1})`)
    latencies.push(healthy.arrivals[before]! - sentAt)
  }
  return latencies
}

const figures = (latencies: number[]) => latencies.map((ms) => ms.toFixed(1)).join(', ')

/**
 * The least share of one core this process used over a few short windows: a
 * loop that keeps looking shows in every window, a stray collection or a
 * previous test's leftovers in one at most.
 */
async function restingCpuShare(windows = 8, windowMs = 150): Promise<number> {
  // A collection of what the suite's earlier files left would count here too: it is done first.
  Bun.gc(true)
  let least = Infinity
  for (let i = 0; i < windows; i++) {
    const before = process.cpuUsage()
    const startedAt = performance.now()
    await sleep(windowMs)
    const used = process.cpuUsage(before)
    least = Math.min(least, (used.user + used.system) / 1000 / (performance.now() - startedAt))
  }
  return least
}

// ================================================================= fair shares

describe('a slow or hanging receiver delays no other account', () => {
  test("one account's hanging receivers on several host names hold at most its share; another account's first attempt still leaves", async () => {
    const t = await create({ SERVICE_WEBHOOK_TIMEOUT: '60' })
    const hanging = [
      hangingReceiver('127.0.0.2'),
      hangingReceiver('127.0.0.3'),
      hangingReceiver('127.0.0.2'),
      hangingReceiver('127.0.0.3'),
    ]
    const healthy = healthyReceiver()
    const mallory = await account(t, 'mallory')
    const bob = await account(t, 'bob')
    await answeredForms(t, mallory, spread(hanging, PARALLEL_ATTEMPTS + 16))
    t.background.start()

    // Four host names, but one account: its share of the slots, and no more.
    await until(
      () => held(hanging) === PARALLEL_ATTEMPTS_PER_ACCOUNT,
      HANG_MS,
      "the hanging hosts to hold the account's share",
      () => hanging.map((r) => r.state),
    )
    await sleep(200)
    expect(held(hanging)).toBe(PARALLEL_ATTEMPTS_PER_ACCOUNT)

    const latencies = await firstAttemptLatencies(t, bob, healthy, 5)
    reportFigure('first webhook attempt (ms)', `one account hangs on ${hanging.length} hosts`, Math.max(...latencies))
  })

  test('while other accounts hold every slot with hanging receivers, an account with nothing in flight still gets its first attempt out', async () => {
    const t = await create({ SERVICE_WEBHOOK_TIMEOUT: '60' })
    const hanging = [
      hangingReceiver('127.0.0.2'),
      hangingReceiver('127.0.0.3'),
      hangingReceiver('127.0.0.2'),
      hangingReceiver('127.0.0.3'),
    ]
    const healthy = healthyReceiver()
    const hogs = PARALLEL_ATTEMPTS / PARALLEL_ATTEMPTS_PER_ACCOUNT
    // Each hog sends as many to every host as the host's cap holds: in whatever order the loop takes them
    // (the stores order equal due times differently), a host with a free slot always has one of each hog's waiting.
    for (let i = 0; i < hogs; i++)
      await answeredForms(t, await account(t, `hog-${i}`), spread(hanging, PARALLEL_ATTEMPTS_PER_HOST * hanging.length))
    t.background.start()
    await until(
      () => held(hanging) === PARALLEL_ATTEMPTS,
      HANG_MS,
      'the hanging hosts to hold every slot',
      () => hanging.map((r) => r.state),
    )

    const latencies = await firstAttemptLatencies(t, await account(t, 'bob'), healthy, 5)
    reportFigure(
      'first webhook attempt (ms)',
      `${hogs} accounts hold all ${PARALLEL_ATTEMPTS} slots`,
      Math.max(...latencies),
    )
    // The hogs gained nothing from the slot the newcomer was given.
    expect(held(hanging)).toBe(PARALLEL_ATTEMPTS)
  })

  test('one account flooding one hanging host with hundreds of deliveries hides no other delivery behind them, and the loop rests while they wait', async () => {
    const t = await create({ SERVICE_WEBHOOK_TIMEOUT: '60' })
    const hanging = hangingReceiver('127.0.0.2')
    const healthy = healthyReceiver()
    const mallory = await account(t, 'mallory')
    await answeredForms(t, mallory, spread([hanging], 400))
    // What this process uses with the loop not started: whatever else runs in it (a suite's earlier files) is not the loop's.
    await sleep(200)
    const before = await restingCpuShare()
    t.background.start()
    await until(
      () => hanging.state.requests === PARALLEL_ATTEMPTS_PER_HOST,
      HANG_MS,
      'the hanging host to hold its share',
      () => hanging.state,
    )

    // Nearly 400 deliveries are due and refused by the host's cap: the loop must not keep looking at them.
    await sleep(200)
    const busy = await restingCpuShare()
    console.log(`CPU share of one core: ${busy.toFixed(3)} while refused deliveries wait, ${before.toFixed(3)} before`)
    reportFigure(
      'resting loop CPU, share of one core',
      `${400 - PARALLEL_ATTEMPTS_PER_HOST} refused deliveries wait`,
      busy - before,
    )

    const latencies = await firstAttemptLatencies(t, await account(t, 'bob'), healthy, 5)
    reportFigure(
      'first webhook attempt (ms)',
      "behind one account's 400 deliveries to one hanging host",
      Math.max(...latencies),
    )
    // The flooding account's own delivery to a healthy host is not stuck behind its hanging ones either.
    const own = await firstAttemptLatencies(t, mallory, healthy, 1)
    reportFigure('first webhook attempt (ms)', "the flooding account's own, to another host", own[0]!)
    expect(hanging.state.requests).toBe(PARALLEL_ATTEMPTS_PER_HOST)
  })
})

describe('a backlog of due deliveries', () => {
  test("100,000 due deliveries of one account: the loop never holds the event loop, finds an old delivery deep inside them, and a fresh answer's first attempt still leaves at once", async () => {
    const t = await create({ SERVICE_WEBHOOK_TIMEOUT: '60' })
    const hanging = hangingReceiver('127.0.0.2')
    const healthy = healthyReceiver()
    const mallory = await account(t, 'mallory')
    const bob = await account(t, 'bob')
    const [malloryForm] = await answeredForms(t, mallory, [hanging.url])
    const [bobsOldForm] = await answeredForms(t, bob, [healthy.url])
    // The API would take hours to queue this many (rate limits): copies of mallory's one real delivery stand in,
    // each due a millisecond earlier than the last, and bob's delivery is moved to the middle of them.
    const backlog = 100_000
    await t.sql(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${backlog})
       INSERT INTO deliveries (id, form_id, response_id, event, url, payload, status, next_attempt_at, created_at)
       SELECT d.id || '-' || n.i, d.form_id, d.response_id, d.event, d.url, d.payload, 'pending', d.next_attempt_at - n.i, d.created_at
         FROM deliveries d, n WHERE d.form_id = ?`,
      malloryForm!,
    )
    await t.sql(
      `UPDATE deliveries SET next_attempt_at = next_attempt_at - ? WHERE form_id = ?`,
      backlog / 2,
      bobsOldForm!,
    )
    // A table never analyzed leaves PostgreSQL's planner guessing (a sort of every due row instead of the index);
    // autovacuum analyzes a table whose rows grow by a tenth, as a real backlog does over minutes, not in one statement.
    if (TEST_STORE === 'postgres') await t.sql('ANALYZE deliveries')

    const { result, stallMs } = await longestStall(async () => {
      const startedAt = performance.now()
      t.background.start()
      await until(() => healthy.arrivals.length === 1, HANG_MS, "bob's old delivery, deep in the backlog, to be found")
      const oldFoundMs = healthy.arrivals[0]! - startedAt
      return { oldFoundMs, latencies: await firstAttemptLatencies(t, bob, healthy, 5) }
    })
    console.log(
      `${backlog} due deliveries: an old one in their middle found ${result.oldFoundMs.toFixed(1)} ms after start; ` +
        `fresh first attempts ${figures(result.latencies)} ms; longest event-loop stall ${stallMs.toFixed(1)} ms`,
    )
    reportFigure(
      'first webhook attempt under a backlog (ms)',
      `${backlog} due deliveries`,
      Math.max(...result.latencies),
    )
    reportFigure('event-loop stall under a backlog (ms)', `${backlog} due deliveries`, stallMs)
    expect(hanging.state.requests).toBe(PARALLEL_ATTEMPTS_PER_HOST)
  })
})

// ================================================================= callback URLs: origin only

describe('callback URLs reach logs and last_error as their origin only', () => {
  /** Parts of a callback URL a receiver may use as secrets: none may be shown. */
  const SECRET_PARTS = ['usr-4a2b', 'pw-8d5c', 'path-6e1f', 'tok-9c1e', 'frag-3b7a']
  const secretUrl = (origin: string) =>
    `${origin.replace('//', '//usr-4a2b:pw-8d5c@')}/path-6e1f/hook?token=tok-9c1e#frag-3b7a`

  /** A raw TCP receiver on 127.0.0.1 that answers the first bytes of a request with `reply` (null: never). */
  async function rawReceiver(reply: string | null) {
    const sockets = new Set<Socket>()
    const server = createServer((socket) => {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => sockets.delete(socket))
      socket.once('data', () => {
        if (reply !== null) socket.end(reply)
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => {
      for (const socket of sockets) socket.destroy()
      server.close()
    })
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }

  /** The origin of a port on 127.0.0.1 that was just bound and closed again: nothing listens there. */
  async function closedPort() {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    await new Promise<void>((resolve) => server.close(() => resolve()))
    return `http://127.0.0.1:${port}`
  }

  /** Answers a form whose callback is `url` and returns its delivery once the one attempt is recorded. */
  async function failedDelivery(t: TestContext, url: string): Promise<Delivery> {
    const form = await t.api.createForm({ callback_url: url })
    expect((await submit(t.app, form.id, { name: 'Ada' })).status).toBe(201)
    let last: Delivery[] = []
    await until(
      async () => {
        last = (await t.api.get(`/forms/${form.id}/deliveries`)).body
        return last[0]?.status === 'failed'
      },
      HANG_MS,
      `the delivery to ${url} to fail`,
      () => last,
    )
    return last[0]!
  }

  function expectNoSecretPart(t: TestContext, deliveries: Delivery[]) {
    const shown = [t.logText(), ...deliveries.map((d) => d.last_error ?? '')].join('\n')
    for (const part of SECRET_PARTS) expect(shown).not.toContain(part)
  }

  test('whatever way the receiver fails, its error names the origin at most; the same in the log', async () => {
    const t = await create({ SERVICE_WEBHOOK_TIMEOUT: '0.5', SERVICE_WEBHOOK_MAX_RETRIES: '0' })
    const receivers: Array<[string, string, boolean]> = [
      ['a 500 reply', await rawReceiver('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\noops!'), false],
      ['a refused connection', await closedPort(), false],
      ['no reply before the timeout', await rawReceiver(null), false],
      // fetch quotes the URL it was given in these errors.
      ['a reply that is not HTTP', await rawReceiver('HTTP/1.1 abc\r\n\r\n'), true],
      [
        'a body whose chunks are garbage',
        await rawReceiver('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n'),
        true,
      ],
      [
        'an upgrade nobody asked for',
        await rawReceiver('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n'),
        true,
      ],
    ]
    t.background.start()
    const deliveries: Delivery[] = []
    for (const [name, origin, quotesUrl] of receivers) {
      const delivery = await failedDelivery(t, secretUrl(origin))
      console.log(`${name}: last_error ${JSON.stringify(delivery.last_error)}`)
      expect(delivery.last_error).toBeString()
      if (quotesUrl) expect(delivery.last_error).toContain(origin)
      deliveries.push(delivery)
    }
    const attempts = t.logs.filter((line) => line.msg === 'webhook attempt')
    expect(attempts).toHaveLength(receivers.length)
    expectNoSecretPart(t, deliveries)
  })

  test('SERVICE_WEBHOOK_BLOCK_PRIVATE refusals name the origin, never the credentials, path or query', async () => {
    const dns = stubResolver({ 'hooks.example.com': ['93.184.216.34', '10.0.0.1'], 'empty.example.com': [] })
    const t = await create(
      { SERVICE_WEBHOOK_BLOCK_PRIVATE: 'true', SERVICE_WEBHOOK_MAX_RETRIES: '0' },
      { resolver: dns.resolver },
    )
    t.background.start()
    const targets: Array<[string, string]> = [
      ['http://127.0.0.1:8080', '127.0.0.1'],
      ['http://[::1]:8080', '::1'],
      ['https://hooks.example.com:8443', '10.0.0.1'],
      ['http://empty.example.com:8080', 'no address'],
      ['http://unknown.example.com:8080', 'unknown.example.com'],
    ]
    const deliveries: Delivery[] = []
    for (const [origin, reason] of targets) {
      const delivery = await failedDelivery(t, secretUrl(origin))
      console.log(`refused ${origin}: last_error ${JSON.stringify(delivery.last_error)}`)
      expect(delivery.last_error).toContain(reason)
      if (reason !== 'unknown.example.com') expect(delivery.last_error).toContain(origin)
      deliveries.push(delivery)
    }
    expectNoSecretPart(t, deliveries)
  })

  test('a last_error an older version stored with the whole URL is shown with its origin only', async () => {
    const t = await create({ SERVICE_WEBHOOK_MAX_RETRIES: '0' })
    const origin = await rawReceiver('HTTP/1.1 abc\r\n\r\n')
    const url = secretUrl(origin)
    t.background.start()
    const { id } = await failedDelivery(t, url)
    // What an older intake recorded for this reply: fetch's message, quoting the URL it was sent to.
    const href = new URL(url)
    const stored = `Malformed_HTTP_Response fetching "${href.origin}${href.pathname}${href.search}". For more information, pass \`verbose: true\` in the second argument to fetch()`
    await t.sql('UPDATE deliveries SET last_error = ? WHERE id = ?', stored, id)

    const [form] = (await t.sql('SELECT form_id FROM deliveries WHERE id = ?', id)) as Array<{ form_id: string }>
    const [shown] = (await t.api.get(`/forms/${form!.form_id}/deliveries`)).body as Delivery[]
    console.log(`stored ${JSON.stringify(stored)}\n  shown ${JSON.stringify(shown!.last_error)}`)
    expect(shown!.last_error).toBe(
      `Malformed_HTTP_Response fetching "${origin}". For more information, pass \`verbose: true\` in the second argument to fetch()`,
    )
    expectNoSecretPart(t, [shown!])
  })
})
