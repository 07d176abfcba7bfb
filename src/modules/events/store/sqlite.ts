import type { Database } from 'bun:sqlite'
import type { EventType, EventWrites, StoredEvent } from './index.ts'

interface EventRow {
  position: number
  seq: number
  form_id: string
  type: EventType
  occurred_at: number
  payload: string
}

const toEvent = (row: EventRow): StoredEvent => ({
  position: row.position,
  seq: row.seq,
  formId: row.form_id,
  type: row.type,
  occurredAt: row.occurred_at,
  payload: row.payload,
})

/** The events module's store on SQLite (one per connection: the reads' and the writer's). */
export function createSqliteEventStore(db: Database): EventWrites {
  const insert = db.query(
    `INSERT INTO events (position, account_id, form_id, type, occurred_at, payload, created_at)
     VALUES (coalesce((SELECT floor FROM event_positions), 0), $account_id, $form_id, $type, $occurred_at, $payload, $created_at)`,
  )
  const after = db.query<EventRow, { account_id: string; position: number; seq: number; limit: number }>(
    `SELECT position, seq, form_id, type, occurred_at, payload FROM events
      WHERE account_id = $account_id AND position >= $position AND (position > $position OR seq > $seq)
      ORDER BY position, seq LIMIT $limit`,
  )
  const head = db.query<{ position: number; seq: number }, [string]>(
    'SELECT position, seq FROM events WHERE account_id = ? ORDER BY position DESC, seq DESC LIMIT 1',
  )
  const forgetForm = db.query<never, [string]>('DELETE FROM events WHERE form_id = ?')
  const forgetBefore = db.query<never, { before: number; limit: number }>(
    'DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE created_at < $before ORDER BY created_at LIMIT $limit)',
  )
  return {
    append: async (event) =>
      void insert.run({
        account_id: event.accountId,
        form_id: event.formId,
        type: event.type,
        occurred_at: event.occurredAt,
        payload: event.payload,
        created_at: event.createdAt,
      }),
    // The one writer commits in the order it writes: every committed event is readable in order.
    after: async (accountId, from, limit) => ({
      events: after.all({ account_id: accountId, position: from.position, seq: from.seq, limit }).map(toEvent),
      unsettled: false,
    }),
    head: async (accountId) => head.get(accountId) ?? { position: 0, seq: 0 },
    forgetForm: async (formId) => void forgetForm.run(formId),
    forgetBefore: async (before, limit) => forgetBefore.run({ before, limit }).changes,
  }
}
