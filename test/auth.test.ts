import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import {
  apiClient,
  createTestContext,
  revocationHeard,
  send,
  TEST_STORE,
  type TestContext,
  validForm,
} from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())

describe('bearer authentication', () => {
  test.each([
    ['no Authorization header', undefined],
    ['an empty Authorization header', ''],
    ['Bearer with no token', 'Bearer'],
    ['Bearer with only spaces', 'Bearer    '],
  ])('%s: 403 Not authenticated', async (_, authorization) => {
    const headers: Record<string, string> = authorization === undefined ? {} : { authorization }
    const res = await send(t.app, 'GET', '/api/v1/forms', { headers })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ detail: 'Not authenticated' })
  })

  test.each([
    ['another scheme', () => `Basic ${btoa('user:pass')}`],
    ['a malformed key', () => 'Bearer svc_live_nothex'],
    ['a key with the wrong prefix', () => `Bearer svc_test_${'a'.repeat(48)}`],
    ['a well-formed unknown key', () => `Bearer svc_live_${'0'.repeat(48)}`],
    ['the key in upper case', () => `Bearer ${t.key.toUpperCase()}`],
    ['the key with a trailing character', () => `Bearer ${t.key}0`],
  ])('%s: 401 Invalid API key with WWW-Authenticate', async (_, authorization) => {
    const res = await send(t.app, 'GET', '/api/v1/forms', { headers: { authorization: authorization() } })
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ detail: 'Invalid API key' })
    expect(res.headers.get('www-authenticate')).toBe('Bearer')
  })

  test('the scheme name is case-insensitive', async () => {
    const res = await send(t.app, 'GET', '/api/v1/forms', { headers: { authorization: `bearer ${t.key}` } })
    expect(res.status).toBe(200)
  })

  test('authentication comes before the body is read: a bad body from a stranger is 403, not 422 or 413', async () => {
    const malformed = await send(t.app, 'POST', '/api/v1/forms', { body: '{not json' })
    expect(malformed.status).toBe(403)
    const huge = await send(t.app, 'POST', '/api/v1/forms', { body: 'x'.repeat(2 * 1024 * 1024), key: 'svc_live_bad' })
    expect(huge.status).toBe(401)
  })

  test('every /api/v1 route requires a key, unknown ones included', async () => {
    for (const [method, path] of [
      ['POST', '/api/v1/forms'],
      ['GET', '/api/v1/forms'],
      ['GET', '/api/v1/forms/01ARZ3NDEKTSV4RRFFQ69G5FAV'],
      ['PATCH', '/api/v1/forms/01ARZ3NDEKTSV4RRFFQ69G5FAV'],
      ['DELETE', '/api/v1/forms/01ARZ3NDEKTSV4RRFFQ69G5FAV'],
      ['GET', '/api/v1/forms/01ARZ3NDEKTSV4RRFFQ69G5FAV/responses'],
      ['GET', '/api/v1/forms/01ARZ3NDEKTSV4RRFFQ69G5FAV/responses/01ARZ3NDEKTSV4RRFFQ69G5FAV'],
      ['GET', '/api/v1/no-such-route'],
    ] as const) {
      const res = await send(t.app, method, path)
      expect(res.status, `${method} ${path}`).toBe(403)
    }
  })

  test('a revoked key is refused on its very next request', async () => {
    const second = await t.createKey()
    const client = apiClient(t.app, second.key)
    expect((await client.get('/forms')).status).toBe(200)
    await t.revokeKey(second.id)
    // A request sent after the revocation reaches the server on a later turn of its event loop
    // (on PostgreSQL, where another process's revocation is heard by notification, within a second).
    await revocationHeard(async () => (await client.get('/forms')).status === 401, 'a key revoked by another process')
    const res = await client.get('/forms')
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ detail: 'Invalid API key' })
    expect((await t.api.get('/forms')).status).toBe(200)
  })
})

describe('keys at rest', () => {
  test('only the SHA-256 hex of a key is stored, never the plaintext', async () => {
    await t.api.createForm()
    const stored = await t.sql('SELECT * FROM api_keys')
    const digest = createHash('sha256').update(t.key).digest('hex')
    expect(stored.map((row) => row.key_hash)).toContain(digest)
    expect(JSON.stringify(stored)).not.toContain(t.key.slice('svc_live_'.length))
  })

  test.skipIf(TEST_STORE !== 'sqlite')('SQLite: the database file holds the hash, never the key', async () => {
    await t.api.createForm()
    const digest = createHash('sha256').update(t.key).digest('hex')
    t.sqlite!.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    const bytes = readFileSync(t.store.location).toString('latin1')
    expect(bytes).toContain(digest)
    expect(bytes).not.toContain(t.key)
  })
})

describe('account isolation', () => {
  test("another account's form is 404 on every route, and lists never show it", async () => {
    const mine = await t.api.createForm({ title: 'Mine' })
    // Read by its owner first: whatever intake keeps of the form must not reach another account.
    expect((await t.api.get(`/forms/${mine.id}`)).status).toBe(200)
    const other = apiClient(t.app, (await t.createKey('other-team')).key)
    for (const res of [
      await other.get(`/forms/${mine.id}`),
      await other.patch(`/forms/${mine.id}`, { status: 'cancelled' }),
      await other.delete(`/forms/${mine.id}`),
      await other.get(`/forms/${mine.id}/responses`),
    ]) {
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ detail: 'Form not found' })
    }
    expect((await other.get('/forms')).body).toEqual([])
    const theirs = await other.createForm({ title: 'Theirs' })
    expect(((await t.api.get('/forms')).body as Array<{ id: string }>).map((f) => f.id)).toEqual([mine.id])
    expect((await t.api.get(`/forms/${theirs.id}`)).status).toBe(404)
    // Nothing was changed by the other account's attempts.
    expect((await t.api.get(`/forms/${mine.id}`)).body.status).toBe('active')
  })

  test('two keys of the same account see the same forms', async () => {
    const form = await t.api.createForm()
    const colleague = apiClient(t.app, (await t.createKey('default')).key)
    expect((await colleague.get(`/forms/${form.id}`)).status).toBe(200)
  })
})

describe('per-key rate limit', () => {
  test('over SERVICE_RATE_LIMIT a key gets 429 with Retry-After, other keys are unaffected, and it refills', async () => {
    const limited = await createTestContext({ SERVICE_RATE_LIMIT: '5' })
    try {
      for (let i = 0; i < 5; i++) expect((await limited.api.get('/forms')).status).toBe(200)
      const refused = await limited.api.get('/forms')
      expect(refused.status).toBe(429)
      expect(typeof refused.body.detail).toBe('string')
      const retryAfter = Number(refused.headers.get('retry-after'))
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true)
      const other = apiClient(limited.app, (await limited.createKey()).key)
      expect((await other.get('/forms')).status).toBe(200)
      limited.clock.advance(retryAfter * 1000)
      expect((await limited.api.get('/forms')).status).toBe(200)
    } finally {
      limited.close()
    }
  })

  test('SERVICE_RATE_LIMIT=0 turns it off', async () => {
    for (let i = 0; i < 50; i++) expect((await t.api.post('/forms', validForm())).status).toBe(201)
  })
})
