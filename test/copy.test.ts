/**
 * `intake copy FROM TO`, `intake backup` on PostgreSQL and `intake migrate`
 * (CONTRACT 9): every row of every table arrives, files byte for byte; FROM
 * is one snapshot while a server writes to it; TO is refused untouched unless
 * empty, and an interrupted copy leaves it empty; pending deliveries resume on
 * TO; a PostgreSQL password is never printed; events keep their ids, so an
 * agent's feed cursor reads on from the same place on TO, and TO's new events
 * come after every copied one. SQLite to SQLite always;
 * PostgreSQL both ways where INTAKE_TEST_DATABASE_URL names a server.
 * Everything runs on 127.0.0.1.
 */

import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { copyData } from '../src/db/copy/index.ts'
import { COPIED_TABLES } from '../src/db/copy/sides.ts'
import { POSTGRES_SCHEMA_VERSION } from '../src/db/postgres/migrations.ts'
import { openDatabase } from '../src/db/sqlite/open.ts'
import {
  type CommandResult,
  childEnv,
  killAllChildren,
  type RunningIntake,
  request,
  runIntake,
  startIntake,
  useBuiltBinary,
} from './e2e/binary.ts'
import { postgresFixtures } from './postgres.ts'
import { POSTGRES, skipWithout, TEST_DATABASE_URL } from './prerequisites.ts'
import {
  apiClient,
  createTestContext,
  EVERY_TYPE_ANSWERS,
  EVERY_TYPE_FIELDS,
  postForm,
  submit,
  type TestContext,
  until,
} from './utils.ts'

const STEP_TIMEOUT = 60_000

const intake = useBuiltBinary('intake-copy-')
const skipPostgres = skipWithout(POSTGRES)
const pg = postgresFixtures(TEST_DATABASE_URL)

// ---------------------------------------------------------------------------
// Reading a database back, whichever store it is

/**
 * Every row of every copied table as sorted JSON lines: bytes as hex, int8 as
 * numbers, SQLite's legacy content column and PostgreSQL's events.tx (the
 * writing transaction's id, '0' for events copied in) left out.
 */
async function dump(location: string): Promise<Record<string, string[]>> {
  const tables: Record<string, string[]> = {}
  const line = (row: Record<string, unknown>, bigints: Set<string> = new Set()) =>
    JSON.stringify(
      Object.keys(row)
        .filter((column) => column !== 'content' && column !== 'tx')
        .sort()
        .map((column) => {
          const value = row[column]
          if (value instanceof Uint8Array) return [column, Buffer.from(value).toString('hex')]
          return [column, bigints.has(column) && value !== null ? Number(value) : value]
        }),
    )
  if (location.startsWith('postgres')) {
    const sql = new SQL(location, { max: 1 })
    try {
      const types = await sql.unsafe(
        `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND data_type = 'bigint'`,
      )
      for (const table of COPIED_TABLES) {
        const bigints = new Set<string>(
          types
            .filter((t: { table_name: string }) => t.table_name === table)
            .map((t: { column_name: string }) => t.column_name),
        )
        tables[table] = (await sql.unsafe(`SELECT * FROM ${table}`))
          .map((row: Record<string, unknown>) => line(row, bigints))
          .sort()
      }
    } finally {
      await sql.close()
    }
    return tables
  }
  const db = new Database(location, { strict: true })
  try {
    for (const table of COPIED_TABLES)
      tables[table] = (db.query(`SELECT * FROM ${table}`).all() as Array<Record<string, unknown>>)
        .map((row) => line(row))
        .sort()
  } finally {
    db.close()
  }
  return tables
}

const countsOf = async (location: string) =>
  Object.fromEntries(Object.entries(await dump(location)).map(([table, rows]) => [table, rows.length]))
const noRows = Object.fromEntries(COPIED_TABLES.map((table) => [table, 0]))

/** One line on stderr, no stack trace, exit code 2. */
function expectRefused(result: CommandResult, pattern: RegExp) {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(pattern) })
  expect(result.stderr.trim().split('\n')).toHaveLength(1)
  expect(result.stderr).not.toMatch(/^\s+at\s|\.(ts|js):\d+/m)
}

