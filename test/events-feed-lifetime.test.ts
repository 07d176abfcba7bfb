/**
 * The account's event feed (CONTRACT 12): deletion leaves only form.deleted,
 * events go after 7 days, each account sees only its own, a form ends once, MCP
 * `wait_for_events` answers as the REST feed, and several servers share one feed
 * on PostgreSQL.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { apiTime, DAY_MS, feedRequests, kinds, LOOP_MS, QUIET_MS } from './events-feed-fixtures.ts'
import { apiClient, contextsPerTest, submit, TEST_STORE, type TestContext, track, until } from './utils.ts'

setDefaultTimeout(20_000)

let t: TestContext
const { create } = contextsPerTest()
const setup = async () => (t = await create())
const { read, everything, settled, heldWait, latest, answer, cancel, remove, sweepUntil, inFeed, mcpTool } =
  feedRequests(() => t)

// ================================================================= deletion

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

// ================================================================= retention

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

// ================================================================= accounts

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

// ================================================================= a form ends once

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

// ================================================================= MCP wait_for_events

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

// ================================================================= several servers (PostgreSQL)

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
