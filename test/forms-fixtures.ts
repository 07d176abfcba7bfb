/**
 * What the form tests (test/forms-read.test.ts, test/forms-change.test.ts) share:
 * the keys a form shows, how a refusal must look, and forms made, answered and
 * ended on the test file's context.
 */
import { expect } from 'bun:test'
import { apiClient, BASE_URL, send, submit, type TestContext, type TestResponse } from './utils.ts'

// ---------------------------------------------------------------- helpers

export const MINUTE = 60_000
export const HOUR = 60 * MINUTE
export const DAY = 24 * HOUR

/** A syntactically valid ULID that no form has. */
export const UNKNOWN_ID = '01ARZ3NDEKTSV4RRFFQ69G5FAV'

/** API time: UTC, millisecond precision, no zone suffix. */
export const apiTime = (ms: number) => new Date(ms).toISOString().slice(0, -1)

export const SUMMARY_KEYS = ['created_at', 'description', 'expires_at', 'fields_count', 'id', 'status', 'title', 'url']
export const FORM_KEYS = [...SUMMARY_KEYS, 'context', 'page'].sort()
export const DETAIL_KEYS = [
  ...FORM_KEYS,
  'callback_events',
  'callback_metadata',
  'callback_url',
  'fields',
  'settings',
].sort()

export const keysOf = (value: unknown) => Object.keys(value as object).sort()

export function expectFormNotFound(res: TestResponse) {
  expect(res.status).toBe(404)
  expect(res.body).toEqual({ detail: 'Form not found' })
}

export function expectValidationError(res: TestResponse, path?: string) {
  expect(res.status).toBe(422)
  expect(typeof res.body.detail).toBe('string')
  expect(Array.isArray(res.body.errors)).toBe(true)
  expect(res.body.errors.length).toBeGreaterThan(0)
  for (const error of res.body.errors) {
    expect(typeof error.path).toBe('string')
    expect(typeof error.message).toBe('string')
  }
  if (path !== undefined) expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path)
}

export function expectConflict(res: TestResponse) {
  expect(res.status).toBe(409)
  expect(typeof res.body.detail).toBe('string')
}

/** The URL of the `Link: <...>; rel="next"` header, or null when there is none. */
export function nextLink(res: TestResponse): string | null {
  const header = res.headers.get('link')
  if (header === null) return null
  const match = /^<([^>]+)>;\s*rel="next"$/.exec(header)
  if (!match) throw new Error(`unexpected Link header: ${header}`)
  return match[1]!
}

/** Every object key at any depth of a JSON value. */
export function allKeys(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(allKeys)
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => [k, ...allKeys(v)])
  }
  return []
}

/** The helpers that act on the test's context, made on the one `current` returns (each test file's own). */
export function formRequests(current: () => TestContext) {
  /** Follows an absolute link (it must point at this service) with the default key. */
  function follow(url: string, key = current().key) {
    expect(url.startsWith(`${BASE_URL}/api/v1/forms?`)).toBe(true)
    return send(current().app, 'GET', url.slice(BASE_URL.length), { key })
  }

  /** Creates `n` forms titled "Form 1".."Form n", oldest first; returns their ids in creation order. */
  async function createForms(n: number, overrides: Record<string, unknown> = {}) {
    const ids: string[] = []
    for (let i = 1; i <= n; i++) ids.push((await current().api.createForm({ title: `Form ${i}`, ...overrides })).id)
    return ids
  }

  /** Answers a form through the JSON submission endpoint; returns the response id. */
  async function answer(formId: string, data: Record<string, unknown> = { name: 'Ada' }) {
    const res = await submit(current().app, formId, data)
    expect(res.status).toBe(201)
    return res.body.id as string
  }

  const cancel = (formId: string) => current().api.patch(`/forms/${formId}`, { status: 'cancelled' })

  /** A form whose expiry (1 minute) has passed: the clock is moved 61 s. */
  async function expiredForm(overrides: Record<string, unknown> = {}) {
    const form = await current().api.createForm({ expires_in: '1m', context: { step: 3 }, ...overrides })
    current().clock.advance(61_000)
    return form
  }

  async function otherAccount() {
    return apiClient(current().app, (await current().createKey('other')).key)
  }
  return { follow, createForms, answer, cancel, expiredForm, otherAccount }
}
