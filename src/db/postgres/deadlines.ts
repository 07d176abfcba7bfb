import type { ReservedSQL, SQL } from 'bun'
import { DatabaseUnavailable } from '../driver.ts'
import { translate } from './connect.ts'

/**
 * Every statement has a deadline: one unanswered lets go of what it waits
 * on (its connection, or its pool), so that nothing queues behind it on a
 * server that stopped answering.
 */

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
export const STATEMENT_DEADLINE_MS = 4000
/** A pool let go of is closed this long after: its statements in flight have had their deadline by then. */
const RETIRED_POOL_CLOSES_AFTER_MS = STATEMENT_DEADLINE_MS + 1000

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
export function answeredWithin<T>(
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
export interface Pools {
  readonly current: SQL
  /** Lets `sql` go when it is still the current pool (a later pool is not retired for an earlier one's statements). */
  retire(sql: SQL): void
  close(timeoutSeconds: number): Promise<void>
}

export function createPools(first: SQL, open: () => SQL): Pools {
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
export async function reserveWithin(sql: SQL, ms: number): Promise<ReservedSQL> {
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
export function boundedConnection(connection: ReservedSQL) {
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
