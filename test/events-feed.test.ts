/**
 * The account's event feed (CONTRACT 12), as an agent developer relies on it:
 * GET /api/v1/events (and MCP `wait_for_events`) tells of every ending of
 * every form of the account (form.completed, form.cancelled, form.expired,
 * form.deleted), whatever the form's callback_events; each event carries the
 * payload its webhook body carries; events come back in commit order; cursors
 * are opaque and never skip nor repeat an event; `wait` holds a read until the
 * next event; deletion leaves only form.deleted; events go after 7 days; each
 * account sees only its own.
 *
 * Time: the test clock moves only when told, so endings made one after another
 * share a millisecond unless a test advances it. Expiry and retention are the
 * background loop's work: a test moves the clock and starts the loop, then
 * awaits the outcome with `until`. Nothing asserts on elapsed time: a held
 * wait is checked to be still pending after a quiet moment, then answered.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import {
  API_TIME_PATTERN,
  apiClient,
  contextsPerTest,
  send,
  submit,
  TEST_STORE,
  type TestContext,
  type TestResponse,
  track,
  until,
} from './utils.ts'

setDefaultTimeout(20_000)

let t: TestContext
const { create, cleanups } = contextsPerTest()
const setup = async () => (t = await create())

type Api = TestContext['api']

interface FeedEvent {
  id: string
  type: string
  form_id: string
  occurred_at: string
  payload: Record<string, any>
}
interface FeedPage {
  events: FeedEvent[]
  next: string
}

// ---------------------------------------------------------------- time

/** A datetime as the API writes it (UTC, milliseconds, no zone suffix). */
const apiTime = (ms: number) => new Date(ms).toISOString().slice(0, -1)
/** A datetime as webhook bodies write it (with Z). */
const zulu = (ms: number) => new Date(ms).toISOString()
/** How long a negative check gives the app to (wrongly) answer. Not a timing assertion. */
const QUIET_MS = 300
const DAY_MS = 86_400_000
/** How long the loop may take to expire a form or sweep old events once they are due (it sleeps at most a second). */
const LOOP_MS = 5000

// ---------------------------------------------------------------- the feed

/** One read of the feed; fails unless it is a 200. */
async function read(query = '', api: Api = t.api): Promise<FeedPage> {
  const res = await api.get(`/events${query}`)
  if (res.status !== 200) throw new Error(`GET /events${query}: ${res.status} ${res.text}`)
  return res.body as FeedPage
}

/** Every event of the account, from the oldest kept, following `next`. */
async function everything(api: Api = t.api): Promise<FeedEvent[]> {
  const events: FeedEvent[] = []
  let page = await read('?limit=100', api)
  for (;;) {
    events.push(...page.events)
    if (page.events.length === 0) return events
    page = await read(`?after=${page.next}&limit=100`, api)
  }
}

const kinds = (events: FeedEvent[]) => events.map((event) => [event.type, event.form_id])

/**
 * The account's feed once it shows what the test wrote: `expected` events, or
 * a state `expected` accepts (an expiry or a sweep is the background loop's,
 * done a moment later). Counted, every read on the way must be the start of
 * the final one: events may show late, never out of order nor with a gap.
 */
async function settled(expected: number | ((events: FeedEvent[]) => boolean), api: Api = t.api): Promise<FeedEvent[]> {
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
async function heldWait(after: string, api: Api = t.api, wait = 30) {
  const waiter = track(api.get(`/events?after=${after}&wait=${wait}`))
  await Bun.sleep(QUIET_MS)
  expect(waiter.settled).toBe(false)
  return waiter
}

/** The cursor that starts from now. */
const latest = async (api: Api = t.api) => (await read('?after=latest', api)).next

// ---------------------------------------------------------------- endings

const UA = 'agent-test/1'

/** Answers a form as a custom front end does; fails unless it is recorded. */
async function answer(formId: string, data: unknown = { name: 'Ada' }) {
  const res = await submit(t.app, formId, data, { 'user-agent': UA })
  if (res.status !== 201) throw new Error(`submission not recorded: ${res.status} ${res.text}`)
  return res.body as { id: string; form_id: string; submitted_at: string }
}

async function cancel(formId: string, api: Api = t.api) {
  const res = await api.patch(`/forms/${formId}`, { status: 'cancelled' })
  if (res.status !== 200) throw new Error(`cancel: ${res.status} ${res.text}`)
  return res.body
}

async function remove(formId: string, api: Api = t.api) {
  const res = await api.delete(`/forms/${formId}`)
  if (res.status !== 204) throw new Error(`delete: ${res.status} ${res.text}`)
}

/** Moves the clock past `ms` and lets the background loop write what is due; waits until `condition` holds. */
async function sweepUntil(ms: number, condition: () => Promise<boolean>, what: string) {
  t.clock.advance(ms)
  t.background.start()
  await until(condition, LOOP_MS, what, () => everything())
}

/** Whether the account's feed holds an event of this type for this form. */
const inFeed =
  (type: string, formId: string, api: Api = t.api) =>
  async () =>
    (await everything(api)).some((event) => event.type === type && event.form_id === formId)

/** A webhook receiver on 127.0.0.1 that accepts everything (forms with a callback_url need somewhere to send). */
function receiver() {
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('ok') })
  cleanups.push(() => server.stop(true))
  return `http://127.0.0.1:${server.port}/hook`
}

