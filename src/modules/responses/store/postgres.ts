import type { Query } from '../../../db/postgres/driver.ts'
import {
  type AnswersOnDay,
  DAY_MS,
  type NewFile,
  type ResponseWrites,
  type StoredFile,
  type StoredResponse,
} from './index.ts'
import { ANSWERS_BY_ACCOUNT_SINCE, RESPONSE_COLUMNS, type ResponseRow, toStoredResponse } from './rows.ts'

const FOR_FORM = `SELECT ${RESPONSE_COLUMNS} FROM responses WHERE form_id = $1 ORDER BY submitted_at DESC, id DESC`
// The account's answers since a time ($2), found by when they arrived (the account's forms may be a million).
const ANSWERED_SINCE = `FROM responses r JOIN forms f ON f.id = r.form_id WHERE r.submitted_at >= $2 AND f.account_id = $1`
const PER_DAY = `SELECT r.submitted_at / ${DAY_MS} AS day, count(*) AS answers ${ANSWERED_SINCE} GROUP BY day ORDER BY day`
const MEDIAN = `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY r.submitted_at - f.created_at) AS median ${ANSWERED_SINCE}`
const BY_ID = `SELECT ${RESPONSE_COLUMNS} FROM responses WHERE form_id = $1 AND id = $2`
const FILE = `SELECT f.name, f.content_type, f.size, f.file_id FROM response_files f JOIN responses r ON r.id = f.response_id
  WHERE r.form_id = $1 AND r.id = $2 AND f.field_key = $3`
const FILES = `SELECT f.field_key, f.name, f.content_type, f.size, f.file_id FROM response_files f JOIN responses r ON r.id = f.response_id
  WHERE r.form_id = $1 AND r.id = $2`
const CLAIM = 'DELETE FROM unclaimed_files WHERE file_id = ANY($1::text[])'
const CHUNK = 'SELECT bytes FROM file_chunks WHERE file_id = $1 AND seq = $2'
// Sequence numbers are distinct and from 0: as many as the last one + 1 means none is missing.
// octet_length reads a stored value's size, not its bytes.
const INCOMPLETE = `SELECT f.file_id FROM unnest($1::text[], $2::bigint[]) AS f(file_id, size)
  CROSS JOIN LATERAL (
    SELECT count(*) AS n, coalesce(sum(octet_length(c.bytes)), 0) AS bytes, coalesce(max(c.seq), -1) AS last
      FROM file_chunks c WHERE c.file_id = f.file_id
  ) AS span
  WHERE span.n <> span.last + 1 OR span.bytes <> f.size`
// Locked until the unit commits: a chunk being written (which locks the row to move its stamp), an
// answer claiming the file, or another instance's sweep skips it or waits, and sees it as it is then.
const IDLE_FILE = 'SELECT file_id FROM unclaimed_files WHERE since <= $1 ORDER BY since LIMIT 1 FOR UPDATE SKIP LOCKED'
const INSERT_RESPONSE = `INSERT INTO responses (id, form_id, data, ip, user_agent, submitted_at) VALUES ($1, $2, $3, $4, $5, $6)`
// The files' rows, and their chunks claimed, in one statement.
const INSERT_FILES = `WITH claimed AS (DELETE FROM unclaimed_files WHERE file_id = ANY($6::text[]))
  INSERT INTO response_files (response_id, field_key, name, content_type, size, file_id)
  SELECT $1, field_key, name, content_type, size, file_id
    FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[]) AS f(field_key, name, content_type, size, file_id)`
// Each chunk moves its file's stamp; a file unclaimed at once (since 0: its post was refused) stays so.
const INSERT_CHUNK = `WITH stamped AS (
    INSERT INTO unclaimed_files (file_id, since) VALUES ($1, $4)
      ON CONFLICT (file_id) DO UPDATE SET since = EXCLUDED.since WHERE unclaimed_files.since > 0
  )
  INSERT INTO file_chunks (file_id, seq, bytes) VALUES ($1, $2, $3)`
const STAMP = 'UPDATE unclaimed_files SET since = $2 WHERE file_id = ANY($1::text[]) AND since > 0'
const UNCLAIM = `INSERT INTO unclaimed_files (file_id, since) SELECT DISTINCT unnest($1::text[]), 0
  ON CONFLICT (file_id) DO UPDATE SET since = 0`
