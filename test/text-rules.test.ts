/**
 * The text rules of CONTRACT 11 and 13: a field `pattern` means what it means
 * to the browser (the `v` flag, the whole value) and is matched in linear
 * time, or refused with `invalid_pattern`; text intake shows or matches holds
 * no C0 control character but tab, LF and CR (`control_character`), while
 * the free-form JSON is kept as given.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { fieldTypes } from '../src/fields/index.ts'
import { createTestContext, postForm, send, submit, type TestContext, validForm } from './utils.ts'

let t: TestContext
beforeAll(async () => {
  t = await createTestContext()
})
afterAll(() => t.close())

const MCP_HEADERS = { accept: 'application/json, text/event-stream' }
const browserMatches = (pattern: string, value: string) => new RegExp(`^(?:${pattern})$`, 'v').test(value)
const textField = (config: Record<string, unknown>) => ({
  title: 'Code',
  fields: [{ key: 'code', type: 'text', label: 'Code', config }],
})

// ---------------------------------------------------------------- patterns

describe('a pattern matches what the browser matches', () => {
  /** Patterns whose meaning differs between JavaScript and RE2 unless translated. */
  const PATTERNS = [
    '[a-z]+',
    '\\d{3}-\\d{4}',
    'a.c',
    '.+',
    '[.]+',
    '\\.',
    '\\s+x',
    '\\S+',
    '[\\s\\S]{2}',
    '[^\\s]+',
    '[^\\S]+',
    '[\\S\\d]+',
    '\\w+',
    '\\W+',
    '\\D+',
    '[\\w\\-]+',
    '\\bfoo\\b.*',
    '\\p{L}+',
    '\\p{Lu}\\p{Ll}*',
    '\\P{L}+',
    '\\p{Letter}+',
    '\\p{gc=Nd}+',
    '\\p{Script=Greek}+',
    '\\p{sc=Cyrillic}+',
    '\\u00e9+',
    '\\u{1F600}+',
    '\\uD83D\\uDE00',
    '[\\u0041-\\u005A]+',
    '\\x41+',
    '[😀-😂]+',
    '😀+',
    '[^]+',
    '[]|x',
    '(?<year>\\d{4})-(?<month>\\d{2})',
    '(a|b|c){2,4}',
    'x{0,3}y',
    '(?:ab)+?',
    '^a$|b',
    '[\\-\\]]+',
    '\\/+',
    '[\\b]|x',
  ]
  const VALUES = [
    'abc',
    'a.c',
    'abc!',
    '123-4567',
    'é',
    'ééé',
    'ABC',
    'Abc',
    'αβγ',
    'абв',
    '😀',
    '😀😀',
    '😁',
    'x\u00a0',
    '\u00a0x',
    ' x',
    '\u2028x',
    'a\u2028c',
    '\ufeffx',
    '\u3000x',
    'a\tb',
    'x',
    'xyz',
    'foo bar',
    'a-b_c',
    '2026-06',
    '12',
    'aab',
    'abab',
    'y',
    '-]-',
    '//',
    'ab',
    '٣',
    'Ω',
    'ǅ',
    'x\u200bx',
    '\u00e9',
    'e\u0301',
  ]

  test.each(PATTERNS)('%s: every value, as the browser decides', async (pattern) => {
    const verdicts: string[] = []
    for (const value of VALUES) {
      const parsed = await fieldTypes.text!.parse(value, { pattern }, false)
      const accepted = parsed.kind === 'value'
      if (accepted !== browserMatches(pattern, value))
        verdicts.push(`${JSON.stringify(value)}: intake ${accepted}, browser ${!accepted}`)
    }
    expect(verdicts).toEqual([])
    expect(await patternProblem(pattern)).toBeUndefined()
  })

  test('generated patterns: intake and the browser agree on generated values', async () => {
    const atom = fc.constantFrom(
      'a',
      'b',
      '.',
      '\\s',
      '\\S',
      '\\d',
      '\\w',
      '[ab]',
      '[^a]',
      '[\\s\\d]',
      '\\p{L}',
      '\\P{Lu}',
      'é',
      '😀',
      '\\u{1F600}',
      '[a-c😀]',
      '\\x61',
      '[^]',
      '\\.',
    )
    const pattern: fc.Arbitrary<string> = fc.letrec<{ p: string }>((tie) => ({
      p: fc.oneof(
        { depthSize: 'small' },
        atom,
        fc.tuple(tie('p'), tie('p')).map(([x, y]) => `${x}${y}`),
        fc.tuple(tie('p'), tie('p')).map(([x, y]) => `(?:${x}|${y})`),
        fc
          .tuple(tie('p'), fc.constantFrom('*', '+', '?', '{2}', '{1,3}', '*?', '{0,}'))
          .map(([x, q]) => `(?:${x})${q}`),
      ),
    })).p
    const value = fc.string({
      unit: fc.constantFrom('a', 'b', 'c', '1', ' ', '\u00a0', '\u2028', 'é', 'É', '😀', '.', '_', '\t', 'x', 'Ω'),
      maxLength: 8,
    })
    await fc.assert(
      fc.asyncProperty(pattern, fc.array(value, { minLength: 1, maxLength: 10 }), async (p, values) => {
        for (const v of values) {
          if (v.trim() === '') continue
          const parsed = await fieldTypes.text!.parse(v, { pattern: p }, false)
          expect({ pattern: p, value: v, accepted: parsed.kind === 'value' }).toEqual({
            pattern: p,
            value: v,
            accepted: browserMatches(p, v),
          })
        }
      }),
      { numRuns: 300, seed: 20261125 },
    )
  })

  test('through the API: a form created with a pattern takes what matches in full and refuses the rest', async () => {
    for (const [value, status] of [
      ['ÀB', 201],
      ['Àb', 422],
      ['\u00a0A', 422],
    ] as const) {
      const form = await t.api.createForm(textField({ pattern: '\\p{Lu}+' }))
      const res = await submit(t.app, form.id, { code: value })
      expect({ value, status: res.status }).toEqual({ value, status })
      if (status === 422)
        expect(res.body.errors).toEqual([
          { path: '/code', message: 'Does not match the required format', code: 'pattern' },
        ])
    }
  })
})

