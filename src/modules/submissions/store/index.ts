/**
 * What the public page remembers for a person between requests (CONTRACT 11),
 * in the database so that any instance answers the next request (CONTRACT
 * 10): files kept across a 422 (`held_files`) and one-time receipt tokens
 * (`receipts`). The submissions module owns both tables. A held file's bytes
 * are chunks the responses module keeps: while held they are claimed, and
 * however the hold goes a trigger unclaims them, unless the answer that used
 * the file holds them.
 */

export interface HeldFile {
  /** Random and opaque: the page names it in a hidden input. */
  id: string
  formId: string
  fieldKey: string
  /** As the browser sent it. */
  name: string
  /** As the browser declared it. */
  contentType: string
  size: number
  /** Its bytes: chunks of this id. */
  fileId: string
  heldUntil: number
}

export interface NewReceipt {
  /** SHA-256 hex of the token the cookie holds. */
  tokenHash: string
  formId: string
  expiresAt: number
}

export interface SubmissionReads {
  /** The hold `id` of this form's field, unless it has lapsed by `now`. */
  heldFile(formId: string, fieldKey: string, id: string, now: number): Promise<HeldFile | undefined>
  /** Whether a hold or a receipt has lapsed by `now` (the sweep writes only then). */
  anyLapsed(now: number): Promise<boolean>
}

export interface SubmissionWrites extends SubmissionReads {
  /**
   * Holds the file while the form is active and its live holds with this one
   * come to at most `maxBytes`; false (nothing written) otherwise.
   */
  hold(file: HeldFile, now: number, maxBytes: number): Promise<boolean>
  /** Lets go of the hold `id` of this form's field, when there is one. */
  release(formId: string, fieldKey: string, id: string): Promise<void>
  /** Lets go of every hold of the form. */
  releaseAll(formId: string): Promise<void>
  rememberReceipt(receipt: NewReceipt): Promise<void>
  /** True once: when the token was the form's, unspent and unexpired at `now`; it is spent now. */
  spendReceipt(formId: string, tokenHash: string, now: number): Promise<boolean>
  /** Forgets holds and receipts lapsed by `now`; returns how many. */
  forgetLapsed(now: number): Promise<number>
}
