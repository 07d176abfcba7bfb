/**
 * What PostgreSQL commits per second of the writes one answer makes, with no
 * HTTP and no intake: on intake's own schema (its migrations, its indexes and
 * foreign keys), a plain Bun.SQL loop on CONNECTIONS connections, each
 * transaction moving PER_TRANSACTION active forms to `completed` and inserting
 * their responses, as intake's submission unit does (UPDATE ... WHERE status =
 * 'active', then INSERT INTO responses). PER_TRANSACTION 1 is a commit per
 * answer; more is what group commit makes of it.
 *
 *   bun bench/pg-answer-limit.ts <postgres-url of an empty database> [seconds=3] [connections=8] [per-transaction=1]
 *
 * Prints one JSON line: {"answers":N,"ms":M,"answersPerSecond":R,"connections":C,"perTransaction":P}.
 * The forms it answers are seeded first (one statement, not timed); the
 * database is left with intake's schema and its rows (bench/run.ts drops it).
 */
import { SQL } from 'bun'
import { monotonicFactory } from 'ulidx'
import { applyMigrations } from '../src/db/postgres/migrations.ts'
import { FORM_SIZED_BODY } from './form-sized-row.ts'
import { commitFor } from './lib.ts'

const [url, secondsArg = '3', connectionsArg = '8', perTransactionArg = '1'] = process.argv.slice(2)
const seconds = Number(secondsArg)
const connections = Number(connectionsArg)
const perTransaction = Number(perTransactionArg)
const whole = (n: number) => Number.isInteger(n) && n > 0
if (!url || !/^postgres(ql)?:\/\//.test(url) || !(seconds > 0) || !whole(connections) || !whole(perTransaction)) {
  console.error('usage: bun bench/pg-answer-limit.ts <postgres-url> [seconds] [connections] [per-transaction]')
  process.exit(2)
}

/** More forms than the fastest run answers: about 10,000 answers a second at most on this kind of machine. */
const FORMS = Math.ceil(seconds * 12_000)
const ANSWER = JSON.stringify({ name: 'Ada Lovelace', email: 'ada@example.com', guests: 2, menu: 'veg', agree: true })

const admin = new SQL({ url, max: 1 })
await applyMigrations(admin, 'the answer limit database')
const newId = monotonicFactory()
const now = Date.now()
const accountId = newId(now)
await admin`INSERT INTO accounts (id, name, created_at) VALUES (${accountId}, ${`answers-${accountId}`}, ${now})`
const formIds = Array.from({ length: FORMS }, () => newId(now))
await admin.unsafe(
  `INSERT INTO forms (id, account_id, title, description, fields, fields_count, callback_url, callback_metadata,
     webhook_secret, context, settings, status, expires_at, created_at, updated_at)
   SELECT id, $1, 'Book the team dinner', NULL, $2, 5, NULL, '{}', NULL, '{"thread":"T-1234"}', '{}', 'active', $3::int8 + 86400000, $3, $3
   FROM unnest($4::text[]) AS id`,
  [accountId, FORM_SIZED_BODY, now, formIds],
)
await admin.unsafe('ANALYZE forms')

const writers = Array.from({ length: connections }, () => new SQL({ url, max: 1 }))
for (const w of writers) await w.unsafe('SET synchronous_commit = on')
let next = 0
const answerSome = (w: SQL) => {
  const ids = formIds.slice(next, (next += perTransaction))
  return w.begin(async (tx) => {
    for (const formId of ids) {
      const at = Date.now()
      const moved = await tx.unsafe(
        `UPDATE forms SET status = 'completed', updated_at = $2 WHERE id = $1 AND status = 'active' AND (expires_at IS NULL OR expires_at > $2)`,
        [formId, at],
      )
      if (moved.count !== 1) throw new Error(`form ${formId} was not active`)
      await tx.unsafe(
        'INSERT INTO responses (id, form_id, data, ip, user_agent, submitted_at) VALUES ($1, $2, $3, $4, $5, $6)',
        [newId(at), formId, ANSWER, '127.0.0.1', 'bench', at],
      )
    }
    return ids.length
  })
}

// Warm: every connection open, the statements prepared.
await Promise.all(writers.map(answerSome))

const walAt = async () => ((await admin`SELECT pg_current_wal_lsn()::text AS lsn`) as { lsn: string }[])[0]!.lsn
const walBefore = await walAt()
const { units: answers, ms } = await commitFor(writers, seconds, (w) => {
  if (next + perTransaction > FORMS) throw new Error(`all ${FORMS} forms answered before the time was up`)
  return answerSome(w)
})
const [{ bytes }] = (await admin`SELECT pg_wal_lsn_diff(${await walAt()}, ${walBefore})::int8 AS bytes`) as [
  { bytes: string },
]
await Promise.all(writers.map((w) => w.close()))
await admin.close()
console.log(
  JSON.stringify({
    answers,
    ms,
    answersPerSecond: (answers * 1000) / ms,
    walBytesPerAnswer: Number(bytes) / answers,
    connections,
    perTransaction,
  }),
)
