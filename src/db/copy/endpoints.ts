import { Database } from 'bun:sqlite'
import { existsSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { DatabaseOpenError } from '../driver.ts'
import { describeDatabaseUrl, describeFailure, isConnectionFailure } from '../postgres/connect.ts'
import { applyMigrations, POSTGRES_SCHEMA_VERSION } from '../postgres/migrations.ts'
import { openDatabase, SCHEMA_VERSION } from '../sqlite/open.ts'
import { quote, shellWord } from './escaping.ts'
import { connectPostgres, postgresCount, postgresSchema, postgresSide, postgresTableNames } from './postgres-side.ts'
import { COPIED_TABLES, type Endpoint, type Side, type WritableSide } from './sides.ts'
import { removeSqliteFiles, sqliteCount, sqliteSchemaVersion, sqliteSide, sqliteTableNames } from './sqlite-side.ts'

/**
 * The two ends of a copy: FROM read as one snapshot, TO checked empty, given
 * the schema, and written in one transaction.
 */

/** FROM or TO as given on the command line: a postgres:// or postgresql:// URL, or else a SQLite file path. */
export function parseEndpoint(text: string): Endpoint {
  if (/^postgres(ql)?:\/\//i.test(text)) {
    const url = URL.parse(text)
    // Never echoed: it may hold a password.
    if (!url || url.hostname === '')
      throw new DatabaseOpenError('A PostgreSQL URL must look like postgres://user@host:port/database')
    return { kind: 'postgres', url: text, location: describeDatabaseUrl(text) }
  }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text)
  if (scheme)
    throw new DatabaseOpenError(
      `${scheme[1]}:// is not a database intake knows: give a SQLite file path or a postgres:// URL`,
    )
  if (text.trim() === '')
    throw new DatabaseOpenError('An empty name is not a database: give a SQLite file path or a postgres:// URL')
  const path = resolve(text)
  return { kind: 'sqlite', path, location: path }
}

// Reading FROM: one snapshot

/**
 * Runs `work` on one consistent snapshot of FROM, which must be at this
 * binary's schema (else exit 2 naming `intake migrate`). Nothing is written to FROM.
 */
export async function readSnapshot<T>(source: Endpoint, work: (reader: Side) => Promise<T>): Promise<T> {
  if (source.kind === 'sqlite') {
    if (!existsSync(source.path)) throw new DatabaseOpenError(`No database at ${source.path} to copy from`)
    let db: Database
    try {
      db = new Database(source.path, { readwrite: true, create: false, strict: true })
      db.exec('PRAGMA busy_timeout = 5000')
      db.exec('PRAGMA query_only = ON')
    } catch (error) {
      throw new DatabaseOpenError(`Cannot open ${source.path} to copy from: ${describeFailure(error)}`)
    }
    try {
      // In WAL mode a read transaction sees the database as at its first read, whatever a server writes meanwhile.
      db.exec('BEGIN')
      const version = sqliteSchemaVersion(db, source.path)
      requireCurrentSchema(source, version, SCHEMA_VERSION, sqliteTableNames(db).length)
      return await work(sqliteSide(db))
    } finally {
      if (db.inTransaction) db.exec('ROLLBACK')
      db.close()
    }
  }
  const sql = await connectPostgres(source)
  try {
    return (await sql.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', async (tx) => {
      const { version } = await postgresSchema(tx)
      requireCurrentSchema(source, version, POSTGRES_SCHEMA_VERSION, (await postgresTableNames(tx)).length)
      return work(postgresSide(tx))
    })) as T
  } finally {
    await sql.close({ timeout: 0 }).catch(() => {})
  }
}

function requireCurrentSchema(source: Endpoint, version: number, current: number, tableCount: number): void {
  if (version === current) return
  if (version === 0) {
    throw new DatabaseOpenError(
      tableCount === 0
        ? `${source.location} holds no intake database to copy`
        : `${source.location} is not an intake database`,
    )
  }
  if (version > current) {
    throw new DatabaseOpenError(
      `${source.location} is at schema ${version}, newer than this intake's ${current}: copy it with the intake that wrote it`,
    )
  }
  const migrate =
    source.kind === 'sqlite'
      ? `intake migrate --db ${shellWord(source.path)}`
      : `intake migrate --database-url ${source.location}`
  throw new DatabaseOpenError(
    `${source.location} is at schema ${version} and this intake copies schema ${current}: upgrade it first with \`${migrate}\`; nothing was written`,
  )
}

// ---------------------------------------------------------------------------
// Writing TO

/**
 * Refuses TO, before anything touches it, unless it holds no intake data: a
 * SQLite file that does not exist yet or is empty, or a database with no
 * tables, or an intake schema (not newer than this binary's) whose tables
 * hold no rows.
 */
