/**
 * Typed answers: GET /api/v1/forms/<id>/schema is the JSON Schema (draft
 * 2020-12) of the `data` a response to the form holds. Checked field type by
 * field type, and then the point of it: real stored answers validate against
 * it with a real JSON Schema validator, and data breaking any rule does not.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import Ajv2020 from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import {
  apiClient,
  createTestContext,
  EVERY_TYPE_ANSWERS,
  EVERY_TYPE_FIELDS,
  postForm,
  submit,
  type TestContext,
  UNKNOWN_ID,
} from './utils.ts'

let t: TestContext

beforeEach(async () => {
  t = await createTestContext()
})

afterEach(async () => {
  await t.close()
})

const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema'

/** Every type (test/utils.ts), a text field with pattern and min_length, and an optional checkbox. */
const FIELDS = [
  ...EVERY_TYPE_FIELDS,
  {
    key: 'code',
    type: 'text',
    label: 'Booking code',
    required: true,
    config: { pattern: '[A-Z]{3}-[0-9]{2}', min_length: 6 },
  },
  { key: 'newsletter', type: 'checkbox', label: 'Send me news' },
]

type JsonSchema = {
  $schema: string
  title: string
  type: string
  properties: Record<string, Record<string, unknown>>
  required: string[]
  additionalProperties: boolean
}

async function formWith(fields: unknown[], title = 'Every type') {
  const form = await t.api.createForm({ title, fields })
  return form.id
}

async function schemaOf(formId: string): Promise<JsonSchema> {
  const res = await t.api.get(`/forms/${formId}/schema`)
  expect({ status: res.status, text: res.status === 200 ? '' : res.text }).toEqual({ status: 200, text: '' })
  expect(res.headers.get('content-type')).toContain('application/json')
  return res.body as JsonSchema
}

/** A strict draft 2020-12 validator that checks formats, as an agent would set one up. */
function validatorFor(schema: JsonSchema) {
  const ajv = new Ajv2020({ strict: true, allErrors: true })
  addFormats(ajv)
  return ajv.compile(schema)
}

/** A complete answer as the page posts it (multipart, since there is a file), read back from the API. */
async function answerThroughThePage(formId: string, values: Record<string, string>, withFile = true) {
  const body = new FormData()
  for (const [key, value] of Object.entries(values)) body.append(key, value)
  if (withFile)
    body.append('photo', new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3])], 'me.png', { type: 'image/png' }))
  const res = await postForm(t.app, formId, body)
  expect({ status: res.status, text: res.status === 303 ? '' : res.text.slice(0, 500) }).toEqual({
    status: 303,
    text: '',
  })
  const list = await t.api.get(`/forms/${formId}/responses`)
  expect(list.status).toBe(200)
  expect(list.body).toHaveLength(1)
  return list.body[0].data as Record<string, unknown>
}

const COMPLETE_POST = {
  name: 'Ada',
  notes: 'Line one\r\nLine two',
  email: 'ada@example.com',
  guests: '3',
  meal: 'veg',
  agree: 'on',
  day: '2026-06-01',
  code: 'ABC-12',
  newsletter: 'on',
}