/** A webhook receiver on 127.0.0.1 answering `status`. */
function receiver(status = 200) {
  const received: Array<{ delivery: string; body: string }> = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      received.push({ delivery: req.headers.get('x-service-delivery') ?? '', body: await req.text() })
      return new Response('ok', { status })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/hook`, received, stop: () => server.stop(true) }
}

// ---------------------------------------------------------------------------
// A database filled through the app, with a row in every table

interface Filled {
  /** A pending delivery, and the receiver it goes to once a server runs. */
  pendingDelivery: string
  pendingReceiver: ReturnType<typeof receiver>
  /** A file as uploaded, and its path under /api/v1 (with the default key). */
  fileBytes: Uint8Array
  filePath: string
}

const FILE_FIELD = { key: 'doc', type: 'file', label: 'Document', config: { max_size: 3_000_000 } }

/**
 * Two accounts, a revoked key and used ones, forms in every state, an
 * idempotency record, answers with a 1.3 MB file (three chunks) and an empty
 * one, unclaimed chunks (a deleted form's), deliveries delivered, failed and pending.
 */
async function fillThroughTheApp(t: TestContext): Promise<Filled> {
  const delivered = receiver(200)
  const failing = receiver(500)
  const research = await t.createKey('research')
  await t.revokeKey((await t.createKey('retired')).id)
  const researchApi = apiClient(t.app, research.key)
  await researchApi.createForm({ title: 'Another account', context: { agent: 'r' } })
  await t.api.createForm({ title: 'Left open', expires_in: '7d', settings: {} })
  const cancelled = await t.api.createForm({ title: 'Cancelled' })
  expect((await t.api.patch(`/forms/${cancelled.id}`, { status: 'cancelled' })).status).toBe(200)
  const once = await t.api.post(
    '/forms',
    { title: 'Made once', fields: [{ key: 'x', type: 'text', label: 'X' }] },
    { 'idempotency-key': 'create-once' },
  )
  expect(once.status).toBe(201)

  const fileBytes = new Uint8Array(randomBytes(1_300_000))
  const answer = async (callbackUrl: string, file: Uint8Array) => {
    const form = await t.api.createForm({
      fields: [...EVERY_TYPE_FIELDS.filter((f) => f.type !== 'file'), FILE_FIELD],
      callback_url: callbackUrl,
      callback_metadata: { run: 7 },
      context: { step: 'answer' },
    })
    const body = new FormData()
    for (const [key, value] of Object.entries(EVERY_TYPE_ANSWERS)) body.set(key, String(value))
    body.set('doc', new File([file], 'report.bin', { type: 'application/octet-stream' }))
    const posted = await postForm(t.app, form.id, body)
    expect(posted.status).toBeLessThan(400)
    return form.id
  }
  // Delivered and failed (no retries: SERVICE_WEBHOOK_MAX_RETRIES=0), while the background runs.
  t.background.start()
  const withFile = await answer(delivered.url, fileBytes)
  await answer(failing.url, new Uint8Array(randomBytes(600_000)))
  await until(() => delivered.received.length === 1 && failing.received.length === 1, 10_000, 'two webhook attempts')
  await until(
    async () => (await t.sql(`SELECT count(*) AS n FROM deliveries WHERE status = 'pending'`))[0]!.n === 0,
    10_000,
    'both deliveries settled',
  )
  await t.background.stop()
  delivered.stop()
  failing.stop()

  // Pending: its receiver is up, but no server sends until one runs on the copy.
  const pendingReceiver = receiver(200)
  const pendingForm = await answer(pendingReceiver.url, new Uint8Array(0))
  const gone = await answer(pendingReceiver.url, new Uint8Array(randomBytes(700_000)))
  expect((await t.api.delete(`/forms/${gone}`)).status).toBe(204)
  // A file kept across a 422 (a required field left empty) for the next try; the answers above left receipts.
  const held = await t.api.createForm({
    title: 'Held',
    fields: [{ key: 'name', type: 'text', label: 'Name', required: true }, FILE_FIELD],
  })
  const refused = new FormData()
  refused.set('name', '')
  refused.set('doc', new File([new Uint8Array(randomBytes(1000))], 'kept.bin', { type: 'application/octet-stream' }))
  expect((await postForm(t.app, held.id, refused)).status).toBe(422)
  // A post waiting on its "Check your answers" page: a draft.
  const reviewed = await t.api.createForm({
    title: 'Reviewed',
    fields: [{ key: 'name', type: 'text', label: 'Name' }],
    page: { review: true },
  })
  expect((await postForm(t.app, reviewed.id, { name: 'Ada' })).status).toBe(200)
  const [pending] = await t.sql(`SELECT id FROM deliveries WHERE form_id = ? AND status = 'pending'`, pendingForm)
  const [file] = (await t.api.get(`/forms/${withFile}/responses`)).body as Array<{ id: string; data: { doc: string } }>
  return { pendingDelivery: pending!.id, pendingReceiver, fileBytes, filePath: new URL(file!.data.doc).pathname }
}

/** Every table holds rows, and the kinds of row the contract names. */
async function expectEveryKindOfRow(location: string) {
  const counts = await countsOf(location)
  for (const table of COPIED_TABLES) expect({ table, some: counts[table]! > 0 }).toEqual({ table, some: true })
  const rows = await dump(location)
  const has = (table: string, pattern: RegExp) =>
    expect({ table, pattern: String(pattern), found: rows[table]!.some((r) => pattern.test(r)) }).toEqual({
      table,
      pattern: String(pattern),
      found: true,
    })
  has('api_keys', /"revoked_at",\d/)
  has('api_keys', /"last_used_at",\d/)
  for (const status of ['delivered', 'failed', 'pending']) has('deliveries', new RegExp(`"status","${status}"`))
  has('deliveries', /"next_attempt_at",\d/)
}

// ---------------------------------------------------------------------------

describe('a copy holds every row of every table, and serves', () => {
  let t: TestContext
  let filled: Filled
  let source: string
  let dir: string

  beforeAll(async () => {
    t = await createTestContext({ SERVICE_WEBHOOK_MAX_RETRIES: '0' })
    filled = await fillThroughTheApp(t)
    source = t.store.location
    dir = intake.tempDir()
  }, STEP_TIMEOUT)

  afterAll(async () => {
    filled?.pendingReceiver.stop()
    await t?.close()
    await killAllChildren()
  })

  test(
    'to a new SQLite file: every table equal, file bytes equal, the file private',
    async () => {
      await expectEveryKindOfRow(source)
      const target = join(dir, 'new', 'copy.db')
      const seen: Array<{ phase: string; rows: number; bytes: number }> = []
      const summary = await copyData(source, target, { progress: (p) => seen.push(p) })
      expect(await dump(target)).toEqual(await dump(source))
      expect(statSync(target).mode & 0o777).toBe(0o600)
      expect(summary.rows.forms).toBe((await countsOf(source)).forms!)
      expect(summary.bytes).toBe(1_300_000 + 600_000 + 700_000 + 1000)
      expect(seen.at(-1)).toMatchObject({ phase: 'check', bytes: summary.bytes, totalBytes: summary.bytes })
      expect(seen.some((p) => p.phase === 'copy' && p.rows === summary.totalRows && p.bytes === summary.bytes)).toBe(
        true,
      )
    },
    STEP_TIMEOUT,
  )

  test(
    'intake copy prints its summary; a server on TO sends the pending delivery and serves the file',
    async () => {
      const target = join(dir, 'served.db')
      const result = await runIntake(intake.path, ['copy', source, target], { cwd: dir })
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
      const n = await countsOf(source)
      expect(result.stdout).toBe(
        `Copied ${n.accounts} accounts, ${n.api_keys} keys, ${n.forms} forms, ${n.responses} responses, ${n.response_files} files (2.6 MB), ` +
          `${n.deliveries} deliveries, 1 idempotency record and ${n.events} events from ${source} to ${target}; the counts and every file's bytes were checked.\n`,
      )
      const server = await startIntake(intake.path, { cwd: dir, args: ['serve', '--port', '0', '--db', target] })
      try {
        expect(server.apiKey).toBeUndefined()
        await until(
          () => filled.pendingReceiver.received.length > 0,
          20_000,
          'the pending delivery to arrive from the copy',
        )
        expect(filled.pendingReceiver.received[0]!.delivery).toBe(filled.pendingDelivery)
        const file = await fetch(`${server.url}${filled.filePath}`, { headers: { authorization: `Bearer ${t.key}` } })
        expect(file.status).toBe(200)
        expect(Buffer.from(await file.arrayBuffer()).equals(Buffer.from(filled.fileBytes))).toBe(true)
      } finally {
        expect(await server.stop()).toBe(0)
      }
    },
    STEP_TIMEOUT,
  )

  test.skipIf(skipPostgres)(
    'to PostgreSQL (empty, or with an empty schema) and back to SQLite: every table equal',
    async () => {
      const sqliteCopy = join(dir, 'for-postgres.db')
      await copyData(source, sqliteCopy)
      const expected = await dump(sqliteCopy)
      for (const migrated of [false, true]) {
        const database = await pg.freshDatabase(migrated)
        await copyData(sqliteCopy, database.url)
        expect(await dump(database.url)).toEqual(expected)
        const back = join(dir, `back-${migrated}.db`)
        await copyData(database.url, back)
        expect(await dump(back)).toEqual(expected)
      }
    },
    STEP_TIMEOUT,
  )

  test.skipIf(skipPostgres)(
    'a server on a PostgreSQL TO sends a pending delivery copied from SQLite',
    async () => {
      const rx = receiver(200)
      const from = join(dir, 'pending.db')
      const form = await t.api.createForm({ callback_url: rx.url })
      expect((await postForm(t.app, form.id, { name: 'Ada' })).status).toBeLessThan(400)
      const [pending] = await t.sql(`SELECT id FROM deliveries WHERE form_id = ?`, form.id)
      await copyData(source, from)
      const database = await pg.freshDatabase(false)
      const result = await runIntake(intake.path, ['copy', from, database.url], { cwd: dir })
      expect(result.code).toBe(0)
      const server = await startIntake(intake.path, {
        cwd: dir,
        args: ['serve', '--port', '0', '--database-url', database.url],
      })
      try {
        await until(() => rx.received.length > 0, 20_000, 'the pending delivery to arrive from PostgreSQL')
        expect(rx.received[0]!.delivery).toBe(pending!.id)
      } finally {
        expect(await server.stop()).toBe(0)
        rx.stop()
      }
    },
    STEP_TIMEOUT,
  )
})

