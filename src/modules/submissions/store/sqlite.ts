import type { Database } from 'bun:sqlite'
import type { SubmissionWrites } from './index.ts'
import { DRAFT_COLUMNS, type DraftRow, HELD_FILE_COLUMNS, type HeldFileRow, toDraft, toHeldFile } from './rows.ts'

/** The submissions module's store on SQLite (one per connection: the reads' and the writer's). */
export function createSqliteSubmissionStore(db: Database): SubmissionWrites {
  const heldFile = db.query<HeldFileRow, [string, string, string, number]>(
    `SELECT ${HELD_FILE_COLUMNS} FROM held_files WHERE id = ? AND form_id = ? AND field_key = ? AND held_until > ?`,
  )
  const anyLapsed = db.query<{ lapsed: number }, [number, number, number]>(
    `SELECT EXISTS (SELECT 1 FROM held_files WHERE held_until <= ?) OR EXISTS (SELECT 1 FROM receipts WHERE expires_at <= ?)
         OR EXISTS (SELECT 1 FROM drafts WHERE held_until <= ?) AS lapsed`,
  )
  const draft = db.query<DraftRow, [string, string, number]>(
    `SELECT ${DRAFT_COLUMNS} FROM drafts WHERE id = ? AND form_id = ? AND held_until > ?`,
  )
  const saveDraft = db.query<never, [string, string, string, string, number, number]>(
    'INSERT INTO drafts (id, form_id, answers, files, created_at, held_until) VALUES (?, ?, ?, ?, ?, ?)',
  )
  const pruneDrafts = db.query<never, [string, string, number]>(
    'DELETE FROM drafts WHERE form_id = ? AND id NOT IN (SELECT id FROM drafts WHERE form_id = ? ORDER BY created_at DESC, id DESC LIMIT ?)',
  )
  // The bound counts only live holds: a lapsed one is as good as gone.
  const hold = db.query(
    `INSERT INTO held_files (id, form_id, field_key, name, content_type, size, file_id, held_until)
     SELECT $id, $form_id, $field_key, $name, $content_type, $size, $file_id, $held_until
      WHERE EXISTS (SELECT 1 FROM forms WHERE id = $form_id AND status = 'active')
        AND (SELECT coalesce(sum(size), 0) FROM held_files WHERE form_id = $form_id AND held_until > $now) + $size <= $max_bytes`,
  )
  const release = db.query<never, [string, string, string]>(
    'DELETE FROM held_files WHERE id = ? AND form_id = ? AND field_key = ?',
  )
  const releaseAll = db.query<never, [string]>('DELETE FROM held_files WHERE form_id = ?')
  const rememberReceipt = db.query<never, [string, string, number]>(
    'INSERT INTO receipts (token_hash, form_id, expires_at) VALUES (?, ?, ?)',
  )
  const spendReceipt = db.query<never, [string, string, number]>(
    'DELETE FROM receipts WHERE token_hash = ? AND form_id = ? AND expires_at > ?',
  )
  const forgetHolds = db.query<never, [number]>('DELETE FROM held_files WHERE held_until <= ?')
  const forgetReceipts = db.query<never, [number]>('DELETE FROM receipts WHERE expires_at <= ?')
  const forgetDrafts = db.query<never, [number]>('DELETE FROM drafts WHERE held_until <= ?')

  return {
    async heldFile(formId, fieldKey, id, now) {
      const row = heldFile.get(id, formId, fieldKey, now)
      return row ? toHeldFile(row) : undefined
    },
    anyLapsed: async (now) => anyLapsed.get(now, now, now)!.lapsed === 1,
    async draft(formId, id, now) {
      const row = draft.get(id, formId, now)
      return row ? toDraft(row) : undefined
    },
    async saveDraft(entry, kept) {
      saveDraft.run(
        entry.id,
        entry.formId,
        JSON.stringify(entry.answers),
        JSON.stringify(entry.files),
        entry.createdAt,
        entry.heldUntil,
      )
      pruneDrafts.run(entry.formId, entry.formId, kept)
    },
    hold: async (file, now, maxBytes) =>
      hold.run({
        id: file.id,
        form_id: file.formId,
        field_key: file.fieldKey,
        name: file.name,
        content_type: file.contentType,
        size: file.size,
        file_id: file.fileId,
        held_until: file.heldUntil,
        now,
        max_bytes: maxBytes,
      }).changes === 1,
    release: async (formId, fieldKey, id) => void release.run(id, formId, fieldKey),
    releaseAll: async (formId) => void releaseAll.run(formId),
    rememberReceipt: async (receipt) => void rememberReceipt.run(receipt.tokenHash, receipt.formId, receipt.expiresAt),
    spendReceipt: async (formId, tokenHash, now) => spendReceipt.run(tokenHash, formId, now).changes === 1,
    forgetLapsed: async (now) =>
      forgetHolds.run(now).changes + forgetReceipts.run(now).changes + forgetDrafts.run(now).changes,
  }
}
