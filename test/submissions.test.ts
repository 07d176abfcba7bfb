/**
 * The JSON submission path: POST /f/<id> with Content-Type: application/json
 * (CONTRACT 5, 6, 7; spec 2.4, 6.2). Everything goes through HTTP in-process;
 * the database is read directly only for the webhook outbox (deliveries).
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import {
  API_TIME_PATTERN,
  BASE_URL,
  createTestContext,
  EVERY_TYPE_ANSWERS,
  EVERY_TYPE_FIELDS,
  postForm,
  submit,
  type TestContext,
  type TestResponse,
  ULID_PATTERN,
} from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())

// ---------------------------------------------------------------- helpers

/** A callback nobody listens on: the outbox row is written, nothing is delivered in-process. */
const HOOK = 'http://127.0.0.1:9/hook'
/** Marks a case where the key is left out of the submitted object. */
const ABSENT = Symbol('absent')

type Field = { key: string; type: string; label: string; required?: boolean; config?: Record<string, unknown> }

/** A field with key "v". */
const f = (type: string, config?: Record<string, unknown>, required = false): Field => ({
  key: 'v',
  type,
  label: `A ${type}`,
  required,
  ...(config ? { config } : {}),
})

const MEAL_OPTIONS = { options: ['fish', { value: 'veg', label: 'Vegetarian' }] }

/** Submits one value (or none) for field "v" of a fresh form with only that field. */
async function answerOne(field: Field, value: unknown, extra: Record<string, unknown> = {}) {
  const form = await t.api.createForm({ fields: [field], ...extra })
  const res = await submit(t.app, form.id, value === ABSENT ? {} : { [field.key]: value })
  return { form, res }
}

/** The responses of a form, through the API. */
async function responsesOf(formId: string, ctx: TestContext = t): Promise<any[]> {
  const res = await ctx.api.get(`/forms/${formId}/responses`)
  expect(res.status).toBe(200)
  expect(Array.isArray(res.body)).toBe(true)
  return res.body
}

/** The one stored response of a form. */
async function onlyResponse(formId: string, ctx: TestContext = t) {
  const list = await responsesOf(formId, ctx)
  expect(list).toHaveLength(1)
  return list[0]
}

async function formStatus(formId: string, ctx: TestContext = t) {
  const res = await ctx.api.get(`/forms/${formId}`)
  expect(res.status).toBe(200)
  return res.body.status as string
}

function deliveries(ctx: TestContext = t): Promise<any[]> {
  return ctx.sql('select * from deliveries')
}

/** A 422 with `detail` and `errors`, whose paths include (or, with `exact`, are exactly) `paths`. */
function expectInvalid(res: TestResponse, paths: string[], exact = false) {
  expect(res.status).toBe(422)
  expect(typeof res.body.detail).toBe('string')
  expect(res.body.detail.length).toBeGreaterThan(0)
  expect(Array.isArray(res.body.errors)).toBe(true)
  for (const error of res.body.errors) {
    expect(typeof error.path).toBe('string')
    expect(typeof error.message).toBe('string')
    expect(error.message.length).toBeGreaterThan(0)
  }
  const got = res.body.errors.map((e: { path: string }) => e.path)
  if (exact) expect([...new Set(got)].sort()).toEqual([...paths].sort())
  else expect(got).toEqual(expect.arrayContaining(paths))
}

/** Nothing was recorded: no response, the form still active, no webhook queued. */
async function expectNothingRecorded(formId: string) {
  expect(await responsesOf(formId)).toEqual([])
  expect(await formStatus(formId)).toBe('active')
  expect((await deliveries()).filter((d) => d.form_id === formId)).toEqual([])
}

/** The 201 receipt: exactly {id, form_id, submitted_at}. */
function expectReceipt(res: TestResponse, formId: string) {
  expect(res.status).toBe(201)
  expect(Object.keys(res.body).sort()).toEqual(['form_id', 'id', 'submitted_at'])
  expect(res.body.id).toMatch(ULID_PATTERN)
  expect(res.body.form_id).toBe(formId)
  expect(res.body.submitted_at).toMatch(API_TIME_PATTERN)
}

const x = (n: number) => 'x'.repeat(n)

