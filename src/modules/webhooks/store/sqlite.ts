import type { Database } from 'bun:sqlite'
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

interface DueRow {
  rowid: number
  due_at: number
  id: string
  form_id: string
  url: string
}

const toDue = (row: DueRow): DueDelivery => ({
  id: row.id,
  formId: row.form_id,
  url: row.url,
  position: { dueAt: row.due_at, after: row.rowid },
})

/** The webhooks module's store on SQLite (one per connection: the reads' and the writer's). */
export function createSqliteDeliveryStore(db: Database): DeliveryWrites {
  const insert = db.query(
    `INSERT INTO deliveries (id, form_id, response_id, event, url, payload, status, next_attempt_at, created_at)
     VALUES ($id, $form_id, $response_id, $event, $url, $payload, 'pending', $created_at, $created_at)`,
  )
  const DUE = `SELECT rowid, next_attempt_at AS due_at, id, form_id, url FROM deliveries
      WHERE status = 'pending' AND next_attempt_at <= $now AND (lease_until IS NULL OR lease_until <= $now)`
  const newestDue = db.query<DueRow, { now: number; look: number }>(
    `${DUE} ORDER BY next_attempt_at DESC, rowid DESC LIMIT $look`,
  )
  const dueAfter = db.query<DueRow, { now: number; look: number; due_at: number; rowid: number }>(
    `${DUE} AND (next_attempt_at, rowid) > ($due_at, $rowid) ORDER BY next_attempt_at, rowid LIMIT $look`,
  )
  const lease = db.query<
    {
      id: string
      form_id: string
      event: FormEvent
      url: string
      payload: string
      round_attempts: number
      lease_until: number
      answered_at: number | null
    },
    { id: string; lease_until: number; now: number }
  >(
    `UPDATE deliveries SET lease_until = $lease_until, attempts = attempts + 1, round_attempts = round_attempts + 1
      WHERE id = $id AND status = 'pending' AND next_attempt_at <= $now AND (lease_until IS NULL OR lease_until <= $now)
     RETURNING id, form_id, event, url, payload, round_attempts, lease_until,
       CASE WHEN response_id IS NULL THEN NULL ELSE created_at END AS answered_at`,
  )
  const record = db.query(
    `UPDATE deliveries SET
       last_status_code = $status_code,
       last_error = $error,
       lease_until = NULL,
       status = CASE WHEN $delivered THEN 'delivered' WHEN round_attempts >= $per_round THEN 'failed' ELSE 'pending' END,
       delivered_at = CASE WHEN $delivered THEN $now ELSE NULL END,
       next_attempt_at = CASE WHEN $delivered OR round_attempts >= $per_round THEN NULL ELSE $now + $retry_delay END
     WHERE id = $id AND lease_until = $lease`,
  )
  const earliestDue = db.query<{ at: number | null }, { after: number }>(
    `SELECT min(next_attempt_at) AS at FROM deliveries WHERE status = 'pending' AND next_attempt_at > $after`,
  )
  const pending = db.query<{ n: number }, []>(
    `SELECT count(*) AS n FROM deliveries INDEXED BY deliveries_due WHERE status = 'pending'`,
  )
  const forForm = db.query<DeliveryRow, [string]>(
    `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE form_id = ? ORDER BY id`,
  )
  // CROSS JOIN: the failing deliveries are the outer loop, never the account's forms.
  const failingOfAccount = `FROM deliveries d INDEXED BY deliveries_failing CROSS JOIN forms f ON f.id = d.form_id
      WHERE ${FAILING} AND f.account_id = $account_id`
  const countFailing = db.query<{ failing: number }, { account_id: string }>(
    `SELECT count(*) AS failing ${failingOfAccount}`,
  )
  const listFailing = db.query<DeliveryRow & { form_title: string }, { account_id: string; limit: number }>(
    `SELECT ${DELIVERY_COLUMNS_OF_D}, f.title AS form_title ${failingOfAccount} ORDER BY d.id DESC LIMIT $limit`,
  )
  const redeliver = db.query(
    `UPDATE deliveries SET status = 'pending', round_attempts = 0, next_attempt_at = $now, delivered_at = NULL, lease_until = NULL
      WHERE id = $id AND form_id = $form_id AND status IN ('delivered', 'failed')`,
  )
  const forgetSettled = db.query<never, { event: string; before: number; limit: number }>(
    `DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries INDEXED BY deliveries_event_created
      WHERE event = $event AND created_at < $before AND status <> 'pending' LIMIT $limit)`,
  )

  return {
    enqueue: async (delivery) =>
      void insert.run({
        id: delivery.id,
        form_id: delivery.formId,
        response_id: delivery.responseId,
        event: delivery.event,
        url: delivery.url,
        payload: delivery.payload,
        created_at: delivery.createdAt,
      }),
    dueNewest: async (now, look) => newestDue.all({ now, look }).map(toDue),
    dueAfter: async (now, from, look) =>
      dueAfter
        .all({ now, look, due_at: from?.dueAt ?? -Infinity, rowid: (from?.after as number | undefined) ?? -Infinity })
        .map(toDue),
    async lease(ids, leaseMs, now) {
      // SQLite's clock is this machine's: the one `now` is read from.
      const leaseUntil = now + leaseMs
      const leased: LeasedDelivery[] = []
      for (const id of ids) {
        const row = lease.get({ id, lease_until: leaseUntil, now })
        if (row) {
          leased.push({
            id: row.id,
            formId: row.form_id,
            event: row.event,
            url: row.url,
            payload: row.payload,
            roundAttempts: row.round_attempts,
            leaseUntil: row.lease_until,
            answeredAt: row.answered_at,
          })
        }
      }
      return leased
    },
    async recordAttempts(attempts) {
      for (const attempt of attempts) {
        record.run({
          id: attempt.id,
          lease: attempt.lease,
          now: attempt.now,
          delivered: attempt.delivered ? 1 : 0,
          status_code: attempt.statusCode,
          error: attempt.error,
          per_round: attempt.attemptsPerRound,
          retry_delay: attempt.retryDelayMs,
        })
      }
    },
    earliestDueAfter: async (after) => earliestDue.get({ after })!.at,
    countPending: async () => pending.get()!.n,
    listForForm: async (formId): Promise<DeliveryRecord[]> => forForm.all(formId).map(toDeliveryRecord),
    countFailing: async (accountId) => countFailing.get({ account_id: accountId })!.failing,
    listFailing: async (accountId, limit) => listFailing.all({ account_id: accountId, limit }).map(toFailingDelivery),
    redeliver: async (formId, id, now) => redeliver.run({ id, form_id: formId, now }).changes === 1,
    forgetSettledBefore: async (event, before, limit) => forgetSettled.run({ event, before, limit }).changes,
  }
}
