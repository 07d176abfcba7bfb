/**
 * /mcp over Streamable HTTP, end to end on the real executable: the same
 * bearer keys as the REST API (403 without one, 401 for a bad one, nothing
 * listed or created), and no session: nothing answers with an mcp-session-id,
 * and a tools/call needs no initialize before it.
 */
import { describe, expect, test } from 'bun:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js'
import { ok, STEP_TIMEOUT, TOOL_NAMES, useMcpServer } from './mcp-server.ts'

const mcp = useMcpServer()
const { connectHttp, restFormIds } = mcp

describe('/mcp over HTTP: the same bearer keys, and no session', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'raw-e2e', version: '1.0.0' },
    },
  }

  const postMcp = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${mcp.server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    })

  test('no Authorization: 403 {"detail":"Not authenticated"}, no session', async () => {
    const res = await postMcp(initialize)
    expect(res.status).toBe(403)
    expect(res.headers.get('mcp-session-id')).toBeNull()
    expect(await res.json()).toEqual({ detail: 'Not authenticated' })
  })

  test('a bad key: 401 with WWW-Authenticate: Bearer, no session', async () => {
    for (const authorization of [`Bearer svc_live_${'0'.repeat(48)}`, 'Bearer nonsense', `Bearer ${mcp.key}x`]) {
      const res = await postMcp(initialize, { authorization })
      expect({ authorization, status: res.status }).toEqual({ authorization, status: 401 })
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer\b/)
      expect(res.headers.get('mcp-session-id')).toBeNull()
      const body = (await res.json()) as any
      expect(typeof body.detail).toBe('string')
      expect(JSON.stringify(body)).not.toContain('result')
    }
  })

  test('a bad key: a tool call is refused too (nothing is listed or created)', async () => {
    const before = await restFormIds()
    const res = await postMcp(
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: {
          name: 'create_form',
          arguments: { title: 'Sneaky', fields: [{ key: 'x', type: 'text', label: 'X' }] },
        },
      },
      { authorization: `Bearer svc_live_${'1'.repeat(48)}` },
    )
    expect(res.status).toBe(401)
    expect(await restFormIds()).toEqual(before)
    const anonymous = await postMcp({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} })
    expect(anonymous.status).toBe(403)
  })

  test(
    'the SDK client with a bad key fails to connect (an error, not a hang)',
    async () => {
      const client = new Client({ name: 'intake-e2e-bad', version: '1.0.0' })
      const transport = new StreamableHTTPClientTransport(new URL('/mcp', mcp.server.url), {
        requestInit: { headers: { Authorization: `Bearer svc_live_${'2'.repeat(48)}` } },
        fetch: mcp.recordingFetch,
      })
      let failed = false
      try {
        await client.connect(transport)
      } catch {
        failed = true
      } finally {
        await client.close().catch(() => undefined)
      }
      expect(failed).toBe(true)
    },
    STEP_TIMEOUT,
  )

  test('a valid key: initialize answers 200 with the server info and no mcp-session-id', async () => {
    const res = await postMcp(initialize, { authorization: `Bearer ${mcp.key}` })
    expect(res.status).toBe(200)
    expect(res.headers.get('mcp-session-id')).toBeNull()
    const body = (await res.json()) as any
    expect(body.id).toBe(1)
    expect(body.result.serverInfo.name).toBe('intake')
    expect(body.result.capabilities.tools).toBeDefined()
    expect(typeof body.result.instructions).toBe('string')
  })

  test('stateless: a tools/call without any initialize before it is answered, with no session', async () => {
    const res = await postMcp(
      { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'list_forms', arguments: { limit: 1 } } },
      { authorization: `Bearer ${mcp.key}`, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
    )
    expect(res.status).toBe(200)
    expect(res.headers.get('mcp-session-id')).toBeNull()
    const body = (await res.json()) as any
    expect(body.id).toBe(9)
    expect(body.result.isError).toBeUndefined()
    expect(body.result.structuredContent.forms).toHaveLength(1)
  })

  test(
    'a malformed JSON-RPC body is a protocol error, and the server keeps serving',
    async () => {
      const res = await fetch(`${mcp.server.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${mcp.key}`,
        },
        body: '{"jsonrpc":',
      })
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.status).toBeLessThan(500)
      expect(res.headers.get('mcp-session-id')).toBeNull()
      const client = await connectHttp(mcp.key)
      expect((await client.listTools()).tools).toHaveLength(TOOL_NAMES.length)
    },
    STEP_TIMEOUT,
  )

  test(
    'no response the SDK client got in this file carried an mcp-session-id',
    async () => {
      // Calls of its own, so that it holds whichever tests ran before it.
      const client = await connectHttp(mcp.key)
      for (let i = 0; i < 10; i++) await ok(client, 'list_forms', { limit: 1 })
      expect(mcp.httpResponsesSeen).toBeGreaterThan(10)
      expect(mcp.sessionIdsIssued).toEqual([])
    },
    STEP_TIMEOUT,
  )
})
