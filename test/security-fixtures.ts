/**
 * What the security tests share: the route list read from the app, a fixture with a
 * form of every kind, bodies of a given size (JSON, multipart, urlencoded, streamed)
 * and how a refusal must look (JSON error or HTML page, with the security headers).
 */

import { expect } from 'bun:test'
import { type FieldDefinition, submissionBodyLimit } from '../src/fields/index.ts'
import {
  BASE_URL,
  createTestContext,
  postForm,
  readResponse,
  type TestContext,
  type TestResponse,
  UNKNOWN_ID,
  validForm,
} from './utils.ts'

/** A request that arrives after this point is handled on a later turn of the event loop, as a real one is. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

export const ONE_MIB = 1024 * 1024
/** What a client sends to /mcp besides the body (the transport refuses other Accept headers before reading). */
export const MCP_HEADERS = { accept: 'application/json, text/event-stream' }
export const TOOLS_LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' }

/** CONTRACT 6, to the letter. */
const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

/** The headers every response carries (CONTRACT 6, docs/page.md), and no CORS header at all. */
export function expectSecurityHeaders(
  res: { status: number; headers: Headers },
  what: string,
  cacheControl: 'no-store' | 'immutable' = 'no-store',
) {
  const h = res.headers
  const cache = h.get('cache-control')
  expect({
    what,
    'x-content-type-options': h.get('x-content-type-options'),
    'referrer-policy': h.get('referrer-policy'),
    'content-security-policy': h.get('content-security-policy'),
    'x-frame-options': h.get('x-frame-options'),
    'cache-control':
      cacheControl === 'no-store'
        ? cache
        : /\bpublic\b/.test(cache ?? '') && /\bimmutable\b/.test(cache ?? '') && !/no-store/.test(cache ?? ''),
    cors: [...h.keys()].filter((name) => name.toLowerCase().startsWith('access-control-')),
  }).toEqual({
    what,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'content-security-policy': CSP,
    'x-frame-options': 'DENY',
    'cache-control': cacheControl === 'no-store' ? 'no-store' : true,
    cors: [],
  })
}

const isHtml = (res: TestResponse) => (res.headers.get('content-type') ?? '').startsWith('text/html')
const isJson = (res: TestResponse) => (res.headers.get('content-type') ?? '').includes('application/json')

/** A JSON error as CONTRACT 3 has it: `detail` a string. */
export function expectJsonError(res: TestResponse, status: number, what: string) {
  expect({ what, status: res.status, json: isJson(res), detail: typeof res.body?.detail }).toEqual({
    what,
    status,
    json: true,
    detail: 'string',
  })
}

/** A status page for a person: HTML, with the status. */
export function expectHtmlPage(res: TestResponse, status: number, what: string) {
  expect({ what, status: res.status, html: isHtml(res), doctype: res.text.startsWith('<!doctype html>') }).toEqual({
    what,
    status,
    html: true,
    doctype: true,
  })
}

// ---------------------------------------------------------------- raw requests (streamed bodies)

export const CHUNK = 64 * 1024

/** A body streamed in CHUNK pieces with no Content-Length (chunked), counting what the server pulled. */
export function streamed(bytes: Uint8Array) {
  let offset = 0
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close()
      const end = Math.min(offset + CHUNK, bytes.byteLength)
      controller.enqueue(bytes.slice(offset, end))
      offset = end
    },
  })
  return {
    stream,
    /** Bytes the server has pulled from the stream so far. */
    get pulled() {
      return offset
    },
  }
}

/**
 * Sends one request through the app with any body (a ReadableStream too,
 * which `send` does not take), and reads the response as `send` does (readResponse).
 */
export async function sendRaw(
  t: TestContext,
  method: string,
  path: string,
  options: { body?: RequestInit['body']; headers?: Record<string, string>; key?: string } = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.key) headers.authorization = `Bearer ${options.key}`
  const init = { method, headers, body: options.body, duplex: 'half' } as RequestInit
  return readResponse(await t.app.handle(new Request(`${BASE_URL}${path}`, init)), headers.authorization)
}

const ascii = (text: string) => new TextEncoder().encode(text)

/** `json` followed by spaces up to exactly `size` bytes: still that JSON value. */
export function paddedJson(value: unknown, size: number): Uint8Array {
  const text = JSON.stringify(value)
  if (text.length > size) throw new Error(`${text.length} bytes do not fit in ${size}`)
  return ascii(text + ' '.repeat(size - text.length))
}

export const BOUNDARY = 'intake-security-test-boundary'
export type Part = { name: string; value: string } | { name: string; filename: string; type: string; bytes: Uint8Array }

