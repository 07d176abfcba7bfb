/**
 * Fresh PostgreSQL databases for tests, on the server of a base URL (for
 * INTAKE_TEST_DATABASE_URL, an empty database whose user may create
 * databases). A migrated one is a copy of a template database that holds
 * intake's schema, made once per schema (its name carries a hash of the
 * migrations) and kept on the server for the next run: a copy costs tens of
 * milliseconds where applying the migrations costs hundreds.
 */
import { afterAll, afterEach, beforeAll } from 'bun:test'
import { SQL } from 'bun'
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { migrations } from '../src/db/postgres/migrations.ts'
import { createPostgresStore, migratePostgres, type PostgresStore, type PostgresStoreOptions } from '../src/db/postgres/store.ts'
import type { Store } from '../src/db/store.ts'
import { newId } from '../src/lib/ids.ts'
import type { NewForm } from '../src/modules/forms/store/index.ts'

export interface FreshDatabase {
  /** The base URL with the new database's name. */
  url: string
  name: string
  /** Drops the database, with whatever is still connected to it. */
  drop(): Promise<void>
}

/** The URL of database `name` on the server of `url`. */
export function databaseUrl(url: string, name: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  return parsed.toString()
}

/** Held while a template is made, so processes starting together make it once: "tpl" in ASCII. */
const TEMPLATE_LOCK = 0x74706c

const TEMPLATE = `intake_template_${createHash('sha256').update(JSON.stringify(migrations)).digest('hex').slice(0, 16)}`

const admins = new Map<string, SQL>()
const templates = new Map<string, Promise<void>>()

/** A small pool on the base database, for CREATE and DROP DATABASE; it lets its connections go when idle. */
function admin(baseUrl: string): SQL {
  let sql = admins.get(baseUrl)
  if (!sql) {
    sql = new SQL(baseUrl, { max: 4, idleTimeout: 2 })
    admins.set(baseUrl, sql)
  }
  return sql
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`

/** Makes the template database for this schema unless the server has it. */
function template(baseUrl: string): Promise<void> {
  let made = templates.get(baseUrl)
  if (!made) {
    made = makeTemplate(baseUrl)
    made.catch(() => templates.delete(baseUrl))
    templates.set(baseUrl, made)
  }
  return made
}

async function makeTemplate(baseUrl: string): Promise<void> {
  // A session lock needs one connection throughout: a reserved one.
  const conn = await admin(baseUrl).reserve()
  try {
    await conn.unsafe(`SELECT pg_advisory_lock(${TEMPLATE_LOCK})`)
    try {
      const [found] = await conn.unsafe('SELECT 1 FROM pg_database WHERE datname = $1', [TEMPLATE])
      if (found) return
      // Made under another name and renamed once complete: a run killed half-way leaves no broken template.
      const building = `${TEMPLATE}_${randomBytes(4).toString('hex')}`
      await conn.unsafe(`CREATE DATABASE ${quote(building)} TEMPLATE template0`)
      try {
        await migratePostgres(databaseUrl(baseUrl, building), { connectTimeoutMs: 10_000 })
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

/**
 * A new database on the server of `baseUrl`, named `intake_t_<random>`:
 * holding intake's schema (a copy of the template), or empty with
 * `migrated: false` (for tests of opening and migrating).
 */
export async function freshPostgresDatabase(baseUrl: string, options: { migrated?: boolean } = {}): Promise<FreshDatabase> {
  const migrated = options.migrated ?? true
  if (migrated) await template(baseUrl)
  const name = `intake_t_${randomBytes(6).toString('hex')}`
  const sql = admin(baseUrl)
  await sql.unsafe(`CREATE DATABASE ${quote(name)} TEMPLATE ${migrated ? quote(TEMPLATE) : 'template0'}`)
  return {
    url: databaseUrl(baseUrl, name),
    name,
    drop: async () => void (await sql.unsafe(`DROP DATABASE IF EXISTS ${quote(name)} WITH (FORCE)`)),
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
const asOwner = (command: string[]) => (process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', ...command] : command)

async function run(command: string[], options: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<string> {
  const child = Bun.spawn(command, { cwd: options.cwd, env: options.env ?? process.env, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  if (code !== 0) throw new Error(`${command.join(' ')} exited with ${code}: ${err.trim().split('\n').slice(-5).join(' | ')}`)
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
  const pgCtl = (...args: string[]) => run(asOwner([`${bin}/pg_ctl`, '-D', `${dir}/data`, '-w', '-t', '60', ...args]), { cwd: dir })
  return {
    url,
    dir,
    pause: async () => void (await pgCtl('-m', 'fast', 'stop')),
    resume: async () => void (await pgCtl('-l', `${dir}/log`, '-o', `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c max_connections=300`, 'start')),
    async authenticate(line) {
      const hba = `${dir}/data/pg_hba.conf`
      // Written in place, so the file keeps its owner.
      writeFileSync(hba, `${line}\n${readFileSync(hba, 'utf8')}`)
      await pgCtl('reload')
    },
    async remove() {
      await run([script, 'stop', url], { env })
      await Bun.file(state).delete().catch(() => {})
      await Bun.file(`${state}.lock`).delete().catch(() => {})
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
      const store = await createPostgresStore(url, { connectTimeoutMs: 5000, ...options })
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
        store = await createPostgresStore(url, { connectTimeoutMs: 5000 })
      })
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
    callbackMetadata: '{}',
    webhookSecret: null,
    context: null,
    settings: '{}',
    expiresAt: null,
    createdAt: T0,
    ...overrides,
  }
}

/** Settles within `ms`, or rejects: a store must never hang. */
export async function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const hung = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)))
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
