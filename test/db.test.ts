/**
 * The database as opened by intake: durability settings, idempotent migration,
 * and query plans of the form lists (they must walk an index, never the table).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase, SCHEMA_VERSION, type Database } from '../src/db/index.ts'
import { createFormStore } from '../src/modules/forms/store.ts'
import { apiClient, createTestContext, type TestContext } from './utils.ts'

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
      db.query("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all()

    const first = openDatabase(path)
    const schema = schemaOf(first)
    expect(schema.length).toBeGreaterThan(0)
    first.query('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)').run('01J00000000000000000000000', 'kept', 1)
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

describe('query plans of the form lists', () => {
  let t: TestContext
  let accountId: string
  let ids: Record<string, string[]>
  const plans: Record<string, { sql: string; detail: string[]; rows: { id: string }[] }> = {}

  beforeAll(async () => {
    t = createTestContext()
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
    const other = t.createKey('other')
    const otherApi = apiClient(t.app, other.key)
    for (let i = 0; i < 4; i++) await otherApi.createForm({ title: `other ${i}` })
    t.clock.advance(2 * 60_000) // the 1m forms are now past their time

    accountId = (t.db.query("SELECT id FROM accounts WHERE name = 'default'").get() as { id: string }).id

    const recorder = recordingDb(t.db)
    const store = createFormStore(recorder.db)
    for (const status of [undefined, 'active', 'cancelled', 'completed', 'expired'] as const) {
      const before = recorder.runs.length
      const rows = store.list({ accountId, status, before: undefined, limit: 20, now: t.clock() })
      const runs = recorder.runs.slice(before)
      expect(runs).toHaveLength(1)
      const { sql, params } = runs[0]!
      const detail = (t.db.query(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as [any])) as { detail: string }[]).map(
        (r) => r.detail,
      )
      plans[status ?? 'unfiltered'] = { sql, detail, rows }
    }
  })

  afterAll(() => t?.close())

  test('the recorded statements are the real lists: each returns the right forms, newest first', () => {
    const newestFirst = (list: string[]) => [...list].sort().reverse()
    expect(plans.unfiltered!.rows.map((r) => r.id)).toEqual(newestFirst([...ids.active!, ...ids.cancelled!, ...ids.expired!]))
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
    expect({ context, fullScan: detail.some((d) => /^SCAN forms$/.test(d.trim())) }).toEqual({ context, fullScan: false })
    // Not even a walk of a whole index: every read of forms is a SEARCH bounded by the index key.
    expect({ context, indexScan: formSteps.some((d) => d.startsWith('SCAN')) }).toEqual({ context, indexScan: false })
  }

  const expectNoSortStep = (name: string) => {
    const { sql, detail } = plans[name]!
    const context = `${name} list\n${sql}\nplan:\n${detail.join('\n')}`
    expect({ context, sorts: detail.some((d) => d.includes('USE TEMP B-TREE FOR ORDER BY')) }).toEqual({ context, sorts: false })
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