export async function refuseUnlessEmpty(target: Endpoint): Promise<void> {
  const refuse = (why: string) =>
    new DatabaseOpenError(`${target.location} ${why}; TO must be empty. Nothing was written`)
  if (target.kind === 'sqlite') {
    if (!existsSync(target.path)) return
    const stat = statSync(target.path)
    if (!stat.isFile()) throw refuse('is not a file')
    if (stat.size === 0) return
    let db: Database | undefined
    try {
      // Read-write but querying only: a read-only connection would leave -wal and -shm files behind.
      db = new Database(target.path, { readwrite: true, create: false, strict: true })
      db.exec('PRAGMA query_only = ON')
      const version = (db.query('PRAGMA user_version').get() as { user_version: number }).user_version
      describeContents(version, SCHEMA_VERSION, sqliteTableNames(db), (table) => sqliteCount(db!, table), refuse)
    } catch (error) {
      if (error instanceof DatabaseOpenError) throw error
      throw refuse(`exists and is not a SQLite database (${describeFailure(error)})`)
    } finally {
      db?.close()
    }
    return
  }
  const sql = await connectPostgres(target)
  try {
    await sql.begin('READ ONLY', async (tx) => {
      const { version } = await postgresSchema(tx)
      const tables = await postgresTableNames(tx)
      const counts = new Map<string, number>()
      for (const table of tables) counts.set(table, await postgresCount(tx, table))
      describeContents(version, POSTGRES_SCHEMA_VERSION, tables, (table) => counts.get(table)!, refuse)
    })
  } finally {
    await sql.close({ timeout: 0 }).catch(() => {})
  }
}

function describeContents(
  version: number,
  current: number,
  tables: string[],
  count: (table: string) => number,
  refuse: (why: string) => Error,
): void {
  if (version === 0) {
    if (tables.length > 0) throw refuse(`holds tables that are not intake's (${listed(tables)})`)
    return
  }
  if (version > current) throw refuse(`is at schema ${version}, newer than this intake's ${current}`)
  const held = tables.map((table) => [table, count(table)] as const).filter(([, n]) => n > 0)
  if (held.length > 0) throw refuse(`holds intake data (${held.map(([table, n]) => `${table}: ${n}`).join(', ')})`)
}

const listed = (names: string[]) => (names.length > 5 ? `${names.slice(0, 5).join(', ')}, ...` : names.join(', '))

/**
 * Gives TO this binary's schema, committed on its own (an empty schema still
 * counts as empty). A missing SQLite file is created, readable by its owner
 * only. Returns whether the file was created.
 */
export async function prepareSchema(target: Endpoint): Promise<boolean> {
  if (target.kind === 'sqlite') {
    const created = !existsSync(target.path)
    try {
      openDatabase(target.path).close()
    } catch (error) {
      if (created) removeSqliteFiles(target.path)
      throw error
    }
    return created
  }
  const sql = await connectPostgres(target)
  try {
    await applyMigrations(sql, target.location)
  } catch (error) {
    // Not allowed to create tables, say: a setting for the operator to fix, as for intake migrate.
    if (error instanceof DatabaseOpenError || isConnectionFailure(error)) throw error
    throw new DatabaseOpenError(
      `Cannot prepare the PostgreSQL database at ${target.location}: ${describeFailure(error)}`,
    )
  } finally {
    await sql.close({ timeout: 0 }).catch(() => {})
  }
  return false
}

/**
 * Runs `work` in one transaction on TO, which must still be empty and at this
 * binary's schema; commits when it returns. Nobody else writes to TO meanwhile
 * (SQLite: the write lock; PostgreSQL: every table locked against writes).
 */
export async function writeTransaction(target: Endpoint, work: (writer: WritableSide) => Promise<void>): Promise<void> {
  const changed = (why: string) =>
    new DatabaseOpenError(`${target.location} ${why} while the copy began; nothing was written`)
  if (target.kind === 'sqlite') {
    const db = new Database(target.path, { strict: true })
    try {
      // A rollback journal for the copy: into a new file it holds almost
      // nothing (pages past the old end are not journaled), where WAL would
      // write every page twice. When another connection has the file open
      // (a server on an empty database) the switch fails at once and the
      // mode stays WAL, which is as safe.
      let journal = 'wal'
      try {
        journal = (db.query('PRAGMA journal_mode = DELETE').get() as { journal_mode: string }).journal_mode
      } catch {}
      db.exec('PRAGMA busy_timeout = 5000')
      db.exec('PRAGMA foreign_keys = ON')
      db.exec('PRAGMA cache_size = -65536')
      try {
        db.exec('BEGIN IMMEDIATE')
        if (sqliteSchemaVersion(db, target.path) !== SCHEMA_VERSION) throw changed('changed schema')
        for (const table of COPIED_TABLES) if (sqliteCount(db, table) > 0) throw changed(`received rows of ${table}`)
        await work(sqliteSide(db))
        db.exec('COMMIT')
      } finally {
        if (db.inTransaction) db.exec('ROLLBACK')
        if (journal !== 'wal') db.exec('PRAGMA journal_mode = WAL')
      }
    } finally {
      db.close()
    }
    return
  }
  const sql = await connectPostgres(target)
  try {
    await sql.begin(async (tx) => {
      await tx.unsafe(`LOCK TABLE ${COPIED_TABLES.map(quote).join(', ')} IN EXCLUSIVE MODE`)
      if ((await postgresSchema(tx)).version !== POSTGRES_SCHEMA_VERSION) throw changed('changed schema')
      for (const table of COPIED_TABLES)
        if ((await postgresCount(tx, table)) > 0) throw changed(`received rows of ${table}`)
      await work(postgresSide(tx))
    })
  } finally {
    await sql.close({ timeout: 0 }).catch(() => {})
  }
}

export function sameDatabase(a: Endpoint, b: Endpoint): boolean {
  if (a.kind === 'sqlite' && b.kind === 'sqlite') {
    if (a.path === b.path) return true
    try {
      const [x, y] = [statSync(a.path), statSync(b.path)]
      return x.dev === y.dev && x.ino === y.ino
    } catch {
      return false
    }
  }
  return a.kind === 'postgres' && b.kind === 'postgres' && a.location === b.location
}