// ---------------------------------------------------------------------------
// The account's event feed (CONTRACT 12) across a copy: what an agent holds is an event id or a cursor

interface FeedEvent {
  id: string
  type: string
  form_id: string
  occurred_at: string
  payload: Record<string, unknown>
}
interface FeedPage {
  events: FeedEvent[]
  next: string
}
/** One read of GET /api/v1/events with `query`; fails unless it is a 200. */
type Feed = (query: string) => Promise<FeedPage>

const feedOf =
  (api: TestContext['api']): Feed =>
  async (query) => {
    const res = await api.get(`/events${query}`)
    expect(res.status).toBe(200)
    return res.body
  }

const feedAt =
  (server: RunningIntake, key: string): Feed =>
  async (query) => {
    const res = await request(`${server.url}/api/v1/events${query}`, { key })
    expect(res.status).toBe(200)
    return res.body
  }

/** Every event of the account from the oldest kept, following `next` two at a time (paging is part of what must carry over). */
async function wholeFeed(feed: Feed): Promise<FeedEvent[]> {
  const events: FeedEvent[] = []
  for (let page = await feed('?limit=2'); page.events.length > 0; page = await feed(`?after=${page.next}&limit=2`))
    events.push(...page.events)
  return events
}

/** The feed once it holds `n` events. */
async function settledFeed(feed: Feed, n: number): Promise<FeedEvent[]> {
  await until(
    async () => (await wholeFeed(feed)).length === n,
    10_000,
    `${n} events in the feed`,
    () => wholeFeed(feed),
  )
  return wholeFeed(feed)
}

