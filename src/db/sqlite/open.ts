import { Database } from 'bun:sqlite'
import { closeSync, mkdirSync, openSync, rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { DatabaseOpenError, type Upgrade } from '../driver.ts'
import { migrations } from './migrations.ts'

export type { Database } from 'bun:sqlite'

/** The schema version this build writes. */
export const SCHEMA_VERSION = migrations.length

export interface OpenOptions {
  /** Hears of a migration this call made. */
  onUpgrade?: (upgrade: Upgrade) => void
  /** false: an older database is opened as it is, not migrated (for `intake backup`). */
  upgrade?: boolean
  /** Hears of what the operator must know while it runs (a failed sync of the log). */
  log?: (line: string) => void
}

/**
 * Opens (creating when missing) the database file and brings its schema up to
 * date. WAL lets readers run beside the writer; synchronous=FULL makes every
 * acknowledged commit survive power loss; busy_timeout lets the CLI and the
 * server share the file. A database from an older intake is copied to
 * `<file>.bak-<its schema version>` before it is migrated (in one
 * transaction); one from a newer intake is refused untouched.
 */
export function openDatabase(path: string, options: OpenOptions = {}): Database {
  const { onUpgrade, upgrade = true } = options
  let db: Database
  try {
    if (path !== ':memory:') createPrivately(path)
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
    const found = schemaVersion(db)
    const older = found > 0 && found < SCHEMA_VERSION
    if (!older) {
      migrate(db)
    } else if (upgrade) {
      const backupPath = backupBeforeUpgrade(db, path, found)
      if (migrate(db)) onUpgrade?.({ from: found, to: SCHEMA_VERSION, backupPath })
      // Another process migrated first, with a backup of its own: this copy is a duplicate.
      else rmSync(backupPath, { force: true })
    }
    // (An older database with `upgrade: false` stays as it is: its copy is that older database.)
    if (upgrade) requireWritable(db, path)
  } catch (error) {
    db.close()
    throw error instanceof DatabaseOpenError
      ? error
      : new DatabaseOpenError(`Cannot prepare the database at ${path}: ${reason(error)}`)
  }
  return db
}

class RolledBack extends Error {}

/**
 * SQLite opens a file it may not write read-only, without a word: the server
 * would start, answer /healthz and fail every write (a database created by a
 * command run as root, say). A write that is rolled back finds out at start
 * (taking the write lock alone does not: that lives in the -shm file).
 */
function requireWritable(db: Database, path: string): void {
  try {
    db.transaction(() => {
      db.exec(`PRAGMA user_version = ${schemaVersion(db)}`)
      throw new RolledBack()
    }).immediate()
  } catch (error) {
    if (error instanceof RolledBack) return
    const user = process.getuid ? ` (uid ${process.getuid()})` : ''
    throw new DatabaseOpenError(
      `The database at ${path} cannot be written by this user${user}: ${reason(error)}. Check the owner and mode of the file, its -wal and -shm files and its folder.`,
    )
  }
}

/**
 * A new database's folder (when intake creates it) and file are its owner's
 * alone: they hold answers, files and webhook secrets. SQLite gives the -wal
 * and -shm files the database file's mode. Existing ones are left as they are.
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  try {
    closeSync(openSync(path, 'wx', 0o600))
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error
  }
}

export function schemaVersion(db: Database): number {
  return (db.query('PRAGMA user_version').get() as { user_version: number }).user_version
}

/**
 * A database from a newer intake runs when it says this intake's schema may
 * still run on it (the newer one's migrations were additive); otherwise it is
 * refused before anything writes to it.
 */
function refuseNewerSchema(db: Database): void {
  const found = schemaVersion(db)
  if (found <= SCHEMA_VERSION) return
  const oldestCompatible = oldestCompatibleSchema(db) ?? found
  if (oldestCompatible > SCHEMA_VERSION) {
    throw new DatabaseOpenError(
      `The database was written by a newer intake (schema ${found}, which needs at least schema ${oldestCompatible}; this intake knows up to ${SCHEMA_VERSION}). Upgrade intake; the database was not changed.`,
    )
  }
}

function oldestCompatibleSchema(db: Database): number | undefined {
  try {
    return db.query<{ oldest_compatible: number }, []>('SELECT oldest_compatible FROM schema_compatibility').get()
      ?.oldest_compatible
  } catch {
    return undefined
  }
}

/**
 * A consistent copy of the database as it is, before a migration changes it:
 * the way back to the older intake. Never overwrites: when `<file>.bak-N` is
 * taken (a backup from an earlier upgrade, since restored and used again),
 * the copy is named with the time as well.
 */
function backupBeforeUpgrade(db: Database, path: string, version: number): string {
  const stamp = new Date().toISOString().replace(/[-:]|\.\d+/g, '')
  const names = [`${path}.bak-${version}`, `${path}.bak-${version}-${stamp}`]
  for (let n = 2; n <= 20; n++) names.push(`${path}.bak-${version}-${stamp}-${n}`)
  for (const backupPath of names) {
    try {
      copyDatabase(db, backupPath)
      return backupPath
    } catch (error) {
      if ((error as { code?: string }).code === 'EEXIST') continue
      throw backupFailed(path, version, error)
    }
  }
  throw backupFailed(path, version, 'every backup name is taken')
}

/**
 * A consistent, compacted copy of the database in a new file `target`, safe
 * while other connections write. The file is created exclusively (an existing
 * one is never touched: an error with code EEXIST) and readable by its owner
 * only, like the database; a copy that fails half-way is removed.
 */
export function copyDatabase(db: Database, target: string): void {
  // VACUUM INTO accepts an empty file: creating it first is what makes it ours and private.
  closeSync(openSync(target, 'wx', 0o600))
  try {
    db.query('VACUUM INTO ?').run(target)
  } catch (error) {
    rmSync(target, { force: true })
    throw error
  }
}

const backupFailed = (path: string, version: number, error: unknown) =>
  new DatabaseOpenError(
    `Cannot write a backup next to ${path} before upgrading it from schema ${version}; the database was not changed: ${reason(error)}`,
  )

/** Brings the schema up to date; false when it already was (another process may have just done it). */
function migrate(db: Database): boolean {
  if (schemaVersion(db) === SCHEMA_VERSION) return false
  let migrated = false
  // IMMEDIATE: a second process starting at the same moment waits, then finds the work done.
  db.transaction(() => {
    for (let version = schemaVersion(db); version < SCHEMA_VERSION; version++) {
      db.exec(migrations[version]!)
      db.exec(`PRAGMA user_version = ${version + 1}`)
      migrated = true
    }
  }).immediate()
  return migrated
}

function reason(error: unknown): string {
  const code = (error as { code?: string }).code
  const message = error instanceof Error ? error.message : String(error)
  return code && !message.includes(code) ? `${message} (${code})` : message
}
