import { insertedTogether } from '../../../db/postgres/coalesce.ts'
import type { Query, Scope } from '../../../db/postgres/store.ts'
import type { EventType, EventWrites, StoredEvent } from './index.ts'

/** bigint columns come back as strings. */
interface EventRow {
  position: string
  seq: string
  form_id: string
  type: EventType
  occurred_at: string
  payload: string
}

const toEvent = (row: EventRow): StoredEvent => ({
  position: Number(row.position),
  seq: Number(row.seq),
  formId: row.form_id,
  type: row.type,
  occurredAt: Number(row.occurred_at),
  payload: row.payload,
})

// An event's position: its transaction's id, after every event copied in (see store/index.ts).
const POSITION = `pg_current_xact_id()::text::bigint + coalesce((SELECT floor FROM event_positions), 0)`
const INSERT = `INSERT INTO events (position, account_id, form_id, type, occurred_at, payload, created_at)
  VALUES (${POSITION}, $1, $2, $3, $4, $5, $6)`
// Events written together in one transaction (see coalesce.ts), in the order they were made.
const INSERT_MANY = `INSERT INTO events (position, account_id, form_id, type, occurred_at, payload, created_at)
  SELECT ${POSITION}, account_id, form_id, type, occurred_at, payload, created_at
  FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[], $5::text[], $6::float8[]) WITH ORDINALITY
    AS made(account_id, form_id, type, occurred_at, payload, created_at, n)
  ORDER BY n`
// Only transactions older than every one still running have all committed (or
// rolled back) what they will: no event can commit before these any more.
const SETTLED = 'tx < pg_snapshot_xmin(pg_current_snapshot())'
const AFTER_POSITION = 'account_id = $1 AND (position, seq) > ($2::bigint, $3::bigint)'
const AFTER = `SELECT position, seq, form_id, type, occurred_at, payload FROM events
  WHERE ${AFTER_POSITION} AND ${SETTLED} ORDER BY position, seq LIMIT $4`
const UNSETTLED = `SELECT EXISTS (SELECT 1 FROM events WHERE ${AFTER_POSITION} AND NOT ${SETTLED}) AS unsettled`
const HEAD = `SELECT position, seq FROM events WHERE account_id = $1 AND ${SETTLED} ORDER BY position DESC, seq DESC LIMIT 1`
const FORGET_FORM = 'DELETE FROM events WHERE form_id = $1'
const FORGET_BEFORE = 'DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE created_at < $1 ORDER BY created_at LIMIT $2)'

/** The events module's store on PostgreSQL: one for the pool's reads, one per transaction. */
export function createPostgresEventStore(query: Query, scope: Scope): EventWrites {
  const insertRow = insertedTogether(query, scope, INSERT, INSERT_MANY)
  return {
    append: (event) => insertRow([event.accountId, event.formId, event.type, event.occurredAt, event.payload, event.createdAt]),
    async after(accountId, from, limit) {
      const events = (await query<EventRow>(AFTER, [accountId, from.position, from.seq, limit])).map(toEvent)
      // Worth asking only when nothing is readable: a reader with events answers with them.
      const unsettled = events.length === 0 && (await query<{ unsettled: boolean }>(UNSETTLED, [accountId, from.position, from.seq]))[0]!.unsettled
      return { events, unsettled }
    },
    async head(accountId) {
      const [row] = await query<{ position: string; seq: string }>(HEAD, [accountId])
      return row ? { position: Number(row.position), seq: Number(row.seq) } : { position: 0, seq: 0 }
    },
    forgetForm: async (formId) => void (await query(FORGET_FORM, [formId])),
    forgetBefore: async (before, limit) => (await query(FORGET_BEFORE, [before, limit])).count,
  }
}
