/**
 * The feed across the upgrade to per-account event numbers (CONTRACT 12a):
 * agents hold cursors the older intake gave them (position and seq, 26
 * characters), and keep following them after the upgrade: an old cursor
 * reads on from the first of the account's events after it in the order the
 * older intake gave them, never a 422, never a skip; events written after the
 * upgrade come after every old cursor. An older intake still running on the
 * upgraded database (a rolling upgrade on PostgreSQL) writes events without a
 * number: the database numbers them, and the new readers see them in order.
 *
 * SQLite: test/fixtures/intake-schema-6-events.sql, written by that older
 * intake through its API (its header lists the events). PostgreSQL: the same
 * accounts and events in a database at schema 4 (migrations 1 to 4, as that
 * intake made them), their positions as transaction ids would make them, one
 * pair committed out of order.
 */

import { Database } from 'bun:sqlite'
import { afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { createIntake } from '../src/app.tsx'
import { loadConfig } from '../src/config.ts'
import { migrations as postgresMigrations } from '../src/db/postgres/migrations.ts'
import { createLogger } from '../src/lib/log.ts'
import { createAuthService } from '../src/modules/auth/service.ts'
import { openStore, type Store } from '../src/stores.ts'
import { freshPostgresDatabase } from './postgres.ts'
import { POSTGRES, skipWithout } from './prerequisites.ts'
import { apiClient, TEST_STORE, testClock, until } from './utils.ts'

setDefaultTimeout(20_000)

const FIXTURE = join(import.meta.dir, 'fixtures', 'intake-schema-6-events.sql')
const DEFAULT = '01M8F0T22PN9AGH37APJQP0YDD'
const OTHER = '01M8F0T22RT55YY0BAVPP90S4Q'

/** An id as the older intake wrote it: position and seq, 13 base-32 digits each. */
const legacyId = (position: number, seq: number) =>
  position.toString(32).padStart(13, '0') + seq.toString(32).padStart(13, '0')

interface OldEvent {
  seq: number
  account: string
  type: string
  formId: string
}

/** The fixture's events by seq (seq 5, a3's form.completed, went with its form). */
const OLD_EVENTS: OldEvent[] = [
  { seq: 1, account: OTHER, type: 'form.cancelled', formId: '01M8F0T23Y0S7N2C0R28MM8N7A' },
  { seq: 2, account: DEFAULT, type: 'form.completed', formId: '01M8F0T23F403A8K9VKARVEX1A' },
  { seq: 3, account: DEFAULT, type: 'form.cancelled', formId: '01M8F0T23PTCV1TBKJF0GTW3XB' },
  { seq: 4, account: OTHER, type: 'form.completed', formId: '01M8F0T240T5NRYYYDGJNKN2T5' },
  { seq: 6, account: DEFAULT, type: 'form.deleted', formId: '01M8F0T23R8KP0DQY2WFQ4XZRX' },
  { seq: 7, account: DEFAULT, type: 'form.cancelled', formId: '01M8F0T23S1ZTEFP5DD86FXJ09' },
  { seq: 8, account: OTHER, type: 'form.deleted', formId: '01M8F0T242GRP18HNP2S4DZB5K' },
  { seq: 9, account: DEFAULT, type: 'form.completed', formId: '01M8F0T23TS73VNBX5A4SSZ626' },
]

/**
 * Where each seq sits in the older intake's order. On SQLite every event had
 * position 0. On PostgreSQL the position was the writing transaction's id
 * (below every transaction id given since): seq 3's transaction began before
 * seq 2's and committed after it, and so on; seq 5 (deleted since) had base + 5.
 */
let postgresBase = 0
const POSITIONS: Record<'sqlite' | 'postgres', (seq: number) => number> = {
  sqlite: () => 0,
  postgres: (seq) =>
    postgresBase + ({ 1: 1, 2: 3, 3: 2, 4: 4, 5: 5, 6: 6, 7: 8, 8: 7, 9: 9 } as Record<number, number>)[seq]!,
}

interface Upgraded {
  api(account: 'default' | 'other'): ReturnType<typeof apiClient>
  /** Raw SQL on the upgraded database (`?` parameters). */
  exec(text: string, ...params: unknown[]): Promise<void>
  kind: 'sqlite' | 'postgres'
  close(): Promise<void>
}

const open: Upgraded[] = []
afterEach(async () => {
  for (const upgraded of open.splice(0)) await upgraded.close()
})

/** The fixture's rows as the older intake left them, read from a SQLite copy of it. */
function fixtureRows(): {
  accounts: Array<Record<string, unknown>>
  events: Array<Record<string, unknown>>
  close(): void
  path: string
} {
  const dir = mkdtempSync(join(tmpdir(), 'intake-events-upgrade-'))
  const path = join(dir, 'intake.db')
  const db = new Database(path)
  db.exec(readFileSync(FIXTURE, 'utf8'))
  const rows = {
    accounts: db.query('SELECT * FROM accounts').all() as Array<Record<string, unknown>>,
    events: db.query('SELECT * FROM events ORDER BY seq').all() as Array<Record<string, unknown>>,
  }
  db.close()
  return { ...rows, path, close: () => rmSync(dir, { recursive: true, force: true }) }
}

/** A PostgreSQL database at schema 4 holding the fixture's accounts and events, as that intake wrote them. */
async function postgresAtSchema4(baseUrl: string) {
  const database = await freshPostgresDatabase(baseUrl, { migrated: false })
  const fixture = fixtureRows()
  const sql = new SQL(database.url, { max: 1 })
  try {
    await sql.begin(async (tx) => {
      for (const migration of postgresMigrations.slice(0, 4)) await tx.unsafe(migration.sql)
      postgresBase = Number((await tx.unsafe('SELECT pg_current_xact_id()::text AS id'))[0].id) - 20
      await tx.unsafe('CREATE TABLE intake_schema (version integer NOT NULL, oldest_compatible integer NOT NULL)')
      await tx.unsafe('INSERT INTO intake_schema (version, oldest_compatible) VALUES (4, 1)')
      for (const account of fixture.accounts)
        await tx.unsafe('INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)', [
          account.id,
          account.name,
          account.created_at,
        ])
      for (const event of fixture.events) {
        await tx.unsafe(
          'INSERT INTO events (seq, position, account_id, form_id, type, occurred_at, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
          [
            event.seq,
            POSITIONS.postgres(event.seq as number),
            event.account_id,
            event.form_id,
            event.type,
            event.occurred_at,
            event.payload,
            event.created_at,
          ],
        )
      }
      await tx.unsafe(`SELECT setval(pg_get_serial_sequence('events', 'seq'), 9)`)
    })
  } finally {
    await sql.close()
    fixture.close()
  }
  return database
}

/** The older intake's database, opened (and so upgraded) by this one, with a key for each account. */
async function upgraded(kind: 'sqlite' | 'postgres'): Promise<Upgraded> {
  let settings: Record<string, string>
  let cleanup: () => Promise<void>
  let exec: (store: Store) => Upgraded['exec']
  if (kind === 'sqlite') {
    const fixture = fixtureRows()
    settings = { SERVICE_DB_PATH: fixture.path }
    cleanup = async () => fixture.close()
    exec =
      () =>
      async (text, ...params) => {
        const db = new Database(fixture.path)
        db.exec('PRAGMA busy_timeout = 5000')
        try {
          db.query(text).run(...(params as any[]))
        } finally {
          db.close()
        }
      }
  } else {
    const database = await postgresAtSchema4(process.env.INTAKE_TEST_DATABASE_URL!)
    settings = { SERVICE_DATABASE_URL: database.url }
    cleanup = () => database.drop()
    exec =
      () =>
      async (text, ...params) => {
        const sql = new SQL(database.url, { max: 1 })
        let n = 0
        try {
          await sql.unsafe(
            text.replace(/\?/g, () => `$${++n}`),
            params,
          )
        } finally {
          await sql.close()
        }
      }
  }
  const config = loadConfig({ ...settings, SERVICE_RATE_LIMIT: '0', SERVICE_PUBLIC_RATE_LIMIT: '0' })
  const store = await openStore(config, { poolSize: 2 })
  const clock = testClock()
  const intake = createIntake({ config, store, baseUrl: 'http://intake.test', clock, logger: createLogger(() => {}) })
  const auth = createAuthService(store, clock)
  const keys = { default: (await auth.createKey('default')).key, other: (await auth.createKey('other')).key }
  const app = { handle: intake.handle }
  const result: Upgraded = {
    kind,
    api: (account) => apiClient(app, keys[account]),
    exec: exec(store),
    async close() {
      await intake.background.stop()
      await store.close()
      await cleanup()
    },
  }
  open.push(result)
  return result
}

interface FeedEvent {
  id: string
  type: string
  form_id: string
  payload: Record<string, unknown>
}

async function read(api: ReturnType<typeof apiClient>, query: string): Promise<{ events: FeedEvent[]; next: string }> {
  const res = await api.get(`/events${query}`)
  if (res.status !== 200) throw new Error(`GET /events${query}: ${res.status} ${res.text}`)
  return res.body
}

const kinds = (events: Array<{ type: string; form_id?: string; formId?: string }>) =>
  events.map((event) => [event.type, event.form_id ?? event.formId])

/** The account's events in the older intake's order, with the cursor each had. */
function oldOrder(kind: 'sqlite' | 'postgres', account: string) {
  const position = POSITIONS[kind]
  return OLD_EVENTS.filter((event) => event.account === account)
    .map((event) => ({ ...event, position: position(event.seq), cursor: legacyId(position(event.seq), event.seq) }))
    .sort((a, b) => a.position - b.position || a.seq - b.seq)
}

const stores = (['sqlite', 'postgres'] as const).filter((kind) => kind === 'sqlite' || TEST_STORE === 'postgres')
const skipPostgres = TEST_STORE === 'postgres' && skipWithout(POSTGRES)

for (const kind of stores)
  describe.skipIf(skipPostgres)(`upgraded from the older intake (${kind})`, () => {
    test("each account reads the same events in the same order, with ids of its own: both accounts' first ids are alike", async () => {
      const db = await upgraded(kind)
      const mine = (await read(db.api('default'), '?limit=100')).events
      const theirs = (await read(db.api('other'), '?limit=100')).events
      expect(kinds(mine)).toEqual(kinds(oldOrder(kind, DEFAULT)))
      expect(kinds(theirs)).toEqual(kinds(oldOrder(kind, OTHER)))
      expect(mine[0]!.payload).toMatchObject({ form_id: mine[0]!.form_id })
      // Numbered per account: each account's first event has the same id, its second too.
      expect(theirs[0]!.id).toBe(mine[0]!.id)
      expect(theirs[1]!.id).toBe(mine[1]!.id)
    })

    test('every cursor the older intake gave reads on from the event after it in its order: never a 422, never a skip', async () => {
      const db = await upgraded(kind)
      for (const [account, accountId] of [
        ['default', DEFAULT],
        ['other', OTHER],
      ] as const) {
        const order = oldOrder(kind, accountId)
        for (const [i, event] of order.entries()) {
          const page = await read(db.api(account), `?after=${event.cursor}&limit=100`)
          expect(kinds(page.events)).toEqual(kinds(order.slice(i + 1)))
          // Nothing after the last: `next` is the cursor given.
          if (i === order.length - 1) expect(page.next).toBe(event.cursor)
          // Followed one event at a time from there, the rest comes once each.
          const visited: FeedEvent[] = []
          for (
            let step = await read(db.api(account), `?after=${event.cursor}&limit=1`);
            step.events.length > 0;
            step = await read(db.api(account), `?after=${step.next}&limit=1`)
          ) {
            visited.push(...step.events)
          }
          expect(visited).toEqual(page.events)
        }
      }
      // The cursor of an event since removed (a3's form.completed, seq 5) is still a place: the events after it.
      const removed = legacyId(POSITIONS[kind](5), 5)
      const afterRemoved = oldOrder(kind, DEFAULT).filter(
        (event) => event.position > POSITIONS[kind](5) || (event.position === POSITIONS[kind](5) && event.seq > 5),
      )
      expect(kinds((await read(db.api('default'), `?after=${removed}`)).events)).toEqual(kinds(afterRemoved))
      // The feed's start, as the older intake wrote it.
      expect(kinds((await read(db.api('default'), `?after=${legacyId(0, 0)}`)).events)).toEqual(
        kinds(oldOrder(kind, DEFAULT)),
      )
    })

    test('events written after the upgrade come after every old cursor; a wait from the old head hears the next one', async () => {
      const db = await upgraded(kind)
      const order = oldOrder(kind, DEFAULT)
      const oldHead = order.at(-1)!.cursor
      const form = await db.api('default').createForm()
      const waiter = db.api('default').get(`/events?after=${oldHead}&wait=10`)
      await Bun.sleep(300)
      expect((await db.api('default').patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
      const woken = await waiter
      expect(woken.status).toBe(200)
      expect(kinds(woken.body.events)).toEqual([['form.cancelled', form.id]])
      for (const [i, event] of order.entries()) {
        const page = await read(db.api('default'), `?after=${event.cursor}&limit=100`)
        expect(kinds(page.events)).toEqual([...kinds(order.slice(i + 1)), ['form.cancelled', form.id]])
        expect(page.next).toBe(woken.body.next)
      }
      expect((await read(db.api('default'), `?after=${woken.body.next}`)).events).toEqual([])
    })

    test('an event the older intake writes on the upgraded database is numbered, and read in order after the rest', async () => {
      const db = await upgraded(kind)
      const head = (await read(db.api('default'), '?after=latest')).next
      const formId = '01M8F0T23W2CE4SE7R5D0GCVDH'
      const payload = JSON.stringify({ form_id: formId })
      // The older intake's own INSERT, as it still runs during a rolling upgrade.
      const olderInsert =
        kind === 'sqlite'
          ? `INSERT INTO events (position, account_id, form_id, type, occurred_at, payload, created_at)
             VALUES (coalesce((SELECT floor FROM event_positions), 0), ?, ?, 'form.deleted', ?, ?, ?)`
          : `INSERT INTO events (position, account_id, form_id, type, occurred_at, payload, created_at)
             VALUES (pg_current_xact_id()::text::bigint + coalesce((SELECT floor FROM event_positions), 0), ?, ?, 'form.deleted', ?, ?, ?)`
      await db.exec(olderInsert, DEFAULT, formId, Date.now(), payload, Date.now())
      // Written by another process: on SQLite the server's reads see it from their next snapshot on.
      let page = await read(db.api('default'), `?after=${head}`)
      await until(
        async () => (page = await read(db.api('default'), `?after=${head}`)).events.length > 0,
        5000,
        "the older intake's event to be read",
      )
      expect(
        page.events.map((event) => ({ type: event.type, form_id: event.form_id, payload: event.payload })),
      ).toEqual([{ type: 'form.deleted', form_id: formId, payload: { form_id: formId } }])
      // A new ending after it comes after it, with the next id.
      const form = await db.api('default').createForm()
      expect((await db.api('default').patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
      const all = (await read(db.api('default'), '?limit=100')).events
      expect(kinds(all.slice(-2))).toEqual([
        ['form.deleted', formId],
        ['form.cancelled', form.id],
      ])
      expect(new Set(all.map((event) => event.id)).size).toBe(all.length)
      // The older intake's old cursor for its last event reads on to both.
      expect(kinds((await read(db.api('default'), `?after=${oldOrder(kind, DEFAULT).at(-1)!.cursor}`)).events)).toEqual(
        kinds(all.slice(-2)),
      )
    })
  })
