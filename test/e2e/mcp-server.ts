/**
 * For the MCP end-to-end tests: the real executable (dist/intake) serving
 * /mcp, the official SDK's clients over Streamable HTTP and over stdio
 * (`intake mcp --url URL --key KEY`), tool calls checked for their one text
 * item, and the REST API and the HTML page to compare with.
 */
import { afterAll, beforeAll, expect } from 'bun:test'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { childEnv, keysIn, type RunningIntake, request, runIntake, startIntake, useBuiltBinary } from './binary.ts'

export const STEP_TIMEOUT = 30_000
const STARTUP_TIMEOUT = 60_000
/** Longer than any wait a test asks for: the SDK's own request timeout must never be what ends a call. */
export const CALL_TIMEOUT_MS = 90_000

export const TOOL_NAMES = [
  'cancel_form',
  'create_form',
  'delete_form',
  'get_form',
  'get_responses',
  'list_forms',
  'wait_for_events',
]

export const DINNER_FIELDS = [
  { key: 'name', type: 'text', label: 'Your name', required: true, config: { max_length: 80 } },
  { key: 'guests', type: 'number', label: 'Guests', required: true, config: { min: 1, max: 12, step: 1 } },
  { key: 'meal', type: 'select', label: 'Meal', config: { options: ['fish', { value: 'veg', label: 'Vegetarian' }] } },
  { key: 'allergies', type: 'checkbox', label: 'I have allergies' },
  { key: 'day', type: 'date', label: 'Day' },
  { key: 'email', type: 'email', label: 'Email' },
]

export interface ToolOutcome {
  isError: boolean
  /** The one text content item. */
  text: string
  structured: any
}

/** Calls a tool; the result must be one text item (the JSON of the structured content, or the error detail). */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolOutcome> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS })
  const content = result.content as Array<{ type: string; text?: string }>
  expect(content).toHaveLength(1)
  expect(content[0]!.type).toBe('text')
  return { isError: result.isError === true, text: content[0]!.text!, structured: result.structuredContent }
}

/** A successful call: structured content, and the same object as JSON text. */
export async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const outcome = await call(client, name, args)
  expect({ isError: outcome.isError, text: outcome.isError ? outcome.text : '' }).toEqual({ isError: false, text: '' })
  expect(outcome.structured).toBeDefined()
  expect(JSON.parse(outcome.text)).toEqual(outcome.structured)
  return outcome.structured
}

/** A tool error: isError, the detail as text, no structured content. */
export async function toolError(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const outcome = await call(client, name, args)
  expect({ isError: outcome.isError, structured: outcome.structured }).toEqual({ isError: true, structured: undefined })
  return outcome.text
}

/**
 * `intake serve` on a database of its own for the tests of one file, started
 * before them with a key of the account "default" (printed at first start),
 * one of the account "other" (`intake keys create` while it runs), and one
 * form of "default", so that a list is never empty whichever test runs alone.
 * Every client opened through it is closed after the file's tests.
 */
