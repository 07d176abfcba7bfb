// Types only: `Bun.SQL` is read where a pool is made, since reading it loads Bun's SQL
// client (about 4 MiB of resident memory), which a server on SQLite never needs.
import type { SQL } from 'bun'
import { DatabaseOpenError, DatabaseUnavailable, DatabaseUnreachable, type Upgrade } from '../driver.ts'

/**
 * Reaching a PostgreSQL database at start (the wait for one that does not
 * answer yet), which of its failures mean it is unavailable, and how it is
 * named to people: never with a password.
 */

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

const DEFAULT_CONNECT_TIMEOUT_MS = 30_000
const DEFAULT_POOL_SIZE = 10
const RETRY_EVERY_MS = 1000

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
export function isLostConnection(error: unknown): boolean {
  const { code, errno } = error as { code?: unknown; errno?: unknown }
  return code === 'ERR_POSTGRES_CONNECTION_CLOSED' || errno === '57P01' || errno === '57P02'
}

/** The one translation every statement's failure goes through: a lost database is DatabaseUnavailable (503). */
export function translate(error: unknown): unknown {
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

/** Connections in the store's pool: at least two, for the check of sessions (refuseSharedSessions). */
export const poolSizeOf = (options: PostgresStoreOptions) => Math.max(2, options.poolSize ?? DEFAULT_POOL_SIZE)

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
 * A pool on `url` that has answered once: tried every second for up to
 * `connectTimeoutMs` (one line to `log` per failed try), whatever the failure
 * (refused, unknown host, credentials, TLS, no such database yet: the
 * operator may be fixing it), then DatabaseUnreachable (exit code 1: it may answer later).
 */
export async function connect(
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