/** The problem a create reports for `pattern`, or undefined when it is accepted. */
async function patternProblem(pattern: string, config: Record<string, unknown> = {}) {
  const res = await t.api.post('/forms', textField({ pattern, ...config }))
  if (res.status === 201) return undefined
  expect(res.status).toBe(422)
  return res.body.errors.find((e: { path: string }) => e.path === '/fields/0/config/pattern')
}

describe('a pattern RE2 cannot run as the browser does is refused: 422 invalid_pattern', () => {
  test.each([
    ['a back-reference', '(a)\\1', /back-reference/],
    ['a named back-reference', '(?<x>a)\\k<x>', /back-reference/],
    ['lookahead', '(?=.*\\d)\\w+', /lookahead or lookbehind/],
    ['lookbehind', '(?<=a)b', /lookahead or lookbehind/],
    ['inline flags', '(?i:abc)', /inline flags/],
    ['a nested class', '[[a-z]]', /nested class or a set operation/],
    ['set subtraction', '[\\p{L}--[a-z]]', /nested class or a set operation/],
    ['set intersection', '[\\w&&\\d]', /nested class or a set operation/],
    ['a string literal in a class', '[\\q{abc}]', /nested class or a set operation/],
    ['a property of strings', '\\p{RGI_Emoji}', /Unicode property RGI_Emoji/],
    ['\\p{C}, which includes unassigned code points in JavaScript only', '\\p{C}', /Unicode property C/],
    ['a script extension', '\\p{scx=Latin}', /Unicode property scx=Latin/],
    ['a repetition count above 1000', 'a{1001}', /more than 1000 times/],
    ['repetitions too costly to match', '(?:(?:[a-z]{0,100}){0,100})', /too costly/],
    ['not a regular expression at all', '(', /not a valid regular expression/],
    ['valid without the v flag only', '[(]', /not a valid regular expression/],
  ])('%s: %s', async (_case, pattern, reason) => {
    expect(await patternProblem(pattern)).toEqual({
      path: '/fields/0/config/pattern',
      message: expect.stringMatching(reason),
      code: 'invalid_pattern',
    })
  })

  test('the cost allowed shrinks as max_length grows: matching time is the pattern cost times the value length', async () => {
    const pattern = '\\p{L}{1,200}'
    expect(await patternProblem(pattern)).toBeUndefined()
    expect(await patternProblem(pattern, { max_length: 10_000 })).toEqual({
      path: '/fields/0/config/pattern',
      message: expect.stringMatching(/too costly to match.*smaller max_length/),
      code: 'invalid_pattern',
    })
  })
})

// ---------------------------------------------------------------- control characters

