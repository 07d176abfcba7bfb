import type { Config } from '../config.ts'
import { createSqliteStore } from './sqlite/store.ts'
import type { Store, Upgrade } from './store.ts'

export {
  DatabaseOpenError,
  DatabaseUnreachable,
  describeUpgrade,
  type Store,
  type Upgrade,
} from './store.ts'

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
    // Evaluated only for PostgreSQL: a SQLite start never runs its module (nor reads Bun.SQL).
    const { createPostgresStore } = await import('./postgres/store.ts')
    return createPostgresStore(config.databaseUrl, { connectTimeoutMs: config.databaseConnectTimeoutMs, ...options })
  }
  return createSqliteStore(config.dbPath, options)
}
