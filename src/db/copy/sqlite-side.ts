import type { Database, SQLQueryBindings } from 'bun:sqlite'
import { rmSync } from 'node:fs'
import { DatabaseOpenError } from '../driver.ts'
import { describeFailure } from '../postgres/connect.ts'
import { quote } from './escaping.ts'
import { type EventMarks, notCopied, type Row, type TableColumns, type WritableSide } from './sides.ts'

/** A SQLite file as one side of a copy. */

export function sqliteSchemaVersion(db: Database, path: string): number {
  try {
    return (db.query('PRAGMA user_version').get() as { user_version: number }).user_version
  } catch (error) {
    throw new DatabaseOpenError(`${path} is not a SQLite database (${describeFailure(error)})`)
  }
}

export function sqliteTableNames(db: Database): string[] {
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

export const sqliteCount = (db: Database, table: string) =>
  (db.query(`SELECT count(*) AS n FROM ${quote(table)}`).get() as { n: number }).n

export function sqliteSide(db: Database): WritableSide {
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

export function removeSqliteFiles(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${path}${suffix}`, { force: true })
}
