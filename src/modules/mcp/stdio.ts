import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { type CallToolResult, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { VERSION } from '../../version.ts'
import { MCP_PATH } from './paths.ts'
import { intakeMcpServer, serveToolCalls } from './server.ts'

/** Longer than the longest tool call (get_responses and wait_for_events wait up to 50 s). */
const CALL_TIMEOUT_MS = 90_000

/**
 * `intake mcp`: the same tools over stdio, for desktop MCP clients that start
 * a command. Every call is forwarded to a running intake's /mcp with the key,
 * so the tools, their rules and their answers are exactly the server's.
 * Stdout carries the protocol; anything for a person goes to stderr.
 */
export async function serveMcpOverStdio(serverUrl: string, key: string): Promise<void> {
  const remote = new Client({ name: 'intake-mcp-stdio', version: VERSION })
  const endpoint = new URL(MCP_PATH, serverUrl.endsWith('/') ? serverUrl : `${serverUrl}/`)
  await remote.connect(
    new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  )

  // Presents itself exactly as /mcp does.
  const local = intakeMcpServer()
  local.setRequestHandler(ListToolsRequestSchema, () => remote.listTools())
  // A malformed call is refused here as /mcp refuses it (-32602), never forwarded.
  serveToolCalls(
    local,
    async (params, signal) =>
      (await remote.callTool(params, undefined, { signal, timeout: CALL_TIMEOUT_MS })) as CallToolResult,
  )
  await local.connect(new StdioServerTransport())
  // The client closing our stdin is the end of the session: leave then, whatever the client does next.
  process.stdin.once('end', async () => {
    await Promise.allSettled([local.close(), remote.close()])
    process.exit(0)
  })
}
