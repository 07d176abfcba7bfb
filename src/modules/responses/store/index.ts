import type { AnswerValue } from '../../../fields/index.ts'

/**
 * What the responses module keeps (the tables `responses`, `response_files`,
 * `file_chunks` and `unclaimed_files`), and the one interface every database
 * gives it (sqlite.ts, postgres.ts beside this file).
 *
 * A file's bytes are chunks of at most FILE_CHUNK_BYTES, written while the
 * file arrives, before the answer that holds them is recorded. Until then
 * (and again once that answer is deleted) the file is "unclaimed", and the
 * sweep removes unclaimed chunks a few at a time.
 */

/** The most bytes one chunk holds. */
export const FILE_CHUNK_BYTES = 512 * 1024

export interface StoredResponse {
  id: string
  formId: string
  /** Field key to answer, in the form's field order. */
  data: Record<string, AnswerValue>
  ip: string | null
  userAgent: string | null
  submittedAt: number
}

/** A file of a response: what the person sent, and where its bytes are (chunks of `fileId`). */
export interface StoredFile {
  name: string
  contentType: string
  size: number
  fileId: string
}

/** A file of a response being recorded: its bytes are already written, as chunks of `fileId`. */
export interface NewFile extends StoredFile {
  fieldKey: string
}

/** Milliseconds in a day: answers are counted by UTC day. */
export const DAY_MS = 86_400_000

/** How many answers an account's forms took on one UTC day. */
export interface AnswersOnDay {
  /** The day's first millisecond (UTC). */
  day: number
  answers: number
}

export interface ResponseReads {
  /**
   * How many answers the account's forms took on each UTC day from `since` on,
   * oldest first, days without an answer left out. Walks the answers by the
   * time they arrived (all accounts'), never the account's forms.
   */
  answersPerDay(accountId: string, since: number): Promise<AnswersOnDay[]>
  /** The median time from a form's creation to its answer, over the account's answers since `since`; null without one. */
  medianTimeToAnswer(accountId: string, since: number): Promise<number | null>
  /** The form's responses, newest first (a form takes one, so at most one). */
  listForForm(formId: string): Promise<StoredResponse[]>
  find(formId: string, responseId: string): Promise<StoredResponse | undefined>
  file(formId: string, responseId: string, fieldKey: string): Promise<StoredFile | undefined>
  /** Every file of the response, with its field key. */
  files(formId: string, responseId: string): Promise<NewFile[]>
  chunk(fileId: string, seq: number): Promise<Uint8Array | undefined>
  /**
   * Of these files, those whose bytes are not all there: chunks missing (not
   * 0, 1, 2, ... without a gap) or adding up to other than `size` bytes.
   */
  incompleteFiles(files: Array<{ fileId: string; size: number }>): Promise<string[]>
  /** How many answers each account's forms received after `since` (accounts with none are left out). */
  answersByAccountSince(since: number): Promise<Map<string, number>>
}

export interface ResponseWrites extends ResponseReads {
  /** Records the response with its files, which it claims. */
  insert(response: StoredResponse, files: NewFile[]): Promise<void>
  /**
   * Writes one chunk of an upload and marks the file unclaimed since `now`:
   * each chunk moves the stamp, so a file still arriving never looks idle
   * (a file already unclaimed at once stays so).
   */
  writeChunk(fileId: string, seq: number, bytes: Uint8Array, now: number): Promise<void>
  /** Moves the stamp of these unclaimed files to `now` (the files of a post still arriving). */
  stampFiles(fileIds: string[], now: number): Promise<void>
  /** Something other than an answer holds these files now (a hold across a 422): they stay. */
  claimFiles(fileIds: string[]): Promise<void>
  /** No answer will hold these files: they are removed at once. */
  unclaimFiles(fileIds: string[]): Promise<void>
  /**
   * Removes up to `count` chunks of the unclaimed file stamped longest ago, if
   * that was at `idleSince` or before (the file is forgotten with its last
   * chunk); false when there is no such file. The file is chosen in this
   * transaction, so a chunk written meanwhile (which moves the stamp) or an
   * answer that claimed it first keeps it whole.
   */
  removeIdleChunks(idleSince: number, count: number): Promise<boolean>
}
