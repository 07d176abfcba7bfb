/**
 * The console's forms list at a million forms (CONTRACT 15): one account with
 * 1,000,000 forms, seeded with bulk SQL, then the time of the list's pages
 * through the store the console reads: the first page, a status filter, a
 * title search that matches few (10 forms), one that matches many, a text too
 * short for trigrams, and the last page. Beside the search, what a plain
 * LIKE over the account's forms costs, the reason for the trigram index. On
 * SQLite the sweep fills that index a batch at a time; here it is filled
 * first, and the time it took is printed.
 *
 *   bun bench/console-forms.ts                 # SQLite (a temp file)
 *   bun bench/console-forms.ts postgres://...  # PostgreSQL (a fresh database made there)
 *   FORMS=100000 bun bench/console-forms.ts    # fewer forms
 *
 * Each figure is the median of 7 runs after one to warm up.
 */
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import type { ListParams } from '../src/modules/forms/store/index.ts'
import { openStore, type Store } from '../src/stores.ts'
import { freshPostgresDatabase } from '../test/postgres.ts'

const FORMS = Number(process.env.FORMS ?? 1_000_000)
const ACCOUNT = 'acct_bench'
const NOW = Date.UTC(2026, 10, 1)
/** Every 100,000th form is an audit: a search for "audit zqx" matches 10 of a million. */
const RARE_EVERY = FORMS / 10
const PAGE = 20

/** The n-th form's id: 26 characters of Crockford base32 (digits), in the order they were made. */
const formId = (n: number) => `01JZ${String(n).padStart(22, '0')}`
const titleOf = (n: number) => (n % RARE_EVERY === 0 ? `Quarterly audit ZQX-${n}` : `Weekly check-in #${n}`)
const statusOf = (n: number) => (n % 10 === 0 ? 'cancelled' : 'active')

