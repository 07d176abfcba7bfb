/**
 * PostgreSQL databases for tests, on the server of a base URL (for
 * INTAKE_TEST_DATABASE_URL, a database whose user may create databases).
 *
 * A migrated database is a copy of a template that holds intake's schema,
 * made once per schema (its name carries a hash of the migrations) and kept
 * on the server: a copy costs tens of milliseconds where applying the
 * migrations costs hundreds. And the copy is used again: PostgreSQL 15 makes
 * every DROP DATABASE wait for a checkpoint of the whole server (0.1 s on an
 * idle machine, a second on a busy one, slowing every other test too), and a
 * connection to a new database costs more than to one that served before. So
 * `drop()` waits for the test's connections to go (a store left open: the
 * database is dropped after all), deletes its rows, checks that nothing but
 * rows changed, and keeps it for the next test of the process.
 *
 * Such databases (`intake_pool_<schema hash>_<random>`) are held by an
 * advisory lock on their OID for as long as their process runs, each with an
 * idle connection of its own (application_name intake-test-pool) that
 * empties it. A later run takes over those an earlier one left, and drops
 * those of other schemas.
 */
import { afterAll, afterEach, beforeAll } from 'bun:test'
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { type ReservedSQL, SQL } from 'bun'
import type { PostgresStoreOptions } from '../src/db/postgres/connect.ts'
import { migratePostgres } from '../src/db/postgres/driver.ts'
import { migrations } from '../src/db/postgres/migrations.ts'
import { newId } from '../src/lib/ids.ts'
import type { NewForm } from '../src/modules/forms/store/index.ts'
import { openPostgresStore, type PostgresStore, type Store } from '../src/stores.ts'

export interface FreshDatabase {
  /** The base URL with the database's name. */
  url: string
  name: string
  /** Lets the database go: dropped, or (migrated ones, soon after this resolves) emptied and kept for another test. */
  drop(): Promise<void>
}

/** The URL of database `name` on the server of `url`. */
export function databaseUrl(url: string, name: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  return parsed.toString()
}

const SCHEMA_HASH = createHash('sha256').update(JSON.stringify(migrations)).digest('hex').slice(0, 16)
const TEMPLATE = `intake_template_${SCHEMA_HASH}`
const POOLED = `intake_pool_${SCHEMA_HASH}_`
const CLEANER = 'intake-test-pool'

/** Held while a template is made, so processes starting together make it once: "tpl" in ASCII. */
const TEMPLATE_LOCK = 0x74706c
/** The lock on a pooled database: "poo" in ASCII in the high bits, its OID in the low 32. */
const poolLock = (oid: number) => `(${0x706f6f}::bigint << 32) | ${oid}`

/**
 * What a database looks like but for its rows: its schemas, relations and
 * their columns, triggers, functions and intake_schema's row. A test that
 * changed any of it leaves a database that is dropped, not used again.
 */
const FINGERPRINT = `SELECT md5(concat_ws('|',
    (SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'),
    (SELECT string_agg(c.relname || '/' || c.relkind::text || '/' || coalesce(a.attname, '') || '/' || coalesce(a.atttypid::text, ''), ',' ORDER BY c.relname, a.attnum)
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE n.nspname = 'public'),
    (SELECT string_agg(tgname, ',' ORDER BY tgname) FROM pg_trigger WHERE NOT tgisinternal),
    (SELECT string_agg(p.proname || md5(p.prosrc), ',' ORDER BY p.proname) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'),
    (SELECT string_agg(version || '/' || oldest_compatible, ',') FROM intake_schema)
  )) AS fingerprint`

/** A pooled database this process holds, with the connection that empties it. */
interface Pooled {
  oid: number
  name: string
  cleaner: SQL
}

/** One server's pieces: a pool for CREATE and DROP DATABASE, and what this process holds there. */
interface Server {
  baseUrl: string
  admin: SQL
  template?: Promise<void>
  /** The connection that holds this process's locks on pooled databases, for as long as it runs. */
  locks?: Promise<ReservedSQL>
  /** OIDs of the pooled databases this process holds, lent or free. */
  held: Set<number>
  /** Those of them empty and unused. */
  free: Pooled[]
  /** The template's (the comment on it says). */
  fingerprint?: string
  /** Whether those earlier runs left were looked for. */
  adopted: boolean
}

