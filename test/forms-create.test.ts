/**
 * POST /api/v1/forms: every rule of CONTRACT section 4 (and the create-body
 * rows of section 3), accepted and rejected at each boundary, through HTTP.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import {
  API_TIME_PATTERN,
  BASE_URL,
  createTestContext,
  send,
  type TestContext,
  type TestResponse,
  validForm,
} from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())

// ---------------------------------------------------------------- helpers

type Json = Record<string, unknown>
type PathMatcher = string | RegExp

const create = (body?: unknown) => t.api.post('/forms', body)

/**
 * Status and a fresh copy of the body, so a failing expectation shows what came
 * back. (Bun's toMatchObject writes its matchers into the object it receives.)
 */
const outcome = (res: TestResponse) => {
  let body: unknown = res.text
  try {
    body = JSON.parse(res.text)
  } catch {}
  return { status: res.status, body }
}

function expectCreated(res: TestResponse): Json {
  expect(outcome(res)).toMatchObject({ status: 201, body: { id: expect.any(String) } })
  return res.body
}

/** A 422 with a `detail` string and an `errors` array naming each of `paths` (a RegExp matches one of several paths). */
function expectRejected(res: TestResponse, ...paths: PathMatcher[]) {
  expect(outcome(res)).toMatchObject({ status: 422, body: { detail: expect.any(String), errors: expect.any(Array) } })
  expect(res.body.errors.length).toBeGreaterThan(0)
  for (const error of res.body.errors) {
    expect(error).toEqual(expect.objectContaining({ path: expect.any(String), message: expect.any(String) }))
  }
  for (const path of paths) {
    const matcher = typeof path === 'string' ? path : expect.stringMatching(path)
    expect({ status: res.status, errors: structuredClone(res.body.errors) }).toEqual({
      status: 422,
      errors: expect.arrayContaining([expect.objectContaining({ path: matcher })]),
    })
  }
}

/** A create body whose only field is `field`. */
const oneField = (field: Json, overrides: Json = {}) => validForm({ fields: [field], ...overrides })

/** A field of `type` keyed `q`, with `config` when given. */
const fieldOf = (type: string, config?: unknown, extra: Json = {}) => ({
  key: 'q',
  type,
  label: 'Question',
  ...(config === undefined ? {} : { config }),
  ...extra,
})

const getForm = async (id: string) => {
  const res = await t.api.get(`/forms/${id}`)
  expect(outcome(res)).toMatchObject({ status: 200 })
  return res.body
}

const ms = (apiTime: string) => Date.parse(`${apiTime}Z`)
const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
const MiB = 1024 * 1024

/** `depth` nested objects: {"a":{"a":...{}}}. The outermost counts as level 1. */
function nestedObject(depth: number): Json {
  let value: Json = {}
  for (let i = 1; i < depth; i++) value = { a: value }
  return value
}

/** Raw JSON text of `depth` nested arrays, built as text so no recursion is needed. */
const nestedArrayText = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)

const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8')

/** A context object whose compact UTF-8 JSON is exactly `bytes` long, `prefix` first, padded with ASCII. */
function contextOfBytes(bytes: number, prefix = ''): Json {
  const base = utf8Bytes(JSON.stringify({ s: prefix }))
  const context = { s: prefix + 'x'.repeat(bytes - base) }
  expect(utf8Bytes(JSON.stringify(context))).toBe(bytes)
  return context
}

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

// ---------------------------------------------------------------- free-form objects and context

