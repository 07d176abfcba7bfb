/**
 * What the event feed tests (test/events-feed-*.test.ts) share: the feed's shapes,
 * times as the API and webhooks write them, and reads, waits and endings made on
 * the test file's context.
 *
 * Time: the test clock moves only when told, so endings made one after another
 * share a millisecond unless a test advances it. Expiry and retention are the
 * background loop's work: a test moves the clock and starts the loop, then
 * awaits the outcome with `until`. Nothing asserts on elapsed time: a held
 * wait is checked to be still pending after a quiet moment, then answered.
 */
import { expect } from 'bun:test'
import { send, submit, type TestContext, type TestResponse, track, until } from './utils.ts'

export type Api = TestContext['api']

export interface FeedEvent {
  id: string
  type: string
  form_id: string
  occurred_at: string
  payload: Record<string, any>
}
export interface FeedPage {
  events: FeedEvent[]
  next: string
}

// ---------------------------------------------------------------- time

/** A datetime as the API writes it (UTC, milliseconds, no zone suffix). */
export const apiTime = (ms: number) => new Date(ms).toISOString().slice(0, -1)
/** A datetime as webhook bodies write it (with Z). */
export const zulu = (ms: number) => new Date(ms).toISOString()
/** How long a negative check gives the app to (wrongly) answer. Not a timing assertion. */
export const QUIET_MS = 300
export const DAY_MS = 86_400_000
/** How long the loop may take to expire a form or sweep old events once they are due (it sleeps at most a second). */
export const LOOP_MS = 5000

export const kinds = (events: FeedEvent[]) => events.map((event) => [event.type, event.form_id])

// ---------------------------------------------------------------- endings

export const UA = 'agent-test/1'

/** A webhook receiver on 127.0.0.1 that accepts everything (forms with a callback_url need somewhere to send). */
export function receiver(cleanups: Array<() => unknown>) {
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('ok') })
  cleanups.push(() => server.stop(true))
  return `http://127.0.0.1:${server.port}/hook`
}

export function expect422At(res: TestResponse, path: string) {
  expect(res.status).toBe(422)
  expect(res.body.detail).toBeString()
  expect(res.body.errors.map((error: { path: string }) => error.path)).toContain(path)
}

/** The helpers that act on the test's context, made on the one `current` returns (each test file's own). */
export function feedRequests(current: () => TestContext) {
  // ---------------------------------------------------------------- the feed

  /** One read of the feed; fails unless it is a 200. */
  async function read(query = '', api: Api = current().api): Promise<FeedPage> {
    const res = await api.get(`/events${query}`)
    if (res.status !== 200) throw new Error(`GET /events${query}: ${res.status} ${res.text}`)
    return res.body as FeedPage
  }

  /** Every event of the account, from the oldest kept, following `next`. */
  async function everything(api: Api = current().api): Promise<FeedEvent[]> {
    const events: FeedEvent[] = []
    let page = await read('?limit=100', api)
    for (;;) {
      events.push(...page.events)
      if (page.events.length === 0) return events
      page = await read(`?after=${page.next}&limit=100`, api)
    }
  }

  /**
   * The account's feed once it shows what the test wrote: `expected` events, or
   * a state `expected` accepts (an expiry or a sweep is the background loop's,
   * done a moment later). Counted, every read on the way must be the start of
   * the final one: events may show late, never out of order nor with a gap.
   */
  async function settled(
    expected: number | ((events: FeedEvent[]) => boolean),
    api: Api = current().api,
  ): Promise<FeedEvent[]> {
    const holds = typeof expected === 'number' ? (events: FeedEvent[]) => events.length === expected : expected
    const seen: FeedEvent[][] = []
    let last: FeedEvent[] = []
    const done = async () => {
      last = await everything(api)
      seen.push(last)
      return holds(last)
    }
    await until(done, LOOP_MS, 'the feed to show what was written', () => kinds(last))
    if (typeof expected === 'number') for (const earlier of seen) expect(earlier).toEqual(last.slice(0, earlier.length))
    return last
  }

  /** A feed read held with `wait`, checked to be still pending after a quiet moment. */
  async function heldWait(after: string, api: Api = current().api, wait = 30) {
    const waiter = track(api.get(`/events?after=${after}&wait=${wait}`))
    await Bun.sleep(QUIET_MS)
    expect(waiter.settled).toBe(false)
    return waiter
  }

  /** The cursor that starts from now. */
  const latest = async (api: Api = current().api) => (await read('?after=latest', api)).next

  /** Answers a form as a custom front end does; fails unless it is recorded. */
  async function answer(formId: string, data: unknown = { name: 'Ada' }) {
    const res = await submit(current().app, formId, data, { 'user-agent': UA })
    if (res.status !== 201) throw new Error(`submission not recorded: ${res.status} ${res.text}`)
    return res.body as { id: string; form_id: string; submitted_at: string }
  }

  async function cancel(formId: string, api: Api = current().api) {
    const res = await api.patch(`/forms/${formId}`, { status: 'cancelled' })
    if (res.status !== 200) throw new Error(`cancel: ${res.status} ${res.text}`)
    return res.body
  }

  async function remove(formId: string, api: Api = current().api) {
    const res = await api.delete(`/forms/${formId}`)
    if (res.status !== 204) throw new Error(`delete: ${res.status} ${res.text}`)
  }

  /** Moves the clock past `ms` and lets the background loop write what is due; waits until `condition` holds. */
  async function sweepUntil(ms: number, condition: () => Promise<boolean>, what: string) {
    current().clock.advance(ms)
    current().background.start()
    await until(condition, LOOP_MS, what, () => everything())
  }

  /** Whether the account's feed holds an event of this type for this form. */
  const inFeed =
    (type: string, formId: string, api: Api = current().api) =>
    async () =>
      (await everything(api)).some((event) => event.type === type && event.form_id === formId)

  /** An MCP tools/call over POST /mcp, in process. */
  async function mcpTool(name: string, args: Record<string, unknown>, key = current().key) {
    const res = await send(current().app, 'POST', '/mcp', {
      key,
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
      headers: { accept: 'application/json, text/event-stream' },
    })
    if (res.status !== 200) throw new Error(`MCP ${name}: ${res.status} ${res.text}`)
    return res.body.result as {
      content: Array<{ type: string; text: string }>
      structuredContent?: any
      isError?: boolean
    }
  }
  return { read, everything, settled, heldWait, latest, answer, cancel, remove, sweepUntil, inFeed, mcpTool }
}