describe('control characters in what intake shows or matches: 422 control_character', () => {
  test.each([
    ['the title', { title: 'Hello\u0000' }, '/title', 'U+0000 (NUL)'],
    ['the description', { description: 'Line\u0007' }, '/description', 'U+0007 (BEL)'],
    ['a label', { fields: [{ key: 'a', type: 'text', label: 'Name\u001b[31m' }] }, '/fields/0/label', 'U+001B (ESC)'],
    [
      'a field description',
      { fields: [{ key: 'a', type: 'text', label: 'A', description: '\u000bx' }] },
      '/fields/0/description',
      'U+000B (VT)',
    ],
    [
      'an option value',
      { fields: [{ key: 'a', type: 'select', label: 'A', config: { options: ['yes', 'no\u0000'] } }] },
      '/fields/0/config/options/1',
      'U+0000 (NUL)',
    ],
    [
      'an option label',
      { fields: [{ key: 'a', type: 'select', label: 'A', config: { options: [{ value: 'y', label: 'Y\u0008' }] } }] },
      '/fields/0/config/options/0/label',
      'U+0008 (BS)',
    ],
    [
      'a placeholder',
      { fields: [{ key: 'a', type: 'text', label: 'A', config: { placeholder: '\u001fp' } }] },
      '/fields/0/config/placeholder',
      'U+001F (US)',
    ],
    [
      'a default',
      { fields: [{ key: 'a', type: 'textarea', label: 'A', config: { default: 'a\u000cb' } }] },
      '/fields/0/config/default',
      'U+000C (FF)',
    ],
    [
      'a pattern',
      { fields: [{ key: 'a', type: 'text', label: 'A', config: { pattern: 'a\u0001' } }] },
      '/fields/0/config/pattern',
      'U+0001 (SOH)',
    ],
    [
      'accept',
      { fields: [{ key: 'a', type: 'file', label: 'A', config: { accept: '.pdf\u0000' } }] },
      '/fields/0/config/accept',
      'U+0000 (NUL)',
    ],
    ['the callback URL', { callback_url: 'https://example.com/\u0000' }, '/callback_url', 'U+0000 (NUL)'],
  ])('in %s', async (_where, overrides, path, named) => {
    const res = await t.api.post('/forms', validForm(overrides))
    expect(res.status).toBe(422)
    expect(res.body.errors).toContainEqual({
      path,
      message: `Contains the invisible control character ${named}; remove it`,
      code: 'control_character',
    })
  })

  test('tab, line feed and carriage return are text', async () => {
    const res = await t.api.post(
      '/forms',
      validForm({
        title: 'A\tB',
        description: 'One\r\nTwo\nThree',
        fields: [{ key: 'a', type: 'textarea', label: 'A', config: { default: 'x\ty\nz' } }],
      }),
    )
    expect(res.status).toBe(201)
  })

  test('context, callback_metadata and settings are kept as given, control characters and all', async () => {
    const kept = { text: 'a\u0000b\u0007c', nested: ['\u001b'] }
    const res = await t.api.post('/forms', validForm({ context: kept, callback_metadata: kept, settings: kept }))
    expect(res.status).toBe(201)
    const form = (await t.api.get(`/forms/${res.body.id}`)).body
    expect([form.context, form.callback_metadata, form.settings]).toEqual([kept, kept, kept])
  })

  test('PATCH: in expires_at', async () => {
    const form = await t.api.createForm()
    const res = await t.api.patch(`/forms/${form.id}`, { expires_at: '2099-01-01T00:00:00Z\u0000' })
    expect(res.status).toBe(422)
    expect(res.body.errors).toEqual([
      {
        path: '/expires_at',
        message: 'Contains the invisible control character U+0000 (NUL); remove it',
        code: 'control_character',
      },
    ])
  })

  test('MCP create_form: a tool error naming it', async () => {
    const call = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'create_form', arguments: validForm({ title: 'Hi\u0000' }) },
    }
    const res = await send(t.app, 'POST', '/mcp', { key: t.key, headers: MCP_HEADERS, body: call })
    expect(res.body.result.isError).toBe(true)
    expect(res.body.result.content[0].text).toContain('/title: Contains the invisible control character U+0000 (NUL)')
  })
})

describe("a person's answer with a control character: 422, naming the invisible character", () => {
  const FIELDS = [
    { key: 'name', type: 'text', label: 'Name' },
    { key: 'notes', type: 'textarea', label: 'Notes' },
    { key: 'meal', type: 'select', label: 'Meal', config: { options: ['fish', 'veg'] } },
  ]

  test.each([
    ['text', { name: 'Ada\u0000' }, '/name', 'U+0000 (NUL)'],
    ['textarea', { notes: 'fine\n\u0007' }, '/notes', 'U+0007 (BEL)'],
    ['select', { meal: 'fish\u0000' }, '/meal', 'U+0000 (NUL)'],
  ])('JSON, %s', async (_type, answers, path, named) => {
    const form = await t.api.createForm({ fields: FIELDS })
    const res = await submit(t.app, form.id, answers)
    expect(res.status).toBe(422)
    expect(res.body.errors).toEqual([
      { path, message: `Contains the invisible control character ${named}; remove it`, code: 'control_character' },
    ])
  })

  test('a form post: the page says which character', async () => {
    const form = await t.api.createForm({ fields: FIELDS })
    const res = await postForm(t.app, form.id, { name: 'Ada\u0000', notes: 'x' })
    expect(res.status).toBe(422)
    expect(res.text).toContain('Remove the invisible character U+0000 (NUL) from your answer')
  })

  test('tabs and line breaks are answers; a single-line text still refuses a line break', async () => {
    const form = await t.api.createForm({ fields: FIELDS })
    const refused = await submit(t.app, form.id, { name: 'a\r\nb' })
    expect(refused.body.errors).toEqual([{ path: '/name', message: 'Must be a single line', code: 'invalid_format' }])
    const res = await submit(t.app, form.id, { name: 'A\tB', notes: 'one\r\ntwo\tthree' })
    expect(res.status).toBe(201)
    expect((await t.api.get(`/forms/${form.id}/responses`)).body[0].data).toEqual({
      name: 'A\tB',
      notes: 'one\ntwo\tthree',
    })
  })
})
