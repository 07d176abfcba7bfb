/**
 * What the page tests (test/page-*.test.ts) share: how a page, a thank-you page
 * and a refusal must look; multipart bodies built byte by byte; requests made on
 * the test file's context; hostile text.
 */
import { expect } from 'bun:test'
import { type Page, parsePage } from './html.ts'
import { BASE_URL, send, type TestContext, type TestResponse } from './utils.ts'

// ---------------------------------------------------------------- page checks

const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

/**
 * An HTML page with the given status: the CONTRACT 6 headers, no script, no
 * inline handler, no CORS header. Returns the parsed page.
 */
export async function expectPage(res: TestResponse, status: number): Promise<Page> {
  expect({ status: res.status, text: res.status === status ? '' : res.text.slice(0, 300) }).toEqual({
    status,
    text: '',
  })
  expect(res.headers.get('content-type') ?? '').toMatch(/^text\/html\s*(;|$)/i)
  expect(res.headers.get('content-security-policy')).toBe(CSP)
  expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  expect(res.headers.get('referrer-policy')).toBe('no-referrer')
  expect(res.headers.get('cache-control')).toBe('no-store')
  expect(res.headers.get('access-control-allow-origin')).toBeNull()
  expect(res.text.toLowerCase()).not.toContain('<script')
  const page = await parsePage(res.text)
  expect(page.all('script')).toEqual([])
  const handlers = page.nodes.flatMap((n) =>
    Object.keys(n.attrs)
      .filter((name) => name.startsWith('on'))
      .map((name) => `${n.tag}[${name}]`),
  )
  expect(handlers).toEqual([])
  // A page a person reads: a language and a body.
  expect(page.one('html').attrs.lang ?? '').not.toBe('')
  page.one('body')
  return page
}

/** The thank-you page of an answered form. */
export async function expectThankYou(res: TestResponse) {
  const page = await expectPage(res, 200)
  expect(page.all('form')).toEqual([])
  expect(page.one('h1').text).toMatch(/this form has been answered/i)
  return page
}

/** The form itself (200 on a GET, 422 after a refused post). */
export async function expectFormPage(res: TestResponse, status = 200) {
  const page = await expectPage(res, status)
  const form = page.one('form')
  expect((form.attrs.method ?? '').toLowerCase()).toBe('post')
  return page
}

export function expectSeeOther(res: TestResponse, formId: string) {
  expect({ status: res.status, text: res.status === 303 ? '' : res.text.slice(0, 500) }).toEqual({
    status: 303,
    text: '',
  })
  const location = res.headers.get('location')
  expect(location).not.toBeNull()
  expect(new URL(location!, BASE_URL).href).toBe(`${BASE_URL}/f/${formId}`)
}

// ---------------------------------------------------------------- requests

/** A callback nobody listens on: the outbox row is written, nothing is delivered in-process. */
export const HOOK = 'http://127.0.0.1:9/hook'

export type Part =
  | { name: string; value: string }
  | { name: string; filename: string; type?: string; bytes: Uint8Array }

