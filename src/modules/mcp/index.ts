import { Type } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { HttpError } from '../../lib/errors.ts'
import { API_BODY_LIMIT, readBody, type ResponseSet } from '../../lib/http.ts'
import { apiDoc } from '../../lib/openapi.ts'
import { principalOf } from '../auth/index.ts'
import type { Principal } from '../auth/service.ts'
import type { FormService } from '../forms/service.ts'
import type { ResponseService } from '../responses/service.ts'
import { MCP_PATH } from './paths.ts'
import type { ToolBackend } from './tools.ts'

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
 * own (no session), authenticated with the same bearer keys as the API. The
 * SDK is loaded on the first call, so a server nobody asks over MCP does not
 * carry it in memory.
 */
export function mcpRoutes(forms: FormService, responses: ResponseService) {
  const handle = async ({ request, set }: { request: Request; set: ResponseSet }) => {
    const principal = principalOf(set)
    // Bounded like every API body, with intake's own 413; the MCP transport then parses it.
    const body = await readBody(request, API_BODY_LIMIT)
    const { handleMcpRequest } = await import('./server.ts')
    const bounded = new Request(request.url, { method: 'POST', headers: request.headers, body })
    return handleMcpRequest(bounded, serviceBackend(principal, forms, responses))
  }
  const stateless = () => {
    throw new HttpError(405, 'MCP here is stateless: send each JSON-RPC message with POST (there is no stream to open and no session to end)', undefined, {
      Allow: 'POST',
    })
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
    .get(MCP_PATH, stateless)
    .delete(MCP_PATH, stateless)
}