const kinds = (events: FeedEvent[]) => events.map((event) => [event.type, event.form_id])
const DAY_MS = 86_400_000

/** `intake copy FROM TO` (a new SQLite file or an empty PostgreSQL database), then `intake serve` on TO. */
async function copyAndServe(from: string, to: 'sqlite' | 'postgres'): Promise<{ server: RunningIntake }> {
  const dir = intake.tempDir()
  const target = to === 'sqlite' ? join(dir, 'to.db') : (await pg.freshDatabase(false)).url
  const copied = await runIntake(intake.path, ['copy', from, target], { cwd: dir })
  expect({ code: copied.code, stderr: copied.stderr }).toEqual({ code: 0, stderr: '' })
  if (to === 'postgres') {
    // Copied events are readable at once on TO: none carries FROM's transaction id.
    const sql = new SQL(target, { max: 1 })
    try {
      for (const row of await sql.unsafe('SELECT tx::text AS tx FROM events')) expect(row.tx).toBe('0')
    } finally {
      await sql.close()
    }
  }
  const server = await startIntake(intake.path, {
    cwd: dir,
    args: ['serve', '--port', '0', ...(to === 'sqlite' ? ['--db', target] : ['--database-url', target])],
  })
  return { server }
}

/** Cancels a form through TO's API, as an agent would. */
async function cancelOn(server: RunningIntake, key: string, formId: string) {
  const res = await request(`${server.url}/api/v1/forms/${formId}`, {
    method: 'PATCH',
    key,
    body: { status: 'cancelled' },
  })
  expect(res.status).toBe(200)
}

describe("events keep their ids: a cursor from FROM reads on from the same place on TO, and TO's new events come after", () => {
  afterAll(killAllChildren)
  const routes = [
    { from: 'sqlite', to: 'sqlite' },
    { from: 'sqlite', to: 'postgres' },
    { from: 'postgres', to: 'sqlite' },
    { from: 'postgres', to: 'postgres' },
  ] as const
  for (const { from, to } of routes) {
    const skip = (from === 'postgres' || to === 'postgres') && skipPostgres

    test.skipIf(skip)(
      `${from} to ${to}: the same feed, ids and payloads; after= a cursor gives the same events; a new ending comes last`,
      async () => {
        const t = await createTestContext({}, { store: from })
        let server: RunningIntake | undefined
        try {
          const cancelled = await t.api.createForm({ title: 'Cancelled', context: { step: 1 } })
          expect((await t.api.patch(`/forms/${cancelled.id}`, { status: 'cancelled' })).status).toBe(200)
          const answered = await t.api.createForm({ title: 'Answered', callback_metadata: { run: 7 } })
          expect((await submit(t.app, answered.id, { name: 'Ada' })).status).toBe(201)
          const deleted = await t.api.createForm({ title: 'Answered, then deleted' })
          expect((await submit(t.app, deleted.id, { name: 'Grace' })).status).toBe(201)
          expect((await t.api.delete(`/forms/${deleted.id}`)).status).toBe(204)
          const alsoCancelled = await t.api.createForm({ title: 'Cancelled too' })
          expect((await t.api.patch(`/forms/${alsoCancelled.id}`, { status: 'cancelled' })).status).toBe(200)
          // Left open on FROM, cancelled on TO after the copy.
          const later = await t.api.createForm({ title: 'Cancelled on TO' })

          const source = feedOf(t.api)
          const before = await settledFeed(source, 4)
          expect(kinds(before)).toEqual([
            ['form.cancelled', cancelled.id],
            ['form.completed', answered.id],
            ['form.deleted', deleted.id],
            ['form.cancelled', alsoCancelled.id],
          ])
          // An agent has read up to the answer and holds its id as its cursor.
          const cursor = before[1]!.id
          const afterCursor = await source(`?after=${cursor}`)
          expect(afterCursor.events).toEqual(before.slice(2))

          ;({ server } = await copyAndServe(t.store.location, to))
          const moved = feedAt(server, t.key)
          expect(await wholeFeed(moved)).toEqual(before)
          expect(await moved(`?after=${cursor}`)).toEqual(afterCursor)
          const last = before.at(-1)!.id
          expect(await moved(`?after=${last}`)).toEqual({ events: [], next: last })

          await cancelOn(server, t.key, later.id)
          // Waits for the event (wait returns as soon as it is readable), then the whole feed as an agent sees it.
          const fresh = await moved(`?after=${last}&wait=10`)
          expect(kinds(fresh.events)).toEqual([['form.cancelled', later.id]])
          expect(fresh.next).toBe(fresh.events[0]!.id)
          expect(before.map((event) => event.id)).not.toContain(fresh.next)
          expect(await moved(`?after=${cursor}`)).toEqual({
            events: [...before.slice(2), fresh.events[0]!],
            next: fresh.next,
          })
          expect(await wholeFeed(moved)).toEqual([...before, fresh.events[0]!])
        } finally {
          if (server) expect(await server.stop()).toBe(0)
          await t.close()
        }
      },
      STEP_TIMEOUT,
    )

    test.skipIf(skip)(
      `${from} to ${to}: a cursor at an event since swept from FROM still hears TO's next event`,
      async () => {
        const t = await createTestContext({}, { store: from })
        let server: RunningIntake | undefined
        try {
          const first = await t.api.createForm({ title: 'Cancelled, then swept' })
          expect((await t.api.patch(`/forms/${first.id}`, { status: 'cancelled' })).status).toBe(200)
          const source = feedOf(t.api)
          const [held] = await settledFeed(source, 1)
          // Eight days on, the background loop sweeps the event; the agent still holds its id.
          t.clock.advance(8 * DAY_MS)
          t.background.start()
          await until(async () => (await wholeFeed(source)).length === 0, 10_000, 'the event to be swept')
          await t.background.stop()
          expect(await source(`?after=${held!.id}`)).toEqual({ events: [], next: held!.id })
          const later = await t.api.createForm({ title: 'Cancelled on TO' })

          ;({ server } = await copyAndServe(t.store.location, to))
          const moved = feedAt(server, t.key)
          expect(await wholeFeed(moved)).toEqual([])
          await cancelOn(server, t.key, later.id)
          const heard = await moved(`?after=${held!.id}&wait=10`)
          expect(kinds(heard.events)).toEqual([['form.cancelled', later.id]])
        } finally {
          if (server) expect(await server.stop()).toBe(0)
          await t.close()
        }
      },
      STEP_TIMEOUT,
    )
  }
})

