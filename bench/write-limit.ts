/**
 * The write limit of this disk, as intake's database sees it: a plain
 * bun:sqlite loop committing one row per transaction, with intake's pragmas
 * (WAL, synchronous=FULL, busy_timeout, foreign_keys; see src/db/sqlite/open.ts), on
 * a fresh file. No HTTP, no validation: what one writer can commit per second.
 *
 *   bun bench/write-limit.ts <fresh-file.db> [seconds=3]
 *
 * Prints one JSON line: {"rows":N,"ms":M,"rowsPerSecond":R}. bench/run.ts runs
 * it as a process of its own, in the same temp dir as intake's database.
 */
import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { monotonicFactory } from 'ulidx'
import { FORM_SIZED_BODY } from './form-sized-row.ts'

const [path, secondsArg = '3'] = process.argv.slice(2)
const seconds = Number(secondsArg)
if (!path || !(seconds > 0)) {
  console.error('usage: bun bench/write-limit.ts <fresh-file.db> [seconds]')
  process.exit(2)
}
if (existsSync(path)) {
  console.error(`${path} exists: give a fresh file`)
  process.exit(2)
}

const db = new Database(path, { create: true, strict: true })
db.exec('PRAGMA busy_timeout = 5000')
db.exec('PRAGMA journal_mode = WAL')
db.exec('PRAGMA synchronous = FULL')
db.exec('PRAGMA foreign_keys = ON')
db.exec('CREATE TABLE rows (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, body TEXT NOT NULL) STRICT')

const body = FORM_SIZED_BODY
const newId = monotonicFactory()
const insert = db.query('INSERT INTO rows (id, created_at, body) VALUES (?, ?, ?)')
// BEGIN IMMEDIATE ... COMMIT around each row, as intake's writes are.
const commitOne = db.transaction((now: number) => insert.run(newId(now), now, body))

for (let i = 0; i < 20; i++) commitOne.immediate(Date.now()) // the WAL file exists, the statement is warm

let rows = 0
const started = performance.now()
const until = started + seconds * 1000
let now = started
while (now < until) {
  commitOne.immediate(Date.now())
  rows++
  now = performance.now()
}
const ms = now - started
db.close()
console.log(JSON.stringify({ rows, ms, rowsPerSecond: (rows * 1000) / ms }))
