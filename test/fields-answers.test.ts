/**
 * The field types (CONTRACT 4) together: parseAnswers and the config rules
 * (checkFieldConfig).
 */
import { describe, expect, test } from 'bun:test'
import { checkFieldConfig } from '../src/fields/index.ts'
import { Upload } from '../src/fields/types.ts'
import { parseAnswers } from '../src/modules/submissions/service.ts'
import { BASE, field, upload } from './fields-fixtures.ts'

// ---------------------------------------------------------------- parseAnswers

describe('parseAnswers', () => {
  const optional = [
    field('t', 'text'),
    field('ta', 'textarea'),
    field('e', 'email'),
    field('n', 'number'),
    field('s', 'select', { options: ['a'] }),
    field('d', 'date'),
    field('f', 'file'),
    field('c', 'checkbox'),
  ]

  test('optional empty fields are left out of data; an unticked checkbox is false', async () => {
    const result = await parseAnswers(optional, {
      t: '',
      ta: '  ',
      e: null,
      n: '',
      s: '',
      f: new Upload('', '', 0, 'file-id'),
    })
    expect(result).toEqual({ data: { c: false }, uploads: [], problems: [], moreProblems: false })
  })

  test.each(['text', 'textarea', 'email', 'number', 'select', 'date', 'file', 'checkbox'])(
    'a required %s left empty is a problem at /<key>',
    async (type) => {
      expect(await parseAnswers([field('answer', type, BASE[type], true)], {})).toEqual({
        data: {},
        uploads: [],
        problems: [
          { path: '/answer', message: expect.any(String), code: type === 'checkbox' ? 'unchecked' : 'required' },
        ],
        moreProblems: false,
      })
    },
  )

  test.each([undefined, null, '', '   '])('a required text given %p: "This field is required"', async (input) => {
    expect((await parseAnswers([field('name', 'text', {}, true)], { name: input })).problems).toEqual([
      { path: '/name', message: 'This field is required', code: 'required' },
    ])
  })

  test('an invalid value is a problem at its key; the valid ones are still read', async () => {
    const result = await parseAnswers([field('n', 'number'), field('t', 'text')], { n: 'abc', t: 'ok' })
    expect(result.problems).toEqual([
      {
        path: '/n',
        message: expect.stringContaining('Expected a number, for example 1234.5'),
        code: 'invalid_format',
        params: { example: '1234.5' },
      },
    ])
    expect(result.data).toEqual({ t: 'ok' })
  })

  test.each([
    ['extra', '/extra'],
    ['a/b~c', '/a~1b~0c'],
    ['_page', '/_page'],
  ])('the unknown key %p is a problem at %p', async (key, path) => {
    const result = await parseAnswers([field('name', 'text')], { name: 'Ann', [key]: 'x' })
    expect(result.problems).toEqual([{ path, message: 'Unknown field', code: 'unknown_field' }])
  })

  test('a "__proto__" key from a JSON body is an unknown field', async () => {
    const values = JSON.parse('{"name":"Ann","__proto__":{"name":"x"}}') as Record<string, unknown>
    expect((await parseAnswers([field('name', 'text')], values)).problems).toEqual([
      { path: '/__proto__', message: 'Unknown field', code: 'unknown_field' },
    ])
  })

  test.each(['constructor', 'toString', 'hasOwnProperty', 'valueOf'])(
    'a field keyed %p reads nothing from Object.prototype',
    async (key) => {
      expect(await parseAnswers([field(key, 'text')], {})).toEqual({
        data: {},
        uploads: [],
        problems: [],
        moreProblems: false,
      })
      expect((await parseAnswers([field(key, 'text', {}, true)], {})).problems).toEqual([
        { path: `/${key}`, message: 'This field is required', code: 'required' },
      ])
      expect((await parseAnswers([field(key, 'checkbox')], {})).data).toEqual({ [key]: false })
      expect((await parseAnswers([field(key, 'text')], { [key]: 'given' })).data).toEqual({ [key]: 'given' })
    },
  )

  test('data keeps the order of the fields, not of the values', async () => {
    const fields = [
      field('z', 'text'),
      field('a', 'number'),
      field('m', 'checkbox'),
      field('b', 'select', { options: ['x'] }),
    ]
    const result = await parseAnswers(fields, { b: 'x', m: 'on', a: '2', z: 'hi' })
    expect(result.problems).toEqual([])
    expect(Object.entries(result.data)).toEqual([
      ['z', 'hi'],
      ['a', 2],
      ['m', true],
      ['b', 'x'],
    ])
  })

  test('an upload goes to uploads, not data', async () => {
    const file = upload('a.pdf', 'application/pdf', 3)
    const result = await parseAnswers([field('doc', 'file', { accept: '.pdf' }), field('note', 'text')], {
      doc: file,
      note: 'see',
    })
    expect(result).toEqual({
      data: { note: 'see' },
      uploads: [{ key: 'doc', upload: file }],
      problems: [],
      moreProblems: false,
    })
  })

  test('a field without config gets the type defaults (text max_length 1000)', async () => {
    expect((await parseAnswers([field('t', 'text')], { t: 'a'.repeat(1000) })).problems).toEqual([])
    expect((await parseAnswers([field('t', 'text')], { t: 'a'.repeat(1001) })).problems).toEqual([
      { path: '/t', message: expect.any(String), code: 'too_long', params: { count: 1000, over: 1 } },
    ])
  })
})

