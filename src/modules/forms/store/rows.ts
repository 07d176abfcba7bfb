import type { RowTime } from '../../../db/rows.ts'
import { optionalTimeOf, timeOf } from '../../../db/rows.ts'
import type { FieldDefinition } from '../../../fields/index.ts'
import type { FormEvent } from '../../events/names.ts'
import type { FormStatus, PageSettings } from '../model.ts'
import type { ExpiredForm, FormPublicState, FormSummaryRecord, StoredForm } from './index.ts'

/** A form as both databases hold it: fields and free-form JSON as text, times as integer milliseconds. */
export interface FormRow {
  id: string
  account_id: string
  title: string
  description: string | null
  fields: string
  fields_count: number
  callback_url: string | null
  /** JSON array; '["form.completed"]' for forms an older intake wrote. */
  callback_events: string
  callback_metadata: string
  webhook_secret: string | null
  context: string | null
  settings: string
  /** JSON object, '{}' when none (and for forms an older intake wrote). */
  page: string
  status: FormStatus
  expires_at: RowTime | null
  created_at: RowTime
}
export type SummaryRow = Pick<
  FormRow,
  'id' | 'title' | 'description' | 'fields_count' | 'status' | 'expires_at' | 'created_at'
>

/** Counts by stored status, and how many stored as active are past their time: by the status reads give. */
export function toStatusCounts(
  stored: Array<{ status: FormStatus; forms: number | string }>,
  pastExpiry: number | string,
): Record<FormStatus, number> {
  const counts: Record<FormStatus, number> = { active: 0, completed: 0, cancelled: 0, expired: 0 }
  for (const row of stored) counts[row.status] = Number(row.forms)
  counts.active -= Number(pastExpiry)
  counts.expired += Number(pastExpiry)
  return counts
}

export const toStoredForm = (row: FormRow): StoredForm => ({
  id: row.id,
  accountId: row.account_id,
  title: row.title,
  description: row.description,
  fields: JSON.parse(row.fields) as FieldDefinition[],
  fieldsCount: row.fields_count,
  callbackUrl: row.callback_url,
  callbackEvents: JSON.parse(row.callback_events) as FormEvent[],
  callbackMetadata: row.callback_metadata,
  webhookSecret: row.webhook_secret,
  context: row.context,
  settings: row.settings,
  page: JSON.parse(row.page) as PageSettings,
  status: row.status,
  expiresAt: optionalTimeOf(row.expires_at),
  createdAt: timeOf(row.created_at),
})

export const toSummary = (row: SummaryRow): FormSummaryRecord => ({
  id: row.id,
  title: row.title,
  description: row.description,
  fieldsCount: row.fields_count,
  status: row.status,
  expiresAt: optionalTimeOf(row.expires_at),
  createdAt: timeOf(row.created_at),
})

/** The public page's first look at a form: its state, title and page settings (JSON text). */
export type PublicStateRow = Pick<FormRow, 'id' | 'title' | 'status' | 'page'>

export const toPublicState = (row: PublicStateRow | null | undefined): FormPublicState | undefined =>
  row ? { id: row.id, title: row.title, status: row.status, page: JSON.parse(row.page) as PageSettings } : undefined

/** A form the sweep expired, as both databases return it: before its context was removed. */
export type ExpiredRow = Pick<
  FormRow,
  'id' | 'account_id' | 'callback_url' | 'callback_events' | 'callback_metadata' | 'context'
> & {
  expires_at: RowTime
}

export const EXPIRED_COLUMNS = 'id, account_id, callback_url, callback_events, callback_metadata, context, expires_at'

export const toExpiredForm = (row: ExpiredRow): ExpiredForm => ({
  id: row.id,
  accountId: row.account_id,
  callbackUrl: row.callback_url,
  callbackEvents: JSON.parse(row.callback_events) as FormEvent[],
  callbackMetadata: row.callback_metadata,
  context: row.context,
  expiresAt: timeOf(row.expires_at),
})

/** Per account, its forms active at a time: a walk of each account's active forms (forms_account_status_newest). */
export const ACTIVE_FORMS_BY_ACCOUNT = `SELECT account_id, count(*) AS n FROM forms
  WHERE status = 'active' AND (expires_at IS NULL OR expires_at > ?) GROUP BY account_id`

/** A LIKE pattern for titles that contain `text` as typed: a % or _ in it matches itself (escaped with a backslash). */
export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, '\\$&')}%`

/** A trigram index finds text of three characters or more; shorter text is looked for row by row. */
export const indexedSearch = (text: string) => [...text].length >= 3
