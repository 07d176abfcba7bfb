/** What `intake copy` moves and the two sides it moves it between, alike on SQLite and PostgreSQL. */

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
  'console_users',
  'console_setup_tokens',
  'console_sessions',
  'console_sign_in_failures',
] as const

/** Rows per table, the same on both sides once copied. */
export type RowCounts = Record<(typeof COPIED_TABLES)[number], number>

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

/** SQLite's title search (form_titles, the full-text index's tables): TO's sweep fills its own from the forms. */
const INDEX_TABLES = /^form_titles(_\w+)?$/

/** Tables the copy neither copies nor counts as data. */
export const notCopied = (kind: Kind, name: string) =>
  SCHEMA_TABLES[kind].includes(name) || SET_TABLES.includes(name) || INDEX_TABLES.test(name)

/** Rows per batch read and written: memory stays bounded whatever the size of the database. */
export const ROWS_PER_BATCH = 1000
/** Chunks per batch: each is up to 512 KiB. */
export const CHUNKS_PER_BATCH = 8

export interface CopyProgress {
  /** `copy` while rows are written, `check` while TO's files are read back and compared. */
  phase: 'copy' | 'check'
  /** Rows written so far, of every table. */
  rows: number
  totalRows: number
  /** File bytes written (copy) or compared (check) so far. */
  bytes: number
  totalBytes: number
}

/** A copy that failed on the way (TO left empty): exit code 1, with the reason. */
export class CopyFailed extends Error {}

export type Kind = 'sqlite' | 'postgres'

/** One side of a copy: a SQLite file or a PostgreSQL database. */
export type Endpoint =
  | { kind: 'sqlite'; path: string; location: string }
  | { kind: 'postgres'; url: string; location: string }

/** A row as read and written: values in the order of the table's copied columns. */
export type Row = unknown[]

export interface TableColumns {
  /** Every column, by name. */
  names: string[]
  /** Columns a row must be given (NOT NULL without a default). */
  required: string[]
}

/** What the copy reads from and writes to, alike on both stores. */
export interface Side {
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
export interface EventMarks {
  position: number
  seq: number
}

export interface WritableSide extends Side {
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
