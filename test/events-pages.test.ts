/**
 * The feed is bounded in bytes (CONTRACT 12a): a page holds at most `limit`
 * events and at most 1 MiB of JSON, and an event larger than that comes
 * alone; `next` is the last event sent, so following it still reads every
 * event once. Reads count against the memory budget (SERVICE_UPLOAD_BUDGET's)
 * while they are answered: past it a read is refused with 503 and
 * Retry-After before anything is sent. MCP's wait_for_events is bounded the
 * same way.
 *
 * Big events come through the public interface: answers of three 100,000
 * character textareas (about 300 KB each), and a form post of fifteen
 * textareas of 50,000 quotes each, which the answer's JSON escapes to about
 * 1.5 MB.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { contextsPerTest, postForm, send, submit, type TestContext } from './utils.ts'

setDefaultTimeout(30_000)

const { create } = contextsPerTest()

const MiB = 1024 * 1024
const byteLength = (text: string) => Buffer.byteLength(text)

interface FeedEvent {
  id: string
  type: string
  form_id: string
  payload: Record<string, any>
}

const textareas = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    key: `t${i}`,
    type: 'textarea',
    label: `Part ${i}`,
    config: { max_length: 100_000 },
  }))

/** A form answered with about 300 KB (three textareas of 100,000 characters); its id. */
async function bigAnswer(t: TestContext, fill = 'x'): Promise<string> {
  const form = await t.api.createForm({ fields: textareas(3) })
  const res = await submit(t.app, form.id, {
    t0: fill.repeat(100_000),
    t1: fill.repeat(100_000),
    t2: fill.repeat(100_000),
  })
  if (res.status !== 201) throw new Error(`answer: ${res.status} ${res.text}`)
  return form.id
}

/** A form answered with about 1.5 MB once escaped: fifteen textareas of 50,000 quotes, as a form post; its id. */
async function hugeAnswer(t: TestContext): Promise<string> {
  const form = await t.api.createForm({ fields: textareas(15) })
  const body = new FormData()
  for (let i = 0; i < 15; i++) body.append(`t${i}`, '"'.repeat(50_000))
  const res = await postForm(t.app, form.id, body)
  if (res.status !== 303) throw new Error(`form post: ${res.status} ${res.text.slice(0, 200)}`)
  return form.id
}

async function cancelled(t: TestContext): Promise<string> {
  const form = await t.api.createForm()
  expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
  return form.id
}

/** One page, read whole, with its JSON's length in bytes. */
async function page(t: TestContext, query: string): Promise<{ events: FeedEvent[]; next: string; bytes: number }> {
  const res = await t.api.get(`/events${query}`)
  if (res.status !== 200) throw new Error(`GET /events${query}: ${res.status} ${res.text.slice(0, 200)}`)
  return { ...res.body, bytes: byteLength(res.text) }
}

/** Every page from the start, following `next`. */
async function pages(t: TestContext, limit = 100) {
  const seen: Array<{ events: FeedEvent[]; bytes: number }> = []
  let next: string | undefined
  for (;;) {
    const got = await page(t, `?limit=${limit}${next ? `&after=${next}` : ''}`)
    if (got.events.length === 0) return seen
    expect(got.next).toBe(got.events.at(-1)!.id)
    seen.push(got)
    next = got.next
  }
}

/** An MCP tools/call over POST /mcp, in process. */
async function mcpTool(t: TestContext, name: string, args: Record<string, unknown>) {
  const res = await send(t.app, 'POST', '/mcp', {
    key: t.key,
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
    headers: { accept: 'application/json, text/event-stream' },
  })
  if (res.status !== 200) throw new Error(`MCP ${name}: ${res.status} ${res.text.slice(0, 200)}`)
  return res.body.result as {
    content: Array<{ type: string; text: string }>
    structuredContent?: any
    isError?: boolean
  }
}