/** An address of exactly `length` characters (64-char local part, DNS labels of at most 63). */
function emailOfLength(length: number): string {
  const local = 'a'.repeat(64)
  const fixed = `${local}@${'b'.repeat(63)}.${'c'.repeat(63)}.`
  const last = length - fixed.length - '.com'.length
  return `${fixed}${'d'.repeat(last)}.com`
}

// ------------------------------------------------------- the receipt (201)

describe('a valid submission', () => {
  test('is 201 with exactly {id, form_id, submitted_at}, matching the stored response', async () => {
    const form = await t.api.createForm()
    const res = await submit(t.app, form.id, { name: 'Ada' })
    expectReceipt(res, form.id)
    expect(res.headers.get('content-type')).toContain('application/json')
    // submitted_at is the clock's time, UTC without zone suffix.
    expect(res.body.submitted_at).toBe(new Date(t.clock()).toISOString().slice(0, -1))
    const stored = await onlyResponse(form.id)
    expect(stored.id).toBe(res.body.id)
    expect(stored.form_id).toBe(form.id)
    expect(stored.submitted_at).toBe(res.body.submitted_at)
    expect(stored.data).toEqual({ name: 'Ada' })
    expect(await formStatus(form.id)).toBe('completed')
  })

  test('accepts a JSON content type with parameters', async () => {
    const form = await t.api.createForm()
    const res = await submit(t.app, form.id, { name: 'Ada' }, { 'content-type': 'application/json; charset=utf-8' })
    expectReceipt(res, form.id)
  })

  test('one field of every type is stored with its JSON type', async () => {
    const form = await t.api.createForm({ fields: EVERY_TYPE_FIELDS })
    const res = await submit(t.app, form.id, EVERY_TYPE_ANSWERS)
    expectReceipt(res, form.id)
    const stored = await onlyResponse(form.id)
    // The optional file field was left out, so it is absent from data.
    expect(stored.data).toEqual(EVERY_TYPE_ANSWERS)
    expect(typeof stored.data.guests).toBe('number')
    expect(typeof stored.data.agree).toBe('boolean')
    expect(typeof stored.data.name).toBe('string')
  })
})

// ------------------------------------------ values per type, with or without a callback

type Accepted = [label: string, field: Field, input: unknown, stored: unknown]
type Rejected = [label: string, field: Field, input: unknown]