// ---------------------------------------------------------------------------
// Large databases, written straight in SQL: the copies that take a while

/** A key the bulk databases register, so a server started on them prints none. */
const BULK_KEY = `svc_live_${'c'.repeat(48)}`

/**
 * `forms` answered forms (each with a delivery) of the default account and
 * `files` files of two 512 KiB chunks, in a new SQLite file at intake's schema.
 */
function bulkDatabase(path: string, forms: number, files: number): void {
  const db = openDatabase(path)
  try {
    db.transaction(() => {
      db.run(`INSERT INTO accounts VALUES ('01BULKACCOUNT0000000000000', 'default', 1700000000000)`)
      db.run(
        `INSERT INTO api_keys VALUES ('01BULKKEY00000000000000000', '01BULKACCOUNT0000000000000', ?, 'cccc', 1700000000000, NULL, NULL)`,
        [createHash('sha256').update(BULK_KEY).digest('hex')],
      )
      db.run(`WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i WHERE x < ${forms})
        INSERT INTO forms SELECT printf('00BULKFORM%016d', x), '01BULKACCOUNT0000000000000', 'Bulk ' || x, NULL,
          '[{"key":"name","type":"text","label":"Name"}]', 1, 'http://127.0.0.1:9/hook', '{}', '${'b'.repeat(64)}', NULL, '{}', 'completed', NULL, 1700000000000 + x, 1700000000000 + x, '{}', '["form.completed"]' FROM i`)
      db.run(
        `INSERT INTO responses SELECT printf('00BULKRESP%016d', rowid), id, '{"name":"Ada ' || rowid || '"}', '127.0.0.1', 'bulk', created_at FROM forms WHERE id LIKE '00BULK%'`,
      )
      db.run(
        `INSERT INTO deliveries SELECT printf('00BULKDLVR%016d', rowid), form_id, id, 'form.completed', 'http://127.0.0.1:9/hook', data, 'delivered', 1, 1, NULL, NULL, 200, NULL, submitted_at, submitted_at FROM responses WHERE id LIKE '00BULK%'`,
      )
      db.run(`WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i WHERE x < ${files})
        INSERT INTO file_chunks SELECT printf('bulkfile%08d', x), s.seq, randomblob(524288) FROM i, (SELECT 0 AS seq UNION ALL SELECT 1) s`)
      db.run(
        `INSERT INTO unclaimed_files SELECT DISTINCT file_id, 1700000000000 FROM file_chunks WHERE file_id LIKE 'bulkfile%'`,
      )
    })()
  } finally {
    db.close()
  }
}

