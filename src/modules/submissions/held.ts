import type { Transaction } from '../../stores.ts'

/**
 * Lets go of every file held for a form's next answer (kept across a 422), in
 * the caller's transaction: when the form ends, or an answer took them. A
 * leaf, so the forms module may call it without importing the submission service.
 */
export const releaseHeldFiles = (tx: Transaction, formId: string) => tx.submissions.releaseAll(formId)
