import { Database, type SQLQueryBindings } from 'bun:sqlite'
import { createHash } from 'node:crypto'
import { existsSync, rmSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
// Types only: `Bun.SQL` is read when a PostgreSQL end is opened (see db/postgres/driver.ts).
import type { SQL, TransactionSQL } from 'bun'
import { DatabaseOpenError, DatabaseUnreachable } from './driver.ts'
import { describeDatabaseUrl, describeFailure, isConnectionFailure, redact, secretsOf } from './postgres/driver.ts'
import { applyMigrations, POSTGRES_SCHEMA_VERSION } from './postgres/migrations.ts'
import { openDatabase, SCHEMA_VERSION } from './sqlite/open.ts'

/**
 * `intake copy FROM TO` (and `intake backup` on PostgreSQL): every row of one
 * intake database into another, SQLite or PostgreSQL on either side.
 *
 * FROM is read as one snapshot (a read transaction on a connection of its
 * own), so a server may go on writing to it. TO is checked before anything is
 * written to it, its schema is created or brought up to date, and then every
 * row is written in one transaction, checked (counts, and every file's bytes
 * by hash) and only then committed: a failure, or a kill, leaves TO empty.
 *
 * Events keep their numbers, and each account's count of them (event_heads)
 * comes along, so event ids and the cursors agents hold stay valid on TO and
 * TO numbers each account's new events after every one FROM gave out, kept
 * or not. They keep their `seq` and `position` too, the order before
 * numbers, so cursors from then read on TO as on FROM (see placeNewEvents).
 */

/**
 * Every table intake keeps, parents before children: the order rows are
 * copied in (foreign keys hold at every insert). A new table joins this list;
 * a table that FROM holds and this list lacks stops the copy (it would
 * otherwise be left behind without a word).
 */
export const COPIED_TABLES = [
  'accounts',
  'event_heads',
  'api_keys',
  'forms',
  'idempotency_keys',
  'responses',
  'response_files',
  'file_chunks',
  'unclaimed_files',
  'deliveries',
  'held_files',
  'receipts',
  'drafts',
  'events',
] as const

/** Each store's own record of its schema, written by its migrations, never copied. */
const SCHEMA_TABLES: Record<Kind, readonly string[]> = {
  sqlite: ['schema_compatibility'],
  postgres: ['intake_schema'],
}

/**
 * Tables of one row each store keeps, set by the copy rather than copied:
 * `event_positions.floor` places new events after every event FROM gave out
 * (placeNewEvents), whatever FROM's own floor was. Its row is there from the
 * migration on, so it is not data either when TO's emptiness is checked.
 */
const SET_TABLES: readonly string[] = ['event_positions']

/** Tables the copy neither copies nor counts as data. */
const notCopied = (kind: Kind, name: string) => SCHEMA_TABLES[kind].includes(name) || SET_TABLES.includes(name)

/**
 * Values for TO's columns that FROM's store does not have: SQLite's legacy
 * `response_files.content` (the bytes have lived in file_chunks since schema
 * 3; the column stays, empty, for older binaries).
 */
const FILLED_COLUMNS: Record<string, Record<string, unknown>> = {
  response_files: { content: new Uint8Array(0) },
}

/**
 * Values TO's columns take whatever FROM holds. An event's `tx` (PostgreSQL)
 * is the id of the transaction that wrote it, meaningful only in its own
 * cluster; '0' is older than every transaction, so a copied event is readable
 * at once.
 */
const PINNED_COLUMNS: Record<string, Record<string, unknown>> = {
  events: { tx: '0' },
}

/** Rows per batch read and written: memory stays bounded whatever the size of the database. */
const ROWS_PER_BATCH = 1000
/** Chunks per batch: each is up to 512 KiB. */
const CHUNKS_PER_BATCH = 8

interface CopyProgress {
  /** `copy` while rows are written, `check` while TO's files are read back and compared. */
  phase: 'copy' | 'check'
  /** Rows written so far, of every table. */
  rows: number
  totalRows: number
  /** File bytes written (copy) or compared (check) so far. */
  bytes: number
  totalBytes: number
}

export interface CopyOptions {
  /** Called after each batch. */
  progress?: (progress: CopyProgress) => void
}

export interface CopySummary {
  /** Where the data came from and went, for people (a PostgreSQL URL without its password). */
  from: string
  to: string
  /** Rows per table, the same on both sides. */
  rows: Record<(typeof COPIED_TABLES)[number], number>
  totalRows: number
  /** Bytes of the files (their chunks). */
  bytes: number
  /** Whether TO's SQLite file was created by this copy. */
  created: boolean
}

/** A copy that failed on the way (TO left empty): exit code 1, with the reason. */
export class CopyFailed extends Error {}

type Kind = 'sqlite' | 'postgres'

/** One side of a copy: a SQLite file or a PostgreSQL database. */
type Endpoint = { kind: 'sqlite'; path: string; location: string } | { kind: 'postgres'; url: string; location: string }

/** FROM or TO as given on the command line: a postgres:// or postgresql:// URL, or else a SQLite file path. */
function parseEndpoint(text: string): Endpoint {
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

/** A row as read and written: values in the order of the table's copied columns. */
type Row = unknown[]

interface TableColumns {
  /** Every column, by name. */
  names: string[]
  /** Columns a row must be given (NOT NULL without a default). */
  required: string[]
}

/** What the copy reads from and writes to, alike on both stores. */
interface Side {
  readonly kind: Kind
  /** Table name to its columns (schema tables excluded). */
  tables(): Promise<Map<string, TableColumns>>
  count(table: string): Promise<number>
  /** Bytes of all file chunks. */
  fileBytes(): Promise<number>
  /** The rows of `table`, a batch at a time, with `columns` in that order (optionally ordered). */
  batches(table: string, columns: string[], options: { size: number; orderBy?: string }): AsyncGenerator<Row[]>
  /** At least the largest position and seq this store has given an event, kept or since removed. */
  eventMarks(): Promise<EventMarks>
}

/** An event's place in the feed (modules/events/position.ts): cursors and event ids are made of these. */
interface EventMarks {
  position: number
  seq: number
}

interface WritableSide extends Side {
  /**
   * Writes every batch of rows of `columns` into `table`, with `fill` for the
   * columns FROM lacks; `written` hears of each batch once it is handed over.
   */
  load(
    table: string,
    columns: string[],
    fill: Record<string, unknown>,
    batches: AsyncIterable<Row[]>,
    written: (batch: Row[]) => void,
  ): Promise<void>
  /** Makes every event written from now on sort after `marks` (see placeNewEvents). */
  placeNewEventsAfter(marks: EventMarks): Promise<void>
}

/**
 * Copies every row of FROM into TO; see the file's comment. Refusals that
 * leave both sides untouched (FROM not at this binary's schema, TO not empty)
 * are DatabaseOpenError (exit code 2); a failure on the way is CopyFailed.
 */
export async function copyData(from: string, to: string, options: CopyOptions = {}): Promise<CopySummary> {
  const source = parseEndpoint(from)
  const target = parseEndpoint(to)
  if (sameDatabase(source, target))
    throw new DatabaseOpenError(`FROM and TO are the same database (${source.location})`)
  const secrets = [...secretsOfEndpoint(source), ...secretsOfEndpoint(target)]
  try {
    return await readSnapshot(source, async (reader) => {
      await refuseUnlessEmpty(target)
      const tables = await reader.tables()
      const unknown = [...tables.keys()].filter((name) => !(COPIED_TABLES as readonly string[]).includes(name))
      if (unknown.length > 0) {
        throw new CopyFailed(
          `${source.location} has tables this intake does not know how to copy (${unknown.join(', ')}); nothing was written`,
        )
      }
      const rows = {} as CopySummary['rows']
      for (const table of COPIED_TABLES) rows[table] = await reader.count(table)
      const totalRows = Object.values(rows).reduce((sum, n) => sum + n, 0)
      const totalBytes = await reader.fileBytes()
      const created = await prepareSchema(target)
      try {
        await writeTransaction(target, async (writer) => {
          await copyRows(reader, writer, tables, { totalRows, totalBytes, progress: options.progress })
          await placeNewEvents(reader, writer)
          await check(reader, writer, rows, {
            totalRows,
            totalBytes,
            progress: options.progress,
            from: source.location,
            to: target.location,
          })
        })
      } catch (error) {
        // A file this copy made holds nothing (its one transaction rolled back): it goes, so a retry finds the name free.
        if (created && target.kind === 'sqlite') removeSqliteFiles(target.path)
        throw error
      }
      return { from: source.location, to: target.location, rows, totalRows, bytes: totalBytes, created }
    })
  } catch (error) {
    throw explain(error, target, secrets)
  }
}

/** Rows of every table, in COPIED_TABLES order, a batch at a time. */
async function copyRows(
  reader: Side,
  writer: WritableSide,
  fromTables: Map<string, TableColumns>,
  totals: { totalRows: number; totalBytes: number; progress?: CopyOptions['progress'] },
): Promise<void> {
  const toTables = await writer.tables()
  let rows = 0
  let bytes = 0
  totals.progress?.({ phase: 'copy', rows, totalRows: totals.totalRows, bytes, totalBytes: totals.totalBytes })
  for (const table of COPIED_TABLES) {
    const fromColumns = fromTables.get(table)
    const toColumns = toTables.get(table)
    if (!fromColumns || !toColumns)
      throw new CopyFailed(`The table ${table} is missing from ${fromColumns ? 'TO' : 'FROM'}`)
    const pinned = PINNED_COLUMNS[table] ?? {}
    const columns = fromColumns.names.filter((name) => toColumns.names.includes(name) && !(name in pinned))
    const fill: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(pinned)) if (toColumns.names.includes(name)) fill[name] = value
    for (const name of toColumns.required.filter((name) => !columns.includes(name) && !(name in fill))) {
      if (!(name in (FILLED_COLUMNS[table] ?? {})))
        throw new CopyFailed(`TO's ${table}.${name} must have a value and FROM has no such column`)
      fill[name] = FILLED_COLUMNS[table]![name]
    }
    const bytesAt = table === 'file_chunks' ? columns.indexOf('bytes') : -1
    const size = table === 'file_chunks' ? CHUNKS_PER_BATCH : ROWS_PER_BATCH
    await writer.load(table, columns, fill, reader.batches(table, columns, { size }), (batch) => {
      rows += batch.length
      if (bytesAt >= 0) for (const row of batch) bytes += (row[bytesAt] as Uint8Array).byteLength
      totals.progress?.({ phase: 'copy', rows, totalRows: totals.totalRows, bytes, totalBytes: totals.totalBytes })
    })
  }
}

/**
 * Events keep their numbers, and event_heads is copied: each account's next
 * event on TO takes the number after every one FROM gave it. They keep their
 * (position, seq) too, the order before numbers, so an agent's cursor from
 * then means the same place on TO, and every event TO writes next must sort
 * after every one FROM ever gave out in that order too, kept or not: an agent
 * may hold a cursor past events since swept or deleted. TO's new events take position `floor` with
 * a seq from its counter (SQLite), or their transaction id (at least 1) plus
 * `floor` (PostgreSQL); so TO's floor is raised to FROM's largest position
 * and its seq counter to FROM's largest seq. In the copy's transaction, but
 * for PostgreSQL's sequence, which no transaction rolls back: a failed copy
 * leaves it raised, which only skips numbers.
 */
async function placeNewEvents(reader: Side, writer: WritableSide): Promise<void> {
  await writer.placeNewEventsAfter(await reader.eventMarks())
}

/**
 * Before TO is committed: its row counts are FROM's, and every file's bytes
 * (its chunks in order, hashed) are FROM's. Both sides are read in file id
 * order (byte order on both stores), a batch at a time.
 */
async function check(
  reader: Side,
  writer: Side,
  expected: CopySummary['rows'],
  context: { totalRows: number; totalBytes: number; progress?: CopyOptions['progress']; from: string; to: string },
): Promise<void> {
  for (const table of COPIED_TABLES) {
    const found = await writer.count(table)
    if (found !== expected[table]) {
      throw new CopyFailed(
        `${context.to} would hold ${found} rows of ${table} where ${context.from} holds ${expected[table]}; nothing was committed`,
      )
    }
  }
  const fromFiles = fileDigests(reader)
  const toFiles = fileDigests(writer)
  let bytes = 0
  const report = () =>
    context.progress?.({
      phase: 'check',
      rows: context.totalRows,
      totalRows: context.totalRows,
      bytes,
      totalBytes: context.totalBytes,
    })
  report()
  for (;;) {
    const [a, b] = await Promise.all([fromFiles.next(), toFiles.next()])
    if (a.done && b.done) break
    const fileId = a.done ? b.value!.fileId : a.value.fileId
    if (a.done || b.done || a.value.fileId !== b.value.fileId || a.value.digest !== b.value.digest) {
      throw new CopyFailed(
        `The bytes of file ${fileId} differ between ${context.from} and ${context.to}; nothing was committed`,
      )
    }
    bytes += a.value.bytes
    report()
  }
}

/** Each file's id, SHA-256 of its chunks in order, and size: in file id order. */
async function* fileDigests(side: Side): AsyncGenerator<{ fileId: string; digest: string; bytes: number }> {
  let current: { fileId: string; hash: ReturnType<typeof createHash>; bytes: number } | undefined
  for await (const batch of side.batches('file_chunks', ['file_id', 'bytes'], {
    size: CHUNKS_PER_BATCH,
    orderBy: 'file_id, seq',
  })) {
    for (const [fileId, bytes] of batch as Array<[string, Uint8Array]>) {
      if (current && current.fileId !== fileId) {
        yield { fileId: current.fileId, digest: current.hash.digest('hex'), bytes: current.bytes }
        current = undefined
      }
      current ??= { fileId, hash: createHash('sha256'), bytes: 0 }
      current.hash.update(bytes)
      current.bytes += bytes.byteLength
    }
  }
  if (current) yield { fileId: current.fileId, digest: current.hash.digest('hex'), bytes: current.bytes }
}

// ---------------------------------------------------------------------------
// Reading FROM: one snapshot

/**
 * Runs `work` on one consistent snapshot of FROM, which must be at this
 * binary's schema (else exit 2 naming `intake migrate`). Nothing is written to FROM.
 */
async function readSnapshot<T>(source: Endpoint, work: (reader: Side) => Promise<T>): Promise<T> {
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
async function refuseUnlessEmpty(target: Endpoint): Promise<void> {
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
async function prepareSchema(target: Endpoint): Promise<boolean> {
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
async function writeTransaction(target: Endpoint, work: (writer: WritableSide) => Promise<void>): Promise<void> {
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

// ---------------------------------------------------------------------------
// SQLite

function sqliteSchemaVersion(db: Database, path: string): number {
  try {
    return (db.query('PRAGMA user_version').get() as { user_version: number }).user_version
  } catch (error) {
    throw new DatabaseOpenError(`${path} is not a SQLite database (${describeFailure(error)})`)
  }
}

function sqliteTableNames(db: Database): string[] {
  return (
    db
      .query(
        `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name`,
      )
      .all() as Array<{ name: string }>
  )
    .map((row) => row.name)
    .filter((name) => !notCopied('sqlite', name))
}

const sqliteCount = (db: Database, table: string) =>
  (db.query(`SELECT count(*) AS n FROM ${quote(table)}`).get() as { n: number }).n

function sqliteSide(db: Database): WritableSide {
  return {
    kind: 'sqlite',
    async tables() {
      const tables = new Map<string, TableColumns>()
      for (const table of sqliteTableNames(db)) {
        const columns = db.query(`PRAGMA table_info(${quote(table)})`).all() as Array<{
          name: string
          notnull: number
          dflt_value: unknown
          pk: number
        }>
        tables.set(table, {
          names: columns.map((column) => column.name),
          required: columns
            .filter((column) => column.notnull && column.dflt_value === null)
            .map((column) => column.name),
        })
      }
      return tables
    },
    count: async (table) => sqliteCount(db, table),
    fileBytes: async () =>
      (db.query('SELECT coalesce(sum(length(bytes)), 0) AS n FROM file_chunks').get() as { n: number }).n,
    async *batches(table, columns, { size, orderBy }) {
      const select = db.query(
        `SELECT ${columns.map(quote).join(', ')} FROM ${quote(table)}${orderBy ? ` ORDER BY ${orderBy}` : ''}`,
      )
      let batch: Row[] = []
      for (const row of select.iterate() as IterableIterator<Record<string, unknown>>) {
        batch.push(columns.map((column) => row[column]))
        if (batch.length === size) {
          yield batch
          batch = []
        }
      }
      if (batch.length > 0) yield batch
    },
    async load(table, columns, fill, batches, written) {
      const names = [...columns, ...Object.keys(fill)]
      const insert = db.query(
        `INSERT INTO ${quote(table)} (${names.map(quote).join(', ')}) VALUES (${names.map(() => '?').join(', ')})`,
      )
      const filled = Object.values(fill)
      for await (const batch of batches) {
        for (const row of batch) insert.run(...([...row, ...filled] as SQLQueryBindings[]))
        written(batch)
      }
      insert.finalize()
    },
    // Every event a SQLite store writes takes the floor as its position (copied ones are at or below it);
    // sqlite_sequence holds the largest seq AUTOINCREMENT ever gave, though that event be gone.
    eventMarks: async () =>
      db
        .query(
          `SELECT max(coalesce((SELECT floor FROM event_positions), 0), coalesce((SELECT max(position) FROM events), 0)) AS position,
                  max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0), coalesce((SELECT max(seq) FROM events), 0)) AS seq`,
        )
        .get() as EventMarks,
    async placeNewEventsAfter(marks) {
      db.query(
        'INSERT INTO event_positions (id, floor) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET floor = max(floor, excluded.floor)',
      ).run(marks.position)
      // AUTOINCREMENT's counter: a row of sqlite_sequence, there once the table has had a row.
      db.query(`UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'events'`).run(marks.seq)
      db.query(
        `INSERT INTO sqlite_sequence (name, seq) SELECT 'events', ? WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'events')`,
      ).run(marks.seq)
    },
  }
}

function removeSqliteFiles(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${path}${suffix}`, { force: true })
}

// ---------------------------------------------------------------------------
// PostgreSQL

/** One connection to the database at `endpoint`, that has answered; PGPASSWORD and the other PG* variables fill in what the URL leaves out. */
async function connectPostgres(endpoint: Extract<Endpoint, { kind: 'postgres' }>): Promise<SQL> {
  const secrets = secretsOfEndpoint(endpoint)
  let sql: SQL
  try {
    const database = decodeURIComponent(new URL(endpoint.url).pathname.slice(1))
    // The URL's database, explicitly: PGDATABASE would otherwise win over it.
    sql = new Bun.SQL(endpoint.url, { ...(database ? { database } : {}), max: 1, connectionTimeout: 10 })
  } catch (error) {
    throw new DatabaseOpenError(
      `Cannot use the PostgreSQL database at ${endpoint.location}: ${redact(describeFailure(error), secrets)}`,
    )
  }
  try {
    await sql.unsafe('SELECT 1')
  } catch (error) {
    await sql.close({ timeout: 0 }).catch(() => {})
    const why = `Cannot reach the PostgreSQL database at ${endpoint.location}: ${redact(describeFailure(error), secrets)}`
    throw isConnectionFailure(error) ? new DatabaseUnreachable(why) : new DatabaseOpenError(why)
  }
  return sql
}

async function postgresSchema(tx: SQL): Promise<{ version: number }> {
  const [table] = await tx.unsafe(`SELECT to_regclass('intake_schema') IS NOT NULL AS present`)
  if (!table.present) return { version: 0 }
  const [row] = await tx.unsafe('SELECT version FROM intake_schema')
  return { version: row ? Number(row.version) : 0 }
}

async function postgresTableNames(tx: SQL): Promise<string[]> {
  const rows = await tx.unsafe(`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`)
  return (rows as Array<{ tablename: string }>)
    .map((row) => row.tablename)
    .filter((name) => !notCopied('postgres', name))
}

const postgresCount = async (tx: SQL, table: string) =>
  Number((await tx.unsafe(`SELECT count(*) AS n FROM ${quote(table)}`))[0].n)

/** A value in COPY's text format: \\N for null, bytes as hex, text with its backslashes and control characters escaped. */
function copyText(value: unknown): string {
  if (value === null || value === undefined) return '\\N'
  if (typeof value === 'number' || typeof value === 'bigint') return String(value)
  if (value instanceof Uint8Array)
    return `\\\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`
  return String(value).replace(/[\\\n\r\t]/g, (c) => COPY_ESCAPES[c]!)
}

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' }

/** A table's column types and primary key, as PostgreSQL holds them. */
interface PostgresShape {
  types: Map<string, string>
  primaryKey: string[]
}

/**
 * Bun's client takes and gives bytea in binary only in statements with
 * parameters; elsewhere (a cursor's FETCH, COPY's text format) as hex text,
 * twice the bytes and several times slower. So tables with bytea (file
 * chunks) are read by primary key a page at a time and written with
 * parameters; the others through a cursor and COPY.
 */
function postgresSide(tx: TransactionSQL): WritableSide {
  let cursors = 0
  const shapes = new Map<string, Promise<PostgresShape>>()
  const shapeOf = (table: string) => {
    let shape = shapes.get(table)
    if (!shape) {
      shape = (async () => {
        const columns = (await tx.unsafe(
          `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`,
          [table],
        )) as Array<{ column_name: string; data_type: string }>
        const key = (await tx.unsafe(
          `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
            WHERE i.indrelid = to_regclass($1) AND i.indisprimary ORDER BY array_position(i.indkey::int2[], a.attnum)`,
          [quote(table)],
        )) as Array<{ attname: string }>
        return {
          types: new Map(columns.map((column) => [column.column_name, column.data_type])),
          primaryKey: key.map((column) => column.attname),
        }
      })()
      shapes.set(table, shape)
    }
    return shape
  }

  /** Rows by primary key, a page at a time, each page a statement with parameters. */
  async function* byPrimaryKey(table: string, columns: string[], key: string[], size: number): AsyncGenerator<Row[]> {
    const selected = [...columns, ...key.filter((column) => !columns.includes(column))]
    const keyAt = key.map((column) => selected.indexOf(column))
    const select = `SELECT ${selected.map(quote).join(', ')} FROM ${quote(table)}`
    const order = `ORDER BY ${key.map(quote).join(', ')} LIMIT ${size}`
    const after = `WHERE (${key.map(quote).join(', ')}) > (${key.map((_, i) => `$${i + 1}`).join(', ')})`
    let last: unknown[] | undefined
    for (;;) {
      const rows = (await (last
        ? tx.unsafe(`${select} ${after} ${order}`, last)
        : tx.unsafe(`${select} ${order}`)
      ).values()) as Row[]
      if (rows.length === 0) return
      last = keyAt.map((at) => rows.at(-1)![at])
      yield rows.map((row) => row.slice(0, columns.length))
      if (rows.length < size) return
    }
  }

  /** Rows through a cursor in the transaction: the server hands them over a batch at a time. */
  async function* throughCursor(
    table: string,
    columns: string[],
    size: number,
    orderBy?: string,
  ): AsyncGenerator<Row[]> {
    const cursor = `copy_${++cursors}`
    await tx.unsafe(
      `DECLARE ${cursor} NO SCROLL CURSOR FOR SELECT ${columns.map(quote).join(', ')} FROM ${quote(table)}${orderBy ? ` ORDER BY ${orderBy}` : ''}`,
    )
    for (;;) {
      const rows = (await tx.unsafe(`FETCH ${size} FROM ${cursor}`).values()) as Row[]
      if (rows.length === 0) break
      yield rows
    }
    await tx.unsafe(`CLOSE ${cursor}`)
  }

  return {
    kind: 'postgres',
    async tables() {
      const rows = (await tx.unsafe(
        `SELECT table_name, column_name, is_nullable, column_default FROM information_schema.columns
          WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
      )) as Array<{ table_name: string; column_name: string; is_nullable: string; column_default: string | null }>
      const tables = new Map<string, TableColumns>()
      for (const table of await postgresTableNames(tx)) {
        const columns = rows.filter((row) => row.table_name === table)
        tables.set(table, {
          names: columns.map((column) => column.column_name),
          required: columns
            .filter((column) => column.is_nullable === 'NO' && column.column_default === null)
            .map((column) => column.column_name),
        })
      }
      return tables
    },
    count: (table) => postgresCount(tx, table),
    fileBytes: async () =>
      Number((await tx.unsafe('SELECT coalesce(sum(octet_length(bytes)), 0) AS n FROM file_chunks'))[0].n),
    async *batches(table, columns, { size, orderBy }) {
      const { types, primaryKey } = await shapeOf(table)
      // int8 arrives as text: times and sizes are numbers everywhere else.
      const bigint = columns.map((column) => types.get(column) === 'bigint')
      const binary = columns.some((column) => types.get(column) === 'bytea') && primaryKey.length > 0
      // By primary key: the one order asked for (file_id, seq) is that key.
      const pages = binary
        ? byPrimaryKey(table, columns, primaryKey, size)
        : throughCursor(table, columns, size, orderBy)
      for await (const rows of pages) {
        for (const row of rows)
          for (let i = 0; i < row.length; i++) if (bigint[i] && row[i] !== null) row[i] = Number(row[i])
        yield rows
      }
    },
    async load(table, columns, fill, batches, written) {
      const { types } = await shapeOf(table)
      const names = [...columns, ...Object.keys(fill)]
      const list = names.map(quote).join(', ')
      const filled = Object.values(fill)
      let send: (batch: Row[]) => Promise<unknown>
      if (names.some((name) => types.get(name) === 'bytea')) {
        send = (batch) => {
          const params = batch.flatMap((row) => [...row, ...filled])
          const tuples = batch.map((_, r) => `(${names.map((_, c) => `$${r * names.length + c + 1}`).join(', ')})`)
          return tx.unsafe(`INSERT INTO ${quote(table)} (${list}) VALUES ${tuples.join(', ')}`, params)
        }
      } else {
        // COPY in its text format, one per batch: the server checks foreign
        // keys at the end of each statement and holds those checks until then.
        const copy = `COPY ${quote(table)} (${list}) FROM STDIN`
        const filledText = filled.map(copyText)
        send = async (batch) => {
          let text = ''
          for (const row of batch) text += `${[...row.map(copyText), ...filledText].join('\t')}\n`
          const stream = tx.unsafe(copy).writable().getWriter()
          try {
            await stream.write(text)
            await stream.close()
          } catch (error) {
            await stream.abort(error).catch(() => {})
            throw error
          }
        }
      }
      // The next batch is read while the server stores this one.
      let stored: Promise<void> = Promise.resolve()
      for await (const batch of batches) {
        await stored
        stored = send(batch).then(() => written(batch))
        // Awaited with the next batch or after the last; a failure of the reader meanwhile ends the transaction.
        stored.catch(() => {})
      }
      await stored
    },
    async eventMarks() {
      // Every transaction id given out before this snapshot is below its xmax, so every position this store
      // gave an event in it is below xmax + floor (the floor is set only by a copy, before any event is written);
      // copied events are at or below the floor.
      const [marks] = await tx.unsafe(
        `SELECT greatest(coalesce((SELECT floor FROM event_positions), 0) + pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
                         coalesce((SELECT max(position) FROM events), 0)) AS position,
                coalesce((SELECT max(seq) FROM events), 0) AS seq`,
      )
      return { position: Number(marks.position), seq: Math.max(Number(marks.seq), await sequenceValue()) }
    },
    async placeNewEventsAfter(marks) {
      await tx.unsafe(
        'INSERT INTO event_positions (id, floor) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET floor = greatest(event_positions.floor, excluded.floor)',
        [marks.position],
      )
      // Rows copied with their seq leave the sequence where it was.
      if (marks.seq > (await sequenceValue()))
        await tx.unsafe(`SELECT setval(pg_get_serial_sequence('events', 'seq'), $1)`, [marks.seq])
    },
  }

  /** The largest seq the events' sequence has given (0 before the first), though that event be gone. */
  async function sequenceValue(): Promise<number> {
    const [{ name }] = await tx.unsafe(`SELECT pg_get_serial_sequence('events', 'seq') AS name`)
    const [row] = await tx.unsafe(`SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS value FROM ${name}`)
    return Number(row.value)
  }
}

// ---------------------------------------------------------------------------

/** A table or column name in SQL (both stores quote alike). */
const quote = (name: string) => `"${name.replaceAll('"', '""')}"`

/** A path as a shell word, for a command to copy from a message. */
const shellWord = (text: string) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`)

function sameDatabase(a: Endpoint, b: Endpoint): boolean {
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

/** What may not be shown of an endpoint: its URL's password, and PGPASSWORD. */
const secretsOfEndpoint = (endpoint: Endpoint): string[] =>
  endpoint.kind === 'postgres' ? secretsOf(endpoint.url) : []

/** The error to show: intake's own as they are; anything else (a write that failed, a lost connection) as CopyFailed. */
function explain(error: unknown, target: Endpoint, secrets: string[]): Error {
  if (error instanceof DatabaseOpenError || error instanceof CopyFailed) {
    error.message = redact(error.message, secrets)
    return error
  }
  return new CopyFailed(
    `The copy failed and ${target.location} was left without its rows: ${redact(describeFailure(error), secrets)}`,
  )
}
