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
  /** The callback URL: never shown, only used to cut it out of last_error. */
  url: string
  event: string
  status: DeliveryStatus
  attempts: number
  last_status_code: number | null
  last_error: string | null
  next_attempt_at: number | null
  delivered_at: number | null
  created_at: number
}

/** A due delivery offered for an attempt: whose it is and where it goes, to share the attempts fairly. */
export interface DueDelivery {
  id: string
  url: string
  account_id: string
}

/** Where a look through the due deliveries, oldest first, stopped. */
export interface DuePosition {
  dueAt: number
  rowid: number
}

/** A delivery taken for an attempt, with what sending needs. */
export interface ClaimedDelivery {
  id: string
  url: string
  account_id: string
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
  // The account is the form's: read here (deliveries have no account of their own) to share attempts per account.
  type DueRow = DueDelivery & { rowid: number; due_at: number; lease_until: number | null }
  const DUE_COLUMNS = `d.rowid AS rowid, d.next_attempt_at AS due_at, d.id, d.url, d.lease_until, f.account_id
      FROM deliveries d JOIN forms f ON f.id = d.form_id`
  const newestDue = db.query<DueRow, { now: number; look: number }>(
    `SELECT ${DUE_COLUMNS}
      WHERE d.status = 'pending' AND d.next_attempt_at <= $now
      ORDER BY d.next_attempt_at DESC, d.rowid DESC LIMIT $look`,
  )
  const dueAfter = db.query<DueRow, { now: number; look: number; due_at: number; rowid: number }>(
    `SELECT ${DUE_COLUMNS}
      WHERE d.status = 'pending' AND d.next_attempt_at <= $now AND (d.next_attempt_at, d.rowid) > ($due_at, $rowid)
      ORDER BY d.next_attempt_at, d.rowid LIMIT $look`,
  )
  // An attempt counts from the moment it is claimed: one cut off by a crash was made too.
  const lease = db.query<ClaimedDelivery, { id: string; lease_until: number }>(
    `UPDATE deliveries SET lease_until = $lease_until, attempts = attempts + 1, round_attempts = round_attempts + 1
      WHERE id = $id
     RETURNING id, url, payload, round_attempts, lease_until,
       (SELECT account_id FROM forms WHERE forms.id = deliveries.form_id) AS account_id,
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
  const earliestDue = db.query<{ at: number | null }, { after: number }>(
    `SELECT min(next_attempt_at) AS at FROM deliveries WHERE status = 'pending' AND next_attempt_at > $after`,
  )
  const forForm = db.query<DeliveryRow, [string]>(
    `SELECT id, form_id, url, event, status, attempts, last_status_code, last_error, next_attempt_at, delivered_at, created_at
       FROM deliveries WHERE form_id = ? ORDER BY id`,
  )
  const redeliver = db.query(
    `UPDATE deliveries SET status = 'pending', round_attempts = 0, next_attempt_at = $now, delivered_at = NULL, lease_until = NULL
      WHERE id = $id AND form_id = $form_id AND status IN ('delivered', 'failed')`,
  )

  /** Leases the rows `admit` takes, skipping any another attempt holds: those refused never stop the look. */
  function claimAdmitted(rows: DueRow[], now: number, leaseUntil: number, admit: (delivery: DueDelivery) => boolean) {
    const claimed: ClaimedDelivery[] = []
    for (const row of rows) {
      if (row.lease_until !== null && row.lease_until > now) continue
      if (admit(row)) claimed.push(lease.get({ id: row.id, lease_until: leaseUntil })!)
    }
    return claimed
  }

  return {
    /** Queues a delivery, due at once. Called inside the transaction that records the response. */
    enqueue: (delivery: NewDelivery) => void insert.run(delivery),

    /**
     * Offers the `look` due deliveries that fell due last (newest first) to
     * `admit`, and leases each it takes until `leaseUntil`. This is where a
     * fresh answer's first attempt is found at once, however many older
     * deliveries wait. One that is passed over waits for the next look.
     */
    claimNewestDue(now: number, look: number, leaseUntil: number, admit: (delivery: DueDelivery) => boolean): ClaimedDelivery[] {
      return claimAdmitted(newestDue.all({ now, look }), now, leaseUntil, admit)
    },

    /**
     * Offers the next `look` due deliveries after `from` (oldest first;
     * null: from the oldest) to `admit`, and leases each it takes until
     * `leaseUntil`. Returns where the look stopped, or null when it reached
     * the end: looking through every due delivery in such steps costs a
     * bounded time each, however long the backlog.
     * A process that dies mid-attempt leaves its lease to run out; then the
     * delivery is due again (at least once, never lost).
     */
    claimDueAfter(
      now: number,
      from: DuePosition | null,
      look: number,
      leaseUntil: number,
      admit: (delivery: DueDelivery) => boolean,
    ): { claims: ClaimedDelivery[]; next: DuePosition | null } {
      const rows = dueAfter.all({ now, look, due_at: from?.dueAt ?? -Infinity, rowid: from?.rowid ?? -Infinity })
      const last = rows.at(-1)
      return {
        claims: claimAdmitted(rows, now, leaseUntil, admit),
        next: rows.length === look && last ? { dueAt: last.due_at, rowid: last.rowid } : null,
      }
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

    /** When the earliest pending delivery due after `after` falls due, if there is one. */
    earliestDueAfter: (after: number) => earliestDue.get({ after })!.at,

    listForForm: (formId: string) => forForm.all(formId),

    /** Starts a new round for a delivered or failed delivery; false when there is none such. */
    redeliver: (formId: string, id: string, now: number) => redeliver.run({ id, form_id: formId, now }).changes === 1,
  }
}

export type DeliveryStore = ReturnType<typeof createDeliveryStore>