/** An MCP tools/call over POST /mcp, in process. */
async function mcpTool(name: string, args: Record<string, unknown>, key = t.key) {
  const res = await send(t.app, 'POST', '/mcp', {
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

function expect422At(res: TestResponse, path: string) {
  expect(res.status).toBe(422)
  expect(res.body.detail).toBeString()
  expect(res.body.errors.map((error: { path: string }) => error.path)).toContain(path)
}

// ================================================================= 1. every ending of every form

describe('every ending of every form is in the feed, whatever its callback_events', () => {
  const subscriptions: Array<[string, () => Record<string, unknown>]> = [
    ['no callback at all', () => ({})],
    [
      'a callback_url subscribed to form.completed only',
      () => ({ callback_url: receiver(), callback_events: ['form.completed'] }),
    ],
    ['a callback_url with the default callback_events', () => ({ callback_url: receiver() })],
    [
      'a callback_url subscribed to form.expired only',
      () => ({ callback_url: receiver(), callback_events: ['form.expired'] }),
    ],
  ]
  test.each(subscriptions)(
    '%s: form.completed, form.cancelled, form.deleted and form.expired each appear',
    async (_, subscription) => {
      await setup()
      const answered = await t.api.createForm(subscription())
      const cancelled = await t.api.createForm(subscription())
      const deleted = await t.api.createForm(subscription())
      const expiring = await t.api.createForm({ ...subscription(), expires_in: '1m' })
      await answer(answered.id)
      await cancel(cancelled.id)
      await remove(deleted.id)
      await sweepUntil(61_000, inFeed('form.expired', expiring.id), 'the expiry in the feed')
      expect(kinds(await everything())).toEqual([
        ['form.completed', answered.id],
        ['form.cancelled', cancelled.id],
        ['form.deleted', deleted.id],
        ['form.expired', expiring.id],
      ])
    },
  )
})

// ================================================================= 2. exact payloads

describe('each event is exactly what happened, its payload the webhook body', () => {
  test('form.completed: occurred_at is the answer time (no Z); the payload is the form.completed body (Z)', async () => {
    await setup()
    const callbackMetadata = { run: 'r-42', tags: ['a', 'b'], nested: { ok: true } }
    const context = { agent: 'planner', step: 3, note: 'Zoë' }
    const form = await t.api.createForm({
      title: 'Trip to Lisbon',
      callback_metadata: callbackMetadata,
      context,
      fields: [
        { key: 'name', type: 'text', label: 'Name', required: true },
        { key: 'guests', type: 'number', label: 'Guests' },
        { key: 'agree', type: 'checkbox', label: 'Agree' },
      ],
    })
    t.clock.advance(1234)
    const answeredAt = t.clock()
    const receipt = await answer(form.id, { name: 'Ada', guests: 2, agree: true })
    t.clock.advance(1000)

    const events = await settled(1)
    expect(events).toEqual([
      {
        id: expect.any(String),
        type: 'form.completed',
        form_id: form.id,
        occurred_at: apiTime(answeredAt),
        payload: {
          event: 'form.completed',
          form_id: form.id,
          form_title: 'Trip to Lisbon',
          completed_at: zulu(answeredAt),
          response_id: receipt.id,
          data: { name: 'Ada', guests: 2, agree: true },
          metadata: { ip: null, user_agent: UA },
          callback_metadata: callbackMetadata,
          context,
        },
      },
    ])
    const [event] = events
    expect(event!.occurred_at).toMatch(API_TIME_PATTERN)
    expect(event!.occurred_at).toBe(receipt.submitted_at)
    expect(event!.payload.completed_at).toEndWith('Z')
    // The answer the API serves tells the same story.
    const stored = (await t.api.get(`/forms/${form.id}/responses`)).body[0]
    expect(event!.payload.response_id).toBe(stored.id)
    expect(event!.payload.data).toEqual(stored.data)
    expect(event!.payload.metadata).toEqual(stored.metadata)
  })

  test('form.cancelled: occurred_at is the cancel time; the payload carries status, callback_metadata and the context', async () => {
    await setup()
    const context = { step: 'review', ids: [1, 2, 3] }
    const form = await t.api.createForm({ callback_metadata: { run: 'r-7' }, context })
    const plain = await t.api.createForm()
    t.clock.advance(2500)
    const cancelledAt = t.clock()
    await cancel(form.id)
    t.clock.advance(700)
    const plainCancelledAt = t.clock()
    await cancel(plain.id)

    const events = await settled(2)
    expect(events).toEqual([
      {
        id: expect.any(String),
        type: 'form.cancelled',
        form_id: form.id,
        occurred_at: apiTime(cancelledAt),
        payload: {
          event: 'form.cancelled',
          form_id: form.id,
          status: 'cancelled',
          occurred_at: zulu(cancelledAt),
          callback_metadata: { run: 'r-7' },
          context,
        },
      },
      {
        id: expect.any(String),
        type: 'form.cancelled',
        form_id: plain.id,
        occurred_at: apiTime(plainCancelledAt),
        // None given: {} and null, as in webhook bodies.
        payload: {
          event: 'form.cancelled',
          form_id: plain.id,
          status: 'cancelled',
          occurred_at: zulu(plainCancelledAt),
          callback_metadata: {},
          context: null,
        },
      },
    ])
    for (const event of events) {
      expect(event.occurred_at).toMatch(API_TIME_PATTERN)
      expect(event.payload.occurred_at).toBe(`${event.occurred_at}Z`)
    }
    // A cancelled form keeps its context; the event agrees with Get Form.
    expect((await t.api.get(`/forms/${form.id}`)).body).toMatchObject({ status: 'cancelled', context })
  })

  test("form.expired: occurred_at is the form's expires_at; the payload keeps the context the form had, though Get Form now shows null", async () => {
    await setup()
    const context = { agent: 'planner', secretish: 'kept only in the event' }
    const form = await t.api.createForm({ expires_in: '1m', callback_metadata: { run: 'exp' }, context })
    expect(form.expires_at).toMatch(API_TIME_PATTERN)
    await sweepUntil(90_000, inFeed('form.expired', form.id), 'the expiry in the feed')

    const events = await everything()
    expect(events).toEqual([
      {
        id: expect.any(String),
        type: 'form.expired',
        form_id: form.id,
        occurred_at: form.expires_at!,
        payload: {
          event: 'form.expired',
          form_id: form.id,
          status: 'expired',
          occurred_at: `${form.expires_at}Z`,
          callback_metadata: { run: 'exp' },
          context,
        },
      },
    ])
    // Not when the sweep ran (90 s after creation), but when the form expired.
    expect(events[0]!.occurred_at).not.toBe(apiTime(t.clock()))
    expect((await t.api.get(`/forms/${form.id}`)).body).toMatchObject({
      status: 'expired',
      context: null,
      expires_at: form.expires_at,
    })
  })

  test('form.expired for an expiry set with PATCH expires_at: occurred_at is that expires_at', async () => {
    await setup()
    const form = await t.api.createForm({ expires_in: null, context: { n: 1 } })
    const patched = await t.api.patch(`/forms/${form.id}`, { expires_at: apiTime(t.clock() + 5000) })
    expect(patched.status).toBe(200)
    const expiresAt = patched.body.expires_at as string
    expect(expiresAt).toBe(apiTime(t.clock() + 5000))
    await sweepUntil(30_000, inFeed('form.expired', form.id), 'the expiry in the feed')
    expect(await everything()).toEqual([
      {
        id: expect.any(String),
        type: 'form.expired',
        form_id: form.id,
        occurred_at: expiresAt,
        payload: {
          event: 'form.expired',
          form_id: form.id,
          status: 'expired',
          occurred_at: `${expiresAt}Z`,
          callback_metadata: {},
          context: { n: 1 },
        },
      },
    ])
  })

  test('form.deleted: occurred_at is the deletion time; the payload is {"form_id"} only', async () => {
    await setup()
    const form = await t.api.createForm({ callback_metadata: { run: 'x' }, context: { y: 1 } })
    t.clock.advance(4321)
    const deletedAt = t.clock()
    await remove(form.id)
    t.clock.advance(1000)
    const events = await settled(1)
    expect(events).toEqual([
      {
        id: expect.any(String),
        type: 'form.deleted',
        form_id: form.id,
        occurred_at: apiTime(deletedAt),
        payload: { form_id: form.id },
      },
    ])
    expect(events[0]!.occurred_at).toMatch(API_TIME_PATTERN)
  })
})

// ================================================================= 3. ordering and cursors

describe('ordering and cursors', () => {
  /**
   * Ends six forms, in an order that is neither that of their ids nor of their
   * types, all in one millisecond, after the `before` events the feed holds.
   */
  async function scrambledEndings(before = 0) {
    const forms = []
    for (let i = 0; i < 6; i++) forms.push(await t.api.createForm({ context: { i } }))
    const [f0, f1, f2, f3, f4, f5] = forms.map((form) => form.id) as [string, string, string, string, string, string]
    await cancel(f3)
    await answer(f1)
    await remove(f5)
    await cancel(f0)
    await answer(f4)
    await remove(f2)
    await settled(before + 6)
    return [
      ['form.cancelled', f3],
      ['form.completed', f1],
      ['form.deleted', f5],
      ['form.cancelled', f0],
      ['form.completed', f4],
      ['form.deleted', f2],
    ]
  }

  test('endings in the same millisecond come back in the order they committed; no `after` starts from the oldest', async () => {
    await setup()
    const order = await scrambledEndings()
    const page = await read()
    expect(kinds(page.events)).toEqual(order)
    // The clock never moved: the times are all the same, so only the commit order tells them apart.
    expect(new Set(page.events.map((event) => event.occurred_at))).toEqual(new Set([apiTime(t.clock())]))
    expect(page.next).toBe(page.events.at(-1)!.id)
  })

  test('paging with limit=1 following `next` visits every event exactly once, in order; then `next` stays put', async () => {
    await setup()
    const order = await scrambledEndings()
    const all = (await read('?limit=100')).events
    const visited: FeedEvent[] = []
    let page = await read('?limit=1')
    while (page.events.length > 0) {
      expect(page.events).toHaveLength(1)
      expect(page.next).toBe(page.events[0]!.id)
      visited.push(...page.events)
      expect(visited.length).toBeLessThanOrEqual(order.length)
      page = await read(`?after=${page.next}&limit=1`)
    }
    expect(visited).toEqual(all)
    expect(kinds(visited)).toEqual(order)
    expect(new Set(visited.map((event) => event.id)).size).toBe(order.length)
    // Nothing new: `next` equals `after`.
    const last = visited.at(-1)!.id
    expect(page).toEqual({ events: [], next: last })
    expect(await read(`?after=${last}`)).toEqual({ events: [], next: last })
  })

  test('the Link header points at the same query from `next` on', async () => {
    await setup()
    await scrambledEndings()
    const first = await t.api.get('/events?limit=2')
    expect(first.status).toBe(200)
    expect(first.body.events).toHaveLength(2)
    expect(first.headers.get('link')).toBe(
      `<http://intake.test/api/v1/events?after=${first.body.next}&limit=2>; rel="next"`,
    )
    // Following the Link gets the next page.
    const link = first.headers.get('link')!.match(/^<http:\/\/intake\.test\/api\/v1([^>]+)>/)![1]!
    const second = await t.api.get(link)
    expect(second.body.events.map((e: FeedEvent) => e.id)).toEqual(
      (await read('?limit=4')).events.slice(2).map((e) => e.id),
    )
    // The default limit is 20.
    const plain = await t.api.get('/events')
    expect(plain.headers.get('link')).toBe(
      `<http://intake.test/api/v1/events?after=${plain.body.next}&limit=20>; rel="next"`,
    )
  })

  test('the default limit is 20 and limit=100 is accepted', async () => {
    await setup()
    for (let i = 0; i < 22; i++) await cancel((await t.api.createForm()).id)
    await settled(22)
    expect((await read()).events).toHaveLength(20)
    expect((await read('?limit=100')).events).toHaveLength(22)
  })

  test('event ids are opaque strings, distinct, and each works as a cursor: the events after it', async () => {
    await setup()
    await scrambledEndings()
    const all = (await read('?limit=100')).events
    const ids = all.map((event) => event.id)
    for (const id of ids) expect(typeof id).toBe('string')
    expect(new Set(ids).size).toBe(ids.length)
    // Not a form id: an event has its own.
    for (const event of all) expect(event.id).not.toBe(event.form_id)
    for (const [i, id] of ids.entries()) {
      const page = await read(`?after=${id}&limit=100`)
      expect(page.events).toEqual(all.slice(i + 1))
      expect(page.next).toBe(ids.at(-1)!)
    }
  })

  test('after=latest returns no events and a `next` after which only later events come', async () => {
    await setup()
    // On an empty feed too.
    const empty = await read('?after=latest')
    expect(empty.events).toEqual([])
    expect(empty.next).toBeString()
    const first = await t.api.createForm()
    await cancel(first.id)
    await settled(1)
    expect(kinds((await read(`?after=${empty.next}`)).events)).toEqual([['form.cancelled', first.id]])

    await scrambledEndings(1)
    const head = await read('?after=latest')
    expect(head.events).toEqual([])
    expect(await read(`?after=${head.next}`)).toEqual({ events: [], next: head.next })
    const later = await t.api.createForm()
    await answer(later.id)
    await settled(8)
    const page = await read(`?after=${head.next}`)
    expect(kinds(page.events)).toEqual([['form.completed', later.id]])
    expect(page.next).toBe(page.events[0]!.id)
  })

  test.each([
    ['abc', 'abc'],
    ['27 characters', '0'.repeat(27)],
    ['25 characters', '0'.repeat(25)],
    ['uppercase', 'A'.repeat(26)],
    ['a digit past v', 'w'.repeat(26)],
    ['a number out of range', 'v'.repeat(26)],
    ['a form id (a ULID)', '01ARZ3NDEKTSV4RRFFQ69G5FAV'],
    ['empty', ''],
    ['negative', '-1'],
  ])('a malformed cursor (%s) is 422 at /after', async (_, after) => {
    await setup()
    await cancel((await t.api.createForm()).id)
    const res = await t.api.get(`/events?after=${encodeURIComponent(after)}`)
    expect422At(res, '/after')
    expect(res.body.errors.find((error: { path: string }) => error.path === '/after').code).toBe('invalid_format')
  })

  test('an uppercased real event id is refused, not read as another position', async () => {
    await setup()
    for (let i = 0; i < 12; i++) await cancel((await t.api.createForm()).id)
    const all = await settled(12)
    const lettered = all.map((event) => event.id).find((id) => /[a-v]/.test(id))
    expect(lettered).toBeDefined()
    expect422At(await t.api.get(`/events?after=${lettered!.toUpperCase()}`), '/after')
    expect((await t.api.get(`/events?after=${all[0]!.id}`)).status).toBe(200)
  })

  test.each([
    ['limit', '0'],
    ['limit', '101'],
    ['limit', 'x'],
    ['limit', '1.5'],
    ['wait', '61'],
    ['wait', '-1'],
    ['wait', 'x'],
  ])('%s=%s is 422 at its path', async (name, value) => {
    await setup()
    const res = await t.api.get(`/events?${name}=${value}`)
    expect422At(res, `/${name}`)
  })

  test('limit=1, limit=100, wait=0 and wait=60 (with an event waiting) are accepted', async () => {
    await setup()
    await cancel((await t.api.createForm()).id)
    await settled(1)
    for (const query of ['?limit=1', '?limit=100', '?wait=0', '?wait=60']) {
      const page = await read(query)
      expect(page.events).toHaveLength(1)
    }
  })
})

// ================================================================= 4. waits

describe('wait: a read with nothing new is held until the next event', () => {
  test('a wait=30 is answered by an answer to a form, with that event', async () => {
    await setup()
    const form = await t.api.createForm({ context: { waiting: true } })
    const head = await latest()
    const waiter = await heldWait(head)
    const receipt = await answer(form.id)
    const res = await waiter.promise
    expect(res.status).toBe(200)
    expect(kinds(res.body.events)).toEqual([['form.completed', form.id]])
    expect(res.body.events[0].payload).toMatchObject({
      response_id: receipt.id,
      data: { name: 'Ada' },
      context: { waiting: true },
    })
    expect(res.body.next).toBe(res.body.events[0].id)
    // The event the wait answered with is the feed's.
    expect(await read(`?after=${head}`)).toEqual(res.body)
  })

  test('a wait=30 is answered by a cancel', async () => {
    await setup()
    const form = await t.api.createForm()
    const waiter = await heldWait(await latest())
    await cancel(form.id)
    const res = await waiter.promise
    expect(res.status).toBe(200)
    expect(kinds(res.body.events)).toEqual([['form.cancelled', form.id]])
    expect(res.body.next).toBe(res.body.events[0].id)
  })

  test('a wait=30 is answered by an expiry the background loop writes', async () => {
    await setup()
    const form = await t.api.createForm({ expires_in: '1m', context: { step: 'exp' } })
    t.background.start()
    const waiter = await heldWait(await latest())
    t.clock.advance(61_000)
    await until(() => waiter.settled, LOOP_MS, 'the wait to be answered by the expiry')
    const res = await waiter.promise
    expect(res.status).toBe(200)
    expect(kinds(res.body.events)).toEqual([['form.expired', form.id]])
    expect(res.body.events[0].payload.context).toEqual({ step: 'exp' })
    expect(res.body.events[0].occurred_at).toBe(form.expires_at)
  })

  test('a wait=30 is answered by a deletion', async () => {
    await setup()
    const form = await t.api.createForm()
    const waiter = await heldWait(await latest())
    await remove(form.id)
    const res = await waiter.promise
    expect(res.status).toBe(200)
    expect(res.body.events).toEqual([
      {
        id: res.body.next,
        type: 'form.deleted',
        form_id: form.id,
        occurred_at: apiTime(t.clock()),
        payload: { form_id: form.id },
      },
    ])
  })

  test('a wait from after=latest is answered by the next event only', async () => {
    await setup()
    await scrambledFew()
    await settled(2)
    const form = await t.api.createForm()
    const waiter = track(t.api.get('/events?after=latest&wait=30'))
    await Bun.sleep(QUIET_MS)
    expect(waiter.settled).toBe(false)
    await cancel(form.id)
    const res = await waiter.promise
    expect(res.status).toBe(200)
    expect(kinds(res.body.events)).toEqual([['form.cancelled', form.id]])
  })

  test('many waits on one account, at one cursor or several, each with its own limit, are all answered by one ending with what follows their cursor', async () => {
    await setup()
    const earlier = await t.api.createForm()
    const before = await latest()
    await cancel(earlier.id)
    await settled(1)
    const head = await latest()
    const form = await t.api.createForm()
    // Woken together, waits that ask the same read share it (one read per account, position and limit).
    const atHead = await Promise.all(Array.from({ length: 30 }, () => heldWait(head)))
    const limited = track(t.api.get(`/events?after=${head}&limit=5&wait=30`))
    const behind = track(t.api.get(`/events?after=${before}&limit=1&wait=30`))
    await cancel(form.id)
    for (const waiter of [...atHead, limited]) {
      const res = await waiter.promise
      expect({ status: res.status, events: kinds(res.body.events) }).toEqual({
        status: 200,
        events: [['form.cancelled', form.id]],
      })
    }
    // A wait behind the head had events to read at once: its own page, one event.
    expect(kinds((await behind.promise).body.events)).toEqual([['form.cancelled', earlier.id]])
  })

  test('a wait with events already after the cursor answers with them without waiting', async () => {
    await setup()
    const head = await latest()
    const form = await t.api.createForm()
    await cancel(form.id)
    const waiter = track(t.api.get(`/events?after=${head}&wait=60`))
    await until(() => waiter.settled, LOOP_MS, 'the wait to answer at once')
    expect(kinds((await waiter.promise).body.events)).toEqual([['form.cancelled', form.id]])
  })

  test('a wait that times out answers {"events":[],"next":<after>}', async () => {
    await setup()
    const form = await t.api.createForm()
    await cancel(form.id)
    await settled(1)
    const head = await latest()
    const res = await t.api.get(`/events?after=${head}&wait=1`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ events: [], next: head })
    expect(res.headers.get('link')).toBe(`<http://intake.test/api/v1/events?after=${head}&limit=20>; rel="next"`)
  })

  test("a wait on account A is not answered by account B's event, and is by A's next one", async () => {
    await setup()
    const other = apiClient(t.app, (await t.createKey('other')).key)
    const theirs = await other.createForm()
    const mine = await t.api.createForm()
    const waiter = await heldWait(await latest())
    await cancel(theirs.id, other)
    await answer((await other.createForm()).id)
    await Bun.sleep(QUIET_MS)
    expect(waiter.settled).toBe(false)
    await cancel(mine.id)
    const res = await waiter.promise
    expect(kinds(res.body.events)).toEqual([['form.cancelled', mine.id]])
  })

  /** A few endings, so `latest` is not the feed's start. */
  async function scrambledFew() {
    await cancel((await t.api.createForm()).id)
    await answer((await t.api.createForm()).id)
  }
})

// ================================================================= 5. deletion

describe('deleting a form leaves only its form.deleted', () => {
  test("an answered form's form.completed disappears; the other forms' events are untouched", async () => {
    await setup()
    const before = await t.api.createForm()
    const doomed = await t.api.createForm({ context: { step: 1 } })
    const after = await t.api.createForm()
    await cancel(before.id)
    await answer(doomed.id)
    await answer(after.id)
    const earlier = await settled(3)
    expect(kinds(earlier)).toEqual([
      ['form.cancelled', before.id],
      ['form.completed', doomed.id],
      ['form.completed', after.id],
    ])
    const completedId = earlier[1]!.id

    t.clock.advance(1000)
    await remove(doomed.id)
    const now = await settled((events) => events.some((event) => event.type === 'form.deleted'))
    expect(now).toEqual([
      earlier[0]!,
      earlier[2]!,
      {
        id: expect.any(String),
        type: 'form.deleted',
        form_id: doomed.id,
        occurred_at: apiTime(t.clock()),
        payload: { form_id: doomed.id },
      },
    ])
    // The context the completed event carried is nowhere in the feed any more.
    expect(JSON.stringify(now)).not.toContain('"step":1')
    // A reader whose cursor was the removed event goes on from where it stood.
    expect((await read(`?after=${completedId}`)).events).toEqual(now.slice(1))
    // And one that had read up to the last event hears of the deletion.
    expect((await read(`?after=${earlier[2]!.id}`)).events).toEqual(now.slice(2))
  })

  test("a reader whose cursor is the deleted form's own (and the feed's last) event hears the deletion, waiting or not", async () => {
    await setup()
    const other = await t.api.createForm()
    const form = await t.api.createForm()
    await cancel(other.id)
    await answer(form.id)
    const [otherEvent, completed] = await settled(2)
    expect(kinds([completed!])).toEqual([['form.completed', form.id]])
    // The agent has read the answer and waits on from there; then the form is deleted.
    const waiter = await heldWait(completed!.id)
    await remove(form.id)
    const res = await waiter.promise
    expect(res.status).toBe(200)
    expect(kinds(res.body.events)).toEqual([['form.deleted', form.id]])
    expect(res.body.next).toBe(res.body.events[0].id)
    expect(res.body.next).not.toBe(completed!.id)
    expect(await read(`?after=${completed!.id}`)).toEqual(res.body)
    expect(await everything()).toEqual([otherEvent!, res.body.events[0]])
  })

  test('an expired or cancelled form deleted: only form.deleted remains for it', async () => {
    await setup()
    const expiring = await t.api.createForm({ expires_in: '1m', context: { kept: 'in the expiry event' } })
    const cancelled = await t.api.createForm()
    await cancel(cancelled.id)
    await sweepUntil(61_000, inFeed('form.expired', expiring.id), 'the expiry in the feed')
    await remove(expiring.id)
    await remove(cancelled.id)
    const events = await settled(
      (events) => events.length === 2 && events.every((event) => event.type === 'form.deleted'),
    )
    expect(kinds(events)).toEqual([
      ['form.deleted', expiring.id],
      ['form.deleted', cancelled.id],
    ])
    expect(JSON.stringify(events)).not.toContain('in the expiry event')
    // A second delete is 404 and adds nothing.
    expect((await t.api.delete(`/forms/${expiring.id}`)).status).toBe(404)
    expect(await everything()).toEqual(events)
  })

  test('an active form deleted: form.deleted only, and its form is gone', async () => {
    await setup()
    const form = await t.api.createForm()
    await remove(form.id)
    expect(kinds(await settled(1))).toEqual([['form.deleted', form.id]])
    expect((await t.api.get(`/forms/${form.id}`)).status).toBe(404)
  })
})

// ================================================================= 6. retention

describe('events are kept 7 days', () => {
  test('events older than 7 days are gone after the sweep; younger ones stay; a cursor at a removed event is still a position', async () => {
    await setup()
    const old = await t.api.createForm()
    await cancel(old.id)
    t.clock.advance(DAY_MS)
    const young = await t.api.createForm()
    await answer(young.id)
    const [oldEvent, youngEvent] = await settled(2)
    expect(kinds([oldEvent!, youngEvent!])).toEqual([
      ['form.cancelled', old.id],
      ['form.completed', young.id],
    ])

    // The old event is 7 days and 2 minutes old; the young one 6 days and 2 minutes.
    await sweepUntil(
      6 * DAY_MS + 120_000,
      async () => (await everything()).length === 1,
      'the 7-day-old event to be swept',
    )
    expect(await everything()).toEqual([youngEvent!])
    // The removed event's id is still a position: the events after it, not an error.
    expect(await read(`?after=${oldEvent!.id}`)).toEqual({ events: [youngEvent!], next: youngEvent!.id })
    // Forms are not events: the old form is still there.
    expect((await t.api.get(`/forms/${old.id}`)).body.status).toBe('cancelled')

    // A day later the young one goes too; its id stays a position.
    t.clock.advance(DAY_MS)
    await until(
      async () => (await everything()).length === 0,
      LOOP_MS,
      'the second event to be swept',
      () => everything(),
    )
    expect(await read(`?after=${youngEvent!.id}`)).toEqual({ events: [], next: youngEvent!.id })
    expect(await read(`?after=${oldEvent!.id}`)).toEqual({ events: [], next: oldEvent!.id })
    // And new events still come after it.
    const fresh = await t.api.createForm()
    await cancel(fresh.id)
    await settled(1)
    expect(kinds((await read(`?after=${youngEvent!.id}`)).events)).toEqual([['form.cancelled', fresh.id]])
  })

  test('an event just under 7 days old is kept while an older one goes', async () => {
    await setup()
    const older = await t.api.createForm()
    await cancel(older.id)
    t.clock.advance(60_000)
    const edge = await t.api.createForm()
    await cancel(edge.id)
    const [, edgeEvent] = await settled(2)
    // The edge event is 7 days less a second old; the older one 7 days and 59 s.
    await sweepUntil(7 * DAY_MS - 1000, async () => (await everything()).length === 1, 'the older event to be swept')
    expect(await everything()).toEqual([edgeEvent!])
  })
})

// ================================================================= 7. accounts

describe('each account sees only its own events', () => {
  test("account B never sees A's events, from the start or with A's cursors", async () => {
    await setup()
    const b = apiClient(t.app, (await t.createKey('other')).key)
    const aForms = [await t.api.createForm(), await t.api.createForm(), await t.api.createForm()]
    await cancel(aForms[0]!.id)
    await answer(aForms[1]!.id)
    await remove(aForms[2]!.id)
    const aEvents = await settled(3)

    // B has nothing, from the start, from latest, or after any of A's events.
    expect(await read('', b)).toEqual({ events: [], next: expect.any(String) })
    expect((await read('?after=latest', b)).events).toEqual([])
    for (const event of aEvents) expect((await read(`?after=${event.id}`, b)).events).toEqual([])

    const bForm = await b.createForm()
    await cancel(bForm.id, b)
    const bEvents = await settled(1, b)
    expect(kinds(bEvents)).toEqual([['form.cancelled', bForm.id]])
    // With A's cursors B still sees only its own: cursors are per account (CONTRACT 12a), so one of A's
    // is a place in B's feed, and B reads on from there in its own.
    const aFormIds = new Set(aForms.map((form) => form.id))
    for (const event of aEvents) {
      const page = await read(`?after=${event.id}&limit=100`, b)
      expect(page.events.every((e) => !aFormIds.has(e.form_id))).toBe(true)
      expect(page.events).toEqual(bEvents.slice(bEvents.length - page.events.length))
    }
    // And A's feed is unchanged by B's.
    expect(await everything()).toEqual(aEvents)
    // B cannot touch A's forms to make events there either.
    expect((await b.patch(`/forms/${aForms[0]!.id}`, { status: 'cancelled' })).status).toBe(404)
    expect((await b.delete(`/forms/${aForms[1]!.id}`)).status).toBe(404)
    expect(await everything()).toEqual(aEvents)
  })
})

// ================================================================= 8. a form ends once

describe('a form ends once: nothing after its ending adds an event', () => {
  test('a repeated cancel adds no event', async () => {
    await setup()
    const form = await t.api.createForm()
    await cancel(form.id)
    t.clock.advance(1000)
    const again = await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })
    expect(again.status).toBe(200)
    expect(again.body.status).toBe('cancelled')
    const events = await settled(1)
    expect(kinds(events)).toEqual([['form.cancelled', form.id]])
  })

  test('a cancel after expiry is 409 and adds no event, before and after the sweep', async () => {
    await setup()
    const form = await t.api.createForm({ expires_in: '1m' })
    t.clock.advance(61_000)
    expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(409)
    expect(await everything()).toEqual([])
    t.background.start()
    await until(inFeed('form.expired', form.id), LOOP_MS, 'the expiry in the feed', () => everything())
    expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(409)
    await Bun.sleep(QUIET_MS)
    expect(kinds(await everything())).toEqual([['form.expired', form.id]])
  })

  test('an answer after a cancel is refused and adds no event', async () => {
    await setup()
    const form = await t.api.createForm()
    await cancel(form.id)
    expect((await submit(t.app, form.id, { name: 'Late' })).status).toBe(410)
    expect(kinds(await settled(1))).toEqual([['form.cancelled', form.id]])
  })

  test('a second answer is 409 and adds no event; a cancel of an answered form is 409 and adds none', async () => {
    await setup()
    const form = await t.api.createForm()
    await answer(form.id)
    expect((await submit(t.app, form.id, { name: 'Again' })).status).toBe(409)
    expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(409)
    expect(kinds(await settled(1))).toEqual([['form.completed', form.id]])
  })

  test('an answered form is not expired later: its expiry time passing adds no event', async () => {
    await setup()
    const form = await t.api.createForm({ expires_in: '1m' })
    await answer(form.id)
    const other = await t.api.createForm({ expires_in: '2m' })
    await sweepUntil(121_000, inFeed('form.expired', other.id), 'the other form to expire')
    expect(kinds(await everything())).toEqual([
      ['form.completed', form.id],
      ['form.expired', other.id],
    ])
  })
})

