// Types only: `Bun.SQL` is read where a pool is made, since reading it loads Bun's SQL
// client (about 4 MiB of resident memory), which a server on SQLite never needs.
import type { ReservedSQL, SQL } from 'bun'
import { DatabaseOpenError, DatabaseUnavailable, DatabaseUnreachable, type Driver, type Upgrade } from '../driver.ts'
import { CHANGES_CHANNEL, type ChangeListener, listenForChanges } from './changes.ts'
import { applyMigrations, checkSchema } from './migrations.ts'

/**
 * intake on a PostgreSQL database (15 or newer), through Bun's client: a pool
 * of connections for reads, one connection per transaction for the rest.
 *
 * Bun's client, as found on Bun 1.4.5: int8 comes back as a string (each
 * store Number()s its times), bytea as a Buffer; a JS number is sent as int4,
 * int8 or float8 after its value, strings and nulls untyped (the server infers
 * them), arrays as arrays. Statements are prepared once per connection (per
 * text and parameter types). PGPASSWORD, PGUSER and the other PG* variables
 * fill in what the URL leaves out, except that PGDATABASE would win over the
 * URL's database: the URL's is passed explicitly.
 */

/** Runs one statement with positional parameters ($1, $2, ...); a lost connection throws DatabaseUnavailable. */
export type Query = <Row = Record<string, unknown>>(
  text: string,
  params?: unknown[],
) => Promise<Row[] & { count: number }>

export interface PostgresStoreOptions {
  /** Hears of a migration this open made to an existing database. */
  onUpgrade?: (upgrade: Upgrade) => void
  /** Hears of each try to reach a database that does not answer yet. */
  log?: (line: string) => void
  /** How long to keep trying to reach the database at start (default 30 s). */
  connectTimeoutMs?: number
  /** false: nothing is written (no migration); only a newer intake's database that refuses this one is refused. */
  migrate?: boolean
  /** Connections in the pool (default 10). */
  poolSize?: number
}

/** What every connection of the store sets when it opens. */
export const SESSION_SETTINGS = {
  // Every statement is planned for its values: a generic plan walks the
  // primary key for a list page of a small account (ids in order, account_id
  // "probably" matching), seconds at a million forms.
  plan_cache_mode: 'force_custom_plan',
  // A transaction held open by a stuck process gives its locks (rows of forms,
  // deliveries) back after a minute: no unit of work waits that long.
  idle_in_transaction_session_timeout: 60_000,
}

/** A driver on PostgreSQL, with the schema its database held once opened. */
export interface PostgresDriver<Tx> extends Driver<Tx> {
  readonly schemaVersion: number
}

/**
 * Makes the module stores on a query runner: the pool's (reads), or one
 * transaction's. `keysVersion` is the notification channel's (see
 * changes.ts), given to the pool's stores only.
 */
type StoresOn<Tx> = (query: Query, keysVersion?: () => unknown) => Tx

const DEFAULT_CONNECT_TIMEOUT_MS = 30_000
const DEFAULT_POOL_SIZE = 10
const RETRY_EVERY_MS = 1000

/**
 * How long one statement may go unanswered, the wait for a connection
 * included, before the database counts as not answering. A server that is
 * frozen, or a network that drops packets, sends no error: without a bound a
 * statement waits as long as TCP keeps the connection open (a quarter of an
 * hour), and so does every request behind it. Past this the statement fails
 * with DatabaseUnanswered (503) and what it waited on is let go of
 * (CONTRACT 13a: noticed within 5 s). intake's statements take milliseconds;
 * PostgreSQL's `statement_timeout` cannot help, since a server that does not
 * run does not time anything out.
 */
const STATEMENT_DEADLINE_MS = 4000
/** /healthz's statement: a 503 within the 2 s of CONTRACT 13a. */
const PING_DEADLINE_MS = 1500
/** The wait for the lock `alone` takes: the instance holding it may be writing the first key's banner to a slow stdout. */
const ALONE_LOCK_DEADLINE_MS = 30_000
/** A pool let go of is closed this long after: its statements in flight have had their deadline by then. */
const RETIRED_POOL_CLOSES_AFTER_MS = STATEMENT_DEADLINE_MS + 1000

const DEADLOCK_RETRIES = 3
/** The advisory lock `alone` holds: "alone" in ASCII (the schema's is "intake"). */
const ALONE_LOCK = 0x616c6f6e65n

