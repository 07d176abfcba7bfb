/** @jsxImportSource @kitajs/html */
/**
 * The page's steps around a post that is not (yet) recorded (CONTRACT 14):
 * the "Check your answers" page of a form with `page.review`, the draft that
 * holds its post until Send, and what the person sent when the form ended or
 * was answered meanwhile. The route (index.tsx) calls these; the rules stay in
 * the submission service.
 */
import { type FormPageBytes, type FormView, renderFormPage } from '../../../views/FormPage.tsx'
import type { ReviewView } from '../../../views/ReviewPage.tsx'
import type { SentAnswer } from '../../../views/SentAnswers.tsx'
import { isDatePartName } from '../../fields/date.ts'
import type { FieldDefinition } from '../../fields/index.ts'
import { Upload } from '../../fields/types.ts'
import type { Locale, Translator } from '../../i18n/index.ts'
import type { Problem } from '../../lib/errors.ts'
import type { FormEntry } from '../../lib/form-data.ts'
import type { StoredForm } from '../forms/store/index.ts'
import type { IncomingFile } from '../responses/files.ts'
import { fileLostProblem, type HeldFileView, type PostedHolds } from './files.ts'
import type { SubmissionService, Submitter } from './service.ts'
import type { Draft, DraftFile, HeldFile } from './store/index.ts'

/** The review page's Send names its draft so (keys starting with "_" belong to the page). */
const DRAFT_FIELD = '_draft'

/** What a form post sends, as form-post.ts's formPostValues reads it. */
export interface PostValues {
  values: Record<string, unknown>
  typed: Record<string, string | string[]>
  holds: PostedHolds
}

/** formPostValues for this form: how any post's entries are read (a draft's too, on Send). */
export type ReadPost = (entries: Array<FormEntry<IncomingFile>>) => PostValues

/** A post's texts as a draft keeps them: in order, without files and the page's own `_` keys (a memorable date's boxes are the answer: kept). */
const textEntries = (entries: Array<FormEntry<IncomingFile>>): Draft['answers'] =>
  entries.flatMap(([name, value]) =>
    typeof value === 'string' && (!name.startsWith('_') || isDatePartName(name))
      ? [[name, value] as [string, string]]
      : [],
  )

/**
 * What a post says of a draft. A post naming none is no Send (`draft` and
 * `lapsed` absent). A Send naming a live draft of this form has its values
 * replaced, in place, by the draft's, read as any post is: the draft is what
 * the person checked, and it is recorded through the same path as any post.
 * A Send naming no live draft of this form (lapsed, unknown, another form's)
 * is `lapsed`: its own texts, which the review page sent along, only fill the
 * form again.
 */
export async function draftOfPost(
  submissions: SubmissionService,
  form: StoredForm,
  entries: Array<FormEntry<IncomingFile>>,
  post: PostValues,
  readPost: ReadPost,
): Promise<{ draft?: Draft; lapsed?: true; files?: Record<string, DraftFile> }> {
  const named = entries.find(([name, value]) => name === DRAFT_FIELD && typeof value === 'string')?.[1]
  if (typeof named !== 'string') return {}
  const draft = await submissions.draft(form, named)
  if (!draft) return { lapsed: true }
  const checked = readPost(draft.answers)
  for (const key of Object.keys(post.values)) delete post.values[key]
  for (const key of Object.keys(post.typed)) delete post.typed[key]
  Object.assign(post.values, checked.values)
  Object.assign(post.typed, checked.typed)
  post.holds.ids.clear()
  post.holds.removed.clear()
  for (const [key, file] of Object.entries(draft.files)) post.holds.ids.set(key, file.hold)
  return { draft, files: draft.files }
}

/** Whether every file the draft names is still kept (`used`: the holds useHolds found). */
export const draftFilesKept = (draft: Draft, used: Map<string, HeldFile>) =>
  Object.keys(draft.files).every((key) => used.has(key))

/** What a post that was not recorded sent, field by field: its texts, and its files' names and sizes (a draft's when it sent none). */
export function sentAnswers(
  fields: FieldDefinition[],
  values: Record<string, unknown>,
  files: Record<string, DraftFile> = {},
): SentAnswer[] {
  return fields.map((field) => {
    const value = Object.hasOwn(values, field.key) ? values[field.key] : undefined
    if (field.type === 'file') {
      if (value instanceof Upload && !(value.name === '' && value.size === 0))
        return { field, text: undefined, file: { name: value.name, size: value.size } }
      const kept = Object.hasOwn(files, field.key) ? files[field.key] : undefined
      return { field, text: undefined, file: kept && { name: kept.name, size: kept.size } }
    }
    return { field, text: typeof value === 'string' || Array.isArray(value) ? (value as string | string[]) : undefined }
  })
}