const ACCEPTED: Accepted[] = [
  // text
  ['text: a plain value', f('text'), 'Ada Lovelace', 'Ada Lovelace'],
  ['text: unicode kept as typed', f('text'), 'Zoë 日本', 'Zoë 日本'],
  ['text: exactly min_length', f('text', { min_length: 2, max_length: 5 }), 'ab', 'ab'],
  ['text: exactly max_length', f('text', { min_length: 2, max_length: 5 }), 'abcde', 'abcde'],
  ['text: 1000 chars (default max_length)', f('text'), x(1000), x(1000)],
  ['text: the whole value matches the pattern', f('text', { pattern: '[A-Z]{2}[0-9]{3}' }), 'AB123', 'AB123'],
  ['text: one alternative of a pattern', f('text', { pattern: 'yes|no' }), 'no', 'no'],
  // textarea
  ['textarea: several lines (LF)', f('textarea'), 'one\ntwo', 'one\ntwo'],
  ['textarea: CRLF stored as LF', f('textarea'), 'one\r\ntwo\r\nthree', 'one\ntwo\nthree'],
  ['textarea: max_length counted after CRLF became LF', f('textarea', { max_length: 5 }), 'ab\r\ncd', 'ab\ncd'],
  ['textarea: exactly max_length', f('textarea', { max_length: 5 }), 'abcde', 'abcde'],
  ['textarea: exactly min_length', f('textarea', { min_length: 3 }), 'abc', 'abc'],
  ['textarea: 10000 chars (default max_length)', f('textarea'), x(10_000), x(10_000)],
  // email
  ['email: a plain address', f('email'), 'ada@example.com', 'ada@example.com'],
  ['email: subdomains, dots and plus', f('email'), 'ada.l+forms@mail.example.co.uk', 'ada.l+forms@mail.example.co.uk'],
  ['email: exactly 254 chars', f('email'), emailOfLength(254), emailOfLength(254)],
  // number
  ['number: an integer', f('number'), 3, 3],
  ['number: a numeric string "3" is stored as 3', f('number'), '3', 3],
  ['number: a decimal', f('number'), 2.5, 2.5],
  ['number: a decimal string', f('number'), '2.5', 2.5],
  ['number: "3.0" is stored as the integer 3', f('number'), '3.0', 3],
  ['number: negative', f('number'), -4, -4],
  ['number: zero', f('number'), 0, 0],
  ['number: the largest exact integer', f('number'), 9007199254740991, 9007199254740991],
  ['number: the smallest exact integer, as text', f('number'), '-9007199254740991', -9007199254740991],
  ['number: exactly min', f('number', { min: 1, max: 10 }), 1, 1],
  ['number: exactly max', f('number', { min: 1, max: 10 }), 10, 10],
  ['number: a negative min, exactly', f('number', { min: -5 }), -5, -5],
  ['number: on the step (from 0)', f('number', { step: 5 }), 15, 15],
  ['number: on the step counted from min', f('number', { min: 1, step: 2 }), 5, 5],
  ['number: decimal step 0.1 accepts 0.3', f('number', { step: 0.1 }), 0.3, 0.3],
  ['number: decimal step 0.1 accepts "0.3"', f('number', { step: 0.1 }), '0.3', 0.3],
  ['number: decimal step 0.01 accepts 19.99', f('number', { step: 0.01 }), 19.99, 19.99],
  // select
  ['select: a string option', f('select', MEAL_OPTIONS), 'fish', 'fish'],
  ['select: the value of a {value,label} option', f('select', MEAL_OPTIONS), 'veg', 'veg'],
  // checkbox
  ['checkbox: true', f('checkbox'), true, true],
  ['checkbox: false', f('checkbox'), false, false],
  ['checkbox: absent is false', f('checkbox'), ABSENT, false],
  ['checkbox: null is false', f('checkbox'), null, false],
  ['checkbox: required and true', f('checkbox', undefined, true), true, true],
  // date
  ['date: a real date', f('date'), '2026-06-01', '2026-06-01'],
  ['date: a leap day', f('date'), '2024-02-29', '2024-02-29'],
  ['date: exactly min (inclusive)', f('date', { min: '2026-01-01', max: '2026-12-31' }), '2026-01-01', '2026-01-01'],
  ['date: exactly max (inclusive)', f('date', { min: '2026-01-01', max: '2026-12-31' }), '2026-12-31', '2026-12-31'],
]

