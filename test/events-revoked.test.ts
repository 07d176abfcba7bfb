/**
 * A wait held by a key that is revoked meanwhile ends with 401 (CONTRACT
 * 12a), whichever wait it is: the event feed over HTTP and MCP's
 * wait_for_events, a long-poll on a form's responses and MCP's
 * get_responses. The key is revoked by another process, as `intake keys
 * revoke` does (on PostgreSQL, with the waits held on another instance too).
 *
 * Each wait asks for 30 s; the test's own timeout is 20 s. Asserted: the
 * status, the body and header of the 401 (a wait whose time was up answers
 * 200, so the 401 is the revocation), never how long it took.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { apiClient, contextsPerTest, send, TEST_STORE, type TestContext } from './utils.ts'

setDefaultTimeout(20_000)

const { create } = contextsPerTest()

const WAIT_S = 30
/** How long a negative check gives the app to (wrongly) answer. Not a timing assertion. */
const QUIET_MS = 300

type App = TestContext['app']

/** A request held until it is answered, and whether it has been. */
function held(_app: App, make: () => Promise<Response>) {
  const state = {
    settled: false,
    response: undefined as Response | undefined,
    promise: undefined as unknown as Promise<Response>,
  }
  state.promise = make().then((response) => {
    state.settled = true
    state.response = response
    return response
  })
  return state
}

const get = (app: App, key: string, path: string) => () =>
  app.handle(new Request(`http://intake.test/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } }))

const mcp = (app: App, key: string, name: string, args: Record<string, unknown>) => () =>
  app.handle(
    new Request('http://intake.test/mcp', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    }),
  )

/** Every kind of wait, held with `key` on `app`. */
async function everyWait(_t: TestContext, app: App, key: string) {
  const api = apiClient(app, key)
  const form = await api.createForm()
  const head = (await api.get('/events?after=latest')).body.next as string
  const waits = {
    'the feed': held(app, get(app, key, `/events?after=${head}&wait=${WAIT_S}`)),
    'a long-poll on responses': held(app, get(app, key, `/forms/${form.id}/responses?wait=${WAIT_S}`)),
    'MCP wait_for_events': held(app, mcp(app, key, 'wait_for_events', { after: head, wait: WAIT_S })),
    'MCP get_responses': held(app, mcp(app, key, 'get_responses', { form_id: form.id, wait: WAIT_S })),
  }
  await Bun.sleep(QUIET_MS)
  for (const [what, wait] of Object.entries(waits))
    expect({ what, settled: wait.settled }).toEqual({ what, settled: false })
  return waits
}

async function expectEndedWith401(waits: Record<string, ReturnType<typeof held>>) {
  for (const [what, wait] of Object.entries(waits)) {
    const res = await wait.promise
    const body = await res.text()
    expect({
      what,
      status: res.status,
      body: JSON.parse(body),
      authenticate: res.headers.get('www-authenticate'),
    }).toEqual({
      what,
      status: 401,
      body: { detail: 'Invalid API key' },
      authenticate: 'Bearer',
    })
  }
}

describe('a wait held by a key revoked meanwhile ends with 401', () => {
  test('revoked by another process (intake keys revoke): the feed, a long-poll and the MCP waits end, each with 401', async () => {
    const t = await create()
    const { id, key } = await t.createKey()
    const waits = await everyWait(t, t.app, key)
    await t.revokeKey(id)
    await expectEndedWith401(waits)
    // Other keys' waits go on: a wait with the first key is still held.
    const other = held(t.app, get(t.app, t.key, `/events?after=latest&wait=${WAIT_S}`))
    await Bun.sleep(QUIET_MS)
    expect(other.settled).toBe(false)
    // And the revoked key's next request is refused outright.
    expect((await send(t.app, 'GET', '/api/v1/events', { key })).status).toBe(401)
  })

  test.skipIf(TEST_STORE !== 'postgres')(
    'PostgreSQL: waits held on two instances both end when another process revokes the key',
    async () => {
      const t = await create()
      const second = await t.anotherServer()
      const { id, key } = await t.createKey()
      const onFirst = await everyWait(t, t.app, key)
      const onSecond = await everyWait(t, second.app, key)
      await t.revokeKey(id)
      await expectEndedWith401(onFirst)
      await expectEndedWith401(onSecond)
    },
  )
})
