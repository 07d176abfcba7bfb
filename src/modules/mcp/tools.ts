import { type TObject, type TSchema, Type } from '@sinclair/typebox'
import { HttpError, invalidAt } from '../../lib/errors.ts'
import { illFormedTextAt } from '../../lib/json.ts'
import { publish } from '../../lib/openapi.ts'
import { JsonObject, ULID_PATTERN, Ulid } from '../../lib/schemas.ts'
import { validate } from '../../lib/validation.ts'
import { EventPage, ListEventsQuery } from '../events/model.ts'
import { CreateFormBody, FORM_STATUSES, Form, FormDetail, FormSummary, ListFormsQuery } from '../forms/model.ts'
import { IDEMPOTENCY_KEY } from '../forms/service.ts'
import { ResponseObject } from '../responses/model.ts'

/**
 * The MCP tools: what an agent calls to ask a human something. Defined once,
 * from the API's own schemas; served at /mcp and, through `intake mcp`, over
 * stdio. Each calls the same services as the REST API, so rules, limits and
 * error details are the API's.
 */

/**
 * The longest a tool waits: under the 60 s request timeout of common MCP
 * clients (CONTRACT 12), so the answer arrives before the client gives up.
 */
const MCP_WAIT_MAX_S = 50

/** What an agent reads first: how the tools fit together. */
export const MCP_INSTRUCTIONS =
  'intake puts a typed form in front of a human and gives you the single answer. Call create_form, send the returned url to the person, ' +
  `then call get_responses with wait (up to ${MCP_WAIT_MAX_S} s per call, repeat while form_status is "active") until it returns the answer. ` +
  "With several forms open, call wait_for_events instead: one feed of every form's ending (completed, expired, cancelled, deleted), followed with `after` = the last `next`. " +
  "The answer's data follows answers_schema from create_form."

/** What the tools need from intake, for one authenticated caller. */
export interface ToolBackend {
  createForm(body: unknown, idempotencyKey: string | undefined): Promise<{ form: unknown; answersSchema: unknown }>
  getForm(formId: string): Promise<unknown>
  listForms(query: Record<string, unknown>): Promise<{ forms: unknown[]; nextCursor: string | undefined }>
  cancelForm(formId: string): Promise<unknown>
  deleteForm(formId: string): Promise<void>
  getResponses(
    formId: string,
    wait: number | undefined,
    abort: AbortSignal | undefined,
  ): Promise<{ formStatus: string; responses: unknown[] }>
  /** The account's event feed, as GET /api/v1/events answers (query as its parameters). */
  waitForEvents(query: Record<string, unknown>, abort: AbortSignal | undefined): Promise<Record<string, unknown>>
}

interface Tool {
  name: string
  title: string
  description: string
  input: TObject
  output: TObject
  call(
    backend: ToolBackend,
    args: Record<string, unknown>,
    abort: AbortSignal | undefined,
  ): Promise<Record<string, unknown>>
}

const FormIdInput = Type.Object(
  {
    form_id: Type.String({ pattern: ULID_PATTERN, description: 'The form id that create_form or list_forms returned' }),
  },
  { additionalProperties: false },
)

const formId = (args: Record<string, unknown>) => validate(FormIdInput, args).form_id

const CreateFormInput = Type.Object(
  {
    ...CreateFormBody.properties,
    idempotency_key: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description:
          'Any unique string for this form (a UUID). If a call times out and you retry it with the same key and the same arguments within 24 hours, you get the form the first call created instead of a second form.',
      }),
    ),
  },
  { additionalProperties: false },
)

const WaitForEventsInput = Type.Object(
  {
    after: ListEventsQuery.properties.after,
    wait: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MCP_WAIT_MAX_S,
        description: 'Seconds to wait while there is no event after `after`',
      }),
    ),
    limit: ListEventsQuery.properties.limit,
  },
  { additionalProperties: false },
)