describe('callback_metadata, context and settings', () => {
  const nonObjects: Array<[string, unknown]> = [
    ['an empty array', []],
    ['an array', [{ a: 1 }]],
    ['a string', 'x'],
    ['a number', 1],
    ['a boolean', true],
  ]
  const cases = ['callback_metadata', 'context', 'settings'].flatMap((name) =>
    nonObjects.map(([what, value]) => [name, what, value] as [string, string, unknown]),
  )

  test.each(cases)('%s as %s: 422 at its path', async (name, _what, value) => {
    expectRejected(await create(validForm({ [name]: value })), `/${name}`)
  })

  test('none given: context null in the 201 and in Get Form; callback_metadata and settings {}', async () => {
    const form = expectCreated(await create(validForm()))
    expect(form.context).toBeNull()
    const detail = await getForm(form.id as string)
    expect(detail.context).toBeNull()
    expect(detail.callback_metadata).toStrictEqual({})
    expect(detail.settings).toStrictEqual({})
  })

  test('context null is accepted and returned as null', async () => {
    const form = expectCreated(await create(validForm({ context: null })))
    expect(form.context).toBeNull()
  })

  test('an empty context {} is returned as {}', async () => {
    const form = expectCreated(await create(validForm({ context: {} })))
    expect(form.context).toStrictEqual({})
    expect((await getForm(form.id as string)).context).toStrictEqual({})
  })

  test('context is returned exactly as given: __proto__, constructor, unicode, key order, every JSON type', async () => {
    const contextText =
      '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},' +
      '"zeta":1,"alpha":2,"ü":"日本語 😀 é","nested":{"b":[1,2.5,-3,null,true,false,"s"],"a":{}},' +
      '"quote":"say \\"hi\\"\\nnext line","empty":[]}'
    const raw = `{"title":"T","fields":[{"key":"a","type":"text","label":"A"}],"context":${contextText}}`
    const form = expectCreated(await create(raw))
    expect(JSON.stringify(form.context)).toBe(contextText)
    expect(Object.keys(form.context as Json)).toContain('__proto__')
    const detail = await getForm(form.id as string)
    expect(JSON.stringify(detail.context)).toBe(contextText)
    // Nothing leaked onto the shared prototype.
    expect(({} as Json).polluted).toBeUndefined()
  })

  test('a context number beyond double range is refused at its path, never silently turned into null', async () => {
    const raw = '{"title":"T","fields":[{"key":"a","type":"text","label":"A"}],"context":{"huge":1e400}}'
    expectRejected(await create(raw), '/context/huge')
  })

  test.each(['context', 'callback_metadata', 'settings'])(
    '%s: an integer that would lose digits is refused at its path; the largest exact one is kept',
    async (name) => {
      const lossy = `{"title":"T","fields":[{"key":"a","type":"text","label":"A"}],"${name}":{"ids":[1,12345678901234567890]}}`
      expectRejected(await create(lossy), `/${name}/ids/1`)
      const exact = `{"title":"T","fields":[{"key":"a","type":"text","label":"A"}],"${name}":{"ids":[1,9007199254740991]}}`
      const form = expectCreated(await create(exact))
      expect(JSON.stringify((await getForm(form.id as string))[name])).toBe('{"ids":[1,9007199254740991]}')
    },
  )

  test.each(['callback_metadata', 'settings'])('%s null means none: returned as {}', async (name) => {
    const form = expectCreated(await create(validForm({ [name]: null })))
    expect((await getForm(form.id as string))[name]).toStrictEqual({})
  })

  describe('context size (compact UTF-8 JSON bytes)', () => {
    test.each<[string, string]>([
      ['ASCII', ''],
      ['with 2-, 3- and 4-byte characters', '€😀é'.repeat(2000)],
      ['with characters JSON escapes', '"\\\n'.repeat(1000)],
    ])('%s: exactly 65,536 bytes accepted and returned as given', async (_name, prefix) => {
      const context = contextOfBytes(65_536, prefix)
      const form = expectCreated(await create(validForm({ context })))
      expect(form.context).toStrictEqual(context)
    })

    test.each<[string, string]>([
      ['ASCII', ''],
      ['with 2-, 3- and 4-byte characters', '€😀é'.repeat(2000)],
      ['with characters JSON escapes', '"\\\n'.repeat(1000)],
    ])('%s: 65,537 bytes rejected at /context', async (_name, prefix) => {
      expectRejected(await create(validForm({ context: contextOfBytes(65_537, prefix) })), '/context')
    })

    test('multi-byte characters count as their UTF-8 bytes, not as characters', async () => {
      const context = contextOfBytes(65_537, '€😀é'.repeat(2000))
      // Far fewer UTF-16 units (and characters) than bytes: only a byte count rejects it.
      expect(JSON.stringify(context).length).toBeLessThan(65_536)
      expectRejected(await create(validForm({ context })), '/context')
    })

    test('whitespace in the request does not count: a pretty-printed context of 65,536 compact bytes is accepted', async () => {
      const context = { ...contextOfBytes(65_536 - 200), more: { a: [1, 2, 3], b: 'é' } }
      const padded = {
        ...context,
        more: { ...context.more, b: 'é'.padEnd(1 + 65_536 - utf8Bytes(JSON.stringify(context)), 'x') },
      }
      expect(utf8Bytes(JSON.stringify(padded))).toBe(65_536)
      const raw = JSON.stringify(validForm({ context: padded }), null, 4)
      expect(utf8Bytes(raw)).toBeGreaterThan(65_536 + 100)
      const form = expectCreated(await create(raw))
      expect(form.context).toStrictEqual(padded)
    })
  })

  describe('nesting depth', () => {
    test.each(['context', 'settings', 'callback_metadata'])(
      '%s nested 100 levels deep is accepted and returned as given',
      async (name) => {
        const value = nestedObject(100)
        const form = expectCreated(await create(validForm({ [name]: value })))
        expect((await getForm(form.id as string))[name]).toStrictEqual(value)
      },
    )

    test.each(['context', 'settings', 'callback_metadata'])(
      '%s nested 101 levels deep: 422 at its path',
      async (name) => {
        expectRejected(await create(validForm({ [name]: nestedObject(101) })), `/${name}`)
      },
    )

    // Far deeper than any valid body: refused before it is parsed, at the body's member that holds it.
    const deep = nestedArrayText(100_000)
    const head = '{"title":"T","fields":[{"key":"a","type":"text","label":"A"}]'
    test.each<[string, string, PathMatcher | undefined]>([
      ['context holding 100,000 nested arrays', `${head},"context":{"a":${deep}}}`, '/context'],
      ['settings holding 100,000 nested arrays', `${head},"settings":{"a":${deep}}}`, '/settings'],
      [
        'callback_metadata holding 100,000 nested arrays',
        `${head},"callback_metadata":{"a":${deep}}}`,
        '/callback_metadata',
      ],
      ['an unknown top-level key holding 100,000 nested arrays', `${head},"deep":${deep}}`, '/deep'],
      [
        'a title that is 100,000 nested arrays',
        `{"title":${deep},"fields":[{"key":"a","type":"text","label":"A"}]}`,
        '/title',
      ],
      ['a field that is 100,000 nested arrays', `{"title":"T","fields":[${deep}]}`, '/fields'],
      [
        'a config key holding 100,000 nested arrays',
        `{"title":"T","fields":[{"key":"a","type":"text","label":"A","config":{"default":${deep}}}]}`,
        '/fields',
      ],
      [
        'select options of 100,000 nested arrays',
        `{"title":"T","fields":[{"key":"a","type":"select","label":"A","config":{"options":${deep}}}]}`,
        '/fields',
      ],
      ['a body that is 100,000 nested arrays', deep, undefined],
    ])('%s: 422, never 500', async (_name, raw, path) => {
      const res = await create(raw)
      if (path === undefined) expectRejected(res)
      else expectRejected(res, path)
    })
  })
})