const REMOVE_CHUNKS = `DELETE FROM file_chunks
  WHERE file_id = $1 AND seq IN (SELECT seq FROM file_chunks WHERE file_id = $1 ORDER BY seq LIMIT $2)`
const FORGET = 'DELETE FROM unclaimed_files WHERE file_id = $1'

/** The responses module's store on PostgreSQL: one for the pool's reads, one per transaction. */
export function createPostgresResponseStore(query: Query): ResponseWrites {
  return {
    async answersByAccountSince(since) {
      const rows = await query<{ account_id: string; n: string }>(ANSWERS_BY_ACCOUNT_SINCE.replace('?', '$1'), [since])
      return new Map(rows.map((row) => [row.account_id, Number(row.n)]))
    },
    listForForm: async (formId) => (await query<ResponseRow>(FOR_FORM, [formId])).map(toStoredResponse),
    answersPerDay: async (accountId, since): Promise<AnswersOnDay[]> =>
      (await query<{ day: string; answers: string }>(PER_DAY, [accountId, since])).map((row) => ({
        day: Number(row.day) * DAY_MS,
        answers: Number(row.answers),
      })),
    async medianTimeToAnswer(accountId, since) {
      const [row] = await query<{ median: number | string | null }>(MEDIAN, [accountId, since])
      return row!.median === null ? null : Math.round(Number(row!.median))
    },
    async find(formId, responseId) {
      const [row] = await query<ResponseRow>(BY_ID, [formId, responseId])
      return row ? toStoredResponse(row) : undefined
    },
    async file(formId, responseId, fieldKey): Promise<StoredFile | undefined> {
      const [row] = await query<{ name: string; content_type: string; size: string; file_id: string }>(FILE, [
        formId,
        responseId,
        fieldKey,
      ])
      return row
        ? { name: row.name, contentType: row.content_type, size: Number(row.size), fileId: row.file_id }
        : undefined
    },
    async files(formId, responseId) {
      const rows = await query<{
        field_key: string
        name: string
        content_type: string
        size: string
        file_id: string
      }>(FILES, [formId, responseId])
      return rows.map((row) => ({
        fieldKey: row.field_key,
        name: row.name,
        contentType: row.content_type,
        size: Number(row.size),
        fileId: row.file_id,
      }))
    },
    // bytea arrives as a Buffer, which is a Uint8Array.
    chunk: async (fileId, seq) => (await query<{ bytes: Uint8Array }>(CHUNK, [fileId, seq]))[0]?.bytes,
    async incompleteFiles(files) {
      if (files.length === 0) return []
      const rows = await query<{ file_id: string }>(INCOMPLETE, [files.map((f) => f.fileId), files.map((f) => f.size)])
      return rows.map((row) => row.file_id)
    },
    async insert(response: StoredResponse, files: NewFile[]) {
      await query(INSERT_RESPONSE, [
        response.id,
        response.formId,
        JSON.stringify(response.data),
        response.ip,
        response.userAgent,
        response.submittedAt,
      ])
      if (files.length === 0) return
      await query(INSERT_FILES, [
        response.id,
        files.map((f) => f.fieldKey),
        files.map((f) => f.name),
        files.map((f) => f.contentType),
        files.map((f) => f.size),
        files.map((f) => f.fileId),
      ])
    },
    async writeChunk(fileId, seq, bytes, now) {
      await query(INSERT_CHUNK, [fileId, seq, bytes, now])
    },
    async stampFiles(fileIds, now) {
      if (fileIds.length > 0) await query(STAMP, [fileIds, now])
    },
    async claimFiles(fileIds) {
      if (fileIds.length > 0) await query(CLAIM, [fileIds])
    },
    async unclaimFiles(fileIds) {
      if (fileIds.length > 0) await query(UNCLAIM, [fileIds])
    },
    async removeIdleChunks(idleSince, count) {
      const [file] = await query<{ file_id: string }>(IDLE_FILE, [idleSince])
      if (!file) return false
      if ((await query(REMOVE_CHUNKS, [file.file_id, count])).count < count) await query(FORGET, [file.file_id])
      return true
    },
  }
}