const REJECTED: Rejected[] = [
  // text
  ['text: shorter than min_length', f('text', { min_length: 2, max_length: 5 }), 'a'],
  ['text: longer than max_length', f('text', { min_length: 2, max_length: 5 }), 'abcdef'],
  ['text: 1001 chars (default max_length 1000)', f('text'), x(1001)],
  ['text: the pattern matches only a prefix', f('text', { pattern: '[A-Z]{2}[0-9]{3}' }), 'AB1234'],
  ['text: the pattern matches only a suffix', f('text', { pattern: '[A-Z]{2}[0-9]{3}' }), 'xAB123'],
  ['text: an alternation must cover the whole value', f('text', { pattern: 'yes|no' }), 'yess'],
  ['text: a newline (LF)', f('text'), 'one\ntwo'],
  ['text: a newline (CRLF)', f('text'), 'one\r\ntwo'],
  ['text: a carriage return', f('text'), 'one\rtwo'],
  ['text: a number', f('text'), 5],
  ['text: a boolean', f('text'), true],
  ['text: an array', f('text'), ['a']],
  ['text: an object', f('text'), { a: 'b' }],
  // textarea
  ['textarea: over max_length after CRLF became LF', f('textarea', { max_length: 5 }), 'ab\r\ncde'],
  ['textarea: over max_length', f('textarea', { max_length: 5 }), 'abcdef'],
  ['textarea: under min_length', f('textarea', { min_length: 3 }), 'ab'],
  ['textarea: 10001 chars (default max_length 10000)', f('textarea'), x(10_001)],
  ['textarea: a number', f('textarea'), 5],
  // email
  ['email: no dot in the domain', f('email'), 'ada@localhost'],
  ['email: no @', f('email'), 'ada.example.com'],
  ['email: no domain', f('email'), 'ada@'],
  ['email: no local part', f('email'), '@example.com'],
  ['email: two @', f('email'), 'ada@@example.com'],
  ['email: a space inside', f('email'), 'ada lovelace@example.com'],
  ['email: an empty domain label', f('email'), 'ada@example..com'],
  ['email: 255 chars', f('email'), emailOfLength(255)],
  ['email: a number', f('email'), 42],
  // number
  ['number: below min', f('number', { min: 1, max: 10 }), 0],
  ['number: just below min', f('number', { min: 1, max: 10 }), 0.999],
  ['number: above max', f('number', { min: 1, max: 10 }), 11],
  ['number: just above max', f('number', { min: 1, max: 10 }), 10.01],
  ['number: below a negative min', f('number', { min: -5 }), -6],
  ['number: off the step', f('number', { step: 5 }), 7],
  ['number: off the step counted from min', f('number', { min: 1, step: 2 }), 4],
  ['number: off a decimal step 0.1', f('number', { step: 0.1 }), 0.35],
  ['number: a non-numeric string', f('number'), 'abc'],
  ['number: digits followed by letters', f('number'), '3abc'],
  ['number: "1e400" (not finite)', f('number'), '1e400'],
  ['number: an integer past 2^53 (would lose digits)', f('number'), '12345678901234567890'],
  ['number: 2^53 itself', f('number'), 9007199254740992],
  ['number: "Infinity"', f('number'), 'Infinity'],
  ['number: "NaN"', f('number'), 'NaN'],
  ['number: hexadecimal', f('number'), '0x10'],
  ['number: a decimal comma', f('number'), '1,5'],
  ['number: a boolean', f('number'), true],
  ['number: an array', f('number'), [3]],
  ['number: an object', f('number'), { value: 3 }],
  // select
  ['select: the label of a {value,label} option', f('select', MEAL_OPTIONS), 'Vegetarian'],
  ['select: an option in another case', f('select', MEAL_OPTIONS), 'Fish'],
  ['select: not an option', f('select', MEAL_OPTIONS), 'beef'],
  ['select: a number', f('select', MEAL_OPTIONS), 1],
  ['select: an array of an option', f('select', MEAL_OPTIONS), ['fish']],
  // checkbox
  ['checkbox: required and false', f('checkbox', undefined, true), false],
  ['checkbox: a string that is no boolean', f('checkbox'), 'maybe'],
  ['checkbox: a number', f('checkbox'), 1],
  ['checkbox: an object', f('checkbox'), {}],
  // date
  ['date: February 30', f('date'), '2026-02-30'],
  ['date: February 29 of a common year', f('date'), '2025-02-29'],
  ['date: April 31', f('date'), '2026-04-31'],
  ['date: month 13', f('date'), '2026-13-01'],
  ['date: month 00', f('date'), '2026-00-10'],
  ['date: without zero padding', f('date'), '2026-6-1'],
  ['date: day/month/year', f('date'), '01/06/2026'],
  ['date: a datetime', f('date'), '2026-06-01T00:00:00'],
  ['date: a word', f('date'), 'tomorrow'],
  ['date: a number', f('date'), 20260601],
  ['date: the day before min', f('date', { min: '2026-01-01', max: '2026-12-31' }), '2025-12-31'],
  ['date: the day after max', f('date', { min: '2026-01-01', max: '2026-12-31' }), '2027-01-01'],
  // file: JSON cannot carry a file
  ['file: a file name', f('file', { accept: 'image/*' }), 'photo.png'],
  ['file: a data URL', f('file', { accept: 'image/*' }), 'data:image/png;base64,iVBORw0KGgo='],
  ['file: a URL', f('file'), 'https://example.com/photo.png'],
  ['file: an object', f('file'), { name: 'photo.png', content: 'aGVsbG8=' }],
  ['file: a number', f('file'), 123],
  ['file: true', f('file'), true],
]

