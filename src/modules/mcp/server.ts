import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { VERSION } from '../../version.ts'
import { MCP_INSTRUCTIONS, callTool, toolList, type ToolBackend } from './tools.ts'

/** An MCP server that presents itself as intake with tools; its handlers are set by the caller. */
export const intakeMcpServer = () =>
  new Server({ name: 'intake', version: VERSION }, { capabilities: { tools: {} }, instructions: MCP_INSTRUCTIONS })

/** A new MCP server speaking for one caller. */
export function mcpServer(backend: ToolBackend): Server {
  const server = intakeMcpServer()
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolList() }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) =>
    callTool(backend, request.params.name, request.params.arguments, extra.signal),
  )
  return server
}

/**
 * Answers one HTTP request to /mcp: stateless, so a fresh server and transport
 * each time. `parsedBody` is its body, already read and parsed.
 */
export async function handleMcpRequest(request: Request, backend: ToolBackend, parsedBody: unknown): Promise<Response> {
  const server = mcpServer(backend)
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  })
  await server.connect(transport)
  try {
    return withDetail(await transport.handleRequest(request, { parsedBody }))
  } finally {
    await server.close()
  }
}

/**
 * The transport answers protocol mistakes (no JSON, a wrong Accept header)
 * with a JSON-RPC error; every intake error also carries `detail`, so one is
 * added beside it (JSON-RPC clients ignore members they do not know).
 */
async function withDetail(response: Response): Promise<Response> {
  if (response.status < 400 || !response.headers.get('content-type')?.includes('application/json')) return response
  const text = await response.text()
  let body: { detail?: unknown; error?: { message?: unknown } }
  try {
    body = JSON.parse(text)
  } catch {
    body = {}
  }
  const detail = typeof body.error?.message === 'string' ? body.error.message : `MCP request refused (HTTP ${response.status})`
  return new Response(JSON.stringify({ ...body, detail }), { status: response.status, headers: response.headers })
}