// ---------------------------------------------------------------- expires_in

describe('expires_in', () => {
  test('absent: expires_at is created_at + 48h, created_at is the server clock', async () => {
    const form = expectCreated(await create(validForm()))
    expect(form.created_at).toBe(new Date(t.clock()).toISOString().slice(0, -1))
    expect(ms(form.expires_at as string) - ms(form.created_at as string)).toBe(48 * HOUR)
  })

  test('null: expires_at is null (never expires)', async () => {
    const form = expectCreated(await create(validForm({ expires_in: null })))
    expect(form.expires_at).toBeNull()
    expect((await getForm(form.id as string)).expires_at).toBeNull()
  })

  test.each<[string, number]>([
    ['1m', MINUTE],
    ['90m', 90 * MINUTE],
    ['1h', HOUR],
    ['48h', 48 * HOUR],
    ['7d', 7 * DAY],
    ['365d', 365 * DAY],
    ['8760h', 8760 * HOUR],
    ['525600m', 525_600 * MINUTE],
  ])('%j accepted: expires_at = created_at + its duration', async (expiresIn, duration) => {
    const form = expectCreated(await create(validForm({ expires_in: expiresIn })))
    expect(form.expires_at).toMatch(API_TIME_PATTERN)
    expect(ms(form.expires_at as string) - ms(form.created_at as string)).toBe(duration)
  })

  test.each<[unknown]>([
    ['0m'],
    ['0h'],
    ['01h'],
    ['1w'],
    ['1s'],
    ['1H'],
    ['366d'],
    ['8761h'],
    ['525601m'],
    ['999999m'],
    ['1000000m'],
    ['1.5h'],
    ['-1h'],
    ['+1h'],
    [' 1h'],
    ['1h '],
    ['48h\n'],
    ['1 h'],
    ['h'],
    ['48'],
    [''],
    ['PT48H'],
    [5],
    [48],
    [true],
    [{ hours: 48 }],
  ])('%j rejected at /expires_in', async (expiresIn) => {
    expectRejected(await create(validForm({ expires_in: expiresIn })), '/expires_in')
  })
})

