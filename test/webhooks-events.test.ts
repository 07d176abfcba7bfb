/**
 * Lifecycle events as webhooks (CONTRACT 12): callback_events, and the
 * form.cancelled and form.expired deliveries beside the feed.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { contextsPerTest, type Resolver, send, type TestContext, until } from './utils.ts'
import { hexHmac, QUIET_MS, sleep, standardVerifier, waitForReceived, webhookRequests } from './webhooks-fixtures.ts'

setDefaultTimeout(20_000)

// ---------------------------------------------------------------- context and cleanup

let t: TestContext
/** `cleanups`: receivers and sockets to stop, run before the app closes, so no attempt is left hanging. */
const { create, cleanups } = contextsPerTest()

const { receiver, advanceAndWake, secretOf, hookedForm, answer, deliveryLog, waitForDelivery, mcpCall, feed } =
  webhookRequests(() => t, cleanups)

async function setup(env: Record<string, string> = {}, resolver?: Resolver): Promise<TestContext> {
  return (t = await create(env, { resolver }))
}

// ================================================================= lifecycle events (CONTRACT 12)

describe('callback_events', () => {
  test('Get Form returns ["form.completed"] by default, and the events given, in their order', async () => {
    await setup()
    const plain = await t.api.createForm()
    const hooked = await hookedForm('https://agent.example.org/hook')
    const chosen = await hookedForm('https://agent.example.org/hook', {
      callback_events: ['form.expired', 'form.completed', 'form.cancelled'],
    })
    expect((await t.api.get(`/forms/${plain.id}`)).body.callback_events).toEqual(['form.completed'])
    expect((await t.api.get(`/forms/${hooked.id}`)).body.callback_events).toEqual(['form.completed'])
    expect((await t.api.get(`/forms/${chosen.id}`)).body.callback_events).toEqual([
      'form.expired',
      'form.completed',
      'form.cancelled',
    ])
  })

  test.each([
    ['an empty array', [], '/callback_events', 'too_short'],
    ['an unknown event', ['form.answered'], '/callback_events/0', undefined],
    ['form.deleted, which only the feed has', ['form.deleted'], '/callback_events/0', undefined],
    ['the same event twice', ['form.expired', 'form.expired'], '/callback_events', 'not_unique'],
    ['a string', 'form.expired', '/callback_events', 'invalid_type'],
    ['null', null, '/callback_events', 'invalid_type'],
  ])('%s is 422 at its path', async (_, events, path, code) => {
    await setup()
    const res = await t.api.post('/forms', {
      title: 'T',
      fields: [{ key: 'a', type: 'text', label: 'A' }],
      callback_url: 'https://agent.example.org/hook',
      callback_events: events,
    })
    expect(res.status).toBe(422)
    const problem = (res.body.errors as Array<{ path: string; code: string }>).find((p) => p.path === path)
    expect(problem).toBeDefined()
    if (code) expect(problem!.code).toBe(code)
  })

  test('given without callback_url (absent or null) it is 422 at /callback_url, code required', async () => {
    await setup()
    for (const callbackUrl of [undefined, null]) {
      const res = await t.api.post('/forms', {
        title: 'T',
        fields: [{ key: 'a', type: 'text', label: 'A' }],
        callback_url: callbackUrl,
        callback_events: ['form.expired'],
      })
      expect(res.status).toBe(422)
      expect(res.body.errors).toContainEqual({
        path: '/callback_url',
        message: expect.stringContaining('callback_events'),
        code: 'required',
      })
    }
    expect((await t.api.get('/forms')).body).toEqual([])
  })

  test('the OpenAPI document and the MCP create_form tool describe it', async () => {
    await setup()
    const doc = (await send(t.app, 'GET', '/api/v1/openapi.json')).body
    const text = JSON.stringify(doc)
    expect(text).toContain('callback_events')
    expect(text).toContain('/api/v1/events')
    const tools = await mcpCall('tools/list', {})
    const create = tools.result.tools.find((tool: { name: string }) => tool.name === 'create_form')
    expect(
      create.inputSchema.properties.callback_events.items.anyOf.map((s: { const: string }) => s.const).sort(),
    ).toEqual(['form.cancelled', 'form.completed', 'form.expired'])
    expect(tools.result.tools.map((tool: { name: string }) => tool.name)).toContain('wait_for_events')
  })
})

