/**
 * Security (issue section 4), in process: security headers on every route and
 * every kind of answer; revoked keys refused at once; request bodies and
 * uploads bounded on every route that reads one; the SSRF option vectors of
 * SERVICE_WEBHOOK_BLOCK_PRIVATE; rate limits under parallel load; and no secret
 * compared with === anywhere in src/.
 *
 * (That no key or webhook secret reaches a log line or a response body is
 * checked for the whole suite by test/leak-sweep.ts, preloaded by bunfig.toml.)
 *
 * Network: loopback only. Webhook targets are loopback literals, IPv4-mapped
 * and bracketed IPv6 literals, or names answered by a stub resolver; on top of
 * that, while those tests run, a guard around fetch refuses (and records) any
 * connection to an address that is not loopback, so nothing ever leaves the
 * machine even if intake failed to refuse. Nothing here asserts on elapsed
 * time: waits poll for an outcome and fail with what they last saw.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { SQL } from 'bun'
import ts from 'typescript'
import { type FieldDefinition, submissionBodyLimit } from '../src/fields/index.ts'
import { reportFigure } from './figures.ts'
import {
  BASE_URL,
  contextsPerTest,
  createTestContext,
  failEveryStoreCall,
  postForm,
  REVOCATION_HANG_MS,
  type Resolver,
  readResponse,
  revocationHeard,
  send,
  stubResolver,
  submit,
  TEST_STORE,
  type TestContext,
  type TestResponse,
  UNKNOWN_ID,
  until,
  validForm,
} from './utils.ts'

setDefaultTimeout(20_000)

// ================================================================= context and helpers

let t: TestContext
const { create, cleanups } = contextsPerTest()

async function setup(env: Record<string, string> = {}, resolver?: Resolver): Promise<TestContext> {
  return (t = await create(env, { resolver }))
}

/** A request that arrives after this point is handled on a later turn of the event loop, as a real one is. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

const ONE_MIB = 1024 * 1024
/** What a client sends to /mcp besides the body (the transport refuses other Accept headers before reading). */
const MCP_HEADERS = { accept: 'application/json, text/event-stream' }
const TOOLS_LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' }

/** CONTRACT 6, to the letter. */
const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

