import type { SQL } from 'bun'
import { DatabaseOpenError, type Driver } from '../driver.ts'
import { CHANGES_CHANNEL, type ChangeListener, listenForChanges } from './changes.ts'
import {
  connect,
  describeFailure,
  isConnectionFailure,
  isLostConnection,
  type PostgresStoreOptions,
  poolSizeOf,
  redact,
  secretsOf,
  translate,
} from './connect.ts'
import {
  answeredWithin,
  boundedConnection,
  createPools,
  type Pools,
  reserveWithin,
  STATEMENT_DEADLINE_MS,
} from './deadlines.ts'
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

/** /healthz's statement: a 503 within the 2 s of CONTRACT 13a. */
const PING_DEADLINE_MS = 1500
/** The wait for the lock `alone` takes: the instance holding it may be writing the first key's banner to a slow stdout. */
const ALONE_LOCK_DEADLINE_MS = 30_000

const DEADLOCK_RETRIES = 3
/** The advisory lock `alone` holds: "alone" in ASCII (the schema's is "intake"). */
const ALONE_LOCK = 0x616c6f6e65n

/** Chosen as a deadlock's victim (40P01) or failed to serialize (40001): running the unit again will work. */
const isDeadlockVictim = (error: unknown) => {
  const { errno } = (error ?? {}) as { errno?: unknown }
  return errno === '40P01' || errno === '40001'
}

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