/** Chosen as a deadlock's victim (40P01) or failed to serialize (40001): running the unit again will work. */
const isDeadlockVictim = (error: unknown) => {
  const { errno } = (error ?? {}) as { errno?: unknown }
  return errno === '40P01' || errno === '40001'
}

/**
 * The database for people: `postgres://user@host:port/db`, never a password
 * (nor the query string, which may hold one). An unparsable URL is not echoed.
 */
export function describeDatabaseUrl(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'postgres://(an unparsable URL)'
  }
  const user = parsed.username ? `${parsed.username}@` : ''
  const port = parsed.port ? `:${parsed.port}` : ''
  const database = parsed.pathname === '/' ? '' : parsed.pathname
  return `postgres://${user}${parsed.hostname}${port}${database}`
}

/** Bun's codes for a connection that failed, closed or timed out, and socket errors. */
const CONNECTION_CODES = new Set([
  'ERR_POSTGRES_CONNECTION_CLOSED',
  'ERR_POSTGRES_CONNECTION_FAILED',
  'ERR_POSTGRES_CONNECTION_REFUSED',
  'ERR_POSTGRES_CONNECTION_TIMEOUT',
  'ERR_POSTGRES_IDLE_TIMEOUT',
  'ERR_POSTGRES_LIFETIME_TIMEOUT',
  'ERR_POSTGRES_TLS_NOT_AVAILABLE',
  'ERR_POSTGRES_TLS_UPGRADE_FAILED',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
])

/**
 * SQLSTATEs of a server that will not serve this connection now: connection
 * exceptions (class 08), credentials refused (class 28), shut down, crashed or
 * starting (57P01 to 57P03), too many connections (53300), a read-only standby
 * (25006, after a failover) and a database that is not there (3D000).
 */
const UNAVAILABLE_STATES = /^(08|28)|^(57P01|57P02|57P03|53300|25006|3D000)$/

/** A failure of the connection or the server as a whole, not of the statement: retrying later may work. */
export function isConnectionFailure(error: unknown): boolean {
  if (error instanceof DatabaseUnavailable) return true
  if (typeof error !== 'object' || error === null) return false
  const { code, errno } = error as { code?: unknown; errno?: unknown }
  return (
    (typeof code === 'string' && CONNECTION_CODES.has(code)) ||
    (typeof errno === 'string' && UNAVAILABLE_STATES.test(errno))
  )
}

/** A connection that was open and died (terminated, server stopped): the next one may work at once. */
function isLostConnection(error: unknown): boolean {
  const { code, errno } = error as { code?: unknown; errno?: unknown }
  return code === 'ERR_POSTGRES_CONNECTION_CLOSED' || errno === '57P01' || errno === '57P02'
}

/**
 * The database did not answer a statement within its deadline: a 503, as for
 * a lost connection. After a COMMIT, whether it committed is unknown.
 */
export class DatabaseUnanswered extends DatabaseUnavailable {}

/**
 * `statement`'s outcome, or DatabaseUnanswered once `ms` have passed without
 * one (the statement's `deadlineMs`, of which `ms` were left); `letGo` then
 * drops what the statement waits on (its connection, its pool), so that
 * nothing stays queued behind it on a server that does not answer. A
 * statement settled later settles nothing.
 */
function answeredWithin<T>(
  statement: PromiseLike<T>,
  ms: number,
  letGo: (error: DatabaseUnanswered) => void,
  deadlineMs = ms,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      const error = new DatabaseUnanswered(`PostgreSQL did not answer within ${deadlineMs / 1000} s`)
      letGo(error)
      reject(error)
    }, ms)
    statement.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error) => {
        clearTimeout(timer)
        reject(error)
      },
    )
  })
}

/**
 * The pool statements go to. A statement unanswered on the pool retires it:
 * new work goes to a new pool at once, and the old one is closed once its
 * statements in flight have had their deadline, so every connection stuck on
 * a server that stopped answering is dropped. Bun's pool cannot tell which
 * connection a statement waits on, and would queue more statements behind
 * a stuck one for as long as TCP keeps it open.
 */
interface Pools {
  readonly current: SQL
  /** Lets `sql` go when it is still the current pool (a later pool is not retired for an earlier one's statements). */
  retire(sql: SQL): void
  close(timeoutSeconds: number): Promise<void>
}

