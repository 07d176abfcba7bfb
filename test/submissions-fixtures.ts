/**
 * What the JSON submission tests (test/submissions-*.test.ts) share: fields of each
 * type, how a refusal and a receipt must look, and the requests made on the test
 * file's context.
 */
import { expect } from 'bun:test'
import { API_TIME_PATTERN, submit, type TestContext, type TestResponse, ULID_PATTERN } from './utils.ts'

// ---------------------------------------------------------------- helpers

/** A callback nobody listens on: the outbox row is written, nothing is delivered in-process. */
export const HOOK = 'http://127.0.0.1:9/hook'
/** Marks a case where the key is left out of the submitted object. */
export const ABSENT = Symbol('absent')

export type Field = { key: string; type: string; label: string; required?: boolean; config?: Record<string, unknown> }

/** A field with key "v". */
export const f = (type: string, config?: Record<string, unknown>, required = false): Field => ({
  key: 'v',
  type,
  label: `A ${type}`,
  required,
  ...(config ? { config } : {}),
})

export const MEAL_OPTIONS = { options: ['fish', { value: 'veg', label: 'Vegetarian' }] }

/** A 422 with `detail` and `errors`, whose paths include (or, with `exact`, are exactly) `paths`. */
export function expectInvalid(res: TestResponse, paths: string[], exact = false) {
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

/** The 201 receipt: exactly {id, form_id, submitted_at}. */
export function expectReceipt(res: TestResponse, formId: string) {
  expect(res.status).toBe(201)
  expect(Object.keys(res.body).sort()).toEqual(['form_id', 'id', 'submitted_at'])
  expect(res.body.id).toMatch(ULID_PATTERN)
  expect(res.body.form_id).toBe(formId)
  expect(res.body.submitted_at).toMatch(API_TIME_PATTERN)
}

export const x = (n: number) => 'x'.repeat(n)

/** An address of exactly `length` characters (64-char local part, DNS labels of at most 63). */
export function emailOfLength(length: number): string {
  const local = 'a'.repeat(64)
  const fixed = `${local}@${'b'.repeat(63)}.${'c'.repeat(63)}.`
  const last = length - fixed.length - '.com'.length
  return `${fixed}${'d'.repeat(last)}.com`
}

/** The helpers that act on the test's context, made on the one `current` returns (each test file's own). */
export function submissionRequests(current: () => TestContext) {
  /** Submits one value (or none) for field "v" of a fresh form with only that field. */
  async function answerOne(field: Field, value: unknown, extra: Record<string, unknown> = {}) {
    const form = await current().api.createForm({ fields: [field], ...extra })
    const res = await submit(current().app, form.id, value === ABSENT ? {} : { [field.key]: value })
    return { form, res }
  }

  /** The responses of a form, through the API. */
  async function responsesOf(formId: string, ctx: TestContext = current()): Promise<any[]> {
    const res = await ctx.api.get(`/forms/${formId}/responses`)
    expect(res.status).toBe(200)
    expect(Array.isArray(res.body)).toBe(true)
    return res.body
  }

  /** The one stored response of a form. */
  async function onlyResponse(formId: string, ctx: TestContext = current()) {
    const list = await responsesOf(formId, ctx)
    expect(list).toHaveLength(1)
    return list[0]
  }

  async function formStatus(formId: string, ctx: TestContext = current()) {
    const res = await ctx.api.get(`/forms/${formId}`)
    expect(res.status).toBe(200)
    return res.body.status as string
  }

  function deliveries(ctx: TestContext = current()): Promise<any[]> {
    return ctx.sql('select * from deliveries')
  }

  /** Nothing was recorded: no response, the form still active, no webhook queued. */
  async function expectNothingRecorded(formId: string) {
    expect(await responsesOf(formId)).toEqual([])
    expect(await formStatus(formId)).toBe('active')
    expect((await deliveries()).filter((d) => d.form_id === formId)).toEqual([])
  }
  return { answerOne, responsesOf, onlyResponse, formStatus, deliveries, expectNothingRecorded }
}
