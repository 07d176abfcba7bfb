/**
 * Upgrading, end to end: the current executable started on a database that
 * intake 0.1.0 (the first release, schema 1) wrote and left behind, with
 * forms in every state, answers, a file and a webhook still pending
 * (test/fixtures/intake-0.1.0-schema-1.sql). The upgrade must keep a copy of
 * the old database next to it, migrate, say so once, and then serve every
 * form, answer and file as before and deliver the pending webhook exactly as
 * 0.1.0 stored it. The receiver is a server this test starts on 127.0.0.1.
 */

import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { SCHEMA_VERSION } from '../../src/db/sqlite/open.ts'
import { filesAsFirstStored } from '../utils.ts'
import { type RunningIntake, request, runIntake, startIntake, useBuiltBinary } from './binary.ts'

const FIXTURE = join(import.meta.dir, '..', 'fixtures', 'intake-0.1.0-schema-1.sql')
const TEST_TIMEOUT = 60_000

// The forms in the fixture.
const EVERYTHING = '01M8AJQS5Z67VAAB4HPK54QCK0'
const OPEN_FOR_A_YEAR = '01M8AJQS6AP26HH875906F6GHV'
const NEVER_EXPIRES = '01M8AJQS6AP26HH875906F6GHW'
const ANSWERED_OVER_JSON = '01M8AJQS6C4SAG1AY2ZHYQ81BQ'
const CANCELLED = '01M8AJQS6D5B0W3FSR9TJ9ZDQX'
const EXPIRED = '01M8AJQS6F3WGP70C81DT6215M'
const PENDING_DELIVERY = '01M8AJQS67WS0DPJNBC09EJ84W'

const intake = useBuiltBinary('intake-upgrade-')

interface Hook {
  headers: Headers
  body: string
}