describe.each([
  ['without a callback_url', {}],
  ['with a callback_url', { callback_url: HOOK }],
] as const)('values %s', (_mode, extra) => {
  const withCallback = 'callback_url' in extra

  test.each(ACCEPTED)('accepted: %s', async (_label, field, input, stored) => {
    const { form, res } = await answerOne(field, input, extra)
    expectReceipt(res, form.id)
    const response = await onlyResponse(form.id)
    expect(response.data).toEqual({ v: stored })
    expect(response.data.v).toStrictEqual(stored)
    const rows = await deliveries()
    if (withCallback) {
      expect(rows).toHaveLength(1)
      expect(JSON.parse(rows[0].payload).data).toEqual({ v: stored })
    } else {
      expect(rows).toHaveLength(0)
    }
  })

  test.each(REJECTED)('rejected: %s', async (_label, field, input) => {
    const { form, res } = await answerOne(field, input, extra)
    expectInvalid(res, ['/v'], true)
    await expectNothingRecorded(form.id)
  })

  test('a number literal too large for a double (1e400) is rejected', async () => {
    const form = await t.api.createForm({ fields: [f('number')], ...extra })
    const res = await submit(t.app, form.id, '{"v": 1e400}')
    expectInvalid(res, ['/v'], true)
    await expectNothingRecorded(form.id)
  })

  test('a number written as 3.0 in the JSON is stored as 3', async () => {
    const form = await t.api.createForm({ fields: [f('number')], ...extra })
    expectReceipt(await submit(t.app, form.id, '{"v": 3.0}'), form.id)
    const res = await t.api.get(`/forms/${form.id}/responses`)
    // The whole data object, as sent on the wire: an integer, not 3.0.
    expect(res.text).toContain('"data":{"v":3}')
  })
})

// ------------------------------------------------------------ empty and required

const EMPTY_INPUTS: Array<[string, unknown]> = [
  ['absent', ABSENT],
  ['null', null],
  ['""', ''],
  ['only spaces', '   '],
]

const OPTIONAL_NON_CHECKBOX: Field[] = [
  f('text', { min_length: 3, pattern: '[a-z]+' }),
  f('textarea', { min_length: 3 }),
  f('email'),
  f('number', { min: 1, max: 10 }),
  f('select', MEAL_OPTIONS),
  f('date', { min: '2026-01-01' }),
  f('file', { accept: 'image/*' }),
]

const emptyCases = OPTIONAL_NON_CHECKBOX.flatMap((field) =>
  EMPTY_INPUTS.map(([name, input]) => [field.type, name, field, input] as [string, string, Field, unknown]),
)

describe('an optional field left empty', () => {
  test.each(emptyCases)('%s left %s is left out of data', async (_type, _name, field, input) => {
    const form = await t.api.createForm({ fields: [field, { key: 'other', type: 'text', label: 'Other' }] })
    const res = await submit(t.app, form.id, input === ABSENT ? { other: 'kept' } : { v: input, other: 'kept' })
    expectReceipt(res, form.id)
    const { data } = await onlyResponse(form.id)
    expect(data).toEqual({ other: 'kept' })
    expect(Object.hasOwn(data, 'v')).toBe(false)
  })

  test('an empty object for a form of only optional fields stores an empty data object, checkboxes false', async () => {
    const form = await t.api.createForm({
      fields: [
        ...OPTIONAL_NON_CHECKBOX.map((field) => ({ ...field, key: field.type })),
        { key: 'tick', type: 'checkbox', label: 'Tick' },
      ],
    })
    expectReceipt(await submit(t.app, form.id, {}), form.id)
    expect((await onlyResponse(form.id)).data).toEqual({ tick: false })
  })
})

const REQUIRED_TYPES: Field[] = [
  f('text', undefined, true),
  f('textarea', undefined, true),
  f('email', undefined, true),
  f('number', undefined, true),
  f('select', MEAL_OPTIONS, true),
  f('date', undefined, true),
  f('file', undefined, true),
]

const requiredCases = REQUIRED_TYPES.flatMap((field) =>
  EMPTY_INPUTS.map(([name, input]) => [field.type, name, field, input] as [string, string, Field, unknown]),
)