// ---------------------------------------------------------------- field types and their config

const ALL_TYPES = ['text', 'textarea', 'email', 'number', 'select', 'checkbox', 'date', 'file'] as const
/** A config each type accepts, so an extra key is the only problem. */
const MINIMAL_CONFIG: Record<string, Json> = {
  text: {},
  textarea: {},
  email: {},
  number: {},
  select: { options: ['a'] },
  checkbox: {},
  date: {},
  file: {},
}

const options = (n: number) => Array.from({ length: n }, (_, i) => `option-${i}`)

/** [type, what, config]: each accepted key with a valid value, and the accepted boundaries. */
const ACCEPTED_CONFIGS: Array<[string, string, Json]> = [
  // text
  ['text', 'placeholder', { placeholder: 'Jane Doe' }],
  ['text', 'default', { default: 'Ada' }],
  ['text', 'min_length 0', { min_length: 0 }],
  ['text', 'min_length and max_length', { min_length: 2, max_length: 5 }],
  ['text', 'min_length = max_length', { min_length: 5, max_length: 5 }],
  ['text', 'min_length 1000 (= default max_length)', { min_length: 1000 }],
  ['text', 'default of 1000 chars (default max_length)', { default: 'x'.repeat(1000) }],
  ['text', 'default of exactly max_length', { max_length: 5, default: 'abcde' }],
  ['text', 'default of exactly min_length', { min_length: 3, default: 'abc' }],
  ['text', 'pattern', { pattern: '[A-Z][a-z]+' }],
  ['text', 'default matching pattern', { pattern: '[0-9]{3}', default: '123' }],
  [
    'text',
    'every key',
    { placeholder: 'ABC-123', default: 'XYZ-999', min_length: 7, max_length: 7, pattern: '[A-Z]{3}-[0-9]{3}' },
  ],
  // textarea
  ['textarea', 'placeholder', { placeholder: 'Tell us more' }],
  ['textarea', 'default', { default: 'line one\nline two' }],
  ['textarea', 'min_length and max_length', { min_length: 10, max_length: 500 }],
  ['textarea', 'rows 1', { rows: 1 }],
  ['textarea', 'rows 50', { rows: 50 }],
  ['textarea', 'default of 10,000 chars (default max_length)', { default: 'x'.repeat(10_000) }],
  ['textarea', 'every key', { placeholder: 'p', default: 'hello world', min_length: 5, max_length: 20, rows: 6 }],
  // email
  ['email', 'placeholder', { placeholder: 'name@example.com' }],
  ['email', 'default', { default: 'ada@example.com' }],
  ['email', 'every key', { placeholder: 'you@work.example', default: 'ops+alerts@sub.example.org' }],
  // number
  ['number', 'placeholder', { placeholder: 'e.g. 3' }],
  ['number', 'default', { default: 2.5 }],
  ['number', 'min', { min: -10 }],
  ['number', 'max', { max: 10 }],
  ['number', 'min = max', { min: 2, max: 2 }],
  ['number', 'step 0.5', { step: 0.5 }],
  ['number', 'step 0.01', { step: 0.01 }],
  ['number', 'default = min', { min: 1, max: 10, default: 1 }],
  ['number', 'default = max', { min: 1, max: 10, default: 10 }],
  ['number', 'default on step', { step: 2, default: 4 }],
  ['number', 'default on step counted from min', { min: 1, step: 2, default: 3 }],
  ['number', 'default on a decimal step', { step: 0.1, default: 0.3 }],
  ['number', 'every key', { placeholder: 'guests', default: 4, min: 0, max: 10, step: 1 }],
  // select
  ['select', '1 option', { options: ['only'] }],
  ['select', '1,000 options', { options: options(1000) }],
  ['select', 'strings and {value,label} objects', { options: ['fish', { value: 'veg', label: 'Vegetarian' }] }],
  ['select', 'placeholder', { options: ['a', 'b'], placeholder: 'Pick one' }],
  ['select', 'default a string option', { options: ['a', 'b'], default: 'b' }],
  ['select', 'default an object option value', { options: [{ value: 'v', label: 'Label' }], default: 'v' }],
  ['select', 'values differing only in case', { options: ['a', 'A'] }],
  ['select', 'every key', { options: ['x', { value: 'y', label: 'Why' }], placeholder: 'Choose', default: 'y' }],
  // checkbox
  ['checkbox', 'default true', { default: true }],
  ['checkbox', 'default false', { default: false }],
  // date
  ['date', 'default', { default: '2026-06-01' }],
  ['date', 'min', { min: '2026-01-01' }],
  ['date', 'max', { max: '2026-12-31' }],
  ['date', 'min = max', { min: '2026-03-03', max: '2026-03-03' }],
  ['date', 'default on a leap day', { default: '2024-02-29' }],
  ['date', 'default = min', { min: '2026-01-01', max: '2026-12-31', default: '2026-01-01' }],
  ['date', 'default = max', { min: '2026-01-01', max: '2026-12-31', default: '2026-12-31' }],
  ['date', 'every key', { min: '2026-01-01', max: '2026-12-31', default: '2026-06-15' }],
  // file
  ['file', 'accept image/*,.pdf', { accept: 'image/*,.pdf' }],
  ['file', 'accept a media type', { accept: 'application/pdf' }],
  ['file', 'accept an extension', { accept: '.pdf' }],
  ['file', 'accept with spaces after commas', { accept: 'image/png, image/jpeg, .heic' }],
  ['file', 'max_size 1', { max_size: 1 }],
  ['file', 'max_size 26214400 (25 MiB)', { max_size: 26_214_400 }],
  ['file', 'every key', { accept: 'image/*', max_size: 1024 }],
]

