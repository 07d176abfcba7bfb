import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { Type } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { API_BODY_LIMIT } from '../../lib/http.ts'
import { apiDoc } from '../../lib/openapi.ts'
import { VERSION } from '../../version.ts'
import { principalOf } from '../auth/index.ts'
import type { Principal } from '../auth/service.ts'
import type { FormService } from '../forms/service.ts'
import type { ResponseService } from '../responses/service.ts'
import { MCP_PATH } from './paths.ts'
import { callTool, toolList, type ToolBackend } from './tools.ts'


/** What an agent reads first: how the tools fit together. */
export const MCP_INSTRUCTIONS =
  'intake puts a typed form in front of a human and gives you the single answer. Call create_form, send the returned url to the person, ' +
  'then call get_responses with wait (up to 60 s per call, repeat while form_status is "active") until it returns the answer. ' +
  'The answer’s data follows answers_schema from create_form.'

/** A new MCP server speaking for one caller (the transport is stateless: one per request). */
export function mcpServer(backend: ToolBackend): Server {
  const server = new Server({ name: 'intake', version: VERSION }, { capabilities: { tools: {} }, instructions: MCP_INSTRUCTIONS })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolList() }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) =>
    callTool(backend, request.params.name, request.params.arguments, extra.signal),
  )
  return server
}

/** The tools' backend inside the server: the same services the REST API calls, for one caller. */
function serviceBackend(principal: Principal, forms: FormService, responses: ResponseService): ToolBackend {
  return {
    async createForm(body, idempotencyKey) {
      const { form } = await forms.create(principal, body, idempotencyKey)
      return { form, answersSchema: forms.answersSchema(principal, form.id) }
    },
    getForm: async (formId) => JSON.parse(forms.get(principal, formId)),
    listForms: async (query) => forms.list(principal, query),
    cancelForm: (formId) => forms.update(principal, formId, { status: 'cancelled' }),
    deleteForm: (formId) => forms.delete(principal, formId),
    async getResponses(formId, wait, abort) {
      const found = await responses.list(principal, formId, wait === undefined ? {} : { wait }, abort)
      return { formStatus: forms.ownForm(principal, formId).status, responses: found }
    },
  }
}

/**
 * MCP over Streamable HTTP at /mcp, stateless: every POST is answered on its
 * own (no session), authenticated with the same bearer keys as the API.
 */
export function mcpRoutes(forms: FormService, responses: ResponseService) {
  const handle = async ({ request, set }: { request: Request; set: Parameters<typeof principalOf>[0] }) => {
    const server = mcpServer(serviceBackend(principalOf(set), forms, responses))
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: API_BODY_LIMIT,
    })
    await server.connect(transport)
    try {
      return await transport.handleRequest(request)
    } finally {
      await server.close()
    }
  }
  return new Elysia({ name: 'mcp' })
    .post(MCP_PATH, handle, {
      detail: apiDoc({
        tag: 'MCP',
        summary: 'Model Context Protocol (Streamable HTTP)',
        description:
          'The MCP endpoint: JSON-RPC over HTTP POST, stateless (no session). Tools: create_form, get_form, list_forms, cancel_form, delete_form, get_responses. Same bearer key as the API.',
        body: Type.Object({}, { additionalProperties: true, title: 'JSON-RPC message' }),
        responses: { 200: Type.Object({}, { additionalProperties: true, title: 'JSON-RPC response' }) },
      }),
    })
    // No server-sent stream and no session to end: the transport answers 405.
    .get(MCP_PATH, handle)
    .delete(MCP_PATH, handle)
}