describe('a required field', () => {
  test.each(requiredCases)('%s left %s is 422 at /v', async (_type, _name, field, input) => {
    const { form, res } = await answerOne(field, input)
    expectInvalid(res, ['/v'], true)
    await expectNothingRecorded(form.id)
  })

  test.each([
    ['absent', ABSENT],
    ['null', null],
    ['false', false],
    ['"false"', 'false'],
  ] as Array<[string, unknown]>)('a required checkbox %s is 422 at /v', async (_name, input) => {
    const { form, res } = await answerOne(f('checkbox', undefined, true), input)
    expectInvalid(res, ['/v'], true)
    await expectNothingRecorded(form.id)
  })

  test('every missing required field is reported, each at /<key>', async () => {
    const form = await t.api.createForm({ fields: EVERY_TYPE_FIELDS })
    const res = await submit(t.app, form.id, {})
    // name (text) and agree (checkbox) are the required ones.
    expectInvalid(res, ['/name', '/agree'], true)
    await expectNothingRecorded(form.id)
  })

  test('missing and invalid fields are reported together', async () => {
    const form = await t.api.createForm({ fields: EVERY_TYPE_FIELDS })
    const res = await submit(t.app, form.id, { ...EVERY_TYPE_ANSWERS, name: undefined, guests: 11, day: '2026-02-30' })
    expectInvalid(res, ['/name', '/guests', '/day'], true)
  })

  test('a key with "-" is reported under its own key', async () => {
    const form = await t.api.createForm({
      fields: [{ key: 'first-name', type: 'text', label: 'First name', required: true }],
    })
    expectInvalid(await submit(t.app, form.id, {}), ['/first-name'], true)
  })

  test('a rejected submission does not use up the form: a valid one afterwards is 201', async () => {
    const form = await t.api.createForm()
    expectInvalid(await submit(t.app, form.id, {}), ['/name'])
    const res = await submit(t.app, form.id, { name: 'Ada' })
    expectReceipt(res, form.id)
    expect((await onlyResponse(form.id)).data).toEqual({ name: 'Ada' })
  })
})

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

// ------------------------------------------------------------ public rate limit

describe('the per-IP public rate limit', () => {
  async function forms(ctx: TestContext, n: number) {
    const ids: string[] = []
    for (let i = 0; i < n; i++) ids.push((await ctx.api.createForm()).id)
    return ids
  }
  const from = (ip: string) => ({ 'x-forwarded-for': ip })

  test('the 4th POST from one address within the minute is 429 with Retry-After; another address still passes; 60 s later the first passes again', async () => {
    const ctx = await createTestContext({ SERVICE_PUBLIC_RATE_LIMIT: '3', SERVICE_TRUST_PROXY: 'true' })
    try {
      const ids = await forms(ctx, 6)
      for (let i = 0; i < 3; i++)
        expectReceipt(await submit(ctx.app, ids[i]!, { name: 'Ada' }, from('203.0.113.1')), ids[i]!)

      const limited = await submit(ctx.app, ids[3]!, { name: 'Ada' }, from('203.0.113.1'))
      expect(limited.status).toBe(429)
      expect(typeof limited.body.detail).toBe('string')
      const retryAfter = limited.headers.get('retry-after')
      expect(retryAfter).toMatch(/^[0-9]+$/)
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
      expect(Number(retryAfter)).toBeLessThanOrEqual(60)
      expect(await responsesOf(ids[3]!, ctx)).toEqual([])

      // Another address has its own allowance.
      expectReceipt(await submit(ctx.app, ids[3]!, { name: 'Ada' }, from('198.51.100.2')), ids[3]!)

      ctx.clock.advance(60_000)
      expectReceipt(await submit(ctx.app, ids[4]!, { name: 'Ada' }, from('203.0.113.1')), ids[4]!)
    } finally {
      ctx.close()
    }
  })

  test('rejected submissions count too', async () => {
    const ctx = await createTestContext({ SERVICE_PUBLIC_RATE_LIMIT: '3', SERVICE_TRUST_PROXY: 'true' })
    try {
      const [id] = await forms(ctx, 1)
      for (let i = 0; i < 3; i++) expect((await submit(ctx.app, id!, {}, from('203.0.113.1'))).status).toBe(422)
      expect((await submit(ctx.app, id!, { name: 'Ada' }, from('203.0.113.1'))).status).toBe(429)
      expect(await responsesOf(id!, ctx)).toEqual([])
    } finally {
      ctx.close()
    }
  })

  test('waiting Retry-After seconds is enough to be let in again', async () => {
    const ctx = await createTestContext({ SERVICE_PUBLIC_RATE_LIMIT: '3', SERVICE_TRUST_PROXY: 'true' })
    try {
      const ids = await forms(ctx, 5)
      for (let i = 0; i < 3; i++)
        expect((await submit(ctx.app, ids[i]!, { name: 'Ada' }, from('203.0.113.1'))).status).toBe(201)
      const limited = await submit(ctx.app, ids[3]!, { name: 'Ada' }, from('203.0.113.1'))
      expect(limited.status).toBe(429)
      ctx.clock.advance(Number(limited.headers.get('retry-after')) * 1000)
      expectReceipt(await submit(ctx.app, ids[3]!, { name: 'Ada' }, from('203.0.113.1')), ids[3]!)
    } finally {
      ctx.close()
    }
  })

  test('without SERVICE_TRUST_PROXY a changing X-Forwarded-For does not escape the limit', async () => {
    const ctx = await createTestContext({ SERVICE_PUBLIC_RATE_LIMIT: '3' })
    try {
      const ids = await forms(ctx, 4)
      for (let i = 0; i < 3; i++)
        expect((await submit(ctx.app, ids[i]!, { name: 'Ada' }, from(`203.0.113.${i + 1}`))).status).toBe(201)
      expect((await submit(ctx.app, ids[3]!, { name: 'Ada' }, from('203.0.113.99'))).status).toBe(429)
    } finally {
      ctx.close()
    }
  })
})

