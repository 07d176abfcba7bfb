import type { Database } from 'bun:sqlite'
import type { EventType } from '../names.ts'
import type { EventSummary, EventWrites } from './index.ts'

interface SummaryRow {
  number: number
  form_id: string
  type: EventType
  occurred_at: number
  payload_bytes: number
}

const toSummary = (row: SummaryRow): EventSummary => ({
  number: row.number,
  formId: row.form_id,
  type: row.type,
  occurredAt: row.occurred_at,
  payloadBytes: row.payload_bytes,
})

/** The events module's store on SQLite (one per connection: the reads' and the writer's). */
export function createSqliteEventStore(db: Database): EventWrites {
  // The one writer runs one transaction at a time: numbers are taken, and commit, in order.
  const nextNumber = db.query<{ last: number }, [string]>(
    'INSERT INTO event_heads (account_id, last) VALUES (?, 1) ON CONFLICT (account_id) DO UPDATE SET last = last + 1 RETURNING last',
  )
  // The position is the order before numbers (store/index.ts), which an older intake reads by.
  const insert = db.query(
    `INSERT INTO events (account_id, number, position, form_id, type, occurred_at, created_at, payload_bytes, payload)
     VALUES ($account_id, $number, coalesce((SELECT floor FROM event_positions), 0), $form_id, $type, $occurred_at, $created_at, $payload_bytes, $payload)`,
  )
  const after = db.query<SummaryRow, { account_id: string; number: number; limit: number }>(
    `SELECT number, form_id, type, occurred_at, payload_bytes FROM events
      WHERE account_id = $account_id AND number > $number ORDER BY number LIMIT $limit`,
  )
  const ofForm = db.query<SummaryRow, { account_id: string; form_id: string; limit: number }>(
    `SELECT number, form_id, type, occurred_at, payload_bytes FROM events
      WHERE form_id = $form_id AND account_id = $account_id ORDER BY number LIMIT $limit`,
  )
  const payloads = db.query<
    { number: number; payload: Uint8Array },
    { account_id: string; first: number; last: number }
  >(
    `SELECT number, CAST(payload AS BLOB) AS payload FROM events
      WHERE account_id = $account_id AND number BETWEEN $first AND $last ORDER BY number`,
  )
  const head = db.query<{ last: number }, [string]>('SELECT last FROM event_heads WHERE account_id = ?')
  // See the PostgreSQL store: the first after the cursor in the order of that time, else the head.
  const afterLegacy = db.query<{ number: number }, { account_id: string; position: number; seq: number }>(
    `SELECT coalesce(
        (SELECT min(number) - 1 FROM events WHERE account_id = $account_id AND (position, seq) > ($position, $seq)),
        (SELECT last FROM event_heads WHERE account_id = $account_id),
        0) AS number`,
  )
  const forgetForm = db.query<never, [string]>('DELETE FROM events WHERE form_id = ?')
  const forgetBefore = db.query<never, { before: number; limit: number }>(
    'DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE created_at < $before ORDER BY created_at LIMIT $limit)',
  )
  return {
    async append(event) {
      insert.run({
        account_id: event.accountId,
        number: nextNumber.get(event.accountId)!.last,
        form_id: event.formId,
        type: event.type,
        occurred_at: event.occurredAt,
        created_at: event.createdAt,
        payload_bytes: Buffer.byteLength(event.payload),
        payload: event.payload,
      })
    },
    after: async (accountId, number, limit) => after.all({ account_id: accountId, number, limit }).map(toSummary),
    ofForm: async (accountId, formId, limit) =>
      ofForm.all({ account_id: accountId, form_id: formId, limit }).map(toSummary),
    payloads: async (accountId, first, last) => payloads.all({ account_id: accountId, first, last }),
    head: async (accountId) => head.get(accountId)?.last ?? 0,
    afterLegacy: async (accountId, cursor) =>
      afterLegacy.get({ account_id: accountId, position: cursor.position, seq: cursor.seq })!.number,
    forgetForm: async (formId) => void forgetForm.run(formId),
    forgetBefore: async (before, limit) => forgetBefore.run({ before, limit }).changes,
  }
}