// ================================================================= 9. MCP wait_for_events

describe('MCP wait_for_events answers as the REST feed', () => {
  test('the same events and `next` for the same `after` and `limit`', async () => {
    await setup()
    const forms = [
      await t.api.createForm({ context: { i: 0 } }),
      await t.api.createForm({ context: { i: 1 } }),
      await t.api.createForm(),
    ]
    await answer(forms[0]!.id)
    await cancel(forms[1]!.id)
    await remove(forms[2]!.id)
    const all = await settled(3)

    const cases: Array<Record<string, unknown>> = [
      {},
      { limit: 1 },
      { after: all[0]!.id },
      { after: all[1]!.id, limit: 1 },
      { after: all[2]!.id },
      { after: 'latest' },
    ]
    for (const args of cases) {
      const query = new URLSearchParams(Object.entries(args).map(([k, v]): [string, string] => [k, String(v)]))
      const rest = await read(`?${query}`)
      const result = await mcpTool('wait_for_events', args)
      expect(result.isError).toBeFalsy()
      expect(result.structuredContent).toEqual(rest)
      expect(JSON.parse(result.content[0]!.text)).toEqual(rest)
    }
  })

  test('a held wait_for_events (wait 50) is answered by a cancel, as the feed', async () => {
    await setup()
    const form = await t.api.createForm()
    const head = await latest()
    const pending = track(mcpTool('wait_for_events', { after: head, wait: 50 }))
    await Bun.sleep(QUIET_MS)
    expect(pending.settled).toBe(false)
    await cancel(form.id)
    const result = await pending.promise
    expect(result.isError).toBeFalsy()
    expect(kinds(result.structuredContent.events)).toEqual([['form.cancelled', form.id]])
    expect(result.structuredContent).toEqual(await read(`?after=${head}`))
  })

  test('wait above 50 is refused as a tool error; a malformed cursor too', async () => {
    await setup()
    for (const args of [{ wait: 51 }, { wait: 60 }, { after: 'abc' }, { limit: 0 }]) {
      const result = await mcpTool('wait_for_events', args)
      expect(result.isError).toBe(true)
      expect(result.structuredContent).toBeUndefined()
      expect(result.content[0]!.text).toBeString()
    }
  })

  test("wait_for_events with another account's key sees only that account's events", async () => {
    await setup()
    await cancel((await t.api.createForm()).id)
    const other = await t.createKey('other')
    const result = await mcpTool('wait_for_events', {}, other.key)
    expect(result.structuredContent.events).toEqual([])
  })
})

// ================================================================= 10. several servers (PostgreSQL)

describe('several servers on one PostgreSQL database', () => {
  test.skipIf(TEST_STORE !== 'postgres')(
    "a wait on another server's app is woken by a cancel made through the first",
    async () => {
      await setup()
      const otherServer = await t.anotherServer()
      const other = apiClient(otherServer.app, t.key)
      const form = await t.api.createForm({ context: { where: 'first server' } })
      const head = (await read('?after=latest', other)).next
      const waiter = await heldWait(head, other)
      await cancel(form.id)
      const res = await waiter.promise
      expect(res.status).toBe(200)
      expect(kinds(res.body.events)).toEqual([['form.cancelled', form.id]])
      expect(res.body.events[0].payload.context).toEqual({ where: 'first server' })
      expect(res.body.next).toBe(res.body.events[0].id)
      // Both servers serve the same feed.
      expect(await read(`?after=${head}`, other)).toEqual(await read(`?after=${head}`))
    },
  )
})
