import { optionalTimeOf, type RowTime, timeOf } from '../../../db/rows.ts'
import type { FormEvent } from '../../events/names.ts'
import type { DeliveryRecord, DeliveryStatus, FailingDelivery } from './index.ts'

/** A delivery as both databases list it, times as integer milliseconds. */
export interface DeliveryRow {
  id: string
  form_id: string
  url: string
  event: FormEvent
  status: DeliveryStatus
  attempts: number
  last_status_code: number | null
  last_error: string | null
  next_attempt_at: RowTime | null
  delivered_at: RowTime | null
  created_at: RowTime
}

export const DELIVERY_COLUMNS =
  'id, form_id, url, event, status, attempts, last_status_code, last_error, next_attempt_at, delivered_at, created_at'

/**
 * A delivery failing now, as both databases find it: the partial index
 * deliveries_failing's condition, word for word (so the planner may use it),
 * less a first attempt still in flight (nothing recorded yet).
 */
export const FAILING = `(d.status = 'failed' OR (d.status = 'pending' AND d.round_attempts > 0))
  AND NOT (d.status = 'pending' AND d.last_status_code IS NULL AND d.last_error IS NULL)`

/** Every delivery column, of the deliveries named `d`. */
export const DELIVERY_COLUMNS_OF_D = DELIVERY_COLUMNS.split(', ')
  .map((column) => `d.${column}`)
  .join(', ')

export const toDeliveryRecord = (row: DeliveryRow): DeliveryRecord => ({
  id: row.id,
  formId: row.form_id,
  url: row.url,
  event: row.event,
  status: row.status,
  attempts: row.attempts,
  lastStatusCode: row.last_status_code,
  lastError: row.last_error,
  nextAttemptAt: optionalTimeOf(row.next_attempt_at),
  deliveredAt: optionalTimeOf(row.delivered_at),
  createdAt: timeOf(row.created_at),
})

export const toFailingDelivery = (row: DeliveryRow & { form_title: string }): FailingDelivery => ({
  ...toDeliveryRecord(row),
  formTitle: row.form_title,
})