// ------------------------------------------------------------ concurrency

describe('exactly one response under concurrency', () => {
  test.each([
    ['without a callback_url', {}],
    ['with a callback_url', { callback_url: HOOK }],
  ] as const)('20 simultaneous submissions %s: one 201, nineteen 409', async (_mode, extra) => {
    const form = await t.api.createForm(extra)
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        submit(t.app, form.id, { name: `person-${i}` }, { 'user-agent': `agent-${i}` }).then((res) => ({ i, res })),
      ),
    )
    const created = results.filter(({ res }) => res.status === 201)
    const conflicts = results.filter(({ res }) => res.status === 409)
    expect(created).toHaveLength(1)
    expect(conflicts).toHaveLength(19)
    for (const { res } of conflicts) expect(typeof res.body.detail).toBe('string')

    const winner = created[0]!
    expectReceipt(winner.res, form.id)
    const stored = await onlyResponse(form.id)
    expect(stored.id).toBe(winner.res.body.id)
    expect(stored.submitted_at).toBe(winner.res.body.submitted_at)
    expect(stored.data).toEqual({ name: `person-${winner.i}` })
    expect(stored.metadata.user_agent).toBe(`agent-${winner.i}`)
    expect(await formStatus(form.id)).toBe('completed')

    const rows = await deliveries()
    if ('callback_url' in extra) {
      expect(rows).toHaveLength(1)
      expect(rows[0].response_id).toBe(winner.res.body.id)
      expect(JSON.parse(rows[0].payload).data).toEqual({ name: `person-${winner.i}` })
    } else {
      expect(rows).toHaveLength(0)
    }
  })
})

describe('an answer racing a cancellation', () => {
  test('each of 30 forms ends one way: answered (201, completed, its response) or cancelled (200, no response), never both', async () => {
    const forms = await Promise.all(Array.from({ length: 30 }, () => t.api.createForm()))
    const outcomes = await Promise.all(
      forms.map(async (form) => {
        const [answer, cancel] = await Promise.all([
          submit(t.app, form.id, { name: 'Ada' }),
          t.api.patch(`/forms/${form.id}`, { status: 'cancelled' }),
        ])
        const status = await formStatus(form.id)
        const responses = (await t.api.get(`/forms/${form.id}/responses`)).body as unknown[]
        return { answer: answer.status, cancel: cancel.status, status, responses: responses.length }
      }),
    )
    for (const outcome of outcomes) {
      expect([
        { answer: 201, cancel: 409, status: 'completed', responses: 1 },
        { answer: 410, cancel: 200, status: 'cancelled', responses: 0 },
      ]).toContainEqual(outcome)
    }
  })
})

// ------------------------------------------------------------ webhook outbox

