/**
 * POST /api/v1/forms (CONTRACT 3, 4), through HTTP: callback_metadata, context
 * and settings, expires_in, and the 201 response.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import {
  contextOfBytes,
  createRequests,
  DAY,
  expectCreated,
  expectRejected,
  HOUR,
  type Json,
  MINUTE,
  ms,
  nestedArrayText,
  nestedObject,
  type PathMatcher,
  utf8Bytes,
} from './forms-create-fixtures.ts'
import { API_TIME_PATTERN, BASE_URL, createTestContext, type TestContext, validForm } from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())
const { create, getForm } = createRequests(() => t)

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