const servers = new Map<string, Server>()

function server(baseUrl: string): Server {
  let found = servers.get(baseUrl)
  if (!found) {
    // Its connections are let go when idle; the reserved one (the locks) stays.
    found = { baseUrl, admin: new SQL(baseUrl, { max: 4, idleTimeout: 2 }), held: new Set(), free: [], adopted: false }
    servers.set(baseUrl, found)
  }
  return found
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`

/** Makes the template database for this schema unless the server has it. */
function template(at: Server): Promise<void> {
  if (!at.template) {
    at.template = makeTemplate(at)
    at.template.catch(() => (at.template = undefined))
  }
  return at.template
}

async function makeTemplate(at: Server): Promise<void> {
  // A session lock needs one connection throughout: a reserved one.
  const conn = await at.admin.reserve()
  try {
    await conn.unsafe(`SELECT pg_advisory_lock(${TEMPLATE_LOCK})`)
    try {
      const [found] = await conn.unsafe('SELECT 1 FROM pg_database WHERE datname = $1', [TEMPLATE])
      if (found) return
      // Made under another name and renamed once complete: a run killed half-way leaves no broken template.
      const building = `${TEMPLATE}_${randomBytes(4).toString('hex')}`
      await conn.unsafe(`CREATE DATABASE ${quote(building)} TEMPLATE template0`)
      try {
        const url = databaseUrl(at.baseUrl, building)
        await migratePostgres(url, { connectTimeoutMs: 10_000 })
        const sql = new SQL(url, { max: 1 })
        const [{ fingerprint }] = await sql.unsafe(FINGERPRINT).finally(() => sql.close())
        await conn.unsafe(`COMMENT ON DATABASE ${quote(building)} IS 'intake test template ${fingerprint}'`)
        await conn.unsafe(`ALTER DATABASE ${quote(building)} RENAME TO ${quote(TEMPLATE)}`)
      } catch (error) {
        await conn.unsafe(`DROP DATABASE IF EXISTS ${quote(building)} WITH (FORCE)`).catch(() => {})
        throw error
      }
      // Nobody connects to it by mistake, which would hold up every copy.
      await conn.unsafe(`ALTER DATABASE ${quote(TEMPLATE)} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`)
    } finally {
      await conn.unsafe(`SELECT pg_advisory_unlock(${TEMPLATE_LOCK})`)
    }
  } finally {
    await conn.release()
  }
}

/** A pooled database whose tables hold more than this when given back is dropped, not emptied. */
const REUSED_DATABASE_BYTES = 16 * 1024 * 1024

/** Takes database `oid` for this process: false when this or another live process holds it. */
async function lock(at: Server, oid: number): Promise<boolean> {
  // A session takes a lock it holds again: what this process holds is known here.
  if (at.held.has(oid)) return false
  at.locks ??= at.admin.reserve()
  const [row] = await (await at.locks).unsafe(`SELECT pg_try_advisory_lock(${poolLock(oid)}) AS taken`)
  if (row.taken) at.held.add(oid)
  return row.taken
}

function pooled(at: Server, oid: number, name: string): Pooled {
  // lock_timeout: a transaction a test left open fails the emptying rather than holding it up.
  const cleaner = new SQL(databaseUrl(at.baseUrl, name), {
    max: 1,
    connection: { application_name: CLEANER, lock_timeout: '2s' },
  })
  return { oid, name, cleaner }
}

/** Drops a pooled database for good, with whatever is connected to it, and lets its lock go. */
async function dropPooled(at: Server, db: Pooled): Promise<void> {
  await db.cleaner.close({ timeout: 0 }).catch(() => {})
  await at.admin.unsafe(`DROP DATABASE IF EXISTS ${quote(db.name)} WITH (FORCE)`)
  await (await at.locks!).unsafe(`SELECT pg_advisory_unlock(${poolLock(db.oid)})`)
  at.held.delete(db.oid)
}

/**
 * Puts a pooled database back among the free ones once nothing but its
 * cleaner is connected: its rows deleted (but intake_schema's), the rest
 * checked. Dropped when something stays connected, or the test changed more
 * than rows.
 */
async function giveBack(at: Server, db: Pooled): Promise<void> {
  let connected = 0
  for (let waited = 0; waited < 2000; waited += 5) {
    const [row] = await at.admin.unsafe(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name <> $2',
      [db.name, CLEANER],
    )
    connected = row.n
    // A store just closed leaves its server processes a moment to exit.
    if (connected === 0) break
    await Bun.sleep(5)
  }
  if (connected === 0 && (await empty(at, db))) at.free.push(db)
  else await dropPooled(at, db)
}

/** Rows the migrations write, put back after the rest is deleted: the database as the template made it. */
const SEEDED_ROWS = 'INSERT INTO event_positions (id, floor) VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET floor = 0'

/**
 * Deletes every row but intake_schema's (and those the migrations seed); true when the database is then as
 * the template made it. Tried twice: a test may have cut the cleaner's
 * connection off (pg_terminate_backend), and the second try opens another.
 */
async function empty(at: Server, db: Pooled, tries = 2): Promise<boolean> {
  try {
    // Deleted rows stay in the table until a vacuum, and a test that filled one (a backlog of 100,000
    // deliveries) would leave the next test its dead rows to scan: such a database is dropped instead.
    const [{ bytes }] = await db.cleaner.unsafe(
      `SELECT coalesce(sum(pg_table_size(oid)), 0)::int8 AS bytes FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'`,
    )
    if (Number(bytes) > REUSED_DATABASE_BYTES) return false
    const tables = await db.cleaner<
      Array<{ name: string }>
    >`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'intake_schema'`
    // Twice: a trigger writes rows while the first round deletes (response_files' into unclaimed_files).
    const deletes = tables.map((table) => `DELETE FROM ${quote(table.name)}`).join('; ')
    if (deletes) for (let round = 0; round < 2; round++) await db.cleaner.unsafe(deletes)
    await db.cleaner.unsafe(SEEDED_ROWS)
    const [{ fingerprint }] = await db.cleaner.unsafe(FINGERPRINT)
    return fingerprint === at.fingerprint
  } catch {
    return tries > 1 && empty(at, db, tries - 1)
  }
}