export function useMcpServer() {
  const intake = useBuiltBinary('intake-mcp-')
  let server: RunningIntake
  let cwd = ''
  let key = ''
  let otherKey = ''
  const openClients = new Set<Client>()
  /** Pids of the `intake mcp` children the stdio transport spawned (not tracked by binary.ts). */
  const stdioPids: number[] = []
  /** What the stdio children wrote on stderr, for failure messages. */
  const stdioStderr: string[] = []
  /** Every mcp-session-id header a response to the SDK's HTTP client carried (must stay empty), and how many it saw. */
  const sessionIdsIssued: string[] = []
  let httpResponsesSeen = 0

  const recordingFetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const res = await fetch(url, init)
    httpResponsesSeen++
    const sessionId = res.headers.get('mcp-session-id')
    if (sessionId !== null) sessionIdsIssued.push(sessionId)
    // Stateless: a session id on any response fails the call that got it, in whichever file.
    expect(sessionId).toBeNull()
    return res
  }

  const api = (path: string, options: { method?: string; body?: unknown; key?: string } = {}) =>
    request(`${server.url}/api/v1${path}`, { key, ...options })

  /** Creates a form over REST; its id. */
  async function restCreate(body: unknown, apiKey = key): Promise<string> {
    const res = await api('/forms', { body, key: apiKey })
    expect({ status: res.status, text: res.status === 201 ? '' : res.text }).toEqual({ status: 201, text: '' })
    return res.body.id
  }

  beforeAll(async () => {
    cwd = intake.tempDir()
    const dbPath = join(cwd, 'intake.db')
    server = await startIntake(intake.path, {
      cwd,
      args: ['serve', '--port', '0', '--db', dbPath],
      env: { SERVICE_PUBLIC_RATE_LIMIT: '0' },
    })
    expect(server.apiKey).toMatch(/^svc_live_[0-9a-f]{48}$/)
    key = server.apiKey!
    const created = await runIntake(intake.path, ['keys', 'create', '--account', 'other', '--db', dbPath], { cwd })
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' })
    const printed = keysIn(created.stdout)
    expect(printed).toHaveLength(1)
    otherKey = printed[0]!
    expect(otherKey).not.toBe(key)
    await restCreate({ title: 'Already there', fields: [{ key: 'x', type: 'text', label: 'X' }] })
  }, STARTUP_TIMEOUT)

  afterAll(async () => {
    for (const client of openClients) await client.close().catch(() => undefined)
    openClients.clear()
    // The transport ends its child on close; any that is somehow still there is killed, by its own pid.
    for (const pid of stdioPids) {
      try {
        process.kill(pid, 0)
        process.kill(pid, 'SIGKILL')
      } catch {
        // Already gone.
      }
    }
  }, STEP_TIMEOUT)

  return {
    get server() {
      return server
    },
    /** The server's working directory. */
    get cwd() {
      return cwd
    },
    /** The key printed at first start: account "default". */
    get key() {
      return key
    },
    /** A key of the account "other". */
    get otherKey() {
      return otherKey
    },
    /** Absolute path of dist/intake. */
    get binary() {
      return intake.path
    },
    /** Pids of the `intake mcp` children, in the order they started. */
    stdioPids,
    /** The SDK's HTTP client fetch, counting responses and the session ids they carry. */
    recordingFetch,
    sessionIdsIssued,
    get httpResponsesSeen() {
      return httpResponsesSeen
    },

    async connectHttp(apiKey: string): Promise<Client> {
      const client = new Client({ name: 'intake-e2e-http', version: '1.0.0' })
      const transport = new StreamableHTTPClientTransport(new URL('/mcp', server.url), {
        requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
        fetch: recordingFetch,
      })
      await client.connect(transport)
      openClients.add(client)
      // Stateless: the server never hands out a session.
      expect(transport.sessionId).toBeUndefined()
      return client
    },

    /** `intake mcp` with the key as --key, or (`keyIn: 'environment'`) only in INTAKE_API_KEY; `env` adds to its environment. */
    async connectStdio(
      apiKey: string,
      options: { keyIn?: 'flag' | 'environment'; env?: Record<string, string> } = {},
    ): Promise<Client> {
      const byFlag = (options.keyIn ?? 'flag') === 'flag'
      const transport = new StdioClientTransport({
        command: intake.path,
        args: ['mcp', '--url', server.url, ...(byFlag ? ['--key', apiKey] : [])],
        env: childEnv({ INTAKE_API_KEY: byFlag ? undefined : apiKey, ...options.env }),
        cwd,
        stderr: 'pipe',
      })
      const index = stdioStderr.push('') - 1
      transport.stderr?.on('data', (chunk: Buffer) => (stdioStderr[index] += chunk.toString()))
      const client = new Client({ name: 'intake-e2e-stdio', version: '1.0.0' })
      try {
        await client.connect(transport)
      } finally {
        if (transport.pid !== null) stdioPids.push(transport.pid)
      }
      openClients.add(client)
      return client
    },

    /** Closes a client a test opened before the file ends. */
    async close(client: Client) {
      await client.close()
      openClients.delete(client)
    },

    api,
    restCreate,

    /** The account's form ids, newest first, over REST (all of them: fewer than 100 in a file). */
    async restFormIds(apiKey = key): Promise<string[]> {
      const res = await api('/forms?limit=100', { key: apiKey })
      expect(res.status).toBe(200)
      expect(res.headers.get('link')).toBeNull()
      return (res.body as Array<{ id: string }>).map((form) => form.id)
    },

    /** The human answers through the HTML page: the urlencoded post its form element makes. */
    answerOnThePage(formId: string, values: Record<string, string>): Promise<Response> {
      return fetch(`${server.url}/f/${formId}`, {
        method: 'POST',
        body: new URLSearchParams(values),
        redirect: 'manual',
      })
    },
  }
}
