/**
 * Idempotent creates: an Idempotency-Key on POST /api/v1/forms makes a retry
 * (the same key and body from the same account within 24 hours) return the
 * first result (same form, same status code) instead of a second form; the
 * same key with another body is a 422; concurrent duplicates create one form.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { apiClient, createTestContext, type TestContext, type TestResponse, validForm } from './utils.ts'

let t: TestContext

beforeEach(async () => {
  t = await createTestContext()
})

afterEach(async () => {
  await t.close()
})

const DAY_MS = 24 * 3600 * 1000

/** POST /api/v1/forms with an Idempotency-Key (as the key's account, `api` by default the "default" one). */
const createWithKey = (idempotencyKey: string, body: unknown = validForm(), api = t.api) =>
  api.post('/forms', body, { 'idempotency-key': idempotencyKey })

/** Every form id of the account, newest first. */
async function formIds(api = t.api): Promise<string[]> {
  const res = await api.get('/forms?limit=100')
  expect(res.status).toBe(200)
  return (res.body as Array<{ id: string }>).map((form) => form.id)
}

function expectCreated(res: TestResponse, replayed: boolean) {
  expect({ status: res.status, text: res.status === 201 ? '' : res.text }).toEqual({ status: 201, text: '' })
  expect(res.headers.get('idempotent-replayed')).toBe(replayed ? 'true' : null)
}

function expect422(res: TestResponse) {
  expect(res.status).toBe(422)
  expect(typeof res.body.detail).toBe('string')
}

describe('the same key and body', () => {
  test('are 201 both times with the same form; the second is marked Idempotent-Replayed: true; one form exists', async () => {
    const first = await createWithKey('retry-1')
    expectCreated(first, false)
    const second = await createWithKey('retry-1')
    expectCreated(second, true)
    expect(second.body.id).toBe(first.body.id)
    expect(second.body).toEqual(first.body)
    expect(await formIds()).toEqual([first.body.id])
  })

  test('a third and fourth retry still return the first form', async () => {
    const first = await createWithKey('retry-many')
    expectCreated(first, false)
    for (let i = 0; i < 3; i++) {
      const again = await createWithKey('retry-many')
      expectCreated(again, true)
      expect(again.body.id).toBe(first.body.id)
    }
    expect(await formIds()).toEqual([first.body.id])
  })

  test('whitespace and formatting of the JSON body do not make it another body', async () => {
    const body = validForm({ description: 'Where to?', context: { ticket: 42, tags: ['a', 'b'] } })
    const first = await createWithKey('formatted', JSON.stringify(body))
    expectCreated(first, false)
    const pretty = await createWithKey('formatted', JSON.stringify(body, null, 2))
    expectCreated(pretty, true)
    expect(pretty.body.id).toBe(first.body.id)
    const padded = await createWithKey(
      'formatted',
      `\n\t  ${JSON.stringify(body, null, '\t').replaceAll(':', ' :  ')}  \r\n`,
    )
    expectCreated(padded, true)
    expect(padded.body.id).toBe(first.body.id)
    expect(await formIds()).toEqual([first.body.id])
  })

  test('the same keys in another order, at any depth, are the same body', async () => {
    const a = { key: 'a', type: 'text', label: 'A' }
    const b = { key: 'b', type: 'text', label: 'B' }
    const first = await createWithKey(
      'reordered',
      JSON.stringify({ title: 'T', fields: [a, b], context: { x: 1, y: { p: 1, q: 2 } } }),
    )
    expectCreated(first, false)
    const reordered = await createWithKey(
      'reordered',
      JSON.stringify({
        context: { y: { q: 2, p: 1 }, x: 1 },
        fields: [
          { label: 'A', type: 'text', key: 'a' },
          { type: 'text', label: 'B', key: 'b' },
        ],
        title: 'T',
      }),
    )
    expectCreated(reordered, true)
    expect(reordered.body.id).toBe(first.body.id)
    // The order of a list's items is part of the body: the fields in another order make another form.
    const swapped = await createWithKey(
      'reordered',
      JSON.stringify({ title: 'T', fields: [b, a], context: { x: 1, y: { p: 1, q: 2 } } }),
    )
    expect(swapped.status).toBe(422)
    expect(await formIds()).toEqual([first.body.id])
  })

  test('without an Idempotency-Key, the same body twice creates two forms', async () => {
    const first = await t.api.post('/forms', validForm())
    const second = await t.api.post('/forms', validForm())
    expectCreated(first, false)
    expectCreated(second, false)
    expect(second.body.id).not.toBe(first.body.id)
    expect(await formIds()).toHaveLength(2)
  })

  test('different keys with the same body create different forms', async () => {
    const first = await createWithKey('key-a')
    const second = await createWithKey('key-b')
    expectCreated(first, false)
    expectCreated(second, false)
    expect(second.body.id).not.toBe(first.body.id)
    expect(await formIds()).toHaveLength(2)
  })
})