/** A multipart/form-data body built byte by byte, as a browser sends it. */
export function multipart(parts: Part[]): { body: Uint8Array; contentType: string } {
  const boundary = '----intakeTestBoundary7MA4YWxkTrZu0gW'
  const enc = new TextEncoder()
  const quote = (s: string) => s.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')
  const chunks: Uint8Array[] = []
  for (const part of parts) {
    if ('value' in part) {
      chunks.push(
        enc.encode(
          `--${boundary}\r\nContent-Disposition: form-data; name="${quote(part.name)}"\r\n\r\n${part.value}\r\n`,
        ),
      )
    } else {
      const type = part.type === undefined ? '' : `Content-Type: ${part.type}\r\n`
      chunks.push(
        enc.encode(
          `--${boundary}\r\nContent-Disposition: form-data; name="${quote(part.name)}"; filename="${quote(part.filename)}"\r\n${type}\r\n`,
        ),
      )
      chunks.push(part.bytes)
      chunks.push(enc.encode('\r\n'))
    }
  }
  chunks.push(enc.encode(`--${boundary}--\r\n`))
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` }
}

/** The page tests' requests, made on the context `current` returns (the test file's own, set before each test). */
export function pageRequests(current: () => TestContext) {
  /** POST /f/<id> with exactly this body and content type. */
  const postRaw = (
    formId: string,
    body: Uint8Array | string,
    contentType: string,
    headers: Record<string, string> = {},
    ctx: TestContext = current(),
  ): Promise<TestResponse> =>
    send(ctx.app, 'POST', `/f/${formId}`, { body, headers: { 'content-type': contentType, ...headers } })

  const postParts = (formId: string, parts: Part[], headers: Record<string, string> = {}) => {
    const { body, contentType } = multipart(parts)
    return postRaw(formId, body, contentType, headers)
  }

  /** GET a file URL from a response's data, with a key (or none). */
  async function download(url: string, key: string | null) {
    expect(url.startsWith(`${BASE_URL}/api/v1/`)).toBe(true)
    const response = await current().app.handle(
      new Request(url, { headers: key ? { authorization: `Bearer ${key}` } : {} }),
    )
    return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) }
  }

  async function responsesOf(formId: string, ctx: TestContext = current()): Promise<any[]> {
    const res = await ctx.api.get(`/forms/${formId}/responses`)
    expect(res.status).toBe(200)
    return res.body
  }

  async function onlyResponse(formId: string, ctx: TestContext = current()) {
    const list = await responsesOf(formId, ctx)
    expect(list).toHaveLength(1)
    return list[0]
  }

  const storedFileCount = async (ctx: TestContext = current()) =>
    (await ctx.sql('select CAST(count(*) AS INTEGER) as n from response_files'))[0]!.n as number
  return { postRaw, postParts, download, responsesOf, onlyResponse, storedFileCount }
}

/** Bytes of every value 0..255, then more: a file no text decoding survives unchanged. */
export function binaryBytes(size: number): Uint8Array {
  const bytes = new Uint8Array(size)
  for (let i = 0; i < size; i++) bytes[i] = (i * 7 + (i >> 8)) & 0xff
  bytes[0] = 0x89
  bytes[1] = 0x50 // "P": starts like a PNG
  bytes[2] = 0x00
  bytes[3] = 0xff
  bytes[4] = 0x0d
  bytes[5] = 0x0a
  return bytes
}

/** A form's field definitions, for `field-<key>` ordering checks. */
export type FieldDef = {
  key: string
  type: string
  label: string
  required?: boolean
  description?: string
  config?: Record<string, unknown>
}

/**
 * The 422 page marks field `key` as invalid: a summary link to "#field-<key>",
 * the control with aria-invalid="true" and aria-describedby naming an error
 * element that sits next to the field (between the previous field's and the
 * next field's label and control) and says what the summary says.
 */
export function expectFieldError(page: Page, fields: FieldDef[], key: string) {
  const links = page.summaryLinks()
  const link = links.get(key)
  expect(link, `summary link to #field-${key}`).toBeDefined()
  const control = page.control(key)
  expect(control.attrs['aria-invalid']).toBe('true')
  const index = fields.findIndex((f) => f.key === key)
  expect(index).toBeGreaterThanOrEqual(0)
  const own = (k: string) => [page.label(k), page.control(k)]
  const after = index > 0 ? Math.max(...own(fields[index - 1]!.key).map((n) => n.end)) : page.one('form').start
  const before =
    index < fields.length - 1 ? Math.min(...own(fields[index + 1]!.key).map((n) => n.start)) : page.one('form').end
  const errors = page
    .describedBy(control)
    .map((id) => page.byId(id))
    .filter((node) => {
      const message = node.text.replace(/^\s*error:\s*/i, '').trim()
      return message !== '' && link!.text.includes(message)
    })
  expect(errors.length, `an error element for ${key} named by aria-describedby`).toBeGreaterThanOrEqual(1)
  for (const error of errors) {
    expect(error.start).toBeGreaterThan(after)
    expect(error.end).toBeLessThan(before)
  }
  // The summary is at the top: before the heading and the form.
  expect(link!.start).toBeLessThan(page.one('form').start)
  expect(link!.start).toBeLessThan(page.one('h1').start)
}

export function expectFieldValid(page: Page, key: string) {
  expect(page.control(key).attrs['aria-invalid']).toBeUndefined()
  expect(page.summaryLinks().has(key)).toBe(false)
}

// ---------------------------------------------------------------- hostile text

export const SCRIPT = `"><script>alert(1)</script>`
export const HOVER = `' onmouseover='x`
export const AMP = '&amp;'
export const BOLD = '<b>'
export const TRICKY_VALUE = `a&amp;b "c" <d> 'e'`
