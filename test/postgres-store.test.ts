/**
 * The PostgreSQL store through the seam (src/stores.ts): what SQLite's
 * store answers (forms, files, keys), one account per name however many ask,
 * and the plans of the list queries. Each group of tests has a database of
 * its own. (Units of work sent together and the races PostgreSQL decides with
 * row locks: postgres-store-units.test.ts; delivery claims:
 * postgres-store-deliveries.test.ts; the pool under load, migrations and a
 * server that goes away: postgres-availability.test.ts.)
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import type { SQL } from 'bun'
import { describeDatabaseUrl, SESSION_SETTINGS } from '../src/db/postgres/connect.ts'
import type { Query } from '../src/db/postgres/driver.ts'
import { POSTGRES_SCHEMA_VERSION } from '../src/db/postgres/migrations.ts'
import { newId } from '../src/lib/ids.ts'
import type { NewForm } from '../src/modules/forms/store/index.ts'
import { createPostgresFormStore } from '../src/modules/forms/store/postgres.ts'
import { FILE_CHUNK_BYTES } from '../src/modules/responses/store/index.ts'
import type { PostgresStore } from '../src/stores.ts'
import { reportFigure } from './figures.ts'
import { formRecord, postgresFixtures, T0, within } from './postgres.ts'
import { POSTGRES, skipWithout, TEST_DATABASE_URL } from './prerequisites.ts'

/** Only a hang takes this long: how soon the store hears of a change is reported for bench/check-bounds.ts. */
const HANG_MS = 10_000

const skipPostgres = skipWithout(POSTGRES)
const { freshDatabase, groupStore, inspect } = postgresFixtures(TEST_DATABASE_URL)

