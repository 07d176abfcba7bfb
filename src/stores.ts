import type { Config } from './config.ts'
import type { Driver, Upgrade } from './db/driver.ts'
import type { PostgresStoreOptions } from './db/postgres/connect.ts'
import type { PostgresDriver } from './db/postgres/driver.ts'
import { openSqlite } from './db/sqlite/driver.ts'
import type { KeyReads, KeyWrites } from './modules/auth/store/index.ts'
import { createSqliteKeyStore } from './modules/auth/store/sqlite.ts'
import type { ConsoleReads, ConsoleWrites } from './modules/console/store/index.ts'
import { createSqliteConsoleStore } from './modules/console/store/sqlite.ts'
import type { EventReads, EventWrites } from './modules/events/store/index.ts'
import { createSqliteEventStore } from './modules/events/store/sqlite.ts'
import type { FormReads, FormWrites } from './modules/forms/store/index.ts'
import { createSqliteFormStore } from './modules/forms/store/sqlite.ts'
import type { ResponseReads, ResponseWrites } from './modules/responses/store/index.ts'
import { createSqliteResponseStore } from './modules/responses/store/sqlite.ts'
import type { SubmissionReads, SubmissionWrites } from './modules/submissions/store/index.ts'
import { createSqliteSubmissionStore } from './modules/submissions/store/sqlite.ts'
import type { DeliveryReads, DeliveryWrites } from './modules/webhooks/store/index.ts'
import { createSqliteDeliveryStore } from './modules/webhooks/store/sqlite.ts'

/**
 * The composition root of the seam between intake and its database: a driver
 * (src/db/sqlite/, src/db/postgres/: connections, transactions, migrations)
 * and each module's store for it. Each module declares its store interface
 * (src/modules/<module>/store/index.ts) with one implementation per database
 * beside it (sqlite.ts, postgres.ts). A third database would be a third file
 * in each module's store/ folder, a driver folder and a function here.
 *
 * Reads may run anywhere and never lock; writes run only inside
 * `transaction`, which hands the unit of work its transaction: nothing depends
 * on which connection is current. A read that a decision stands on is one of
 * the transaction's `...ForUpdate` reads: on PostgreSQL it locks what it
 * reads until the commit, and SQLite runs one unit at a time. Work inside a
 * transaction awaits only the transaction's own methods (anything slower holds
 * the database's writer).
 */
export interface Reads {
  forms: FormReads
  responses: ResponseReads
  deliveries: DeliveryReads
  keys: KeyReads
  submissions: SubmissionReads
  events: EventReads
  console: ConsoleReads
}

export interface Transaction {
  forms: FormWrites
  responses: ResponseWrites
  deliveries: DeliveryWrites
  keys: KeyWrites
  submissions: SubmissionWrites
  events: EventWrites
  console: ConsoleWrites
}

export interface Store extends Reads, Driver<Transaction> {}

/** A store on PostgreSQL, with the schema its database held once opened. */
export interface PostgresStore extends Store, PostgresDriver<Transaction> {}

export interface OpenStoreOptions {
  /** Hears of a migration this open made. */
  onUpgrade?: (upgrade: Upgrade) => void
  /**
   * Hears what the operator must know: each try to reach a database that does
   * not answer yet (PostgreSQL at start), a failed sync of the log (SQLite).
   */
  log?: (line: string) => void
  /** PostgreSQL: connections in the pool (Bun opens them all at the first query). */
  poolSize?: number
}

/** The store the settings name: PostgreSQL when SERVICE_DATABASE_URL is set, else the SQLite file. */
export async function openStore(
  config: Pick<Config, 'dbPath' | 'databaseUrl'> & Partial<Pick<Config, 'databaseConnectTimeoutMs'>>,
  options: OpenStoreOptions = {},
): Promise<Store> {
  if (config.databaseUrl !== undefined) {
    return openPostgresStore(config.databaseUrl, { connectTimeoutMs: config.databaseConnectTimeoutMs, ...options })
  }
  return openSqliteStore(config.dbPath, options)
}

function openSqliteStore(path: string, options: OpenStoreOptions): Store {
  return openSqlite<Reads, Transaction>(path, options, ({ writer, reader, latestReader }) => ({
    transaction: {
      forms: createSqliteFormStore(writer),
      responses: createSqliteResponseStore(writer),
      deliveries: createSqliteDeliveryStore(writer),
      keys: createSqliteKeyStore(writer),
      submissions: createSqliteSubmissionStore(writer),
      events: createSqliteEventStore(writer),
      console: createSqliteConsoleStore(writer),
    },
    reads: {
      forms: createSqliteFormStore(reader),
      responses: createSqliteResponseStore(reader),
      deliveries: createSqliteDeliveryStore(reader),
      submissions: createSqliteSubmissionStore(reader),
      events: createSqliteEventStore(reader),
      // Keys are read outside any snapshot: other processes (the command line) write them,
      // and a revocation must hold for every request sent after it.
      keys: createSqliteKeyStore(latestReader, writer),
      // Sessions and users change in other processes too (the command line, other instances): read the latest.
      console: createSqliteConsoleStore(latestReader),
    },
  }))
}

/** The store on the PostgreSQL database at `url` (see openPostgres). */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
  // Imported only for PostgreSQL: a SQLite start never evaluates them (nor reads Bun.SQL).
  const [{ openPostgres }, auth, consoleStore, events, forms, responses, submissions, webhooks] = await Promise.all([
    import('./db/postgres/driver.ts'),
    import('./modules/auth/store/postgres.ts'),
    import('./modules/console/store/postgres.ts'),
    import('./modules/events/store/postgres.ts'),
    import('./modules/forms/store/postgres.ts'),
    import('./modules/responses/store/postgres.ts'),
    import('./modules/submissions/store/postgres.ts'),
    import('./modules/webhooks/store/postgres.ts'),
  ])
  return openPostgres<Transaction>(url, options, (query, keysVersion) => ({
    forms: forms.createPostgresFormStore(query),
    responses: responses.createPostgresResponseStore(query),
    deliveries: webhooks.createPostgresDeliveryStore(query),
    keys: auth.createPostgresKeyStore(query, keysVersion),
    submissions: submissions.createPostgresSubmissionStore(query),
    events: events.createPostgresEventStore(query),
    console: consoleStore.createPostgresConsoleStore(query),
  }))
}
