/**
 * Security, in process: the security headers on every route and every kind of answer.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import {
  expectHtmlPage,
  expectJsonError,
  expectSecurityHeaders,
  type Fixture,
  fill,
  fixture,
  MCP_HEADERS,
  nextTurn,
  ONE_MIB,
  paddedJson,
  paddedUrlencoded,
  ROUTES,
  realIds,
  STYLESHEET_PATH,
  sendRaw,
  TEXT_FIELDS,
  TOOLS_LIST,
  textFormLimit,
  typicalRequest,
  unknownIds,
} from './security-fixtures.ts'
import {
  contextsPerTest,
  failEveryStoreCall,
  postForm,
  type Resolver,
  send,
  submit,
  type TestContext,
  type TestResponse,
  UNKNOWN_ID,
  validForm,
} from './utils.ts'

setDefaultTimeout(20_000)

let t: TestContext
const { create } = contextsPerTest()

async function setup(env: Record<string, string> = {}, resolver?: Resolver): Promise<TestContext> {
  return (t = await create(env, { resolver }))
}

// ================================================================= security headers

describe('security headers on every route', () => {
  test('the route list read from the app holds every route the docs name', () => {
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
        const fx = await fixture(t)
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
      await sendRaw(t, 'POST', `/f/${form.id}`, {
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
