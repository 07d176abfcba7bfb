/**
 * SQLite only: the file as opened by intake: durability settings, idempotent migration,
 * and query plans of the form lists (they must walk an index, never the table).
 */

import { Database as SqliteDatabase } from 'bun:sqlite'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { DatabaseOpenError, DatabaseUnavailable, type Upgrade } from '../src/db/driver.ts'
import { type Database, openDatabase, SCHEMA_VERSION } from '../src/db/sqlite/open.ts'
import { createReadSnapshot } from '../src/db/sqlite/snapshots.ts'
import { createWriter } from '../src/db/sqlite/writer.ts'
import { createSqliteFormStore } from '../src/modules/forms/store/sqlite.ts'
import { apiClient, createTestContext, filesAsFirstStored, TEST_STORE, type TestContext } from './utils.ts'

const dirs: string[] = []
const tempDb = () => {
  const dir = mkdtempSync(join(tmpdir(), 'intake-db-'))
  dirs.push(dir)
  return join(dir, 'nested', 'intake.db')
}
const open: Database[] = []
const openTracked = (path: string) => {
  const db = openDatabase(path)
  open.push(db)
  return db
}

afterEach(() => {
  for (const db of open.splice(0)) db.close()
})
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** The single value a PRAGMA returns, whatever its column is called. */
const pragma = (db: Database, name: string) => (db.query(`PRAGMA ${name}`).values()[0] ?? [])[0]

describe('openDatabase', () => {
  test('sets WAL, synchronous=FULL, foreign keys, a busy timeout, and the schema version', () => {
    const db = openTracked(tempDb())
    expect(pragma(db, 'journal_mode')).toBe('wal')
    expect(pragma(db, 'synchronous')).toBe(2)
    expect(pragma(db, 'foreign_keys')).toBe(1)
    expect(Number(pragma(db, 'busy_timeout'))).toBeGreaterThanOrEqual(1000)
    expect(pragma(db, 'user_version')).toBe(SCHEMA_VERSION)
    expect(SCHEMA_VERSION).toBeGreaterThan(0)
  })

  test('opening twice is idempotent: same schema, same version, data kept', () => {
    const path = tempDb()
    const schemaOf = (db: Database) =>
      db
        .query("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
        .all()

    const first = openDatabase(path)
    const schema = schemaOf(first)
    expect(schema.length).toBeGreaterThan(0)
    first
      .query('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)')
      .run('01J00000000000000000000000', 'kept', 1)
    first.close()

    const second = openTracked(path)
    expect(pragma(second, 'user_version')).toBe(SCHEMA_VERSION)
    expect(schemaOf(second)).toEqual(schema)
    expect(second.query('SELECT name FROM accounts').all()).toEqual([{ name: 'kept' }])

    // And while another connection holds it open (the CLI beside the server).
    const third = openTracked(path)
    expect(pragma(third, 'user_version')).toBe(SCHEMA_VERSION)
    expect(schemaOf(third)).toEqual(schema)
    expect(pragma(third, 'journal_mode')).toBe('wal')
    expect(pragma(third, 'synchronous')).toBe(2)
    expect(pragma(third, 'foreign_keys')).toBe(1)
  })
})

const FIXTURE_0_1_0 = join(import.meta.dir, 'fixtures', 'intake-0.1.0-schema-1.sql')

/** A database file as intake 0.1.0 left it (schema 1), from the fixture. */
async function firstReleaseDatabase(): Promise<string> {
  const path = join(dirname(tempDb()), 'intake.db')
  mkdirSync(dirname(path), { recursive: true })
  const db = new SqliteDatabase(path)
  db.exec(await Bun.file(FIXTURE_0_1_0).text())
  db.close()
  return path
}

const rowsOf = (path: string) => {
  const db = new SqliteDatabase(path, { readonly: true })
  try {
    // Not the title search's index (form_titles*): derived from forms, and its full-text tables have no rowid to order by.
    const tables = db
      .query(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'form_titles%' ORDER BY name",
      )
      .values()
      .map(([name]) => String(name))
    return Object.fromEntries(tables.map((table) => [table, db.query(`SELECT * FROM "${table}" ORDER BY rowid`).all()]))
  } finally {
    db.close()
  }
}
const filesNextTo = (path: string) =>
  readdirSync(dirname(path))
    .filter((name) => name.startsWith(`${basename(path)}.bak-`))
    .sort()

describe('a new database is private', () => {
  test('the folder intake creates is 0700; the file and its -wal and -shm are 0600', () => {
    const path = tempDb()
    const db = openTracked(path)
    db.query('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)').run('01J00000000000000000000000', 'a', 1)
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700)
    for (const file of [path, `${path}-wal`, `${path}-shm`])
      expect({ file: basename(file), mode: statSync(file).mode & 0o777 }).toEqual({ file: basename(file), mode: 0o600 })
  })

  test('an existing file keeps the mode its owner gave it', () => {
    const path = tempDb()
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, '')
    chmodSync(path, 0o640)
    openTracked(path)
    expect(statSync(path).mode & 0o777).toBe(0o640)
  })
})

