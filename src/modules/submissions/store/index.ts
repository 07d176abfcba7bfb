/**
 * What the public page remembers for a person between requests (CONTRACT 11,
 * 14), in the database so that any instance answers the next request (CONTRACT
 * 10): files kept across a 422 (`held_files`), one-time receipt tokens
 * (`receipts`) and answers waiting on their review page (`drafts`). The
 * submissions module owns the three tables. A held file's bytes
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

interface NewReceipt {
  /** SHA-256 hex of the token the cookie holds. */
  tokenHash: string
  formId: string
  expiresAt: number
}

/** A draft's file: a hold of held_files, and what the pages say of it. */
export interface DraftFile {
  hold: string
  name: string
  size: number
}

/** A valid form post waiting on its review page for the person's Send (`page.review`). */
export interface Draft {
  /** Random and opaque: the review page names it. */
  id: string
  formId: string
  /**
   * The post's texts as the page sent them, name and text in their order
   * (files and the page's own `_` keys left out): Send reads them as any post.
   */
  answers: Array<[name: string, text: string]>
  /** Its files, by field key. */
  files: Record<string, DraftFile>
  createdAt: number
  heldUntil: number
}

export interface SubmissionReads {
  /** The hold `id` of this form's field, unless it has lapsed by `now`. */
  heldFile(formId: string, fieldKey: string, id: string, now: number): Promise<HeldFile | undefined>
  /** The draft `id` of this form, unless it has lapsed by `now`. */
  draft(formId: string, id: string, now: number): Promise<Draft | undefined>
  /** Whether a hold, a receipt or a draft has lapsed by `now` (the sweep writes only then). */
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
  /** Writes the draft, and forgets the form's older drafts beyond its newest `kept`. */
  saveDraft(draft: Draft, kept: number): Promise<void>
  /** Forgets holds, receipts and drafts lapsed by `now`; returns how many. */
  forgetLapsed(now: number): Promise<number>
}
