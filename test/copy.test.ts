/**
 * `intake copy FROM TO`, `intake backup` on PostgreSQL and `intake migrate`
 * (CONTRACT 9): every row of every table arrives, files byte for byte;
 * pending deliveries resume on TO; TO is refused untouched unless empty; a
 * PostgreSQL password is never printed. SQLite to SQLite always; PostgreSQL
 * both ways where INTAKE_TEST_DATABASE_URL names a server. Everything runs on
 * 127.0.0.1. (Event ids across a copy: copy-events.test.ts; FROM as one
 * snapshot and a copy killed half-way: copy-snapshot.test.ts.)
 */

import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { copyData } from '../src/db/copy/index.ts'
import { COPIED_TABLES } from '../src/db/copy/sides.ts'
import { POSTGRES_SCHEMA_VERSION } from '../src/db/postgres/migrations.ts'
import { addConsoleUser, consoleClient, consoleRequest } from './console-fixtures.ts'
import { bulkDatabase, countsOf, dump, expectRefused, FILE_FIELD, receiver, STEP_TIMEOUT } from './copy-fixtures.ts'
import { killAllChildren, runIntake, startIntake, useBuiltBinary } from './e2e/binary.ts'
import { postgresFixtures } from './postgres.ts'
import { POSTGRES, skipWithout, TEST_DATABASE_URL } from './prerequisites.ts'
import {
  apiClient,
  createTestContext,
  EVERY_TYPE_ANSWERS,
  EVERY_TYPE_FIELDS,
  postForm,
  type TestContext,
  until,
} from './utils.ts'

const intake = useBuiltBinary('intake-copy-')
const skipPostgres = skipWithout(POSTGRES)
const pg = postgresFixtures(TEST_DATABASE_URL)

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
  // Console people: a member signed in (a used set-up link, a session), a link not yet used, a failed sign-in.
  await consoleClient(t, { account: 'research' })
  await addConsoleUser(t, { operator: true })
  const signIn = new URLSearchParams({ email: 'nobody@example.com', password: 'not a password' })
  expect((await consoleRequest(t, 'POST', '/console/sign-in', { body: signIn })).status).toBe(401)
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