describe('FROM is one snapshot while a server writes to it', () => {
  const kinds = [
    { kind: 'sqlite', skip: false },
    { kind: 'postgres', skip: skipPostgres },
  ]
  for (const { kind, skip } of kinds) {
    test.skipIf(skip)(
      `${kind}: the copy holds the writes acknowledged before it began and none torn after`,
      async () => {
        const dir = intake.tempDir()
        const bulk = join(dir, 'bulk.db')
        bulkDatabase(bulk, 10_000, 30)
        let from = bulk
        let serveArgs = ['--db', bulk]
        if (kind === 'postgres') {
          from = (await pg.freshDatabase(false)).url
          await copyData(bulk, from)
          serveArgs = ['--database-url', from]
        }
        const server = await startIntake(intake.path, {
          cwd: dir,
          args: ['serve', '--port', '0', ...serveArgs],
          env: { SERVICE_RATE_LIMIT: '0', SERVICE_PUBLIC_RATE_LIMIT: '0' },
        })
        const created: Array<{ id: string; name: string }> = []
        let copying = true
        const writer = (async () => {
          for (let i = 0; copying; i++) {
            const form = await request(`${server.url}/api/v1/forms`, {
              key: BULK_KEY,
              body: { title: `Live ${i}`, fields: [{ key: 'name', type: 'text', label: 'Name' }, FILE_FIELD] },
            })
            expect(form.status).toBe(201)
            created.push({ id: form.body.id, name: `Ada ${i}` })
            const body = new FormData()
            body.set('name', `Ada ${i}`)
            body.set('doc', new File([randomBytes(600_000)], 'a.bin'))
            expect((await fetch(`${server.url}/f/${form.body.id}`, { method: 'POST', body })).status).toBeLessThan(400)
          }
        })()
        try {
          await until(() => created.length >= 3, 20_000, 'the first writes')
          const result = await runIntake(intake.path, ['copy', from, join(dir, 'snapshot.db')], {
            cwd: dir,
            timeoutMs: 120_000,
          })
          copying = false
          await writer
          expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
        } finally {
          copying = false
          await writer.catch(() => {})
          expect(await server.stop()).toBe(0)
        }
        const copy = new Database(join(dir, 'snapshot.db'), { strict: true })
        try {
          const ids = new Set(
            (copy.query(`SELECT id FROM forms WHERE title LIKE 'Live %'`).all() as Array<{ id: string }>).map(
              (r) => r.id,
            ),
          )
          // The live forms in the copy are the first k created, and FROM went on taking more.
          const k = ids.size
          expect(created.slice(0, k).every((form) => ids.has(form.id))).toBe(true)
          expect(k).toBeGreaterThanOrEqual(3)
          expect(created.length).toBeGreaterThan(k)
          // Each answered form has its whole answer: the response, its file row, every chunk; each answer its form completed.
          const answered = copy
            .query(
              `SELECT f.id, f.status, r.data, rf.size, (SELECT coalesce(sum(length(bytes)), 0) FROM file_chunks c WHERE c.file_id = rf.file_id) AS stored
             FROM forms f JOIN responses r ON r.form_id = f.id JOIN response_files rf ON rf.response_id = r.id WHERE f.title LIKE 'Live %'`,
            )
            .all() as Array<{ id: string; status: string; data: string; size: number; stored: number }>
          for (const row of answered) {
            expect(row).toMatchObject({ status: 'completed', size: 600_000, stored: 600_000 })
            expect(JSON.parse(row.data).name).toBe(created.find((form) => form.id === row.id)!.name)
          }
          const unanswered = copy
            .query(`SELECT id FROM forms WHERE title LIKE 'Live %' AND id NOT IN (SELECT form_id FROM responses)`)
            .all() as Array<{ id: string }>
          // Only the last form taken may be waiting for its answer: every earlier one was answered before the next was made.
          expect(unanswered.map((r) => r.id).filter((id) => id !== created[k - 1]!.id)).toEqual([])
          expect(
            (
              copy
                .query(
                  `SELECT count(*) AS n FROM forms WHERE status = 'completed' AND id NOT IN (SELECT form_id FROM responses)`,
                )
                .get() as { n: number }
            ).n,
          ).toBe(0)
        } finally {
          copy.close()
        }
      },
      180_000,
    )
  }
})

/** Runs the executable on a terminal of its own (progress shows there); the output as it arrives. */
function onTerminal(args: string[], cwd: string) {
  let output = ''
  const proc = Bun.spawn([intake.path, ...args], {
    cwd,
    env: childEnv(),
    terminal: { cols: 200, data: (_, data) => (output += new TextDecoder().decode(data)) },
  })
  return { proc, output: () => output }
}