describe('GET /api/v1/forms/<id>/schema', () => {
  test('is a draft 2020-12 object schema: no other keys, required = the required fields plus every checkbox', async () => {
    const schema = await schemaOf(await formWith(FIELDS))
    expect(schema.$schema).toBe(DRAFT_2020_12)
    expect(schema.type).toBe('object')
    expect(schema.additionalProperties).toBe(false)
    expect(schema.title).toBe('Every type')
    expect(Object.keys(schema.properties)).toEqual(FIELDS.map((field) => field.key))
    expect([...schema.required].sort()).toEqual(['agree', 'code', 'name', 'newsletter'])
    // Each property carries the label a person read.
    for (const field of FIELDS) expect(schema.properties[field.key]!.title).toBe(field.label)
  })

  test('each type: text, textarea, email, number, select, checkbox, date, file', async () => {
    const { properties: p } = await schemaOf(await formWith(FIELDS))
    // text: string with its length bounds; the pattern anchored as HTML matches it (the whole value).
    expect(p.name).toMatchObject({ type: 'string', maxLength: 50 })
    expect(p.name).not.toHaveProperty('pattern')
    expect(p.code).toMatchObject({ type: 'string', minLength: 6, maxLength: 1000, pattern: '^(?:[A-Z]{3}-[0-9]{2})$' })
    // textarea: string with a maximum length.
    expect(p.notes).toMatchObject({ type: 'string', maxLength: 10_000 })
    expect(p.notes).not.toHaveProperty('format')
    // email
    expect(p.email).toMatchObject({ type: 'string', format: 'email' })
    // number: bounds, and multipleOf since the step counts from 0 (min 1 is on a step of 1).
    expect(p.guests).toMatchObject({ type: 'number', minimum: 1, maximum: 10, multipleOf: 1 })
    // select: the option values, never the labels.
    expect(p.meal).toMatchObject({ type: 'string', enum: ['fish', 'veg'] })
    expect(p.meal!.enum).not.toContain('Vegetarian')
    // checkbox: boolean; a required one can only be ticked.
    expect(p.agree).toMatchObject({ type: 'boolean', const: true })
    expect(p.newsletter).toMatchObject({ type: 'boolean' })
    expect(p.newsletter).not.toHaveProperty('const')
    // date
    expect(p.day).toMatchObject({ type: 'string', format: 'date' })
    // file: the URL to download it from.
    expect(p.photo).toMatchObject({ type: 'string', format: 'uri' })
  })

  test('number: multipleOf only when the step counts from 0', async () => {
    const { properties: p } = await schemaOf(
      await formWith([
        { key: 'half', type: 'number', label: 'Half steps', config: { step: 0.5 } },
        { key: 'tens', type: 'number', label: 'Tens', config: { min: 20, max: 90, step: 10 } },
        { key: 'offset', type: 'number', label: 'Odd', config: { min: 1, step: 2 } },
        { key: 'plain', type: 'number', label: 'Any number' },
      ]),
    )
    expect(p.half).toMatchObject({ type: 'number', multipleOf: 0.5 })
    expect(p.tens).toMatchObject({ type: 'number', minimum: 20, maximum: 90, multipleOf: 10 })
    // 1, 3, 5... are not multiples of 2: multipleOf would refuse every valid answer.
    expect(p.offset).toMatchObject({ type: 'number', minimum: 1 })
    expect(p.offset).not.toHaveProperty('multipleOf')
    expect(p.plain!.type).toBe('number')
    expect(p.plain).not.toHaveProperty('minimum')
    expect(p.plain).not.toHaveProperty('maximum')
    expect(p.plain).not.toHaveProperty('multipleOf')
  })

  test('select options given as objects are listed by value; text without limits gets the default max length', async () => {
    const { properties: p, required } = await schemaOf(
      await formWith([
        {
          key: 'size',
          type: 'select',
          label: 'Size',
          required: true,
          config: { options: [{ value: 's', label: 'Small' }, { value: 'l', label: 'Large' }, 'xl'] },
        },
        { key: 'note', type: 'text', label: 'Note' },
      ]),
    )
    expect(p.size).toMatchObject({ type: 'string', enum: ['s', 'l', 'xl'] })
    expect(p.note).toMatchObject({ type: 'string', maxLength: 1000 })
    expect(p.note).not.toHaveProperty('minLength')
    expect(required).toEqual(['size'])
  })

  test("is 404 for an unknown form and for another account's form", async () => {
    const unknown = await t.api.get(`/forms/${UNKNOWN_ID}/schema`)
    expect(unknown.status).toBe(404)
    expect(unknown.body).toMatchObject({ detail: 'Form not found' })

    const mine = await formWith(FIELDS)
    const other = apiClient(t.app, (await t.createKey('other')).key)
    const theirs = await other.get(`/forms/${mine}/schema`)
    expect(theirs.status).toBe(404)
    expect(theirs.body).toMatchObject({ detail: 'Form not found' })
    // The owner still reads it.
    expect((await t.api.get(`/forms/${mine}/schema`)).status).toBe(200)
  })

  test('a deleted form has no schema', async () => {
    const id = await formWith(FIELDS)
    expect((await t.api.delete(`/forms/${id}`)).status).toBe(204)
    expect((await t.api.get(`/forms/${id}/schema`)).status).toBe(404)
  })
})

