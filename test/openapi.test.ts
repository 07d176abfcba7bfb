import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fieldTypes } from '../src/fields/index.ts'
import { ERROR_CODES } from '../src/lib/errors.ts'
import { STYLESHEET } from '../views/assets.ts'
import { createTestContext, send, type TestContext } from './utils.ts'

let t: TestContext
let doc: any
beforeAll(async () => {
  t = await createTestContext()
  const res = await send(t.app, 'GET', '/api/v1/openapi.json')
  expect(res.status).toBe(200)
  doc = res.body
})
afterAll(() => t.close())

// GET and DELETE /mcp only answer 405: MCP here is stateless, with no stream and no session.
// The ALL routes answer what no route takes under the keyed paths (app.tsx keyedNotFound): a 404, after the key.
const UNDOCUMENTED = new Set([
  'GET /',
  `GET ${STYLESHEET.path}`,
  'GET /api/v1/openapi.json',
  'GET /mcp',
  'DELETE /mcp',
  'ALL /api/v1/*',
  'ALL /mcp',
  'ALL /mcp/*',
  'ALL /api/v1/openapi.json',
])
const routeKey = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/:(\w+)/g, '{$1}')}`

describe('GET /api/v1/openapi.json', () => {
  test('is an OpenAPI 3.1 document, served without a key', () => {
    expect(doc.openapi).toMatch(/^3\.1\./)
    expect(doc.info.title).toBe('intake API')
    expect(doc.info.version).toMatch(/^\d+\.\d+\.\d+/)
  })

  test('documents exactly the routes the app serves', () => {
    const served = t.app.routes
      .map((route) => routeKey(route.method, route.path))
      .filter((key) => !UNDOCUMENTED.has(key.replace(/\{(\w+)\}/g, ':$1')))
      // The console's pages are for people in a browser, not part of the API.
      .filter((key) => !/^\w+ \/console(?:\/|$)/.test(key))
    const documented = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.keys(operations as object).map((method) => routeKey(method, path)),
    )
    expect(documented.sort()).toEqual([...new Set(served)].sort())
    expect(documented).toEqual(
      expect.arrayContaining([
        'POST /api/v1/forms',
        'GET /api/v1/forms',
        'GET /api/v1/forms/{id}',
        'PATCH /api/v1/forms/{id}',
        'DELETE /api/v1/forms/{id}',
        'GET /api/v1/forms/{id}/responses',
        'GET /api/v1/forms/{id}/responses/{responseId}',
        'POST /f/{id}',
        'GET /healthz',
        'GET /api/v1/forms/{id}/schema',
        'POST /mcp',
      ]),
    )
  })

  test('declares bearer auth, and each authenticated operation documents 401, 403 and 429 with the error shape', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(doc.components.schemas.Error.properties.detail.type).toBe('string')
    for (const [path, operations] of Object.entries<any>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        const authenticated = path.startsWith('/api/v1/') || path === '/mcp'
        expect(operation.security, `${method} ${path}`).toEqual(authenticated ? [{ bearerAuth: [] }] : [])
        expect(operation.summary, `${method} ${path}`).toBeTruthy()
        for (const status of authenticated ? ['401', '403', '429', '500'] : ['500']) {
          expect(
            operation.responses[status]?.content['application/json'].schema,
            `${method} ${path} ${status}`,
          ).toEqual({
            $ref: '#/components/schemas/Error',
          })
        }
        for (const match of path.matchAll(/\{(\w+)\}/g)) {
          expect(operation.parameters.some((p: any) => p.in === 'path' && p.name === match[1])).toBe(true)
        }
      }
    }
  })

  test('the create body is the schema the service validates with: all 8 field types, closed objects', () => {
    const create = doc.paths['/api/v1/forms'].post
    const body = create.requestBody.content['application/json'].schema
    expect(body.additionalProperties).toBe(false)
    expect(body.required).toEqual(expect.arrayContaining(['title', 'fields']))
    expect(body.properties.title).toMatchObject({ type: 'string', minLength: 1, maxLength: 255 })
    const variants = body.properties.fields.items.anyOf
    expect(body.properties.fields.items.discriminator).toEqual({ propertyName: 'type' })
    expect(variants.map((v: any) => v.properties.type.const).sort()).toEqual(Object.keys(fieldTypes).sort())
    for (const variant of variants) {
      expect(variant.additionalProperties).toBe(false)
      expect(variant.properties.config.additionalProperties).toBe(false)
    }
    expect(create.responses['201'].content['application/json'].schema.properties.context).toBeDefined()
    expect(create.responses['422'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' })
    expect(JSON.stringify(doc)).not.toContain('errorMessage')
  })

  test('documents the choice and autofill keys, the codes of a 422, and an answer that is an array', () => {
    const variants =
      doc.paths['/api/v1/forms'].post.requestBody.content['application/json'].schema.properties.fields.items.anyOf
    const config = (type: string) =>
      variants.find((v: any) => v.properties.type.const === type).properties.config.properties
    expect(config('select').multiple).toMatchObject({ type: 'boolean', default: false })
    expect(config('select').min_selected).toMatchObject({ type: 'integer', minimum: 1 })
    expect(config('select').max_selected).toMatchObject({ type: 'integer', minimum: 1 })
    expect(config('select').display.anyOf.map((v: any) => v.const)).toEqual(['auto', 'radio', 'dropdown'])
    expect(config('select').default.anyOf.map((v: any) => v.type)).toEqual(['string', 'array'])
    for (const type of ['text', 'textarea', 'email', 'date'])
      expect(config(type).autocomplete).toMatchObject({ type: 'string' })
    const problem = doc.components.schemas.Error.properties.errors.items
    expect(problem.required).toEqual(['path', 'message', 'code'])
    expect(problem.properties.code.anyOf.map((v: any) => v.const)).toEqual([...ERROR_CODES])
    const data = doc.paths['/api/v1/forms/{id}/responses'].get.responses['200'].content['application/json'].schema
    expect(JSON.stringify(data)).toContain('"type":"array","items":{"type":"string"}')
  })

  test('list forms documents its query parameters and Link header', () => {
    const list = doc.paths['/api/v1/forms'].get
    const names = list.parameters.filter((p: any) => p.in === 'query').map((p: any) => p.name)
    expect(names.sort()).toEqual(['cursor', 'limit', 'status'])
    const limit = list.parameters.find((p: any) => p.name === 'limit')
    expect(limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 })
    expect(list.responses['200'].headers.Link).toBeDefined()
  })
})

describe('MCP tools/list', () => {
  test("create_form's input schema carries the choice and autofill keys too", async () => {
    const res = await send(t.app, 'POST', '/mcp', {
      key: t.key,
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    })
    expect(res.status).toBe(200)
    const createForm = res.body.result.tools.find((tool: any) => tool.name === 'create_form')
    const variants = createForm.inputSchema.properties.fields.items.anyOf
    const config = (type: string) =>
      variants.find((v: any) => v.properties.type.const === type).properties.config.properties
    expect(Object.keys(config('select'))).toEqual(
      expect.arrayContaining(['multiple', 'min_selected', 'max_selected', 'display']),
    )
    for (const type of ['text', 'textarea', 'email', 'date']) expect(config(type)).toHaveProperty('autocomplete')
  })
})