describe('the same key with a different body', () => {
  test('is 422 and creates no form; the key still replays the first body', async () => {
    const first = await createWithKey('reused', validForm({ title: 'First' }))
    expectCreated(first, false)
    const other = await createWithKey('reused', validForm({ title: 'Second' }))
    expect422(other)
    expect(other.headers.get('idempotent-replayed')).toBeNull()
    expect(other.body.detail).toContain('Idempotency-Key')
    expect(await formIds()).toEqual([first.body.id])

    const retry = await createWithKey('reused', validForm({ title: 'First' }))
    expectCreated(retry, true)
    expect(retry.body.id).toBe(first.body.id)
    expect(retry.body.title).toBe('First')
  })

  test('a change deep inside the body (a field label, the context) is a different body', async () => {
    const first = await createWithKey('deep', validForm({ context: { step: 1 } }))
    expectCreated(first, false)
    expect422(await createWithKey('deep', validForm({ context: { step: 2 } })))
    expect422(
      await createWithKey(
        'deep',
        validForm({
          context: { step: 1 },
          fields: [{ key: 'name', type: 'text', label: 'Your full name', required: true }],
        }),
      ),
    )
    expect(await formIds()).toEqual([first.body.id])
  })

  test('a request refused as invalid does not take the key: a corrected body with it creates the form', async () => {
    const bad = await createWithKey('fix-and-retry', validForm({ title: '' }))
    expect422(bad)
    expect(await formIds()).toEqual([])
    const good = await createWithKey('fix-and-retry', validForm())
    expectCreated(good, false)
    expect(await formIds()).toEqual([good.body.id])
  })
})