export type ReviewOutcome =
  | { kind: 'review'; view: ReviewView }
  | {
      kind: 'invalid'
      problems: Problem[]
      typed: Record<string, string | string[]>
      held: Record<string, HeldFileView>
    }

/**
 * A valid post to a form with `page.review`: checked as Send will record it
 * (a 422, 409 or 410 is thrown as by `submit`), its files kept as holds, the
 * post kept as a draft; then the review page. A file that could not be kept
 * is asked for again (the 422 page), since Send could not send it.
 */
export async function reviewPost(
  submissions: SubmissionService,
  form: StoredForm,
  entries: Array<FormEntry<IncomingFile>>,
  post: PostValues,
  used: Map<string, HeldFile>,
  submitter: Submitter,
  claimed: Set<string>,
  /** The page's language and region, in which its numbers are read: as Send will read them. */
  reading: { locale: Locale; region: string | undefined },
): Promise<ReviewOutcome> {
  const { checked } = await submissions.submit(form, post.values, submitter, { checkOnly: true, ...reading })
  const hasFileField = form.fields.some((field) => field.type === 'file')
  const { held, fileIds, lost } = hasFileField
    ? await submissions.holdAccepted(form, post.values, used)
    : { held: {}, fileIds: [], lost: [] }
  for (const fileId of fileIds) claimed.add(fileId)
  const notKept = checked!.uploads.filter(
    ({ key }) => !Object.hasOwn(held, key) && !lost.some((problem) => problem.path === `/${key}`),
  )
  if (lost.length > 0 || notKept.length > 0) {
    return {
      kind: 'invalid',
      problems: [...lost, ...notKept.map(({ key }) => fileLostProblem(key))],
      typed: post.typed,
      held,
    }
  }
  const files: Record<string, DraftFile> = Object.create(null)
  for (const [key, file] of Object.entries(held)) files[key] = { hold: file.id, name: file.name, size: file.size }
  const texts = textEntries(entries)
  const draftId = await submissions.saveDraft(
    form,
    texts,
    files,
    [...used.values()].map((hold) => hold.heldUntil),
  )
  const answers = form.fields.map((field) => ({
    field,
    value: checked!.data[field.key],
    file: Object.hasOwn(held, field.key) ? { name: held[field.key]!.name, size: held[field.key]!.size } : undefined,
  }))
  return {
    kind: 'review',
    view: { formId: form.id, title: form.title, draftId, answers, posted: texts, submitLabel: form.page.submit_label },
  }
}

/**
 * The form opened from a review page's Change link (`?draft=`): filled with
 * the draft, its files kept; when the draft has lapsed (or is not this
 * form's), empty, saying so.
 */
export async function draftFormPage(
  submissions: SubmissionService,
  view: FormView,
  draftId: string,
  readPost: ReadPost,
  t: Translator,
): Promise<FormPageBytes> {
  const draft = await submissions.draft(view, draftId)
  if (!draft) return renderFormPage({ form: view, t, notice: t.t('review.lapsed') })
  return renderFormPage({ form: view, t, submitted: readPost(draft.answers).typed, held: heldOf(draft.files) })
}

/** The form again after a Send whose draft lapsed: filled with what the review page sent along, and the files still kept. */
export function lapsedDraftPage(
  view: FormView,
  typed: Record<string, string | string[]>,
  held: Record<string, HeldFileView>,
  t: Translator,
): Promise<FormPageBytes> {
  return renderFormPage({ form: view, t, submitted: typed, held, notice: t.t('review.lapsed_kept') })
}

/** A draft's files as the form shows kept files. */
function heldOf(files: Record<string, DraftFile>): Record<string, HeldFileView> {
  const held: Record<string, HeldFileView> = Object.create(null)
  for (const [key, file] of Object.entries(files)) held[key] = { id: file.hold, name: file.name, size: file.size }
  return held
}

/** The holds useHolds found, as the form shows kept files. */
export function heldViews(used: Map<string, HeldFile>): Record<string, HeldFileView> {
  const held: Record<string, HeldFileView> = Object.create(null)
  for (const [key, hold] of used) held[key] = { id: hold.id, name: hold.name, size: hold.size }
  return held
}
