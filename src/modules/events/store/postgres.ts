import type { Query } from '../../../db/postgres/driver.ts'
import type { EventType } from '../names.ts'
import type { EventSummary, EventWrites } from './index.ts'

/** bigint columns come back as strings. */
interface SummaryRow {
  number: string
  form_id: string
  type: EventType
  occurred_at: string
  payload_bytes: number
}

const toSummary = (row: SummaryRow): EventSummary => ({
  number: Number(row.number),
  formId: row.form_id,
  type: row.type,
  occurredAt: Number(row.occurred_at),
  payloadBytes: row.payload_bytes,
})

// The number (and the payload's length) is the trigger's (migrations.ts), counted up on the account's row
// of event_heads. The position is the order before numbers, which an older intake still running reads by:
// the transaction's id, after every event copied in.
const POSITION = `pg_current_xact_id()::text::bigint + coalesce((SELECT floor FROM event_positions), 0)`
const INSERT = `INSERT INTO events (position, account_id, form_id, type, occurred_at, payload, created_at)
  VALUES (${POSITION}, $1, $2, $3, $4, $5, $6)`
const OF_FORM = `SELECT number, form_id, type, occurred_at, payload_bytes FROM events
  WHERE form_id = $2 AND account_id = $1 ORDER BY number LIMIT $3`
const AFTER = `SELECT number, form_id, type, occurred_at, payload_bytes FROM events
  WHERE account_id = $1 AND number > $2 ORDER BY number LIMIT $3`
const PAYLOADS = `SELECT number, convert_to(payload, 'UTF8') AS payload FROM events
  WHERE account_id = $1 AND number BETWEEN $2 AND $3 ORDER BY number`
const HEAD = 'SELECT last FROM event_heads WHERE account_id = $1'
// The first event after the cursor in the order before numbers may have committed after one behind the
// cursor took a smaller number (a rolling upgrade): the smallest number after the cursor misses neither.
// With none after it, the head; both in one statement, so one snapshot: an event committed between them
// would otherwise be passed over.
const AFTER_LEGACY = `SELECT coalesce(
    (SELECT min(number) - 1 FROM events WHERE account_id = $1 AND (position, seq) > ($2::bigint, $3::bigint)),
    (SELECT last FROM event_heads WHERE account_id = $1),
    0) AS number`
const FORGET_FORM = 'DELETE FROM events WHERE form_id = $1'
const FORGET_BEFORE =
  'DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE created_at < $1 ORDER BY created_at LIMIT $2)'

/** The events module's store on PostgreSQL: one for the pool's reads, one per transaction. */
export function createPostgresEventStore(query: Query): EventWrites {
  return {
    append: async (event) =>
      void (await query(INSERT, [
        event.accountId,
        event.formId,
        event.type,
        event.occurredAt,
        event.payload,
        event.createdAt,
      ])),
    ofForm: async (accountId, formId, limit) =>
      (await query<SummaryRow>(OF_FORM, [accountId, formId, limit])).map(toSummary),
    after: async (accountId, number, limit) =>
      (await query<SummaryRow>(AFTER, [accountId, number, limit])).map(toSummary),
    payloads: async (accountId, first, last) =>
      (await query<{ number: string; payload: Uint8Array }>(PAYLOADS, [accountId, first, last])).map((row) => ({
        number: Number(row.number),
        payload: row.payload,
      })),
    async head(accountId) {
      const [row] = await query<{ last: string }>(HEAD, [accountId])
      return row ? Number(row.last) : 0
    },
    afterLegacy: async (accountId, cursor) =>
      Number((await query<{ number: string }>(AFTER_LEGACY, [accountId, cursor.position, cursor.seq]))[0]!.number),
    forgetForm: async (formId) => void (await query(FORGET_FORM, [formId])),
    forgetBefore: async (before, limit) => (await query(FORGET_BEFORE, [before, limit])).count,
  }
}
