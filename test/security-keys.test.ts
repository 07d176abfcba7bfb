/**
 * Security, in process: a revoked key is refused at once, also when another process
 * revoked it (remembered keys are forgotten). How soon another process's revocation
 * is heard is reported for bench/check-bounds.ts.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { SQL } from 'bun'
import { reportFigure } from './figures.ts'
import {
  AUTHENTICATED_ROUTES,
  fill,
  fixture,
  MCP_HEADERS,
  nextTurn,
  realIds,
  TOOLS_LIST,
  typicalRequest,
} from './security-fixtures.ts'
import {
  contextsPerTest,
  REVOCATION_HANG_MS,
  type Resolver,
  revocationHeard,
  send,
  TEST_STORE,
  type TestContext,
  type TestResponse,
  until,
  validForm,
} from './utils.ts'

setDefaultTimeout(20_000)

let t: TestContext
const { create } = contextsPerTest()

async function setup(env: Record<string, string> = {}, resolver?: Resolver): Promise<TestContext> {
  return (t = await create(env, { resolver }))
}

// ================================================================= revoked keys

describe('a revoked key is refused at once', () => {
  /** The key is used (and so remembered by the server) before it is revoked, as the CLI revokes it: over another connection. */
  async function revokedAfterUse() {
    const fx = await fixture(t)
    const second = await t.createKey()
    const before = await send(t.app, 'GET', '/api/v1/forms', { key: second.key })
    expect(before.status).toBe(200)
    await t.revokeKey(second.id)
    await revocationHeard(
      async () => (await send(t.app, 'GET', '/api/v1/forms', { key: second.key })).status === 401,
      'a key revoked by another process',
    )
    return { fx, second }
  }

  const expectRefused = (res: TestResponse, what: string) =>
    expect({
      what,
      status: res.status,
      detail: res.body?.detail,
      challenge: res.headers.get('www-authenticate'),
    }).toEqual({
      what,
      status: 401,
      detail: 'Invalid API key',
      challenge: 'Bearer',
    })

  test('the authenticated routes are every /api/v1 route but the OpenAPI document, and /mcp', () => {
    const paths = new Set(AUTHENTICATED_ROUTES.map((route) => route.path))
    expect(paths.has('/mcp')).toBe(true)
    expect(paths.has('/api/v1/openapi.json')).toBe(false)
    expect(AUTHENTICATED_ROUTES.length).toBeGreaterThanOrEqual(12)
  })

  for (const route of AUTHENTICATED_ROUTES) {
    test(`${route.method} ${route.path}: 401 on the next request after the revocation; the other key still works`, async () => {
      await setup()
      const { fx, second } = await revokedAfterUse()
      const { body, headers } = typicalRequest(route)
      const path = fill(route.path, realIds(fx))
      const res = await send(t.app, route.method, path, { key: second.key, body, headers })
      expectRefused(res, `${route.method} ${path}`)
      // Nothing happened on its behalf: the fixture is intact, and the owner's key still reads it.
      const still = await t.api.get(`/forms/${fx.answeredId}`)
      expect(still.status).toBe(200)
      expect(still.body.status).toBe('completed')
    })
  }

  test('an MCP tool call with a revoked key is refused before any tool runs (nothing created)', async () => {
    await setup()
    const { second } = await revokedAfterUse()
    const before = (await t.api.get('/forms')).body.length
    const res = await send(t.app, 'POST', '/mcp', {
      key: second.key,
      headers: MCP_HEADERS,
      body: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_form', arguments: validForm() } },
    })
    expectRefused(res, 'POST /mcp tools/call create_form')
    expect((await t.api.get('/forms')).body.length).toBe(before)
  })

  test('a key revoked while its long-poll (?wait=2) is pending lets no later request through', async () => {
    await setup()
    const second = await t.createKey()
    const form = await t.api.createForm()
    let settled = false
    const poll = send(t.app, 'GET', `/api/v1/forms/${form.id}/responses?wait=2`, { key: second.key }).finally(
      () => (settled = true),
    )
    await nextTurn()
    await nextTurn()
    expect(settled).toBe(false)
    await t.revokeKey(second.id)
    await revocationHeard(
      async () => (await send(t.app, 'GET', '/api/v1/forms', { key: second.key })).status === 401,
      'a key revoked by another process',
    )
    // While the poll (admitted before the revocation) still waits: every new request is refused.
    expectRefused(await send(t.app, 'GET', '/api/v1/forms', { key: second.key }), 'GET /api/v1/forms during the poll')
    expectRefused(
      await send(t.app, 'GET', `/api/v1/forms/${form.id}/responses?wait=1`, { key: second.key }),
      'a second long-poll',
    )
    expectRefused(
      await send(t.app, 'POST', '/mcp', { key: second.key, body: TOOLS_LIST, headers: MCP_HEADERS }),
      'POST /mcp during the poll',
    )
    // The poll itself ends with 401 once its key is found revoked (CONTRACT 12a), before its time is up.
    const polled = await poll
    expectRefused(polled, 'the poll admitted before the revocation')
    // After it: still refused, on this turn and the next.
    expectRefused(
      await send(t.app, 'GET', `/api/v1/forms/${form.id}`, { key: second.key }),
      'GET /api/v1/forms/<id> after the poll',
    )
    await nextTurn()
    expectRefused(await send(t.app, 'GET', '/api/v1/forms', { key: second.key }), 'GET /api/v1/forms a turn later')
    expect((await t.api.get('/forms')).status).toBe(200)
  })
})