/** A new copy of the template, held by this process. */
async function copyTemplate(at: Server): Promise<Pooled> {
  const name = `${POOLED}${randomBytes(6).toString('hex')}`
  await at.admin.unsafe(`CREATE DATABASE ${quote(name)} TEMPLATE ${quote(TEMPLATE)}`)
  const [{ oid }] = await at.admin.unsafe('SELECT oid::int8 AS oid FROM pg_database WHERE datname = $1', [name])
  await lock(at, Number(oid))
  return pooled(at, Number(oid), name)
}

/**
 * The template's fingerprint, and the pooled databases earlier runs left:
 * those of this schema taken over (emptied and checked), those of other
 * schemas dropped; any a live process holds are left alone.
 */
async function adoptLeftovers(at: Server): Promise<void> {
  const [row] = await at.admin.unsafe(
    `SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1`,
    [TEMPLATE],
  )
  at.fingerprint = /^intake test template ([0-9a-f]{32})$/.exec(row?.comment ?? '')?.[1]
  if (at.fingerprint === undefined) {
    // A template without its fingerprint: a copy of it says what it is.
    const copy = await copyTemplate(at)
    at.fingerprint = (await copy.cleaner.unsafe(FINGERPRINT))[0].fingerprint
    at.free.push(copy)
    await at.admin.unsafe(`COMMENT ON DATABASE ${quote(TEMPLATE)} IS 'intake test template ${at.fingerprint}'`)
  }
  const found = await at.admin.unsafe(
    `SELECT oid::int8 AS oid, datname AS name FROM pg_database WHERE datname LIKE 'intake\\_pool\\_%'`,
  )
  const taken: Pooled[] = []
  for (const { oid, name } of found as Array<{ oid: string; name: string }>) {
    if (await lock(at, Number(oid))) taken.push(pooled(at, Number(oid), name))
  }
  await Promise.all(
    taken.map((db) => (db.name.startsWith(POOLED) ? giveBack(at, db) : dropPooled(at, db)).catch(() => {})),
  )
}