function createPools(first: SQL, open: () => SQL): Pools {
  let current = first
  const retired = new Map<SQL, ReturnType<typeof setTimeout>>()
  const closeRetired = (sql: SQL) => {
    clearTimeout(retired.get(sql))
    retired.delete(sql)
    return sql.close({ timeout: 0 }).catch(() => {})
  }
  return {
    get current() {
      return current
    },
    retire(sql) {
      if (sql !== current) return
      current = open()
      const timer = setTimeout(() => void closeRetired(sql), RETIRED_POOL_CLOSES_AFTER_MS)
      timer.unref()
      retired.set(sql, timer)
    },
    async close(timeoutSeconds) {
      await Promise.all([...[...retired.keys()].map(closeRetired), current.close({ timeout: timeoutSeconds })])
    },
  }
}

/** A connection of `sql`'s pool, reserved within `ms` (DatabaseUnanswered when none comes). */
async function reserveWithin(sql: SQL, ms: number): Promise<ReservedSQL> {
  const abandon = new AbortController()
  const reserving = sql.reserve({ signal: abandon.signal })
  try {
    return await answeredWithin(reserving, ms, (error) => abandon.abort(error))
  } catch (error) {
    // One that comes after all goes back to the pool.
    reserving.then(
      (late) => void late.release(),
      () => {},
    )
    throw translate(error)
  }
}

/**
 * A reserved connection whose statements each have a deadline. The first
 * that goes unanswered closes the connection (it never goes back to the
 * pool), and is what the work on it failed with.
 */
function boundedConnection(connection: ReservedSQL) {
  let unanswered: DatabaseUnanswered | undefined
  const letGo = (error: DatabaseUnanswered) => {
    if (unanswered) return
    unanswered = error
    void connection.close().catch(() => {})
  }
  return {
    statement: (text: string, params: unknown[] = [], ms = STATEMENT_DEADLINE_MS) =>
      answeredWithin(connection.unsafe(text, params), ms, letGo),
    get unanswered() {
      return unanswered
    },
    /** Gives the connection back to the pool, unless a statement went unanswered (it is closed then). */
    release() {
      if (!unanswered) void connection.release()
    },
  }
}

/** The one translation every statement's failure goes through: a lost database is DatabaseUnavailable (503). */
function translate(error: unknown): unknown {
  if (error instanceof DatabaseUnavailable || !isConnectionFailure(error)) return error
  return new DatabaseUnavailable(`PostgreSQL is unavailable: ${describeFailure(error)}`, { cause: error })
}

/** Why it failed, in one line, with the SQLSTATE or Bun's code when the message alone says little ("Failed to connect"). */
export function describeFailure(error: unknown): string {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown }
  const message = error instanceof Error ? error.message : String(error)
  if (typeof errno === 'string' && errno !== '' && !message.includes(errno)) return `${message} (SQLSTATE ${errno})`
  return typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message
}

/** The secrets a URL and the environment may hold, never to be shown. */
export function secretsOf(url: string): string[] {
  const secrets: string[] = []
  try {
    const parsed = new URL(url)
    if (parsed.password) secrets.push(parsed.password, decodeURIComponent(parsed.password))
    const inQuery = parsed.searchParams.get('password')
    if (inQuery) secrets.push(inQuery)
  } catch {}
  if (process.env.PGPASSWORD) secrets.push(process.env.PGPASSWORD)
  return secrets.filter((secret) => secret.length > 0)
}

/** `text` with every one of `secrets` in it replaced by ***. */
export const redact = (text: string, secrets: string[]) =>
  secrets.reduce((line, secret) => line.split(secret).join('***'), text)

/**
 * Runs reads on the pool. A read that meets a connection that died since its
 * last use (the server restarted, the backend was terminated) is tried again
 * on another: the pool drops each dead connection as it finds it, and a read
 * may run twice. At most `attempts` tries, one per connection the pool holds,
 * all within `deadlineMs`; a read unanswered by then retires the pool.
 */
function poolRunner(pools: Pools, attempts: number, deadlineMs = STATEMENT_DEADLINE_MS): Query {
  return async (text, params = []) => {
    const started = performance.now()
    for (let attempt = 1; ; attempt++) {
      const sql = pools.current
      try {
        const left = Math.max(1, deadlineMs - (performance.now() - started))
        return await answeredWithin(sql.unsafe(text, params), left, () => pools.retire(sql), deadlineMs)
      } catch (error) {
        if (attempt >= attempts || !isLostConnection(error)) throw translate(error)
      }
    }
  }
}