describe.skipIf(skipPostgres)('the PostgreSQL store', () => {
  const group = groupStore()
  let store: PostgresStore
  let sql: SQL
  let account: string

  beforeAll(async () => {
    if (skipPostgres) return
    store = group.store
    sql = inspect(group.url)
    account = await store.transaction((tx) => tx.keys.ensureAccount(newId(), 'default', T0))
  })

  test("is at this build's schema, and says where it is without a password", async () => {
    expect(store.kind).toBe('postgres')
    expect(store.schemaVersion).toBe(POSTGRES_SCHEMA_VERSION)
    expect(store.location).toMatch(/^postgres:\/\/[^:@/]+@127\.0\.0\.1:\d+\/intake_pool_[0-9a-f]+_[0-9a-f]+$/)
    expect(
      describeDatabaseUrl('postgresql://alice:s3cret@db.example.com:6543/forms?sslmode=require&password=other'),
    ).toBe('postgres://alice@db.example.com:6543/forms')
    expect(describeDatabaseUrl('postgres://db.example.com/forms')).toBe('postgres://db.example.com/forms')
    expect(describeDatabaseUrl('postgres://al%40ice:p%40ss@[::1]:5432/x')).toBe('postgres://al%40ice@[::1]:5432/x')
    expect(describeDatabaseUrl('not a url:s3cret@')).not.toContain('s3cret')
  })

  test('a form comes back as it went in: free-form JSON byte for byte, fields parsed, times as numbers', async () => {
    const context = '{"b" : 1,\n "a":"é \\u0000 \\ud83d\\ude00", "n": 1.50}'
    const created = formRecord(account, {
      context,
      callbackMetadata: '{"x":[1,2]}',
      settings: '{ }',
      description: 'Two\nlines',
      expiresAt: T0 + 60_000,
    })
    await store.transaction((tx) => tx.forms.insert(created))
    const found = await store.forms.find(created.id, T0)
    expect(found).toEqual({ ...created, status: 'active' })
    expect(found!.context).toBe(context)
    expect(typeof found!.createdAt).toBe('number')
    const [row] = await sql`SELECT pg_typeof(created_at)::text AS type, context FROM forms WHERE id = ${created.id}`
    expect(row).toEqual({ type: 'bigint', context })
    expect(await store.forms.findForAccount(account, created.id, T0)).toEqual(found)
    expect(await store.forms.findForAccount(newId(), created.id, T0)).toBeUndefined()
    expect(await store.forms.find(newId(), T0)).toBeUndefined()
  })

  test('expiry is computed in every read: expired (without context) from expires_at on, whatever the sweep wrote', async () => {
    const f = formRecord(account, { context: '{"secret":1}', expiresAt: T0 + 1000 })
    await store.transaction((tx) => tx.forms.insert(f))
    const before = T0 + 999
    const at = T0 + 1000
    expect((await store.forms.find(f.id, before))!.status).toBe('active')
    expect(await store.forms.find(f.id, at)).toMatchObject({ status: 'expired', context: null })
    expect(await store.forms.findPublicState(f.id, at)).toEqual({
      id: f.id,
      title: f.title,
      status: 'expired',
      page: f.page,
    })
    expect(await store.forms.findStateForAccount(account, f.id, at)).toEqual({
      id: f.id,
      status: 'expired',
      expiresAt: T0 + 1000,
      context: null,
    })
    expect(await store.forms.findStateForAccount(account, f.id, before)).toEqual({
      id: f.id,
      status: 'active',
      expiresAt: T0 + 1000,
      context: '{"secret":1}',
    })
    expect(await store.transaction((tx) => tx.forms.complete(f.id, at))).toBe(false)
    // The sweep writes it for good: once, whichever sweep gets there.
    const expired = await Promise.all([0, 1, 2].map(() => store.transaction((tx) => tx.forms.expireDue(at, 500))))
    expect(expired.flat().filter((form) => form.id === f.id)).toEqual([
      {
        id: f.id,
        accountId: account,
        callbackUrl: null,
        callbackEvents: ['form.completed'],
        callbackMetadata: '{}',
        context: '{"secret":1}',
        expiresAt: T0 + 1000,
      },
    ])
    const [row] = await sql`SELECT status, context FROM forms WHERE id = ${f.id}`
    expect(row).toEqual({ status: 'expired', context: null })
  })

  test("lists walk an account's forms newest first, page by page, with every status filter", async () => {
    const owner = await store.transaction((tx) => tx.keys.ensureAccount(newId(), 'lists', T0))
    const made: NewForm[] = []
    for (let i = 0; i < 25; i++)
      made.push(formRecord(owner, { title: `form ${i}`, expiresAt: i % 5 === 0 ? T0 + 10 : null }))
    await store.transaction(async (tx) => {
      for (const f of made) await tx.forms.insert(f)
      await tx.forms.setStatus(made[1]!.id, 'cancelled', T0)
      await tx.forms.setStatus(made[2]!.id, 'expired', T0)
    })
    const now = T0 + 100
    const page = (status: Parameters<typeof store.forms.list>[0]['status'], before?: string, limit = 10) =>
      store.forms.list({ accountId: owner, status, before, limit, now })
    const newestFirst = made.map((f) => f.id).reverse()
    const first = await page(undefined)
    expect(first.map((f) => f.id)).toEqual(newestFirst.slice(0, 10))
    const second = await page(undefined, first.at(-1)!.id)
    expect(second.map((f) => f.id)).toEqual(newestFirst.slice(10, 20))
    expect((await page(undefined, second.at(-1)!.id)).map((f) => f.id)).toEqual(newestFirst.slice(20))
    expect(first[0]).toEqual({
      id: made[24]!.id,
      title: 'form 24',
      description: null,
      fieldsCount: 1,
      status: 'active',
      expiresAt: null,
      createdAt: T0,
    })

    const pastTime = new Set(made.filter((f) => f.expiresAt !== null).map((f) => f.id))
    const expired = (await page('expired', undefined, 50)).map((f) => f.id)
    expect(expired).toEqual(newestFirst.filter((id) => pastTime.has(id) || id === made[2]!.id))
    expect((await page('expired', expired[1], 50)).map((f) => f.id)).toEqual(expired.slice(2))
    expect((await page('expired', undefined, 2)).map((f) => f.id)).toEqual(expired.slice(0, 2))
    const active = (await page('active', undefined, 50)).map((f) => f.id)
    expect(active).toEqual(newestFirst.filter((id) => !pastTime.has(id) && id !== made[1]!.id && id !== made[2]!.id))
    expect((await page('cancelled')).map((f) => f.id)).toEqual([made[1]!.id])
    expect(await page('completed')).toEqual([])
    expect(await store.forms.nextExpiryAt()).toBeNumber()
  })
  test("a file's 512 KiB chunks come back byte for byte; unclaimed until an answer holds them, again once it is deleted", async () => {
    const fileId = newId()
    const chunks = [randomBytes(FILE_CHUNK_BYTES), randomBytes(FILE_CHUNK_BYTES), randomBytes(1234)]
    for (const [seq, bytes] of chunks.entries()) {
      await store.stagedTransaction((tx) => tx.responses.writeChunk(fileId, seq, new Uint8Array(bytes), T0 + 5))
    }
    for (const [seq, bytes] of chunks.entries()) {
      const back = await store.responses.chunk(fileId, seq)
      expect(back).toBeInstanceOf(Uint8Array)
      expect(Buffer.from(back!).equals(bytes)).toBe(true)
    }
    expect(await store.responses.chunk(fileId, 3)).toBeUndefined()
    const size = chunks.reduce((total, bytes) => total + bytes.length, 0)
    expect(await store.responses.incompleteFiles([{ fileId, size }])).toEqual([])
    expect(
      await store.responses.incompleteFiles([
        { fileId, size: size - 1 },
        { fileId: newId(), size: 0 },
      ]),
    ).toEqual([fileId])
    // Written at T0 + 5: not idle since T0 + 4.
    expect(await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(T0 + 4, 2))).toBe(false)

    const f = formRecord(account)
    const responseId = newId()
    await store.transaction(async (tx) => {
      await tx.forms.insert(f)
      expect(await tx.forms.complete(f.id, T0)).toBe(true)
      await tx.responses.insert(
        { id: responseId, formId: f.id, data: { doc: 'a.bin' }, ip: '127.0.0.1', userAgent: 'test', submittedAt: T0 },
        [{ fieldKey: 'doc', name: 'a.bin', contentType: 'application/octet-stream', size, fileId }],
      )
    })
    // Claimed: never removed, however long ago it was written.
    expect(await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(T0 + 5, 2))).toBe(false)
    expect(await store.responses.file(f.id, responseId, 'doc')).toEqual({
      name: 'a.bin',
      contentType: 'application/octet-stream',
      size,
      fileId,
    })
    expect(await store.responses.find(f.id, responseId)).toEqual({
      id: responseId,
      formId: f.id,
      data: { doc: 'a.bin' },
      ip: '127.0.0.1',
      userAgent: 'test',
      submittedAt: T0,
    })

    // Deleting the form takes the response and its file row; the trigger unclaims the chunks (since 0: at once).
    expect(await store.transaction((tx) => tx.forms.delete(account, f.id))).toBe(true)
    expect(await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(0, 2))).toBe(true)
    expect(await store.responses.chunk(fileId, 1)).toBeUndefined()
    expect(await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(0, 2))).toBe(true)
    expect(await store.responses.chunk(fileId, 2)).toBeUndefined()
    expect(await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(0, 2))).toBe(false)

    // Unclaimed at once (since 0) stays so, whatever chunk still lands; then it is forgotten.
    await store.transaction((tx) => tx.responses.unclaimFiles([fileId, fileId]))
    await store.stagedTransaction((tx) => tx.responses.writeChunk(fileId, 0, new Uint8Array(3), T0 + 9))
    expect(await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(0, 2))).toBe(true)
    expect(await store.responses.chunk(fileId, 0)).toBeUndefined()
    expect(await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(0, 2))).toBe(false)
  })

  test('the sweep leaves whole a file whose chunk is being written meanwhile, and one stamped since it looked', async () => {
    const fileId = newId()
    const chunkOf = async () =>
      (await sql`SELECT count(*)::int AS n FROM file_chunks WHERE file_id = ${fileId}`)[0].n as number
    await store.stagedTransaction((tx) => tx.responses.writeChunk(fileId, 0, new Uint8Array(10), T0 + 50))
    // A chunk arriving: its write holds the file's row, uncommitted, until told to commit.
    let commit!: () => void
    const committed = new Promise<void>((resolve) => (commit = resolve))
    let writing!: () => void
    const begun = new Promise<void>((resolve) => (writing = resolve))
    const write = sql.begin(async (tx) => {
      await tx`INSERT INTO file_chunks (file_id, seq, bytes) VALUES (${fileId}, 1, ${new Uint8Array(10)})`
      await tx`UPDATE unclaimed_files SET since = ${T0 + 70} WHERE file_id = ${fileId}`
      writing()
      await committed
    })
    await begun
    // The file looked idle since T0 + 50, but it is being written: the sweep passes it by without waiting.
    for (let i = 0; i < 5; i++)
      await within(
        5_000,
        store.stagedTransaction((tx) => tx.responses.removeIdleChunks(T0 + 60, 4)),
      )
    expect(await chunkOf()).toBe(1)
    commit()
    await write
    for (let i = 0; i < 5; i++) await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(T0 + 60, 4))
    expect(await chunkOf()).toBe(2)
    // Idle since its last chunk: then it goes.
    while (await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(T0 + 70, 4))) {}
    expect(await chunkOf()).toBe(0)
  })

  test('webhook targets of many forms in one query; accounts are made once however many ask at once', async () => {
    const withHook = formRecord(account, { callbackUrl: 'https://example.com/hook', webhookSecret: 'a'.repeat(64) })
    const without = formRecord(account)
    await store.transaction(async (tx) => {
      await tx.forms.insert(withHook)
      await tx.forms.insert(without)
    })
    const targets = await store.forms.webhookTargets([withHook.id, without.id, withHook.id, newId()])
    expect([...targets]).toEqual([[withHook.id, { accountId: account, secret: 'a'.repeat(64) }]])
    expect((await store.forms.webhookTargets([])).size).toBe(0)

    const ids = await Promise.all(
      Array.from({ length: 20 }, () => store.transaction((tx) => tx.keys.ensureAccount(newId(), 'raced', T0))),
    )
    expect(new Set(ids).size).toBe(1)
  })

  test('keys: found by hash, listed, touched, revoked once; keysVersion holds while its channel is heard and no key changes', async () => {
    const id = newId()
    await store.transaction((tx) =>
      tx.keys.insertKey({ id, accountId: account, hash: 'f'.repeat(64), hint: 'wxyz', createdAt: T0 }),
    )
    expect(await store.keys.keyByHash('f'.repeat(64))).toEqual({
      id,
      accountId: account,
      lastUsedAt: null,
      revokedAt: null,
    })
    expect(await store.keys.usableKeyExists()).toBe(true)
    await store.transaction((tx) => tx.keys.touch(id, T0 + 7))
    expect(await store.keys.listKeys()).toContainEqual({
      id,
      account: 'default',
      hint: 'wxyz',
      createdAt: T0,
      lastUsedAt: T0 + 7,
      revokedAt: null,
    })
    expect(await store.transaction((tx) => tx.keys.revoke(id, T0 + 8))).toBe(true)
    expect(await store.transaction((tx) => tx.keys.revoke(id, T0 + 9))).toBe(false)
    expect((await store.keys.keyByHash('f'.repeat(64)))!.revokedAt).toBe(T0 + 8)
    expect(await store.keys.keyExists(id)).toBe(true)
    expect(await store.keys.keyExists(newId())).toBe(false)
    // Until the store hears its notification channel, nothing may be remembered: a new value every call.
    expect(await store.keys.keysVersion()).not.toBe(await store.keys.keysVersion())
    const heldFor = async (ms: number) => {
      const version = await store.keys.keysVersion()
      await Bun.sleep(ms)
      return (await store.keys.keysVersion()) === version
    }
    const startedAt = performance.now()
    while (!(await heldFor(50))) expect(performance.now() - startedAt).toBeLessThan(HANG_MS)
    reportFigure('keys version held once listening (ms)', 'the first heartbeat', performance.now() - startedAt)
    // Held across heartbeats (every 250 ms) while no key changes; a key written (here, by this store) changes it.
    expect(await heldFor(600)).toBe(true)
    const before = await store.keys.keysVersion()
    await store.transaction((tx) =>
      tx.keys.insertKey({ id: newId(), accountId: account, hash: 'e'.repeat(64), hint: 'abcd', createdAt: T0 }),
    )
    const changedAt = performance.now()
    while ((await store.keys.keysVersion()) === before) {
      expect(performance.now() - changedAt).toBeLessThan(HANG_MS)
      await Bun.sleep(5)
    }
    reportFigure('keys version changed, heard after (ms)', 'a key written', performance.now() - changedAt)
  })
})

