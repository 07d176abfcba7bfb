/**
 * The JSON submission path, POST /f/<id> (CONTRACT 6, 7): the body's shape, the
 * form's state, cross-site posts and metadata.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { expectInvalid, expectReceipt, HOOK, MEAL_OPTIONS, submissionRequests } from './submissions-fixtures.ts'
import {
  BASE_URL,
  createTestContext,
  EVERY_TYPE_ANSWERS,
  EVERY_TYPE_FIELDS,
  postForm,
  submit,
  type TestContext,
} from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())
const { responsesOf, onlyResponse, formStatus, deliveries, expectNothingRecorded } = submissionRequests(() => t)

// ------------------------------------------------------------ body shape

describe('the body', () => {
  test('an unknown key is 422 at /<key>', async () => {
    const form = await t.api.createForm({ fields: EVERY_TYPE_FIELDS })
    const res = await submit(t.app, form.id, { ...EVERY_TYPE_ANSWERS, extra: 'surprise' })
    expectInvalid(res, ['/extra'], true)
    await expectNothingRecorded(form.id)
  })

  test('an unknown key is reported as a JSON Pointer (~ and / escaped)', async () => {
    const form = await t.api.createForm()
    const res = await submit(t.app, form.id, { name: 'Ada', 'a/b~c': 1 })
    expectInvalid(res, ['/a~1b~0c'], true)
  })

  test('a key differing only in case is unknown', async () => {
    const form = await t.api.createForm()
    const res = await submit(t.app, form.id, { Name: 'Ada' })
    expectInvalid(res, ['/Name', '/name'], true)
  })

  test('an own "__proto__" key in the JSON is an unknown key, not a prototype', async () => {
    const form = await t.api.createForm()
    const res = await submit(t.app, form.id, '{"name": "Ada", "__proto__": {"name": "x"}}')
    expectInvalid(res, ['/__proto__'], true)
    await expectNothingRecorded(form.id)
  })

  test('fields named after Object.prototype members, left empty, are empty', async () => {
    const form = await t.api.createForm({
      fields: [
        { key: 'constructor', type: 'text', label: 'Constructor' },
        { key: 'toString', type: 'number', label: 'To string' },
        { key: 'valueOf', type: 'select', label: 'Value of', config: MEAL_OPTIONS },
        { key: 'hasOwnProperty', type: 'checkbox', label: 'Has own property' },
      ],
    })
    const res = await submit(t.app, form.id, {})
    expectReceipt(res, form.id)
    expect((await onlyResponse(form.id)).data).toEqual({ hasOwnProperty: false })
  })

  test('a required field named "constructor" left empty is 422 at /constructor', async () => {
    const form = await t.api.createForm({
      fields: [
        { key: 'constructor', type: 'text', label: 'Constructor', required: true },
        { key: 'toString', type: 'text', label: 'To string', required: true },
      ],
    })
    expectInvalid(await submit(t.app, form.id, {}), ['/constructor', '/toString'], true)
    await expectNothingRecorded(form.id)
  })

  test('fields named "constructor" and "toString" take values like any other', async () => {
    const form = await t.api.createForm({
      fields: [
        { key: 'constructor', type: 'text', label: 'Constructor' },
        { key: 'toString', type: 'number', label: 'To string' },
      ],
    })
    expectReceipt(await submit(t.app, form.id, { constructor: 'c', toString: '7' }), form.id)
    expect((await onlyResponse(form.id)).data).toEqual({ constructor: 'c', toString: 7 })
  })

  test.each([
    ['an array', '[]'],
    ['an array of an object', '[{"name": "Ada"}]'],
    ['a string', '"Ada"'],
    ['a number', '42'],
    ['a boolean', 'true'],
    ['null', 'null'],
  ])('%s instead of an object is 422', async (_name, body) => {
    const form = await t.api.createForm()
    const res = await submit(t.app, form.id, body)
    expect(res.status).toBe(422)
    expect(typeof res.body.detail).toBe('string')
    await expectNothingRecorded(form.id)
  })

  test.each([
    ['truncated JSON', '{"name": "Ada"'],
    ['a trailing comma', '{"name": "Ada",}'],
    ['single quotes', "{'name': 'Ada'}"],
    ['an empty body', ''],
    ['whitespace only', '   '],
  ])('malformed JSON (%s) is 422', async (_name, body) => {
    const form = await t.api.createForm()
    const res = await submit(t.app, form.id, body)
    expect(res.status).toBe(422)
    expect(typeof res.body.detail).toBe('string')
    await expectNothingRecorded(form.id)
  })

  test('a body over 1 MiB is 413', async () => {
    const form = await t.api.createForm()
    const body = JSON.stringify({ name: 'Ada' }) + ' '.repeat(1024 * 1024)
    expect(Buffer.byteLength(body)).toBe(1024 * 1024 + 14)
    const res = await submit(t.app, form.id, body)
    expect(res.status).toBe(413)
    expect(typeof res.body.detail).toBe('string')
    await expectNothingRecorded(form.id)
  })

  test('a body of exactly 1 MiB is accepted (413 is only for more)', async () => {
    const form = await t.api.createForm()
    const json = JSON.stringify({ name: 'Ada' })
    const body = json + ' '.repeat(1024 * 1024 - json.length)
    expect(Buffer.byteLength(body)).toBe(1024 * 1024)
    expectReceipt(await submit(t.app, form.id, body), form.id)
  })

  test('a body of 1 MiB + 1 byte is 413', async () => {
    const form = await t.api.createForm()
    const json = JSON.stringify({ name: 'Ada' })
    const body = json + ' '.repeat(1024 * 1024 + 1 - json.length)
    expect((await submit(t.app, form.id, body)).status).toBe(413)
    await expectNothingRecorded(form.id)
  })

  test('a text/plain body is 415', async () => {
    const form = await t.api.createForm()
    const res = await submit(t.app, form.id, JSON.stringify({ name: 'Ada' }), { 'content-type': 'text/plain' })
    expect(res.status).toBe(415)
    expect(typeof res.body.detail).toBe('string')
    await expectNothingRecorded(form.id)
  })
})

// ------------------------------------------------------------ form states

describe('the form', () => {
  test.each([
    ['an unknown id', '01ARZ3NDEKTSV4RRFFQ69G5FAV'],
    ['a malformed id', 'not-a-form-id'],
    ['a ULID that is too long', '01ARZ3NDEKTSV4RRFFQ69G5FAVX'],
    ['an id with a character outside Crockford base32', '01ARZ3NDEKTSV4RRFFQ69G5FAU'],
  ])('%s is 404 {"detail":"Form not found"}', async (_name, id) => {
    const res = await submit(t.app, id, { name: 'Ada' })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ detail: 'Form not found' })
  })

  test('a completed form is 409 and keeps its first response', async () => {
    const form = await t.api.createForm()
    const first = await submit(t.app, form.id, { name: 'Ada' })
    expectReceipt(first, form.id)
    const second = await submit(t.app, form.id, { name: 'Grace' })
    expect(second.status).toBe(409)
    expect(typeof second.body.detail).toBe('string')
    const stored = await onlyResponse(form.id)
    expect(stored.id).toBe(first.body.id)
    expect(stored.data).toEqual({ name: 'Ada' })
  })

  test('a cancelled form is 410 and takes no response', async () => {
    const form = await t.api.createForm()
    const patched = await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })
    expect(patched.status).toBe(200)
    const res = await submit(t.app, form.id, { name: 'Ada' })
    expect(res.status).toBe(410)
    expect(typeof res.body.detail).toBe('string')
    expect(await responsesOf(form.id)).toEqual([])
    expect(await formStatus(form.id)).toBe('cancelled')
  })

  test('an expired form (expires_in 1m, 61 s later) is 410 and takes no response', async () => {
    const form = await t.api.createForm({ expires_in: '1m', callback_url: HOOK })
    t.clock.advance(61_000)
    const res = await submit(t.app, form.id, { name: 'Ada' })
    expect(res.status).toBe(410)
    expect(typeof res.body.detail).toBe('string')
    expect(await responsesOf(form.id)).toEqual([])
    expect(await formStatus(form.id)).toBe('expired')
    expect(await deliveries()).toEqual([])
  })

  test('a form with expires_in 1m still takes its answer 59 s later', async () => {
    const form = await t.api.createForm({ expires_in: '1m' })
    t.clock.advance(59_000)
    expectReceipt(await submit(t.app, form.id, { name: 'Ada' }), form.id)
  })

  test('a deleted form is 404', async () => {
    const form = await t.api.createForm()
    expect((await t.api.delete(`/forms/${form.id}`)).status).toBe(204)
    const res = await submit(t.app, form.id, { name: 'Ada' })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ detail: 'Form not found' })
  })
})

// ------------------------------------------------------------ cross-site

describe('cross-site posts', () => {
  test.each(['cross-site', 'CROSS-SITE', 'Cross-Site'])(
    'Sec-Fetch-Site: %s is 403 and records nothing',
    async (site) => {
      const form = await t.api.createForm()
      const res = await submit(t.app, form.id, { name: 'Ada' }, { 'sec-fetch-site': site })
      expect(res.status).toBe(403)
      expect(typeof res.body.detail).toBe('string')
      await expectNothingRecorded(form.id)
      // The form is still open to a legitimate submission.
      expectReceipt(await submit(t.app, form.id, { name: 'Ada' }), form.id)
    },
  )

  test.each([['same-origin'], ['same-site'], ['none'], [null]])('Sec-Fetch-Site %p is accepted', async (site) => {
    const form = await t.api.createForm()
    const headers: Record<string, string> = site === null ? {} : { 'sec-fetch-site': site }
    expectReceipt(await submit(t.app, form.id, { name: 'Ada' }, headers), form.id)
  })

  test.each(['https://elsewhere.example', 'http://intake.test:8443', 'https://intake.test', 'not a url'])(
    'without Sec-Fetch-Site, Origin %p (neither intake nor the request itself) is 403: as JSON and as a form post',
    async (origin) => {
      const form = await t.api.createForm()
      const json = await submit(t.app, form.id, { name: 'Ada' }, { origin })
      expect(json.status).toBe(403)
      const page = await postForm(t.app, form.id, { name: 'Ada' }, { origin })
      expect(page.status).toBe(403)
      expect(page.headers.get('content-type')).toStartWith('text/html')
      await expectNothingRecorded(form.id)
      for (const name of json.headers.keys()) expect(name.toLowerCase().startsWith('access-control-')).toBe(false)
    },
  )

  test.each(['null', BASE_URL, BASE_URL.toUpperCase(), `${BASE_URL}:80`])(
    'without Sec-Fetch-Site, Origin %p is accepted',
    async (origin) => {
      const form = await t.api.createForm()
      const res = await postForm(t.app, form.id, { name: 'Ada' }, { origin })
      expect(res.status).toBe(303)
    },
  )

  test("the request's own origin is accepted when it is not the base URL (a server reached by another name)", async () => {
    const form = await t.api.createForm()
    const res = await t.app.handle(
      new Request(`http://forms.internal.example/f/${form.id}`, {
        method: 'POST',
        headers: { origin: 'http://forms.internal.example', 'content-type': 'application/x-www-form-urlencoded' },
        body: 'name=Ada',
      }),
    )
    expect(res.status).toBe(303)
  })

  test('a trusted Sec-Fetch-Site wins over Origin: same-origin with a foreign Origin is accepted', async () => {
    const form = await t.api.createForm()
    expectReceipt(
      await submit(
        t.app,
        form.id,
        { name: 'Ada' },
        { 'sec-fetch-site': 'same-origin', origin: 'https://elsewhere.example' },
      ),
      form.id,
    )
  })
})

// ------------------------------------------------------------ metadata

describe('metadata', () => {
  test('user_agent is the User-Agent header', async () => {
    const form = await t.api.createForm()
    const ua = 'Mozilla/5.0 (X11; Linux x86_64) intake-test/1.0'
    expectReceipt(await submit(t.app, form.id, { name: 'Ada' }, { 'user-agent': ua }), form.id)
    expect((await onlyResponse(form.id)).metadata).toEqual({ ip: null, user_agent: ua })
  })

  test('user_agent is null without the header', async () => {
    const form = await t.api.createForm()
    expectReceipt(await submit(t.app, form.id, { name: 'Ada' }), form.id)
    expect((await onlyResponse(form.id)).metadata.user_agent).toBeNull()
  })

  test('X-Forwarded-For is ignored without SERVICE_TRUST_PROXY (ip null in-process)', async () => {
    const form = await t.api.createForm()
    expectReceipt(await submit(t.app, form.id, { name: 'Ada' }, { 'x-forwarded-for': '203.0.113.7' }), form.id)
    expect((await onlyResponse(form.id)).metadata.ip).toBeNull()
  })

  test.each([
    ['one address', '203.0.113.7', '203.0.113.7'],
    ['a chain: the last address is used', '198.51.100.1, 10.0.0.2, 203.0.113.7', '203.0.113.7'],
    ['a chain without spaces', '198.51.100.1,203.0.113.8', '203.0.113.8'],
    ['IPv6', '2001:db8::1', '2001:db8::1'],
  ])('with SERVICE_TRUST_PROXY, ip comes from X-Forwarded-For: %s', async (_name, header, ip) => {
    const ctx = await createTestContext({ SERVICE_TRUST_PROXY: 'true' })
    try {
      const form = await ctx.api.createForm()
      expectReceipt(await submit(ctx.app, form.id, { name: 'Ada' }, { 'x-forwarded-for': header }), form.id)
      expect((await onlyResponse(form.id, ctx)).metadata.ip).toBe(ip)
    } finally {
      ctx.close()
    }
  })

  test('with SERVICE_TRUST_PROXY but no X-Forwarded-For, ip is null in-process', async () => {
    const ctx = await createTestContext({ SERVICE_TRUST_PROXY: 'true' })
    try {
      const form = await ctx.api.createForm()
      expectReceipt(await submit(ctx.app, form.id, { name: 'Ada' }), form.id)
      expect((await onlyResponse(form.id, ctx)).metadata).toEqual({ ip: null, user_agent: null })
    } finally {
      ctx.close()
    }
  })
})
