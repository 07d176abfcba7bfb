import { DatabaseOpenError } from '../driver.ts'
import { describeFailure, redact } from '../postgres/connect.ts'
import {
  parseEndpoint,
  prepareSchema,
  readSnapshot,
  refuseUnlessEmpty,
  sameDatabase,
  writeTransaction,
} from './endpoints.ts'
import { secretsOfEndpoint } from './postgres-side.ts'
import {
  CHUNKS_PER_BATCH,
  COPIED_TABLES,
  CopyFailed,
  type CopyProgress,
  type Endpoint,
  ROWS_PER_BATCH,
  type RowCounts,
  type Side,
  type TableColumns,
  type WritableSide,
} from './sides.ts'
import { removeSqliteFiles } from './sqlite-side.ts'
import { check } from './verify.ts'

export { CopyFailed }

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

export interface CopyOptions {
  /** Called after each batch. */
  progress?: (progress: CopyProgress) => void
}

export interface CopySummary {
  /** Where the data came from and went, for people (a PostgreSQL URL without its password). */
  from: string
  to: string
  /** Rows per table, the same on both sides. */
  rows: RowCounts
  totalRows: number
  /** Bytes of the files (their chunks). */
  bytes: number
  /** Whether TO's SQLite file was created by this copy. */
  created: boolean
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
      const rows = {} as RowCounts
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
