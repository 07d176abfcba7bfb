/**
 * Every `errors[]` item of a 422 carries a stable `code` from CONTRACT 11's
 * list, and nothing else but `path` and `message`: the params the page words
 * its messages with never reach the API.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fieldTypes } from '../src/fields/index.ts'
import { Upload } from '../src/fields/types.ts'
import { en } from '../src/i18n/catalogs/en.ts'
import type { MessageParams } from '../src/i18n/index.ts'
import { ERROR_CODES, type ErrorCode } from '../src/lib/errors.ts'
import { createTestContext, send, submit, type TestContext, type TestResponse } from './utils.ts'

let t: TestContext
beforeAll(async () => {
  t = await createTestContext()
})
afterAll(() => t.close())

/** The problems of a 422, each checked to be exactly `{path, message, code}` with a listed code; as `{path, code}`. */
function problemsOf(res: TestResponse) {
  expect({ status: res.status, detail: typeof res.body.detail }).toEqual({ status: 422, detail: 'string' })
  const errors = res.body.errors as Array<Record<string, unknown>>
  expect(errors.length).toBeGreaterThan(0)
  for (const error of errors) {
    expect(Object.keys(error).sort()).toEqual(['code', 'message', 'path'])
    expect(ERROR_CODES).toContain(error.code as never)
  }
  return errors.map(({ path, code }) => ({ path, code }))
}

const field = (type: string, config?: Record<string, unknown>, required = false) => ({
  key: 'f',
  type,
  label: 'F',
  required,
  ...(config && { config }),
})

describe('create-form 422s', () => {
  test.each<[string, unknown, Array<{ path: string; code: string }>]>([
    ['a missing title', { fields: [field('text')] }, [{ path: '/title', code: 'required' }]],
    [
      'an unknown key',
      { title: 'T', fields: [field('text')], expire_in: '1h' },
      [{ path: '/expire_in', code: 'unknown_key' }],
    ],
    ['a title of the wrong type', { title: 1, fields: [field('text')] }, [{ path: '/title', code: 'invalid_type' }]],
    ['an empty title', { title: '', fields: [field('text')] }, [{ path: '/title', code: 'too_short' }]],
    ['a long title', { title: 'x'.repeat(256), fields: [field('text')] }, [{ path: '/title', code: 'too_long' }]],
    ['no fields', { title: 'T', fields: [] }, [{ path: '/fields', code: 'too_short' }]],
    [
      'an unknown field type',
      { title: 'T', fields: [field('colour')] },
      [{ path: '/fields/0/type', code: 'invalid_value' }],
    ],
    [
      'a bad field key',
      { title: 'T', fields: [{ ...field('text'), key: '1a' }] },
      [{ path: '/fields/0/key', code: 'invalid_format' }],
    ],
    [
      'a duplicate field key',
      { title: 'T', fields: [field('text'), field('text')] },
      [{ path: '/fields/1/key', code: 'not_unique' }],
    ],
    [
      'rows 0',
      { title: 'T', fields: [field('textarea', { rows: 0 })] },
      [{ path: '/fields/0/config/rows', code: 'too_small' }],
    ],
    [
      'rows 51',
      { title: 'T', fields: [field('textarea', { rows: 51 })] },
      [{ path: '/fields/0/config/rows', code: 'too_large' }],
    ],
    [
      'step 0',
      { title: 'T', fields: [field('number', { step: 0 })] },
      [{ path: '/fields/0/config/step', code: 'too_small' }],
    ],
    [
      'a pattern RE2 cannot run',
      { title: 'T', fields: [field('text', { pattern: '(a)\\1' })] },
      [{ path: '/fields/0/config/pattern', code: 'invalid_pattern' }],
    ],
    [
      'a default off the pattern',
      { title: 'T', fields: [field('text', { pattern: '[a-z]+', default: '1' })] },
      [{ path: '/fields/0/config/default', code: 'pattern' }],
    ],
    [
      'a default number too small',
      { title: 'T', fields: [field('number', { min: 2, default: 1 })] },
      [{ path: '/fields/0/config/default', code: 'too_small' }],
    ],
    [
      'a control character',
      { title: 'T\u0007', fields: [field('text')] },
      [{ path: '/title', code: 'control_character' }],
    ],
    [
      'a callback_url that is no URL',
      { title: 'T', fields: [field('text')], callback_url: 'ftp://x' },
      [{ path: '/callback_url', code: 'invalid_format' }],
    ],
    [
      'expires_in over a year',
      { title: 'T', fields: [field('text')], expires_in: '366d' },
      [{ path: '/expires_in', code: 'too_large' }],
    ],
  ])('%s', async (_case, body, problems) => {
    expect(problemsOf(await t.api.post('/forms', body))).toEqual(problems)
  })

  test('a body that is not JSON: invalid_format', async () => {
    const res = await send(t.app, 'POST', '/api/v1/forms', { body: '{', key: t.key })
    expect(problemsOf(res)).toEqual([{ path: '', code: 'invalid_format' }])
  })

  test('a body that is not valid UTF-8: invalid_encoding', async () => {
    const res = await send(t.app, 'POST', '/api/v1/forms', {
      body: new Uint8Array([0x7b, 0xff, 0x7d]),
      key: t.key,
      headers: { 'content-type': 'application/json' },
    })
    expect(problemsOf(res)).toEqual([{ path: '', code: 'invalid_encoding' }])
  })

  test('a query parameter out of range', async () => {
    expect(problemsOf(await t.api.get('/forms?limit=0'))).toEqual([{ path: '/limit', code: 'too_small' }])
  })

  test('PATCH with an expires_at in the past', async () => {
    const form = await t.api.createForm()
    expect(problemsOf(await t.api.patch(`/forms/${form.id}`, { expires_at: '2000-01-01T00:00:00Z' }))).toEqual([
      { path: '/expires_at', code: 'too_small' },
    ])
  })
})

