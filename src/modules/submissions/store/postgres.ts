import type { Query } from '../../../db/postgres/driver.ts'
import type { SubmissionWrites } from './index.ts'
import { DRAFT_COLUMNS, type DraftRow, HELD_FILE_COLUMNS, type HeldFileRow, toDraft, toHeldFile } from './rows.ts'

const HELD_FILE = `SELECT ${HELD_FILE_COLUMNS} FROM held_files WHERE id = $1 AND form_id = $2 AND field_key = $3 AND held_until > $4`
const ANY_LAPSED = `SELECT EXISTS (SELECT 1 FROM held_files WHERE held_until <= $1) OR EXISTS (SELECT 1 FROM receipts WHERE expires_at <= $1)
    OR EXISTS (SELECT 1 FROM drafts WHERE held_until <= $1) AS lapsed`
const DRAFT = `SELECT ${DRAFT_COLUMNS} FROM drafts WHERE id = $1 AND form_id = $2 AND held_until > $3`
const SAVE_DRAFT =
  'INSERT INTO drafts (id, form_id, answers, files, created_at, held_until) VALUES ($1, $2, $3, $4, $5, $6)'
const PRUNE_DRAFTS = `DELETE FROM drafts WHERE form_id = $1
   AND id NOT IN (SELECT id FROM drafts WHERE form_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2)`
// Holds of one form are made one at a time (its row locked), so that two refused posts at once
// cannot both fit under the bound; an answered form's row is found completed and holds nothing.
const LOCK_FORM = `SELECT status FROM forms WHERE id = $1 FOR UPDATE`
// The bound counts only live holds: a lapsed one is as good as gone.
const HOLD = `INSERT INTO held_files (id, form_id, field_key, name, content_type, size, file_id, held_until)
  SELECT $1, $2, $3, $4, $5, $6::bigint, $7, $8::bigint
   WHERE (SELECT coalesce(sum(size), 0) FROM held_files WHERE form_id = $2 AND held_until > $9::bigint) + $6::bigint <= $10::bigint`
const RELEASE = 'DELETE FROM held_files WHERE id = $1 AND form_id = $2 AND field_key = $3'
const RELEASE_ALL = 'DELETE FROM held_files WHERE form_id = $1'
const REMEMBER_RECEIPT = 'INSERT INTO receipts (token_hash, form_id, expires_at) VALUES ($1, $2, $3)'
// One statement: of two requests racing with one token, one deletes the row and the other finds none.
const SPEND_RECEIPT = 'DELETE FROM receipts WHERE token_hash = $1 AND form_id = $2 AND expires_at > $3'
const FORGET_HOLDS = 'DELETE FROM held_files WHERE held_until <= $1'
const FORGET_RECEIPTS = 'DELETE FROM receipts WHERE expires_at <= $1'
const FORGET_DRAFTS = 'DELETE FROM drafts WHERE held_until <= $1'

/** The submissions module's store on PostgreSQL: one for the pool's reads, one per transaction. */
export function createPostgresSubmissionStore(query: Query): SubmissionWrites {
  return {
    async heldFile(formId, fieldKey, id, now) {
      const [row] = await query<HeldFileRow>(HELD_FILE, [id, formId, fieldKey, now])
      return row ? toHeldFile(row) : undefined
    },
    anyLapsed: async (now) => (await query<{ lapsed: boolean }>(ANY_LAPSED, [now]))[0]!.lapsed,
    async draft(formId, id, now) {
      const [row] = await query<DraftRow>(DRAFT, [id, formId, now])
      return row ? toDraft(row) : undefined
    },
    async saveDraft(draft, kept) {
      await query(SAVE_DRAFT, [
        draft.id,
        draft.formId,
        JSON.stringify(draft.answers),
        JSON.stringify(draft.files),
        draft.createdAt,
        draft.heldUntil,
      ])
      await query(PRUNE_DRAFTS, [draft.formId, kept])
    },
    async hold(file, now, maxBytes) {
      const [form] = await query<{ status: string }>(LOCK_FORM, [file.formId])
      if (form?.status !== 'active') return false
      const held = await query(HOLD, [
        file.id,
        file.formId,
        file.fieldKey,
        file.name,
        file.contentType,
        file.size,
        file.fileId,
        file.heldUntil,
        now,
        maxBytes,
      ])
      return held.count === 1
    },
    release: async (formId, fieldKey, id) => void (await query(RELEASE, [id, formId, fieldKey])),
    releaseAll: async (formId) => void (await query(RELEASE_ALL, [formId])),
    rememberReceipt: async (receipt) =>
      void (await query(REMEMBER_RECEIPT, [receipt.tokenHash, receipt.formId, receipt.expiresAt])),
    spendReceipt: async (formId, tokenHash, now) => (await query(SPEND_RECEIPT, [tokenHash, formId, now])).count === 1,
    forgetLapsed: async (now) =>
      (await query(FORGET_HOLDS, [now])).count +
      (await query(FORGET_RECEIPTS, [now])).count +
      (await query(FORGET_DRAFTS, [now])).count,
  }
}
