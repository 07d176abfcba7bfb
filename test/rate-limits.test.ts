/**
 * Rate limits that no client can dodge or blow up (CONTRACT 13): every message
 * of an MCP batch counts as a request; addresses of one IPv6 /64 share the
 * public limit; the limiter remembers a bounded number of callers whatever
 * clients do.
 */
import { describe, expect, test } from 'bun:test'
import { CALLERS_REMEMBERED, createRateLimiter } from '../src/lib/rate-limit.ts'
import { contextsPerTest, send, type TestContext, testClock, validForm } from './utils.ts'

const contexts = contextsPerTest()

const MCP_HEADERS = { accept: 'application/json, text/event-stream' }

/** A JSON-RPC batch of `count` create_form tool calls, ids 1..count. */
const createFormBatch = (count: number) =>
  Array.from({ length: count }, (_, i) => ({
    jsonrpc: '2.0',
    id: i + 1,
    method: 'tools/call',
    params: { name: 'create_form', arguments: validForm({ title: `Batch form ${i + 1}` }) },
  }))

const postMcp = (t: TestContext, body: unknown) =>
  send(t.app, 'POST', '/mcp', { key: t.key, body, headers: MCP_HEADERS })

async function formsCreated(t: TestContext): Promise<number> {
  // Reading the count costs a request too: callers give it room.
  const res = await t.api.get('/forms?limit=100')
  expect(res.status).toBe(200)
  return res.body.length
}

describe("an MCP batch counts each of its messages against the key's rate limit", () => {
  test('a batch of 4 takes 4 of 10; a single message and a body that is not JSON take one each; four more requests pass, the fifth is 429', async () => {
    const t = await contexts.create({ SERVICE_RATE_LIMIT: '10' })
    const batch = await postMcp(t, createFormBatch(4))
    expect(batch.status).toBe(200)
    expect(
      batch.body.map((answer: { id: number; result?: { isError?: boolean } }) => [
        answer.id,
        answer.result?.isError ?? false,
      ]),
    ).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, false],
    ])
    expect((await postMcp(t, createFormBatch(1)[0])).status).toBe(200)
    expect((await postMcp(t, '[{"jsonrpc": "2.0",')).status).toBe(400)
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) statuses.push((await t.api.get('/forms')).status)
    expect(statuses).toEqual([200, 200, 200, 200, 429])
  })

  test('a batch larger than what is left is refused whole: 429 with Retry-After, and none of its tool calls runs', async () => {
    const t = await contexts.create({ SERVICE_RATE_LIMIT: '10' })
    expect((await postMcp(t, createFormBatch(5))).status).toBe(200)
    const refused = await postMcp(t, createFormBatch(6))
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toMatch(/^[1-9]\d*$/)
    expect(refused.body.detail).toContain('a batch of 6 MCP messages counts as 6 requests')
    // A minute later the allowance is whole again: only the first batch's forms exist.
    t.clock.advance(60_000)
    expect(await formsCreated(t)).toBe(5)
    // And the same batch then goes through.
    expect((await postMcp(t, createFormBatch(6))).status).toBe(200)
    expect(await formsCreated(t)).toBe(11)
  })

  test('a batch of 100 against a limit of 10 a minute is refused whole, saying it can never fit', async () => {
    const t = await contexts.create({ SERVICE_RATE_LIMIT: '10' })
    const refused = await postMcp(t, createFormBatch(100))
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60)
    expect(refused.body.detail).toContain('more than this API key may make in a minute (10)')
    t.clock.advance(60_000)
    expect(await formsCreated(t)).toBe(0)
  })
})

describe('the public rate limit counts an IPv6 /64 as one client', () => {
  test('posts from four addresses of one /64 share a limit of 3; another /64 and an IPv4 address have their own', async () => {
    const t = await contexts.create({ SERVICE_PUBLIC_RATE_LIMIT: '3', SERVICE_TRUST_PROXY: 'true' })
    const form = await t.api.createForm()
    // An empty answer is refused (422) after the rate limit is counted: the form stays open for every post.
    const post = (address: string) =>
      send(t.app, 'POST', `/f/${form.id}`, { body: {}, headers: { 'x-forwarded-for': address } }).then(
        (res) => res.status,
      )
    const sameBlock = [
      '2001:db8:1:2::1',
      '2001:db8:1:2::2',
      '2001:db8:1:2:ffff:ffff:ffff:ffff',
      '2001:0db8:0001:0002:0:0:0:abcd',
    ]
    const statuses: number[] = []
    for (const address of sameBlock) statuses.push(await post(address))
    expect(statuses).toEqual([422, 422, 422, 429])
    expect(await post('2001:db8:1:3::1')).toBe(422)
    expect(await post('192.0.2.7')).toBe(422)
  })
})

describe('the limiter remembers a bounded number of callers', () => {
  test('300,000 callers in one second (made-up addresses, say): at most CALLERS_REMEMBERED are kept, and limits still hold', () => {
    const clock = testClock()
    const limiter = createRateLimiter(60, clock)
    Bun.gc(true)
    const heapBefore = process.memoryUsage().heapUsed
    for (let i = 0; i < 300_000; i++)
      limiter.take(`2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}:1234:5678:9abc:def0`)
    Bun.gc(true)
    const heapAfter = process.memoryUsage().heapUsed
    console.log(
      `rate limiter: 300,000 callers seen, ${limiter.callers.toLocaleString('en')} remembered (bound ${CALLERS_REMEMBERED.toLocaleString('en')}), heap +${((heapAfter - heapBefore) / 1048576).toFixed(1)} MiB`,
    )
    expect(limiter.callers).toBeLessThanOrEqual(CALLERS_REMEMBERED)
    // A caller seen just now is still held to its limit.
    const recent = 'recent caller'
    for (let i = 0; i < 60; i++) expect(limiter.take(recent).allowed).toBe(true)
    expect(limiter.take(recent).allowed).toBe(false)
  })
})
