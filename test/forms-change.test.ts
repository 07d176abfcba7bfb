/**
 * Update (PATCH) and Delete of forms, and expiry computed on every read, driven
 * through the HTTP interface the way an API client uses it (CONTRACT 2-5).
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import {
  apiTime,
  DAY,
  expectConflict,
  expectFormNotFound,
  expectValidationError,
  FORM_KEYS,
  formRequests,
  keysOf,
  MINUTE,
  UNKNOWN_ID,
} from './forms-fixtures.ts'
import { createTestContext, send, submit, type TestContext } from './utils.ts'

let t: TestContext

beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())
const { answer, cancel, expiredForm, otherAccount } = formRequests(() => t)

// ---------------------------------------------------------------- expiry

describe('expiry is computed on every read', () => {
  test('a form past its expires_at reads as expired, without context', async () => {
    const form = await t.api.createForm({ expires_in: '1m', context: { step: 3 } })
    expect(form.expires_at).toBe(apiTime(t.clock() + MINUTE))

    t.clock.advance(61_000)
    const res = await t.api.get(`/forms/${form.id}`)

    expect(res.status).toBe(200)
    expect(res.body.status).toBe('expired')
    expect(res.body.context).toBeNull()
    expect(res.body.expires_at).toBe(form.expires_at)
  })

  test('before its expires_at a form is still active', async () => {
    const form = await t.api.createForm({ expires_in: '1m', context: { step: 3 } })

    t.clock.advance(59_000)
    const res = await t.api.get(`/forms/${form.id}`)

    expect(res.body.status).toBe('active')
    expect(res.body.context).toEqual({ step: 3 })
  })

  test('the expired list includes it and the active list excludes it', async () => {
    const form = await t.api.createForm({ expires_in: '1m' })
    const before = await t.api.get('/forms?status=active')
    expect(before.body.map((f: { id: string }) => f.id)).toEqual([form.id])

    t.clock.advance(61_000)

    const expired = await t.api.get('/forms?status=expired')
    expect(expired.body.map((f: { id: string }) => f.id)).toEqual([form.id])
    expect(expired.body[0].status).toBe('expired')
    const active = await t.api.get('/forms?status=active')
    expect(active.body).toEqual([])
    const all = await t.api.get('/forms')
    expect(all.body[0].status).toBe('expired')
  })

  test('a submission to an expired form gets 410', async () => {
    const form = await expiredForm()

    const res = await submit(t.app, form.id, { name: 'Ada' })

    expect(res.status).toBe(410)
    expect(typeof res.body.detail).toBe('string')
    expect((await t.api.get(`/forms/${form.id}/responses`)).body).toEqual([])
  })

  test('completed and cancelled forms do not become expired when their time passes', async () => {
    const completed = await t.api.createForm({ expires_in: '1m', context: { c: 1 } })
    const cancelled = await t.api.createForm({ expires_in: '1m', context: { c: 2 } })
    await answer(completed.id)
    expect((await cancel(cancelled.id)).status).toBe(200)

    t.clock.advance(61_000)

    const a = await t.api.get(`/forms/${completed.id}`)
    expect(a.body.status).toBe('completed')
    const b = await t.api.get(`/forms/${cancelled.id}`)
    expect(b.body.status).toBe('cancelled')
    expect(b.body.context).toEqual({ c: 2 })
    expect((await t.api.get('/forms?status=expired')).body).toEqual([])
  })
})

// ---------------------------------------------------------------- PATCH

describe('PATCH /api/v1/forms/<id>: cancelling', () => {
  test('cancels an active form: 200 with the create-response shape, context kept', async () => {
    const form = await t.api.createForm({ context: { step: 'waiting' } })

    const res = await cancel(form.id)

    expect(res.status).toBe(200)
    expect(keysOf(res.body)).toEqual(FORM_KEYS)
    expect(res.body).toEqual({ ...form, status: 'cancelled' })
    expect(res.body.context).toEqual({ step: 'waiting' })
    const got = await t.api.get(`/forms/${form.id}`)
    expect(got.body.status).toBe('cancelled')
    expect(got.body.context).toEqual({ step: 'waiting' })
  })

  test('a cancelled form no longer accepts a submission', async () => {
    const form = await t.api.createForm()
    await cancel(form.id)

    const res = await submit(t.app, form.id, { name: 'Ada' })

    expect(res.status).toBe(410)
  })

  test('cancelling a cancelled form is a no-op 200', async () => {
    const form = await t.api.createForm({ context: { a: 1 } })
    const first = await cancel(form.id)

    const again = await cancel(form.id)

    expect(again.status).toBe(200)
    expect(again.body).toEqual(first.body)
    expect(again.body.status).toBe('cancelled')
  })

  test('cancelling a completed form is 409 and leaves it completed', async () => {
    const form = await t.api.createForm()
    await answer(form.id)

    expectConflict(await cancel(form.id))
    expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('completed')
  })

  test('cancelling an expired form is 409 and leaves it expired', async () => {
    const form = await expiredForm()

    expectConflict(await cancel(form.id))
    expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('expired')
  })

  for (const status of ['active', 'completed', 'expired', 'Cancelled', 'canceled', '', null, 1, true]) {
    test(`status ${JSON.stringify(status)} is 422 and changes nothing`, async () => {
      const form = await t.api.createForm()

      expectValidationError(await t.api.patch(`/forms/${form.id}`, { status }), '/status')
      expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('active')
    })
  }

  test('{"status":"active"} on a cancelled form is 422: it does not reopen', async () => {
    const form = await t.api.createForm()
    await cancel(form.id)

    expectValidationError(await t.api.patch(`/forms/${form.id}`, { status: 'active' }))
    expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('cancelled')
  })
})

describe('PATCH /api/v1/forms/<id>: expires_at', () => {
  const cases = [
    ['with Z', '2099-06-01T12:00:00Z'],
    ['with a +02:00 offset', '2099-06-01T14:00:00+02:00'],
    ['with a -05:30 offset', '2099-06-01T06:30:00-05:30'],
    ['without a zone (UTC)', '2099-06-01T12:00:00'],
    ['with milliseconds and Z', '2099-06-01T12:00:00.000Z'],
  ] as const
  for (const [name, input] of cases) {
    test(`a future expires_at ${name} is set and returned in UTC without Z`, async () => {
      const form = await t.api.createForm({ context: { k: 'v' } })

      const res = await t.api.patch(`/forms/${form.id}`, { expires_at: input })

      expect(res.status).toBe(200)
      expect(keysOf(res.body)).toEqual(FORM_KEYS)
      expect(res.body).toEqual({ ...form, expires_at: '2099-06-01T12:00:00.000' })
      expect((await t.api.get(`/forms/${form.id}`)).body.expires_at).toBe('2099-06-01T12:00:00.000')
    })
  }

  test('the new expiry takes effect: the form expires when it passes', async () => {
    const form = await t.api.createForm({ expires_in: '1h' })
    const newExpiry = t.clock() + 2 * MINUTE

    const res = await t.api.patch(`/forms/${form.id}`, { expires_at: new Date(newExpiry).toISOString() })
    expect(res.status).toBe(200)
    expect(res.body.expires_at).toBe(apiTime(newExpiry))

    t.clock.advance(MINUTE)
    expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('active')
    t.clock.advance(MINUTE + 1_000)
    expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('expired')
  })

  test('a later expiry keeps a form active past its original time', async () => {
    const form = await t.api.createForm({ expires_in: '1m' })

    const res = await t.api.patch(`/forms/${form.id}`, { expires_at: apiTime(t.clock() + DAY) })
    expect(res.status).toBe(200)

    t.clock.advance(2 * MINUTE)
    const got = await t.api.get(`/forms/${form.id}`)
    expect(got.body.status).toBe('active')
    expect((await submit(t.app, form.id, { name: 'Ada' })).status).toBe(201)
  })

  test('null removes the expiry', async () => {
    const form = await t.api.createForm({ expires_in: '1m' })

    const res = await t.api.patch(`/forms/${form.id}`, { expires_at: null })

    expect(res.status).toBe(200)
    expect(res.body.expires_at).toBeNull()
    t.clock.advance(400 * DAY)
    const got = await t.api.get(`/forms/${form.id}`)
    expect(got.body.status).toBe('active')
    expect(got.body.expires_at).toBeNull()
  })

  const bad = [
    ['in the past', '2020-01-01T00:00:00Z'],
    ['one second ago', 'RELATIVE:-1000'],
    ['right now', 'RELATIVE:0'],
    ['malformed', 'tomorrow'],
    ['garbage text', 'not-a-date-2099'],
    ['empty', ''],
    ['February 30 (past year)', '2026-02-30T00:00:00'],
    ['February 30 (future year)', '2099-02-30T00:00:00'],
    ['month 13', '2099-13-01T00:00:00Z'],
    ['a number', 4102444800000],
  ] as const
  for (const [name, value] of bad) {
    test(`expires_at ${name} is 422 and changes nothing`, async () => {
      const form = await t.api.createForm()
      const expiresAt =
        typeof value === 'string' && value.startsWith('RELATIVE:')
          ? new Date(t.clock() + Number(value.slice('RELATIVE:'.length))).toISOString()
          : value

      expectValidationError(await t.api.patch(`/forms/${form.id}`, { expires_at: expiresAt }), '/expires_at')
      expect((await t.api.get(`/forms/${form.id}`)).body.expires_at).toBe(form.expires_at)
    })
  }

  test('expires_at on a cancelled form is 409', async () => {
    const form = await t.api.createForm()
    await cancel(form.id)

    expectConflict(await t.api.patch(`/forms/${form.id}`, { expires_at: '2099-01-01T00:00:00Z' }))
    expectConflict(await t.api.patch(`/forms/${form.id}`, { expires_at: null }))
    expect((await t.api.get(`/forms/${form.id}`)).body.expires_at).toBe(form.expires_at)
  })

  test('expires_at on a completed form is 409', async () => {
    const form = await t.api.createForm()
    await answer(form.id)

    expectConflict(await t.api.patch(`/forms/${form.id}`, { expires_at: '2099-01-01T00:00:00Z' }))
    expectConflict(await t.api.patch(`/forms/${form.id}`, { expires_at: null }))
    expect((await t.api.get(`/forms/${form.id}`)).body.expires_at).toBe(form.expires_at)
  })

  test('expires_at on an expired form is 409: it cannot be revived', async () => {
    const form = await expiredForm()

    expectConflict(await t.api.patch(`/forms/${form.id}`, { expires_at: '2099-01-01T00:00:00Z' }))
    expectConflict(await t.api.patch(`/forms/${form.id}`, { expires_at: null }))
    const got = await t.api.get(`/forms/${form.id}`)
    expect(got.body.status).toBe('expired')
    expect(got.body.expires_at).toBe(form.expires_at)
  })
})

describe('PATCH /api/v1/forms/<id>: bodies', () => {
  test('{} is a 200 that changes nothing', async () => {
    const form = await t.api.createForm({ context: { a: [1, 2] }, expires_in: '2h' })
    const before = await t.api.get(`/forms/${form.id}`)

    const res = await t.api.patch(`/forms/${form.id}`, {})

    expect(res.status).toBe(200)
    expect(res.body).toEqual(form)
    expect((await t.api.get(`/forms/${form.id}`)).body).toEqual(before.body)
  })

  test('{} on completed, cancelled and expired forms is also 200 and changes nothing', async () => {
    const completed = await t.api.createForm()
    await answer(completed.id)
    const cancelled = await t.api.createForm()
    await cancel(cancelled.id)
    const expired = await expiredForm()

    for (const [form, status] of [
      [completed, 'completed'],
      [cancelled, 'cancelled'],
      [expired, 'expired'],
    ] as const) {
      const res = await t.api.patch(`/forms/${form.id}`, {})
      expect(res.status).toBe(200)
      expect(res.body.status).toBe(status)
    }
  })

  test('both fields on an active form apply together (judged against the state before the request)', async () => {
    const form = await t.api.createForm({ context: { keep: true } })

    const res = await t.api.patch(`/forms/${form.id}`, { status: 'cancelled', expires_at: '2099-03-04T05:06:07.089Z' })

    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ...form, status: 'cancelled', expires_at: '2099-03-04T05:06:07.089' })
    const got = await t.api.get(`/forms/${form.id}`)
    expect(got.body.status).toBe('cancelled')
    expect(got.body.expires_at).toBe('2099-03-04T05:06:07.089')
    expect(got.body.context).toEqual({ keep: true })
  })

  test('cancel plus expires_at null on an active form apply together', async () => {
    const form = await t.api.createForm()

    const res = await t.api.patch(`/forms/${form.id}`, { expires_at: null, status: 'cancelled' })

    expect(res.status).toBe(200)
    expect(res.body.status).toBe('cancelled')
    expect(res.body.expires_at).toBeNull()
  })

  test('both fields on a cancelled form: 409 and neither applies', async () => {
    const form = await t.api.createForm()
    await cancel(form.id)

    expectConflict(await t.api.patch(`/forms/${form.id}`, { status: 'cancelled', expires_at: '2099-01-01T00:00:00Z' }))
    const got = await t.api.get(`/forms/${form.id}`)
    expect(got.body.status).toBe('cancelled')
    expect(got.body.expires_at).toBe(form.expires_at)
  })

  test('one invalid field rejects the whole request: the other field does not apply', async () => {
    const form = await t.api.createForm()

    expectValidationError(
      await t.api.patch(`/forms/${form.id}`, { status: 'cancelled', expires_at: '2020-01-01T00:00:00Z' }),
      '/expires_at',
    )
    const got = await t.api.get(`/forms/${form.id}`)
    expect(got.body.status).toBe('active')
    expect(got.body.expires_at).toBe(form.expires_at)
  })

  for (const body of [
    { expire_at: '2099-01-01T00:00:00Z' },
    { status: 'cancelled', title: 'Renamed' },
    { context: { a: 1 } },
  ]) {
    test(`an unknown key is 422 and nothing applies: ${JSON.stringify(body)}`, async () => {
      const form = await t.api.createForm()

      const res = await t.api.patch(`/forms/${form.id}`, body)

      expectValidationError(res)
      const got = await t.api.get(`/forms/${form.id}`)
      expect(got.body.status).toBe('active')
      expect(got.body.title).toBe('Travel preferences')
      expect(got.body.context).toBeNull()
    })
  }

  for (const raw of ['not json', '{"status":"cancelled"', '[]', '"cancelled"', 'null', '42', '']) {
    test(`a body that is not a JSON object is 422: ${JSON.stringify(raw)}`, async () => {
      const form = await t.api.createForm()

      const res = await send(t.app, 'PATCH', `/api/v1/forms/${form.id}`, {
        body: raw,
        key: t.key,
        headers: { 'content-type': 'application/json' },
      })

      expectValidationError(res)
      expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('active')
    })
  }

  test('404 for an unknown or malformed id', async () => {
    expectFormNotFound(await cancel(UNKNOWN_ID))
    expectFormNotFound(await cancel('not-a-ulid'))
    expectFormNotFound(await t.api.patch(`/forms/${UNKNOWN_ID}`, {}))
  })

  test("404 for another account's form, which stays unchanged", async () => {
    const form = await t.api.createForm()
    const other = await otherAccount()

    expectFormNotFound(await other.patch(`/forms/${form.id}`, { status: 'cancelled' }))
    expectFormNotFound(await other.patch(`/forms/${form.id}`, { expires_at: null }))
    expectFormNotFound(await other.patch(`/forms/${form.id}`, {}))
    const got = await t.api.get(`/forms/${form.id}`)
    expect(got.body.status).toBe('active')
    expect(got.body.expires_at).toBe(form.expires_at)
  })
})

// ---------------------------------------------------------------- DELETE

describe('DELETE /api/v1/forms/<id>', () => {
  test('204 with an empty body; the form is gone', async () => {
    const form = await t.api.createForm()

    const res = await t.api.delete(`/forms/${form.id}`)

    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    expectFormNotFound(await t.api.get(`/forms/${form.id}`))
    expect((await t.api.get('/forms')).body).toEqual([])
    expectFormNotFound(await cancel(form.id))
  })

  test('deleting again is 404', async () => {
    const form = await t.api.createForm()
    expect((await t.api.delete(`/forms/${form.id}`)).status).toBe(204)

    expectFormNotFound(await t.api.delete(`/forms/${form.id}`))
  })

  test('404 for an unknown or malformed id', async () => {
    expectFormNotFound(await t.api.delete(`/forms/${UNKNOWN_ID}`))
    expectFormNotFound(await t.api.delete('/forms/not-a-ulid'))
  })

  test('forms in every state can be deleted', async () => {
    const completed = await t.api.createForm()
    await answer(completed.id)
    const cancelled = await t.api.createForm()
    await cancel(cancelled.id)
    const expired = await expiredForm()

    for (const form of [completed, cancelled, expired]) {
      expect((await t.api.delete(`/forms/${form.id}`)).status).toBe(204)
      expectFormNotFound(await t.api.get(`/forms/${form.id}`))
    }
    expect((await t.api.get('/forms')).body).toEqual([])
  })

  test('deletes the response too', async () => {
    const form = await t.api.createForm({ context: { a: 1 } })
    const responseId = await answer(form.id)
    expect((await t.api.get(`/forms/${form.id}/responses/${responseId}`)).status).toBe(200)

    expect((await t.api.delete(`/forms/${form.id}`)).status).toBe(204)

    expect((await t.api.get(`/forms/${form.id}/responses/${responseId}`)).status).toBe(404)
    expect((await t.api.get(`/forms/${form.id}/responses`)).status).toBe(404)
  })

  test('deletes pending webhook deliveries', async () => {
    const form = await t.api.createForm({ callback_url: 'http://127.0.0.1:1/hook' })
    await answer(form.id)
    const deliveries = async () => (await t.sql('select CAST(count(*) AS INTEGER) as n from deliveries'))[0]!.n
    expect(await deliveries()).toBe(1)

    expect((await t.api.delete(`/forms/${form.id}`)).status).toBe(204)

    expect(await deliveries()).toBe(0)
  })

  test("another account's form is 404 and still exists", async () => {
    const form = await t.api.createForm({ context: { a: 1 } })
    const responseId = await answer(form.id)

    expectFormNotFound(await (await otherAccount()).delete(`/forms/${form.id}`))

    const got = await t.api.get(`/forms/${form.id}`)
    expect(got.status).toBe(200)
    expect(got.body.status).toBe('completed')
    expect((await t.api.get(`/forms/${form.id}/responses/${responseId}`)).status).toBe(200)
  })
})
