import { Type } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { HttpError } from '../../lib/errors.ts'
import type { ResponseSet } from '../../lib/http.ts'
import { apiDoc } from '../../lib/openapi.ts'
import type { RateLimiter } from '../../lib/rate-limit.ts'
import type { BodyReader } from '../../lib/request-body.ts'
import { type ApiKeyAuth, takeRequests } from '../auth/index.ts'
import type { KeyPrincipal } from '../auth/service.ts'
import { type EventService, feedPageJson } from '../events/service.ts'
import type { FormService } from '../forms/service.ts'
import type { ResponseService } from '../responses/service.ts'
import { MCP_PATH } from './paths.ts'
import type { ToolBackend } from './tools.ts'

/** The tools' backend inside the server: the same services the REST API calls, for one caller. */
function serviceBackend(
  principal: KeyPrincipal,
  forms: FormService,
  responses: ResponseService,
  events: EventService,
): ToolBackend {
  return {
    async createForm(body, idempotencyKey) {
      const { form } = await forms.create(principal, body, idempotencyKey)
      return { form, answersSchema: await forms.answersSchema(principal, form.id) }
    },
    getForm: async (formId) => JSON.parse(await forms.get(principal, formId)),
    listForms: async (query) => forms.list(principal, query),
    cancelForm: (formId) => forms.update(principal, formId, { status: 'cancelled' }),
    deleteForm: (formId) => forms.delete(principal, formId),
    async getResponses(formId, wait, abort) {
      const found = await responses.list(principal, formId, wait === undefined ? {} : { wait }, abort)
      return { formStatus: (await forms.ownFormState(principal, formId)).status, responses: found }
    },
    waitForEvents: async (query, abort) => JSON.parse(feedPageJson(await events.list(principal, query, abort))),
  }
}

/** A JSON-RPC error (as the SDK's transport gives one), with intake's detail beside it. */
function jsonRpcError(set: ResponseSet, code: number, message: string) {
  set.status = 400
  return { jsonrpc: '2.0', error: { code, message }, id: null, detail: message }
}

/** No tool takes more than a handful of arguments. */
const MAX_PARAMS_KEYS = 64

/**
 * A message whose params (or a tool call's arguments) hold more keys than any
 * tool takes: the SDK validates each key before a tool sees them, which for
 * 60,000 keys held the event loop 60 to 130 ms.
 */
function tooManyKeys(message: unknown): boolean {
  const keys = (value: unknown) =>
    typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.keys(value).length : 0
  return (Array.isArray(message) ? message : [message]).some((one) => {
    const params = (one as { params?: { arguments?: unknown } } | null)?.params
    return keys(params) > MAX_PARAMS_KEYS || keys(params?.arguments) > MAX_PARAMS_KEYS
  })
}

const batchRefusal = (messages: number, perMinute: number) =>
  messages > perMinute
    ? `Rate limit exceeded: a batch of ${messages} MCP messages counts as ${messages} requests, more than this API key may make in a minute (${perMinute}); send smaller batches`
    : `Rate limit exceeded: a batch of ${messages} MCP messages counts as ${messages} requests, more than this API key has left; retry later or send fewer`

/** The SDK's side of /mcp, imported by the first MCP request and kept: a start and the API never load it. */
let mcpServer: Promise<typeof import('./server.ts')> | undefined

/**
 * MCP over Streamable HTTP at /mcp, stateless: every POST is answered on its
 * own (no session), authenticated with the same bearer keys as the API. The
 * SDK is loaded on the first call, so a server nobody asks over MCP does not
 * carry it in memory.
 */
export function mcpRoutes(
  forms: FormService,
  responses: ResponseService,
  events: EventService,
  bodies: BodyReader,
  limiter: RateLimiter,
  apiKey: ApiKeyAuth,
) {
  const handle = async ({
    request,
    set,
    principal,
  }: {
    request: Request
    set: ResponseSet
    principal: KeyPrincipal
  }) => {
    // Read and parsed like every API body (bounded, a slice of time at a time: JSON.parse of a hostile
    // megabyte held the event loop 90 to 280 ms); what is not JSON is JSON-RPC's parse error.
    let message: unknown
    try {
      message = await bodies.json(request)
    } catch (error) {
      if (!(error instanceof HttpError) || error.status !== 422) throw error
      return jsonRpcError(set, -32700, `Parse error: ${error.problems?.[0]?.message ?? error.detail}`)
    }
    if (tooManyKeys(message))
      return jsonRpcError(set, -32602, `Invalid params: no tool takes more than ${MAX_PARAMS_KEYS} arguments`)
    // JSON-RPC 2.0: an empty batch is an invalid request (the transport would take it for notifications only: 202).
    if (Array.isArray(message) && message.length === 0)
      return jsonRpcError(set, -32600, 'Invalid Request: an empty batch holds no message')
    // The POST counted as one request; every further message of a batch counts as one more, before any of them runs.
    const messages = Array.isArray(message) ? message.length : 1
    if (messages > 1) takeRequests(limiter, principal, messages - 1, batchRefusal(messages, limiter.perMinute))
    const { handleMcpRequest } = await (mcpServer ??= import('./server.ts'))
    // The transport reads the message handed to it, not this request's body (read already).
    const forTransport = new Request(request.url, { method: 'POST', headers: request.headers })
    return handleMcpRequest(forTransport, serviceBackend(principal, forms, responses, events), message)
  }
  const stateless = () => {
    throw new HttpError(
      405,
      'MCP here is stateless: send each JSON-RPC message with POST (there is no stream to open and no session to end)',
      undefined,
      {
        Allow: 'POST',
      },
    )
  }
  return new Elysia({ name: 'mcp' })
    .use(apiKey)
    .post(MCP_PATH, handle, {
      apiKey: true,
      detail: apiDoc({
        tag: 'MCP',
        summary: 'Model Context Protocol (Streamable HTTP)',
        description:
          'The MCP endpoint: JSON-RPC over HTTP POST, stateless (no session). Tools: create_form, get_form, list_forms, cancel_form, delete_form, get_responses, wait_for_events. Same bearer key as the API.',
        body: Type.Object({}, { additionalProperties: true, title: 'JSON-RPC message' }),
        responses: { 200: Type.Object({}, { additionalProperties: true, title: 'JSON-RPC response' }) },
      }),
    })
    .get(MCP_PATH, stateless, { apiKey: true })
    .delete(MCP_PATH, stateless, { apiKey: true })
}
