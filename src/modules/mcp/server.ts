import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  type JSONRPCRequest,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { VERSION } from '../../version.ts'
import { callTool, MCP_INSTRUCTIONS, type ToolBackend, toolList } from './tools.ts'

/** An MCP server that presents itself as intake with tools; its handlers are set by the caller. */
export const intakeMcpServer = () =>
  new Server({ name: 'intake', version: VERSION }, { capabilities: { tools: {} }, instructions: MCP_INSTRUCTIONS })

/** A new MCP server speaking for one caller. */
function mcpServer(backend: ToolBackend): Server {
  const server = intakeMcpServer()
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolList() }))
  serveToolCalls(server, (params, signal) => callTool(backend, params.name, params.arguments, signal))
  return server
}

/** An error the SDK answers with as it is: this JSON-RPC code and a message meant for the caller. */
class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message)
  }
}

/**
 * Answers tools/call with `call`, after checking its params as MCP defines
 * them. Registered as the fallback handler, not with setRequestHandler: that
 * one parses the request before anything else runs and answers a malformed
 * call (`"arguments": []`) with -32603, internal error, and the validator's
 * raw issues. Here it is -32602, invalid params, with a short message. Any
 * other method no handler serves is -32601, as the SDK answers it.
 */
export function serveToolCalls(
  server: Server,
  call: (params: CallToolRequest['params'], signal: AbortSignal) => Promise<CallToolResult>,
): void {
  server.fallbackRequestHandler = async (request, extra) => {
    if (request.method !== 'tools/call') throw new JsonRpcError(ErrorCode.MethodNotFound, 'Method not found')
    return call(toolCallParams(request), extra.signal)
  }
}

function toolCallParams(request: JSONRPCRequest): CallToolRequest['params'] {
  const invalid = (message: string) => new JsonRpcError(ErrorCode.InvalidParams, `Invalid params: ${message}`)
  // The transport has checked that params, when present, is an object.
  const params: Record<string, unknown> = request.params ?? {}
  if (typeof params.name !== 'string')
    throw invalid('name must be the name of a tool, a string (tools/list lists them)')
  const args = params.arguments
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
    throw invalid("arguments must be an object of the tool's named arguments (its inputSchema)")
  }
  const checked = CallToolRequestSchema.safeParse(request)
  if (!checked.success) {
    const [issue] = checked.error.issues
    throw invalid(
      `${issue?.path.join('.') || 'params'}: ${issue?.message ?? 'not as MCP defines tools/call'}`.slice(0, 140),
    )
  }
  return checked.data.params
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
  const detail =
    typeof body.error?.message === 'string' ? body.error.message : `MCP request refused (HTTP ${response.status})`
  return new Response(JSON.stringify({ ...body, detail }), { status: response.status, headers: response.headers })
}