describe('intake serve on a database written by intake 0.1.0 (schema 1)', () => {
  let dir = ''
  let dbPath = ''
  let server: RunningIntake
  let key = ''
  /** Every table's rows just before the upgrade. */
  let before: Record<string, unknown[]> = {}
  let stored: { payload: string; secret: string }
  const hooks: Hook[] = []
  let receiver: ReturnType<typeof Bun.serve>

  const api = (path: string, options: Parameters<typeof request>[1] = {}) =>
    request(`${server.url}/api/v1${path}`, { key, ...options })

  beforeAll(async () => {
    receiver = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(req) {
        hooks.push({ headers: req.headers, body: await req.text() })
        return new Response('ok')
      },
    })

    dir = intake.tempDir()
    dbPath = join(dir, 'intake.db')
    const db = new Database(dbPath)
    db.exec(readFileSync(FIXTURE, 'utf8'))
    // The webhook receiver that was down (127.0.0.1:9) is back, at this test's address.
    db.query('UPDATE deliveries SET url = ?').run(`http://127.0.0.1:${receiver.port}/hook`)
    db.query('UPDATE forms SET callback_url = ? WHERE callback_url IS NOT NULL').run(
      `http://127.0.0.1:${receiver.port}/hook`,
    )
    before = rowsOf(db)
    stored = db
      .query(
        'SELECT d.payload, f.webhook_secret AS secret FROM deliveries d JOIN forms f ON f.id = d.form_id WHERE d.id = ?',
      )
      .get(PENDING_DELIVERY) as { payload: string; secret: string }
    db.close()

    server = await startIntake(intake.path, { cwd: dir, args: ['serve', '--port', '0', '--db', dbPath] })
    const created = await runIntake(intake.path, ['keys', 'create', '--db', dbPath], { cwd: dir })
    expect(created.code).toBe(0)
    key = /^API key: (svc_live_[0-9a-f]{48})$/m.exec(created.stdout)![1]!
  }, TEST_TIMEOUT)

  afterAll(async () => {
    await server?.stop()
    receiver?.stop(true)
  })

  test('says once that it upgraded and where the old database is kept; prints no new key', () => {
    expect(server.stdout()).toContain(
      `Upgraded the database from schema 1 to ${SCHEMA_VERSION}; the database as it was is kept at ${dbPath}.bak-1`,
    )
    expect(server.stdout().match(/Upgraded the database/g)).toHaveLength(1)
    // Not a first start: the account and its key exist, so the one-line start.
    expect(server.apiKey).toBeUndefined()
    expect(server.stdout()).toContain(`listening on ${server.url} (data: ${dbPath})`)
  })

  test('the database is at the current schema, whole, with every row it had', () => {
    const db = new Database(dbPath, { readonly: true })
    try {
      expect(db.query('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION })
      expect(db.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
      const after = rowsOf(db)
      expect(after.responses).toEqual(before.responses!)
      // Migration 5 gave every form an empty page object; migration 6 the default callback_events.
      expect(after.forms).toEqual(
        before.forms!.map((form) => ({
          ...(form as Record<string, unknown>),
          page: '{}',
          callback_events: '["form.completed"]',
        })),
      )
      // Files' bytes moved into chunks (migration 3): read back, they are what 0.1.0 stored.
      expect(filesAsFirstStored(db).files).toEqual(before.response_files as Array<Record<string, unknown>>)
      // The new key is an added row; the old one is still there.
      expect(after.api_keys).toEqual(expect.arrayContaining(before.api_keys!))
    } finally {
      db.close()
    }
  })

  test('the backup next to it is the database exactly as 0.1.0 left it: schema 1, every row', () => {
    const backup = new Database(`${dbPath}.bak-1`, { readonly: true })
    try {
      expect(backup.query('PRAGMA user_version').get()).toEqual({ user_version: 1 })
      expect(backup.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
      expect(rowsOf(backup)).toEqual(before)
    } finally {
      backup.close()
    }
  })

  test('every form is listed with its state; each keeps its title, fields, metadata and context as stored', async () => {
    const list = await api('/forms?limit=100')
    expect(list.status).toBe(200)
    const states = Object.fromEntries(
      (list.body as Array<{ id: string; status: string }>).map((form) => [form.id, form.status]),
    )
    const yearLater = Date.parse(`${(await api(`/forms/${OPEN_FOR_A_YEAR}`)).body.expires_at}Z`)
    expect(states).toEqual({
      [EVERYTHING]: 'completed',
      // Made with expires_in 365d: active until then (and expired after, whenever this runs).
      [OPEN_FOR_A_YEAR]: Date.now() < yearLater ? 'active' : 'expired',
      [NEVER_EXPIRES]: 'active',
      [ANSWERED_OVER_JSON]: 'completed',
      [CANCELLED]: 'cancelled',
      [EXPIRED]: 'expired',
    })

    const form = (await api(`/forms/${EVERYTHING}`)).body
    expect(form.title).toBe('Trip request — “Zürich” & <friends>')
    expect(form.callback_metadata).toEqual({ ticket: 'T-1' })
    expect(form.context).toEqual({ thread: 'abc' })
    expect(form.fields.map((field: { key: string; type: string }) => `${field.key}:${field.type}`)).toEqual([
      'name:text',
      'notes:textarea',
      'email:email',
      'nights:number',
      'room:select',
      'agree:checkbox',
      'arrive:date',
      'passport:file',
    ])
    expect(form.fields[3].config).toEqual({ min: 1, max: 30 })
    expect((await api(`/forms/${EXPIRED}`)).body.context).toBeNull()
  })

  test('the answers read as they were submitted, and the uploaded file downloads byte for byte', async () => {
    const [answer] = (await api(`/forms/${EVERYTHING}/responses`)).body
    expect(answer.data).toMatchObject({
      name: 'Ada Lovelace',
      notes: 'line one\nline two ✓',
      email: 'ada@example.org',
      nights: 3,
      room: 'double',
      agree: true,
      arrive: '2026-12-24',
    })
    // The file's URL names the address 0.1.0 served on; its path is the download on any address.
    const path = new URL(answer.data.passport).pathname
    const file = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } })
    expect(file.status).toBe(200)
    expect(file.headers.get('content-type')).toStartWith('application/octet-stream')
    expect([...new Uint8Array(await file.arrayBuffer())]).toEqual([0x00, 0x01, 0x02, 0xff, 0x0a, 0x0d])

    expect((await api(`/forms/${ANSWERED_OVER_JSON}/responses`)).body[0].data).toEqual({ n: 42 })
  })

  test(
    'the webhook 0.1.0 left pending is delivered: the same id, the exact stored body, signed with the form secret',
    async () => {
      const deadline = Date.now() + 30_000
      while (hooks.length === 0 && Date.now() < deadline) await Bun.sleep(50)
      expect(hooks).toHaveLength(1)
      const [hook] = hooks
      expect(hook!.headers.get('x-service-delivery')).toBe(PENDING_DELIVERY)
      expect(hook!.body).toBe(stored.payload)
      const signature = createHmac('sha256', stored.secret).update(hook!.body).digest('hex')
      expect(hook!.headers.get('x-service-signature')).toBe(`sha256=${signature}`)

      let deliveries = (await api(`/forms/${EVERYTHING}/deliveries`)).body
      while (deliveries[0]?.status !== 'delivered' && Date.now() < deadline) {
        await Bun.sleep(50)
        deliveries = (await api(`/forms/${EVERYTHING}/deliveries`)).body
      }
      expect(deliveries).toHaveLength(1)
      expect(deliveries[0]).toMatchObject({ id: PENDING_DELIVERY, status: 'delivered', attempts: 3 })
    },
    TEST_TIMEOUT,
  )

  test('old forms take answers and the new features work on the old data (an Idempotency-Key create)', async () => {
    const answered = await request(`${server.url}/f/${NEVER_EXPIRES}`, { body: { ok: true } })
    expect(answered.status).toBe(201)
    expect((await api(`/forms/${NEVER_EXPIRES}`)).body.status).toBe('completed')
    // A cancelled form is gone for the person: 410, as for any cancelled form.
    expect((await request(`${server.url}/f/${CANCELLED}`, { body: { x: 'late' } })).status).toBe(410)

    const body = { title: 'After the upgrade', fields: [{ key: 'x', type: 'text', label: 'X' }] }
    const first = await api('/forms', { body, headers: { 'idempotency-key': 'upgrade-1' } })
    const again = await api('/forms', { body, headers: { 'idempotency-key': 'upgrade-1' } })
    expect(first.status).toBe(201)
    expect(again.body.id).toBe(first.body.id)
  })

  test(
    'a restart on the upgraded database does not upgrade again or touch the backup',
    async () => {
      const backupBefore = statSync(`${dbPath}.bak-1`)
      expect(await server.stop()).toBe(0)
      server = await startIntake(intake.path, { cwd: dir, args: ['serve', '--port', '0', '--db', dbPath] })
      expect(server.stdout()).not.toContain('Upgraded')
      // One line for people; the rest of stdout is the JSON request log.
      expect(
        server
          .stdout()
          .split('\n')
          .filter((line) => line !== '' && !line.startsWith('{')),
      ).toHaveLength(1)
      const backupAfter = statSync(`${dbPath}.bak-1`)
      expect([backupAfter.size, backupAfter.mtimeMs]).toEqual([backupBefore.size, backupBefore.mtimeMs])
      expect((await api(`/forms/${EVERYTHING}`)).status).toBe(200)
    },
    TEST_TIMEOUT,
  )
})

