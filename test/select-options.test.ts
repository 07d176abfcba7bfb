/**
 * CONTRACT 13a: a select has at most 1,000 options; more is 422 `too_large`
 * at /fields/N/config/options, told before any option is looked at (a body
 * of 200,000 options held the event loop for a quarter of a second while
 * each was checked against a bound the list had already passed). The same
 * bound is in the OpenAPI document and the MCP create_form schema.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createTestContext, send, type TestContext } from './utils.ts'

const MCP_HEADERS = { accept: 'application/json, text/event-stream' }

let t: TestContext
beforeAll(async () => {
  t = await createTestContext()
})
afterAll(() => t.close())

const options = (n: number) => Array.from({ length: n }, (_, i) => `option-${i}`)
const selectForm = (config: Record<string, unknown>, index = 0) => ({
  title: 'Choices',
  fields: [
    ...Array.from({ length: index }, (_, i) => ({ key: `t${i}`, type: 'text', label: 'Text' })),
    { key: 'choice', type: 'select', label: 'Choice', config },
  ],
})

async function mcpCreate(args: unknown) {
  const res = await send(t.app, 'POST', '/mcp', {
    key: t.key,
    headers: MCP_HEADERS,
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'create_form', arguments: args } },
  })
  expect(res.status).toBe(200)
  return res.body.result as {
    isError?: boolean
    content: Array<{ text: string }>
    structuredContent?: Record<string, unknown>
  }
}

describe('a select has at most 1,000 options', () => {
  test('1,000 options: created, each kept, and the answer may be the last one', async () => {
    const res = await t.api.post('/forms', selectForm({ options: options(1000) }))
    expect(res.status).toBe(201)
    const form = await t.api.get(`/forms/${res.body.id}`)
    expect(form.body.fields[0].config.options).toEqual(options(1000))
    const answered = await send(t.app, 'POST', `/f/${res.body.id}`, { body: { choice: 'option-999' } })
    expect(answered.status).toBe(201)
  })

  test('1,000 options with multiple and a default of all of them: created', async () => {
    const res = await t.api.post(
      '/forms',
      selectForm({ options: options(1000), multiple: true, default: options(1000) }),
    )
    expect(res.status).toBe(201)
  })

  test('1,001 options: 422 too_large at /fields/N/config/options, and nothing else', async () => {
    const res = await t.api.post('/forms', selectForm({ options: options(1001) }, 2))
    expect(res.status).toBe(422)
    expect(res.body.errors).toEqual([
      { path: '/fields/2/config/options', message: 'Must have at most 1000 options', code: 'too_large' },
    ])
  })

  test('200,000 options, each of them invalid too: the one problem, told before any option is checked', async () => {
    // Were the options looked at, each number would be a problem of its own (the list stops at 100).
    const res = await t.api.post('/forms', selectForm({ options: Array(200_000).fill(1) }))
    expect(res.status).toBe(422)
    expect(res.body.errors).toEqual([
      { path: '/fields/0/config/options', message: 'Must have at most 1000 options', code: 'too_large' },
    ])
  })

  test('a multiple default of 200,000 values: refused at /fields/N/config/default without looking at each', async () => {
    const res = await t.api.post(
      '/forms',
      selectForm({ options: ['a'], multiple: true, default: Array(200_000).fill(1) }),
    )
    expect(res.status).toBe(422)
    expect(res.body.errors).toEqual([
      { path: '/fields/0/config/default', message: 'Must have at most 1000 items', code: 'too_long' },
    ])
  })

  test('MCP create_form: 1,000 options create the form; 200,000 are a tool error naming the bound', async () => {
    const created = await mcpCreate(selectForm({ options: options(1000) }))
    expect(created.isError).toBeUndefined()
    expect(created.structuredContent?.status).toBe('active')
    const refused = await mcpCreate(selectForm({ options: Array(200_000).fill('a') }))
    expect(refused.isError).toBe(true)
    expect(refused.content[0]!.text).toBe('Validation failed: /fields/0/config/options: Must have at most 1000 options')
  })

  test('the OpenAPI document and the MCP create_form schema both say 1..1000 options', async () => {
    const openapi = await send(t.app, 'GET', '/api/v1/openapi.json')
    const tools = await send(t.app, 'POST', '/mcp', {
      key: t.key,
      headers: MCP_HEADERS,
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    })
    const createForm = tools.body.result.tools.find((tool: { name: string }) => tool.name === 'create_form')
    for (const [where, document] of [
      ['OpenAPI', openapi.body],
      ['MCP create_form', createForm.inputSchema],
    ] as const) {
      const bounds = optionsBounds(document)
      expect({ where, bounds }).toEqual({ where, bounds: [{ minItems: 1, maxItems: 1000 }] })
    }
  })
})

/** The minItems/maxItems of every select `options` array schema in a JSON document (each distinct pair once). */
function optionsBounds(document: unknown): Array<{ minItems: unknown; maxItems: unknown }> {
  const found = new Set<string>()
  const visit = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(visit)
    if (typeof node !== 'object' || node === null) return
    const options = (node as { properties?: { options?: { type?: string; minItems?: unknown; maxItems?: unknown } } })
      .properties?.options
    if (options?.type === 'array') found.add(JSON.stringify({ minItems: options.minItems, maxItems: options.maxItems }))
    Object.values(node).forEach(visit)
  }
  visit(document)
  return [...found].map((text) => JSON.parse(text))
}