// ---------------------------------------------------------------- checkFieldConfig

describe('checkFieldConfig', () => {
  test.each([
    ['text: a default matching the pattern', 'text', { default: 'abc', pattern: '[a-z]+' }],
    ['text: an empty default means none', 'text', { default: '', min_length: 3, pattern: '[a-z]+' }],
    ['text: a blank default means none', 'text', { default: '   ', pattern: '[a-z]+' }],
    ['text: min_length equal to max_length', 'text', { min_length: 5, max_length: 5 }],
    ['text: min_length equal to the default max_length', 'text', { min_length: 1000 }],
    ['text: a default of exactly max_length', 'text', { default: 'abcde', max_length: 5 }],
    ['textarea: a default counted after normalising CRLF', 'textarea', { default: 'a\r\nb', max_length: 3 }],
    ['textarea: an empty default means none', 'textarea', { default: '', min_length: 3 }],
    ['textarea: min_length equal to the default max_length', 'textarea', { min_length: 10_000 }],
    ['email: a valid default', 'email', { default: 'a@example.com' }],
    ['email: an empty default means none', 'email', { default: '' }],
    ['number: a default on a decimal step', 'number', { default: 0.3, step: 0.1 }],
    ['number: a default on a step from min', 'number', { default: 7, min: 1, step: 2 }],
    ['number: min equal to max, default between', 'number', { min: 5, max: 5, default: 5 }],
    ['number: negative bounds', 'number', { min: -10, max: -1 }],
    ['select: a default option value', 'select', { options: ['a', { value: 'b', label: 'a' }], default: 'b' }],
    ['select: an empty default means none', 'select', { options: ['a'], default: '' }],
    ['checkbox: default true', 'checkbox', { default: true }],
    ['checkbox: default false', 'checkbox', { default: false }],
    ['date: a leap-day default', 'date', { default: '2024-02-29' }],
    ['date: min equal to max, default on it', 'date', { min: '2026-01-01', max: '2026-01-01', default: '2026-01-01' }],
    ['date: an empty default means none', 'date', { default: '' }],
    ['file: image/*,.pdf and a 1-byte max_size', 'file', { accept: 'image/*,.pdf', max_size: 1 }],
    [
      'file: a long media type',
      'file',
      { accept: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' },
    ],
    ['file: tokens with spaces', 'file', { accept: ' audio/* , video/* , .tar.gz ' }],
  ] as const)('%s: no problem', async (_case, type, config) => {
    expect(await checkFieldConfig(field('f', type, config))).toEqual([])
  })

  test.each([
    // `default` must itself be a valid value.
    ['text: a default not matching the pattern', 'text', { default: 'abc1', pattern: '[a-z]+' }, '/config/default'],
    ['text: a default over max_length', 'text', { default: 'abcdef', max_length: 5 }, '/config/default'],
    ['text: a default under min_length', 'text', { default: 'ab', min_length: 3 }, '/config/default'],
    ['text: a default over the default max_length', 'text', { default: 'a'.repeat(1001) }, '/config/default'],
    ['text: a default with a line break', 'text', { default: 'a\nb' }, '/config/default'],
    ['textarea: a default over max_length', 'textarea', { default: 'abcdef', max_length: 5 }, '/config/default'],
    ['email: a default that is no address', 'email', { default: 'not-an-email' }, '/config/default'],
    ['email: a default without a dot in the domain', 'email', { default: 'a@localhost' }, '/config/default'],
    ['number: a default over max', 'number', { default: 11, max: 10 }, '/config/default'],
    ['number: a default under min', 'number', { default: -1, min: 0 }, '/config/default'],
    ['number: a default off a decimal step', 'number', { default: 0.35, step: 0.1 }, '/config/default'],
    ['number: a default off the step from min', 'number', { default: 2, min: 1, step: 2 }, '/config/default'],
    ['number: a default beyond the safe integers', 'number', { default: 9007199254740992 }, '/config/default'],
    ['select: a default not among the options', 'select', { options: ['a', 'b'], default: 'c' }, '/config/default'],
    [
      'select: a default that is a label',
      'select',
      { options: [{ value: 'a', label: 'Apple' }], default: 'Apple' },
      '/config/default',
    ],
    ['select: a default in another case', 'select', { options: ['a'], default: 'A' }, '/config/default'],
    ['date: an unreal default', 'date', { default: '2026-02-30' }, '/config/default'],
    ['date: a default before min', 'date', { default: '2025-12-31', min: '2026-01-01' }, '/config/default'],
    ['date: a default after max', 'date', { default: '2026-01-02', max: '2026-01-01' }, '/config/default'],
    // Rules between config keys.
    ['text: min_length > max_length', 'text', { min_length: 6, max_length: 5 }, '/config/min_length'],
    ['text: min_length > the default max_length', 'text', { min_length: 1001 }, '/config/min_length'],
    ['textarea: min_length > max_length', 'textarea', { min_length: 11, max_length: 10 }, '/config/min_length'],
    ['textarea: min_length > the default max_length', 'textarea', { min_length: 10_001 }, '/config/min_length'],
    ['number: min > max', 'number', { min: 2, max: 1 }, '/config/max'],
    ['number: min > max by a fraction', 'number', { min: 1.5, max: 1.4 }, '/config/max'],
    ['select: a duplicate string value', 'select', { options: ['a', 'b', 'a'] }, '/config/options/2'],
    [
      'select: a duplicate value in an object',
      'select',
      { options: ['x', { value: 'x', label: 'Other' }] },
      '/config/options/1',
    ],
    ['date: min > max', 'date', { min: '2026-02-01', max: '2026-01-31' }, '/config/max'],
    ['date: an unreal min', 'date', { min: '2026-02-29' }, '/config/min'],
    ['date: an unreal max', 'date', { max: '2026-13-01' }, '/config/max'],
    ['text: an unclosed class', 'text', { pattern: '[' }, '/config/pattern'],
    ['text: an unclosed group', 'text', { pattern: '(' }, '/config/pattern'],
    ['text: a backwards quantifier', 'text', { pattern: 'a{2,1}' }, '/config/pattern'],
    ['text: an unknown property', 'text', { pattern: '\\p{Nope}' }, '/config/pattern'],
    ['text: a class invalid under v though valid without it', 'text', { pattern: '[(]' }, '/config/pattern'],
    ['text: a v-flag set operation RE2 cannot run', 'text', { pattern: '[\\p{L}--[a-z]]+' }, '/config/pattern'],
    ['text: a back-reference', 'text', { pattern: '(a)\\1' }, '/config/pattern'],
    ['file: an empty accept', 'file', { accept: '' }, '/config/accept'],
    ['file: only commas', 'file', { accept: ',,' }, '/config/accept'],
    ['file: an extension without its dot', 'file', { accept: 'pdf' }, '/config/accept'],
    ['file: a type without a subtype', 'file', { accept: 'image' }, '/config/accept'],
    ['file: a type with an empty subtype', 'file', { accept: 'image/' }, '/config/accept'],
    ['file: a semicolon-separated list', 'file', { accept: '.pdf;.doc' }, '/config/accept'],
    ['file: one bad token among good ones', 'file', { accept: 'image/*, pdf' }, '/config/accept'],
  ] as const)('%s: a problem at %s', async (_case, type, config, path) => {
    const code = path === '/config/pattern' ? 'invalid_pattern' : expect.any(String)
    expect(await checkFieldConfig(field('f', type, config))).toEqual([
      expect.objectContaining({ path, message: expect.any(String), code }),
    ])
  })

  test('problems of several keys are all reported', async () => {
    expect(await checkFieldConfig(field('f', 'text', { min_length: 6, max_length: 5, pattern: '(' }))).toEqual([
      { path: '/config/min_length', message: expect.any(String), code: 'invalid_value' },
      { path: '/config/pattern', message: expect.any(String), code: 'invalid_pattern' },
    ])
  })

  test('both unreal date bounds are reported', async () => {
    expect(await checkFieldConfig(field('f', 'date', { min: '2026-02-30', max: '2026-02-31' }))).toEqual([
      { path: '/config/min', message: expect.any(String), code: 'date' },
      { path: '/config/max', message: expect.any(String), code: 'date' },
    ])
  })
})