describe('the commands on a database written by intake 0.1.0', () => {
  const oldDatabase = () => {
    const dir = intake.tempDir()
    const dbPath = join(dir, 'intake.db')
    const db = new Database(dbPath)
    db.exec(readFileSync(FIXTURE, 'utf8'))
    db.close()
    return { dir, dbPath }
  }
  const versionOf = (path: string) => {
    const db = new Database(path, { readonly: true })
    try {
      return (db.query('PRAGMA user_version').get() as { user_version: number }).user_version
    } finally {
      db.close()
    }
  }

  test('intake backup copies it as it is: the copy and the original stay at schema 1, no .bak file', async () => {
    const { dir, dbPath } = oldDatabase()
    const result = await runIntake(intake.path, ['backup', join(dir, 'copy.db'), '--db', dbPath], { cwd: dir })
    expect(result.code).toBe(0)
    expect(versionOf(join(dir, 'copy.db'))).toBe(1)
    expect(versionOf(dbPath)).toBe(1)
    expect(existsSync(`${dbPath}.bak-1`)).toBe(false)
  })

  test('intake keys list upgrades it like serve does and says so on stderr; stdout stays the list', async () => {
    const { dir, dbPath } = oldDatabase()
    const result = await runIntake(intake.path, ['keys', 'list', '--json', '--db', dbPath], { cwd: dir })
    expect(result.code).toBe(0)
    expect(result.stderr).toContain(
      `Upgraded the database from schema 1 to ${SCHEMA_VERSION}; the database as it was is kept at ${dbPath}.bak-1`,
    )
    expect(JSON.parse(result.stdout)).toHaveLength(1)
    expect(versionOf(dbPath)).toBe(SCHEMA_VERSION)
    expect(versionOf(`${dbPath}.bak-1`)).toBe(1)
  })
})

/** Every table's rows, in insertion order. */
function rowsOf(db: Database): Record<string, unknown[]> {
  // Not the title search's index (form_titles*): derived from forms, and its full-text tables have no rowid to order by.
  const tables = db
    .query(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'form_titles%' ORDER BY name",
    )
    .values()
    .map(([name]) => String(name))
  return Object.fromEntries(tables.map((table) => [table, db.query(`SELECT * FROM "${table}" ORDER BY rowid`).all()]))
}
