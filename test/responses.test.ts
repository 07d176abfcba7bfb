/**
 * Reading responses: GET /api/v1/forms/<id>/responses and
 * GET /api/v1/forms/<id>/responses/<response_id> (spec 2.4, 4.6, 4.7; CONTRACT 2, 3, 5, 7).
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import {
  API_TIME_PATTERN,
  apiClient,
  createTestContext,
  EVERY_TYPE_ANSWERS,
  EVERY_TYPE_FIELDS,
  send,
  submit,
  type TestContext,
  type TestResponse,
  ULID_PATTERN,
  UNKNOWN_ID,
} from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())

/** Creates a form and answers it; returns the form and the 201 receipt. */
async function answeredForm(
  overrides: Record<string, unknown> = {},
  data: unknown = { name: 'Ada' },
  headers: Record<string, string> = {},
) {
  const form = await t.api.createForm(overrides)
  const receipt = await submit(t.app, form.id, data, headers)
  if (receipt.status !== 201) throw new Error(`submission failed: ${receipt.status} ${receipt.text}`)
  return { form, receipt: receipt.body as { id: string; form_id: string; submitted_at: string } }
}

function expectNotFound(res: TestResponse, detail: 'Form not found' | 'Response not found') {
  expect(res.status).toBe(404)
  expect(res.body).toEqual({ detail })
}

