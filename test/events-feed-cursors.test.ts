/**
 * The account's event feed (CONTRACT 12): events come back in commit order;
 * cursors are opaque and never skip nor repeat an event; `wait` holds a read until
 * the next event.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { apiTime, expect422At, type FeedEvent, feedRequests, kinds, LOOP_MS, QUIET_MS } from './events-feed-fixtures.ts'
import { apiClient, contextsPerTest, type TestContext, track, until } from './utils.ts'

setDefaultTimeout(20_000)

let t: TestContext
const { create } = contextsPerTest()
const setup = async () => (t = await create())
const { read, settled, heldWait, latest, answer, cancel, remove } = feedRequests(() => t)

// ================================================================= ordering and cursors

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

// ================================================================= waits

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
