import type { FormEvent } from '../../events/names.ts'

/**
 * What the webhooks module keeps (the table `deliveries`: the outbox, the
 * source of truth for every delivery), and the one interface every database
 * gives it (sqlite.ts, postgres.ts beside this file).
 */

interface NewDelivery {
  /** Stable across retries: X-Service-Delivery and webhook-id. */
  id: string
  formId: string
  /** The answer a form.completed tells of; null for other endings. */
  responseId: string | null
  event: FormEvent
  url: string
  /** The exact body sent on every attempt. */
  payload: string
  createdAt: number
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed'

export interface DeliveryRecord {
  id: string
  formId: string
  /** The callback URL: never shown, only used to cut it out of lastError. */
  url: string
  event: FormEvent
  status: DeliveryStatus
  attempts: number
  lastStatusCode: number | null
  lastError: string | null
  nextAttemptAt: number | null
  deliveredAt: number | null
  createdAt: number
}

/** Where a look through the due deliveries, oldest first, stopped: opaque beyond its due time. */
export interface DuePosition {
  dueAt: number
  after: string | number
}

/** A due delivery no attempt holds, offered for one. */
export interface DueDelivery {
  id: string
  formId: string
  url: string
  position: DuePosition
}

/** A delivery taken for an attempt, with what sending needs but the secret (the form's). */
export interface LeasedDelivery {
  id: string
  formId: string
  event: FormEvent
  url: string
  payload: string
  /** This attempt's number within its round (1 for the first). */
  roundAttempts: number
  /** Identifies this claim: recording the outcome only counts while it holds. */
  leaseUntil: number
  /** When the answer it tells of was recorded (it was queued with it); null for other endings. */
  answeredAt: number | null
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
  /** When this attempt fails and the round goes on: how long until the next (SERVICE_WEBHOOK_RETRY_SCHEDULE). */
  retryDelayMs: number
}

/** A delivery whose last attempt failed, with the title of its form. */
export interface FailingDelivery extends DeliveryRecord {
  formTitle: string
}

export interface DeliveryReads {
  listForForm(formId: string): Promise<DeliveryRecord[]>
  /**
   * How many of the account's deliveries are failing now: given up (`failed`),
   * or pending again after an attempt of this round failed.
   */
  countFailing(accountId: string): Promise<number>
  /** The account's failing deliveries (as countFailing), newest first, at most `limit`. */
  listFailing(accountId: string, limit: number): Promise<FailingDelivery[]>
  /** When the earliest pending delivery due after `after` falls due, if there is one. */
  earliestDueAfter(after: number): Promise<number | null>
  /** How many deliveries wait for an attempt or a retry (the due index holds exactly those). */
  countPending(): Promise<number>
}

export interface DeliveryWrites extends DeliveryReads {
  /** Queues a delivery, due at once (in the transaction that records what it tells of). */
  enqueue(delivery: NewDelivery): Promise<void>
  /**
   * The `look` due deliveries no attempt holds that fell due last, newest
   * first: where a fresh answer's first attempt is found at once. A look:
   * `lease` decides what is taken.
   */
  dueNewest(now: number, look: number): Promise<DueDelivery[]>
  /** The next `look` due deliveries no attempt holds after `from` (null: from the oldest), oldest first. */
  dueAfter(now: number, from: DuePosition | null, look: number): Promise<DueDelivery[]>
  /**
   * Takes those of `ids` still due at `now` and held by no attempt, for
   * `leaseMs` on the database's clock (on PostgreSQL the server's, which every
   * instance shares whatever its own clock says; skipping rows another
   * transaction is taking: FOR UPDATE SKIP LOCKED). The attempt counts from
   * this moment (one cut off by a crash was made too). A process that dies
   * mid-attempt leaves its lease to run out; the delivery is then due again.
   */
  lease(ids: string[], leaseMs: number, now: number): Promise<LeasedDelivery[]>
  /** Records attempts' outcomes and schedules what comes next, each only while its claim still holds. */
  recordAttempts(attempts: AttemptRecord[]): Promise<void>
  /** Starts a new round for a delivered or failed delivery; false when there is none such. */
  redeliver(formId: string, id: string, now: number): Promise<boolean>
  /**
   * Removes up to `limit` settled deliveries of `event` made before `before`
   * (form.expired's, which carry the context the form lost); returns how many.
   */
  forgetSettledBefore(event: FormEvent, before: number, limit: number): Promise<number>
}
