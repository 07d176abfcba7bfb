/**
 * JSON-RPC mistakes on POST /mcp answered as JSON-RPC 2.0 and the MCP
 * transport say (issue 25, finding 10): a tools/call whose params or
 * `arguments` are not what MCP defines is -32602 (invalid params) with a
 * short message, never -32603 (internal error) carrying the validator's raw
 * issues; an empty batch `[]` is -32600 (invalid request) with HTTP 400, not
 * a 202 as if it held only notifications.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createTestContext, send, type TestContext } from './utils.ts'

const MCP_HEADERS = { accept: 'application/json, text/event-stream' }

let t: TestContext
beforeAll(async () => {
  t = await createTestContext()
})
afterAll(() => t.close())

const postMcp = (body: unknown) => send(t.app, 'POST', '/mcp', { key: t.key, body, headers: MCP_HEADERS })
const call = (id: number, params: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params })

/** A JSON-RPC error answering request `id`: -32602 with a short message of one line, naming no validator's internals. */
function expectInvalidParams(answer: any, id: number, mentions: string) {
  expect(answer).toEqual({ jsonrpc: '2.0', id, error: { code: -32602, message: expect.any(String) } })
  const message: string = answer.error.message
  expect(message).toStartWith('Invalid params: ')
  expect(message).toContain(mentions)
  expect(message.length).toBeLessThan(160)
  expect(message).not.toMatch(/[\n[{]|invalid_type|received|expected record/)
}

describe('tools/call with arguments that are not an object', () => {
  test.each<[string, unknown]>([
    ['an array', []],
    ['an array of values', ['title', 'T']],
    ['a string', 'title=T'],
    ['a number', 5],
    ['true', true],
    ['null', null],
  ])('%s: -32602 invalid params, a short message; nothing is created', async (_what, args) => {
    const res = await postMcp(call(7, { name: 'create_form', arguments: args }))
    expect(res.status).toBe(200)
    expectInvalidParams(res.body, 7, 'arguments must be an object')
    expect((await t.api.get('/forms')).body).toEqual([])
  })

  test('a tool name missing or not a string: -32602 too', async () => {
    for (const params of [{}, { name: 5, arguments: {} }, { name: null }]) {
      expectInvalidParams((await postMcp(call(9, params))).body, 9, 'name must be')
    }
  })

  test('in a batch, the malformed call is -32602 and the others are answered as usual', async () => {
    const res = await postMcp([
      call(1, { name: 'list_forms', arguments: [] }),
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      call(3, { name: 'list_forms', arguments: { limit: 1 } }),
    ])
    expect(res.status).toBe(200)
    const byId = new Map((res.body as any[]).map((answer) => [answer.id, answer]))
    expectInvalidParams(byId.get(1), 1, 'arguments must be an object')
    expect(byId.get(2).result.tools.length).toBeGreaterThan(0)
    expect(byId.get(3).result.structuredContent).toEqual({ forms: [], next_cursor: null })
  })

  test('arguments left out are an empty object, as MCP says; an unknown method is still -32601', async () => {
    const res = await postMcp(call(4, { name: 'list_forms' }))
    expect(res.body.result.structuredContent).toEqual({ forms: [], next_cursor: null })
    const unknown = await postMcp({ jsonrpc: '2.0', id: 5, method: 'resources/list' })
    expect(unknown.body).toEqual({ jsonrpc: '2.0', id: 5, error: { code: -32601, message: 'Method not found' } })
  })
})

describe('an empty batch', () => {
  test('[] is -32600 invalid request with HTTP 400 (JSON-RPC 2.0), not 202', async () => {
    const res = await postMcp([])
    expect(res.status).toBe(400)
    const message = 'Invalid Request: an empty batch holds no message'
    expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message }, detail: message })
  })

  test('a batch of notifications only is still 202 with no body', async () => {
    const res = await postMcp([{ jsonrpc: '2.0', method: 'notifications/initialized' }])
    expect(res.status).toBe(202)
    expect(res.text).toBe('')
  })
})