const url = process.argv[2]
let store: Store
let plainLike: (text: string) => Promise<unknown>
/** SQLite: what the server's checkpoints do meanwhile (a log that only grows slows every read). */
let checkpoint = () => {}
let cleanUp: () => Promise<void>
const seeding = performance.now()
if (url) {
  const database = await freshPostgresDatabase(url)
  store = await openStore({ dbPath: '', databaseUrl: database.url }, { poolSize: 2 })
  const sql = new SQL(database.url)
  await sql.unsafe(`INSERT INTO accounts (id, name, created_at) VALUES ('${ACCOUNT}', 'bench', ${NOW})`)
  await sql.unsafe(`
    INSERT INTO forms (id, account_id, title, description, fields, fields_count, callback_url, callback_metadata,
                       webhook_secret, context, settings, status, expires_at, created_at, updated_at)
    SELECT '01JZ' || lpad(n::text, 22, '0'), '${ACCOUNT}',
           CASE WHEN n % ${RARE_EVERY} = 0 THEN 'Quarterly audit ZQX-' || n ELSE 'Weekly check-in #' || n END,
           NULL, '[{"key":"name","type":"text","label":"Name"}]', 1, NULL, '{}', NULL, NULL, '{}',
           CASE WHEN n % 10 = 0 THEN 'cancelled' ELSE 'active' END, NULL, ${NOW} + n, ${NOW} + n
      FROM generate_series(1, ${FORMS}) AS n`)
  await sql.unsafe('ANALYZE forms')
  const [index] = await sql.unsafe(`SELECT count(*)::int AS n FROM pg_indexes WHERE indexname = 'forms_title_trigrams'`)
  if (index.n !== 1) throw new Error('the trigram index is missing: was pg_trgm added?')
  plainLike = (text) =>
    sql.unsafe(
      `SELECT id, title FROM forms WHERE account_id = $1 AND (title || '') ILIKE $2 ORDER BY id DESC LIMIT ${PAGE + 1}`,
      [ACCOUNT, `%${text}%`],
    )
  cleanUp = async () => {
    await sql.close()
    await store.close()
    await database.drop()
  }
} else {
  const dir = mkdtempSync(join(tmpdir(), 'intake-console-bench-'))
  const path = join(dir, 'intake.db')
  store = await openStore({ dbPath: path, databaseUrl: undefined })
  const db = new Database(path)
  db.run('PRAGMA journal_mode = WAL')
  db.run(`INSERT INTO accounts (id, name, created_at) VALUES ('${ACCOUNT}', 'bench', ${NOW})`)
  const insert = db.query(
    `INSERT INTO forms (id, account_id, title, description, fields, fields_count, callback_url, callback_metadata,
                        webhook_secret, context, settings, status, expires_at, created_at, updated_at)
     VALUES (?1, '${ACCOUNT}', ?2, NULL, '[{"key":"name","type":"text","label":"Name"}]', 1, NULL, '{}', NULL, NULL,
             '{}', ?3, NULL, ?4, ?4)`,
  )
  const batch = db.transaction((from: number, to: number) => {
    for (let n = from; n <= to; n++) insert.run(formId(n), titleOf(n), statusOf(n), NOW + n)
  })
  for (let from = 1; from <= FORMS; from += 50_000) batch(from, Math.min(FORMS, from + 49_999))
  db.run('ANALYZE')
  checkpoint = () => db.run('PRAGMA wal_checkpoint(PASSIVE)')
  const like = db.query(
    `SELECT id, title FROM forms WHERE account_id = ?1 AND title LIKE ?2 ORDER BY id DESC LIMIT ${PAGE + 1}`,
  )
  plainLike = async (text) => like.all(ACCOUNT, `%${text}%`)
  cleanUp = async () => {
    db.close()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
console.log(
  `${url ? 'PostgreSQL' : 'SQLite'}: ${FORMS.toLocaleString('en')} forms in one account, seeded in ${((performance.now() - seeding) / 1000).toFixed(1)} s`,
)
// What the sweep does a batch a pass (SQLite; PostgreSQL's index keeps itself), all at once here.
const indexing = performance.now()
let indexed = 0
for (let added = 1; added > 0; indexed += added) {
  added = await store.transaction((tx) => tx.forms.indexTitles(5000))
  checkpoint()
}
if (indexed > 0)
  console.log(
    `title index filled by the sweep's step in ${((performance.now() - indexing) / 1000).toFixed(1)} s (${(((performance.now() - indexing) * 1000) / indexed).toFixed(0)} µs a form)`,
  )

async function median(run: () => Promise<unknown>): Promise<number> {
  await run()
  const times: number[] = []
  for (let i = 0; i < 7; i++) {
    const started = performance.now()
    await run()
    times.push(performance.now() - started)
  }
  return times.sort((a, b) => a - b)[3]!
}

const list = (params: Partial<ListParams>) => async () => {
  const rows = await store.forms.list({
    accountId: ACCOUNT,
    status: undefined,
    before: undefined,
    limit: PAGE + 1,
    now: NOW,
    ...params,
  })
  return rows
}

const figures: Array<[string, () => Promise<unknown>, number]> = [
  ['first page', list({}), PAGE + 1],
  ['status filter (cancelled)', list({ status: 'cancelled' }), PAGE + 1],
  ['title search matching 10 ("audit zqx")', list({ titleContains: 'audit zqx' }), 10],
  ['title search matching all ("check-in")', list({ titleContains: 'check-in' }), PAGE + 1],
  ['title search, 2 characters ("#9")', list({ titleContains: '#9' }), PAGE + 1],
  ['title search and status ("audit zqx", cancelled)', list({ titleContains: 'audit zqx', status: 'cancelled' }), 10],
  ['last page', list({ before: formId(PAGE + 1) }), PAGE],
  ['plain LIKE, no index, matching 10', () => plainLike('audit zqx'), 10],
]
console.log('| read | rows | median |\n| --- | ---: | ---: |')
for (const [name, run, expected] of figures) {
  const rows = (await run()) as unknown[]
  if (rows.length !== expected) throw new Error(`${name}: ${rows.length} rows, expected ${expected}`)
  console.log(`| ${name} | ${rows.length} | ${(await median(run)).toFixed(2)} ms |`)
}
await cleanUp()