describe('submission 422s', () => {
  const FIELDS = [
    field('text', { min_length: 3 }),
    { key: 'n', type: 'number', label: 'N', config: { min: 1, max: 9, step: 2 } },
    { key: 'm', type: 'number', label: 'M', config: { min: 1, max: 9, step: 2 } },
    { key: 'e', type: 'email', label: 'E' },
    { key: 's', type: 'select', label: 'S', config: { options: ['a', 'b'] } },
    { key: 'ms', type: 'select', label: 'MS', config: { options: ['a', 'b', 'c'], multiple: true, max_selected: 1 } },
    { key: 'd', type: 'date', label: 'D', config: { min: '2026-01-01', max: '2026-12-31' } },
    { key: 'c', type: 'checkbox', label: 'C', required: true },
    { key: 'r', type: 'text', label: 'R', required: true },
    { key: 'file', type: 'file', label: 'File' },
    { key: 'late', type: 'date', label: 'Late', config: { max: '2026-12-31' } },
    { key: 'bel', type: 'text', label: 'Bel' },
  ]
  const ANSWERS = {
    f: 'ab',
    n: 10,
    m: 4,
    e: 'nope',
    s: 'z',
    ms: ['a', 'b'],
    d: '2025-12-31',
    late: '2027-01-01',
    file: 'x',
    bel: 'a\u0007',
    extra: 1,
  }
  const EXPECTED = [
    { path: '/f', code: 'too_short' },
    { path: '/n', code: 'too_large' },
    { path: '/m', code: 'step' },
    { path: '/e', code: 'email' },
    { path: '/s', code: 'not_an_option' },
    { path: '/ms', code: 'too_many_selected' },
    { path: '/d', code: 'date_too_early' },
    { path: '/c', code: 'unchecked' },
    { path: '/r', code: 'required' },
    { path: '/file', code: 'invalid_type' },
    { path: '/late', code: 'date_too_late' },
    { path: '/bel', code: 'control_character' },
    { path: '/extra', code: 'unknown_field' },
  ]

  test('JSON: every problem has its code, and no params', async () => {
    const form = await t.api.createForm({ fields: FIELDS })
    expect(problemsOf(await submit(t.app, form.id, ANSWERS))).toEqual(EXPECTED)
  })

  test.each([
    ['a number that is no number', { key: 'n', type: 'number', label: 'N' }, 'x', 'invalid_format'],
    ['a date that is no date', { key: 'n', type: 'date', label: 'N' }, '2026-02-30', 'date'],
    ['a line break in text', { key: 'n', type: 'text', label: 'N' }, 'a\nb', 'invalid_format'],
    ['a pattern mismatch', { key: 'n', type: 'text', label: 'N', config: { pattern: '[0-9]+' } }, 'abc', 'pattern'],
    ['text too long', { key: 'n', type: 'text', label: 'N', config: { max_length: 2 } }, 'abc', 'too_long'],
    ['a number too small', { key: 'n', type: 'number', label: 'N', config: { min: 5 } }, 4, 'too_small'],
    [
      'a duplicate choice',
      { key: 'n', type: 'select', label: 'N', config: { options: ['a', 'b'], multiple: true } },
      ['a', 'a'],
      'not_unique',
    ],
    [
      'too few choices',
      { key: 'n', type: 'select', label: 'N', config: { options: ['a', 'b'], multiple: true, min_selected: 2 } },
      ['a'],
      'too_few_selected',
    ],
    ['a wrong JSON type', { key: 'n', type: 'text', label: 'N' }, 5, 'invalid_type'],
  ])('%s: %p', async (_case, fieldDef, value, code) => {
    const form = await t.api.createForm({ fields: [fieldDef] })
    expect(problemsOf(await submit(t.app, form.id, { n: value }))).toEqual([{ path: '/n', code }])
  })

  test('a body that is not an object: invalid_type', async () => {
    const form = await t.api.createForm()
    expect(problemsOf(await submit(t.app, form.id, [1]))).toEqual([{ path: '', code: 'invalid_type' }])
  })
})

