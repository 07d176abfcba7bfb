import type { Database } from '../../db/index.ts'

export interface ResponseRow {
  id: string
  form_id: string
  data: string
  ip: string | null
  user_agent: string | null
  submitted_at: number
  context: string | null
}

/** A file of a response: what the person sent, and where its bytes are (chunks of `file_id`). */
export interface StoredFile {
  name: string
  content_type: string
  size: number
  file_id: string
}

/** The SQL of reading responses (they are written by the submission store). */
export function createResponseStore(db: Database) {
  // A form with a response is completed, a final state: its context is never removed.
  const columns = 'r.id, r.form_id, r.data, r.ip, r.user_agent, r.submitted_at, f.context'
  const forForm = db.query<ResponseRow, [string]>(
    `SELECT ${columns} FROM responses r JOIN forms f ON f.id = r.form_id
      WHERE r.form_id = ? ORDER BY r.submitted_at DESC, r.id DESC`,
  )
  const byId = db.query<ResponseRow, [string, string]>(
    `SELECT ${columns} FROM responses r JOIN forms f ON f.id = r.form_id WHERE r.form_id = ? AND r.id = ?`,
  )
  const file = db.query<StoredFile, [string, string, string]>(
    `SELECT f.name, f.content_type, f.size, f.file_id FROM response_files f JOIN responses r ON r.id = f.response_id
      WHERE r.form_id = ? AND r.id = ? AND f.field_key = ?`,
  )
  return {
    listForForm: (formId: string) => forForm.all(formId),
    find: (formId: string, responseId: string) => byId.get(formId, responseId) ?? undefined,
    file: (formId: string, responseId: string, key: string) => file.get(formId, responseId, key) ?? undefined,
  }
}

export type ResponseStore = ReturnType<typeof createResponseStore>