/**
 * A database on the server of `baseUrl` for one test: holding intake's
 * schema and no rows (a pooled copy of the template), or, with
 * `migrated: false`, a new empty one named `intake_t_<random>` (for tests of
 * opening and migrating), which `drop()` drops.
 */
export async function freshPostgresDatabase(
  baseUrl: string,
  options: { migrated?: boolean } = {},
): Promise<FreshDatabase> {
  const at = server(baseUrl)
  if (options.migrated === false) {
    const name = `intake_t_${randomBytes(6).toString('hex')}`
    await at.admin.unsafe(`CREATE DATABASE ${quote(name)} TEMPLATE template0`)
    return {
      url: databaseUrl(baseUrl, name),
      name,
      drop: async () => void (await at.admin.unsafe(`DROP DATABASE IF EXISTS ${quote(name)} WITH (FORCE)`)),
    }
  }
  await template(at)
  if (!at.adopted) {
    at.adopted = true
    await adoptLeftovers(at)
  }
  const db = at.free.pop() ?? (await copyTemplate(at))
  let _given: Promise<void> | undefined
  return {
    url: databaseUrl(baseUrl, db.name),
    name: db.name,
    // Emptied while the next test starts (on another free database, or a new copy when there is none).
    // A run that ends first leaves it to the next run to empty.
    drop() {
      _given ??= giveBack(at, db).catch(() => {})
      return Promise.resolve()
    },
  }
}

/** A PostgreSQL server of a test's own (scripts/postgres-cluster.sh), to stop and start again. */
export interface ThrowawayCluster {
  /** postgres://intake@127.0.0.1:PORT/intake (trust auth). */
  url: string
  /** The cluster's folder (its data in data/, its log in log). */
  dir: string
  /** Stops the server (pg_ctl stop -m fast): connections are closed, new ones refused. */
  pause(): Promise<void>
  /** Starts it again, on the same port. */
  resume(): Promise<void>
  /** Puts `line` first in pg_hba.conf and reloads: `host all alice 127.0.0.1/32 scram-sha-256`. */
  authenticate(line: string): Promise<void>
  /** Stops it and removes its folder. */
  remove(): Promise<void>
}

const PROJECT_ROOT = new URL('..', import.meta.url).pathname

/** A command run as the cluster's owner: "postgres" when we are root (PostgreSQL refuses root). */
const asOwner = (command: string[]) =>
  process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', ...command] : command

