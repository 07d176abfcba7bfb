import type { Database } from '../../db/index.ts'
import type { FileStore } from '../responses/files.ts'
import type { ResponseRow } from '../responses/store.ts'
import type { DeliveryStore, NewDelivery } from '../webhooks/store.ts'

/** A response row as written; its context is the form's. */
export type NewResponse = Omit<ResponseRow, 'context'>

/** A file of the response: its bytes are already written, as chunks of `file_id` (see responses/files.ts). */
export type NewFile = {
  response_id: string
  field_key: string
  name: string
  content_type: string
  size: number
  file_id: string
}

/**
 * The SQL of recording a submission: the response with its files, the form's
 * move to `completed` and the webhook delivery commit together or not at all.
 */
export function createSubmissionStore(db: Database, deliveries: DeliveryStore, files: FileStore) {
  // Only an active, unexpired form moves: the first submission to commit wins.
  const complete = db.query(
    `UPDATE forms SET status = 'completed', updated_at = $now
      WHERE id = $id AND status = 'active' AND (expires_at IS NULL OR expires_at > $now)`,
  )
  const insertResponse = db.query<never, NewResponse>(
    `INSERT INTO responses (id, form_id, data, ip, user_agent, submitted_at)
     VALUES ($id, $form_id, $data, $ip, $user_agent, $submitted_at)`,
  )
  const insertFile = db.query<never, NewFile>(
    `INSERT INTO response_files (response_id, field_key, name, content_type, size, file_id, content)
     VALUES ($response_id, $field_key, $name, $content_type, $size, $file_id, X'')`,
  )
  return {
    /**
     * False when the form was no longer accepting a response; nothing is
     * written then. Run it as one unit of work (see db/writer.ts).
     */
    record(response: NewResponse, newFiles: NewFile[], delivery: NewDelivery | undefined): boolean {
      if (complete.run({ id: response.form_id, now: response.submitted_at }).changes !== 1) return false
      insertResponse.run(response)
      for (const file of newFiles) {
        insertFile.run(file)
        files.claim(file.file_id)
      }
      if (delivery) deliveries.enqueue(delivery)
      return true
    },
  }
}

export type SubmissionStore = ReturnType<typeof createSubmissionStore>
