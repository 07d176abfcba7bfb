import { type RowTime, timeOf } from '../../../db/rows.ts'
import type { StoredResponse } from './index.ts'

/** A response as both databases hold it: data as JSON text, submitted_at as integer milliseconds. */
export interface ResponseRow {
  id: string
  form_id: string
  data: string
  ip: string | null
  user_agent: string | null
  submitted_at: RowTime
}

export const RESPONSE_COLUMNS = 'id, form_id, data, ip, user_agent, submitted_at'

export const toStoredResponse = (row: ResponseRow): StoredResponse => ({
  id: row.id,
  formId: row.form_id,
  data: JSON.parse(row.data),
  ip: row.ip,
  userAgent: row.user_agent,
  submittedAt: timeOf(row.submitted_at),
})

/** Per account, the answers received after a time: the newest answers by responses_submitted_at, each form by its key. */
export const ANSWERS_BY_ACCOUNT_SINCE = `SELECT f.account_id, count(*) AS n
  FROM responses r JOIN forms f ON f.id = r.form_id
  WHERE r.submitted_at > ? GROUP BY f.account_id`