/** [type, what, config, path]: rejected configs and where the error must point. */
const REJECTED_CONFIGS: Array<[string, string, unknown, PathMatcher]> = [
  // text
  ['text', 'pattern that does not compile', { pattern: '(' }, '/fields/0/config/pattern'],
  ['text', 'pattern with an unclosed class', { pattern: '[a-' }, '/fields/0/config/pattern'],
  ['text', 'pattern with a reversed quantifier', { pattern: 'a{2,1}' }, '/fields/0/config/pattern'],
  ['text', 'min_length > max_length', { min_length: 6, max_length: 5 }, /^\/fields\/0\/config\/(min|max)_length$/],
  ['text', 'min_length > the default max_length 1000', { min_length: 1001 }, /^\/fields\/0\/config\/(min|max)_length$/],
  ['text', 'default longer than max_length', { max_length: 5, default: 'abcdef' }, '/fields/0/config/default'],
  [
    'text',
    'default longer than the default max_length 1000',
    { default: 'x'.repeat(1001) },
    '/fields/0/config/default',
  ],
  ['text', 'default shorter than min_length', { min_length: 3, default: 'ab' }, '/fields/0/config/default'],
  ['text', 'default not matching pattern', { pattern: '[0-9]+', default: '12a' }, '/fields/0/config/default'],
  ['text', 'default matching pattern only in part', { pattern: 'abc', default: 'xabcx' }, '/fields/0/config/default'],
  ['text', 'min_length negative', { min_length: -1 }, '/fields/0/config/min_length'],
  ['text', 'min_length not an integer', { min_length: 1.5 }, '/fields/0/config/min_length'],
  ['text', 'max_length a string', { max_length: '10' }, '/fields/0/config/max_length'],
  ['text', 'default a number', { default: 5 }, '/fields/0/config/default'],
  ['text', 'placeholder a number', { placeholder: 5 }, '/fields/0/config/placeholder'],
  // textarea
  ['textarea', 'rows 0', { rows: 0 }, '/fields/0/config/rows'],
  ['textarea', 'rows 51', { rows: 51 }, '/fields/0/config/rows'],
  ['textarea', 'rows not an integer', { rows: 2.5 }, '/fields/0/config/rows'],
  ['textarea', 'rows a string', { rows: '4' }, '/fields/0/config/rows'],
  [
    'textarea',
    'min_length > max_length',
    { min_length: 20, max_length: 10 },
    /^\/fields\/0\/config\/(min|max)_length$/,
  ],
  ['textarea', 'default longer than max_length', { max_length: 5, default: 'abcdef' }, '/fields/0/config/default'],
  [
    'textarea',
    'default longer than the default max_length 10,000',
    { default: 'x'.repeat(10_001) },
    '/fields/0/config/default',
  ],
  ['textarea', 'default shorter than min_length', { min_length: 5, default: 'abc' }, '/fields/0/config/default'],
  ['textarea', 'pattern (a text-only key)', { pattern: '.*' }, '/fields/0/config/pattern'],
  // email
  ['email', 'default not an address', { default: 'not an email' }, '/fields/0/config/default'],
  ['email', 'default without a domain', { default: 'ada@' }, '/fields/0/config/default'],
  ['email', 'default without a local part', { default: '@example.com' }, '/fields/0/config/default'],
  [
    'email',
    'default longer than 254 chars',
    { default: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com` },
    '/fields/0/config/default',
  ],
  ['email', 'default a number', { default: 1 }, '/fields/0/config/default'],
  ['email', 'min_length (not an email key)', { min_length: 3 }, '/fields/0/config/min_length'],
  // number
  ['number', 'step 0', { step: 0 }, '/fields/0/config/step'],
  ['number', 'step negative', { step: -1 }, '/fields/0/config/step'],
  ['number', 'step a string', { step: '1' }, '/fields/0/config/step'],
  ['number', 'min > max', { min: 5, max: 1 }, /^\/fields\/0\/config\/(min|max)$/],
  ['number', 'default above max', { max: 10, default: 11 }, '/fields/0/config/default'],
  ['number', 'default below min', { min: 1, default: 0 }, '/fields/0/config/default'],
  ['number', 'default off step', { step: 2, default: 3 }, '/fields/0/config/default'],
  ['number', 'default off step counted from min', { min: 1, step: 2, default: 4 }, '/fields/0/config/default'],
  ['number', 'default a numeric string', { default: '5' }, '/fields/0/config/default'],
  ['number', 'min a string', { min: '1' }, '/fields/0/config/min'],
  ['number', 'max a string', { max: '10' }, '/fields/0/config/max'],
  ['number', 'min_length (not a number key)', { min_length: 1 }, '/fields/0/config/min_length'],
  // select
  ['select', 'no options', { options: [] }, '/fields/0/config/options'],
  ['select', '1,001 options', { options: options(1001) }, '/fields/0/config/options'],
  ['select', 'options missing', {}, '/fields/0/config/options'],
  ['select', 'options a string', { options: 'a,b' }, '/fields/0/config/options'],
  [
    'select',
    'an option object with an extra key',
    { options: ['a', { value: 'b', label: 'B', extra: 1 }] },
    /^\/fields\/0\/config\/options\/1(\/extra)?$/,
  ],
  [
    'select',
    'an option object without label',
    { options: [{ value: 'b' }] },
    /^\/fields\/0\/config\/options\/0(\/label)?$/,
  ],
  [
    'select',
    'an option object without value',
    { options: [{ label: 'B' }] },
    /^\/fields\/0\/config\/options\/0(\/value)?$/,
  ],
  ['select', 'an option that is a number', { options: ['a', 5] }, /^\/fields\/0\/config\/options\/1$/],
  ['select', 'duplicate string values', { options: ['a', 'b', 'a'] }, /^\/fields\/0\/config\/options(\/2)?$/],
  [
    'select',
    'duplicate values across a string and an object',
    { options: ['a', { value: 'a', label: 'Also a' }] },
    /^\/fields\/0\/config\/options(\/1)?$/,
  ],
  [
    'select',
    'duplicate object values',
    {
      options: [
        { value: 'v', label: 'One' },
        { value: 'v', label: 'Two' },
      ],
    },
    /^\/fields\/0\/config\/options(\/1)?$/,
  ],
  ['select', 'default not among the values', { options: ['a', 'b'], default: 'z' }, '/fields/0/config/default'],
  [
    'select',
    'default an option label, not its value',
    { options: [{ value: 'v', label: 'Label' }], default: 'Label' },
    '/fields/0/config/default',
  ],
  ['select', 'default a number', { options: ['1', '2'], default: 1 }, '/fields/0/config/default'],
  // checkbox
  ['checkbox', 'default "true"', { default: 'true' }, '/fields/0/config/default'],
  ['checkbox', 'default 1', { default: 1 }, '/fields/0/config/default'],
  ['checkbox', 'default null', { default: null }, '/fields/0/config/default'],
  ['checkbox', 'placeholder (not a checkbox key)', { placeholder: 'x' }, '/fields/0/config/placeholder'],
  // date
  ['date', 'default 2026-02-30', { default: '2026-02-30' }, '/fields/0/config/default'],
  ['date', 'default 2025-02-29 (not a leap year)', { default: '2025-02-29' }, '/fields/0/config/default'],
  ['date', 'min 2026-02-30', { min: '2026-02-30' }, '/fields/0/config/min'],
  ['date', 'max 2026-13-01', { max: '2026-13-01' }, '/fields/0/config/max'],
  ['date', 'default without zero padding', { default: '2026-6-1' }, '/fields/0/config/default'],
  ['date', 'default with a time', { default: '2026-06-01T00:00:00' }, '/fields/0/config/default'],
  ['date', 'default in another format', { default: '01/06/2026' }, '/fields/0/config/default'],
  ['date', 'default a number', { default: 20260601 }, '/fields/0/config/default'],
  ['date', 'min > max', { min: '2026-12-31', max: '2026-01-01' }, /^\/fields\/0\/config\/(min|max)$/],
  ['date', 'default before min', { min: '2026-01-01', default: '2025-12-31' }, '/fields/0/config/default'],
  ['date', 'default after max', { max: '2026-12-31', default: '2027-01-01' }, '/fields/0/config/default'],
  // file
  ['file', 'accept "not a type"', { accept: 'not a type' }, '/fields/0/config/accept'],
  ['file', 'accept with a bare word', { accept: 'image/*,pdf' }, '/fields/0/config/accept'],
  ['file', 'accept a number', { accept: 5 }, '/fields/0/config/accept'],
  ['file', 'max_size 0', { max_size: 0 }, '/fields/0/config/max_size'],
  ['file', 'max_size 26214401', { max_size: 26_214_401 }, '/fields/0/config/max_size'],
  ['file', 'max_size negative', { max_size: -1 }, '/fields/0/config/max_size'],
  ['file', 'max_size not an integer', { max_size: 1.5 }, '/fields/0/config/max_size'],
  ['file', 'max_size a string', { max_size: '1024' }, '/fields/0/config/max_size'],
  ['file', 'default (not a file key)', { default: 'x' }, '/fields/0/config/default'],
]

describe('field config', () => {
  test.each(ACCEPTED_CONFIGS)(
    '%s accepts %s, and Get Form returns the config exactly as given',
    async (type, _what, config) => {
      const form = expectCreated(await create(oneField(fieldOf(type, config))))
      const field = (await getForm(form.id as string)).fields[0]
      expect(field.type).toBe(type)
      expect(field.config).toStrictEqual(config)
      // Exactly as given: no defaults filled in, keys in the order sent.
      expect(JSON.stringify(field.config)).toBe(JSON.stringify(config))
    },
  )

  test.each(REJECTED_CONFIGS)('%s rejects %s', async (type, _what, config, path) => {
    expectRejected(await create(oneField(fieldOf(type, config))), path)
  })

  test.each(ALL_TYPES.map((type) => [type]))(
    '%s rejects an unknown config key at /fields/0/config/bogus',
    async (type) => {
      const config = { ...MINIMAL_CONFIG[type], bogus: 1 }
      expectRejected(await create(oneField(fieldOf(type, config))), '/fields/0/config/bogus')
    },
  )

  test.each(ALL_TYPES.filter((type) => type !== 'select').map((type) => [type]))(
    '%s without config: Get Form returns config {}',
    async (type) => {
      const form = expectCreated(await create(oneField(fieldOf(type))))
      expect((await getForm(form.id as string)).fields[0].config).toStrictEqual({})
    },
  )

  test.each(ALL_TYPES.filter((type) => type !== 'select').map((type) => [type]))(
    '%s with config {}: Get Form returns config {}',
    async (type) => {
      const form = expectCreated(await create(oneField(fieldOf(type, {}))))
      expect((await getForm(form.id as string)).fields[0].config).toStrictEqual({})
    },
  )

  test('select without any config (so without options): 422 at its config, never 500', async () => {
    expectRejected(await create(oneField(fieldOf('select'))), /^\/fields\/0\/config(\/options)?$/)
  })

  test('every type in one form, each config returned exactly as given', async () => {
    const fields = [
      { key: 'name', type: 'text', label: 'Name', required: true, config: { max_length: 50, pattern: '[A-Za-z ]+' } },
      { key: 'notes', type: 'textarea', label: 'Notes', config: { rows: 3 } },
      { key: 'email', type: 'email', label: 'Email' },
      { key: 'guests', type: 'number', label: 'Guests', config: { min: 1, max: 10, step: 1, default: 2 } },
      {
        key: 'meal',
        type: 'select',
        label: 'Meal',
        config: { options: ['fish', { value: 'veg', label: 'Vegetarian' }] },
      },
      { key: 'agree', type: 'checkbox', label: 'I agree', required: true, config: { default: false } },
      { key: 'day', type: 'date', label: 'Day', config: { min: '2026-01-01', max: '2026-12-31' } },
      { key: 'photo', type: 'file', label: 'Photo', config: { accept: 'image/*', max_size: 1024 } },
    ]
    const form = expectCreated(await create(validForm({ fields })))
    expect(form.fields_count).toBe(8)
    const detail = await getForm(form.id as string)
    expect(detail.fields.map((f: Json) => [f.key, f.type, f.config])).toStrictEqual(
      fields.map((f) => [f.key, f.type, f.config ?? {}]),
    )
  })

  test('an error in the second field points at index 1', async () => {
    const fields = [fieldOf('text'), { ...fieldOf('textarea', { rows: 0 }), key: 'r' }]
    expectRejected(await create(validForm({ fields })), '/fields/1/config/rows')
  })
})

// ---------------------------------------------------------------- the 201 body

describe('the 201 response', () => {
  test('has exactly the Form keys, with url, status, counts and times as the contract fixes them', async () => {
    const res = await create(
      validForm({ description: 'Please answer', context: { a: 1 }, callback_url: 'https://example.com/hook' }),
    )
    const form = expectCreated(res)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(Object.keys(form).sort()).toEqual(
      [
        'id',
        'title',
        'description',
        'url',
        'status',
        'fields_count',
        'expires_at',
        'created_at',
        'context',
        'page',
      ].sort(),
    )
    expect(form.id).toMatch(/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/)
    expect(form.title).toBe('Travel preferences')
    expect(form.description).toBe('Please answer')
    expect(form.url).toBe(`${BASE_URL}/f/${form.id}`)
    expect(form.status).toBe('active')
    expect(form.fields_count).toBe(1)
    expect(form.created_at).toMatch(API_TIME_PATTERN)
    expect(form.expires_at).toMatch(API_TIME_PATTERN)
    expect(form.context).toStrictEqual({ a: 1 })
  })

  test('never carries the webhook secret', async () => {
    const res = await create(validForm({ callback_url: 'https://example.com/hook' }))
    expectCreated(res)
    expect(res.text).not.toMatch(/secret/i)
    expect(res.text).not.toMatch(/[0-9a-f]{64}/)
  })

  test('each create gets its own id, and Get Form finds it', async () => {
    const a = expectCreated(await create(validForm()))
    const b = expectCreated(await create(validForm()))
    expect(a.id).not.toBe(b.id)
    const detail = await getForm(b.id as string)
    expect(detail.id).toBe(b.id)
    expect(detail.url).toBe(`${BASE_URL}/f/${b.id}`)
  })
})
