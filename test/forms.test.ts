/**
 * Get, List, Update (PATCH) and Delete of forms, and the state rules, driven
 * through the HTTP interface the way an API client uses it.
 * CONTRACT.md sections 2-5 decide where the spec leaves a choice open.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import {
  API_TIME_PATTERN,
  apiClient,
  BASE_URL,
  createTestContext,
  send,
  submit,
  type TestContext,
  type TestResponse,
} from './utils.ts'

let t: TestContext

beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())

// ---------------------------------------------------------------- helpers

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/** A syntactically valid ULID that no form has. */
const UNKNOWN_ID = '01ARZ3NDEKTSV4RRFFQ69G5FAV'

/** API time: UTC, millisecond precision, no zone suffix. */
const apiTime = (ms: number) => new Date(ms).toISOString().slice(0, -1)

const SUMMARY_KEYS = ['created_at', 'description', 'expires_at', 'fields_count', 'id', 'status', 'title', 'url']
const FORM_KEYS = [...SUMMARY_KEYS, 'context', 'page'].sort()
const DETAIL_KEYS = [...FORM_KEYS, 'callback_events', 'callback_metadata', 'callback_url', 'fields', 'settings'].sort()

const keysOf = (value: unknown) => Object.keys(value as object).sort()

function expectFormNotFound(res: TestResponse) {
  expect(res.status).toBe(404)
  expect(res.body).toEqual({ detail: 'Form not found' })
}

function expectValidationError(res: TestResponse, path?: string) {
  expect(res.status).toBe(422)
  expect(typeof res.body.detail).toBe('string')
  expect(Array.isArray(res.body.errors)).toBe(true)
  expect(res.body.errors.length).toBeGreaterThan(0)
  for (const error of res.body.errors) {
    expect(typeof error.path).toBe('string')
    expect(typeof error.message).toBe('string')
  }
  if (path !== undefined) expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path)
}

function expectConflict(res: TestResponse) {
  expect(res.status).toBe(409)
  expect(typeof res.body.detail).toBe('string')
}

/** The URL of the `Link: <...>; rel="next"` header, or null when there is none. */
function nextLink(res: TestResponse): string | null {
  const header = res.headers.get('link')
  if (header === null) return null
  const match = /^<([^>]+)>;\s*rel="next"$/.exec(header)
  if (!match) throw new Error(`unexpected Link header: ${header}`)
  return match[1]!
}

/** Follows an absolute link (it must point at this service) with the default key. */
function follow(url: string, key = t.key) {
  expect(url.startsWith(`${BASE_URL}/api/v1/forms?`)).toBe(true)
  return send(t.app, 'GET', url.slice(BASE_URL.length), { key })
}

/** Creates `n` forms titled "Form 1".."Form n", oldest first; returns their ids in creation order. */
async function createForms(n: number, overrides: Record<string, unknown> = {}) {
  const ids: string[] = []
  for (let i = 1; i <= n; i++) ids.push((await t.api.createForm({ title: `Form ${i}`, ...overrides })).id)
  return ids
}

/** Answers a form through the JSON submission endpoint; returns the response id. */
async function answer(formId: string, data: Record<string, unknown> = { name: 'Ada' }) {
  const res = await submit(t.app, formId, data)
  expect(res.status).toBe(201)
  return res.body.id as string
}

const cancel = (formId: string) => t.api.patch(`/forms/${formId}`, { status: 'cancelled' })

/** A form whose expiry (1 minute) has passed: the clock is moved 61 s. */
async function expiredForm(overrides: Record<string, unknown> = {}) {
  const form = await t.api.createForm({ expires_in: '1m', context: { step: 3 }, ...overrides })
  t.clock.advance(61_000)
  return form
}

async function otherAccount() {
  return apiClient(t.app, (await t.createKey('other')).key)
}

/** Every object key at any depth of a JSON value. */
function allKeys(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(allKeys)
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => [k, ...allKeys(v)])
  }
  return []
}

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