describe('GET /forms/<id>/responses', () => {
  test('is an empty array before the form is answered', async () => {
    const form = await t.api.createForm()
    const res = await t.api.get(`/forms/${form.id}/responses`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(res.body).toEqual([])
  })

  test('holds the one Response object after the answer', async () => {
    const context = { agent: 'planner', step: 3, state: { ids: [1, 2, 3], done: false, note: 'Zoë' } }
    const { form, receipt } = await answeredForm({ context }, { name: 'Ada' }, { 'user-agent': 'ua-test/2' })
    const res = await t.api.get(`/forms/${form.id}/responses`)
    expect(res.status).toBe(200)
    expect(res.body).toHaveLength(1)
    const response = res.body[0]
    expect(Object.keys(response).sort()).toEqual(['context', 'data', 'form_id', 'id', 'metadata', 'submitted_at'])
    expect(response.id).toMatch(ULID_PATTERN)
    expect(response.id).toBe(receipt.id)
    expect(response.form_id).toBe(form.id)
    expect(response.data).toEqual({ name: 'Ada' })
    expect(response.submitted_at).toMatch(API_TIME_PATTERN)
    expect(response.submitted_at.endsWith('Z')).toBe(false)
    expect(response.submitted_at).toBe(new Date(t.clock()).toISOString().slice(0, -1))
    expect(response.submitted_at).toBe(receipt.submitted_at)
    expect(response.metadata).toEqual({ ip: null, user_agent: 'ua-test/2' })
    expect(response.context).toEqual(context)
  })

  test('context is null when the form was created without one', async () => {
    const { form } = await answeredForm()
    const [response] = (await t.api.get(`/forms/${form.id}/responses`)).body
    expect(Object.hasOwn(response, 'context')).toBe(true)
    expect(response.context).toBeNull()
  })

  test('an empty context object is returned as {}', async () => {
    const { form } = await answeredForm({ context: {} })
    const [response] = (await t.api.get(`/forms/${form.id}/responses`)).body
    expect(response.context).toEqual({})
  })

  test('data of every type keeps its JSON type', async () => {
    const { form } = await answeredForm({ fields: EVERY_TYPE_FIELDS }, EVERY_TYPE_ANSWERS)
    const [response] = (await t.api.get(`/forms/${form.id}/responses`)).body
    expect(response.data).toEqual(EVERY_TYPE_ANSWERS)
    expect(response.data.guests).toBe(3)
    expect(response.data.agree).toBe(true)
  })

  test('a completed form keeps its response and context after its expiry time passes', async () => {
    const context = { keep: 'me' }
    const { form, receipt } = await answeredForm({ context, expires_in: '1h' })
    t.clock.advance(2 * 3_600_000)
    const list = await t.api.get(`/forms/${form.id}/responses`)
    expect(list.status).toBe(200)
    expect(list.body).toHaveLength(1)
    expect(list.body[0].id).toBe(receipt.id)
    expect(list.body[0].context).toEqual(context)
    expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('completed')
  })

  test('a cancelled form has no responses', async () => {
    const form = await t.api.createForm()
    expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
    expect(await submit(t.app, form.id, { name: 'Ada' })).toMatchObject({ status: 410 })
    const res = await t.api.get(`/forms/${form.id}/responses`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual([])
  })

  test('a rejected submission leaves the list empty', async () => {
    const form = await t.api.createForm()
    expect((await submit(t.app, form.id, {})).status).toBe(422)
    expect((await t.api.get(`/forms/${form.id}/responses`)).body).toEqual([])
  })

  test.each([
    ['an unknown form', UNKNOWN_ID],
    ['a malformed form id', 'not-a-ulid'],
  ])('%s is 404 Form not found', async (_name, id) => {
    expectNotFound(await t.api.get(`/forms/${id}/responses`), 'Form not found')
  })

  test('a deleted form is 404 Form not found', async () => {
    const { form } = await answeredForm()
    expect((await t.api.delete(`/forms/${form.id}`)).status).toBe(204)
    expectNotFound(await t.api.get(`/forms/${form.id}/responses`), 'Form not found')
  })

  test("another account's form is 404 Form not found", async () => {
    const { form } = await answeredForm()
    const other = apiClient(t.app, (await t.createKey('other')).key)
    expectNotFound(await other.get(`/forms/${form.id}/responses`), 'Form not found')
  })

  test('another key of the same account reads it', async () => {
    const { form, receipt } = await answeredForm()
    const same = apiClient(t.app, (await t.createKey('default')).key)
    const res = await same.get(`/forms/${form.id}/responses`)
    expect(res.status).toBe(200)
    expect(res.body.map((r: { id: string }) => r.id)).toEqual([receipt.id])
  })

  test('without a key it is 403 Not authenticated; with a wrong key 401', async () => {
    const { form } = await answeredForm()
    const none = await send(t.app, 'GET', `/api/v1/forms/${form.id}/responses`)
    expect(none.status).toBe(403)
    expect(none.body).toEqual({ detail: 'Not authenticated' })
    const wrong = await send(t.app, 'GET', `/api/v1/forms/${form.id}/responses`, { key: `svc_live_${'0'.repeat(48)}` })
    expect(wrong.status).toBe(401)
    expect(wrong.body).toEqual({ detail: 'Invalid API key' })
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer')
  })
})

describe('GET /forms/<id>/responses/<response_id>', () => {
  test('is 200 with the same Response object as the list', async () => {
    const context = { thread: 'abc', n: 1 }
    const { form, receipt } = await answeredForm({ fields: EVERY_TYPE_FIELDS, context }, EVERY_TYPE_ANSWERS, {
      'user-agent': 'ua-x',
    })
    const one = await t.api.get(`/forms/${form.id}/responses/${receipt.id}`)
    expect(one.status).toBe(200)
    expect(Object.keys(one.body).sort()).toEqual(['context', 'data', 'form_id', 'id', 'metadata', 'submitted_at'])
    expect(one.body.id).toBe(receipt.id)
    expect(one.body.form_id).toBe(form.id)
    expect(one.body.data).toEqual(EVERY_TYPE_ANSWERS)
    expect(one.body.submitted_at).toBe(receipt.submitted_at)
    expect(one.body.metadata).toEqual({ ip: null, user_agent: 'ua-x' })
    expect(one.body.context).toEqual(context)
    const list = await t.api.get(`/forms/${form.id}/responses`)
    expect(one.body).toEqual(list.body[0])
  })

  test('records the trusted-proxy ip', async () => {
    const ctx = await createTestContext({ SERVICE_TRUST_PROXY: 'true' })
    try {
      const form = await ctx.api.createForm()
      const receipt = await submit(
        ctx.app,
        form.id,
        { name: 'Ada' },
        { 'x-forwarded-for': '198.51.100.4, 203.0.113.50' },
      )
      expect(receipt.status).toBe(201)
      const one = await ctx.api.get(`/forms/${form.id}/responses/${receipt.body.id}`)
      expect(one.status).toBe(200)
      expect(one.body.metadata).toEqual({ ip: '203.0.113.50', user_agent: null })
    } finally {
      ctx.close()
    }
  })

  test.each([
    ['an unknown response id', UNKNOWN_ID],
    ['a malformed response id', 'not-a-ulid'],
    ['a response id that is too long', `${UNKNOWN_ID}0`],
  ])('%s is 404 Response not found', async (_name, rid) => {
    const { form } = await answeredForm()
    expectNotFound(await t.api.get(`/forms/${form.id}/responses/${rid}`), 'Response not found')
  })

  test('an unanswered form has no response by any id', async () => {
    const form = await t.api.createForm()
    expectNotFound(await t.api.get(`/forms/${form.id}/responses/${UNKNOWN_ID}`), 'Response not found')
  })

  test('the form id used as a response id is 404 Response not found', async () => {
    const { form } = await answeredForm()
    expectNotFound(await t.api.get(`/forms/${form.id}/responses/${form.id}`), 'Response not found')
  })

  test.each([
    ['an unknown form', UNKNOWN_ID],
    ['a malformed form id', 'nope'],
  ])('%s is 404 Form not found, even with a real response id', async (_name, formId) => {
    const { receipt } = await answeredForm()
    expectNotFound(await t.api.get(`/forms/${formId}/responses/${receipt.id}`), 'Form not found')
  })

  test("another account's form is 404 Form not found, by a real response id too", async () => {
    const { form, receipt } = await answeredForm()
    const other = apiClient(t.app, (await t.createKey('other')).key)
    expectNotFound(await other.get(`/forms/${form.id}/responses/${receipt.id}`), 'Form not found')
    expectNotFound(await other.get(`/forms/${form.id}/responses/${UNKNOWN_ID}`), 'Form not found')
    // The owner still reads it.
    expect((await t.api.get(`/forms/${form.id}/responses/${receipt.id}`)).status).toBe(200)
  })

  test('a response of form A asked for under form B is 404 Response not found', async () => {
    const a = await answeredForm({}, { name: 'Ada' })
    const b = await answeredForm({}, { name: 'Grace' })
    expectNotFound(await t.api.get(`/forms/${b.form.id}/responses/${a.receipt.id}`), 'Response not found')
    expectNotFound(await t.api.get(`/forms/${a.form.id}/responses/${b.receipt.id}`), 'Response not found')
    // Each under its own form is found.
    expect((await t.api.get(`/forms/${a.form.id}/responses/${a.receipt.id}`)).body.data).toEqual({ name: 'Ada' })
    expect((await t.api.get(`/forms/${b.form.id}/responses/${b.receipt.id}`)).body.data).toEqual({ name: 'Grace' })
  })

  test('a response of form A under an unanswered form B is 404 Response not found', async () => {
    const a = await answeredForm()
    const b = await t.api.createForm()
    expectNotFound(await t.api.get(`/forms/${b.id}/responses/${a.receipt.id}`), 'Response not found')
  })

  test('a deleted form is 404 Form not found', async () => {
    const { form, receipt } = await answeredForm()
    expect((await t.api.delete(`/forms/${form.id}`)).status).toBe(204)
    expectNotFound(await t.api.get(`/forms/${form.id}/responses/${receipt.id}`), 'Form not found')
  })

  test('without a key it is 403', async () => {
    const { form, receipt } = await answeredForm()
    const res = await send(t.app, 'GET', `/api/v1/forms/${form.id}/responses/${receipt.id}`)
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ detail: 'Not authenticated' })
  })
})