/** The headers every response carries (CONTRACT 6, README), and no CORS header at all. */
function expectSecurityHeaders(
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
function expectJsonError(res: TestResponse, status: number, what: string) {
  expect({ what, status: res.status, json: isJson(res), detail: typeof res.body?.detail }).toEqual({
    what,
    status,
    json: true,
    detail: 'string',
  })
}

/** A status page for a person: HTML, with the status. */
function expectHtmlPage(res: TestResponse, status: number, what: string) {
  expect({ what, status: res.status, html: isHtml(res), doctype: res.text.startsWith('<!doctype html>') }).toEqual({
    what,
    status,
    html: true,
    doctype: true,
  })
}

// ---------------------------------------------------------------- raw requests (streamed bodies)

const CHUNK = 64 * 1024

/** A body streamed in CHUNK pieces with no Content-Length (chunked), counting what the server pulled. */
function streamed(bytes: Uint8Array) {
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
async function sendRaw(
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
function paddedJson(value: unknown, size: number): Uint8Array {
  const text = JSON.stringify(value)
  if (text.length > size) throw new Error(`${text.length} bytes do not fit in ${size}`)
  return ascii(text + ' '.repeat(size - text.length))
}

const BOUNDARY = 'intake-security-test-boundary'
type Part = { name: string; value: string } | { name: string; filename: string; type: string; bytes: Uint8Array }

/** A multipart/form-data body (BOUNDARY) of these parts. */
function multipart(parts: Part[]): Uint8Array {
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
function paddedMultipart(parts: Part[], size: number): Uint8Array {
  const base = multipart([...parts, { name: '_pad', value: '' }]).byteLength
  if (base > size) throw new Error(`${base} bytes do not fit in ${size}`)
  return multipart([...parts, { name: '_pad', value: 'x'.repeat(size - base) }])
}

/** `fields` urlencoded plus a `_pad` field making exactly `size` bytes. */
function paddedUrlencoded(fields: Record<string, string>, size: number): Uint8Array {
  const base = `${new URLSearchParams(fields)}&_pad=`
  if (base.length > size) throw new Error(`${base.length} bytes do not fit in ${size}`)
  return ascii(base + 'x'.repeat(size - base.length))
}

// ---------------------------------------------------------------- fixtures

const TEXT_FIELDS = [{ key: 'name', type: 'text', label: 'Your name', required: true }]
const FILE_MAX = 1024
const FILE_FIELDS = [
  { key: 'name', type: 'text', label: 'Your name' },
  { key: 'photo', type: 'file', label: 'A file', config: { max_size: FILE_MAX } },
]

interface Fixture {
  /** Answered (with a file), with a pending webhook delivery (the loop is not running: nothing is sent). */
  answeredId: string
  responseId: string
  deliveryId: string
  /** Active and unanswered. */
  activeId: string
}

/** A form with a callback and a file field, answered; and an active one. */
async function fixture(): Promise<Fixture> {
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

interface Route {
  method: string
  path: string
}

/** Every method and path the app answers, read from the app itself (so a new route is covered without editing this file). */
const ROUTES: Route[] = await (async () => {
  const probe = await createTestContext()
  const routes = probe.app.routes.map((route) => ({ method: route.method, path: route.path }))
  await probe.close()
  return routes
})()

const STYLESHEET_PATH = ROUTES.find((route) => route.path.startsWith('/assets/'))?.path
const needsKey = (path: string) => (path.startsWith('/api/v1/') && path !== '/api/v1/openapi.json') || path === '/mcp'
const AUTHENTICATED_ROUTES = ROUTES.filter((route) => needsKey(route.path))

/** The path with its parameters filled from `ids` (every parameter must have one). */
function fill(path: string, ids: Record<string, string>): string {
  return path.replace(/:(\w+)/g, (_, name: string) => {
    const value = ids[name]
    if (value === undefined) throw new Error(`no value for :${name} in ${path}: add it to the ids`)
    return value
  })
}

const realIds = (fx: Fixture) => ({
  id: fx.answeredId,
  responseId: fx.responseId,
  deliveryId: fx.deliveryId,
  key: 'photo',
})
const unknownIds = { id: UNKNOWN_ID, responseId: UNKNOWN_ID, deliveryId: UNKNOWN_ID, key: 'nothing' }

/** A body and headers a client would send to this route (none for routes that take none). */
function typicalRequest(route: Route): { body?: unknown; headers: Record<string, string> } {
  const headers: Record<string, string> = route.path === '/mcp' ? { ...MCP_HEADERS } : {}
  const on = `${route.method} ${route.path}`
  if (on === 'POST /api/v1/forms') return { body: validForm(), headers }
  if (on === 'PATCH /api/v1/forms/:id') return { body: {}, headers }
  if (on === 'POST /mcp') return { body: TOOLS_LIST, headers }
  if (on === 'POST /f/:id') return { body: { name: 'Ada' }, headers }
  return { headers }
}

// ================================================================= 1. security headers

describe('security headers on every route', () => {
  test('the route list read from the app holds every route the README documents', () => {
    const listed = ROUTES.map((route) => `${route.method} ${route.path}`)
    for (const expected of [
      'GET /healthz',
      'GET /',
      'POST /api/v1/forms',
      'GET /api/v1/forms',
      'GET /api/v1/forms/:id',
      'GET /api/v1/forms/:id/schema',
      'PATCH /api/v1/forms/:id',
      'DELETE /api/v1/forms/:id',
      'GET /api/v1/forms/:id/responses',
      'GET /api/v1/forms/:id/responses/:responseId',
      'GET /api/v1/forms/:id/responses/:responseId/files/:key',
      'GET /api/v1/forms/:id/deliveries',
      'POST /api/v1/forms/:id/deliveries/:deliveryId/redeliver',
      'POST /mcp',
      'GET /f/:id',
      'POST /f/:id',
      'GET /api/v1/openapi.json',
    ]) {
      expect(listed).toContain(expected)
    }
    expect(STYLESHEET_PATH).toMatch(/^\/assets\/style-[0-9a-z]+\.css$/)
  })

  const variants = [
    { name: 'real ids', ids: (fx: Fixture) => realIds(fx), accept: undefined },
    { name: 'unknown ids', ids: () => unknownIds, accept: undefined },
    { name: 'unknown ids, Accept: text/html', ids: () => unknownIds, accept: 'text/html,application/xhtml+xml' },
  ]
  for (const route of ROUTES) {
    for (const variant of variants) {
      test(`${route.method} ${route.path} (${variant.name})`, async () => {
        await setup()
        const fx = await fixture()
        const { body, headers } = typicalRequest(route)
        if (variant.accept && route.path !== '/mcp') headers.accept = variant.accept
        const path = fill(route.path, variant.ids(fx))
        const res = await send(t.app, route.method, path, { key: t.key, body, headers })
        expect(res.status).toBeGreaterThanOrEqual(200)
        expect(res.status).toBeLessThan(500)
        expectSecurityHeaders(
          res,
          `${route.method} ${path} -> ${res.status}`,
          route.path === STYLESHEET_PATH ? 'immutable' : 'no-store',
        )
      })
    }
  }

  test('an unknown path: a JSON 404, and with Accept: text/html an HTML 404 page; both with the headers', async () => {
    await setup()
    for (const method of ['GET', 'POST', 'DELETE']) {
      const json = await send(t.app, method, '/nowhere/at/all')
      expectJsonError(json, 404, `${method} /nowhere/at/all`)
      expectSecurityHeaders(json, `${method} /nowhere/at/all (JSON)`)
      const page = await send(t.app, method, '/nowhere/at/all', { headers: { accept: 'text/html' } })
      expectHtmlPage(page, 404, `${method} /nowhere/at/all (HTML)`)
      expectSecurityHeaders(page, `${method} /nowhere/at/all (HTML)`)
    }
    const api = await t.api.get('/nothing-here')
    expectJsonError(api, 404, 'GET /api/v1/nothing-here')
    expectSecurityHeaders(api, 'GET /api/v1/nothing-here')
    const unknownForm = await send(t.app, 'GET', `/f/${UNKNOWN_ID}`)
    expectHtmlPage(unknownForm, 404, 'GET /f/<unknown>')
    expectSecurityHeaders(unknownForm, 'GET /f/<unknown>')
  })

  test('a 500 (the database closed under the app): JSON from the API and /healthz, an HTML page from /f/<id>; all with the headers', async () => {
    await setup()
    const form = await t.api.createForm()
    failEveryStoreCall(t.store)
    await nextTurn()
    const api = await t.api.get(`/forms/${form.id}`)
    expect(api.body).toEqual({ detail: 'Internal server error' })
    expectJsonError(api, 500, 'GET /api/v1/forms/<id>')
    expectSecurityHeaders(api, 'GET /api/v1/forms/<id> -> 500')
    const health = await send(t.app, 'GET', '/healthz')
    expectJsonError(health, 500, 'GET /healthz')
    expectSecurityHeaders(health, 'GET /healthz -> 500')
    const page = await send(t.app, 'GET', `/f/${form.id}`)
    expectHtmlPage(page, 500, 'GET /f/<id>')
    expectSecurityHeaders(page, 'GET /f/<id> -> 500')
    const posted = await submit(t.app, form.id, { name: 'Ada' })
    expectJsonError(posted, 500, 'POST /f/<id> (JSON)')
    expectSecurityHeaders(posted, 'POST /f/<id> (JSON) -> 500')
  })

  test('401, 403, 413, 415, 422 and 429, as JSON and as pages, all with the headers', async () => {
    // t.key may make 3 requests (create, two 422s), the 4th is a 429; an address may post 6 times (every post below counts but the 403s).
    await setup({ SERVICE_RATE_LIMIT: '3', SERVICE_PUBLIC_RATE_LIMIT: '6' })
    const form = await t.api.createForm({ fields: TEXT_FIELDS })
    const big = await t.createKey()
    const cases: Array<[string, TestResponse, number, 'json' | 'html']> = []
    const wrongKey = `svc_live_${'0'.repeat(48)}`
    cases.push(['401 unknown key', await send(t.app, 'GET', '/api/v1/forms', { key: wrongKey }), 401, 'json'])
    cases.push([
      '401 malformed key',
      await send(t.app, 'GET', '/api/v1/forms', { headers: { authorization: 'Bearer not-a-key' } }),
      401,
      'json',
    ])
    cases.push([
      '401 other scheme',
      await send(t.app, 'GET', '/api/v1/forms', { headers: { authorization: `Basic ${btoa('a:b')}` } }),
      401,
      'json',
    ])
    cases.push([
      '401 unknown key on /mcp',
      await send(t.app, 'POST', '/mcp', { key: wrongKey, body: TOOLS_LIST, headers: MCP_HEADERS }),
      401,
      'json',
    ])
    cases.push([
      '401 unknown key, Accept: text/html',
      await send(t.app, 'GET', '/api/v1/forms', { key: wrongKey, headers: { accept: 'text/html' } }),
      401,
      'json',
    ])
    cases.push(['403 no key', await send(t.app, 'GET', '/api/v1/forms'), 403, 'json'])
    cases.push([
      '403 no key on /mcp',
      await send(t.app, 'POST', '/mcp', { body: TOOLS_LIST, headers: MCP_HEADERS }),
      403,
      'json',
    ])
    cases.push([
      '403 cross-site form post',
      await postForm(t.app, form.id, { name: 'Ada' }, { 'sec-fetch-site': 'cross-site' }),
      403,
      'html',
    ])
    cases.push([
      '403 cross-site JSON post',
      await submit(t.app, form.id, { name: 'Ada' }, { 'sec-fetch-site': 'cross-site' }),
      403,
      'json',
    ])
    cases.push([
      '413 API body',
      await send(t.app, 'POST', '/api/v1/forms', { key: big.key, body: paddedJson(validForm(), ONE_MIB + 1) }),
      413,
      'json',
    ])
    cases.push([
      '413 JSON answer',
      await send(t.app, 'POST', `/f/${form.id}`, {
        body: paddedJson({ name: 'Ada' }, ONE_MIB + 1),
        headers: { 'content-type': 'application/json' },
      }),
      413,
      'json',
    ])
    cases.push([
      '413 form post',
      await sendRaw('POST', `/f/${form.id}`, {
        body: paddedUrlencoded({ name: 'Ada' }, textFormLimit + 1),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      413,
      'html',
    ])
    cases.push([
      '415 text/plain answer',
      await send(t.app, 'POST', `/f/${form.id}`, { body: 'name=Ada', headers: { 'content-type': 'text/plain' } }),
      415,
      'json',
    ])
    cases.push([
      '415 text/plain answer, Accept: text/html',
      await send(t.app, 'POST', `/f/${form.id}`, {
        body: 'name=Ada',
        headers: { 'content-type': 'text/plain', accept: 'text/html' },
      }),
      415,
      'html',
    ])
    cases.push(['422 invalid create body', await t.api.post('/forms', { title: '' }), 422, 'json'])
    cases.push(['422 malformed JSON', await t.api.post('/forms', '{'), 422, 'json'])
    cases.push(['429 API rate limit', await t.api.get('/forms'), 429, 'json'])
    cases.push([
      '429 API rate limit on /mcp',
      await send(t.app, 'POST', '/mcp', { key: t.key, body: TOOLS_LIST, headers: MCP_HEADERS }),
      429,
      'json',
    ])
    cases.push(['422 invalid answer (JSON)', await submit(t.app, form.id, { name: '' }), 422, 'json'])
    cases.push([
      '422 invalid answer (form post: the page again)',
      await postForm(t.app, form.id, { name: '' }),
      422,
      'html',
    ])
    cases.push(['429 public rate limit (form post)', await postForm(t.app, form.id, { name: 'Ada' }), 429, 'html'])
    cases.push(['429 public rate limit (JSON)', await submit(t.app, form.id, { name: 'Ada' }), 429, 'json'])
    for (const [what, res, status, kind] of cases) {
      if (kind === 'json') expectJsonError(res, status, what)
      else expectHtmlPage(res, status, what)
      expectSecurityHeaders(res, `${what} -> ${res.status}`)
      if (status === 401)
        expect({ what, challenge: res.headers.get('www-authenticate') }).toEqual({ what, challenge: 'Bearer' })
      if (status === 429)
        expect({ what, retryAfter: res.headers.get('retry-after') }).toEqual({
          what,
          retryAfter: expect.stringMatching(/^[1-9]\d*$/),
        })
    }
  })

  test('409, 410 and a 303 redirect carry the headers too', async () => {
    await setup()
    const answered = await t.api.createForm({ fields: TEXT_FIELDS })
    const redirect = await postForm(t.app, answered.id, { name: 'Ada' })
    expect(redirect.status).toBe(303)
    expectSecurityHeaders(redirect, '303 after a form post')
    const again = await submit(t.app, answered.id, { name: 'Bob' })
    expectJsonError(again, 409, '409 answered (JSON)')
    expectSecurityHeaders(again, '409 answered (JSON)')
    const againPage = await postForm(t.app, answered.id, { name: 'Bob' })
    expectHtmlPage(againPage, 409, '409 answered (page)')
    expectSecurityHeaders(againPage, '409 answered (page)')
    const cancelled = await t.api.createForm({ fields: TEXT_FIELDS })
    expect((await t.api.patch(`/forms/${cancelled.id}`, { status: 'cancelled' })).status).toBe(200)
    const gone = await send(t.app, 'GET', `/f/${cancelled.id}`)
    expectHtmlPage(gone, 410, '410 cancelled (page)')
    expectSecurityHeaders(gone, '410 cancelled (page)')
    const goneJson = await submit(t.app, cancelled.id, { name: 'Ada' })
    expectJsonError(goneJson, 410, '410 cancelled (JSON)')
    expectSecurityHeaders(goneJson, '410 cancelled (JSON)')
  })

  test('a CORS preflight gets no Access-Control-* header (and the security headers)', async () => {
    await setup()
    const form = await t.api.createForm()
    for (const path of ['/api/v1/forms', `/f/${form.id}`, '/mcp', '/healthz']) {
      const res = await send(t.app, 'OPTIONS', path, {
        headers: {
          origin: 'https://evil.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type',
        },
      })
      expectSecurityHeaders(res, `OPTIONS ${path} -> ${res.status}`)
      const withOrigin = await send(t.app, 'GET', path === '/mcp' ? '/healthz' : path, {
        key: t.key,
        headers: { origin: 'https://evil.example' },
      })
      expectSecurityHeaders(withOrigin, `GET ${path} with Origin -> ${withOrigin.status}`)
    }
  })
})

// ================================================================= 2. revoked keys

describe('a revoked key is refused at once', () => {
  /** The key is used (and so remembered by the server) before it is revoked, as the CLI revokes it: over another connection. */
  async function revokedAfterUse() {
    const fx = await fixture()
    const second = await t.createKey()
    const before = await send(t.app, 'GET', '/api/v1/forms', { key: second.key })
    expect(before.status).toBe(200)
    await t.revokeKey(second.id)
    await revocationHeard(
      async () => (await send(t.app, 'GET', '/api/v1/forms', { key: second.key })).status === 401,
      'a key revoked by another process',
    )
    return { fx, second }
  }

  const expectRefused = (res: TestResponse, what: string) =>
    expect({
      what,
      status: res.status,
      detail: res.body?.detail,
      challenge: res.headers.get('www-authenticate'),
    }).toEqual({
      what,
      status: 401,
      detail: 'Invalid API key',
      challenge: 'Bearer',
    })

  test('the authenticated routes are every /api/v1 route but the OpenAPI document, and /mcp', () => {
    const paths = new Set(AUTHENTICATED_ROUTES.map((route) => route.path))
    expect(paths.has('/mcp')).toBe(true)
    expect(paths.has('/api/v1/openapi.json')).toBe(false)
    expect(AUTHENTICATED_ROUTES.length).toBeGreaterThanOrEqual(12)
  })

  for (const route of AUTHENTICATED_ROUTES) {
    test(`${route.method} ${route.path}: 401 on the next request after the revocation; the other key still works`, async () => {
      await setup()
      const { fx, second } = await revokedAfterUse()
      const { body, headers } = typicalRequest(route)
      const path = fill(route.path, realIds(fx))
      const res = await send(t.app, route.method, path, { key: second.key, body, headers })
      expectRefused(res, `${route.method} ${path}`)
      // Nothing happened on its behalf: the fixture is intact, and the owner's key still reads it.
      const still = await t.api.get(`/forms/${fx.answeredId}`)
      expect(still.status).toBe(200)
      expect(still.body.status).toBe('completed')
    })
  }

  test('an MCP tool call with a revoked key is refused before any tool runs (nothing created)', async () => {
    await setup()
    const { second } = await revokedAfterUse()
    const before = (await t.api.get('/forms')).body.length
    const res = await send(t.app, 'POST', '/mcp', {
      key: second.key,
      headers: MCP_HEADERS,
      body: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_form', arguments: validForm() } },
    })
    expectRefused(res, 'POST /mcp tools/call create_form')
    expect((await t.api.get('/forms')).body.length).toBe(before)
  })

  test('a key revoked while its long-poll (?wait=2) is pending lets no later request through', async () => {
    await setup()
    const second = await t.createKey()
    const form = await t.api.createForm()
    let settled = false
    const poll = send(t.app, 'GET', `/api/v1/forms/${form.id}/responses?wait=2`, { key: second.key }).finally(
      () => (settled = true),
    )
    await nextTurn()
    await nextTurn()
    expect(settled).toBe(false)
    await t.revokeKey(second.id)
    await revocationHeard(
      async () => (await send(t.app, 'GET', '/api/v1/forms', { key: second.key })).status === 401,
      'a key revoked by another process',
    )
    // While the poll (admitted before the revocation) still waits: every new request is refused.
    expectRefused(await send(t.app, 'GET', '/api/v1/forms', { key: second.key }), 'GET /api/v1/forms during the poll')
    expectRefused(
      await send(t.app, 'GET', `/api/v1/forms/${form.id}/responses?wait=1`, { key: second.key }),
      'a second long-poll',
    )
    expectRefused(
      await send(t.app, 'POST', '/mcp', { key: second.key, body: TOOLS_LIST, headers: MCP_HEADERS }),
      'POST /mcp during the poll',
    )
    // The poll itself ends with 401 once its key is found revoked (CONTRACT 12a), before its time is up.
    const polled = await poll
    expectRefused(polled, 'the poll admitted before the revocation')
    // After it: still refused, on this turn and the next.
    expectRefused(
      await send(t.app, 'GET', `/api/v1/forms/${form.id}`, { key: second.key }),
      'GET /api/v1/forms/<id> after the poll',
    )
    await nextTurn()
    expectRefused(await send(t.app, 'GET', '/api/v1/forms', { key: second.key }), 'GET /api/v1/forms a turn later')
    expect((await t.api.get('/forms')).status).toBe(200)
  })
})

describe('keys remembered, and forgotten when another process changes them', () => {
  /** Counts the app's key lookups: the auth service asks its store for each key it does not remember. */
  function countLookups(context: TestContext) {
    const counted = { lookups: 0 }
    const keyByHash = context.store.keys.keyByHash.bind(context.store.keys)
    context.store.keys.keyByHash = (hash) => {
      counted.lookups++
      return keyByHash(hash)
    }
    return counted
  }

  const usable = async (key: string) => (await send(t.app, 'GET', '/api/v1/forms', { key })).status === 200

  test('while no key changes, 50 requests with one key look it up once', async () => {
    await setup()
    const counted = countLookups(t)
    // On PostgreSQL, keys are remembered once the notification channel is heard from (a moment after the first request).
    await until(
      async () => {
        counted.lookups = 0
        await usable(t.key)
        await Bun.sleep(20)
        await usable(t.key)
        return counted.lookups <= 1
      },
      2000,
      'the key to be remembered between requests',
    )
    counted.lookups = 0
    for (let i = 0; i < 50; i++) expect(await usable(t.key)).toBe(true)
    expect(counted.lookups).toBe(0)
  })

  test.skipIf(TEST_STORE !== 'postgres')(
    'PostgreSQL: a key another process revokes is refused within 1 s, while it was remembered',
    async () => {
      await setup()
      const second = await t.createKey()
      const counted = countLookups(t)
      await until(
        async () => {
          counted.lookups = 0
          await usable(second.key)
          await usable(second.key)
          return counted.lookups === 0
        },
        2000,
        'the key to be remembered',
      )
      await t.revokeKey(second.id)
      await revocationHeard(async () => !(await usable(second.key)), 'a remembered key revoked by another process')
      expect(await usable(second.key)).toBe(false)
      expect(await usable(t.key)).toBe(true)
    },
  )

  test.skipIf(TEST_STORE !== 'postgres')(
    'PostgreSQL: with the notification connection down, a revocation is still refused (keys are looked up on every request)',
    async () => {
      await setup()
      const second = await t.createKey()
      await until(
        async () => {
          const counted = countLookups(t)
          await usable(second.key)
          await usable(second.key)
          return counted.lookups === 0
        },
        2000,
        'the key to be remembered',
      )
      // The listening connection is cut and cannot come back (no new connection to the database is let in);
      // the connections already open (the app's pool, the other process's) go on working.
      const name = (await t.sql('SELECT current_database() AS name'))[0]!.name as string
      // From the server's own database: PostgreSQL will not shut the one a session is in.
      const admin = new SQL(process.env.INTAKE_TEST_DATABASE_URL!, { max: 1 })
      await admin.unsafe(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`)
      try {
        const cut = await t.sql(
          `SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`,
        )
        expect(cut).toHaveLength(1)
        await t.revokeKey(second.id)
        const startedAt = performance.now()
        await until(
          async () => !(await usable(second.key)),
          REVOCATION_HANG_MS,
          'the revoked key to be refused without its notification',
        )
        reportFigure(
          'revocation heard by another server (ms)',
          'a revocation whose notification was lost',
          performance.now() - startedAt,
        )
        expect(await usable(t.key)).toBe(true)
      } finally {
        await admin.unsafe(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`)
        await admin.close()
      }
    },
  )
})

// ================================================================= 3. bodies bounded

interface BodyRoute {
  name: string
  method: string
  /** Where to send it, given a fresh fixture. */
  path: (fx: Fixture) => string
  headers: Record<string, string>
  withKey: boolean
  /** The most it may carry. */
  limit: number
  /** A body of exactly `size` bytes that the route accepts. */
  bodyOfSize: (size: number) => Uint8Array
  /** The answer to a body at the limit. */
  accepted: number
  /** Refusals are pages (form posts), else JSON. */
  page: boolean
}

const fileFormLimit = submissionBodyLimit(FILE_FIELDS as FieldDefinition[])
const textFormLimit = submissionBodyLimit(TEXT_FIELDS as FieldDefinition[])

const BODY_ROUTES: BodyRoute[] = [
  {
    name: 'POST /api/v1/forms',
    method: 'POST',
    path: () => '/api/v1/forms',
    headers: { 'content-type': 'application/json' },
    withKey: true,
    limit: ONE_MIB,
    bodyOfSize: (size) => paddedJson(validForm(), size),
    accepted: 201,
    page: false,
  },
  {
    name: 'PATCH /api/v1/forms/:id',
    method: 'PATCH',
    path: (fx) => `/api/v1/forms/${fx.activeId}`,
    headers: { 'content-type': 'application/json' },
    withKey: true,
    limit: ONE_MIB,
    bodyOfSize: (size) => paddedJson({}, size),
    accepted: 200,
    page: false,
  },
  {
    name: 'POST /mcp',
    method: 'POST',
    path: () => '/mcp',
    headers: { 'content-type': 'application/json', ...MCP_HEADERS },
    withKey: true,
    limit: ONE_MIB,
    bodyOfSize: (size) => paddedJson(TOOLS_LIST, size),
    accepted: 200,
    page: false,
  },
  {
    name: 'POST /f/:id (application/json)',
    method: 'POST',
    path: (fx) => `/f/${fx.activeId}`,
    headers: { 'content-type': 'application/json' },
    withKey: false,
    limit: ONE_MIB,
    bodyOfSize: (size) => paddedJson({ name: 'Ada' }, size),
    accepted: 201,
    page: false,
  },
  {
    name: 'POST /f/:id (application/x-www-form-urlencoded)',
    method: 'POST',
    path: (fx) => `/f/${fx.activeId}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    withKey: false,
    limit: textFormLimit,
    bodyOfSize: (size) => paddedUrlencoded({ name: 'Ada' }, size),
    accepted: 303,
    page: true,
  },
  {
    name: 'POST /f/:id (multipart/form-data)',
    method: 'POST',
    path: (fx) => `/f/${fx.activeId}`,
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    withKey: false,
    limit: textFormLimit,
    bodyOfSize: (size) => paddedMultipart([{ name: 'name', value: 'Ada' }], size),
    accepted: 303,
    page: true,
  },
]

/** The form with a file field (max_size FILE_MAX), for upload bounds. */
async function fileForm() {
  return t.api.createForm({ fields: FILE_FIELDS })
}

/** The answer to an over-limit body: 413, as JSON with a detail, or as a page for form posts. */
function expectTooLarge(res: TestResponse, route: { page: boolean }, what: string) {
  if (route.page) expectHtmlPage(res, 413, what)
  else expectJsonError(res, 413, what)
  expectSecurityHeaders(res, what)
}

describe('request bodies are bounded on every route that reads one', () => {
  for (const route of BODY_ROUTES) {
    describe(route.name, () => {
      test(`a declared Content-Length over ${route.limit} bytes is refused with 413 before the body is read`, async () => {
        await setup()
        const fx = await fixture()
        const body = streamed(route.bodyOfSize(route.limit + 1))
        const res = await sendRaw(route.method, route.path(fx), {
          body: body.stream,
          headers: { ...route.headers, 'content-length': String(route.limit + 1) },
          key: route.withKey ? t.key : undefined,
        })
        expect({ status: res.status, pulled: body.pulled <= CHUNK }).toEqual({ status: 413, pulled: true })
        expectTooLarge(res, route, `${route.name}, Content-Length ${route.limit + 1}`)
      })

      test('a chunked body (no Content-Length) growing past the limit is refused with 413, and not read to its end', async () => {
        await setup()
        const fx = await fixture()
        const total = route.limit * 2 + 8 * CHUNK
        const body = streamed(route.bodyOfSize(total))
        const res = await sendRaw(route.method, route.path(fx), {
          body: body.stream,
          headers: route.headers,
          key: route.withKey ? t.key : undefined,
        })
        // The server stops once past the limit: what it pulled is the limit and at most a chunk read ahead.
        expect({ status: res.status, pulled: body.pulled <= route.limit + 2 * CHUNK }).toEqual({
          status: 413,
          pulled: true,
        })
        expect(body.pulled).toBeLessThan(total)
        expectTooLarge(res, route, `${route.name}, chunked ${total} bytes`)
      })

      test(`a body of exactly ${route.limit} bytes (declared) is read and accepted`, async () => {
        await setup()
        const fx = await fixture()
        const bytes = route.bodyOfSize(route.limit)
        expect(bytes.byteLength).toBe(route.limit)
        const res = await sendRaw(route.method, route.path(fx), {
          body: bytes,
          headers: { ...route.headers, 'content-length': String(route.limit) },
          key: route.withKey ? t.key : undefined,
        })
        expect({ status: res.status, body: res.status === route.accepted ? 'ok' : res.text.slice(0, 300) }).toEqual({
          status: route.accepted,
          body: 'ok',
        })
      })

      test(`a chunked body of exactly ${route.limit} bytes is read and accepted`, async () => {
        await setup()
        const fx = await fixture()
        const body = streamed(route.bodyOfSize(route.limit))
        const res = await sendRaw(route.method, route.path(fx), {
          body: body.stream,
          headers: route.headers,
          key: route.withKey ? t.key : undefined,
        })
        expect({ status: res.status, body: res.status === route.accepted ? 'ok' : res.text.slice(0, 300) }).toEqual({
          status: route.accepted,
          body: 'ok',
        })
        expect(body.pulled).toBe(route.limit)
      })
    })
  }

  test('the body limit of a form post is what its fields allow (a form with a file field allows its max_size more)', () => {
    expect(fileFormLimit - textFormLimit).toBeGreaterThanOrEqual(FILE_MAX)
    expect(textFormLimit).toBeLessThan(ONE_MIB)
  })

  describe('uploads are bounded by the form', () => {
    const upload = (size: number, filename = 'upload.bin') => ({
      name: 'photo',
      filename,
      type: 'application/octet-stream',
      bytes: new Uint8Array(size).fill(65),
    })
    const postBytes = (formId: string, bytes: Uint8Array | ReadableStream, declared?: number) =>
      sendRaw('POST', `/f/${formId}`, {
        body: bytes,
        headers: {
          'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
          ...(declared === undefined ? {} : { 'content-length': String(declared) }),
        },
      })

    test(`a file of exactly max_size (${FILE_MAX} bytes) is stored`, async () => {
      await setup()
      const form = await fileForm()
      const bytes = multipart([{ name: 'name', value: 'Ada' }, upload(FILE_MAX)])
      const res = await postBytes(form.id, bytes, bytes.byteLength)
      expect(res.status).toBe(303)
      const [response] = (await t.api.get(`/forms/${form.id}/responses`)).body
      const file = await send(t.app, 'GET', new URL(response.data.photo).pathname, { key: t.key })
      expect(file.status).toBe(200)
      expect(file.text.length).toBe(FILE_MAX)
    })

    test("a post of exactly the form's limit is read: its file, too large, is refused next to its field (422), not 413", async () => {
      await setup()
      const form = await fileForm()
      // Multipart grows byte for byte with the file: this file makes the post exactly the limit.
      const frame = multipart([{ name: 'name', value: 'Ada' }, upload(0)]).byteLength
      const bytes = multipart([{ name: 'name', value: 'Ada' }, upload(fileFormLimit - frame)])
      expect(bytes.byteLength).toBe(fileFormLimit)
      const res = await postBytes(form.id, bytes, bytes.byteLength)
      expectHtmlPage(res, 422, 'a post of exactly the limit')
      expect(res.text).toContain('value="Ada"')
      expect((await t.api.get(`/forms/${form.id}/responses`)).body).toEqual([])
    })

    test('a file one byte over max_size is refused (422, the page with the error at the field), nothing is recorded', async () => {
      await setup()
      const form = await fileForm()
      const res = await postBytes(form.id, multipart([{ name: 'name', value: 'Ada' }, upload(FILE_MAX + 1)]))
      expectHtmlPage(res, 422, 'a file over max_size')
      expect(res.text).toContain('aria-invalid')
      expect((await t.api.get(`/forms/${form.id}/responses`)).body).toEqual([])
    })

    test("a post one byte over the form's limit is 413 (a page), nothing is recorded", async () => {
      await setup()
      const form = await fileForm()
      const bytes = paddedMultipart([{ name: 'name', value: 'Ada' }, upload(FILE_MAX)], fileFormLimit + 1)
      expectTooLarge(await postBytes(form.id, bytes), { page: true }, 'file form, limit + 1 (undeclared)')
      expectTooLarge(
        await postBytes(form.id, bytes, bytes.byteLength),
        { page: true },
        'file form, limit + 1 (declared)',
      )
      expect((await t.api.get(`/forms/${form.id}/responses`)).body).toEqual([])
    })

    test("an upload 4 MiB past the form's limit (its file may hold 1 KiB) is refused with 413 after reading at most the limit, declared or chunked", async () => {
      await setup()
      const form = await fileForm()
      const bytes = multipart([{ name: 'name', value: 'Ada' }, upload(fileFormLimit + 4 * ONE_MIB)])
      const chunked = streamed(bytes)
      expectTooLarge(await postBytes(form.id, chunked.stream), { page: true }, '4 MiB upload, chunked')
      expect(chunked.pulled).toBeLessThanOrEqual(fileFormLimit + 2 * CHUNK)
      const declared = streamed(bytes)
      expectTooLarge(
        await postBytes(form.id, declared.stream, bytes.byteLength),
        { page: true },
        '4 MiB upload, declared',
      )
      expect(declared.pulled).toBeLessThanOrEqual(CHUNK)
      expect((await t.api.get(`/forms/${form.id}/responses`)).body).toEqual([])
    })
  })

  test('routes that take no body do not read one: a 4 MiB chunked body is left (almost) unread', async () => {
    await setup()
    const fx = await fixture()
    const readers = new Set(BODY_ROUTES.map((route) => `${route.method} ${route.name.split(' ')[1]}`))
    const others = ROUTES.filter((route) => route.method !== 'GET' && !readers.has(`${route.method} ${route.path}`))
    expect(others.map((route) => `${route.method} ${route.path}`)).toEqual(
      expect.arrayContaining(['DELETE /api/v1/forms/:id', 'POST /api/v1/forms/:id/deliveries/:deliveryId/redeliver']),
    )
    for (const route of [...others, { method: 'POST', path: '/nowhere' }, { method: 'PUT', path: '/api/v1/forms' }]) {
      const body = streamed(new Uint8Array(4 * ONE_MIB).fill(32))
      const path = fill(route.path, realIds(fx))
      const res = await sendRaw(route.method, path, {
        body: body.stream,
        headers: { 'content-type': 'application/json', ...MCP_HEADERS },
        key: t.key,
      })
      expect({
        route: `${route.method} ${path} -> ${res.status}`,
        pulledAtMost: body.pulled <= ONE_MIB + 2 * CHUNK,
      }).toEqual({
        route: `${route.method} ${path} -> ${res.status}`,
        pulledAtMost: true,
      })
      expectSecurityHeaders(res, `${route.method} ${path} with an unread body`)
    }
  })
})

// ================================================================= 4. SSRF: SERVICE_WEBHOOK_BLOCK_PRIVATE

describe('SERVICE_WEBHOOK_BLOCK_PRIVATE: every option vector is refused and logged as a failed attempt naming the address', () => {
  /**
   * While these tests run, fetch (what intake sends webhooks with) connects
   * only to loopback literals: anything else is refused here and recorded, so
   * a vector intake failed to refuse fails the test without any traffic.
   */
  let offLoopback: string[] = []
  function guardFetch() {
    offLoopback = []
    const inner = globalThis.fetch
    const guarded = async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : String(input))
      const host = url.hostname.replace(/^\[|\]$/g, '')
      if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) && host !== '::1') {
        offLoopback.push(host)
        throw new Error(`test guard: no connection to ${host}`)
      }
      return inner(input, init)
    }
    globalThis.fetch = Object.assign(guarded, { preconnect: inner.preconnect }) as typeof fetch
    cleanups.push(() => {
      globalThis.fetch = inner
    })
  }

  /** A live receiver on 127.0.0.1 that counts what reaches it. */
  function receiver() {
    let received = 0
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => {
        received++
        return new Response('ok')
      },
    })
    cleanups.push(() => server.stop(true))
    return {
      port: server.port!,
      get received() {
        return received
      },
    }
  }

  /** Creates a form calling back `callbackUrl`, answers it, and returns its delivery once it has an outcome. */
  async function refusedDelivery(callbackUrl: string) {
    const form = await t.api.createForm({ callback_url: callbackUrl })
    t.background.start()
    const answered = await submit(t.app, form.id, { name: 'Ada' })
    expect(answered.status).toBe(201)
    let last: any[] = []
    await until(
      async () => {
        last = (await t.api.get(`/forms/${form.id}/deliveries`)).body
        return last.length === 1 && last[0].status !== 'pending'
      },
      5000,
      `the delivery to ${callbackUrl} to have an outcome`,
      () => last,
    )
    return last[0]
  }

  function expectRefusal(delivery: any, address: string, callbackUrl: string) {
    expect({
      callbackUrl,
      status: delivery.status,
      attempts: delivery.attempts,
      last_status_code: delivery.last_status_code,
      refused: /refused/i.test(delivery.last_error ?? '') && /private/i.test(delivery.last_error ?? ''),
      namesAddress: (delivery.last_error ?? '').includes(address),
      offLoopback,
    }).toEqual({
      callbackUrl,
      status: 'failed',
      attempts: 1,
      last_status_code: null,
      refused: true,
      namesAddress: true,
      offLoopback: [],
    })
    // The attempt's log line says so too, without the callback URL.
    const attemptLines = t.logs.filter((line) => 'delivery_id' in line)
    expect(attemptLines.length).toBeGreaterThanOrEqual(1)
    expect(attemptLines.some((line) => line.delivered === false && String(line.error ?? '').includes(address))).toBe(
      true,
    )
  }

  const BLOCK = { SERVICE_WEBHOOK_BLOCK_PRIVATE: 'true', SERVICE_WEBHOOK_MAX_RETRIES: '0' }

  // Literal addresses: loopback in its many spellings (a live receiver listens on 127.0.0.1), IPv4-mapped and bracketed IPv6.
  const LITERALS: Array<[string, (port: number) => string, string]> = [
    ['loopback IPv4', (p) => `http://127.0.0.1:${p}/hook`, '127.0.0.1'],
    ['another loopback IPv4', (p) => `http://127.45.6.7:${p}/hook`, '127.45.6.7'],
    ['loopback, shorthand 127.1', (p) => `http://127.1:${p}/hook`, '127.0.0.1'],
    ['loopback as one decimal number', (p) => `http://2130706433:${p}/hook`, '127.0.0.1'],
    ['loopback in hex', (p) => `http://0x7f000001:${p}/hook`, '127.0.0.1'],
    ['loopback in octal', (p) => `http://0177.0.0.1:${p}/hook`, '127.0.0.1'],
    ['loopback with the https scheme', (p) => `https://127.0.0.1:${p}/hook`, '127.0.0.1'],
    ['[::1]', (p) => `http://[::1]:${p}/hook`, '::1'],
    ['[0:0:0:0:0:0:0:1]', (p) => `http://[0:0:0:0:0:0:0:1]:${p}/hook`, '::1'],
    ['[::] (unspecified)', (p) => `http://[::]:${p}/hook`, '::'],
    ['IPv4-mapped loopback [::ffff:127.0.0.1]', (p) => `http://[::ffff:127.0.0.1]:${p}/hook`, '::ffff:7f00:1'],
    ['IPv4-mapped loopback, hex [::ffff:7f00:1]', (p) => `http://[::ffff:7f00:1]:${p}/hook`, '::ffff:7f00:1'],
    ['IPv4-mapped loopback, long form', (p) => `http://[0:0:0:0:0:ffff:127.0.0.1]:${p}/hook`, '::ffff:7f00:1'],
    ['IPv4-compatible loopback [::127.0.0.1]', (p) => `http://[::127.0.0.1]:${p}/hook`, '::7f00:1'],
    ['NAT64 loopback [64:ff9b::127.0.0.1]', (p) => `http://[64:ff9b::127.0.0.1]:${p}/hook`, '64:ff9b::7f00:1'],
    ['IPv4-mapped private [::ffff:10.0.0.1]', (p) => `http://[::ffff:10.0.0.1]:${p}/hook`, '::ffff:a00:1'],
    [
      'IPv4-mapped metadata [::ffff:169.254.169.254]',
      (p) => `http://[::ffff:169.254.169.254]:${p}/hook`,
      '::ffff:a9fe:a9fe',
    ],
    ['IPv4-mapped private [::ffff:192.168.1.1]', (p) => `http://[::ffff:192.168.1.1]:${p}/hook`, '::ffff:c0a8:101'],
    ['unique-local [fd00::1]', (p) => `http://[fd00::1]:${p}/hook`, 'fd00::1'],
    ['unique-local [fc00::abcd]', (p) => `http://[fc00::abcd]:${p}/hook`, 'fc00::abcd'],
    ['link-local [fe80::1]', (p) => `http://[fe80::1]:${p}/hook`, 'fe80::1'],
    ['multicast [ff02::1]', (p) => `http://[ff02::1]:${p}/hook`, 'ff02::1'],
  ]
  for (const [name, url, address] of LITERALS) {
    test(`literal ${name}`, async () => {
      const dns = stubResolver({})
      await setup(BLOCK, dns.resolver)
      guardFetch()
      const rx = receiver()
      const callbackUrl = url(rx.port)
      const delivery = await refusedDelivery(callbackUrl)
      expectRefusal(delivery, address, callbackUrl)
      // Refused before connecting: an attempt that had connected would have reached the receiver before its outcome was written.
      expect(rx.received).toBe(0)
      expect(dns.asked).toEqual([])
    })
  }

  // Names, answered by the stub: private addresses, and public ones only ever next to a private one.
  const NAMES: Array<[string, string[], string]> = [
    ['10.0.0.0/8', ['10.1.2.3'], '10.1.2.3'],
    ['172.16.0.0/12', ['172.31.255.1'], '172.31.255.1'],
    ['192.168.0.0/16', ['192.168.0.10'], '192.168.0.10'],
    ['link-local metadata 169.254.169.254', ['169.254.169.254'], '169.254.169.254'],
    ['CGNAT 100.64.0.0/10', ['100.100.100.100'], '100.100.100.100'],
    ['0.0.0.0', ['0.0.0.0'], '0.0.0.0'],
    ['multicast 224.0.0.1', ['224.0.0.1'], '224.0.0.1'],
    ['loopback 127.0.0.1', ['127.0.0.1'], '127.0.0.1'],
    ['loopback ::1', ['::1'], '::1'],
    ['unique-local fd12:3456::1', ['fd12:3456::1'], 'fd12:3456::1'],
    ['link-local fe80::1234', ['fe80::1234'], 'fe80::1234'],
    ['IPv4-mapped private ::ffff:10.0.0.1', ['::ffff:10.0.0.1'], '::ffff:10.0.0.1'],
    ['IPv4-mapped loopback ::ffff:127.0.0.1', ['::ffff:127.0.0.1'], '::ffff:127.0.0.1'],
    ['a public address, then a private one', ['93.184.216.34', '10.0.0.1'], '10.0.0.1'],
    ['a private address, then a public one', ['192.168.7.7', '93.184.216.34'], '192.168.7.7'],
    ['a public IPv6 address, then a unique-local one', ['2606:4700:4700::1111', 'fd00::53'], 'fd00::53'],
    [
      'a public IPv4 address, then an IPv4-mapped metadata one',
      ['93.184.216.34', '::ffff:169.254.169.254'],
      '::ffff:169.254.169.254',
    ],
  ]
  for (const [name, addresses, address] of NAMES) {
    test(`a name resolving to ${name}`, async () => {
      const dns = stubResolver({ 'hooks.example.test': addresses })
      await setup(BLOCK, dns.resolver)
      guardFetch()
      const callbackUrl = 'http://hooks.example.test:8080/hook'
      const delivery = await refusedDelivery(callbackUrl)
      expectRefusal(delivery, address, callbackUrl)
      expect(dns.asked).toEqual(['hooks.example.test'])
    })
  }

  test('a name with no address at all is a failed attempt, never a connection', async () => {
    const dns = stubResolver({ 'empty.example.test': [] })
    await setup(BLOCK, dns.resolver)
    guardFetch()
    const delivery = await refusedDelivery('http://empty.example.test/hook')
    expect({ status: delivery.status, attempts: delivery.attempts, error: delivery.last_error, offLoopback }).toEqual({
      status: 'failed',
      attempts: 1,
      error: expect.stringContaining('empty.example.test'),
      offLoopback: [],
    })
  })
})

// ================================================================= 5. rate limits under parallel load

describe('rate limits hold under parallel load', () => {
  const tally = (responses: TestResponse[]) =>
    responses.reduce<Record<number, number>>((counts, res) => {
      counts[res.status] = (counts[res.status] ?? 0) + 1
      return counts
    }, {})

  test('SERVICE_RATE_LIMIT=50: 200 requests at once with one key give exactly 50 answers and 150 429s with Retry-After; another key is unaffected', async () => {
    await setup({ SERVICE_RATE_LIMIT: '50' })
    const other = await t.createKey()
    const [burst, others] = await Promise.all([
      Promise.all(Array.from({ length: 200 }, () => t.api.get('/forms'))),
      Promise.all(Array.from({ length: 50 }, () => send(t.app, 'GET', '/api/v1/forms', { key: other.key }))),
    ])
    expect(tally(burst)).toEqual({ 200: 50, 429: 150 })
    for (const res of burst.filter((r) => r.status === 429)) {
      expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/)
      expect(typeof res.body.detail).toBe('string')
      expectSecurityHeaders(res, '429')
    }
    expect(tally(others)).toEqual({ 200: 50 })
    // The same bucket covers /mcp.
    const mcp = await send(t.app, 'POST', '/mcp', { key: t.key, body: TOOLS_LIST, headers: MCP_HEADERS })
    expect(mcp.status).toBe(429)
    expect(mcp.headers.get('retry-after')).toMatch(/^[1-9]\d*$/)
  })

  test('SERVICE_PUBLIC_RATE_LIMIT=20 behind a trusted proxy: 100 submissions at once from one address give at most 20 answers that are not 429', async () => {
    await setup({ SERVICE_PUBLIC_RATE_LIMIT: '20', SERVICE_TRUST_PROXY: 'true' })
    const form = await t.api.createForm({ fields: TEXT_FIELDS })
    // Whatever the client claims before it, the proxy appended 203.0.113.7: that is the address limited.
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        i % 2 === 0
          ? submit(t.app, form.id, { name: `Ada ${i}` }, { 'x-forwarded-for': `198.51.100.${i}, 203.0.113.7` })
          : postForm(t.app, form.id, { name: `Ada ${i}` }, { 'x-forwarded-for': `10.0.${i}.1, 203.0.113.7` }),
      ),
    )
    const notLimited = results.filter((res) => res.status !== 429)
    expect(notLimited.length).toBeLessThanOrEqual(20)
    expect(notLimited.length).toBeGreaterThanOrEqual(1)
    expect(results.filter((res) => res.status === 201 || res.status === 303)).toHaveLength(1)
    for (const res of results.filter((r) => r.status === 429))
      expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/)
    // Another address is not held back by that one.
    const elsewhere = await submit(t.app, form.id, { name: 'Bob' }, { 'x-forwarded-for': '203.0.113.8' })
    expect(elsewhere.status).toBe(409)
  })
})

// ================================================================= 6. timing-safe comparisons

/*
 * Timing-safe comparisons are asserted by design, not measured. A timing test
 * would compare response times of keys that share a longer or shorter prefix
 * with a real one; the difference an early-exit `===` makes on a 57-character
 * string is a few nanoseconds, while one in-process request costs microseconds
 * and varies by far more with JIT tiers, garbage collection, other processes
 * on a shared CI machine and CPU frequency. Telling the two apart needs
 * millions of samples and a statistical test that still fails now and then
 * (or passes when it should not): a flaky test, which is worse than none.
 *
 * So instead: intake never compares secret material itself. A presented key
 * is hashed (SHA-256) and looked up by that hash in an index (the database's,
 * or a Map of keys already seen: a hash-table probe, not a character-by-character
 * comparison against a stored secret); webhook secrets are only ever used as
 * HMAC keys, never compared. The scan below fails on any === / !== / == / !=
 * (or .equals / Buffer.compare) in src/ whose operand names secret material
 * (key, secret, signature, token, hash, digest, hmac, password, credential),
 * except against a literal or a typeof (presence and emptiness checks, which
 * compare nothing secret), and except the listed comparisons, each with why it
 * compares nothing secret.
 */
describe('timing-safe comparisons (by design)', () => {
  const SRC = join(import.meta.dir, '..', 'src')
  const SECRET_NAME = /key|secret|sign|token|hash|digest|hmac|passw|credential/i

  /** Comparisons whose operands are named like secrets but hold none. */
  const NOT_SECRET: Record<string, string> = {
    'modules/forms/service.ts: earlier.requestHash !== requestHash':
      'the SHA-256 of a create body, to tell an Idempotency-Key replay from a reuse with another body: a fingerprint of what this same account sent, not a credential',
    'db/postgres/changes.ts: payload === KEYS_CHANGED':
      'the payload of a notification on the channel intake_changes, a fixed word saying that some key changed: no credential',
    'db/copy.ts: a.value.digest !== b.value.digest':
      "the SHA-256 of an uploaded file's bytes on both sides of intake copy, to check the copy: a fingerprint of data the operator holds on both sides, not a credential",
  }

  function sourceFiles(dir: string): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) return sourceFiles(path)
      return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : []
    })
  }

  const unwrap = (node: ts.Expression): ts.Expression => {
    while (
      ts.isParenthesizedExpression(node) ||
      ts.isAsExpression(node) ||
      ts.isNonNullExpression(node) ||
      ts.isTypeAssertionExpression(node)
    )
      node = node.expression
    return node
  }

  /** The name an operand goes by: `x`, `a.b.x`, `a['x']`, `x(...)`, `a.x(...)` are all "x". */
  function nameOf(node: ts.Expression): string | undefined {
    const e = unwrap(node)
    if (ts.isIdentifier(e)) return e.text
    if (ts.isPropertyAccessExpression(e)) return e.name.text
    if (ts.isElementAccessExpression(e))
      return ts.isStringLiteralLike(e.argumentExpression) ? e.argumentExpression.text : nameOf(e.expression)
    if (ts.isCallExpression(e)) return nameOf(e.expression)
    return undefined
  }

  /** A literal, `undefined` or a typeof: comparing with one of these compares nothing secret. */
  function isConstant(node: ts.Expression): boolean {
    const e = unwrap(node)
    return (
      ts.isStringLiteralLike(e) ||
      ts.isNumericLiteral(e) ||
      ts.isTypeOfExpression(e) ||
      e.kind === ts.SyntaxKind.NullKeyword ||
      e.kind === ts.SyntaxKind.TrueKeyword ||
      e.kind === ts.SyntaxKind.FalseKeyword ||
      (ts.isIdentifier(e) && e.text === 'undefined') ||
      (ts.isPrefixUnaryExpression(e) && ts.isNumericLiteral(e.operand))
    )
  }

  const EQUALITY = new Set([
    ts.SyntaxKind.EqualsEqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsEqualsToken,
    ts.SyntaxKind.EqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsToken,
  ])

  /** Every comparison in src/ of something named like a secret with something that is not a constant. */
  function secretComparisons(): string[] {
    const found: string[] = []
    for (const file of sourceFiles(SRC)) {
      const source = ts.createSourceFile(
        file,
        readFileSync(file, 'utf8'),
        ts.ScriptTarget.Latest,
        true,
        file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
      )
      const where = relative(SRC, file)
      const consider = (node: ts.Node, operands: ts.Expression[]) => {
        const named = operands.some((operand) => SECRET_NAME.test(nameOf(operand) ?? ''))
        if (named && !operands.some(isConstant)) found.push(`${where}: ${node.getText(source).replace(/\s+/g, ' ')}`)
      }
      const visit = (node: ts.Node) => {
        if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind))
          consider(node, [node.left, node.right])
        if (ts.isCallExpression(node)) {
          const callee = unwrap(node.expression)
          // a.equals(b) (Buffer), Buffer.compare(a, b), a.localeCompare(b): all stop at the first difference.
          if (
            ts.isPropertyAccessExpression(callee) &&
            ['equals', 'compare', 'localeCompare'].includes(callee.name.text)
          ) {
            consider(node, [callee.expression, ...node.arguments])
          }
        }
        ts.forEachChild(node, visit)
      }
      visit(source)
    }
    return found
  }

  test('the scan finds a secret compared with === (it can fail)', () => {
    const source = ts.createSourceFile(
      'probe.ts',
      'if (signature === expected) ok(); if (hmac(body).equals(header)) ok(); if (key === "") no(); if (typeof token !== "string") no()',
      ts.ScriptTarget.Latest,
      true,
    )
    const flagged: string[] = []
    const visit = (node: ts.Node) => {
      if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind)) {
        const operands = [node.left, node.right]
        if (operands.some((o) => SECRET_NAME.test(nameOf(o) ?? '')) && !operands.some(isConstant))
          flagged.push(node.getText(source))
      }
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        node.expression.name.text === 'equals'
      ) {
        const operands = [node.expression.expression, ...node.arguments]
        if (operands.some((o) => SECRET_NAME.test(nameOf(o) ?? ''))) flagged.push(node.getText(source))
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
    expect(flagged).toEqual(['signature === expected', 'hmac(body).equals(header)'])
  })

  test('no secret is compared with === (or .equals, or Buffer.compare) anywhere in src/', () => {
    const files = sourceFiles(SRC)
    expect(files.length).toBeGreaterThan(30)
    const unexplained = secretComparisons().filter((comparison) => !(comparison in NOT_SECRET))
    expect(unexplained).toEqual([])
  })

  test('keys are looked up by their SHA-256 in a unique index; no column holds a key', async () => {
    const service = readFileSync(join(SRC, 'modules/auth/service.ts'), 'utf8')
    expect(service).toMatch(/createHash\('sha256'\)\.update\(key\)\.digest\('hex'\)/)
    expect(service).toContain('store.keys.keyByHash(hashKey(key))')
    await setup()
    const second = await t.createKey()
    expect((await send(t.app, 'GET', '/api/v1/forms', { key: second.key })).status).toBe(200)
    const rows = await t.sql('SELECT * FROM api_keys')
    expect(rows).toHaveLength(2)
    for (const key of [t.key, second.key]) {
      const hex = key.slice('svc_live_'.length)
      expect(rows.filter((row) => Object.values(row).some((value) => String(value).includes(hex)))).toEqual([])
      expect(rows.filter((row) => row.key_hash === createHash('sha256').update(key).digest('hex'))).toHaveLength(1)
    }
    // A UNIQUE index on key_hash alone, and the lookup searches it (an index probe, not a scan comparing each stored value).
    if (!t.sqlite) return // PostgreSQL's UNIQUE constraint on key_hash is its index (test/postgres-store.test.ts)
    const indexes = t.sqlite
      .query('SELECT name FROM pragma_index_list(\'api_keys\') WHERE "unique" = 1')
      .all() as Array<{ name: string }>
    const onHash = indexes.filter((index) => {
      const columns = t.sqlite!.query(`SELECT name FROM pragma_index_info('${index.name}')`).all() as Array<{
        name: string
      }>
      return columns.length === 1 && columns[0]!.name === 'key_hash'
    })
    expect(onHash).toHaveLength(1)
    const plan = t.sqlite
      .query('EXPLAIN QUERY PLAN SELECT id, account_id, last_used_at, revoked_at FROM api_keys WHERE key_hash = ?')
      .all('x') as Array<{ detail: string }>
    expect(plan.map((step) => step.detail).join('; ')).toContain(`USING INDEX ${onHash[0]!.name} (key_hash=?)`)
  })

  test('webhook secrets are used only as HMAC keys: never compared, never verified by intake', () => {
    const uses = sourceFiles(SRC).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => /\bsecret\b/.test(line) && !/^\s*(\*|\/\/|\/\*)/.test(line))
        .map((line) => `${relative(SRC, file)}: ${line.trim()}`),
    )
    expect(uses.length).toBeGreaterThan(0)
    for (const use of uses) expect(use).not.toMatch(/secret\s*[!=]==?|[!=]==?\s*\w*secret|timingSafeEqual|\.equals\(/i)
  })
})
