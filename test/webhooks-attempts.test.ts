/**
 * Webhook attempts (spec 6; CONTRACT 8): retries and their timing, timeouts and
 * connection failures as failed attempts, and the optional refusal of private
 * targets. Receivers are real HTTP servers (and raw sockets) on 127.0.0.1 only.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { PARALLEL_ATTEMPTS, PARALLEL_ATTEMPTS_PER_HOST } from '../src/modules/webhooks/worker.ts'
import { contextsPerTest, type Resolver, stubResolver, type TestContext, until } from './utils.ts'
import {
  apiTime,
  closedPortUrl,
  QUIET_MS,
  replyWith,
  retryDelay,
  sleep,
  waitForReceived,
  webhookRequests,
} from './webhooks-fixtures.ts'

setDefaultTimeout(20_000)

// ---------------------------------------------------------------- context and cleanup

let t: TestContext
/** `cleanups`: receivers and sockets to stop, run before the app closes, so no attempt is left hanging. */
const { create, cleanups } = contextsPerTest()

const { receiver, rawServer, advanceAndWake, hookedForm, answer, deliveryLog, waitForDelivery, waitForAttempts } =
  webhookRequests(() => t, cleanups)

async function setup(env: Record<string, string> = {}, resolver?: Resolver): Promise<TestContext> {
  return (t = await create(env, { resolver }))
}

// ================================================================= delivery rules

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

  test('SERVICE_WEBHOOK_RETRY_SCHEDULE sets the delays; past its end the last one repeats', async () => {
    await setup({ SERVICE_WEBHOOK_RETRY_SCHEDULE: '2s,1m' })
    const rx = receiver(replyWith(500))
    const form = await hookedForm(rx.url)
    t.background.start()
    await answer(form.id)
    for (const [n, delay] of [2_000, 60_000, 60_000].entries()) {
      await waitForReceived(rx, n + 1)
      const d = await waitForAttempts(form.id, n + 1)
      expect(d.next_attempt_at).toBe(apiTime(t.clock() + delay))
      advanceAndWake(delay)
    }
    await waitForDelivery(form.id, (d) => d.status === 'failed', 'failed after 4 attempts')
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

// ================================================================= private targets

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