describe('a page is at most 1 MiB of JSON', () => {
  test('eight answers of 300 KB: pages stop within 1 MiB, and following `next` reads each event once, in order', async () => {
    const t = await create()
    const formIds: string[] = []
    for (let i = 0; i < 8; i++) formIds.push(await bigAnswer(t))
    const seen = await pages(t)
    expect(seen.length).toBeGreaterThan(2)
    for (const { bytes, events } of seen) {
      expect(bytes).toBeLessThanOrEqual(MiB)
      expect(events.length).toBeGreaterThan(0)
    }
    const events = seen.flatMap((one) => one.events)
    expect(events.map((event) => event.form_id)).toEqual(formIds)
    expect(new Set(events.map((event) => event.id)).size).toBe(8)
    // Each payload whole: the answer as given.
    for (const event of events) expect(event.payload.data.t2).toHaveLength(100_000)
    // A page that could take one more event of the next size is full only by bytes: the next one did not fit.
    const [first, second] = seen
    expect(first!.bytes + byteLength(JSON.stringify(second!.events[0]))).toBeGreaterThan(MiB)
  })

  test('an event of 1.5 MiB comes alone, between pages of the events around it; none is lost', async () => {
    const t = await create()
    const before = [await cancelled(t), await bigAnswer(t)]
    const huge = await hugeAnswer(t)
    const after = [await cancelled(t), await bigAnswer(t, 'y')]
    const seen = await pages(t)
    expect(seen.map((one) => one.events.map((event) => event.form_id))).toEqual([before, [huge], after])
    expect(seen[1]!.bytes).toBeGreaterThan(MiB)
    expect(seen[1]!.events[0]!.payload.data.t14).toBe('"'.repeat(50_000))
    expect(seen[0]!.bytes).toBeLessThanOrEqual(MiB)
    expect(seen[2]!.bytes).toBeLessThanOrEqual(MiB)
    // With limit=1, the same events one at a time.
    const oneByOne = (await pages(t, 1)).flatMap((one) => one.events.map((event) => event.form_id))
    expect(oneByOne).toEqual([...before, huge, ...after])
  })

  test('MCP wait_for_events is bounded the same way: its page within 1 MiB, the large event alone, every event once', async () => {
    const t = await create()
    const formIds: string[] = []
    for (let i = 0; i < 5; i++) formIds.push(await bigAnswer(t))
    formIds.push(await hugeAnswer(t))
    const pagesSeen: FeedEvent[][] = []
    let after: string | undefined
    for (;;) {
      const result = await mcpTool(t, 'wait_for_events', { limit: 100, ...(after ? { after } : {}) })
      expect(result.isError).toBeUndefined()
      const answer = result.structuredContent as { events: FeedEvent[]; next: string }
      if (answer.events.length === 0) break
      if (answer.events.length > 1) expect(byteLength(JSON.stringify(answer))).toBeLessThanOrEqual(MiB)
      // The text the tool answers with is the same page.
      expect(JSON.parse(result.content[0]!.text)).toEqual(answer)
      pagesSeen.push(answer.events)
      after = answer.next
    }
    expect(pagesSeen.flat().map((event) => event.form_id)).toEqual(formIds)
    expect(pagesSeen.at(-1)!.map((event) => event.form_id)).toEqual([formIds.at(-1)!])
    expect(pagesSeen.length).toBeGreaterThan(2)
  })
})

describe('reads count against the memory budget', () => {
  test('reads held by clients that do not read fill the budget: the next is 503 with Retry-After before anything is sent; once they end, reads go on', async () => {
    // The smallest budget allowed (100 MiB): a read of a 1.5 MiB event counts a few MiB.
    const t = await create({ SERVICE_UPLOAD_BUDGET: String(100 * MiB) })
    await hugeAnswer(t)
    const held: Response[] = []
    let refused: Response | undefined
    for (let i = 0; i < 200 && !refused; i++) {
      const res = await t.app.handle(
        new Request('http://intake.test/api/v1/events', { headers: { authorization: `Bearer ${t.key}` } }),
      )
      if (res.status === 200) held.push(res)
      else refused = res
    }
    expect(refused).toBeDefined()
    expect(held.length).toBeGreaterThan(5)
    expect(refused!.status).toBe(503)
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(((await refused!.json()) as { detail: unknown }).detail).toBeString()

    // MCP's wait_for_events is refused meanwhile too, as a tool error the agent can retry on.
    const mcp = await mcpTool(t, 'wait_for_events', {})
    expect(mcp.isError).toBe(true)
    expect(mcp.content[0]!.text).toContain('try again')

    // Each held read, once read, is the page whole; then the budget has room again.
    const first = (await held[0]!.json()) as { events: unknown[] }
    expect(first.events).toHaveLength(1)
    for (const res of held.slice(1)) await res.body!.cancel()
    expect((await t.api.get('/events')).status).toBe(200)
    expect((await mcpTool(t, 'wait_for_events', {})).isError).toBeUndefined()
  })
})