describe('opening a database from an older intake', () => {
  test('copies it to <file>.bak-1 first, then migrates it in place; every row is kept, and the upgrade is reported once', async () => {
    const path = await firstReleaseDatabase()
    // A file of 2.5 chunks, beside the fixture's small ones.
    const old = new SqliteDatabase(path)
    const { response_id } = old.query('SELECT response_id FROM response_files LIMIT 1').get() as { response_id: string }
    old
      .query("INSERT INTO response_files VALUES (?, 'scan', 'scan.bin', 'application/octet-stream', ?, ?)")
      .run(response_id, 1_310_720, crypto.getRandomValues(new Uint8Array(1_310_720)))
    old.close()
    const before = rowsOf(path)
    expect(before.forms).toHaveLength(6)

    const upgrades: Upgrade[] = []
    const db = openDatabase(path, { onUpgrade: (upgrade) => upgrades.push(upgrade) })
    open.push(db)
    expect(upgrades).toEqual([{ from: 1, to: SCHEMA_VERSION, backupPath: `${path}.bak-1` }])
    expect(pragma(db, 'user_version')).toBe(SCHEMA_VERSION)
    expect(pragma(db, 'integrity_check')).toBe('ok')
    // Migration 2's table is there, and every row from before is unchanged.
    expect(db.query('SELECT count(*) AS n FROM idempotency_keys').get()).toEqual({ n: 0 })
    const after = rowsOf(path)
    for (const table of Object.keys(before))
      if (table !== 'response_files' && table !== 'forms') expect(after[table]).toEqual(before[table]!)
    // Migration 5 gave every form a page object, empty; migration 6 a webhook that tells of completion alone, as before.
    expect(after.forms).toEqual(
      before.forms!.map((form) => ({
        ...(form as Record<string, unknown>),
        page: '{}',
        callback_events: '["form.completed"]',
      })),
    )
    // Migration 3 moved each file's bytes into chunks of at most 512 KiB: read back in order, they are the same bytes.
    expect(before.response_files!.length).toBeGreaterThan(0)
    const { files, largestChunk } = filesAsFirstStored(db)
    expect(files).toEqual(before.response_files as Array<Record<string, unknown>>)
    expect(largestChunk).toBe(512 * 1024)

    // The backup is the database exactly as it was: schema 1, the same rows.
    const backup = new SqliteDatabase(`${path}.bak-1`, { readonly: true })
    expect(pragma(backup, 'user_version')).toBe(1)
    expect(pragma(backup, 'integrity_check')).toBe('ok')
    backup.close()
    expect(statSync(`${path}.bak-1`).mode & 0o777).toBe(0o600)
    expect(rowsOf(`${path}.bak-1`)).toEqual(before)

    // Opening again finds nothing to do: no second backup, no second report.
    openTracked(path)
    expect(upgrades).toHaveLength(1)
    expect(filesNextTo(path)).toEqual([`${basename(path)}.bak-1`])
  })

  test('an existing .bak-1 (an earlier upgrade, since restored) is never overwritten: the new copy is named with the time', async () => {
    const path = await firstReleaseDatabase()
    writeFileSync(`${path}.bak-1`, 'an earlier backup')
    const upgrades: Upgrade[] = []
    open.push(openDatabase(path, { onUpgrade: (upgrade) => upgrades.push(upgrade) }))

    expect(readFileSync(`${path}.bak-1`, 'utf8')).toBe('an earlier backup')
    expect(upgrades).toHaveLength(1)
    const backupPath = upgrades[0]!.backupPath!
    expect(dirname(backupPath)).toBe(dirname(path))
    expect(basename(backupPath)).toMatch(/^intake\.db\.bak-1-\d{8}T\d{6}Z$/)
    const copy = new SqliteDatabase(backupPath, { readonly: true })
    expect(pragma(copy, 'user_version')).toBe(1)
    expect(copy.query('SELECT count(*) AS n FROM forms').get()).toEqual({ n: 6 })
    copy.close()
    expect(filesNextTo(path)).toHaveLength(2)
  })

  test('upgrade: false (what intake backup uses) opens it as it is: no migration, no backup file', async () => {
    const path = await firstReleaseDatabase()
    const db = openDatabase(path, { upgrade: false, onUpgrade: () => expect.unreachable() })
    open.push(db)
    expect(pragma(db, 'user_version')).toBe(1)
    expect(filesNextTo(path)).toEqual([])
  })

  test('when no backup can be written, the database is refused with the reason and left at its old schema', async () => {
    const path = await firstReleaseDatabase()
    // Every name the backup could take in the next few seconds is already used (and never overwritten).
    for (let second = 0; second < 5; second++) {
      const stamp = new Date(Date.now() + second * 1000).toISOString().replace(/[-:]|\.\d+/g, '')
      for (const suffix of ['', `-${stamp}`, ...Array.from({ length: 19 }, (_, i) => `-${stamp}-${i + 2}`)]) {
        writeFileSync(`${path}.bak-1${suffix}`, 'taken')
      }
    }
    expect(() => openTracked(path)).toThrow(DatabaseOpenError)
    expect(() => openTracked(path)).toThrow(
      /Cannot write a backup next to .*intake\.db before upgrading it from schema 1; the database was not changed: every backup name is taken/,
    )
    const db = new SqliteDatabase(path, { readonly: true })
    expect(pragma(db, 'user_version')).toBe(1)
    expect(db.query('SELECT count(*) AS n FROM forms').get()).toEqual({ n: 6 })
    db.close()
    expect(filesNextTo(path).every((name) => readFileSync(join(dirname(path), name), 'utf8') === 'taken')).toBe(true)
  })
})