/** A multipart/form-data body (BOUNDARY) of these parts. */
export function multipart(parts: Part[]): Uint8Array {
  const chunks: Uint8Array[] = []
  for (const part of parts) {
    if ('value' in part) {
      chunks.push(
        ascii(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`),
      )
    } else {
      chunks.push(
        ascii(
          `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: ${part.type}\r\n\r\n`,
        ),
        part.bytes,
        ascii('\r\n'),
      )
    }
  }
  chunks.push(ascii(`--${BOUNDARY}--\r\n`))
  return Buffer.concat(chunks)
}

/** `parts` plus a `_pad` field (the page's own, ignored by intake) making exactly `size` bytes. */
export function paddedMultipart(parts: Part[], size: number): Uint8Array {
  const base = multipart([...parts, { name: '_pad', value: '' }]).byteLength
  if (base > size) throw new Error(`${base} bytes do not fit in ${size}`)
  return multipart([...parts, { name: '_pad', value: 'x'.repeat(size - base) }])
}

/** `fields` urlencoded plus a `_pad` field making exactly `size` bytes. */
export function paddedUrlencoded(fields: Record<string, string>, size: number): Uint8Array {
  const base = `${new URLSearchParams(fields)}&_pad=`
  if (base.length > size) throw new Error(`${base.length} bytes do not fit in ${size}`)
  return ascii(base + 'x'.repeat(size - base.length))
}

// ---------------------------------------------------------------- fixtures

export const TEXT_FIELDS = [{ key: 'name', type: 'text', label: 'Your name', required: true }]
export const FILE_MAX = 1024
export const FILE_FIELDS = [
  { key: 'name', type: 'text', label: 'Your name' },
  { key: 'photo', type: 'file', label: 'A file', config: { max_size: FILE_MAX } },
]

export interface Fixture {
  /** Answered (with a file), with a pending webhook delivery (the loop is not running: nothing is sent). */
  answeredId: string
  responseId: string
  deliveryId: string
  /** Active and unanswered. */
  activeId: string
}

/** A form with a callback and a file field, answered; and an active one. */
export async function fixture(t: TestContext): Promise<Fixture> {
  const answered = await t.api.createForm({ fields: FILE_FIELDS, callback_url: 'http://127.0.0.1:9/hook' })
  const post = new FormData()
  post.set('name', 'Ada')
  post.set('photo', new File([new Uint8Array(16).fill(7)], 'note.txt', { type: 'text/plain' }))
  const posted = await postForm(t.app, answered.id, post)
  if (posted.status !== 303) throw new Error(`fixture not answered: ${posted.status} ${posted.text}`)
  const responses = await t.api.get(`/forms/${answered.id}/responses`)
  const deliveries = await t.api.get(`/forms/${answered.id}/deliveries`)
  if (responses.body.length !== 1 || deliveries.body.length !== 1)
    throw new Error('fixture: expected one response and one delivery')
  const active = await t.api.createForm({ fields: TEXT_FIELDS })
  return {
    answeredId: answered.id,
    responseId: responses.body[0].id,
    deliveryId: deliveries.body[0].id,
    activeId: active.id,
  }
}

// ---------------------------------------------------------------- the routes, as the app has them

export interface Route {
  method: string
  path: string
}

/** Every method and path the app answers, read from the app itself (so a new route is covered without editing this file). */
export const ROUTES: Route[] = await (async () => {
  const probe = await createTestContext()
  const routes = probe.app.routes.map((route) => ({ method: route.method, path: route.path }))
  await probe.close()
  return routes
})()

export const STYLESHEET_PATH = ROUTES.find((route) => route.path.startsWith('/assets/'))?.path
const needsKey = (path: string) => (path.startsWith('/api/v1/') && path !== '/api/v1/openapi.json') || path === '/mcp'
export const AUTHENTICATED_ROUTES = ROUTES.filter((route) => needsKey(route.path))

/** The path with its parameters filled from `ids` (every parameter must have one). */
export function fill(path: string, ids: Record<string, string>): string {
  return path.replace(/:(\w+)/g, (_, name: string) => {
    const value = ids[name]
    if (value === undefined) throw new Error(`no value for :${name} in ${path}: add it to the ids`)
    return value
  })
}

export const realIds = (fx: Fixture) => ({
  id: fx.answeredId,
  responseId: fx.responseId,
  deliveryId: fx.deliveryId,
  key: 'photo',
  token: 'nothing',
  // The console's paths (these requests carry no session: every one is sent to sign in or refused).
  account: UNKNOWN_ID,
  response: fx.responseId,
  delivery: fx.deliveryId,
})
export const unknownIds = {
  id: UNKNOWN_ID,
  responseId: UNKNOWN_ID,
  deliveryId: UNKNOWN_ID,
  key: 'nothing',
  // A console set-up link's token.
  token: 'nothing',
  account: UNKNOWN_ID,
  response: UNKNOWN_ID,
  delivery: UNKNOWN_ID,
}

/** A body and headers a client would send to this route (none for routes that take none). */
export function typicalRequest(route: Route): { body?: unknown; headers: Record<string, string> } {
  const headers: Record<string, string> = route.path === '/mcp' ? { ...MCP_HEADERS } : {}
  const on = `${route.method} ${route.path}`
  if (on === 'POST /api/v1/forms') return { body: validForm(), headers }
  if (on === 'PATCH /api/v1/forms/:id') return { body: {}, headers }
  if (on === 'POST /mcp') return { body: TOOLS_LIST, headers }
  if (on === 'POST /f/:id') return { body: { name: 'Ada' }, headers }
  return { headers }
}

/** The largest bodies a text form and a file form take. */
export const fileFormLimit = submissionBodyLimit(FILE_FIELDS as FieldDefinition[])
export const textFormLimit = submissionBodyLimit(TEXT_FIELDS as FieldDefinition[])
