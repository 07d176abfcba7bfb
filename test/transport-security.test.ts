/**
 * CONTRACT 13a: under an https base URL every response carries
 * `Strict-Transport-Security: max-age=31536000`, so a browser that once
 * reached intake over https never again sends a person's answer in clear
 * text; under an http base URL none does (a browser ignores it over http,
 * and it would pin a name that is not served over https).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import {
  createTestContext,
  failEveryStoreCall,
  openPage,
  postForm,
  send,
  submit,
  type TestContext,
  type TestResponse,
  UNKNOWN_ID,
  validForm,
} from './utils.ts'

const HSTS = 'max-age=31536000'
const MCP_HEADERS = { accept: 'application/json, text/event-stream' }
const TOOLS_LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' }

/** Requests of every kind a client makes, and the answers they get: pages, API, errors, 404s, /healthz. */
async function everyKindOfResponse(t: TestContext): Promise<Array<[string, TestResponse]>> {
  const form = await t.api.createForm()
  const answered = await t.api.createForm()
  const oneMiB = 1024 * 1024
  const stylesheet = /href="(\/assets\/[^"]+\.css)"/.exec((await openPage(t.app, form.id)).text)![1]!
  const responses: Array<[string, TestResponse]> = [
    ['GET / (page)', await send(t.app, 'GET', '/')],
    ['GET /f/<id> (page)', await openPage(t.app, form.id)],
    ['GET the stylesheet', await send(t.app, 'GET', stylesheet)],
    ['GET /healthz', await send(t.app, 'GET', '/healthz')],
    ['GET /api/v1/openapi.json', await send(t.app, 'GET', '/api/v1/openapi.json')],
    ['POST /api/v1/forms (201)', await t.api.post('/forms', validForm())],
    ['GET /api/v1/forms/<id>', await t.api.get(`/forms/${form.id}`)],
    ['POST /mcp', await send(t.app, 'POST', '/mcp', { key: t.key, headers: MCP_HEADERS, body: TOOLS_LIST })],
    ['POST /f/<id> (303)', await postForm(t.app, answered.id, { name: 'Ada' })],
    ['POST /f/<id> (409)', await submit(t.app, answered.id, { name: 'Bob' })],
    ['422', await t.api.post('/forms', { title: '' })],
    ['401', await send(t.app, 'GET', '/api/v1/forms', { key: `svc_live_${'0'.repeat(48)}` })],
    ['403', await send(t.app, 'GET', '/api/v1/forms')],
    ['404 unknown path (JSON)', await send(t.app, 'GET', '/nowhere')],
    ['404 unknown path (page)', await send(t.app, 'GET', '/nowhere', { headers: { accept: 'text/html' } })],
    ['404 unknown form (page)', await openPage(t.app, UNKNOWN_ID)],
    ['404 unknown form (API)', await t.api.get(`/forms/${UNKNOWN_ID}`)],
    ['405 GET /mcp', await send(t.app, 'GET', '/mcp', { key: t.key })],
    ['413', await t.api.post('/forms', `{"title":"${'x'.repeat(oneMiB)}"}`)],
  ]
  failEveryStoreCall(t.store)
  responses.push(
    ['500 (API)', await t.api.get(`/forms/${form.id}`)],
    ['500 (page)', await openPage(t.app, form.id)],
    ['500 /healthz', await send(t.app, 'GET', '/healthz')],
  )
  return responses
}

describe('under an https base URL', () => {
  let t: TestContext
  beforeAll(async () => {
    t = await createTestContext({}, { baseUrl: 'https://forms.example.org' })
  })
  afterAll(() => t.close())

  test('every response carries Strict-Transport-Security: max-age=31536000', async () => {
    const responses = await everyKindOfResponse(t)
    expect(new Set(responses.map(([, res]) => res.status))).toEqual(
      new Set([200, 201, 303, 401, 403, 404, 405, 409, 413, 422, 500]),
    )
    for (const [what, res] of responses)
      expect({ what, hsts: res.headers.get('strict-transport-security') }).toEqual({ what, hsts: HSTS })
  })
})

describe('under an http base URL', () => {
  let t: TestContext
  beforeAll(async () => {
    t = await createTestContext({}, { baseUrl: 'http://forms.example.org' })
  })
  afterAll(() => t.close())

  test('no response carries Strict-Transport-Security', async () => {
    for (const [what, res] of await everyKindOfResponse(t))
      expect({ what, hsts: res.headers.get('strict-transport-security') }).toEqual({ what, hsts: null })
  })
})
