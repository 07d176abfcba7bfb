/**
 * POST /api/v1/forms (CONTRACT 4), through HTTP: each field type's config,
 * accepted and rejected at each boundary.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import {
  createRequests,
  expectCreated,
  expectRejected,
  fieldOf,
  type Json,
  oneField,
  type PathMatcher,
} from './forms-create-fixtures.ts'
import { createTestContext, type TestContext, validForm } from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())
const { create, getForm } = createRequests(() => t)

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