test('docs/agents.md lists every code, and no other', async () => {
  const guide = await Bun.file(new URL('../docs/agents.md', import.meta.url)).text()
  const table = guide.slice(guide.indexOf('| `code` | meaning |'), guide.indexOf('| case | status |'))
  const listed = [...table.matchAll(/^\| ([^|]+) \|/gm)]
    .flatMap((row) => [...row[1]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]))
    .filter((c) => c !== 'code')
  expect(listed.sort()).toEqual([...ERROR_CODES].sort())
})

describe("a rejection's params: the placeholders of the English catalog's message for its code", () => {
  const upload = new Upload('a.txt', 'text/plain', 2048, 'file-id')
  test.each<[string, Record<string, unknown>, unknown, ErrorCode, MessageParams | undefined]>([
    ['text', { min_length: 3 }, 'ab', 'too_short', { count: 3 }],
    // `over` is worded by error.too_long_by, around error.too_long's limit.
    ['textarea', { max_length: 2 }, 'abc', 'too_long', { count: 2, over: 1 }],
    ['number', { min: 2 }, 1, 'too_small', { min: 2 }],
    ['number', { max: 2 }, 3, 'too_large', { max: 2 }],
    ['number', { step: 2 }, 3, 'step', { step: 2 }],
    ['number', { min: 1, step: 2 }, 2, 'step', { step: 2, min: 1 }],
    ['date', { min: '2026-01-02' }, '2026-01-01', 'date_too_early', { date: { date: '2026-01-02' } }],
    ['date', { max: '2026-01-01' }, '2026-01-02', 'date_too_late', { date: { date: '2026-01-01' } }],
    ['select', { options: ['a', 'b'], multiple: true, min_selected: 2 }, ['a'], 'too_few_selected', { count: 2 }],
    ['select', { options: ['a', 'b'], multiple: true, max_selected: 1 }, ['a', 'b'], 'too_many_selected', { count: 1 }],
    ['file', { max_size: 1024 }, upload, 'file_too_large', { size: { bytes: 1024 } }],
    [
      'file',
      { accept: '.pdf' },
      new Upload('a.txt', 'text/plain', 1, 'file-id'),
      'file_type',
      { types: { fileTypes: '.pdf' } },
    ],
    ['text', {}, 'a\nb', 'invalid_format', undefined],
    ['email', {}, 'a@b', 'email', undefined],
  ])('%s %p given %p: %s', async (type, config, input, code, params) => {
    const parsed = await fieldTypes[type]!.parse(input, config, false)
    expect(parsed).toEqual(
      params
        ? { kind: 'invalid', message: expect.any(String), code, params }
        : { kind: 'invalid', message: expect.any(String), code },
    )
    // Every param the page is handed has its placeholder in the message the page will choose.
    const template = JSON.stringify(
      en[(code === 'step' && params?.min ? 'error.step_from' : `error.${code}`) as keyof typeof en],
    )
    for (const name of Object.keys(params ?? {}).filter((name) => !(code === 'too_long' && name === 'over')))
      expect(template).toContain(`{${name}}`)
  })
})