async function run(
  command: string[],
  options: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<string> {
  const child = Bun.spawn(command, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  if (code !== 0)
    throw new Error(`${command.join(' ')} exited with ${code}: ${err.trim().split('\n').slice(-5).join(' | ')}`)
  return out
}

/** The folder of PostgreSQL's programs, as scripts/postgres-cluster.sh finds it. */
async function binDir(): Promise<string> {
  const initdb = Bun.which('initdb')
  if (initdb) return (await run(['readlink', '-f', initdb])).trim().replace(/\/initdb$/, '')
  const versions = (await run(['sh', '-c', 'ls -d /usr/lib/postgresql/*/bin | sort -V'])).trim().split('\n')
  return versions.at(-1)!
}

/** Starts a cluster of the test's own with scripts/postgres-cluster.sh (a state file of its own, so `stop` finds only it). */
export async function startThrowawayCluster(): Promise<ThrowawayCluster> {
  const state = `/var/tmp/intake-pg-store-test-${process.pid}-${randomBytes(3).toString('hex')}`
  const env = { ...process.env, INTAKE_PG_STATE: state }
  const script = `${PROJECT_ROOT}scripts/postgres-cluster.sh`
  const url = (await run([script, 'start'], { env })).trim()
  const dir = (await Bun.file(state).text()).trim().split('\t')[0]!
  const bin = await binDir()
  const port = new URL(url).port
  const pgCtl = (...args: string[]) =>
    run(asOwner([`${bin}/pg_ctl`, '-D', `${dir}/data`, '-w', '-t', '60', ...args]), { cwd: dir })
  return {
    url,
    dir,
    pause: async () => void (await pgCtl('-m', 'fast', 'stop')),
    resume: async () =>
      void (await pgCtl(
        '-l',
        `${dir}/log`,
        '-o',
        `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c max_connections=300`,
        'start',
      )),
    async authenticate(line) {
      const hba = `${dir}/data/pg_hba.conf`
      // Written in place, so the file keeps its owner.
      writeFileSync(hba, `${line}\n${readFileSync(hba, 'utf8')}`)
      await pgCtl('reload')
    },
    async remove() {
      await run([script, 'stop', url], { env })
      await Bun.file(state)
        .delete()
        .catch(() => {})
      await Bun.file(`${state}.lock`)
        .delete()
        .catch(() => {})
    },
  }
}

/**
 * Databases, stores and plain clients for a test file on the server of
 * `baseUrl`, let go by hooks this registers: a store a test opens is closed
 * after it (a group's after the group), clients and databases at the end (a
 * server allows only so many connections).
 */
export function postgresFixtures(baseUrl: string) {
  const databases: FreshDatabase[] = []
  const testStores: Store[] = []
  const clients: SQL[] = []
  afterEach(async () => {
    for (const store of testStores.splice(0)) await store.close().catch(() => {})
  })
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => {})))
    await Promise.all(databases.map((database) => database.drop().catch(() => {})))
  }, 60_000)

  async function freshDatabase(migrated = true): Promise<FreshDatabase> {
    const database = await freshPostgresDatabase(baseUrl, { migrated })
    databases.push(database)
    return database
  }
  return {
    freshDatabase,
    /** A store for this test only. */
    async openStore(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
      const store = await openPostgresStore(url, { connectTimeoutMs: 5000, ...options })
      testStores.push(store)
      return store
    },
    /** A store on a database of its own for the tests of a describe block (call it there). */
    groupStore(): { readonly store: PostgresStore; readonly url: string } {
      let store: PostgresStore | undefined
      let url = ''
      beforeAll(async () => {
        if (!/^postgres(ql)?:\/\//.test(baseUrl)) return
        url = (await freshDatabase()).url
        store = await openPostgresStore(url, { connectTimeoutMs: 5000 })
      }, 30_000)
      afterAll(async () => {
        await store?.close()
      })
      return {
        get store() {
          return store!
        },
        get url() {
          return url
        },
      }
    },
    /** A plain client, to look at what a store wrote; its connections are let go when idle. */
    inspect(url: string, options: { max?: number; connection?: Record<string, string | number> } = {}): SQL {
      const sql = new SQL(url, { max: 2, idleTimeout: 1, ...options })
      clients.push(sql)
      return sql
    },
  }
}

/** A time in the tests' forms (2027-01-15). */
export const T0 = 1_800_000_000_000

/** A form as a store takes it: active, no expiry, no callback. */
export function formRecord(accountId: string, overrides: Partial<NewForm> = {}): NewForm {
  return {
    id: newId(),
    accountId,
    title: 'A form',
    description: null,
    fields: [{ key: 'name', type: 'text', label: 'Name' }],
    fieldsCount: 1,
    callbackUrl: null,
    callbackEvents: ['form.completed'],
    callbackMetadata: '{}',
    webhookSecret: null,
    context: null,
    settings: '{}',
    page: {},
    expiresAt: null,
    createdAt: T0,
    ...overrides,
  }
}

/** Settles within `ms`, or rejects: a store must never hang. */
export async function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const hung = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)),
  )
  try {
    return await Promise.race([promise, hung])
  } finally {
    clearTimeout(timer)
  }
}

/** What a promise came to, without throwing. */
export const settle = <T>(promise: Promise<T>) =>
  promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  )