describe('form.cancelled and form.expired deliveries', () => {
  test('a cancel of a subscribed form is delivered once, signed, with X-Service-Event form.cancelled and the body of CONTRACT 12', async () => {
    await setup()
    const rx = receiver()
    const context = { agent: 'planner', note: 'Zoë' }
    const form = await hookedForm(rx.url, {
      callback_events: ['form.cancelled'],
      callback_metadata: { run: 'r-7' },
      context,
    })
    t.background.start()
    const cancelledAt = t.clock()
    expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
    // A repeated cancel changes nothing and tells no one.
    expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
    await waitForReceived(rx, 1)
    const delivery = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')
    expect(delivery.event).toBe('form.cancelled')
    const hook = rx.received[0]!
    expect(hook.headers['x-service-event']).toBe('form.cancelled')
    expect(hook.headers['x-service-delivery']).toBe(delivery.id)
    const secret = secretOf(form.id)
    expect(hook.headers['x-service-signature']).toBe(`sha256=${hexHmac(secret, hook.body)}`)
    expect(standardVerifier(secret).verify(hook.text, hook.headers)).toEqual(JSON.parse(hook.text))
    expect(JSON.parse(hook.text)).toEqual({
      event: 'form.cancelled',
      form_id: form.id,
      status: 'cancelled',
      occurred_at: new Date(cancelledAt).toISOString(),
      callback_metadata: { run: 'r-7' },
      context,
    })
    // The feed's event carries the same body as its payload.
    const events = await feed()
    expect(events.map((e) => e.type)).toEqual(['form.cancelled'])
    expect(events[0]!.payload).toEqual(JSON.parse(hook.text))
    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(1)
    expect(await deliveryLog(form.id)).toHaveLength(1)
  })

  test("expiry of a subscribed form is delivered within the loop's second, with expires_at and the context the form had", async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url, {
      callback_events: ['form.completed', 'form.expired'],
      expires_in: '1m',
      context: { step: 4 },
    })
    const expiresAt = Date.parse(`${form.expires_at}Z`)
    t.background.start()
    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(0)
    advanceAndWake(61_000)
    await waitForReceived(rx, 1)
    const hook = rx.received[0]!
    expect(hook.headers['x-service-event']).toBe('form.expired')
    expect(JSON.parse(hook.text)).toEqual({
      event: 'form.expired',
      form_id: form.id,
      status: 'expired',
      occurred_at: new Date(expiresAt).toISOString(),
      callback_metadata: {},
      context: { step: 4 },
    })
    // The form itself has lost its context: the event and its delivery alone keep it.
    expect((await t.api.get(`/forms/${form.id}`)).body).toMatchObject({ status: 'expired', context: null })
    const delivery = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')
    expect(delivery.event).toBe('form.expired')
    // Redeliver sends the same body again.
    expect((await t.api.post(`/forms/${form.id}/deliveries/${delivery.id}/redeliver`)).status).toBe(202)
    await waitForReceived(rx, 2)
    expect(rx.received[1]!.body.equals(hook.body)).toBe(true)
    expect(rx.received[1]!.headers['x-service-event']).toBe('form.expired')
  })

  test('endings a form is not subscribed to are in the feed but never delivered', async () => {
    await setup()
    const rx = receiver()
    const onlyCompleted = await hookedForm(rx.url, { expires_in: '1m' })
    const cancelledDefault = await hookedForm(rx.url)
    const onlyExpired = await hookedForm(rx.url, { callback_events: ['form.expired'], expires_in: '2m' })
    t.background.start()
    await t.api.patch(`/forms/${cancelledDefault.id}`, { status: 'cancelled' })
    await answer(onlyExpired.id)
    advanceAndWake(61_000)
    await until(async () => (await feed()).length === 3, 5000, 'three events in the feed', feed)
    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(0)
    for (const form of [onlyCompleted, cancelledDefault, onlyExpired]) expect(await deliveryLog(form.id)).toEqual([])
    expect((await feed()).map((e) => [e.type, e.form_id])).toEqual([
      ['form.cancelled', cancelledDefault.id],
      ['form.completed', onlyExpired.id],
      ['form.expired', onlyCompleted.id],
    ])
  })

  test('a cancel racing expiry: once expires_at has passed a cancel is 409, and the form ends once, expired', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url, { callback_events: ['form.expired', 'form.cancelled'], expires_in: '1m' })
    t.clock.advance(60_000)
    const attempts = await Promise.all([1, 2, 3].map(() => t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })))
    expect(attempts.map((res) => res.status)).toEqual([409, 409, 409])
    t.background.start()
    await waitForReceived(rx, 1)
    await sleep(QUIET_MS)
    expect(rx.received.map((hook) => hook.headers['x-service-event'])).toEqual(['form.expired'])
    expect((await feed()).map((e) => e.type)).toEqual(['form.expired'])
  })

  test('concurrent cancels of one form record one form.cancelled and queue one delivery', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url, { callback_events: ['form.cancelled'] })
    const results = await Promise.all(
      Array.from({ length: 8 }, () => t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })),
    )
    expect(results.every((res) => res.status === 200 && res.body.status === 'cancelled')).toBe(true)
    expect((await feed()).map((e) => e.type)).toEqual(['form.cancelled'])
    expect(await deliveryLog(form.id)).toHaveLength(1)
  })

  test('several instances sweeping together expire each form once: one event and one delivery per form', async () => {
    await setup()
    const rx = receiver()
    const forms = await Promise.all(
      Array.from({ length: 40 }, () => hookedForm(rx.url, { callback_events: ['form.expired'], expires_in: '1m' })),
    )
    const others = [await t.anotherServer(), await t.anotherServer()]
    t.clock.advance(61_000)
    t.background.start()
    for (const other of others) other.background.start()
    await until(
      async () => (await feed()).length >= forms.length,
      10_000,
      'every form expired',
      async () => (await feed()).length,
    )
    await waitForReceived(rx, forms.length)
    await sleep(QUIET_MS)
    const events = await feed()
    expect(events.map((e) => e.form_id).sort()).toEqual(forms.map((f) => f.id).sort())
    expect(events.every((e) => e.type === 'form.expired')).toBe(true)
    expect(rx.received.map((hook) => JSON.parse(hook.text).form_id).sort()).toEqual(forms.map((f) => f.id).sort())
    for (const form of forms) expect(await deliveryLog(form.id)).toHaveLength(1)
  })

  test('a sweep that fails after writing expired, before its event, writes nothing: the next one expires the form with its event, once', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url, {
      callback_events: ['form.expired'],
      expires_in: '1m',
      context: { keep: true },
    })
    // The event's insert fails, as a crash between the two writes would cut the transaction short.
    if (t.sqlite) {
      await t.sql(
        `CREATE TRIGGER fail_events BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'injected failure'); END`,
      )
    } else {
      await t.sql(
        `CREATE FUNCTION fail_events() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$`,
      )
      await t.sql('CREATE TRIGGER fail_events BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION fail_events()')
    }
    t.clock.advance(61_000)
    t.background.start()
    await until(
      () => t.logs.some((line) => line.msg === 'form sweep failed'),
      5000,
      'the sweep to fail',
      () => t.logs,
    )
    const stored = async () => (await t.sql('SELECT status, context FROM forms WHERE id = ?', form.id))[0]
    expect(await stored()).toEqual({ status: 'active', context: '{"keep":true}' })
    expect(await feed()).toEqual([])
    expect(await deliveryLog(form.id)).toEqual([])

    await t.sql(`DROP TRIGGER fail_events${t.sqlite ? '' : ' ON events'}`)
    advanceAndWake(1000)
    await waitForReceived(rx, 1)
    expect(JSON.parse(rx.received[0]!.text)).toMatchObject({
      event: 'form.expired',
      form_id: form.id,
      context: { keep: true },
    })
    expect(await stored()).toEqual({ status: 'expired', context: null })
    await sleep(QUIET_MS)
    expect((await feed()).map((e) => e.type)).toEqual(['form.expired'])
    expect(rx.received).toHaveLength(1)
  })

  test('a form.expired delivery, which holds the context, goes after 7 days; a form.completed one stays with its form', async () => {
    await setup()
    const rx = receiver()
    const expiring = await hookedForm(rx.url, {
      callback_events: ['form.expired'],
      expires_in: '1m',
      context: { secret: 'x' },
    })
    const answered = await hookedForm(rx.url, { context: { secret: 'y' } })
    t.background.start()
    await answer(answered.id)
    advanceAndWake(61_000)
    await waitForReceived(rx, 2)
    await waitForDelivery(expiring.id, (d) => d.status === 'delivered', 'delivered')
    await waitForDelivery(answered.id, (d) => d.status === 'delivered', 'delivered')

    advanceAndWake(7 * 86_400_000 + 60_000)
    await until(
      async () => (await deliveryLog(expiring.id)).length === 0,
      5000,
      'the expiry delivery to go',
      () => deliveryLog(expiring.id),
    )
    expect(await t.sql('SELECT count(*) AS n FROM deliveries WHERE payload LIKE ?', '%"secret":"x"%')).toEqual([
      { n: t.sqlite ? 0 : '0' },
    ])
    expect(await deliveryLog(answered.id)).toHaveLength(1)
    // The feed keeps events 7 days too: both are gone.
    expect(await feed()).toEqual([])
  })
})
