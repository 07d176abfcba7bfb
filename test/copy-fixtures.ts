/**
 * What the copy tests share: a database read back as sorted rows whichever
 * store it is, the refusal every command makes the same way, a webhook
 * receiver, and bulk SQLite databases written straight in SQL.
 */

import { Database } from 'bun:sqlite'
import { expect } from 'bun:test'
import { createHash } from 'node:crypto'
import { SQL } from 'bun'
import { COPIED_TABLES } from '../src/db/copy/sides.ts'
import { openDatabase } from '../src/db/sqlite/open.ts'
import type { CommandResult } from './e2e/binary.ts'

export const STEP_TIMEOUT = 60_000

// ---------------------------------------------------------------------------
// Reading a database back, whichever store it is

/**
 * Every row of every copied table as sorted JSON lines: bytes as hex, int8 as
 * numbers, SQLite's legacy content column and PostgreSQL's events.tx (the
 * writing transaction's id, '0' for events copied in) left out.
 */
export async function dump(location: string): Promise<Record<string, string[]>> {
  const tables: Record<string, string[]> = {}
  const line = (row: Record<string, unknown>, bigints: Set<string> = new Set()) =>
    JSON.stringify(
      Object.keys(row)
        .filter((column) => column !== 'content' && column !== 'tx')
        .sort()
        .map((column) => {
          const value = row[column]
          if (value instanceof Uint8Array) return [column, Buffer.from(value).toString('hex')]
          return [column, bigints.has(column) && value !== null ? Number(value) : value]
        }),
    )
  if (location.startsWith('postgres')) {
    const sql = new SQL(location, { max: 1 })
    try {
      const types = await sql.unsafe(
        `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND data_type = 'bigint'`,
      )
      for (const table of COPIED_TABLES) {
        const bigints = new Set<string>(
          types
            .filter((t: { table_name: string }) => t.table_name === table)
            .map((t: { column_name: string }) => t.column_name),
        )
        tables[table] = (await sql.unsafe(`SELECT * FROM ${table}`))
          .map((row: Record<string, unknown>) => line(row, bigints))
          .sort()
      }
    } finally {
      await sql.close()
    }
    return tables
  }
  const db = new Database(location, { strict: true })
  try {
    for (const table of COPIED_TABLES)
      tables[table] = (db.query(`SELECT * FROM ${table}`).all() as Array<Record<string, unknown>>)
        .map((row) => line(row))
        .sort()
  } finally {
    db.close()
  }
  return tables
}

export const countsOf = async (location: string) =>
  Object.fromEntries(Object.entries(await dump(location)).map(([table, rows]) => [table, rows.length]))
export const noRows = Object.fromEntries(COPIED_TABLES.map((table) => [table, 0]))

/** One line on stderr, no stack trace, exit code 2. */
export function expectRefused(result: CommandResult, pattern: RegExp) {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(pattern) })
  expect(result.stderr.trim().split('\n')).toHaveLength(1)
  expect(result.stderr).not.toMatch(/^\s+at\s|\.(ts|js):\d+/m)
}

/** A webhook receiver on 127.0.0.1 answering `status`. */
export function receiver(status = 200) {
  const received: Array<{ delivery: string; body: string }> = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      received.push({ delivery: req.headers.get('x-service-delivery') ?? '', body: await req.text() })
      return new Response('ok', { status })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/hook`, received, stop: () => server.stop(true) }
}

export const FILE_FIELD = { key: 'doc', type: 'file', label: 'Document', config: { max_size: 3_000_000 } }

// ---------------------------------------------------------------------------
// Large databases, written straight in SQL: the copies that take a while

/** A key the bulk databases register, so a server started on them prints none. */
export const BULK_KEY = `svc_live_${'c'.repeat(48)}`

/**
 * `forms` answered forms (each with a delivery) of the default account and
 * `files` files of two 512 KiB chunks, in a new SQLite file at intake's schema.
 */
export function bulkDatabase(path: string, forms: number, files: number): void {
  const db = openDatabase(path)
  try {
    db.transaction(() => {
      db.run(`INSERT INTO accounts VALUES ('01BULKACCOUNT0000000000000', 'default', 1700000000000)`)
      db.run(
        `INSERT INTO api_keys VALUES ('01BULKKEY00000000000000000', '01BULKACCOUNT0000000000000', ?, 'cccc', 1700000000000, NULL, NULL)`,
        [createHash('sha256').update(BULK_KEY).digest('hex')],
      )
      db.run(`WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i WHERE x < ${forms})
        INSERT INTO forms SELECT printf('00BULKFORM%016d', x), '01BULKACCOUNT0000000000000', 'Bulk ' || x, NULL,
          '[{"key":"name","type":"text","label":"Name"}]', 1, 'http://127.0.0.1:9/hook', '{}', '${'b'.repeat(64)}', NULL, '{}', 'completed', NULL, 1700000000000 + x, 1700000000000 + x, '{}', '["form.completed"]' FROM i`)
      db.run(
        `INSERT INTO responses SELECT printf('00BULKRESP%016d', rowid), id, '{"name":"Ada ' || rowid || '"}', '127.0.0.1', 'bulk', created_at FROM forms WHERE id LIKE '00BULK%'`,
      )
      db.run(
        `INSERT INTO deliveries SELECT printf('00BULKDLVR%016d', rowid), form_id, id, 'form.completed', 'http://127.0.0.1:9/hook', data, 'delivered', 1, 1, NULL, NULL, 200, NULL, submitted_at, submitted_at FROM responses WHERE id LIKE '00BULK%'`,
      )
      db.run(`WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i WHERE x < ${files})
        INSERT INTO file_chunks SELECT printf('bulkfile%08d', x), s.seq, randomblob(524288) FROM i, (SELECT 0 AS seq UNION ALL SELECT 1) s`)
      db.run(
        `INSERT INTO unclaimed_files SELECT DISTINCT file_id, 1700000000000 FROM file_chunks WHERE file_id LIKE 'bulkfile%'`,
      )
    })()
  } finally {
    db.close()
  }
}