/** Connections in the store's pool: at least two, for the check of sessions (refuseSharedSessions). */
const poolSizeOf = (options: PostgresStoreOptions) => Math.max(2, options.poolSize ?? DEFAULT_POOL_SIZE)

/** A pool of `max` connections on `url`, none opened yet. */
function openPool(url: string, max: number, connectionTimeoutSeconds: number): SQL {
  const database = decodeURIComponent(new URL(url).pathname.slice(1))
  return new Bun.SQL(url, {
    ...(database ? { database } : {}),
    max,
    // Seconds. Idle connections are let go after a minute, and every
    // connection is renewed after an hour (a moved server, a rotated password).
    idleTimeout: 60,
    maxLifetime: 3600,
    connectionTimeout: connectionTimeoutSeconds,
    connection: SESSION_SETTINGS,
  })
}

/**
 * Refuses a connection pooler that does not give each of intake's
 * connections a server session of its own (PgBouncer in transaction or
 * statement mode): there, Bun's prepared statements meet other connections'
 * (`prepared statement "P2" already exists`, a 500 on most requests), and
 * LISTEN, which wakes waits across instances and ends revoked keys' waits,
 * hears nothing. Two connections, A and B: A's backend, then B's (the same
 * one when a pool hands out the backend A just gave back, as PgBouncer does
 * by default), then B's again inside a transaction and A's while that
 * transaction holds B's backend (a backend another than before when the
 * pool hands them out in turn). On PostgreSQL itself, or a session pool, A
 * and B each keep one backend of their own throughout. Simple queries only:
 * nothing here prepares a statement.
 */
async function refuseSharedSessions(sql: SQL, location: string): Promise<void> {
  const a = boundedConnection(await reserveWithin(sql, STATEMENT_DEADLINE_MS))
  let b: ReturnType<typeof boundedConnection> | undefined
  try {
    b = boundedConnection(await reserveWithin(sql, STATEMENT_DEADLINE_MS))
    const backendOf = async (connection: ReturnType<typeof boundedConnection>) =>
      String((await connection.statement('SELECT pg_backend_pid() AS pid'))[0].pid)
    const a1 = await backendOf(a)
    const b1 = await backendOf(b)
    let refusal: string | undefined
    let own = a1 !== b1
    if (own) {
      try {
        await b.statement('BEGIN')
        const b2 = await backendOf(b)
        own = b2 === b1 && (await backendOf(a)) === a1
      } catch (error) {
        // PgBouncer in statement mode refuses a transaction of several statements (a protocol violation, 08P01).
        if (isConnectionFailure(error) && (error as { errno?: unknown }).errno !== '08P01') throw error
        own = false
        refusal = describeFailure(error)
      } finally {
        await b.statement('ROLLBACK').catch(() => {})
      }
    }
    if (own) return
    throw new DatabaseOpenError(
      `The PostgreSQL database at ${location} is reached through a connection pooler that shares server sessions between connections ` +
        `(PgBouncer in transaction or statement mode${refusal ? `: ${refusal}` : ''}): intake needs a session of its own on each connection, ` +
        'for its prepared statements and LISTEN. Use pool_mode = session, or connect to PostgreSQL directly (docs/postgresql.md, "PgBouncer").',
    )
  } catch (error) {
    throw translate(error)
  } finally {
    a.release()
    b?.release()
  }
}

/**
 * A pool on `url` that has answered once: tried every second for up to
 * `connectTimeoutMs` (one line to `log` per failed try), whatever the failure
 * (refused, unknown host, credentials, TLS, no such database yet: the
 * operator may be fixing it), then DatabaseUnreachable (exit code 1: it may answer later).
 */
