import { optionalTimeOf, type RowTime, timeOf } from '../../../db/rows.ts'
import type { FormEvent } from '../../events/names.ts'
import type { DeliveryRecord, DeliveryStatus } from './index.ts'

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