describe.skipIf(skipPostgres)('query plans', () => {
  /** Every statement a call makes, with its parameters, without running it. */
  async function statementsOf(call: (query: Query) => Promise<unknown>): Promise<Array<[string, unknown[]]>> {
    const seen: Array<[string, unknown[]]> = []
    const query = (async (text: string, params: unknown[] = []) => {
      seen.push([text, params])
      return Object.assign([], { count: 0 })
    }) as Query
    await call(query).catch(() => {})
    return seen
  }

  test("form lists walk an account's index, never the table nor every form by id, beside 20,000 forms of another account", async () => {
    const database = await freshDatabase()
    // One connection set up as the store's are; each statement prepared as Bun prepares it, and run as it is the sixth time.
    const sql = inspect(database.url, { max: 1, connection: SESSION_SETTINGS })
    await sql.unsafe(`INSERT INTO accounts (id, name, created_at) VALUES ('A', 'big', 0), ('B', 'small', 0)`)
    await sql.unsafe(`INSERT INTO forms (id, account_id, title, fields, fields_count, callback_metadata, settings, status, expires_at, created_at, updated_at)
      SELECT lpad(to_hex(i), 26, '0'), CASE WHEN i % 2000 = 0 THEN 'B' ELSE 'A' END, 'f', '[]', 0, '{}', '{}',
        (ARRAY['active', 'completed', 'expired', 'cancelled'])[i % 4 + 1], CASE WHEN i % 4 = 0 THEN ${T0} + i ELSE NULL END, 0, 0
      FROM generate_series(1, 20000) i`)
    await sql.unsafe('ANALYZE forms')
    const statements = await statementsOf(async (query) => {
      const forms = createPostgresFormStore(query)
      for (const status of [undefined, 'active', 'expired', 'completed'] as const) {
        await forms.list({ accountId: 'B', status, before: undefined, limit: 50, now: T0 + 25_000 })
        await forms.list({ accountId: 'B', status, before: '00000000000000000000004000', limit: 50, now: T0 + 25_000 })
      }
      await forms.nextExpiryAt()
    })
    expect(statements).toHaveLength(9)
    const literal = (value: unknown) => (typeof value === 'string' ? `'${value}'` : String(value))
    for (const [text, params] of statements) {
      await sql.unsafe(`PREPARE listed AS ${text}`)
      for (let run = 0; run < 5; run++)
        await sql.unsafe(`EXECUTE listed${params.length ? `(${params.map(literal).join(', ')})` : ''}`)
      const [{ 'QUERY PLAN': plan }] = await sql.unsafe(
        `EXPLAIN (FORMAT JSON) EXECUTE listed${params.length ? `(${params.map(literal).join(', ')})` : ''}`,
      )
      await sql.unsafe('DEALLOCATE listed')
      const nodes: Array<Record<string, unknown>> = []
      const walk = (node: Record<string, unknown>) => {
        nodes.push(node)
        for (const child of (node.Plans as Array<Record<string, unknown>>) ?? []) walk(child)
      }
      walk(plan[0].Plan)
      const onForms = nodes.filter((node) => node['Relation Name'] === 'forms')
      expect(onForms.length).toBeGreaterThan(0)
      for (const node of onForms) {
        expect(node['Node Type']).not.toBe('Seq Scan')
        // The primary key only to look up ids the expiry index found, never to walk all forms in id order.
        if (node['Index Name'] === 'forms_pkey') expect(String(node['Index Cond'])).toMatch(/^\(id = /)
      }
    }
  }, 30_000)
})
