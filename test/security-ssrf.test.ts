/**
 * Security, in process: the SSRF option vectors of SERVICE_WEBHOOK_BLOCK_PRIVATE.
 *
 * Network: loopback only. Webhook targets are loopback literals, IPv4-mapped
 * and bracketed IPv6 literals, or names answered by a stub resolver; on top of
 * that, while those tests run, a guard around fetch refuses (and records) any
 * connection to an address that is not loopback, so nothing ever leaves the
 * machine even if intake failed to refuse. Waits poll for an outcome and fail
 * with what they last saw.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { contextsPerTest, type Resolver, stubResolver, submit, type TestContext, until } from './utils.ts'

setDefaultTimeout(20_000)

let t: TestContext
const { create, cleanups } = contextsPerTest()

async function setup(env: Record<string, string> = {}, resolver?: Resolver): Promise<TestContext> {
  return (t = await create(env, { resolver }))
}

// ================================================================= SSRF: SERVICE_WEBHOOK_BLOCK_PRIVATE

describe('SERVICE_WEBHOOK_BLOCK_PRIVATE: every option vector is refused and logged as a failed attempt naming the address', () => {
  /**
   * While these tests run, fetch (what intake sends webhooks with) connects
   * only to loopback literals: anything else is refused here and recorded, so
   * a vector intake failed to refuse fails the test without any traffic.
   */
  let offLoopback: string[] = []
  function guardFetch() {
    offLoopback = []
    const inner = globalThis.fetch
    const guarded = async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : String(input))
      const host = url.hostname.replace(/^\[|\]$/g, '')
      if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) && host !== '::1') {
        offLoopback.push(host)
        throw new Error(`test guard: no connection to ${host}`)
      }
      return inner(input, init)
    }
    globalThis.fetch = Object.assign(guarded, { preconnect: inner.preconnect }) as typeof fetch
    cleanups.push(() => {
      globalThis.fetch = inner
    })
  }

  /** A live receiver on 127.0.0.1 that counts what reaches it. */
  function receiver() {
    let received = 0
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => {
        received++
        return new Response('ok')
      },
    })
    cleanups.push(() => server.stop(true))
    return {
      port: server.port!,
      get received() {
        return received
      },
    }
  }

  /** Creates a form calling back `callbackUrl`, answers it, and returns its delivery once it has an outcome. */
  async function refusedDelivery(callbackUrl: string) {
    const form = await t.api.createForm({ callback_url: callbackUrl })
    t.background.start()
    const answered = await submit(t.app, form.id, { name: 'Ada' })
    expect(answered.status).toBe(201)
    let last: any[] = []
    await until(
      async () => {
        last = (await t.api.get(`/forms/${form.id}/deliveries`)).body
        return last.length === 1 && last[0].status !== 'pending'
      },
      5000,
      `the delivery to ${callbackUrl} to have an outcome`,
      () => last,
    )
    return last[0]
  }

  function expectRefusal(delivery: any, address: string, callbackUrl: string) {
    expect({
      callbackUrl,
      status: delivery.status,
      attempts: delivery.attempts,
      last_status_code: delivery.last_status_code,
      refused: /refused/i.test(delivery.last_error ?? '') && /private/i.test(delivery.last_error ?? ''),
      namesAddress: (delivery.last_error ?? '').includes(address),
      offLoopback,
    }).toEqual({
      callbackUrl,
      status: 'failed',
      attempts: 1,
      last_status_code: null,
      refused: true,
      namesAddress: true,
      offLoopback: [],
    })
    // The attempt's log line says so too, without the callback URL.
    const attemptLines = t.logs.filter((line) => 'delivery_id' in line)
    expect(attemptLines.length).toBeGreaterThanOrEqual(1)
    expect(attemptLines.some((line) => line.delivered === false && String(line.error ?? '').includes(address))).toBe(
      true,
    )
  }

  const BLOCK = { SERVICE_WEBHOOK_BLOCK_PRIVATE: 'true', SERVICE_WEBHOOK_MAX_RETRIES: '0' }

  // Literal addresses: loopback in its many spellings (a live receiver listens on 127.0.0.1), IPv4-mapped and bracketed IPv6.
  const LITERALS: Array<[string, (port: number) => string, string]> = [
    ['loopback IPv4', (p) => `http://127.0.0.1:${p}/hook`, '127.0.0.1'],
    ['another loopback IPv4', (p) => `http://127.45.6.7:${p}/hook`, '127.45.6.7'],
    ['loopback, shorthand 127.1', (p) => `http://127.1:${p}/hook`, '127.0.0.1'],
    ['loopback as one decimal number', (p) => `http://2130706433:${p}/hook`, '127.0.0.1'],
    ['loopback in hex', (p) => `http://0x7f000001:${p}/hook`, '127.0.0.1'],
    ['loopback in octal', (p) => `http://0177.0.0.1:${p}/hook`, '127.0.0.1'],
    ['loopback with the https scheme', (p) => `https://127.0.0.1:${p}/hook`, '127.0.0.1'],
    ['[::1]', (p) => `http://[::1]:${p}/hook`, '::1'],
    ['[0:0:0:0:0:0:0:1]', (p) => `http://[0:0:0:0:0:0:0:1]:${p}/hook`, '::1'],
    ['[::] (unspecified)', (p) => `http://[::]:${p}/hook`, '::'],
    ['IPv4-mapped loopback [::ffff:127.0.0.1]', (p) => `http://[::ffff:127.0.0.1]:${p}/hook`, '::ffff:7f00:1'],
    ['IPv4-mapped loopback, hex [::ffff:7f00:1]', (p) => `http://[::ffff:7f00:1]:${p}/hook`, '::ffff:7f00:1'],
    ['IPv4-mapped loopback, long form', (p) => `http://[0:0:0:0:0:ffff:127.0.0.1]:${p}/hook`, '::ffff:7f00:1'],
    ['IPv4-compatible loopback [::127.0.0.1]', (p) => `http://[::127.0.0.1]:${p}/hook`, '::7f00:1'],
    ['NAT64 loopback [64:ff9b::127.0.0.1]', (p) => `http://[64:ff9b::127.0.0.1]:${p}/hook`, '64:ff9b::7f00:1'],
    ['IPv4-mapped private [::ffff:10.0.0.1]', (p) => `http://[::ffff:10.0.0.1]:${p}/hook`, '::ffff:a00:1'],
    [
      'IPv4-mapped metadata [::ffff:169.254.169.254]',
      (p) => `http://[::ffff:169.254.169.254]:${p}/hook`,
      '::ffff:a9fe:a9fe',
    ],
    ['IPv4-mapped private [::ffff:192.168.1.1]', (p) => `http://[::ffff:192.168.1.1]:${p}/hook`, '::ffff:c0a8:101'],
    ['unique-local [fd00::1]', (p) => `http://[fd00::1]:${p}/hook`, 'fd00::1'],
    ['unique-local [fc00::abcd]', (p) => `http://[fc00::abcd]:${p}/hook`, 'fc00::abcd'],
    ['link-local [fe80::1]', (p) => `http://[fe80::1]:${p}/hook`, 'fe80::1'],
    ['multicast [ff02::1]', (p) => `http://[ff02::1]:${p}/hook`, 'ff02::1'],
  ]
  for (const [name, url, address] of LITERALS) {
    test(`literal ${name}`, async () => {
      const dns = stubResolver({})
      await setup(BLOCK, dns.resolver)
      guardFetch()
      const rx = receiver()
      const callbackUrl = url(rx.port)
      const delivery = await refusedDelivery(callbackUrl)
      expectRefusal(delivery, address, callbackUrl)
      // Refused before connecting: an attempt that had connected would have reached the receiver before its outcome was written.
      expect(rx.received).toBe(0)
      expect(dns.asked).toEqual([])
    })
  }

  // Names, answered by the stub: private addresses, and public ones only ever next to a private one.
  const NAMES: Array<[string, string[], string]> = [
    ['10.0.0.0/8', ['10.1.2.3'], '10.1.2.3'],
    ['172.16.0.0/12', ['172.31.255.1'], '172.31.255.1'],
    ['192.168.0.0/16', ['192.168.0.10'], '192.168.0.10'],
    ['link-local metadata 169.254.169.254', ['169.254.169.254'], '169.254.169.254'],
    ['CGNAT 100.64.0.0/10', ['100.100.100.100'], '100.100.100.100'],
    ['0.0.0.0', ['0.0.0.0'], '0.0.0.0'],
    ['multicast 224.0.0.1', ['224.0.0.1'], '224.0.0.1'],
    ['loopback 127.0.0.1', ['127.0.0.1'], '127.0.0.1'],
    ['loopback ::1', ['::1'], '::1'],
    ['unique-local fd12:3456::1', ['fd12:3456::1'], 'fd12:3456::1'],
    ['link-local fe80::1234', ['fe80::1234'], 'fe80::1234'],
    ['IPv4-mapped private ::ffff:10.0.0.1', ['::ffff:10.0.0.1'], '::ffff:10.0.0.1'],
    ['IPv4-mapped loopback ::ffff:127.0.0.1', ['::ffff:127.0.0.1'], '::ffff:127.0.0.1'],
    ['a public address, then a private one', ['93.184.216.34', '10.0.0.1'], '10.0.0.1'],
    ['a private address, then a public one', ['192.168.7.7', '93.184.216.34'], '192.168.7.7'],
    ['a public IPv6 address, then a unique-local one', ['2606:4700:4700::1111', 'fd00::53'], 'fd00::53'],
    [
      'a public IPv4 address, then an IPv4-mapped metadata one',
      ['93.184.216.34', '::ffff:169.254.169.254'],
      '::ffff:169.254.169.254',
    ],
  ]
  for (const [name, addresses, address] of NAMES) {
    test(`a name resolving to ${name}`, async () => {
      const dns = stubResolver({ 'hooks.example.test': addresses })
      await setup(BLOCK, dns.resolver)
      guardFetch()
      const callbackUrl = 'http://hooks.example.test:8080/hook'
      const delivery = await refusedDelivery(callbackUrl)
      expectRefusal(delivery, address, callbackUrl)
      expect(dns.asked).toEqual(['hooks.example.test'])
    })
  }

  test('a name with no address at all is a failed attempt, never a connection', async () => {
    const dns = stubResolver({ 'empty.example.test': [] })
    await setup(BLOCK, dns.resolver)
    guardFetch()
    const delivery = await refusedDelivery('http://empty.example.test/hook')
    expect({ status: delivery.status, attempts: delivery.attempts, error: delivery.last_error, offLoopback }).toEqual({
      status: 'failed',
      attempts: 1,
      error: expect.stringContaining('empty.example.test'),
      offLoopback: [],
    })
  })
})
