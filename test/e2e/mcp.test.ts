/**
 * MCP, end to end: the real executable (dist/intake) serving /mcp over
 * Streamable HTTP, and `intake mcp --url URL --key KEY` serving the same tools
 * over stdio by forwarding to it. Both are driven with the official SDK's own
 * client (Client + StreamableHTTPClientTransport / StdioClientTransport), and
 * the human answers through the HTML page (a urlencoded form post), over real
 * loopback HTTP. Every tool error is compared with what the REST API says for
 * the same input. (Authentication and statelessness of /mcp:
 * mcp-http.test.ts; how `intake mcp` starts and ends: mcp-cli.test.ts.)
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import Ajv2020 from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { request } from './binary.ts'
import {
  CALL_TIMEOUT_MS,
  call,
  DINNER_FIELDS,
  ok,
  STEP_TIMEOUT,
  TOOL_NAMES,
  toolError,
  useMcpServer,
} from './mcp-server.ts'

const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/
const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema'

const mcp = useMcpServer()
const { answerOnThePage, api, connectHttp, connectStdio, restCreate, restFormIds } = mcp

interface Via {
  name: 'Streamable HTTP' | 'stdio (intake mcp)'
  connect(apiKey: string): Promise<Client>
}

const VIAS: Via[] = [
  { name: 'Streamable HTTP', connect: connectHttp },
  { name: 'stdio (intake mcp)', connect: connectStdio },
]

function validatorFor(schema: object) {
  const ajv = new Ajv2020({ strict: true, allErrors: true })
  addFormats(ajv)
  return ajv.compile(schema)
}

// ---------------------------------------------------------------------------
// The same tools, the same rules, over both transports.

for (const via of VIAS) {
  describe(`MCP over ${via.name}`, () => {
    let client: Client

    beforeAll(async () => {
      client = await via.connect(mcp.key)
      // Listing the tools also makes the SDK client check every structured result against its outputSchema.
      await client.listTools()
    }, STEP_TIMEOUT)

    test(
      'listTools: exactly the seven tools, each with an object input schema, an output schema and a real description',
      async () => {
        const { tools } = await client.listTools()
        expect(tools.map((tool) => tool.name).sort()).toEqual(TOOL_NAMES)
        for (const tool of tools) {
          expect({ name: tool.name, type: tool.inputSchema.type }).toEqual({ name: tool.name, type: 'object' })
          expect({ name: tool.name, type: tool.outputSchema?.type }).toEqual({ name: tool.name, type: 'object' })
          expect(Object.keys(tool.outputSchema?.properties ?? {}).length).toBeGreaterThan(0)
          expect(typeof tool.description).toBe('string')
          // Written for a language model: sentences, not a label.
          expect({ name: tool.name, long: tool.description!.length >= 80 }).toEqual({ name: tool.name, long: true })
          expect(tool.description!.split(/\s+/).length).toBeGreaterThanOrEqual(12)
        }
        const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]))
        for (const name of ['get_form', 'cancel_form', 'delete_form', 'get_responses']) {
          expect(byName[name]!.inputSchema.required).toEqual(['form_id'])
        }
        const wait = byName.get_responses!.inputSchema.properties!.wait as Record<string, unknown>
        // Under the 60 s request timeout of common MCP clients (CONTRACT 12).
        expect(wait).toMatchObject({ type: 'integer', minimum: 1, maximum: 50 })
        expect(byName.wait_for_events!.inputSchema.properties!.wait).toMatchObject({
          type: 'integer',
          minimum: 0,
          maximum: 50,
        })
        expect(byName.create_form!.outputSchema!.properties).toHaveProperty('answers_schema')
        expect(byName.list_forms!.outputSchema!.properties).toHaveProperty('next_cursor')
      },
      STEP_TIMEOUT,
    )

    test(
      'a tools/call whose arguments are not an object is -32602 (invalid params) with a short message, never -32603',
      async () => {
        for (const args of [[], 'title=T', 5]) {
          const refused = await client
            .request(
              { method: 'tools/call', params: { name: 'create_form', arguments: args as never } },
              CallToolResultSchema,
              { timeout: CALL_TIMEOUT_MS },
            )
            .then(
              () => undefined,
              (error: unknown) => error as McpError,
            )
          expect(refused).toBeInstanceOf(McpError)
          expect(refused!.code).toBe(ErrorCode.InvalidParams)
          expect(refused!.message).toContain(
            "Invalid params: arguments must be an object of the tool's named arguments",
          )
          expect(refused!.message).not.toContain('\n')
        }
      },
      STEP_TIMEOUT,
    )

    test(
      "create_form's input schema is the REST API's create body (from the OpenAPI document) plus idempotency_key",
      async () => {
        const { tools } = await client.listTools()
        const createForm = tools.find((tool) => tool.name === 'create_form')!
        const openapi = await request(`${mcp.server.url}/api/v1/openapi.json`)
        expect(openapi.status).toBe(200)
        const restBody = openapi.body.paths['/api/v1/forms'].post.requestBody.content['application/json'].schema
        const { idempotency_key, ...properties } = createForm.inputSchema.properties as Record<string, unknown>
        expect(idempotency_key).toMatchObject({ type: 'string' })
        expect(properties).toEqual(restBody.properties)
        expect(createForm.inputSchema.required).toEqual(restBody.required)
        expect((createForm.inputSchema as Record<string, unknown>).additionalProperties).toBe(false)
      },
      STEP_TIMEOUT,
    )

    test(
      "create_form returns id, url (the server's /f/<id>), status active and answers_schema",
      async () => {
        const form = await ok(client, 'create_form', {
          title: 'Dinner on Friday',
          description: 'Tell us what you would like.',
          fields: DINNER_FIELDS,
          context: { thread: 'abc' },
        })
        expect(form.id).toMatch(ULID)
        expect(form.url).toBe(`http://localhost:${mcp.server.port}/f/${form.id}`)
        expect(form.status).toBe('active')
        expect(form.title).toBe('Dinner on Friday')
        expect(form.context).toEqual({ thread: 'abc' })

        const schema = form.answers_schema
        expect(schema.$schema).toBe(DRAFT_2020_12)
        expect(schema.type).toBe('object')
        expect(schema.additionalProperties).toBe(false)
        expect(Object.keys(schema.properties)).toEqual(DINNER_FIELDS.map((field) => field.key))
        expect([...schema.required].sort()).toEqual(['allergies', 'guests', 'name'])
        expect(schema.properties.name).toMatchObject({ type: 'string', maxLength: 80 })
        expect(schema.properties.guests).toMatchObject({ type: 'number', minimum: 1, maximum: 12, multipleOf: 1 })
        expect(schema.properties.meal).toMatchObject({ type: 'string', enum: ['fish', 'veg'] })
        expect(schema.properties.allergies).toMatchObject({ type: 'boolean' })
        expect(schema.properties.day).toMatchObject({ type: 'string', format: 'date' })
        expect(schema.properties.email).toMatchObject({ type: 'string', format: 'email' })

        // The same schema the REST API serves, and the form exists for the REST API as the tool said.
        const restSchema = await api(`/forms/${form.id}/schema`)
        expect(restSchema.status).toBe(200)
        expect(restSchema.body).toEqual(schema)
        const restForm = await api(`/forms/${form.id}`)
        expect(restForm.status).toBe(200)
        expect(restForm.body).toMatchObject({ id: form.id, url: form.url, status: 'active', title: form.title })
        // The page the url names is there for the human.
        const page = await fetch(form.url.replace(`http://localhost:${mcp.server.port}`, mcp.server.url))
        expect(page.status).toBe(200)
        expect(await page.text()).toContain('Dinner on Friday')
      },
      STEP_TIMEOUT,
    )

    test(
      "create_form with an idempotency_key: a retry with the same arguments returns the same form; other arguments are the API's 422 detail",
      async () => {
        const idempotencyKey = `mcp-retry-${via.name.replace(/\W+/g, '-')}-${Date.now()}`
        const args = {
          title: 'Retry me',
          fields: [{ key: 'ok', type: 'checkbox', label: 'OK?' }],
          idempotency_key: idempotencyKey,
        }
        const before = (await restFormIds()).length
        const first = await ok(client, 'create_form', args)
        const second = await ok(client, 'create_form', args)
        expect(second.id).toBe(first.id)
        expect((await restFormIds()).length).toBe(before + 1)

        const changed = { title: 'Retry me, changed', fields: args.fields }
        const rest = await request(`${mcp.server.url}/api/v1/forms`, {
          key: mcp.key,
          body: changed,
          headers: { 'idempotency-key': idempotencyKey },
        })
        expect(rest.status).toBe(422)
        expect(await toolError(client, 'create_form', { ...changed, idempotency_key: idempotencyKey })).toBe(
          rest.body.detail,
        )
        expect((await restFormIds()).length).toBe(before + 1)
      },
      STEP_TIMEOUT,
    )

    test(
      'get_responses with wait holds until the human answers through the HTML page, then returns completed with the typed data',
      async () => {
        const form = await ok(client, 'create_form', { title: 'Dinner', fields: DINNER_FIELDS, context: { step: 7 } })
        // Nothing yet: without wait it answers at once, active and empty.
        expect(await ok(client, 'get_responses', { form_id: form.id })).toEqual({
          form_status: 'active',
          responses: [],
        })

        let settled = false
        const pending = call(client, 'get_responses', { form_id: form.id, wait: 25 })
        pending.then(
          () => (settled = true),
          () => (settled = true),
        )
        await Bun.sleep(750)
        // Still held: the post below is made while the tool call is pending.
        expect(settled).toBe(false)
        const post = await answerOnThePage(form.id, {
          name: 'Ada',
          guests: '3',
          meal: 'veg',
          allergies: 'on',
          day: '2026-06-01',
          email: '',
        })
        expect(post.status).toBe(303)

        const outcome = await pending
        expect(outcome.isError).toBe(false)
        const result = outcome.structured
        expect(result.form_status).toBe('completed')
        expect(result.responses).toHaveLength(1)
        const [response] = result.responses
        expect(response.form_id).toBe(form.id)
        expect(response.id).toMatch(ULID)
        expect(response.context).toEqual({ step: 7 })
        expect(response.data).toEqual({ name: 'Ada', guests: 3, meal: 'veg', allergies: true, day: '2026-06-01' })

        // The typed answer is valid against the answers_schema create_form gave.
        const validate = validatorFor(form.answers_schema)
        expect({ valid: validate(response.data), errors: validate.errors ?? null }).toEqual({
          valid: true,
          errors: null,
        })

        // And the REST API says the same.
        const rest = await api(`/forms/${form.id}/responses`)
        expect(rest.status).toBe(200)
        expect(rest.body).toEqual(result.responses)
        // Asked again, it answers at once with the same.
        expect(await ok(client, 'get_responses', { form_id: form.id, wait: 50 })).toEqual(result)
        expect((await ok(client, 'get_form', { form_id: form.id })).status).toBe('completed')
      },
      STEP_TIMEOUT,
    )

    test(
      'get_form returns the form with its fields, as the REST API does',
      async () => {
        const form = await ok(client, 'create_form', { title: 'Look at me', fields: DINNER_FIELDS, expires_in: '7d' })
        const got = await ok(client, 'get_form', { form_id: form.id })
        expect(got).toMatchObject({
          id: form.id,
          title: 'Look at me',
          status: 'active',
          url: form.url,
          expires_at: form.expires_at,
        })
        expect(got.fields.map((field: { key: string }) => field.key)).toEqual(DINNER_FIELDS.map((field) => field.key))
        const rest = await api(`/forms/${form.id}`)
        expect(rest.status).toBe(200)
        expect(got).toEqual(rest.body)
      },
      STEP_TIMEOUT,
    )

    test(
      'list_forms pages with next_cursor through every form, newest first, as the REST API lists them',
      async () => {
        for (let i = 0; i < 3; i++)
          await restCreate({ title: `Page filler ${i}`, fields: [{ key: 'x', type: 'text', label: 'X' }] })
        const all = await restFormIds()
        expect(all.length).toBeGreaterThanOrEqual(4)

        const seen: string[] = []
        let cursor: string | null = null
        let pages = 0
        do {
          const page: { forms: Array<{ id: string }>; next_cursor: string | null } = await ok(
            client,
            'list_forms',
            cursor === null ? { limit: 2 } : { limit: 2, cursor },
          )
          pages++
          expect(page.forms.length).toBeLessThanOrEqual(2)
          if (page.next_cursor !== null) {
            expect(page.forms).toHaveLength(2)
            expect(page.next_cursor).toBe(page.forms[1]!.id)
          }
          seen.push(...page.forms.map((form) => form.id))
          cursor = page.next_cursor
        } while (cursor !== null && pages < 100)
        expect(cursor).toBeNull()
        expect(pages).toBe(Math.ceil(all.length / 2))
        expect(seen).toEqual(all)

        // A page is the REST API's page, summary for summary.
        const first = await ok(client, 'list_forms', { limit: 3 })
        const rest = await api('/forms?limit=3')
        expect(first.forms).toEqual(rest.body)
        expect(first.next_cursor).toBe(all[2]!)
      },
      STEP_TIMEOUT,
    )

    test(
      'cancel_form cancels; get_responses then returns cancelled at once; the page refuses the answer',
      async () => {
        const form = await ok(client, 'create_form', { title: 'Cancel me', fields: DINNER_FIELDS })
        const cancelled = await ok(client, 'cancel_form', { form_id: form.id })
        expect(cancelled).toMatchObject({ id: form.id, status: 'cancelled' })
        // With the longest wait, it must still answer at once (well within this test's timeout).
        expect(await ok(client, 'get_responses', { form_id: form.id, wait: 50 })).toEqual({
          form_status: 'cancelled',
          responses: [],
        })
        expect((await api(`/forms/${form.id}`)).body.status).toBe('cancelled')
        // Cancelling again changes nothing.
        expect(await ok(client, 'cancel_form', { form_id: form.id })).toMatchObject({
          id: form.id,
          status: 'cancelled',
        })
        const post = await answerOnThePage(form.id, { name: 'Late', guests: '2' })
        expect(post.status).not.toBe(303)
        expect(await ok(client, 'get_responses', { form_id: form.id })).toEqual({
          form_status: 'cancelled',
          responses: [],
        })
      },
      STEP_TIMEOUT,
    )

    test(
      'a get_responses waiting on a form wakes when the form is cancelled',
      async () => {
        const form = await ok(client, 'create_form', { title: 'Wake me', fields: DINNER_FIELDS })
        let settled = false
        const pending = call(client, 'get_responses', { form_id: form.id, wait: 50 })
        pending.then(
          () => (settled = true),
          () => (settled = true),
        )
        await Bun.sleep(500)
        expect(settled).toBe(false)
        expect(await ok(client, 'cancel_form', { form_id: form.id })).toMatchObject({ status: 'cancelled' })
        const outcome = await pending
        expect(outcome.isError).toBe(false)
        expect(outcome.structured).toEqual({ form_status: 'cancelled', responses: [] })
      },
      STEP_TIMEOUT,
    )

    test(
      'wait_for_events waits for the next ending of any form and answers as GET /api/v1/events does; wait 51 is refused',
      async () => {
        const head = await ok(client, 'wait_for_events', { after: 'latest' })
        expect(head.events).toEqual([])
        const form = await ok(client, 'create_form', {
          title: 'Feed me',
          fields: DINNER_FIELDS,
          context: { step: 'feed' },
        })
        let settled = false
        const pending = call(client, 'wait_for_events', { after: head.next, wait: 50 })
        pending.then(
          () => (settled = true),
          () => (settled = true),
        )
        await Bun.sleep(500)
        expect(settled).toBe(false)
        await ok(client, 'cancel_form', { form_id: form.id })
        const outcome = await pending
        expect(outcome.isError).toBe(false)
        const page = outcome.structured as { events: Array<Record<string, any>>; next: string }
        expect(page.events.map((event) => [event.type, event.form_id, event.payload.context])).toEqual([
          ['form.cancelled', form.id, { step: 'feed' }],
        ])
        expect(page.next).toBe(page.events[0]!.id)
        const rest = await api(`/events?after=${head.next}`)
        expect(rest.body).toEqual(page)
        const refused = await call(client, 'wait_for_events', { after: page.next, wait: 51 })
        expect(refused.isError).toBe(true)
        expect(refused.text).toContain('/wait')
      },
      STEP_TIMEOUT,
    )

    test(
      "cancel_form on an answered form is a tool error with the REST API's detail",
      async () => {
        const form = await ok(client, 'create_form', { title: 'Answered', fields: DINNER_FIELDS })
        expect((await answerOnThePage(form.id, { name: 'Ada', guests: '1' })).status).toBe(303)
        const rest = await api(`/forms/${form.id}`, { method: 'PATCH', body: { status: 'cancelled' } })
        expect(rest.status).toBe(409)
        expect(await toolError(client, 'cancel_form', { form_id: form.id })).toBe(rest.body.detail)
        expect((await ok(client, 'get_form', { form_id: form.id })).status).toBe('completed')
      },
      STEP_TIMEOUT,
    )

    test(
      "delete_form deletes; get_form is then a tool error 'Form not found'",
      async () => {
        const form = await ok(client, 'create_form', { title: 'Delete me', fields: DINNER_FIELDS })
        expect(await ok(client, 'delete_form', { form_id: form.id })).toEqual({ deleted: true, form_id: form.id })
        expect(await toolError(client, 'get_form', { form_id: form.id })).toBe('Form not found')
        expect(await toolError(client, 'get_responses', { form_id: form.id })).toBe('Form not found')
        expect(await toolError(client, 'delete_form', { form_id: form.id })).toBe('Form not found')
        const rest = await api(`/forms/${form.id}`)
        expect(rest.status).toBe(404)
        expect(rest.body.detail).toBe('Form not found')
        expect(await restFormIds()).not.toContain(form.id)
        // The link stops working.
        expect((await fetch(`${mcp.server.url}/f/${form.id}`)).status).toBe(404)
      },
      STEP_TIMEOUT,
    )

    describe("bad input is a tool error with the REST API's detail; the client stays usable", () => {
      const createCases: Array<[string, Record<string, unknown>]> = [
        ['an empty title', { title: '', fields: [{ key: 'name', type: 'text', label: 'Name' }] }],
        ['an unknown field type', { title: 'Colours', fields: [{ key: 'colour', type: 'color', label: 'Colour' }] }],
        ['an unknown key', { title: 'Extra', fields: [{ key: 'name', type: 'text', label: 'Name' }], colour: 'red' }],
      ]

      for (const [what, body] of createCases) {
        test(
          `create_form with ${what}`,
          async () => {
            const before = await restFormIds()
            const rest = await api('/forms', { body })
            expect(rest.status).toBe(422)
            expect(typeof rest.body.detail).toBe('string')
            expect(rest.body.detail.length).toBeGreaterThan(0)
            expect(await toolError(client, 'create_form', body)).toBe(rest.body.detail)
            expect(await restFormIds()).toEqual(before)
            // Still usable: the next call succeeds.
            expect((await ok(client, 'list_forms', { limit: 1 })).forms).toHaveLength(1)
          },
          STEP_TIMEOUT,
        )
      }

      test(
        "get_responses with wait 51: MCP tools wait at most 50 s, under common clients' 60 s timeout",
        async () => {
          const formId = await restCreate({ title: 'Wait too long', fields: [{ key: 'x', type: 'text', label: 'X' }] })
          const detail = await toolError(client, 'get_responses', { form_id: formId, wait: 51 })
          expect(detail).toContain('/wait')
          expect(detail).toContain('50')
          expect(await ok(client, 'get_responses', { form_id: formId })).toEqual({
            form_status: 'active',
            responses: [],
          })
        },
        STEP_TIMEOUT,
      )

      test(
        'list_forms with limit 500',
        async () => {
          const rest = await api('/forms?limit=500')
          expect(rest.status).toBe(422)
          expect(await toolError(client, 'list_forms', { limit: 500 })).toBe(rest.body.detail)
          expect((await ok(client, 'list_forms', { limit: 100 })).forms.length).toBeGreaterThan(0)
        },
        STEP_TIMEOUT,
      )

      test(
        'an unknown tool name',
        async () => {
          const text = await toolError(client, 'launch_rockets', { now: true })
          expect(text).toContain('launch_rockets')
          for (const name of TOOL_NAMES) expect(text).toContain(name)
          expect((await ok(client, 'list_forms', { limit: 1 })).forms).toHaveLength(1)
          expect((await client.listTools()).tools).toHaveLength(TOOL_NAMES.length)
        },
        STEP_TIMEOUT,
      )
    })

    test(
      "account scoping: another account's key cannot see or touch this account's forms",
      async () => {
        const mine = await ok(client, 'create_form', { title: 'Mine only', fields: DINNER_FIELDS })
        const other = await via.connect(mcp.otherKey)
        try {
          expect(await toolError(other, 'get_form', { form_id: mine.id })).toBe('Form not found')
          expect(await toolError(other, 'get_responses', { form_id: mine.id, wait: 1 })).toBe('Form not found')
          expect(await toolError(other, 'cancel_form', { form_id: mine.id })).toBe('Form not found')
          expect(await toolError(other, 'delete_form', { form_id: mine.id })).toBe('Form not found')
          const theirList = await ok(other, 'list_forms', { limit: 100 })
          expect(theirList.forms.map((form: { id: string }) => form.id)).not.toContain(mine.id)

          // What the other account creates is its own.
          const theirs = await ok(other, 'create_form', {
            title: 'Theirs',
            fields: [{ key: 'x', type: 'text', label: 'X' }],
          })
          expect(await toolError(client, 'get_form', { form_id: theirs.id })).toBe('Form not found')
          expect(await restFormIds(mcp.otherKey)).toContain(theirs.id)
          expect(await restFormIds()).not.toContain(theirs.id)
        } finally {
          await mcp.close(other)
        }
        // Untouched.
        const rest = await api(`/forms/${mine.id}`)
        expect(rest.status).toBe(200)
        expect(rest.body.status).toBe('active')
      },
      STEP_TIMEOUT,
    )
  })
}
