/**
 * PostgreSQL's write limit, as intake's PostgreSQL store sees it: a plain
 * Bun.SQL loop committing one row per transaction (BEGIN, INSERT, COMMIT) on
 * CONNECTIONS connections at once, synchronous_commit on, into a fresh table
 * of the database given. No HTTP, no validation: what the cluster commits per
 * second when several writers commit in parallel (PostgreSQL, unlike SQLite,
 * does: their WAL flushes are shared).
 *
 *   bun bench/pg-write-limit.ts <postgres-url> [seconds=3] [connections=8]
 *
 * Prints one JSON line:
 * {"rows":N,"ms":M,"rowsPerSecond":R,"connections":C,"settings":{...}}.
 * bench/run.ts runs it as a process of its own, on a database of its own on
 * the cluster intake uses; the table is dropped at the end.
 */
import { SQL } from 'bun'
import { monotonicFactory } from 'ulidx'
import { FORM_SIZED_BODY } from './form-sized-row.ts'
import { commitFor } from './lib.ts'

const [url, secondsArg = '3', connectionsArg = '8'] = process.argv.slice(2)
const seconds = Number(secondsArg)
const connections = Number(connectionsArg)
if (!url || !/^postgres(ql)?:\/\//.test(url) || !(seconds > 0) || !(Number.isInteger(connections) && connections > 0)) {
  console.error('usage: bun bench/pg-write-limit.ts <postgres-url> [seconds] [connections]')
  process.exit(2)
}

const TABLE = 'bench_write_limit'
const admin = new SQL({ url, max: 1 })
const settings = (
  await admin`SELECT current_setting('synchronous_commit') AS synchronous_commit, current_setting('fsync') AS fsync,
                     current_setting('wal_sync_method') AS wal_sync_method, current_setting('commit_delay') AS commit_delay,
                     current_setting('server_version') AS server_version`
)[0] as Record<string, string>
await admin.unsafe(`DROP TABLE IF EXISTS ${TABLE}`)
await admin.unsafe(`CREATE TABLE ${TABLE} (id text PRIMARY KEY, created_at bigint NOT NULL, body jsonb NOT NULL)`)

const body = FORM_SIZED_BODY
const newId = monotonicFactory()

// One connection per writer, so that each writer's transaction has a connection to itself.
const writers = Array.from({ length: connections }, () => new SQL({ url, max: 1 }))
for (const w of writers) await w.unsafe('SET synchronous_commit = on')
const commitOne = (w: SQL) =>
  w.begin(async (tx) => {
    const now = Date.now()
    await tx`INSERT INTO bench_write_limit (id, created_at, body) VALUES (${newId(now)}, ${now}, ${body}::jsonb)`
  })

// Warm: every connection open, the statement prepared, the table's first pages written.
for (let i = 0; i < 5; i++) await Promise.all(writers.map(commitOne))

const { units: rows, ms } = await commitFor(writers, seconds, async (w) => {
  await commitOne(w)
  return 1
})
await Promise.all(writers.map((w) => w.close()))
await admin.unsafe(`DROP TABLE ${TABLE}`)
await admin.close()
console.log(JSON.stringify({ rows, ms, rowsPerSecond: (rows * 1000) / ms, connections, settings }))
