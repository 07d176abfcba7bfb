import type { Query } from '../../../db/postgres/driver.ts'
import { optionalTimeOf } from '../../../db/rows.ts'
import type { FormEvent } from '../../events/names.ts'
import type { DeliveryRecord, DeliveryWrites, DueDelivery, LeasedDelivery } from './index.ts'
import {
  DELIVERY_COLUMNS,
  DELIVERY_COLUMNS_OF_D,
  type DeliveryRow,
  FAILING,
  toDeliveryRecord,
  toFailingDelivery,
} from './rows.ts'

/** Times are int8, which Bun's client returns as strings (Number() them here). */
interface DueRow {
  due_at: string
  id: string
  form_id: string
  url: string
}

/** A time as int8 can hold it: callers look from -Infinity ("from the start"), which is no bigint. */
const bounded = (ms: number) => Math.min(Number.MAX_SAFE_INTEGER, Math.max(Number.MIN_SAFE_INTEGER, ms))

// On PostgreSQL a position in the due order is (next_attempt_at, id): the id is the tie-break.
const toDue = (row: DueRow): DueDelivery => ({
  id: row.id,
  formId: row.form_id,
  url: row.url,
  position: { dueAt: Number(row.due_at), after: row.id },
})

const INSERT = `INSERT INTO deliveries (id, form_id, response_id, event, url, payload, status, next_attempt_at, created_at)
  VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $7)`
// Leases are measured on the database server's clock, which every instance shares
// (CONTRACT 10): an instance whose clock runs ahead does not take others' claims early.
const DATABASE_NOW_MS = '(extract(epoch from statement_timestamp()) * 1000)::bigint'
const UNLEASED = `(lease_until IS NULL OR lease_until <= ${DATABASE_NOW_MS})`
// Due and held by no attempt: a look, which locks nothing (a scan of a backlog
// reads a thousand rows a step; locking them all would cost more than the read).
const DUE = `SELECT next_attempt_at AS due_at, id, form_id, url FROM deliveries
  WHERE status = 'pending' AND next_attempt_at <= $1 AND ${UNLEASED}`
const DUE_NEWEST = `${DUE} ORDER BY next_attempt_at DESC, id DESC LIMIT $2`
const DUE_FROM_START = `${DUE} ORDER BY next_attempt_at, id LIMIT $2`
const DUE_AFTER = `${DUE} AND (next_attempt_at, id) > ($3::bigint, $4::text) ORDER BY next_attempt_at, id LIMIT $2`
// The claim: of the deliveries chosen, those still due and held by no attempt,
// skipping rows another transaction holds (another instance claiming them this
// moment), never waiting for them. A row claimed and committed by another is
// no longer free when this statement looks: two claims never take the same one.
const LEASE = `UPDATE deliveries SET lease_until = ${DATABASE_NOW_MS} + $2, attempts = attempts + 1, round_attempts = round_attempts + 1
  WHERE id IN (SELECT id FROM deliveries
                WHERE id = ANY($1::text[]) AND status = 'pending' AND next_attempt_at <= $3 AND ${UNLEASED}
                FOR UPDATE SKIP LOCKED)
  RETURNING id, form_id, event, url, payload, round_attempts, lease_until,
       CASE WHEN response_id IS NULL THEN NULL ELSE created_at END AS answered_at`
// All the outcomes in one statement; each counts only while its claim holds.
const RECORD = `UPDATE deliveries d SET
    last_status_code = a.status_code,
    last_error = a.error,
    lease_until = NULL,
    status = CASE WHEN a.delivered THEN 'delivered' WHEN d.round_attempts >= a.per_round THEN 'failed' ELSE 'pending' END,
    delivered_at = CASE WHEN a.delivered THEN a.now ELSE NULL END,
    next_attempt_at = CASE WHEN a.delivered OR d.round_attempts >= a.per_round THEN NULL ELSE a.now + a.retry_delay END
  FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::boolean[], $5::integer[], $6::text[], $7::integer[], $8::bigint[])
    AS a(id, lease, now, delivered, status_code, error, per_round, retry_delay)
  WHERE d.id = a.id AND d.lease_until = a.lease`
