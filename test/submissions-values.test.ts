/**
 * The JSON submission path, POST /f/<id> (CONTRACT 5, 6; spec 2.4): the receipt,
 * the values each field type takes and refuses, empty and required fields.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import {
  ABSENT,
  emailOfLength,
  expectInvalid,
  expectReceipt,
  type Field,
  f,
  HOOK,
  MEAL_OPTIONS,
  submissionRequests,
  x,
} from './submissions-fixtures.ts'
import { createTestContext, EVERY_TYPE_ANSWERS, EVERY_TYPE_FIELDS, submit, type TestContext } from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())
const { answerOne, onlyResponse, formStatus, deliveries, expectNothingRecorded } = submissionRequests(() => t)

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
