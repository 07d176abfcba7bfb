import { type RowTime, timeOf } from '../../../db/rows.ts'
import type { Draft, HeldFile } from './index.ts'

/** A held file as both databases hold it (PostgreSQL's bigint comes back as text). */
export interface HeldFileRow {
  id: string
  form_id: string
  field_key: string
  name: string
  content_type: string
  size: number | string
  file_id: string
  held_until: RowTime
}

export const HELD_FILE_COLUMNS = 'id, form_id, field_key, name, content_type, size, file_id, held_until'

export const toHeldFile = (row: HeldFileRow): HeldFile => ({
  id: row.id,
  formId: row.form_id,
  fieldKey: row.field_key,
  name: row.name,
  contentType: row.content_type,
  size: Number(row.size),
  fileId: row.file_id,
  heldUntil: timeOf(row.held_until),
})

/** A draft as both databases hold it. */
export interface DraftRow {
  id: string
  form_id: string
  answers: string
  files: string
  created_at: RowTime
  held_until: RowTime
}

export const DRAFT_COLUMNS = 'id, form_id, answers, files, created_at, held_until'

export const toDraft = (row: DraftRow): Draft => ({
  id: row.id,
  formId: row.form_id,
  answers: JSON.parse(row.answers),
  // No prototype: a field key can never reach Object.prototype.
  files: Object.assign(Object.create(null), JSON.parse(row.files)),
  createdAt: timeOf(row.created_at),
  heldUntil: timeOf(row.held_until),
})