const COUNT_PENDING = `SELECT count(*) AS n FROM deliveries WHERE status = 'pending'`
const EARLIEST_DUE = `SELECT min(next_attempt_at) AS at FROM deliveries WHERE status = 'pending' AND next_attempt_at > $1`
const FOR_FORM = `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE form_id = $1 ORDER BY id`
const FAILING_OF_ACCOUNT = `FROM deliveries d JOIN forms f ON f.id = d.form_id WHERE ${FAILING} AND f.account_id = $1`
const COUNT_FAILING = `SELECT count(*) AS failing ${FAILING_OF_ACCOUNT}`
const LIST_FAILING = `SELECT ${DELIVERY_COLUMNS_OF_D}, f.title AS form_title ${FAILING_OF_ACCOUNT} ORDER BY d.id DESC LIMIT $2`
const REDELIVER = `UPDATE deliveries SET status = 'pending', round_attempts = 0, next_attempt_at = $3, delivered_at = NULL, lease_until = NULL
  WHERE id = $1 AND form_id = $2 AND status IN ('delivered', 'failed')`
const FORGET_SETTLED = `DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries
  WHERE event = $1 AND created_at < $2 AND status <> 'pending' LIMIT $3)`

/** The webhooks module's store on PostgreSQL: one for the pool's reads, one per transaction. */
export function createPostgresDeliveryStore(query: Query): DeliveryWrites {
  return {
    enqueue: async (delivery) =>
      void (await query(INSERT, [
        delivery.id,
        delivery.formId,
        delivery.responseId,
        delivery.event,
        delivery.url,
        delivery.payload,
        delivery.createdAt,
      ])),
    dueNewest: async (now, look) => (await query<DueRow>(DUE_NEWEST, [now, look])).map(toDue),
    async dueAfter(now, from, look) {
      const rows =
        from === null
          ? await query<DueRow>(DUE_FROM_START, [now, look])
          : await query<DueRow>(DUE_AFTER, [now, look, bounded(from.dueAt), String(from.after)])
      return rows.map(toDue)
    },
    async lease(ids, leaseMs, now) {
      if (ids.length === 0) return []
      const rows = await query<{
        id: string
        form_id: string
        event: FormEvent
        url: string
        payload: string
        round_attempts: number
        lease_until: string
        answered_at: string | null
      }>(LEASE, [[...new Set(ids)], leaseMs, now])
      // In the order asked for, as one statement returns rows in no order of its own.
      const byId = new Map(rows.map((row) => [row.id, row]))
      const leased: LeasedDelivery[] = []
      for (const id of ids) {
        const row = byId.get(id)
        if (!row) continue
        byId.delete(id)
        leased.push({
          id: row.id,
          formId: row.form_id,
          event: row.event,
          url: row.url,
          payload: row.payload,
          roundAttempts: row.round_attempts,
          leaseUntil: Number(row.lease_until),
          answeredAt: optionalTimeOf(row.answered_at),
        })
      }
      return leased
    },
    async recordAttempts(attempts) {
      if (attempts.length === 0) return
      await query(RECORD, [
        attempts.map((a) => a.id),
        attempts.map((a) => a.lease),
        attempts.map((a) => a.now),
        attempts.map((a) => a.delivered),
        attempts.map((a) => a.statusCode),
        attempts.map((a) => a.error),
        attempts.map((a) => a.attemptsPerRound),
        attempts.map((a) => a.retryDelayMs),
      ])
    },
    earliestDueAfter: async (after) =>
      optionalTimeOf((await query<{ at: string | null }>(EARLIEST_DUE, [bounded(after)]))[0]!.at),
    countPending: async () => Number((await query<{ n: string }>(COUNT_PENDING))[0]!.n),
    countFailing: async (accountId) =>
      Number((await query<{ failing: string }>(COUNT_FAILING, [accountId]))[0]!.failing),
    listFailing: async (accountId, limit) =>
      (await query<DeliveryRow & { form_title: string }>(LIST_FAILING, [accountId, limit])).map(toFailingDelivery),
    listForForm: async (formId): Promise<DeliveryRecord[]> =>
      (await query<DeliveryRow>(FOR_FORM, [formId])).map(toDeliveryRecord),
    redeliver: async (formId, id, now) => (await query(REDELIVER, [id, formId, now])).count === 1,
    forgetSettledBefore: async (event, before, limit) => (await query(FORGET_SETTLED, [event, before, limit])).count,
  }
}