describe('the webhook delivery written with the response', () => {
  const PAYLOAD_KEYS = [
    'callback_metadata',
    'completed_at',
    'context',
    'data',
    'event',
    'form_id',
    'form_title',
    'metadata',
    'response_id',
  ]

  test('one row whose payload has the spec 6.2 shape', async () => {
    const context = { step: 3, nested: { list: [1, 'two', null], flag: true }, text: 'Zoë' }
    const callback_metadata = { ticket: 'T-42', n: 7 }
    const form = await t.api.createForm({
      title: 'Dinner RSVP',
      fields: EVERY_TYPE_FIELDS,
      callback_url: HOOK,
      callback_metadata,
      context,
    })
    const res = await submit(t.app, form.id, EVERY_TYPE_ANSWERS, { 'user-agent': 'ua-test/1' })
    expectReceipt(res, form.id)
    const stored = await onlyResponse(form.id)

    const rows = await deliveries()
    expect(rows).toHaveLength(1)
    const row = rows[0]
    expect(row.form_id).toBe(form.id)
    expect(row.response_id).toBe(res.body.id)
    expect(row.event).toBe('form.completed')
    expect(row.url).toBe(HOOK)

    const payload = JSON.parse(row.payload)
    expect(Object.keys(payload).sort()).toEqual(PAYLOAD_KEYS)
    expect(payload.event).toBe('form.completed')
    expect(payload.form_id).toBe(form.id)
    expect(payload.form_title).toBe('Dinner RSVP')
    expect(payload.completed_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/)
    expect(new Date(payload.completed_at).getTime()).toBe(new Date(`${res.body.submitted_at}Z`).getTime())
    expect(payload.response_id).toBe(res.body.id)
    expect(payload.data).toEqual(EVERY_TYPE_ANSWERS)
    expect(payload.data).toEqual(stored.data)
    expect(payload.metadata).toEqual({ ip: null, user_agent: 'ua-test/1' })
    expect(payload.metadata).toEqual(stored.metadata)
    expect(payload.callback_metadata).toEqual(callback_metadata)
    expect(payload.context).toEqual(context)
  })

  test('callback_metadata is {} and context null when none were given', async () => {
    const form = await t.api.createForm({ callback_url: HOOK })
    expectReceipt(await submit(t.app, form.id, { name: 'Ada' }), form.id)
    const rows = await deliveries()
    expect(rows).toHaveLength(1)
    const payload = JSON.parse(rows[0].payload)
    expect(payload.callback_metadata).toEqual({})
    expect(payload.context).toBeNull()
    expect(Object.hasOwn(payload, 'context')).toBe(true)
    expect(payload.data).toEqual({ name: 'Ada' })
  })

  test('the payload records the trusted-proxy ip', async () => {
    const ctx = await createTestContext({ SERVICE_TRUST_PROXY: 'true' })
    try {
      const form = await ctx.api.createForm({ callback_url: HOOK })
      expectReceipt(
        await submit(ctx.app, form.id, { name: 'Ada' }, { 'x-forwarded-for': '10.1.1.1, 203.0.113.9' }),
        form.id,
      )
      const rows = await deliveries(ctx)
      expect(rows).toHaveLength(1)
      expect(JSON.parse(rows[0].payload).metadata).toEqual({ ip: '203.0.113.9', user_agent: null })
    } finally {
      ctx.close()
    }
  })

  test('no row without a callback_url', async () => {
    const form = await t.api.createForm()
    expectReceipt(await submit(t.app, form.id, { name: 'Ada' }), form.id)
    expect(await deliveries()).toEqual([])
  })

  test('no row for a refused submission (422, 409, 410)', async () => {
    const invalidForm = await t.api.createForm({ callback_url: HOOK })
    expect((await submit(t.app, invalidForm.id, {})).status).toBe(422)
    expect(await deliveries()).toEqual([])

    const done = await t.api.createForm({ callback_url: HOOK })
    expectReceipt(await submit(t.app, done.id, { name: 'Ada' }), done.id)
    expect((await submit(t.app, done.id, { name: 'Grace' })).status).toBe(409)
    expect(await deliveries()).toHaveLength(1)

    const cancelled = await t.api.createForm({ callback_url: HOOK })
    expect((await t.api.patch(`/forms/${cancelled.id}`, { status: 'cancelled' })).status).toBe(200)
    expect((await submit(t.app, cancelled.id, { name: 'Ada' })).status).toBe(410)
    expect(await deliveries()).toHaveLength(1)
  })
})
