/**
 * What every database driver gives the composition root (src/stores.ts):
 * transactions, change watches and health, over the module stores the root
 * hands it (`Tx`). A driver (src/db/sqlite/, src/db/postgres/) knows
 * connections, transactions and migrations, never a module.
 */
export type StoreKind = 'sqlite' | 'postgres'

export interface Driver<Tx> {
  readonly kind: StoreKind
  /** Where the data is, for people: a file path, or `postgres://user@host:port/db` (never a password). */
  readonly location: string
  /**
   * Runs `work` once, in a transaction, and resolves once it is durable; a
   * throw rolls back exactly its writes. On SQLite the units that arrive
   * together share one commit and one disk sync (group commit, four times
   * the creates a second; bench/results.md), each in a savepoint of its own.
   * On PostgreSQL each unit is a transaction of its own; a statement that
   * fails fails the unit, even when `work` catches it (the transaction cannot
   * go on past it), and a unit PostgreSQL chose as a deadlock's victim, rolled
   * back whole, is begun again (the only time `work` runs twice).
   */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>
  /**
   * A transaction committed without waiting for the disk: durable with the
   * next `transaction`. For bytes that matter only once a later transaction
   * refers to them (a file's chunks, before the answer that holds them).
   */
  stagedTransaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>
  /**
   * Tells `watcher` of forms that other processes answered, cancelled, expired
   * or deleted (the ids), or that any form may have changed unheard
   * (`undefined`), so waits on them wake (CONTRACT 10); returns what stops it.
   * Only PostgreSQL is shared by several servers: on SQLite it is never called.
   */
  watchForms(watcher: (formIds: readonly string[] | undefined) => void): () => void
  /** The same for accounts whose event feeds grew (the account ids), so waits on the feed wake (CONTRACT 12). */
  watchEvents(watcher: (accountIds: readonly string[] | undefined) => void): () => void
  /**
   * Runs `work` while no other process runs `alone` on this database: several
   * servers starting at once on an empty database make one first key. On
   * SQLite, which one server serves, it just runs `work`.
   */
  alone<T>(work: () => Promise<T>): Promise<T>
  /** Resolves when the database answers; throws DatabaseUnavailable when it does not. */
  ping(): Promise<void>
  close(): Promise<void>
}

/** The database cannot be reached now (a lost connection): 503, and the server reconnects by itself. */
export class DatabaseUnavailable extends Error {}

/** A database that cannot be opened or used, described for the operator (exit code 2: a setting to fix). */
export class DatabaseOpenError extends Error {}

/** A database that could not be reached during the wait at start (exit code 1: it may answer later). */
export class DatabaseUnreachable extends DatabaseOpenError {}

/** What opening did to an older database: the schema it had and where a copy of it was kept (SQLite). */
export interface Upgrade {
  from: number
  to: number
  backupPath?: string
}

/** The line an operator reads after an upgrade. */
export const describeUpgrade = (upgrade: Upgrade) =>
  `Upgraded the database from schema ${upgrade.from} to ${upgrade.to}` +
  (upgrade.backupPath ? `; the database as it was is kept at ${upgrade.backupPath}` : '')
