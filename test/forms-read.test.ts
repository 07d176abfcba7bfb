/**
 * Get and List of forms, driven through the HTTP interface the way an API client
 * uses it (CONTRACT 2-5).
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import {
  allKeys,
  apiTime,
  DETAIL_KEYS,
  expectFormNotFound,
  expectValidationError,
  formRequests,
  HOUR,
  keysOf,
  nextLink,
  SUMMARY_KEYS,
  UNKNOWN_ID,
} from './forms-fixtures.ts'
import { API_TIME_PATTERN, BASE_URL, createTestContext, type TestContext, type TestResponse } from './utils.ts'

let t: TestContext

beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())
const { follow, createForms, answer, cancel, otherAccount } = formRequests(() => t)

// ---------------------------------------------------------------- GET /forms/<id>

describe('GET /api/v1/forms/<id>', () => {
  test('returns the full form, with defaults filled in', async () => {
    const created = await t.api.createForm({
      title: 'Trip',
      description: 'Where to next?',
      fields: [
        {
          key: 'city',
          type: 'text',
          label: 'City',
          description: 'Where you want to go',
          required: true,
          config: { max_length: 80 },
        },
        { key: 'nights', type: 'number', label: 'Nights' },
      ],
      callback_url: 'https://agent.example.org/hook',
      callback_metadata: { run: 'r-42' },
      context: { conversation: 'c-1', nested: { ok: true } },
      settings: { theme: 'plain' },
    })

    const res = await t.api.get(`/forms/${created.id}`)

    expect(res.status).toBe(200)
    expect(keysOf(res.body)).toEqual(DETAIL_KEYS)
    expect(res.body).toEqual({
      id: created.id,
      title: 'Trip',
      description: 'Where to next?',
      url: `${BASE_URL}/f/${created.id}`,
      status: 'active',
      fields_count: 2,
      expires_at: apiTime(t.clock() + 48 * HOUR),
      created_at: apiTime(t.clock()),
      context: { conversation: 'c-1', nested: { ok: true } },
      fields: [
        {
          key: 'city',
          type: 'text',
          label: 'City',
          description: 'Where you want to go',
          required: true,
          config: { max_length: 80 },
        },
        { key: 'nights', type: 'number', label: 'Nights', description: null, required: false, config: {} },
      ],
      callback_url: 'https://agent.example.org/hook',
      callback_events: ['form.completed'],
      callback_metadata: { run: 'r-42' },
      settings: { theme: 'plain' },
      page: {},
    })
    expect(res.body.created_at).toMatch(API_TIME_PATTERN)
    expect(res.body.expires_at).toMatch(API_TIME_PATTERN)
  })

  test('a minimal form has null description, null context, null callback_url and empty objects', async () => {
    const created = await t.api.createForm({ expires_in: null })

    const res = await t.api.get(`/forms/${created.id}`)

    expect(res.status).toBe(200)
    expect(res.body.description).toBeNull()
    expect(res.body.context).toBeNull()
    expect(res.body.expires_at).toBeNull()
    expect(res.body.callback_url).toBeNull()
    expect(res.body.callback_metadata).toEqual({})
    expect(res.body.settings).toEqual({})
    expect(res.body.fields).toEqual([
      { key: 'name', type: 'text', label: 'Your name', description: null, required: true, config: {} },
    ])
  })

  test('the webhook secret appears in no response and under no key', async () => {
    const create = await t.api.post('/forms', {
      title: 'Secret check',
      fields: [{ key: 'name', type: 'text', label: 'Name' }],
      callback_url: 'https://agent.example.org/hook',
      context: { a: 1 },
    })
    expect(create.status).toBe(201)
    const id = create.body.id as string
    const secret = createHmac('sha256', t.key).update(id).digest('hex')

    const responses: TestResponse[] = [create]
    responses.push(await t.api.get(`/forms/${id}`))
    responses.push(await t.api.get('/forms'))
    responses.push(await t.api.patch(`/forms/${id}`, { expires_at: '2099-01-01T00:00:00Z' }))
    responses.push(await t.api.patch(`/forms/${id}`, {}))
    const responseId = await answer(id)
    responses.push(await t.api.get(`/forms/${id}`))
    responses.push(await t.api.get(`/forms/${id}/responses`))
    responses.push(await t.api.get(`/forms/${id}/responses/${responseId}`))
    responses.push(await t.api.patch(`/forms/${id}`, { status: 'cancelled' })) // 409
    responses.push(await t.api.get('/forms?status=completed'))

    expect(responses.map((r) => r.status)).toEqual([201, 200, 200, 200, 200, 200, 200, 200, 409, 200])
    for (const res of responses) {
      expect(res.text).not.toContain(secret)
      expect(res.text).not.toMatch(/[0-9a-fA-F]{64}/)
      for (const key of allKeys(res.body)) expect(key.toLowerCase()).not.toContain('secret')
    }
    expect(t.logText()).not.toContain(secret)
  })

  test('404 Form not found for an unknown id', async () => {
    expectFormNotFound(await t.api.get(`/forms/${UNKNOWN_ID}`))
  })

  test('404 Form not found for a malformed id', async () => {
    expectFormNotFound(await t.api.get('/forms/not-a-form-id'))
    expectFormNotFound(await t.api.get('/forms/01ARZ3NDEKTSV4RRFFQ69G5FAVX')) // 27 chars
    expectFormNotFound(await t.api.get('/forms/81ARZ3NDEKTSV4RRFFQ69G5FAV')) // beyond the ULID range
  })

  test("404 Form not found for another account's form", async () => {
    const form = await t.api.createForm()

    expectFormNotFound(await (await otherAccount()).get(`/forms/${form.id}`))
    expect((await t.api.get(`/forms/${form.id}`)).status).toBe(200)
  })
})

// ---------------------------------------------------------------- GET /forms

describe('GET /api/v1/forms', () => {
  test('lists the forms newest first, as summaries without context', async () => {
    const ids = await createForms(3, {
      context: { private: 'agent state' },
      callback_url: 'https://agent.example.org/hook',
    })

    const res = await t.api.get('/forms')

    expect(res.status).toBe(200)
    expect(res.body.map((f: { id: string }) => f.id)).toEqual([...ids].reverse())
    expect(res.headers.get('link')).toBeNull()
    for (const form of res.body) {
      expect(keysOf(form)).toEqual(SUMMARY_KEYS)
      expect(form).not.toHaveProperty('context')
      expect(form.url).toBe(`${BASE_URL}/f/${form.id}`)
      expect(form.status).toBe('active')
      expect(form.fields_count).toBe(1)
      expect(form.created_at).toMatch(API_TIME_PATTERN)
    }
    expect(res.text).not.toContain('agent state')
    expect(res.body[0]).toEqual({
      id: ids[2],
      title: 'Form 3',
      description: null,
      url: `${BASE_URL}/f/${ids[2]}`,
      status: 'active',
      fields_count: 1,
      expires_at: apiTime(t.clock() + 48 * HOUR),
      created_at: apiTime(t.clock()),
    })
  })

  test('newest first also when the forms were created at different times', async () => {
    const first = await t.api.createForm({ title: 'first' })
    t.clock.advance(5_000)
    const second = await t.api.createForm({ title: 'second' })
    t.clock.advance(5_000)
    const third = await t.api.createForm({ title: 'third' })

    const res = await t.api.get('/forms')

    expect(res.body.map((f: { title: string }) => f.title)).toEqual(['third', 'second', 'first'])
    expect(res.body.map((f: { id: string }) => f.id)).toEqual([third.id, second.id, first.id])
  })

  test('an account without forms gets an empty list', async () => {
    const res = await t.api.get('/forms')
    expect(res.status).toBe(200)
    expect(res.body).toEqual([])
    expect(res.headers.get('link')).toBeNull()
  })

  test('the default page holds 20 forms', async () => {
    const ids = await createForms(21)

    const res = await t.api.get('/forms')

    expect(res.status).toBe(200)
    expect(res.body).toHaveLength(20)
    expect(res.body.map((f: { id: string }) => f.id)).toEqual([...ids].reverse().slice(0, 20))
    const next = nextLink(res)
    expect(next).not.toBeNull()
    const rest = await follow(next!)
    expect(rest.status).toBe(200)
    expect(rest.body.map((f: { id: string }) => f.id)).toEqual([ids[0]])
    expect(nextLink(rest)).toBeNull()
  })

  test('exactly 20 forms fit the default page: no Link header', async () => {
    await createForms(20)

    const res = await t.api.get('/forms')

    expect(res.body).toHaveLength(20)
    expect(res.headers.get('link')).toBeNull()
  })

  test('limit 1 and limit 100 are accepted', async () => {
    const ids = await createForms(3)

    const one = await t.api.get('/forms?limit=1')
    expect(one.status).toBe(200)
    expect(one.body.map((f: { id: string }) => f.id)).toEqual([ids[2]])
    expect(nextLink(one)).not.toBeNull()

    const hundred = await t.api.get('/forms?limit=100')
    expect(hundred.status).toBe(200)
    expect(hundred.body).toHaveLength(3)
    expect(nextLink(hundred)).toBeNull()
  })

  for (const limit of ['0', '101', 'abc', '1.5', '-1']) {
    test(`limit=${JSON.stringify(limit)} is 422`, async () => {
      await createForms(1)
      expectValidationError(await t.api.get(`/forms?limit=${encodeURIComponent(limit)}`))
    })
  }

  test('status filter: each status lists exactly its forms', async () => {
    const expiring = await t.api.createForm({ title: 'expiring', expires_in: '1m' })
    const active = await t.api.createForm({ title: 'active' })
    const completed = await t.api.createForm({ title: 'completed' })
    const cancelled = await t.api.createForm({ title: 'cancelled' })
    await answer(completed.id)
    expect((await cancel(cancelled.id)).status).toBe(200)
    t.clock.advance(61_000)

    const listed = async (status: string) => {
      const res = await t.api.get(`/forms?status=${status}`)
      expect(res.status).toBe(200)
      for (const form of res.body) expect(form.status).toBe(status)
      return res.body.map((f: { id: string }) => f.id)
    }
    expect(await listed('active')).toEqual([active.id])
    expect(await listed('completed')).toEqual([completed.id])
    expect(await listed('cancelled')).toEqual([cancelled.id])
    expect(await listed('expired')).toEqual([expiring.id])

    const all = await t.api.get('/forms')
    expect(all.body.map((f: { id: string }) => f.id)).toEqual([cancelled.id, completed.id, active.id, expiring.id])
  })

  test('an unknown status is 422', async () => {
    expectValidationError(await t.api.get('/forms?status=bogus'))
    expectValidationError(await t.api.get('/forms?status=ACTIVE'))
  })

  test('a cursor that is not a ULID is 422', async () => {
    await createForms(2)
    expectValidationError(await t.api.get('/forms?cursor=abc'))
    expectValidationError(await t.api.get('/forms?cursor=01ARZ3NDEKTSV4RRFFQ69G5FAU')) // U is not in the ULID alphabet
    expectValidationError(await t.api.get('/forms?cursor=01ARZ3NDEKTSV4RRFFQ69G5FA')) // 25 chars
  })

  test('the cursor is the id of the last form seen: the page holds older forms', async () => {
    const ids = await createForms(5)

    const res = await t.api.get(`/forms?cursor=${ids[3]}`)

    expect(res.status).toBe(200)
    expect(res.body.map((f: { id: string }) => f.id)).toEqual([ids[2], ids[1], ids[0]])
  })

  test('following the Link header walks every form exactly once', async () => {
    const ids = await createForms(7)

    const seen: string[] = []
    const pageSizes: number[] = []
    let res = await t.api.get('/forms?limit=3')
    for (let guard = 0; guard < 10; guard++) {
      expect(res.status).toBe(200)
      pageSizes.push(res.body.length)
      seen.push(...res.body.map((f: { id: string }) => f.id))
      const next = nextLink(res)
      if (next === null) break
      const url = new URL(next)
      expect(url.origin).toBe(BASE_URL)
      expect(url.pathname).toBe('/api/v1/forms')
      expect(url.searchParams.get('limit')).toBe('3')
      expect(url.searchParams.get('cursor')).toBe(seen.at(-1)!)
      res = await follow(next)
    }

    expect(pageSizes).toEqual([3, 3, 1])
    expect(new Set(seen).size).toBe(seen.length)
    expect(seen).toEqual([...ids].reverse())
  })

  test('a Link header appears exactly when another page exists', async () => {
    await createForms(4)

    expect(nextLink(await t.api.get('/forms?limit=3'))).not.toBeNull()
    expect(nextLink(await t.api.get('/forms?limit=4'))).toBeNull()
    expect(nextLink(await t.api.get('/forms?limit=5'))).toBeNull()
    const page = await t.api.get('/forms?limit=2')
    const second = await follow(nextLink(page)!)
    expect(second.body).toHaveLength(2)
    expect(nextLink(second)).toBeNull()
  })

  test('the next link keeps the status filter and the limit', async () => {
    const cancelledIds: string[] = []
    for (let i = 0; i < 5; i++) {
      const keep = await t.api.createForm({ title: `active ${i}` })
      const gone = await t.api.createForm({ title: `cancelled ${i}` })
      expect((await cancel(gone.id)).status).toBe(200)
      cancelledIds.push(gone.id)
      expect(keep.status).toBe('active')
    }

    const seen: string[] = []
    let res = await t.api.get('/forms?status=cancelled&limit=2')
    for (let guard = 0; guard < 10; guard++) {
      expect(res.status).toBe(200)
      expect(res.body.length).toBeLessThanOrEqual(2)
      for (const form of res.body) expect(form.status).toBe('cancelled')
      seen.push(...res.body.map((f: { id: string }) => f.id))
      const next = nextLink(res)
      if (next === null) break
      expect(next.startsWith(BASE_URL)).toBe(true)
      const url = new URL(next)
      expect(url.searchParams.get('status')).toBe('cancelled')
      expect(url.searchParams.get('limit')).toBe('2')
      res = await follow(next)
    }

    expect(seen).toEqual([...cancelledIds].reverse())
  })

  test('the next link of an expired-filtered list keeps the filter', async () => {
    const expiring = await createForms(3, { expires_in: '1m' })
    await createForms(2, { expires_in: '1h' })
    t.clock.advance(61_000)

    const first = await t.api.get('/forms?status=expired&limit=2')
    expect(first.body.map((f: { id: string }) => f.id)).toEqual([expiring[2], expiring[1]])
    const next = nextLink(first)
    expect(next).not.toBeNull()
    expect(new URL(next!).searchParams.get('status')).toBe('expired')
    const second = await follow(next!)
    expect(second.body.map((f: { id: string }) => f.id)).toEqual([expiring[0]])
    expect(nextLink(second)).toBeNull()
  })

  test('lists are scoped to the account', async () => {
    await createForms(3)
    const other = await otherAccount()

    const res = await other.get('/forms')
    expect(res.status).toBe(200)
    expect(res.body).toEqual([])
    expect(res.headers.get('link')).toBeNull()

    const theirs = await other.createForm({ title: 'theirs' })
    const mine = await t.api.get('/forms')
    expect(mine.body).toHaveLength(3)
    expect(mine.body.map((f: { id: string }) => f.id)).not.toContain(theirs.id)
    const theirList = await other.get('/forms')
    expect(theirList.body.map((f: { id: string }) => f.id)).toEqual([theirs.id])
  })

  test("a cursor from another account's form does not reveal anything", async () => {
    const mine = await createForms(2)
    const other = await otherAccount()
    await other.createForm({ title: 'theirs' })

    const res = await other.get(`/forms?cursor=${mine[1]}`)
    expect(res.status).toBe(200)
    for (const form of res.body) expect(mine).not.toContain(form.id)
  })
})