describe('real answers against the schema (ajv, draft 2020-12, formats checked)', () => {
  test('the schema compiles in strict mode', async () => {
    const schema = await schemaOf(await formWith(FIELDS))
    expect(() => validatorFor(schema)).not.toThrow()
  })

  test('a complete answer posted through the page and read back from the API validates', async () => {
    const id = await formWith(FIELDS)
    const validate = validatorFor(await schemaOf(id))
    const data = await answerThroughThePage(id, COMPLETE_POST)
    // The stored answer is what we posted, typed.
    expect(data).toMatchObject({ ...EVERY_TYPE_ANSWERS, code: 'ABC-12', newsletter: true })
    expect(typeof data.photo).toBe('string')
    const valid = validate(data)
    expect({ valid, errors: validate.errors ?? null }).toEqual({ valid: true, errors: null })
  })

  test('a sparse answer (optional fields left empty, the optional box unticked) validates', async () => {
    const id = await formWith(FIELDS)
    const validate = validatorFor(await schemaOf(id))
    const data = await answerThroughThePage(
      id,
      { name: 'Ada', notes: '', email: '', guests: '', meal: '', agree: 'on', day: '', code: 'XYZ-99' },
      false,
    )
    expect(data).toEqual({ name: 'Ada', agree: true, code: 'XYZ-99', newsletter: false })
    const valid = validate(data)
    expect({ valid, errors: validate.errors ?? null }).toEqual({ valid: true, errors: null })
  })

  test('an answer submitted as JSON by a custom front end validates too', async () => {
    const fields = FIELDS.filter((field) => field.type !== 'file')
    const id = await formWith(fields)
    const validate = validatorFor(await schemaOf(id))
    const res = await submit(t.app, id, { ...EVERY_TYPE_ANSWERS, guests: 10, code: 'QQQ-00', newsletter: false })
    expect(res.status).toBe(201)
    const data = (await t.api.get(`/forms/${id}/responses`)).body[0].data
    const valid = validate(data)
    expect({ valid, errors: validate.errors ?? null }).toEqual({ valid: true, errors: null })
  })

  describe('data breaking a rule is rejected by the schema', () => {
    let validate: ReturnType<typeof validatorFor>
    let stored: Record<string, unknown>

    beforeEach(async () => {
      const id = await formWith(FIELDS)
      validate = validatorFor(await schemaOf(id))
      stored = await answerThroughThePage(id, COMPLETE_POST)
      expect(validate(stored)).toBe(true)
    })

    /** `change` applied to a copy of the stored answer must fail with `keyword` at `path`. */
    function expectRejected(change: (data: Record<string, unknown>) => void, keyword: string, path: string) {
      const data = structuredClone(stored)
      change(data)
      const valid = validate(data)
      expect(valid).toBe(false)
      const errors = (validate.errors ?? []).map((e) => ({ keyword: e.keyword, path: e.instancePath }))
      expect(errors).toContainEqual({ keyword, path })
    }

    test('wrong types', () => {
      expectRejected((d) => (d.guests = '3'), 'type', '/guests')
      expectRejected((d) => (d.name = 42), 'type', '/name')
      expectRejected((d) => (d.newsletter = 'on'), 'type', '/newsletter')
      expectRejected((d) => (d.agree = 1), 'type', '/agree')
      expectRejected((d) => (d.day = 20260601), 'type', '/day')
      expectRejected((d) => (d.photo = null), 'type', '/photo')
      expectRejected((d) => (d.notes = ['a']), 'type', '/notes')
    })

    test('values out of bounds: number range and step, string lengths, the pattern', () => {
      expectRejected((d) => (d.guests = 11), 'maximum', '/guests')
      expectRejected((d) => (d.guests = 0), 'minimum', '/guests')
      expectRejected((d) => (d.guests = 2.5), 'multipleOf', '/guests')
      expectRejected((d) => (d.name = 'x'.repeat(51)), 'maxLength', '/name')
      expectRejected((d) => (d.notes = 'x'.repeat(10_001)), 'maxLength', '/notes')
      expectRejected((d) => (d.code = 'AB-1'), 'minLength', '/code')
      expectRejected((d) => (d.code = 'abc-12'), 'pattern', '/code')
      // Anchored: a matching part inside a longer value is not enough.
      expectRejected((d) => (d.code = 'xxABC-12'), 'pattern', '/code')
      expectRejected((d) => (d.code = 'ABC-123'), 'pattern', '/code')
    })

    test('formats: email, date, uri', () => {
      expectRejected((d) => (d.email = 'not-an-email'), 'format', '/email')
      expectRejected((d) => (d.day = '2026-13-45'), 'format', '/day')
      expectRejected((d) => (d.day = '01/06/2026'), 'format', '/day')
      expectRejected((d) => (d.photo = 'not a uri'), 'format', '/photo')
    })

    test('not in the enum: a label instead of the value, or an unknown option', () => {
      expectRejected((d) => (d.meal = 'Vegetarian'), 'enum', '/meal')
      expectRejected((d) => (d.meal = 'beef'), 'enum', '/meal')
    })

    test('a required box unticked', () => {
      expectRejected((d) => (d.agree = false), 'const', '/agree')
    })

    test('a missing required key: a required field, or any checkbox', () => {
      expectRejected((d) => delete d.name, 'required', '')
      expectRejected((d) => delete d.code, 'required', '')
      expectRejected((d) => delete d.agree, 'required', '')
      expectRejected((d) => delete d.newsletter, 'required', '')
    })

    test('an extra key', () => {
      expectRejected((d) => (d.surprise = 'x'), 'additionalProperties', '')
    })

    test('optional keys may be missing', () => {
      const data = structuredClone(stored)
      for (const key of ['notes', 'email', 'guests', 'meal', 'day', 'photo']) delete data[key]
      expect(validate(data)).toBe(true)
    })
  })
})