async function connect(
  url: string,
  options: PostgresStoreOptions,
): Promise<{ sql: SQL; location: string; open: (max: number) => SQL }> {
  const location = describeDatabaseUrl(url)
  const secrets = secretsOf(url)
  const budgetMs = Math.max(0, options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS)
  const reason = (error: unknown) => redact(describeFailure(error), secrets)
  let sql: SQL
  // A host that does not answer at all costs at most this per try.
  const connectionTimeoutSeconds = Math.min(10, Math.max(1, Math.ceil(budgetMs / 1000)))
  const open = (max: number) => openPool(url, max, connectionTimeoutSeconds)
  try {
    sql = open(poolSizeOf(options))
  } catch (error) {
    throw new DatabaseOpenError(`Cannot use the PostgreSQL database at ${location}: ${reason(error)}`)
  }
  const started = performance.now()
  for (let attempt = 1; ; attempt++) {
    const remainingMs = budgetMs - (performance.now() - started)
    let failure: unknown
    let timer: ReturnType<typeof setTimeout> | undefined
    try {
      const probe = sql.unsafe('SELECT 1').then(() => undefined)
      // Left behind when the time runs out: closing the pool settles it.
      probe.catch(() => {})
      await Promise.race([
        probe,
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${Math.ceil(Math.max(remainingMs, 1000) / 1000)} s`)),
            Math.max(remainingMs, 1000),
          )
        }),
      ])
      return { sql, location, open }
    } catch (error) {
      failure = error
    } finally {
      clearTimeout(timer)
    }
    const elapsedMs = performance.now() - started
    if (elapsedMs + RETRY_EVERY_MS > budgetMs) {
      await sql.close({ timeout: 0 }).catch(() => {})
      throw new DatabaseUnreachable(
        `Cannot reach the PostgreSQL database at ${location} after ${Math.round(budgetMs / 1000)} s: ${reason(failure)}`,
      )
    }
    options.log?.(
      `Cannot reach the PostgreSQL database at ${location} yet (try ${attempt}): ${reason(failure)}; trying again in 1 s`,
    )
    await Bun.sleep(RETRY_EVERY_MS)
  }
}

/** Brings the schema up to date (or only checks it), closing the pool when it cannot; the schema found and the one left. */
async function prepareSchema(
  sql: SQL,
  location: string,
  url: string,
  options: PostgresStoreOptions,
): Promise<{ from: number; to: number }> {
  try {
    if (options.migrate === false) {
      const { version } = await checkSchema(sql, location)
      return { from: version, to: version }
    }
    const applied = await applyMigrations(sql, location)
    if (applied.from > 0 && applied.from < applied.to) options.onUpgrade?.(applied)
    return applied
  } catch (error) {
    await sql.close({ timeout: 0 }).catch(() => {})
    if (error instanceof DatabaseOpenError) throw error
    throw new DatabaseOpenError(
      `Cannot prepare the PostgreSQL database at ${location}: ${redact(describeFailure(error), secretsOf(url))}`,
    )
  }
}

/**
 * Opens the PostgreSQL database at `url`: connects (see `connect`), applies
 * the migrations this build has and the database lacks (unless `migrate:
 * false`), and returns the driver with the stores `storesOn` makes.
 */
export async function openPostgres<Tx extends object>(
  url: string,
  options: PostgresStoreOptions,
  storesOn: StoresOn<Tx>,
): Promise<Tx & PostgresDriver<Tx>> {
  const { sql, location, open } = await connect(url, options)
  await refuseSharedSessions(sql, location).catch(async (error) => {
    await sql.close({ timeout: 0 }).catch(() => {})
    throw error
  })
  const schemaVersion = (await prepareSchema(sql, location, url, options)).to
  const poolSize = poolSizeOf(options)
  const attempts = poolSize + 1
  const pools = createPools(sql, () => open(poolSize))
  const poolQuery = poolRunner(pools, attempts)
  const pingQuery = poolRunner(pools, attempts, PING_DEADLINE_MS)
  // Started by the first request that asks whether keys changed, or by a server watching forms:
  // commands that never serve one never listen.
  let changes: ChangeListener | undefined
  const listener = () =>
    (changes ??= listenForChanges({
      open: () => open(1),
      notify: (payload) => poolQuery('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, payload]),
      listenDeadlineMs: STATEMENT_DEADLINE_MS,
    }))
  const reads = storesOn(poolQuery, () => listener().keysVersion())

  /**
   * One transaction on a connection of the pool. When BEGIN itself meets a
   * connection that died since its last use, nothing of `work` has run: it
   * is begun again on another (as reads are). A unit of work chosen as a
   * deadlock's victim is run again, a few times. One that went unanswered
   * is not: it would wait as long again.
   */
  async function inTransaction<T>(work: (tx: Tx) => Promise<T>, settings?: string): Promise<T> {
    for (let attempt = 1, victim = 1; ; attempt++) {
      let begun = false
      try {
        return await transactOnce(work, settings, () => (begun = true))
      } catch (error) {
        if (isDeadlockVictim(error) && victim++ < DEADLOCK_RETRIES) continue
        if (begun || attempt >= attempts || !isLostConnection(error)) throw translate(error)
      }
    }
  }

  /**
   * BEGIN (with `settings`) is sent and not waited for: it goes out with the
   * work's first statement, and a transaction costs one round trip less
   * (under load each waits its turn of the event loop). Should BEGIN fail,
   * so does every statement after it, and BEGIN's own failure is thrown.
   *
   * Every statement, BEGIN and COMMIT included, has the store's deadline. One
   * that goes unanswered closes the connection and fails the unit with
   * DatabaseUnanswered (503). After a COMMIT sent, that means the answer may
   * or may not be recorded: the person is told neither (a 503), and what
   * they send again meets what is there (an answered form is a 409).
   */
  async function transactOnce<T>(
    work: (tx: Tx) => Promise<T>,
    settings: string | undefined,
    onBegun: () => void,
  ): Promise<T> {
    const connection = boundedConnection(await reserveWithin(pools.current, STATEMENT_DEADLINE_MS))
    try {
      const begin = connection.statement(settings ? `BEGIN; ${settings}` : 'BEGIN').then(onBegun)
      let failed: { error: unknown } | undefined
      const query: Query = async (text, params = []) => {
        try {
          return await connection.statement(text, params)
        } catch (error) {
          const translated = translate(error)
          failed ??= { error: translated }
          throw translated
        }
      }
      let result: T
      try {
        result = await work(storesOn(query))
      } finally {
        await begin
      }
      // PostgreSQL aborts a transaction at its first failed statement, and then
      // answers COMMIT with a ROLLBACK: work that caught a failure fails with it.
      if (failed) throw failed.error
      const { command } = await connection.statement('COMMIT')
      if (command !== 'COMMIT') throw new Error(`PostgreSQL answered COMMIT with ${command}`)
      return result
    } catch (error) {
      // A statement unanswered: that is the failure, whatever the work made of it.
      const failure = connection.unanswered ?? error
      // Nothing to take back when the connection is gone or COMMIT ended the transaction.
      if (!connection.unanswered) await connection.statement('ROLLBACK').catch(() => {})
      throw failure
    } finally {
      connection.release()
    }
  }

  return {
    kind: 'postgres',
    location,
    schemaVersion,
    ...reads,
    transaction: (work) => inTransaction(work),
    // PostgreSQL then commits without waiting for the WAL to reach the disk;
    // the next synchronous commit (any transaction's) flushes the WAL up to
    // itself, and so makes this one durable too.
    stagedTransaction: (work) => inTransaction(work, 'SET LOCAL synchronous_commit = off'),
    watchForms: (watcher) => listener().watchForms(watcher),
    watchEvents: (watcher) => listener().watchEvents(watcher),
    // The lock is a transaction's, held open on a connection of its own while `work` uses the
    // pool as it likes: a session's lock would outlive its release behind a pooler.
    async alone(work) {
      const connection = boundedConnection(await reserveWithin(pools.current, STATEMENT_DEADLINE_MS))
      try {
        await connection.statement('BEGIN')
        await connection.statement(`SELECT pg_advisory_xact_lock(${ALONE_LOCK})`, [], ALONE_LOCK_DEADLINE_MS)
        const result = await work()
        await connection.statement('COMMIT')
        return result
      } catch (error) {
        const failure = connection.unanswered ?? error
        if (!connection.unanswered) await connection.statement('ROLLBACK').catch(() => {})
        throw translate(failure)
      } finally {
        connection.release()
      }
    },
    ping: async () => void (await pingQuery('SELECT 1')),
    async close() {
      await changes?.close()
      await pools.close(10)
    },
  }
}

/**
 * `intake migrate`: reaches the database (as a store opens), applies the
 * migrations it lacks, and lets go. Returns the schema found and the one left
 * (equal when there was nothing to do, or when the database is a newer
 * intake's that this one may run on).
 */
export async function migratePostgres(
  url: string,
  options: Omit<PostgresStoreOptions, 'migrate' | 'poolSize'> = {},
): Promise<{ from: number; to: number }> {
  const { sql, location } = await connect(url, { ...options, poolSize: 2 })
  try {
    await refuseSharedSessions(sql, location)
    return await prepareSchema(sql, location, url, options)
  } finally {
    await sql.close({ timeout: 10 })
  }
}