describe('keys remembered, and forgotten when another process changes them', () => {
  /** Counts the app's key lookups: the auth service asks its store for each key it does not remember. */
  function countLookups(context: TestContext) {
    const counted = { lookups: 0 }
    const keyByHash = context.store.keys.keyByHash.bind(context.store.keys)
    context.store.keys.keyByHash = (hash) => {
      counted.lookups++
      return keyByHash(hash)
    }
    return counted
  }

  const usable = async (key: string) => (await send(t.app, 'GET', '/api/v1/forms', { key })).status === 200

  test('while no key changes, 50 requests with one key look it up once', async () => {
    await setup()
    const counted = countLookups(t)
    // On PostgreSQL, keys are remembered once the notification channel is heard from (a moment after the first request).
    await until(
      async () => {
        counted.lookups = 0
        await usable(t.key)
        await Bun.sleep(20)
        await usable(t.key)
        return counted.lookups <= 1
      },
      2000,
      'the key to be remembered between requests',
    )
    counted.lookups = 0
    for (let i = 0; i < 50; i++) expect(await usable(t.key)).toBe(true)
    expect(counted.lookups).toBe(0)
  })

  test.skipIf(TEST_STORE !== 'postgres')(
    'PostgreSQL: a key another process revokes is refused within 1 s, while it was remembered',
    async () => {
      await setup()
      const second = await t.createKey()
      const counted = countLookups(t)
      await until(
        async () => {
          counted.lookups = 0
          await usable(second.key)
          await usable(second.key)
          return counted.lookups === 0
        },
        2000,
        'the key to be remembered',
      )
      await t.revokeKey(second.id)
      await revocationHeard(async () => !(await usable(second.key)), 'a remembered key revoked by another process')
      expect(await usable(second.key)).toBe(false)
      expect(await usable(t.key)).toBe(true)
    },
  )

  test.skipIf(TEST_STORE !== 'postgres')(
    'PostgreSQL: with the notification connection down, a revocation is still refused (keys are looked up on every request)',
    async () => {
      await setup()
      const second = await t.createKey()
      await until(
        async () => {
          const counted = countLookups(t)
          await usable(second.key)
          await usable(second.key)
          return counted.lookups === 0
        },
        2000,
        'the key to be remembered',
      )
      // The listening connection is cut and cannot come back (no new connection to the database is let in);
      // the connections already open (the app's pool, the other process's) go on working.
      const name = (await t.sql('SELECT current_database() AS name'))[0]!.name as string
      // From the server's own database: PostgreSQL will not shut the one a session is in.
      const admin = new SQL(process.env.INTAKE_TEST_DATABASE_URL!, { max: 1 })
      await admin.unsafe(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`)
      try {
        const cut = await t.sql(
          `SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`,
        )
        expect(cut).toHaveLength(1)
        await t.revokeKey(second.id)
        const startedAt = performance.now()
        await until(
          async () => !(await usable(second.key)),
          REVOCATION_HANG_MS,
          'the revoked key to be refused without its notification',
        )
        reportFigure(
          'revocation heard by another server (ms)',
          'a revocation whose notification was lost',
          performance.now() - startedAt,
        )
        expect(await usable(t.key)).toBe(true)
      } finally {
        await admin.unsafe(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`)
        await admin.close()
      }
    },
  )
})