describe('a database from a newer intake', () => {
  /** A database as the next release might leave it: one schema ahead, saying which schemas may still run on it. */
  const newerDatabase = (oldestCompatible: number) => {
    const path = tempDb()
    openDatabase(path).close()
    const db = new SqliteDatabase(path)
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`)
    db.query('UPDATE schema_compatibility SET oldest_compatible = ?').run(oldestCompatible)
    db.exec('CREATE TABLE from_the_future (id INTEGER PRIMARY KEY)')
    db.close()
    return path
  }

  test('runs when it says this schema may still run on it (an additive migration), and is left at its schema', () => {
    const path = newerDatabase(SCHEMA_VERSION)
    const db = openTracked(path)
    expect(pragma(db, 'user_version')).toBe(SCHEMA_VERSION + 1)
    expect(db.query('SELECT count(*) AS n FROM forms').get()).toEqual({ n: 0 })
  })

  test('is refused untouched when it needs a newer intake', () => {
    const path = newerDatabase(SCHEMA_VERSION + 1)
    const before = readFileSync(path)
    expect(() => openTracked(path)).toThrow(
      new RegExp(
        `written by a newer intake \\(schema ${SCHEMA_VERSION + 1}, which needs at least schema ${SCHEMA_VERSION + 1}; this intake knows up to ${SCHEMA_VERSION}\\)`,
      ),
    )
    expect(Buffer.compare(readFileSync(path), before)).toBe(0)
    expect(filesNextTo(path)).toEqual([])
  })
})

/**
 * Records the SQL text and parameters of every statement the store runs, by
 * wrapping `db.query`: the plans below are those of the real statements.
 */
function recordingDb(db: Database) {
  const runs: Array<{ sql: string; params: unknown[] }> = []
  const proxy = new Proxy(db, {
    get(target, property, receiver) {
      if (property !== 'query') {
        const value = Reflect.get(target, property, receiver)
        return typeof value === 'function' ? value.bind(target) : value
      }
      return (sql: string) => {
        const statement = target.query(sql)
        return new Proxy(statement, {
          get(stmt, name) {
            const value = Reflect.get(stmt, name, stmt)
            if (typeof value !== 'function') return value
            if (name === 'all' || name === 'get' || name === 'run' || name === 'values') {
              return (...params: unknown[]) => {
                runs.push({ sql, params })
                return value.apply(stmt, params)
              }
            }
            return value.bind(stmt)
          },
        })
      }
    },
  })
  return { db: proxy as Database, runs }
}

describe.skipIf(TEST_STORE !== 'sqlite')('query plans of the form lists (SQLite)', () => {
  let t: TestContext
  let accountId: string
  let ids: Record<string, string[]>
  const plans: Record<string, { sql: string; detail: string[]; rows: { id: string }[] }> = {}

  beforeAll(async () => {
    t = await createTestContext()
    ids = { active: [], cancelled: [], completed: [], expired: [] }
    // Some forms in every state, and another account's forms beside them.
    for (let i = 0; i < 6; i++) ids.active!.push((await t.api.createForm({ title: `active ${i}` })).id)
    for (let i = 0; i < 3; i++) {
      const { id } = await t.api.createForm({ title: `cancelled ${i}` })
      expect((await t.api.patch(`/forms/${id}`, { status: 'cancelled' })).status).toBe(200)
      ids.cancelled!.push(id)
    }
    for (let i = 0; i < 3; i++) {
      const { id } = await t.api.createForm({ title: `expiring ${i}`, expires_in: '1m' })
      ids.expired!.push(id)
    }
    const other = await t.createKey('other')
    const otherApi = apiClient(t.app, other.key)
    for (let i = 0; i < 4; i++) await otherApi.createForm({ title: `other ${i}` })
    t.clock.advance(2 * 60_000) // the 1m forms are now past their time

    accountId = (t.sqlite!.query("SELECT id FROM accounts WHERE name = 'default'").get() as { id: string }).id

    const recorder = recordingDb(t.sqlite!)
    const store = createSqliteFormStore(recorder.db)
    for (const status of [undefined, 'active', 'cancelled', 'completed', 'expired'] as const) {
      const before = recorder.runs.length
      const rows = await store.list({ accountId, status, before: undefined, limit: 20, now: t.clock() })
      const runs = recorder.runs.slice(before)
      expect(runs).toHaveLength(1)
      const { sql, params } = runs[0]!
      const detail = (
        t.sqlite!.query(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as [any])) as { detail: string }[]
      ).map((r) => r.detail)
      plans[status ?? 'unfiltered'] = { sql, detail, rows }
    }
  })

  afterAll(() => t?.close())

  test('the recorded statements are the real lists: each returns the right forms, newest first', () => {
    const newestFirst = (list: string[]) => [...list].sort().reverse()
    expect(plans.unfiltered!.rows.map((r) => r.id)).toEqual(
      newestFirst([...ids.active!, ...ids.cancelled!, ...ids.expired!]),
    )
    expect(plans.active!.rows.map((r) => r.id)).toEqual(newestFirst(ids.active!))
    expect(plans.cancelled!.rows.map((r) => r.id)).toEqual(newestFirst(ids.cancelled!))
    expect(plans.completed!.rows).toEqual([])
    expect(plans.expired!.rows.map((r) => r.id)).toEqual(newestFirst(ids.expired!))
  })

  /** Every step that reads `forms` must search an index: no `SCAN forms`, with or without an index. */
  const expectIndexedAccessToForms = (name: string) => {
    const { sql, detail } = plans[name]!
    const context = `${name} list\n${sql}\nplan:\n${detail.join('\n')}`
    const formSteps = detail.filter((d) => /^(SCAN|SEARCH) forms\b/.test(d))
    expect({ context, touchesForms: formSteps.length > 0 }).toEqual({ context, touchesForms: true })
    for (const step of formSteps) {
      expect({ context, step, indexed: /USING (COVERING )?INDEX|USING (INTEGER )?PRIMARY KEY/.test(step) }).toEqual({
        context,
        step,
        indexed: true,
      })
    }
    expect({ context, fullScan: detail.some((d) => /^SCAN forms$/.test(d.trim())) }).toEqual({
      context,
      fullScan: false,
    })
    // Not even a walk of a whole index: every read of forms is a SEARCH bounded by the index key.
    expect({ context, indexScan: formSteps.some((d) => d.startsWith('SCAN')) }).toEqual({ context, indexScan: false })
  }

  const expectNoSortStep = (name: string) => {
    const { sql, detail } = plans[name]!
    const context = `${name} list\n${sql}\nplan:\n${detail.join('\n')}`
    expect({ context, sorts: detail.some((d) => d.includes('USE TEMP B-TREE FOR ORDER BY')) }).toEqual({
      context,
      sorts: false,
    })
  }

  test('unfiltered list: walks an index newest first, no table scan, no sort', () => {
    expectIndexedAccessToForms('unfiltered')
    expectNoSortStep('unfiltered')
  })

  test('status=active: walks an index newest first, no table scan, no sort', () => {
    expectIndexedAccessToForms('active')
    expectNoSortStep('active')
  })

  test('status=<stored status> (cancelled, completed): walks an index newest first, no table scan, no sort', () => {
    for (const name of ['cancelled', 'completed']) {
      expectIndexedAccessToForms(name)
      expectNoSortStep(name)
    }
  })

  test('status=expired: every read of forms uses an index, no table scan', () => {
    expectIndexedAccessToForms('expired')
  })
})

describe('reads between commits', () => {
  test('a read right after a commit, in the same turn, sees it', async () => {
    const t = await createTestContext()
    try {
      const { id } = await t.api.createForm()
      // The write is queued first; the read, in this turn, comes before its commit.
      const write = t.store.transaction((tx) => tx.forms.setStatus(id, 'cancelled', t.clock()))
      expect((await t.store.forms.find(id, t.clock()))?.status).toBe('active')
      await write
      expect((await t.store.forms.find(id, t.clock()))?.status).toBe('cancelled')
    } finally {
      await t.close()
    }
  })

  test('a unit of work runs exactly once, even in a batch where another unit throws', async () => {
    const t = await createTestContext()
    try {
      const ids = await Promise.all(Array.from({ length: 6 }, async () => (await t.api.createForm()).id))
      const runs = ids.map(() => 0)
      // Queued in one turn: they share a commit where the store groups commits.
      const outcomes = await Promise.allSettled(
        ids.map((id, i) =>
          t.store.transaction(async (tx) => {
            runs[i]!++
            await tx.forms.setStatus(id, 'cancelled', t.clock())
            if (i === 2) throw new Error('unit 2 refuses')
            return i
          }),
        ),
      )
      expect(runs).toEqual(ids.map(() => 1))
      expect(outcomes.map((o) => o.status)).toEqual(ids.map((_, i) => (i === 2 ? 'rejected' : 'fulfilled')))
      const statuses = await Promise.all(ids.map(async (id) => (await t.store.forms.find(id, t.clock()))?.status))
      expect(statuses).toEqual(ids.map((_, i) => (i === 2 ? 'active' : 'cancelled')))
    } finally {
      await t.close()
    }
  })

  test('a read in a later turn sees what was committed meanwhile through another connection', async () => {
    const t = await createTestContext()
    try {
      const { id } = await t.api.createForm()
      expect((await t.store.forms.find(id, t.clock()))?.status).toBe('active')
      await t.sql('UPDATE forms SET status = ? WHERE id = ?', 'cancelled', id)
      await new Promise((resolve) => setImmediate(resolve))
      expect((await t.store.forms.find(id, t.clock()))?.status).toBe('cancelled')
    } finally {
      await t.close()
    }
  })
})

describe.skipIf(TEST_STORE !== 'sqlite')('keys beside the read snapshot (SQLite)', () => {
  test('a key another process stores is found at once, by a read in the same turn', async () => {
    const t = await createTestContext()
    try {
      const { id } = await t.api.createForm()
      const account = t.sqlite!.query("SELECT id FROM accounts WHERE name = 'default'").get() as { id: string }
      // All in one turn: a read of forms, then another connection stores a key.
      expect((await t.store.forms.find(id, t.clock()))?.status).toBe('active')
      t.sqlite!.query(
        'INSERT INTO api_keys (id, account_id, key_hash, key_hint, created_at) VALUES (?, ?, ?, ?, ?)',
      ).run('key-from-elsewhere', account.id, 'f'.repeat(64), 'ffff', t.clock())
      expect((await t.store.keys.keyByHash('f'.repeat(64)))?.id).toBe('key-from-elsewhere')
    } finally {
      await t.close()
    }
  })
})

describe.skipIf(TEST_STORE !== 'sqlite')('group commit waits for the log on disk (SQLite)', () => {
  /** A writer whose log sync the test completes by hand, and a read on the connection it holds. */
  function writerWithManualSync() {
    const path = tempDb()
    const db = openTracked(path)
    db.exec('PRAGMA synchronous = NORMAL')
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)')
    const reader = new SqliteDatabase(path, { strict: true })
    open.push(reader as unknown as Database)
    const snapshot = createReadSnapshot(reader)
    const notes = { count: async () => (reader.query('SELECT count(*) AS n FROM notes').get() as { n: number }).n }
    const syncs: Array<{ done: () => void; fail: (error: Error) => void }> = []
    const heard: string[] = []
    const writer = createWriter(db, db, {
      syncLog: () => new Promise<void>((done, fail) => syncs.push({ done, fail })),
      snapshot,
      log: (line) => heard.push(line),
    })
    const insert = (text: string) =>
      writer.run(async (tx) => void tx.query('INSERT INTO notes (text) VALUES (?)').run(text))
    return { writer, notes, syncs, insert, heard }
  }
  const turn = () => new Promise((resolve) => setImmediate(resolve))

  test('a write is acknowledged, and read by anyone, only once its log is synced', async () => {
    const { notes, syncs, insert } = writerWithManualSync()
    let acknowledged = false
    const write = insert('a').then(() => (acknowledged = true))
    while (syncs.length === 0) await turn()
    // Committed, not yet synced: several turns pass, and neither the caller nor a reader sees it.
    for (let i = 0; i < 3; i++) {
      await turn()
      expect(acknowledged).toBe(false)
      expect(await notes.count()).toBe(0)
    }
    syncs[0]!.done()
    await write
    expect(await notes.count()).toBe(1)
  })

  test('a unit that throws takes back exactly its own writes; the others of its batch keep theirs and their results', async () => {
    const { writer, notes, syncs } = writerWithManualSync()
    const insert = (db: Database, id: number) =>
      db.query('INSERT INTO notes (id, text) VALUES (?, ?)').run(id, `note ${id}`)
    // The units are queued in one turn: one batch.
    const outcomes = Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        writer
          .run(async (tx) => {
            insert(tx, 100 + i)
            if (i % 4 === 1) throw new Error(`unit ${i} refuses`)
            if (i % 4 === 2) insert(tx, 100) // the first unit's row: a constraint error
            return i
          })
          .then(
            (value) => ({ value }),
            (error: Error) => ({ error: error.message }),
          ),
      ),
    )
    while (syncs.length === 0) await new Promise((resolve) => setImmediate(resolve))
    expect(syncs).toHaveLength(1)
    syncs[0]!.done()
    ;(await outcomes).forEach((outcome, i) => {
      if (i % 4 === 1) expect(outcome).toEqual({ error: `unit ${i} refuses` })
      else if (i % 4 === 2) expect(outcome).toEqual({ error: expect.stringContaining('UNIQUE constraint failed') })
      else expect(outcome).toEqual({ value: i })
    })
    expect(await notes.count()).toBe(6)
  })

  test('a failed sync fails every unit of its batch with 503 Database unavailable, says so once, and every write after it is refused', async () => {
    const { writer, notes, syncs, insert, heard } = writerWithManualSync()
    const first = Promise.allSettled([insert('a'), insert('b')])
    while (syncs.length === 0) await turn()
    const queuedMeanwhile = insert('c')
    syncs[0]!.fail(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }))
    const outcomes = [...(await first), ...(await Promise.allSettled([queuedMeanwhile, insert('d')]))]
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected')
      const reason = (outcome as PromiseRejectedResult).reason
      expect(reason).toBeInstanceOf(DatabaseUnavailable)
      expect(reason.message).toContain('EIO')
    }
    // Linux may have dropped what it could not write: no later sync could vouch for it.
    expect(syncs).toHaveLength(1)
    expect(() => writer.check()).toThrow(DatabaseUnavailable)
    expect(heard).toHaveLength(1)
    expect(heard[0]).toContain('restart intake')
    // What was committed stays readable; nothing after it was written.
    expect(await notes.count()).toBe(2)
  })
})
