/**
 * What the create tests (test/forms-create-*.test.ts) share: how a 201 and a 422
 * must look, bodies of a given size and depth, and creation on the test file's
 * context.
 */
import { expect } from 'bun:test'
import { type TestContext, type TestResponse, validForm } from './utils.ts'

// ---------------------------------------------------------------- helpers

export type Json = Record<string, unknown>
export type PathMatcher = string | RegExp

/**
 * Status and a fresh copy of the body, so a failing expectation shows what came
 * back. (Bun's toMatchObject writes its matchers into the object it receives.)
 */
export const outcome = (res: TestResponse) => {
  let body: unknown = res.text
  try {
    body = JSON.parse(res.text)
  } catch {}
  return { status: res.status, body }
}

export function expectCreated(res: TestResponse): Json {
  expect(outcome(res)).toMatchObject({ status: 201, body: { id: expect.any(String) } })
  return res.body
}

/** A 422 with a `detail` string and an `errors` array naming each of `paths` (a RegExp matches one of several paths). */
export function expectRejected(res: TestResponse, ...paths: PathMatcher[]) {
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
export const oneField = (field: Json, overrides: Json = {}) => validForm({ fields: [field], ...overrides })

/** A field of `type` keyed `q`, with `config` when given. */
export const fieldOf = (type: string, config?: unknown, extra: Json = {}) => ({
  key: 'q',
  type,
  label: 'Question',
  ...(config === undefined ? {} : { config }),
  ...extra,
})

export const ms = (apiTime: string) => Date.parse(`${apiTime}Z`)
export const MINUTE = 60_000
export const HOUR = 60 * MINUTE
export const DAY = 24 * HOUR
export const MiB = 1024 * 1024

/** `depth` nested objects: {"a":{"a":...{}}}. The outermost counts as level 1. */
export function nestedObject(depth: number): Json {
  let value: Json = {}
  for (let i = 1; i < depth; i++) value = { a: value }
  return value
}

/** Raw JSON text of `depth` nested arrays, built as text so no recursion is needed. */
export const nestedArrayText = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)

export const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8')

/** A context object whose compact UTF-8 JSON is exactly `bytes` long, `prefix` first, padded with ASCII. */
export function contextOfBytes(bytes: number, prefix = ''): Json {
  const base = utf8Bytes(JSON.stringify({ s: prefix }))
  const context = { s: prefix + 'x'.repeat(bytes - base) }
  expect(utf8Bytes(JSON.stringify(context))).toBe(bytes)
  return context
}

/** The helpers that act on the test's context, made on the one `current` returns (each test file's own). */
export function createRequests(current: () => TestContext) {
  const create = (body?: unknown) => current().api.post('/forms', body)

  const getForm = async (id: string) => {
    const res = await current().api.get(`/forms/${id}`)
    expect(outcome(res)).toMatchObject({ status: 200 })
    return res.body
  }
  return { create, getForm }
}