describe('choices (select multiple, radios, a drop-down) against the schema', () => {
  const CHOICES = [
    {
      key: 'tags',
      type: 'select',
      label: 'Tags',
      required: true,
      config: { options: ['a', 'b', 'c', 'd'], multiple: true, max_selected: 3 },
    },
    {
      key: 'extras',
      type: 'select',
      label: 'Extras',
      config: { options: ['x', 'y', 'z'], multiple: true, min_selected: 2 },
    },
    { key: 'any', type: 'select', label: 'Any', config: { options: ['p', 'q'], multiple: true } },
    {
      key: 'ok',
      type: 'select',
      label: 'Approve?',
      required: true,
      config: { options: ['yes', 'no'], display: 'radio' },
    },
    { key: 'city', type: 'select', label: 'City', config: { options: ['Oslo', 'Rome'], display: 'dropdown' } },
  ]

  test('a multiple select is an array of unique option values with its bounds; a single one a string enum', async () => {
    const { properties: p, required } = await schemaOf(await formWith(CHOICES))
    expect(p.tags).toEqual({
      title: 'Tags',
      type: 'array',
      items: { type: 'string', enum: ['a', 'b', 'c', 'd'] },
      uniqueItems: true,
      minItems: 1,
      maxItems: 3,
    })
    // Optional: no answer is left out of data; an answer given chose at least min_selected.
    expect(p.extras).toEqual({
      title: 'Extras',
      type: 'array',
      items: { type: 'string', enum: ['x', 'y', 'z'] },
      uniqueItems: true,
      minItems: 2,
    })
    expect(p.any).toEqual({
      title: 'Any',
      type: 'array',
      items: { type: 'string', enum: ['p', 'q'] },
      uniqueItems: true,
    })
    expect(p.ok).toEqual({ title: 'Approve?', type: 'string', enum: ['yes', 'no'] })
    expect(p.city).toEqual({ title: 'City', type: 'string', enum: ['Oslo', 'Rome'] })
    expect(required).toEqual(['tags', 'ok'])
  })

  test('answers posted through the page and sent as JSON validate; what breaks a rule does not', async () => {
    const page = await formWith(CHOICES)
    const validate = validatorFor(await schemaOf(page))
    const body: Array<[string, string]> = [
      ['tags', 'c'],
      ['tags', 'a'],
      ['extras', 'z'],
      ['extras', 'x'],
      ['ok', 'no'],
      ['city', 'Rome'],
    ]
    expect((await postForm(t.app, page, body)).status).toBe(303)
    const posted = (await t.api.get(`/forms/${page}/responses`)).body[0].data
    expect(posted).toEqual({ tags: ['a', 'c'], extras: ['x', 'z'], ok: 'no', city: 'Rome' })
    expect({ valid: validate(posted), errors: validate.errors ?? null }).toEqual({ valid: true, errors: null })

    const json = await formWith(CHOICES)
    expect((await submit(t.app, json, { tags: ['d'], ok: 'yes', any: ['q', 'p'] })).status).toBe(201)
    const sent = (await t.api.get(`/forms/${json}/responses`)).body[0].data
    expect(sent).toEqual({ tags: ['d'], ok: 'yes', any: ['p', 'q'] })
    expect(validate(sent)).toBe(true)

    for (const broken of [
      { ...sent, tags: ['d', 'd'] },
      { ...sent, tags: ['a', 'b', 'c', 'd'] },
      { ...sent, tags: [] },
      { ...sent, tags: 'd' },
      { ...sent, extras: ['x'] },
      { ...sent, any: ['r'] },
      { ...sent, ok: ['yes'] },
    ])
      expect(validate(broken)).toBe(false)
  })
})
