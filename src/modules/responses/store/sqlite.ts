import type { Database } from 'bun:sqlite'
import { yieldToLoop } from '../../../lib/slices.ts'
import {
  type AnswersOnDay,
  DAY_MS,
  type NewFile,
  type ResponseWrites,
  type StoredFile,
  type StoredResponse,
} from './index.ts'
import { ANSWERS_BY_ACCOUNT_SINCE, RESPONSE_COLUMNS, type ResponseRow, toStoredResponse } from './rows.ts'

/** The responses module's store on SQLite (one per connection: the reads' and the writer's). */
export function createSqliteResponseStore(db: Database): ResponseWrites {
  const forForm = db.query<ResponseRow, [string]>(
    `SELECT ${RESPONSE_COLUMNS} FROM responses WHERE form_id = ? ORDER BY submitted_at DESC, id DESC`,
  )
  // The account's answers of one UTC day, found by when they arrived (the account's forms may be a million):
  // CROSS JOIN keeps the answers the outer loop, whatever the planner guesses. SQLite answers on this thread,
  // so the days since a time are read one at a time, the event loop free between them.
  const answersOfDay = db.query<{ ms: number }, { account_id: string; from: number; to: number }>(
    `SELECT r.submitted_at - f.created_at AS ms
       FROM responses r INDEXED BY responses_submitted_at CROSS JOIN forms f ON f.id = r.form_id
      WHERE r.submitted_at >= $from AND r.submitted_at < $to AND f.account_id = $account_id`,
  )
  const lastAnswerAt = db.query<{ at: number | null }, []>('SELECT max(submitted_at) AS at FROM responses')

  /** Each UTC day from `since` to the last answer, with the times to answer of the account's answers that day. */
  async function answerTimesByDay(accountId: string, since: number): Promise<Array<{ day: number; times: number[] }>> {
    const last = lastAnswerAt.get()!.at
    const days: Array<{ day: number; times: number[] }> = []
    if (last === null) return days
    for (let day = Math.floor(since / DAY_MS) * DAY_MS; day <= last; day += DAY_MS) {
      const rows = answersOfDay.all({ account_id: accountId, from: Math.max(day, since), to: day + DAY_MS })
      if (rows.length > 0) days.push({ day, times: rows.map((row) => row.ms) })
      await yieldToLoop()
    }
    return days
  }
  const byId = db.query<ResponseRow, [string, string]>(
    `SELECT ${RESPONSE_COLUMNS} FROM responses WHERE form_id = ? AND id = ?`,
  )
  const file = db.query<
    { name: string; content_type: string; size: number; file_id: string },
    [string, string, string]
  >(
    `SELECT f.name, f.content_type, f.size, f.file_id FROM response_files f JOIN responses r ON r.id = f.response_id
      WHERE r.form_id = ? AND r.id = ? AND f.field_key = ?`,
  )
  const files = db.query<
    { field_key: string; name: string; content_type: string; size: number; file_id: string },
    [string, string]
  >(
    `SELECT f.field_key, f.name, f.content_type, f.size, f.file_id FROM response_files f JOIN responses r ON r.id = f.response_id
      WHERE r.form_id = ? AND r.id = ?`,
  )
  const insertResponse = db.query(
    `INSERT INTO responses (id, form_id, data, ip, user_agent, submitted_at) VALUES ($id, $form_id, $data, $ip, $user_agent, $submitted_at)`,
  )
  const insertFile = db.query(
    `INSERT INTO response_files (response_id, field_key, name, content_type, size, file_id, content)
     VALUES ($response_id, $field_key, $name, $content_type, $size, $file_id, X'')`,
  )
  const markUnclaimed = db.query<never, [string, number]>(
    'INSERT OR REPLACE INTO unclaimed_files (file_id, since) VALUES (?, ?)',
  )
  // A file unclaimed at once (since 0: its post was refused) stays so whatever chunk still lands.
  const stampChunked = db.query<never, [string, number]>(
    `INSERT INTO unclaimed_files (file_id, since) VALUES (?, ?)
     ON CONFLICT (file_id) DO UPDATE SET since = excluded.since WHERE unclaimed_files.since > 0`,
  )
  const stamp = db.query<never, [number, string]>(
    'UPDATE unclaimed_files SET since = ? WHERE file_id = ? AND since > 0',
  )
  const insertChunk = db.query<never, [string, number, Uint8Array]>(
    'INSERT INTO file_chunks (file_id, seq, bytes) VALUES (?, ?, ?)',
  )
  const claim = db.query<never, [string]>('DELETE FROM unclaimed_files WHERE file_id = ?')
  const chunk = db.query<{ bytes: Uint8Array }, [string, number]>(
    'SELECT bytes FROM file_chunks WHERE file_id = ? AND seq = ?',
  )
  // length() of a blob reads its size, not its bytes.
  const chunkSpan = db.query<{ n: number; bytes: number; last: number }, [string]>(
    'SELECT count(*) AS n, coalesce(sum(length(bytes)), 0) AS bytes, coalesce(max(seq), -1) AS last FROM file_chunks WHERE file_id = ?',
  )
  const idleFile = db.query<{ file_id: string }, [number]>(
    'SELECT file_id FROM unclaimed_files WHERE since <= ? ORDER BY since LIMIT 1',
  )
  const removeChunks = db.query<never, [string, string, number]>(
    'DELETE FROM file_chunks WHERE file_id = ? AND seq IN (SELECT seq FROM file_chunks WHERE file_id = ? ORDER BY seq LIMIT ?)',
  )

  const answersByAccount = db.query<{ account_id: string; n: number }, [number]>(ANSWERS_BY_ACCOUNT_SINCE)
  return {
    async answersByAccountSince(since) {
      return new Map(answersByAccount.all(since).map((row) => [row.account_id, Number(row.n)]))
    },
    listForForm: async (formId) => forForm.all(formId).map(toStoredResponse),
    answersPerDay: async (accountId, since): Promise<AnswersOnDay[]> =>
      (await answerTimesByDay(accountId, since)).map(({ day, times }) => ({ day, answers: times.length })),
    async medianTimeToAnswer(accountId, since) {
      const times = (await answerTimesByDay(accountId, since)).flatMap((day) => day.times).sort((a, b) => a - b)
      if (times.length === 0) return null
      const middle = (times.length - 1) / 2
      return Math.round((times[Math.floor(middle)]! + times[Math.ceil(middle)]!) / 2)
    },
    async find(formId, responseId) {
      const row = byId.get(formId, responseId)
      return row ? toStoredResponse(row) : undefined
    },
    async file(formId, responseId, fieldKey): Promise<StoredFile | undefined> {
      const row = file.get(formId, responseId, fieldKey)
      return row ? { name: row.name, contentType: row.content_type, size: row.size, fileId: row.file_id } : undefined
    },
    files: async (formId, responseId) =>
      files.all(formId, responseId).map((row) => ({
        fieldKey: row.field_key,
        name: row.name,
        contentType: row.content_type,
        size: row.size,
        fileId: row.file_id,
      })),
    chunk: async (fileId, seq) => chunk.get(fileId, seq)?.bytes,
    async incompleteFiles(files) {
      return files
        .filter(({ fileId, size }) => {
          // Sequence numbers are distinct and from 0: as many as the last one + 1 means none is missing.
          const span = chunkSpan.get(fileId)!
          return span.n !== span.last + 1 || span.bytes !== size
        })
        .map((file) => file.fileId)
    },
    async insert(response: StoredResponse, files: NewFile[]) {
      insertResponse.run({
        id: response.id,
        form_id: response.formId,
        data: JSON.stringify(response.data),
        ip: response.ip,
        user_agent: response.userAgent,
        submitted_at: response.submittedAt,
      })
      for (const f of files) {
        insertFile.run({
          response_id: response.id,
          field_key: f.fieldKey,
          name: f.name,
          content_type: f.contentType,
          size: f.size,
          file_id: f.fileId,
        })
        claim.run(f.fileId)
      }
    },
    async writeChunk(fileId, seq, bytes, now) {
      stampChunked.run(fileId, now)
      insertChunk.run(fileId, seq, bytes)
    },
    async stampFiles(fileIds, now) {
      for (const fileId of fileIds) stamp.run(now, fileId)
    },
    async claimFiles(fileIds) {
      for (const fileId of fileIds) claim.run(fileId)
    },
    async unclaimFiles(fileIds) {
      for (const fileId of fileIds) markUnclaimed.run(fileId, 0)
    },
    async removeIdleChunks(idleSince, count) {
      const file = idleFile.get(idleSince)
      if (!file) return false
      if (removeChunks.run(file.file_id, file.file_id, count).changes < count) claim.run(file.file_id)
      return true
    },
  }
}
