/**
 * POST /api/v1/forms (CONTRACT 3, 4), through HTTP: the request body, unknown
 * keys, title, description and fields, a field's own keys, and callback_url.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import {
  createRequests,
  expectCreated,
  expectRejected,
  fieldOf,
  type Json,
  MiB,
  oneField,
  outcome,
  utf8Bytes,
} from './forms-create-fixtures.ts'
import { createTestContext, send, type TestContext, validForm } from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())
const { create, getForm } = createRequests(() => t)

// ---------------------------------------------------------------- the body itself

describe('the request body', () => {
  test.each([
    ['not JSON', '{bad'],
    ['truncated JSON', '{"title": "x", "fields": ['],
    ['a JSON array', '[]'],
    ['an array holding a valid form', JSON.stringify([validForm()])],
    ['a JSON string', '"form"'],
    ['a JSON number', '42'],
    ['JSON true', 'true'],
    ['JSON null', 'null'],
    ['empty', ''],
    ['only whitespace', ' \n\t '],
  ])('%s: 422 with detail and errors', async (_name, raw) => {
    expectRejected(await create(raw))
  })

  test('no body at all: 422', async () => {
    expectRejected(await create())
  })

  test('an empty object: 422 naming the required title and fields', async () => {
    expectRejected(await create({}), '/title', '/fields')
  })

  test('a body of exactly 1 MiB is read (422 for its oversized context, not 413)', async () => {
    const base = JSON.stringify(validForm({ context: { pad: '' } }))
    const raw = JSON.stringify(validForm({ context: { pad: 'x'.repeat(MiB - base.length) } }))
    expect(utf8Bytes(raw)).toBe(MiB)
    expectRejected(await create(raw), '/context')
  })

  test.each([
    ['1 MiB + 1 byte', MiB + 1],
    ['3 MiB', 3 * MiB],
  ])('a body of %s: 413 with a JSON detail', async (_name, size) => {
    const base = JSON.stringify(validForm({ context: { pad: '' } }))
    const raw = JSON.stringify(validForm({ context: { pad: 'x'.repeat(size - base.length) } }))
    expect(utf8Bytes(raw)).toBe(size)
    const res = await create(raw)
    expect(outcome(res)).toMatchObject({ status: 413, body: { detail: expect.any(String) } })
    expect(res.headers.get('content-type')).toContain('application/json')
  })

  test('a 422 lists every schema problem it finds', async () => {
    const res = await create({ title: '', fields: [], expire_in: '1h' })
    expectRejected(res, '/title', '/fields', '/expire_in')
  })
})

describe('authentication comes before the body', () => {
  test('no Authorization header: 403 Not authenticated, even for a bad body', async () => {
    const res = await send(t.app, 'POST', '/api/v1/forms', { body: '{bad' })
    expect(outcome(res)).toEqual({ status: 403, body: { detail: 'Not authenticated' } })
  })

  test('an unknown key: 401 Invalid API key with WWW-Authenticate: Bearer', async () => {
    const res = await send(t.app, 'POST', '/api/v1/forms', { body: validForm(), key: `svc_live_${'0'.repeat(48)}` })
    expect(outcome(res)).toEqual({ status: 401, body: { detail: 'Invalid API key' } })
    expect(res.headers.get('www-authenticate')).toBe('Bearer')
  })
})

// ---------------------------------------------------------------- unknown keys

describe('unknown keys are 422 at their JSON Pointer', () => {
  test.each<[string, unknown, string]>([
    ['top level (typo of expires_in)', { ...validForm(), expire_in: '1h' }, '/expire_in'],
    ['top level, key holding "/" (escaped as ~1)', { ...validForm(), 'a/b': 1 }, '/a~1b'],
    ['top level, key holding "~" (escaped as ~0)', { ...validForm(), 'a~b': 1 }, '/a~0b'],
    ['in a field', oneField({ ...fieldOf('text'), bogus: true }), '/fields/0/bogus'],
    [
      'in the second field',
      validForm({ fields: [fieldOf('text'), { ...fieldOf('text'), key: 'r', bogus: 1 }] }),
      '/fields/1/bogus',
    ],
    ['in a field, typo of "required"', oneField({ ...fieldOf('text'), requried: true }), '/fields/0/requried'],
    ['in a field config', oneField(fieldOf('text', { bogus: 1 })), '/fields/0/config/bogus'],
    [
      'in the second field config',
      validForm({ fields: [fieldOf('text'), { ...fieldOf('number', { bogus: 1 }), key: 'r' }] }),
      '/fields/1/config/bogus',
    ],
    ["another type's config key (rows on text)", oneField(fieldOf('text', { rows: 3 })), '/fields/0/config/rows'],
    [
      'in a select option object',
      oneField(fieldOf('select', { options: [{ value: 'a', label: 'A', extra: 1 }] })),
      '/fields/0/config/options/0/extra',
    ],
  ])('%s', async (_name, body, path) => {
    expectRejected(await create(body), path)
  })

  test('a top-level "__proto__" key (sent as raw JSON) is an unknown key', async () => {
    const raw = `{"title":"T","fields":[{"key":"a","type":"text","label":"A"}],"__proto__":{"admin":true}}`
    expectRejected(await create(raw), '/__proto__')
  })

  test('settings, context and callback_metadata are free-form: unknown keys inside them are kept', async () => {
    const settings = { theme: 'dark', anything: { nested: [1, 'two', null] }, expire_in: 'not checked' }
    const context = { thread_id: 'abc', step: 3, deep: { keys: { are: 'fine' } } }
    const callback_metadata = { bogus: true, 'weird key/with~chars': { x: 1 } }
    const form = expectCreated(await create(validForm({ settings, context, callback_metadata })))
    expect(form.context).toStrictEqual(context)
    const detail = await getForm(form.id as string)
    expect(detail.settings).toStrictEqual(settings)
    expect(detail.context).toStrictEqual(context)
    expect(detail.callback_metadata).toStrictEqual(callback_metadata)
  })
})

// ---------------------------------------------------------------- title, description, fields

describe('title, description and fields', () => {
  test.each<[string, Json]>([
    ['title of 1 char', { title: 'a' }],
    ['title of 255 chars', { title: 'a'.repeat(255) }],
    ['title of 255 two-byte chars', { title: 'é'.repeat(255) }],
    ['description absent', {}],
    ['description null', { description: null }],
    ['description empty', { description: '' }],
    ['description of 10,000 chars', { description: 'd'.repeat(10_000) }],
  ])('accepted: %s', async (_name, overrides) => {
    const form = expectCreated(await create(validForm(overrides)))
    expect(form.title).toBe((overrides.title as string) ?? 'Travel preferences')
    expect(form.description).toBe('description' in overrides ? overrides.description : null)
  })

  test.each<[string, Json, string]>([
    ['title missing', { title: undefined }, '/title'],
    ['title empty', { title: '' }, '/title'],
    ['title of 256 chars', { title: 'a'.repeat(256) }, '/title'],
    ['title of 256 two-byte chars', { title: 'é'.repeat(256) }, '/title'],
    ['title null', { title: null }, '/title'],
    ['title a number', { title: 5 }, '/title'],
    ['description of 10,001 chars', { description: 'd'.repeat(10_001) }, '/description'],
    ['description a number', { description: 5 }, '/description'],
    ['description an object', { description: { text: 'x' } }, '/description'],
  ])('rejected: %s', async (_name, overrides, path) => {
    expectRejected(await create(validForm(overrides)), path)
  })

  test('1 field is accepted; fields_count is 1', async () => {
    const form = expectCreated(await create(validForm()))
    expect(form.fields_count).toBe(1)
  })

  test('100 fields are accepted; fields_count is 100', async () => {
    const fields = Array.from({ length: 100 }, (_, i) => ({ key: `f${i}`, type: 'text', label: `Field ${i}` }))
    const form = expectCreated(await create(validForm({ fields })))
    expect(form.fields_count).toBe(100)
    expect((await getForm(form.id as string)).fields.map((f: Json) => f.key)).toEqual(fields.map((f) => f.key))
  })

  test.each<[string, unknown, string]>([
    ['no fields', [], '/fields'],
    [
      '101 fields',
      Array.from({ length: 101 }, (_, i) => ({ key: `f${i}`, type: 'text', label: `Field ${i}` })),
      '/fields',
    ],
    ['fields missing', undefined, '/fields'],
    ['fields an object', { name: { type: 'text', label: 'Name' } }, '/fields'],
    ['fields null', null, '/fields'],
    ['a field that is a string', ['name'], '/fields/0'],
    ['a field that is null', [null], '/fields/0'],
  ])('rejected: %s', async (_name, fields, path) => {
    expectRejected(await create(validForm({ fields })), path)
  })
})

// ---------------------------------------------------------------- field key, label, description, required, type

describe('a field', () => {
  test.each([
    ['a'],
    ['Z'],
    ['a-b_C9'],
    ['A1'],
    ['x-'],
    [`a${'b'.repeat(63)}`], // 64 chars
  ])('key %j is accepted', async (key) => {
    const form = expectCreated(await create(oneField({ ...fieldOf('text'), key })))
    expect((await getForm(form.id as string)).fields[0].key).toBe(key)
  })

  test.each<[string, unknown]>([
    ['65 chars', `a${'b'.repeat(64)}`],
    ['empty', ''],
    ['leading digit', '1abc'],
    ['leading underscore (reserved)', '_x'],
    ['leading hyphen', '-x'],
    ['a space', 'a b'],
    ['a dot', 'a.b'],
    ['a slash', 'a/b'],
    ['a bracket', 'a[0]'],
    ['a non-ASCII letter', 'clé'],
    ['a trailing newline', 'a\n'],
    ['a number', 5],
    ['null', null],
  ])('key rejected: %s', async (_name, key) => {
    expectRejected(await create(oneField({ ...fieldOf('text'), key })), '/fields/0/key')
  })

  test('a missing key is rejected at /fields/0/key', async () => {
    expectRejected(await create(oneField({ type: 'text', label: 'Name' })), '/fields/0/key')
  })

  test('a duplicate key is rejected at the second occurrence', async () => {
    const fields = [fieldOf('text'), { ...fieldOf('number'), key: 'q', label: 'Again' }]
    expectRejected(await create(validForm({ fields })), '/fields/1/key')
  })

  test('a duplicate key further down is rejected at its own index', async () => {
    const fields = [
      { key: 'a', type: 'text', label: 'A' },
      { key: 'b', type: 'text', label: 'B' },
      { key: 'a', type: 'email', label: 'A again' },
    ]
    expectRejected(await create(validForm({ fields })), '/fields/2/key')
  })

  test.each<[string, Json]>([
    ['label of 1 char', { label: 'L' }],
    ['label of 255 chars', { label: 'l'.repeat(255) }],
    ['description of 2,000 chars', { description: 'd'.repeat(2000) }],
    ['description empty', { description: '' }],
    ['required true', { required: true }],
    ['required false', { required: false }],
  ])('accepted: %s', async (_name, extra) => {
    const form = expectCreated(await create(oneField({ ...fieldOf('text'), ...extra })))
    const field = (await getForm(form.id as string)).fields[0]
    for (const [key, value] of Object.entries(extra)) expect(field[key]).toBe(value)
  })

  test.each<[string, Json, string]>([
    ['label empty', { label: '' }, '/fields/0/label'],
    ['label of 256 chars', { label: 'l'.repeat(256) }, '/fields/0/label'],
    ['label missing', { label: undefined }, '/fields/0/label'],
    ['label a number', { label: 7 }, '/fields/0/label'],
    ['description of 2,001 chars', { description: 'd'.repeat(2001) }, '/fields/0/description'],
    ['description a number', { description: 1 }, '/fields/0/description'],
    ['required "true"', { required: 'true' }, '/fields/0/required'],
    ['required 1', { required: 1 }, '/fields/0/required'],
    ['required null', { required: null }, '/fields/0/required'],
    ['type unknown', { type: 'color' }, '/fields/0/type'],
    ['type in capitals', { type: 'TEXT' }, '/fields/0/type'],
    ['type missing', { type: undefined }, '/fields/0/type'],
    ['type a number', { type: 1 }, '/fields/0/type'],
    ['config an array', { config: [] }, '/fields/0/config'],
    ['config a string', { config: 'max_length=5' }, '/fields/0/config'],
  ])('rejected: %s', async (_name, extra, path) => {
    const field = { ...fieldOf('text'), ...extra }
    for (const [key, value] of Object.entries(extra)) if (value === undefined) delete (field as Json)[key]
    expectRejected(await create(oneField(field)), path)
  })

  test('Get Form shows required false and description null when not given', async () => {
    const form = expectCreated(await create(oneField({ key: 'q', type: 'text', label: 'Q' })))
    expect((await getForm(form.id as string)).fields[0]).toStrictEqual({
      key: 'q',
      type: 'text',
      label: 'Q',
      description: null,
      required: false,
      config: {},
    })
  })
})

// ---------------------------------------------------------------- callback_url

describe('callback_url', () => {
  const longUrl = (length: number) => {
    const base = 'https://example.com/hook?'
    return base + 'a'.repeat(length - base.length)
  }

  test.each([
    ['http', 'http://example.com/hook'],
    ['https with query', 'https://example.com/hook?x=1&y=2'],
    ['IP and port', 'http://127.0.0.1:9000/hook'],
    ['upper-case scheme', 'HTTPS://example.com/hook'],
    ['2048 chars', longUrl(2048)],
  ])('accepted: %s', async (_name, url) => {
    expect(url.length).toBeLessThanOrEqual(2048)
    const form = expectCreated(await create(validForm({ callback_url: url })))
    expect((await getForm(form.id as string)).callback_url).toBe(url)
  })

  test.each<[string, unknown]>([
    ['2049 chars', longUrl(2049)],
    ['relative path', '/hook'],
    ['no scheme', 'example.com/hook'],
    ['scheme-relative', '//example.com/hook'],
    ['ftp', 'ftp://example.com/hook'],
    ['file', 'file:///etc/passwd'],
    ['javascript', 'javascript:alert(1)'],
    ['mailto', 'mailto:ops@example.com'],
    ['scheme only', 'http://'],
    ['empty', ''],
    ['a space in the host', 'http://exa mple.com/'],
    ['surrounding spaces', ' http://example.com/hook '],
    ['no slashes after the scheme', 'https:example.com/hook'],
    ['a number', 42],
    ['an object', { url: 'https://example.com' }],
  ])('rejected: %s', async (_name, url) => {
    expectRejected(await create(validForm({ callback_url: url })), '/callback_url')
  })

  test('absent: Get Form shows callback_url null', async () => {
    const form = expectCreated(await create(validForm()))
    expect((await getForm(form.id as string)).callback_url).toBeNull()
  })
})
