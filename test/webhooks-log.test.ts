/**
 * Webhooks, durably (CONTRACT 5, 8): the outbox, expiry written by the background
 * loop, the delivery log and redeliver.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import {
  API_TIME_PATTERN,
  apiClient,
  contextsPerTest,
  type Resolver,
  send,
  type TestContext,
  UNKNOWN_ID,
  until,
} from './utils.ts'
import {
  apiTime,
  DELIVERY_KEYS,
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

const { receiver, advanceAndWake, hookedForm, answer, deliveryLog, waitForDelivery, waitForAttempts } = webhookRequests(
  () => t,
  cleanups,
)

async function setup(env: Record<string, string> = {}, resolver?: Resolver): Promise<TestContext> {
  return (t = await create(env, { resolver }))
}

// ================================================================= durable rows and waking

describe('the outbox', () => {
  test('the delivery row is listed as pending right after the submission, before the loop runs, and is delivered once it starts', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url)
    await answer(form.id)
    const log = await deliveryLog(form.id)
    expect(log).toHaveLength(1)
    const pending = log[0]!
    expect(pending.status).toBe('pending')
    expect(pending.attempts).toBe(0)
    expect(pending.last_status_code).toBeNull()
    expect(pending.last_error).toBeNull()
    expect(pending.delivered_at).toBeNull()
    expect(pending.created_at).toBe(apiTime(t.clock()))
    expect(pending.next_attempt_at).toMatch(API_TIME_PATTERN)
    expect(pending.next_attempt_at! <= apiTime(t.clock())).toBe(true)

    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(0)

    t.background.start()
    await waitForReceived(rx, 1)
    const delivered = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')
    expect(delivered.id).toBe(pending.id)
    expect(rx.received[0]!.headers['x-service-delivery']).toBe(pending.id)
  })

  test('a running loop is woken by the submission itself: no clock advance, no wake call', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url)
    t.background.start()
    await sleep(50)
    await answer(form.id)
    await waitForReceived(rx, 1)
    await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')
  })

  test('deleting the answered form drops its pending delivery', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url)
    await answer(form.id)
    expect(await deliveryLog(form.id)).toHaveLength(1)
    expect((await t.api.delete(`/forms/${form.id}`)).status).toBe(204)
    t.background.start()
    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(0)
    expect((await t.api.get(`/forms/${form.id}/deliveries`)).status).toBe(404)
  })
})

// ================================================================= expiry by the loop

describe('expiry written by the background loop', () => {
  const storedForm = async (id: string) =>
    (
      (await t.sql('select status, context from forms where id = ?', id)) as Array<{
        status: string
        context: string | null
      }>
    )[0] ?? null

  test('a form past expires_at gets the stored status expired and loses its context; one not yet due stays active', async () => {
    await setup()
    const due = await t.api.createForm({ expires_in: '1m', context: { step: 1 } })
    const later = await t.api.createForm({ expires_in: '2m', context: { step: 2 } })
    t.background.start()
    await sleep(QUIET_MS)
    expect(await storedForm(due.id)).toEqual({ status: 'active', context: '{"step":1}' })

    advanceAndWake(61_000)
    await until(
      async () => (await storedForm(due.id))?.status === 'expired',
      5000,
      'the loop to write expired',
      () => storedForm(due.id),
    )
    expect(await storedForm(due.id)).toEqual({ status: 'expired', context: null })
    expect(await storedForm(later.id)).toEqual({ status: 'active', context: '{"step":2}' })

    const read = await t.api.get(`/forms/${due.id}`)
    expect(read.body.status).toBe('expired')
    expect(read.body.context).toBeNull()
    expect((await t.api.get(`/forms/${later.id}`)).body.status).toBe('active')
  })
})

// ================================================================= delivery log and redeliver

describe('GET /forms/<id>/deliveries and redeliver', () => {
  test('empty before an answer; then one entry of the documented shape, times without Z', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url)
    const before = await t.api.get(`/forms/${form.id}/deliveries`)
    expect(before.status).toBe(200)
    expect(before.headers.get('content-type')).toContain('application/json')
    expect(before.body).toEqual([])

    await answer(form.id)
    const [pending] = await deliveryLog(form.id)
    expect(Object.keys(pending!).sort()).toEqual(DELIVERY_KEYS)
    expect(pending!.id).toBeString()
    expect(pending!.id.length).toBeGreaterThan(0)
    expect(pending!.event).toBe('form.completed')
    expect(pending!.status).toBe('pending')
    expect(pending!.created_at).toMatch(API_TIME_PATTERN)

    t.background.start()
    const delivered = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')
    expect(Object.keys(delivered).sort()).toEqual(DELIVERY_KEYS)
    expect(delivered).toEqual({
      id: pending!.id,
      event: 'form.completed',
      status: 'delivered',
      attempts: 1,
      last_status_code: 200,
      last_error: null,
      next_attempt_at: null,
      delivered_at: apiTime(t.clock()),
      created_at: pending!.created_at,
    })
    expect(delivered.delivered_at).toMatch(API_TIME_PATTERN)
  })

  test('a form without callback_url has no deliveries after its answer', async () => {
    await setup()
    const form = await t.api.createForm()
    await answer(form.id)
    const res = await t.api.get(`/forms/${form.id}/deliveries`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual([])
  })

  test('redeliver of a failed delivery: 202, a fresh round with the full attempt budget, attempts keeps counting', async () => {
    await setup({ SERVICE_WEBHOOK_MAX_RETRIES: '1' })
    const rx = receiver(replyWith(500))
    const form = await hookedForm(rx.url)
    t.background.start()
    await answer(form.id)
    await waitForAttempts(form.id, 1)
    advanceAndWake(retryDelay(1))
    const failed = await waitForDelivery(form.id, (d) => d.status === 'failed', 'failed after 2 attempts')
    expect(failed.attempts).toBe(2)
    expect(rx.received).toHaveLength(2)

    const res = await t.api.post(`/forms/${form.id}/deliveries/${failed.id}/redeliver`)
    expect(res.status).toBe(202)
    expect(res.body.id).toBe(failed.id)
    expect(res.body.status).toBe('pending')
    expect(res.body.attempts).toBe(2)

    await waitForReceived(rx, 3)
    const third = await waitForAttempts(form.id, 3)
    expect(third.status).toBe('pending')
    advanceAndWake(retryDelay(1))
    await waitForReceived(rx, 4)
    const again = await waitForDelivery(
      form.id,
      (d) => d.status === 'failed' && d.attempts === 4,
      'failed again after 4 attempts in total',
    )
    expect(again.id).toBe(failed.id)

    advanceAndWake(3_600_000)
    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(4)
    for (const hook of rx.received) {
      expect(hook.body.equals(rx.received[0]!.body)).toBe(true)
      expect(hook.headers['x-service-delivery']).toBe(failed.id)
    }
  })

  test('redeliver of a delivered delivery sends it again with the same id and body', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url)
    t.background.start()
    await answer(form.id)
    const delivered = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')
    expect(rx.received).toHaveLength(1)

    const res = await t.api.post(`/forms/${form.id}/deliveries/${delivered.id}/redeliver`)
    expect(res.status).toBe(202)
    await waitForReceived(rx, 2)
    const again = await waitForDelivery(form.id, (d) => d.status === 'delivered' && d.attempts === 2, 'delivered again')
    expect(again.id).toBe(delivered.id)
    expect(rx.received[1]!.body.equals(rx.received[0]!.body)).toBe(true)
    expect(rx.received[1]!.headers['x-service-delivery']).toBe(delivered.id)
    expect(rx.received[1]!.headers['webhook-id']).toBe(delivered.id)
    expect(rx.received[1]!.headers['x-service-signature']).toBe(rx.received[0]!.headers['x-service-signature'])
  })

  test('redeliver of a pending delivery is 409 and changes nothing', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url)
    await answer(form.id)
    const [pending] = await deliveryLog(form.id)
    const res = await t.api.post(`/forms/${form.id}/deliveries/${pending!.id}/redeliver`)
    expect(res.status).toBe(409)
    expect(res.body.detail).toBeString()
    expect(await deliveryLog(form.id)).toEqual([pending!])
  })

  test('an unknown delivery id, or one of another form, is 404', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url)
    const sibling = await hookedForm(rx.url)
    t.background.start()
    await answer(form.id)
    const delivered = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')

    for (const id of [UNKNOWN_ID, 'not-a-delivery']) {
      const res = await t.api.post(`/forms/${form.id}/deliveries/${id}/redeliver`)
      expect(res.status).toBe(404)
      expect(res.body.detail).toBeString()
    }
    const crossed = await t.api.post(`/forms/${sibling.id}/deliveries/${delivered.id}/redeliver`)
    expect(crossed.status).toBe(404)
    expect((await t.api.post(`/forms/${UNKNOWN_ID}/deliveries/${delivered.id}/redeliver`)).status).toBe(404)
    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(1)
    expect((await deliveryLog(form.id))[0]!.attempts).toBe(1)
  })

  test("another account's form is 404 on both routes; without a key it is 403", async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url)
    t.background.start()
    await answer(form.id)
    const delivered = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')

    const other = apiClient(t.app, (await t.createKey('other-account')).key)
    const list = await other.get(`/forms/${form.id}/deliveries`)
    expect(list.status).toBe(404)
    expect(list.body).toEqual({ detail: 'Form not found' })
    const redeliver = await other.post(`/forms/${form.id}/deliveries/${delivered.id}/redeliver`)
    expect(redeliver.status).toBe(404)
    expect(redeliver.body).toEqual({ detail: 'Form not found' })

    const anonymousList = await send(t.app, 'GET', `/api/v1/forms/${form.id}/deliveries`)
    expect(anonymousList.status).toBe(403)
    expect(anonymousList.body).toEqual({ detail: 'Not authenticated' })
    const anonymousRedeliver = await send(
      t.app,
      'POST',
      `/api/v1/forms/${form.id}/deliveries/${delivered.id}/redeliver`,
    )
    expect(anonymousRedeliver.status).toBe(403)
    expect(anonymousRedeliver.body).toEqual({ detail: 'Not authenticated' })

    await sleep(QUIET_MS)
    expect(rx.received).toHaveLength(1)
    expect((await deliveryLog(form.id))[0]).toEqual(delivered)
  })
})
