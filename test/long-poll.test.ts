/**
 * Waiting for the answer (CONTRACT 7): GET /forms/<id>/responses?wait=N is held
 * until the answer, a cancel, an expiry or the wait's end.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { contextsPerTest, type Resolver, type TestContext, track, until } from './utils.ts'
import { QUIET_MS, sleep, webhookRequests } from './webhooks-fixtures.ts'

setDefaultTimeout(20_000)

// ---------------------------------------------------------------- context and cleanup

let t: TestContext
/** `cleanups`: receivers and sockets to stop, run before the app closes, so no attempt is left hanging. */
const { create, cleanups } = contextsPerTest()

const { advanceAndWake, answer } = webhookRequests(() => t, cleanups)

async function setup(env: Record<string, string> = {}, resolver?: Resolver): Promise<TestContext> {
  return (t = await create(env, { resolver }))
}

// ================================================================= long-poll

describe('GET /forms/<id>/responses?wait=N', () => {
  /** Starts a long-poll and checks that it is held (still open after a quiet moment). */
  async function heldWaiter(formId: string, wait: number) {
    const waiter = track(t.api.get(`/forms/${formId}/responses?wait=${wait}`))
    await sleep(QUIET_MS)
    expect(waiter.settled).toBe(false)
    return waiter
  }

  test('holds an active unanswered form until a submission arrives, then returns it', async () => {
    await setup()
    const form = await t.api.createForm({ context: { step: 9 } })
    const waiter = await heldWaiter(form.id, 30)
    const receipt = await answer(form.id, { name: 'Ada' })
    const res = await waiter.promise
    expect(res.status).toBe(200)
    expect(res.body).toHaveLength(1)
    expect(res.body[0].id).toBe(receipt.id)
    expect(res.body[0].data).toEqual({ name: 'Ada' })
    expect(res.body[0].context).toEqual({ step: 9 })
  })

  test('returns [] when the form is cancelled while waiting', async () => {
    await setup()
    const form = await t.api.createForm()
    const waiter = await heldWaiter(form.id, 30)
    expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
    const res = await waiter.promise
    expect(res.status).toBe(200)
    expect(res.body).toEqual([])
  })

  test('returns 404 when the form is deleted while waiting', async () => {
    await setup()
    const form = await t.api.createForm()
    const waiter = await heldWaiter(form.id, 30)
    expect((await t.api.delete(`/forms/${form.id}`)).status).toBe(204)
    const res = await waiter.promise
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ detail: 'Form not found' })
  })

  test('returns [] when the time is up', async () => {
    await setup()
    const form = await t.api.createForm()
    const res = await t.api.get(`/forms/${form.id}/responses?wait=1`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual([])
    expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('active')
  })

  test('answers at once when the form is already answered, cancelled or expired', async () => {
    await setup()
    const answered = await t.api.createForm()
    const receipt = await answer(answered.id)
    const cancelled = await t.api.createForm()
    expect((await t.api.patch(`/forms/${cancelled.id}`, { status: 'cancelled' })).status).toBe(200)
    const expired = await t.api.createForm({ expires_in: '1m' })
    t.clock.advance(61_000)

    const cases: Array<[string, string, unknown[] | ((body: any) => void)]> = [
      ['answered', answered.id, (body) => expect(body.map((r: { id: string }) => r.id)).toEqual([receipt.id])],
      ['cancelled', cancelled.id, []],
      ['expired', expired.id, []],
    ]
    for (const [name, id, expected] of cases) {
      const waiter = track(t.api.get(`/forms/${id}/responses?wait=60`))
      await until(() => waiter.settled, 5000, `the long-poll on the ${name} form to answer without waiting`)
      const res = await waiter.promise
      expect(res.status).toBe(200)
      if (typeof expected === 'function') expected(res.body)
      else expect(res.body).toEqual(expected)
    }
  })

  for (const wait of ['0', '61', 'abc', '1.5', '-1']) {
    test(`wait=${wait} is 422`, async () => {
      await setup()
      const form = await t.api.createForm()
      const res = await t.api.get(`/forms/${form.id}/responses?wait=${wait}`)
      expect(res.status).toBe(422)
      expect(res.body.detail).toBeString()
    })
  }

  test('a waiter returns [] when the loop expires the form', async () => {
    await setup()
    const form = await t.api.createForm({ expires_in: '1m', context: { step: 1 } })
    t.background.start()
    const waiter = await heldWaiter(form.id, 30)
    advanceAndWake(61_000)
    await until(() => waiter.settled, 5000, 'the waiter to return once the loop expires the form')
    const res = await waiter.promise
    expect(res.status).toBe(200)
    expect(res.body).toEqual([])
    const read = await t.api.get(`/forms/${form.id}`)
    expect(read.body.status).toBe('expired')
    expect(read.body.context).toBeNull()
  })
})