describe('a copy killed with SIGKILL half-way leaves TO empty', () => {
  let dir: string
  let from: string
  const cleanups: Array<() => void> = []
  afterAll(() => cleanups.forEach((cleanup) => cleanup()))

  beforeAll(() => {
    dir = intake.tempDir()
    from = join(dir, 'bulk.db')
    bulkDatabase(from, 10_000, 100)
  }, STEP_TIMEOUT)

  const kinds = [
    { kind: 'sqlite', skip: false },
    { kind: 'postgres', skip: skipPostgres },
  ]
  for (const { kind, skip } of kinds) {
    test.skipIf(skip)(
      `${kind} TO: empty after the kill, and taken as empty by the next copy`,
      async () => {
        const to = kind === 'sqlite' ? join(dir, 'killed.db') : (await pg.freshDatabase(false)).url
        const copying = onTerminal(['copy', from, to], dir)
        cleanups.push(() => copying.proc.kill('SIGKILL'))
        // Files are copied after the forms: once some of their bytes are written, the copy is well under way.
        await until(
          () => /Copying: [\d,]+ of [\d,]+ rows, [\d.]+ [kMG]B of/.test(copying.output()),
          60_000,
          'file bytes being copied',
          () => copying.output().slice(-300),
        )
        expect(copying.proc.exitCode).toBeNull()
        copying.proc.kill('SIGKILL')
        await copying.proc.exited
        copying.proc.terminal?.close()
        expect(copying.output()).not.toContain('Copied')
        expect(copying.output()).toMatch(/rows\/s, .+ left/)
        expect(await countsOf(to)).toEqual(noRows)

        const small = join(intake.tempDir(), 'small.db')
        bulkDatabase(small, 3, 1)
        const again = await runIntake(intake.path, ['copy', small, to], { cwd: dir })
        expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' })
        expect(await countsOf(to)).toEqual(await countsOf(small))
      },
      180_000,
    )
  }
})

// ---------------------------------------------------------------------------

