import type { Database } from '../../db/index.ts'

export type NewDelivery = {
  id: string
  form_id: string
  response_id: string
  event: string
  url: string
  payload: string
  created_at: number
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed'

export interface DeliveryRow {
  id: string
  form_id: string
  event: string
  status: DeliveryStatus
  attempts: number
  last_status_code: number | null
  last_error: string | null
  next_attempt_at: number | null
  delivered_at: number | null
  created_at: number
}

/** A delivery taken for an attempt, with what sending needs. */
export interface ClaimedDelivery {
  id: string
  url: string
  payload: string
  secret: string
  /** This attempt's number within its round (1 for the first). */
  round_attempts: number
  /** Identifies this claim: recording the outcome only counts while it holds. */
  lease_until: number
}

export interface AttemptRecord {
  id: string
  lease: number
  /** The attempt's number within its round, as claimed. */
  roundAttempt: number
  now: number
  delivered: boolean
  statusCode: number | null
  error: string | null
  /** Attempts a round may make (1 + SERVICE_WEBHOOK_MAX_RETRIES). */
  attemptsPerRound: number
}

/** Delay before retry n of a round: 5^(n-1) seconds (1, 5, 25, ...). */
export const retryDelayMs = (retry: number) => 5 ** (retry - 1) * 1000

/** The SQL of the webhook outbox: the source of truth for every delivery. Writes run as units of work (db/writer.ts). */
export function createDeliveryStore(db: Database) {
  const insert = db.query<never, NewDelivery>(
    `INSERT INTO deliveries (id, form_id, response_id, event, url, payload, status, next_attempt_at, created_at)
     VALUES ($id, $form_id, $response_id, $event, $url, $payload, 'pending', $created_at, $created_at)`,
  )
  const due = db.query<{ id: string; url: string }, { now: number; limit: number }>(
    `SELECT id, url FROM deliveries
      WHERE status = 'pending' AND next_attempt_at <= $now AND (lease_until IS NULL OR lease_until <= $now)
      ORDER BY next_attempt_at LIMIT $limit`,
  )
  // An attempt counts from the moment it is claimed: one cut off by a crash was made too.
  const lease = db.query<ClaimedDelivery, { id: string; lease_until: number }>(
    `UPDATE deliveries SET lease_until = $lease_until, attempts = attempts + 1, round_attempts = round_attempts + 1
      WHERE id = $id
     RETURNING id, url, payload, round_attempts, lease_until,
       (SELECT webhook_secret FROM forms WHERE forms.id = deliveries.form_id) AS secret`,
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
  const nextDue = db.query<{ at: number | null }, []>(
    `SELECT min(max(next_attempt_at, coalesce(lease_until, 0))) AS at FROM deliveries WHERE status = 'pending'`,
  )
  const forForm = db.query<DeliveryRow, [string]>(
    `SELECT id, form_id, event, status, attempts, last_status_code, last_error, next_attempt_at, delivered_at, created_at
       FROM deliveries WHERE form_id = ? ORDER BY id`,
  )
  const redeliver = db.query(
    `UPDATE deliveries SET status = 'pending', round_attempts = 0, next_attempt_at = $now, delivered_at = NULL, lease_until = NULL
      WHERE id = $id AND form_id = $form_id AND status IN ('delivered', 'failed')`,
  )

  return {
    /** Queues a delivery, due at once. Called inside the transaction that records the response. */
    enqueue: (delivery: NewDelivery) => void insert.run(delivery),

    /**
     * Takes up to `limit` due deliveries for an attempt each, leasing them
     * until `leaseUntil`; `admit` may pass over some (by their URL) for now.
     * A process that dies mid-attempt leaves its lease to run out; then the
     * delivery is due again (at least once, never lost).
     */
    claimDue(now: number, limit: number, leaseUntil: number, admit: (url: string) => boolean): ClaimedDelivery[] {
      const claimed: ClaimedDelivery[] = []
      // Look a little further than `limit`, so deliveries passed over do not hide the rest.
      for (const { id, url } of due.all({ now, limit: limit * 4 })) {
        if (claimed.length === limit) break
        if (admit(url)) claimed.push(lease.get({ id, lease_until: leaseUntil })!)
      }
      return claimed
    },

    /** Records attempts' outcomes and schedules what comes next, each only while its claim still holds. */
    recordAttempts(attempts: AttemptRecord[]): void {
      for (const attempt of attempts) {
        record.run({
          id: attempt.id,
          lease: attempt.lease,
          now: attempt.now,
          delivered: attempt.delivered ? 1 : 0,
          status_code: attempt.statusCode,
          error: attempt.error,
          per_round: attempt.attemptsPerRound,
          // After attempt n of a round fails, retry n comes 5^(n-1) s later.
          retry_delay: retryDelayMs(attempt.roundAttempt),
        })
      }
    },

    /** When the earliest pending delivery falls due (or its lease runs out), if any is pending. */
    nextDueAt: () => nextDue.get()!.at,

    listForForm: (formId: string) => forForm.all(formId),

    /** Starts a new round for a delivered or failed delivery; false when there is none such. */
    redeliver: (formId: string, id: string, now: number) => redeliver.run({ id, form_id: formId, now }).changes === 1,
  }
}

export type DeliveryStore = ReturnType<typeof createDeliveryStore>
