import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { migrations } from './migrations.ts'

export type { Database } from 'bun:sqlite'

/** The schema version this build writes. */
export const SCHEMA_VERSION = migrations.length

/** A database that cannot be opened or used, described for the operator. */
export class DatabaseOpenError extends Error {}

/**
 * Opens (creating when missing) the database file and brings its schema up to
 * date. WAL lets readers run beside the writer; synchronous=FULL makes every
 * acknowledged commit survive power loss; busy_timeout lets the CLI and the
 * server share the file.
 */
export function openDatabase(path: string): Database {
  let db: Database
  try {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
    db = new Database(path, { create: true, strict: true })
    db.exec('PRAGMA busy_timeout = 5000')
  } catch (error) {
    throw new DatabaseOpenError(`Cannot open the database at ${path}: ${reason(error)}`)
  }
  try {
    // Before anything writes (switching to WAL does): a newer intake's file is left exactly as it was.
    refuseNewerSchema(db)
    db.exec('PRAGMA journal_mode = WAL')
    db.exec('PRAGMA synchronous = FULL')
    db.exec('PRAGMA foreign_keys = ON')
    migrate(db)
  } catch (error) {
    db.close()
    throw error instanceof DatabaseOpenError ? error : new DatabaseOpenError(`Cannot prepare the database at ${path}: ${reason(error)}`)
  }
  return db
}

export function schemaVersion(db: Database): number {
  return (db.query('PRAGMA user_version').get() as { user_version: number }).user_version
}

function refuseNewerSchema(db: Database): void {
  const found = schemaVersion(db)
  if (found > SCHEMA_VERSION) {
    throw new DatabaseOpenError(
      `The database was written by a newer intake (schema ${found}; this intake knows up to ${SCHEMA_VERSION}). Upgrade intake; the database was not changed.`,
    )
  }
}

function migrate(db: Database): void {
  if (schemaVersion(db) === SCHEMA_VERSION) return
  // IMMEDIATE: a second process starting at the same moment waits, then finds the work done.
  db.transaction(() => {
    for (let version = schemaVersion(db); version < SCHEMA_VERSION; version++) {
      db.exec(migrations[version]!)
      db.exec(`PRAGMA user_version = ${version + 1}`)
    }
  }).immediate()
}

function reason(error: unknown): string {
  const code = (error as { code?: string }).code
  const message = error instanceof Error ? error.message : String(error)
  return code && !message.includes(code) ? `${message} (${code})` : message
}
