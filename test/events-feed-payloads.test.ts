/**
 * The account's event feed (CONTRACT 12): GET /api/v1/events tells of every ending
 * of every form of the account, whatever the form's callback_events, and each
 * event carries the payload its webhook body carries.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { apiTime, feedRequests, kinds, receiver, UA, zulu } from './events-feed-fixtures.ts'
import { API_TIME_PATTERN, contextsPerTest, type TestContext } from './utils.ts'

setDefaultTimeout(20_000)

let t: TestContext
const { create, cleanups } = contextsPerTest()
const setup = async () => (t = await create())
const { everything, settled, answer, cancel, remove, sweepUntil, inFeed } = feedRequests(() => t)

// ================================================================= every ending of every form

describe('every ending of every form is in the feed, whatever its callback_events', () => {
  const subscriptions: Array<[string, () => Record<string, unknown>]> = [
    ['no callback at all', () => ({})],
    [
      'a callback_url subscribed to form.completed only',
      () => ({ callback_url: receiver(cleanups), callback_events: ['form.completed'] }),
    ],
    ['a callback_url with the default callback_events', () => ({ callback_url: receiver(cleanups) })],
    [
      'a callback_url subscribed to form.expired only',
      () => ({ callback_url: receiver(cleanups), callback_events: ['form.expired'] }),
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

// ================================================================= exact payloads

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