describe('scope and lifetime of a key', () => {
  test('keys are per account: the same key and body from another account create a separate form', async () => {
    const other = apiClient(t.app, (await t.createKey('other')).key)
    const mine = await createWithKey('shared-key')
    const theirs = await createWithKey('shared-key', validForm(), other)
    expectCreated(mine, false)
    expectCreated(theirs, false)
    expect(theirs.body.id).not.toBe(mine.body.id)
    expect(await formIds()).toEqual([mine.body.id])
    expect(await formIds(other)).toEqual([theirs.body.id])

    // And another account using the key with another body is no conflict either.
    const third = apiClient(t.app, (await t.createKey('third')).key)
    const differentBody = await createWithKey('shared-key', validForm({ title: 'Something else' }), third)
    expectCreated(differentBody, false)
    expect(await formIds(third)).toEqual([differentBody.body.id])
  })

  test("two keys of the same account share the account's Idempotency-Keys", async () => {
    const sameAccount = apiClient(t.app, (await t.createKey('default')).key)
    const first = await createWithKey('account-wide')
    const second = await createWithKey('account-wide', validForm(), sameAccount)
    expectCreated(first, false)
    expectCreated(second, true)
    expect(second.body.id).toBe(first.body.id)
    expect(await formIds()).toEqual([first.body.id])
  })

  test('just under 24 hours later the key still replays the first form', async () => {
    const first = await createWithKey('day-old', validForm({ expires_in: '7d' }))
    expectCreated(first, false)
    t.clock.advance(DAY_MS - 1000)
    const retry = await createWithKey('day-old', validForm({ expires_in: '7d' }))
    expectCreated(retry, true)
    expect(retry.body.id).toBe(first.body.id)
    expect(await formIds()).toEqual([first.body.id])
  })

  test('after 24 hours the same key and body create a new form (and the key then replays that one)', async () => {
    const first = await createWithKey('next-day')
    expectCreated(first, false)
    t.clock.advance(DAY_MS + 1)
    const later = await createWithKey('next-day')
    expectCreated(later, false)
    expect(later.body.id).not.toBe(first.body.id)
    expect((await formIds()).sort()).toEqual([first.body.id, later.body.id].sort())

    const retry = await createWithKey('next-day')
    expectCreated(retry, true)
    expect(retry.body.id).toBe(later.body.id)
    expect(await formIds()).toHaveLength(2)
  })

  test('after 24 hours the key may be used with a different body', async () => {
    const first = await createWithKey('reuse-later', validForm({ title: 'Monday' }))
    expectCreated(first, false)
    t.clock.advance(DAY_MS + 1)
    const later = await createWithKey('reuse-later', validForm({ title: 'Tuesday' }))
    expectCreated(later, false)
    expect(later.body.title).toBe('Tuesday')
    expect(later.body.id).not.toBe(first.body.id)
  })

  test('deleting the form frees the key: a retry after DELETE creates a new form', async () => {
    const first = await createWithKey('deleted')
    expectCreated(first, false)
    expect((await t.api.delete(`/forms/${first.body.id}`)).status).toBe(204)
    const retry = await createWithKey('deleted')
    expectCreated(retry, false)
    expect(retry.body.id).not.toBe(first.body.id)
    expect(await formIds()).toEqual([retry.body.id])
    // Once that form is deleted too, the key is free even for a different body.
    expect((await t.api.delete(`/forms/${retry.body.id}`)).status).toBe(204)
    const another = await createWithKey('deleted', validForm({ title: 'Another' }))
    expectCreated(another, false)
    expect(await formIds()).toEqual([another.body.id])
  })
})

describe('concurrent duplicates', () => {
  test('20 POSTs with the same key and body at once: all 201, one and the same form id, exactly one form', async () => {
    const body = validForm({ title: 'Race', context: { attempt: 'same' } })
    const results = await Promise.all(Array.from({ length: 20 }, () => createWithKey('race-key', body)))
    for (const res of results)
      expect({ status: res.status, text: res.status === 201 ? '' : res.text }).toEqual({ status: 201, text: '' })
    const ids = new Set(results.map((res) => res.body.id))
    expect(ids.size).toBe(1)
    const replayed = results.filter((res) => res.headers.get('idempotent-replayed') === 'true')
    expect(replayed).toHaveLength(19)
    expect(await formIds()).toEqual([...ids])
  })

  test('20 POSTs at once with the same key and two different bodies: one form; the other body is 422', async () => {
    const a = validForm({ title: 'A' })
    const b = validForm({ title: 'B' })
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => createWithKey('race-two', i % 2 === 0 ? a : b)),
    )
    const created = results.filter((res) => res.status === 201)
    const refused = results.filter((res) => res.status === 422)
    expect(created.length + refused.length).toBe(20)
    expect(created).toHaveLength(10)
    expect(refused).toHaveLength(10)
    const ids = new Set(created.map((res) => res.body.id))
    expect(ids.size).toBe(1)
    const titles = new Set(created.map((res) => res.body.title))
    expect(titles.size).toBe(1)
    expect(await formIds()).toEqual([...ids])
  })
})

describe('malformed keys', () => {
  test('a key longer than 255 characters is 422 and creates no form', async () => {
    const res = await createWithKey('k'.repeat(256))
    expect422(res)
    expect(res.body.detail).toContain('Idempotency-Key')
    expect(await formIds()).toEqual([])
  })

  test('a key of exactly 255 characters is accepted and replays', async () => {
    const key = 'k'.repeat(255)
    const first = await createWithKey(key)
    expectCreated(first, false)
    const retry = await createWithKey(key)
    expectCreated(retry, true)
    expect(retry.body.id).toBe(first.body.id)
  })

  test('a key with a space is 422 and creates no form', async () => {
    const res = await createWithKey('has space')
    expect422(res)
    expect(res.body.detail).toContain('Idempotency-Key')
    expect(await formIds()).toEqual([])
  })
})