describe('refused with exit code 2, nothing written', () => {
  let dir: string
  let from: string

  beforeAll(() => {
    dir = intake.tempDir()
    from = join(dir, 'from.db')
    bulkDatabase(from, 5, 1)
  })

  test('a TO holding intake data, tables of another program, or no database at all: left byte for byte', async () => {
    const full = join(dir, 'full.db')
    await copyData(from, full)
    const foreign = join(dir, 'foreign.db')
    const other = new Database(foreign, { create: true })
    other.run('CREATE TABLE notes (body TEXT)')
    other.close()
    const text = join(dir, 'notes.txt')
    writeFileSync(text, 'precious')
    const cases: Array<[string, RegExp]> = [
      [
        full,
        /holds intake data \(accounts: 1, api_keys: 1, deliveries: 5, file_chunks: 2, forms: 5, responses: 5, unclaimed_files: 1\)/,
      ],
      [foreign, /holds tables that are not intake's \(notes\)/],
      [text, /exists and is not a SQLite database/],
    ]
    for (const [to, pattern] of cases) {
      const before = readFileSync(to)
      const listing = readdirSync(dir).sort()
      expectRefused(await runIntake(intake.path, ['copy', from, to], { cwd: dir }), pattern)
      expect(readFileSync(to).equals(before)).toBe(true)
      expect(readdirSync(dir).sort()).toEqual(listing)
    }
  })

  test('FROM at an older schema names `intake migrate`; once migrated, it copies', async () => {
    const old = join(dir, 'old.db')
    const db = new Database(old, { create: true })
    db.exec(readFileSync(join(import.meta.dir, 'fixtures', 'intake-0.1.0-schema-1.sql'), 'utf8'))
    db.close()
    const before = readFileSync(old)
    const to = join(dir, 'from-old.db')
    expectRefused(
      await runIntake(intake.path, ['copy', old, to], { cwd: dir }),
      new RegExp(
        `is at schema 1 and this intake copies schema \\d+: upgrade it first with \`intake migrate --db ${old}\``,
      ),
    )
    expect(readFileSync(old).equals(before)).toBe(true)
    expect(existsSync(to)).toBe(false)

    const migrated = await runIntake(intake.path, ['migrate', '--db', old], { cwd: dir })
    expect({ code: migrated.code, stderr: migrated.stderr }).toEqual({ code: 0, stderr: '' })
    expect(migrated.stdout).toMatch(
      new RegExp(`^Migrated ${old} from schema 1 to \\d+\\. The database as it was is kept at ${old}\\.bak-1\\.\\n$`),
    )
    expect((await runIntake(intake.path, ['migrate', '--db', old], { cwd: dir })).stdout).toMatch(
      /is up to date \(schema \d+\)/,
    )
    expect((await runIntake(intake.path, ['copy', old, to], { cwd: dir })).code).toBe(0)
  })

  test('a FROM that is missing, the same database as TO, or another kind of URL', async () => {
    expectRefused(
      await runIntake(intake.path, ['copy', join(dir, 'missing.db'), join(dir, 'x.db')], { cwd: dir }),
      /No database at .*missing\.db/,
    )
    expectRefused(await runIntake(intake.path, ['copy', from, from], { cwd: dir }), /FROM and TO are the same database/)
    expectRefused(
      await runIntake(intake.path, ['copy', 'mysql://u:pw@127.0.0.1/x', join(dir, 'x.db')], { cwd: dir }),
      /^intake: mysql:\/\/ is not a database intake knows/,
    )
    expectRefused(await runIntake(intake.path, ['copy', from], { cwd: dir }), /Usage: intake copy FROM TO/)
    expect(existsSync(join(dir, 'x.db'))).toBe(false)
  })

  test.skipIf(skipPostgres)(
    'a PostgreSQL TO holding data or other tables; the password appears nowhere',
    async () => {
      const password = `pw-${randomBytes(8).toString('hex')}`
      const withPassword = (url: string) =>
        url
          .replace('postgres://intake@', `postgres://intake:${password}@`)
          .replace('postgresql://intake@', `postgresql://intake:${password}@`)
      const full = await pg.freshDatabase(false)
      const copied = await runIntake(intake.path, ['copy', from, withPassword(full.url)], { cwd: dir })
      expect(copied.code).toBe(0)
      expect(copied.stdout).toContain(`to ${full.url.replace(/\/\/([^:@/]+)(:[^@]*)?@/, '//$1@')}`)
      const counts = await countsOf(full.url)
      const foreign = await pg.freshDatabase(false)
      const sql = new SQL(foreign.url, { max: 1 })
      await sql.unsafe('CREATE TABLE notes (body text)')
      await sql.close()
      const outputs = [copied]
      for (const [args, pattern] of [
        [['copy', from, withPassword(full.url)], /holds intake data \(accounts: 1,/],
        [['copy', from, withPassword(foreign.url)], /holds tables that are not intake's \(notes\)/],
        [['copy', withPassword(foreign.url), join(dir, 'y.db')], /is not an intake database/],
      ] as Array<[string[], RegExp]>) {
        const result = await runIntake(intake.path, args, { cwd: dir })
        expectRefused(result, pattern)
        outputs.push(result)
      }
      expect(await countsOf(full.url)).toEqual(counts)
      // Unreachable: exit 1, the password still hidden.
      const unreachable = await runIntake(
        intake.path,
        ['copy', from, `postgres://intake:${password}@127.0.0.1:1/none`],
        { cwd: dir },
      )
      expect(unreachable.code).toBe(1)
      expect(unreachable.stderr).toContain('postgres://intake@127.0.0.1:1/none')
      outputs.push(unreachable)
      for (const output of outputs) expect(`${output.stdout}${output.stderr}`).not.toContain(password)
    },
    STEP_TIMEOUT,
  )
})

// ---------------------------------------------------------------------------

describe.skipIf(skipPostgres)('backup and migrate on PostgreSQL', () => {
  test(
    'migrate creates the schema, then finds it up to date; backup writes a private SQLite file of every row',
    async () => {
      const dir = intake.tempDir()
      const database = await pg.freshDatabase(false)
      const location = database.url.replace(/\/\/([^:@/]+)(:[^@]*)?@/, '//$1@')
      const first = await runIntake(intake.path, ['migrate', '--database-url', database.url], { cwd: dir })
      expect({ code: first.code, stdout: first.stdout }).toEqual({
        code: 0,
        stdout: `Created intake's schema in ${location} (schema ${POSTGRES_SCHEMA_VERSION}).\n`,
      })
      const again = await runIntake(intake.path, ['migrate', '--database-url', database.url], { cwd: dir })
      expect(again.stdout).toBe(`${location} is up to date (schema ${POSTGRES_SCHEMA_VERSION}).\n`)

      const from = join(dir, 'from.db')
      bulkDatabase(from, 50, 2)
      await copyData(from, database.url)
      const file = join(dir, 'backup.db')
      const backup = await runIntake(intake.path, ['backup', file, '--database-url', database.url], { cwd: dir })
      expect({ code: backup.code, stderr: backup.stderr, stdout: backup.stdout }).toEqual({
        code: 0,
        stderr: '',
        stdout: `Backed up ${location} to ${file}.\n`,
      })
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(await dump(file)).toEqual(await dump(database.url))
      const before = readFileSync(file)
      expectRefused(
        await runIntake(intake.path, ['backup', file, '--database-url', database.url], { cwd: dir }),
        /already exists/,
      )
      expect(readFileSync(file).equals(before)).toBe(true)
    },
    STEP_TIMEOUT,
  )
})

test(
  'the examples of copy, migrate and backup run as written in a fresh folder, after the general ones',
  async () => {
    const cwd = intake.tempDir()
    const texts = await Promise.all(
      [[], ['copy'], ['migrate'], ['backup']].map(
        async (command) => (await runIntake(intake.path, [...command, '--help'], { cwd })).stdout,
      ),
    )
    for (const [i, command] of ['copy', 'migrate', 'backup'].entries())
      expect(texts[i + 1]).toStartWith(`intake ${command}: `)
    const examples = [
      ...new Set(
        texts.flatMap((text) =>
          (text.split(/^Examples?.*:$/m)[1] ?? '')
            .split('\n')
            .map((line) => line.replace(/#.*$/, '').trim())
            .filter((line) => /^intake( |$)/.test(line)),
        ),
      ),
    ]
    expect(examples).toContain('intake copy ./data/intake.db ./intake-copy.db')
    for (const example of examples) {
      const args = example.split(/\s+/).slice(1)
      if (args.length === 0 || args[0] === 'serve') {
        const server = await startIntake(intake.path, { cwd, args: ['serve', '--port', '0'] })
        expect(await server.stop()).toBe(0)
        continue
      }
      const result = await runIntake(intake.path, args, { cwd })
      expect({ example, code: result.code, stderr: result.stderr }).toEqual({ example, code: 0, stderr: '' })
    }
  },
  STEP_TIMEOUT,
)
