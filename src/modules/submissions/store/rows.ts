import { timeOf, type RowTime } from '../../../db/rows.ts'
import type { HeldFile } from './index.ts'

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
