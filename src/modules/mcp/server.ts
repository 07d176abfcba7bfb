import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { VERSION } from '../../version.ts'
import { MCP_INSTRUCTIONS, callTool, toolList, type ToolBackend } from './tools.ts'

/** A new MCP server speaking for one caller. */
export function mcpServer(backend: ToolBackend): Server {
  const server = new Server({ name: 'intake', version: VERSION }, { capabilities: { tools: {} }, instructions: MCP_INSTRUCTIONS })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolList() }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) =>
    callTool(backend, request.params.name, request.params.arguments, extra.signal),
  )
  return server
}

/** Answers one HTTP request to /mcp: stateless, so a fresh server and transport each time. */
export async function handleMcpRequest(request: Request, backend: ToolBackend): Promise<Response> {
  const server = mcpServer(backend)
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  })
  await server.connect(transport)
  try {
    return await transport.handleRequest(request)
  } finally {
    await server.close()
  }
}