const TOOLS: Tool[] = [
  {
    name: 'create_form',
    title: 'Ask a human: create a form',
    description: [
      'Creates a web form for a human to fill in, and returns its `url`. Send that link to the person (in chat, email, a ticket); they open it in any browser, see the title, description and fields, and submit one answer. Nothing is sent to them by intake itself.',
      'Fields are typed: text, textarea, email, number, select (options; radio buttons up to 7, a drop-down beyond, or `display`; `multiple` for several choices, answered as an array), checkbox, date (YYYY-MM-DD), file (upload). Each has a `key` (the key of its value in the answer), a `label` the human reads, optional `description`, `required`, and type-specific `config` (placeholder, default, min/max, options, pattern, autocomplete, accept, max_size...).',
      `Then wait for the answer with get_responses (wait up to ${MCP_WAIT_MAX_S} s per call, repeat as needed), or for every form at once with wait_for_events, or give a \`callback_url\` to get a signed webhook instead (\`callback_events\` picks which endings it tells of: form.completed, form.expired, form.cancelled). Keep your own state in \`context\` (any JSON object, at most 64 KB): it comes back with the answer, and with the expiry event.`,
      'The result is the form (id, url, status, expires_at...) and `answers_schema`: the JSON Schema of the `data` the answer will hold. Forms expire after `expires_in` (default "48h", e.g. "90m", "7d", null for never).',
      'Limits: title 1..255 chars, 1..100 fields, field keys start with a letter (letters, digits, _ and -). Invalid input is refused with a message naming each problem by path.',
    ].join('\n\n'),
    input: CreateFormInput,
    output: Type.Object({ ...Form.properties, answers_schema: JsonObject }),
    async call(backend, args) {
      const { idempotency_key, ...body } = args
      if (
        idempotency_key !== undefined &&
        (typeof idempotency_key !== 'string' || !IDEMPOTENCY_KEY.test(idempotency_key))
      ) {
        throw invalidAt('/idempotency_key', 'Must be 1 to 255 visible ASCII characters', 'invalid_format')
      }
      const { form, answersSchema } = await backend.createForm(body, idempotency_key)
      return { ...(form as object), answers_schema: answersSchema }
    },
  },
  {
    name: 'get_form',
    title: 'Look at a form',
    description:
      'Returns one of your forms: its status (active: waiting for the answer; completed: answered; cancelled; expired), url, expiry, context and its fields as created. To read the answer itself, use get_responses.',
    input: FormIdInput,
    output: FormDetail,
    call: (backend, args) => backend.getForm(formId(args)) as Promise<Record<string, unknown>>,
  },
  {
    name: 'list_forms',
    title: 'List your forms',
    description:
      'Lists your forms, newest first, 20 at a time (limit 1..100). Filter by status (active, completed, cancelled, expired). When `next_cursor` is set, call again with cursor = next_cursor for older forms.',
    input: Type.Object(
      {
        status: Type.Optional(Type.Union(FORM_STATUSES.map((s) => Type.Literal(s)))),
        cursor: ListFormsQuery.properties.cursor,
        limit: ListFormsQuery.properties.limit,
      },
      { additionalProperties: false },
    ),
    output: Type.Object({
      forms: Type.Array(FormSummary),
      next_cursor: Type.Union([Type.String(), Type.Null()], {
        description: 'Pass as cursor for the next page; null on the last page',
      }),
    }),
    async call(backend, args) {
      const page = await backend.listForms(args)
      return { forms: page.forms, next_cursor: page.nextCursor ?? null }
    },
  },
  {
    name: 'cancel_form',
    title: 'Cancel a form',
    description:
      'Cancels an active form: the human can no longer answer it (the link then says it was cancelled). Cancelling a cancelled form changes nothing; a form already answered or expired cannot be cancelled.',
    input: FormIdInput,
    output: Form,
    call: (backend, args) => backend.cancelForm(formId(args)) as Promise<Record<string, unknown>>,
  },
  {
    name: 'delete_form',
    title: 'Delete a form',
    description:
      'Deletes a form with its answer, uploaded files and webhook deliveries, permanently. The link stops working.',
    input: FormIdInput,
    output: Type.Object({ deleted: Type.Literal(true), form_id: Ulid }),
    async call(backend, args) {
      const id = formId(args)
      await backend.deleteForm(id)
      return { deleted: true, form_id: id }
    },
  },
  {
    name: 'get_responses',
    title: 'Get (or wait for) the answer',
    description: [
      'Returns the answer to a form, if the human has submitted it: `responses` holds at most one, whose `data` maps each field key to the value (strings, numbers, booleans, an array of option values for a multiple select; a file is the URL to download it with your API key), with the `context` you gave.',
      `With \`wait\` (1..${MCP_WAIT_MAX_S} seconds) the call holds until the answer arrives, the form stops being active, or the time is up; then it returns what there is. \`form_status\` tells you whether to wait again ("active"), read the answer ("completed"), or stop ("cancelled", "expired").`,
    ].join('\n\n'),
    input: Type.Object(
      {
        form_id: FormIdInput.properties.form_id,
        wait: Type.Optional(
          Type.Integer({
            minimum: 1,
            maximum: MCP_WAIT_MAX_S,
            description: 'Seconds to wait for the answer while the form is active',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    output: Type.Object({
      form_status: Type.Union(FORM_STATUSES.map((s) => Type.Literal(s))),
      responses: Type.Array(ResponseObject),
    }),
    async call(backend, args, abort) {
      const { form_id, wait } = validate(
        Type.Object(
          { form_id: Type.String(), wait: Type.Optional(Type.Integer({ minimum: 1, maximum: MCP_WAIT_MAX_S })) },
          { additionalProperties: false },
        ),
        args,
      )
      const result = await backend.getResponses(form_id, wait, abort)
      return { form_status: result.formStatus, responses: result.responses }
    },
  },
  {
    name: 'wait_for_events',
    title: 'Wait for any form to end',
    description: [
      "The feed of how your forms ended, oldest first: form.completed (answered: `payload.data` holds the answer, with your `context`), form.expired and form.cancelled (`payload.context` is the context the form had), form.deleted. Every form's endings are here, whatever its callback_events.",
      `Call it with \`after\` = the \`next\` of your previous call and you never miss or repeat an event; with no \`after\` it starts from the oldest kept (7 days), with "latest" from now. With \`wait\` (1..${MCP_WAIT_MAX_S} seconds) it holds until an event arrives or the time is up (then \`events\` is empty: call again with the same \`after\`).`,
      'A call returns at most `limit` events and at most 1 MiB of JSON (an event larger than that comes alone): when there may be more, call again from `next`. An error saying to try again means the server is busy: wait a second and repeat the call.',
      'One call covers all your open forms: create them, then loop on wait_for_events until each has ended.',
    ].join('\n\n'),
    input: WaitForEventsInput,
    output: EventPage,
    call: (backend, args, abort) => backend.waitForEvents(validate(WaitForEventsInput, args), abort),
  },
]

/** How the tools are listed to a client: JSON Schemas published from the TypeBox ones. */
export const toolList = () =>
  TOOLS.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: publish(tool.input as TSchema),
    outputSchema: publish(tool.output as TSchema),
  }))

/** Runs a tool; an expected failure (bad input, unknown form, a state conflict) is a tool error carrying the API's detail. */
export async function callTool(
  backend: ToolBackend,
  name: string,
  args: Record<string, unknown> | undefined,
  abort?: AbortSignal,
) {
  const tool = TOOLS.find((t) => t.name === name)
  if (!tool) return toolError(`Unknown tool "${name}". The tools are: ${TOOLS.map((t) => t.name).join(', ')}`)
  try {
    const illFormed = illFormedTextAt(args ?? {})
    if (illFormed !== undefined)
      throw invalidAt(illFormed, 'Holds a lone surrogate, which is not valid Unicode text', 'invalid_encoding')
    const result = await tool.call(backend, args ?? {}, abort)
    return { content: [{ type: 'text' as const, text: JSON.stringify(result) }], structuredContent: result }
  } catch (error) {
    if (error instanceof HttpError) return toolError(error.detail)
    throw error
  }
}

const toolError = (detail: string) => ({ content: [{ type: 'text' as const, text: detail }], isError: true })
