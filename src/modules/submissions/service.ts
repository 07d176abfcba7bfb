import { createHash, randomBytes } from 'node:crypto'
import { type AnswerValue, type FieldDefinition, fieldTypes } from '../../fields/index.ts'
import { type ParseContext, type Parsed, rejected, type Upload } from '../../fields/types.ts'
import type { Locale } from '../../i18n/index.ts'
import {
  conflict,
  formNotFound,
  HttpError,
  invalid,
  type Problem,
  ProblemList,
  pointerSegment,
} from '../../lib/errors.ts'
import { canonicalUlid, newId } from '../../lib/ids.ts'
import { timeSlicer } from '../../lib/slices.ts'
import type { Clock } from '../../lib/time.ts'
import { controlCharacterProblem, isPlainObject } from '../../lib/validation.ts'
import type { Store } from '../../stores.ts'
import { completedEventBody, recordEnding } from '../events/endings.ts'
import { FORM_COMPLETED } from '../events/names.ts'
import { completeForm } from '../forms/service.ts'
import type { FormOfAccount, FormPublicState, StoredForm } from '../forms/store/index.ts'
import { incompleteUploads } from '../responses/files.ts'
import { recordResponse } from '../responses/service.ts'
import type { NewFile, StoredResponse } from '../responses/store/index.ts'
import { fileHolds, fileLostProblem, HOLD_ID, HOLD_MS, safeContentType, safeFileName } from './files.ts'
import { releaseHeldFiles } from './held.ts'
import type { Draft, DraftFile } from './store/index.ts'

export interface Submitter {
  ip: string | null
  userAgent: string | null
}

export interface RecordedSubmission {
  id: string
  formId: string
  submittedAt: number
  /** With `checkOnly` (a review page): the answer as it would be recorded, its files as uploads; nothing was written. */
  checked?: Pick<ParsedAnswers, 'data' | 'uploads'>
}

/** How long after sending the receipt can be seen (its cookie's Max-Age too). */
export const RECEIPT_MS = 600_000

/** How long a valid post waits on its review page for Send (CONTRACT 14): as long as a kept file. */
const DRAFT_MS = HOLD_MS
/** Drafts a form keeps at once, its newest: a second tab may review too, and what a link can store stays bounded. */
const DRAFTS_KEPT = 5

/** A receipt token: 32 random bytes, base64url (newReceiptToken), as hard to guess as a key. */
const RECEIPT_TOKEN = /^[A-Za-z0-9_-]{43}$/

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** The answer behind a completed form, for the receipt and the answered page. */
export interface AnsweredForm {
  form: StoredForm
  response: StoredResponse | undefined
  /** Its files' names and sizes, by field key. */
  files: Map<string, { name: string; size: number }>
}

/**
 * A field's value as a form post gives it when its key came more than once: a
 * field that takes one value refuses it (a multiple select's values come as an
 * array instead).
 */
export class RepeatedValue {}

/** Why a form takes no answer now, or undefined when it does. The page and the JSON path say the same. */
function closedFormError(form: Pick<StoredForm, 'status'>): HttpError | undefined {
  switch (form.status) {
    case 'active':
      return undefined
    case 'completed':
      return conflict('This form has already been submitted')
    case 'cancelled':
      return new HttpError(410, 'This form has been cancelled')
    case 'expired':
      return new HttpError(410, 'This form has expired')
  }
}

export interface ParsedAnswers {
  data: Record<string, AnswerValue>
  /** Files to store with the response; `data` gets each one's download URL. */
  uploads: Array<{ key: string; upload: Upload }>
  problems: Problem[]
  /** Problems beyond the first PROBLEMS_LISTED were not looked for. */
  moreProblems: boolean
}

/**
 * Turns submitted values into a response's `data`, field by field through the
 * field-type registry. Problems are keyed by JSON Pointer to the field key;
 * at most PROBLEMS_LISTED are looked for. The fields are parsed a slice of
 * time at a time, and the checks that run off the event loop (patterns of
 * older versions) all at once.
 */
export async function parseAnswers(
  fields: FieldDefinition[],
  values: Record<string, unknown>,
  context?: ParseContext,
): Promise<ParsedAnswers> {
  const answers: ParsedAnswers = { data: {}, uploads: [], problems: [], moreProblems: false }
  const problems = new ProblemList()
  const slices = timeSlicer()
  const outcomes: Array<Parsed | Promise<Parsed>> = []
  for (const field of fields) {
    // Own properties only: a field named "constructor" must not read Object.prototype.
    const input = Object.hasOwn(values, field.key) ? values[field.key] : undefined
    const invisible = typeof input === 'string' ? controlCharacterProblem(input, '') : undefined
    if (input instanceof RepeatedValue)
      outcomes.push(rejected('Expected one value; this field was sent more than once', 'invalid_value'))
    else if (invisible) outcomes.push(rejected(invisible.message, invisible.code, invisible.params))
    else outcomes.push(fieldTypes[field.type]!.parse(input, field.config ?? {}, field.required ?? false, context))
    await slices.pause()
  }
  const parsed = await Promise.all(outcomes)
  for (const [index, field] of fields.entries()) {
    const outcome = parsed[index]!
    const path = `/${pointerSegment(field.key)}`
    if (outcome.kind === 'invalid')
      problems.add({
        path,
        message: outcome.message,
        code: outcome.code,
        ...(outcome.params && { params: outcome.params }),
      })
    else if (outcome.kind === 'value') answers.data[field.key] = outcome.value
    else if (outcome.kind === 'upload') answers.uploads.push({ key: field.key, upload: outcome.upload })
    else if (field.required) problems.add({ path, message: 'This field is required', code: 'required' })
  }
  const known = new Set(fields.map((field) => field.key))
  for (const key of Object.keys(values)) {
    if (!known.has(key))
      problems.add({ path: `/${pointerSegment(key)}`, message: 'Unknown field', code: 'unknown_field' })
    if (problems.overflowed) break
  }
  answers.problems = problems.items
  answers.moreProblems = problems.overflowed
  return answers
}

/** Where the owner downloads a response's file (with their key). */
const fileUrl = (baseUrl: string, formId: string, responseId: string, key: string) =>
  `${baseUrl}/api/v1/forms/${formId}/responses/${responseId}/files/${encodeURIComponent(key)}`

/**
 * The one way a human's answer is recorded, for the HTML page and the JSON
 * path alike. `onRecorded` runs once the response is committed (with its
 * event), told whether a webhook delivery was queued with it.
 */
export function createSubmissionService(
  store: Store,
  clock: Clock,
  baseUrl: () => string,
  onRecorded: (form: FormOfAccount, deliveryQueued: boolean) => void,
) {
  /** Which page the form behind a public link shows (its state and title); 404 when there is none. */
  async function publicState(formId: string): Promise<FormPublicState> {
    const id = canonicalUlid(formId)
    const state = id && (await store.forms.findPublicState(id, clock()))
    if (!state) throw formNotFound()
    return state
  }

  /** The form behind a public link, in any state; 404 when there is none. */
  async function publicForm(formId: string): Promise<StoredForm> {
    const id = canonicalUlid(formId)
    const form = id && (await store.forms.find(id, clock()))
    if (!form) throw formNotFound()
    return form
  }

  return {
    publicForm,
    publicState,

    /** A new receipt token for the cookie; `submit` remembers its hash. */
    newReceiptToken: () => randomBytes(32).toString('base64url'),

    /**
     * Spends a receipt token of the form: true once, while it is less than
     * RECEIPT_MS old. One statement deletes it, so two requests racing with
     * one token show one receipt. Anything malformed is simply no receipt.
     */
    async spendReceipt(formId: string, token: string): Promise<boolean> {
      if (!RECEIPT_TOKEN.test(token)) return false
      return store.transaction((tx) => tx.submissions.spendReceipt(formId, sha256(token), clock()))
    },

    /** When a completed form's answer was sent: all its answered page says of it. */
    async answeredAt(formId: string): Promise<number | undefined> {
      const [response] = await store.responses.listForForm(formId)
      return response?.submittedAt
    },

    /** The completed form with its answer and its files' names and sizes: what its receipt shows. */
    async answered(formId: string): Promise<AnsweredForm> {
      const form = await publicForm(formId)
      const [response] = await store.responses.listForForm(form.id)
      const files = new Map<string, { name: string; size: number }>()
      if (response && form.fields.some((field) => field.type === 'file')) {
        for (const file of await store.responses.files(form.id, response.id))
          files.set(file.fieldKey, { name: file.name, size: file.size })
      }
      return { form, response, files }
    },

    // Files kept across a 422 for the next try.
    ...fileHolds(store, clock),

    /**
     * Keeps a valid post for its review page (`page.review`): its texts as
     * the page sent them, and its files, already held. It lasts
     * DRAFT_MS, and no longer than the holds it names (a file that goes would
     * change the answer). Returns the draft's id.
     */
    async saveDraft(
      form: StoredForm,
      answers: Draft['answers'],
      files: Record<string, DraftFile>,
      holdsUntil: number[],
    ): Promise<string> {
      const now = clock()
      const draft: Draft = {
        id: randomBytes(16).toString('base64url'),
        formId: form.id,
        answers,
        files,
        createdAt: now,
        heldUntil: Math.min(now + DRAFT_MS, ...holdsUntil),
      }
      await store.transaction((tx) => tx.submissions.saveDraft(draft, DRAFTS_KEPT))
      return draft.id
    },

    /** The form's live draft of that id; anything else (lapsed, another form's, malformed) is none. */
    async draft(form: Pick<StoredForm, 'id'>, id: string): Promise<Draft | undefined> {
      if (!HOLD_ID.test(id)) return undefined
      return store.submissions.draft(form.id, id, clock())
    },

    /** Forgets holds and receipt tokens that have lapsed (the files' sweep calls it); returns how many. */
    async forgetLapsed(): Promise<number> {
      const now = clock()
      if (!(await store.submissions.anyLapsed(now))) return 0
      return store.transaction((tx) => tx.submissions.forgetLapsed(now))
    },

    /**
     * Records the one response to a form. `values` maps field keys to JSON
     * values, the strings a browser sent, or uploads. Throws 404, 409, 410 or
     * 422 (with a problem per field) as an HttpError.
     *
     * The form is its id, or the form as the caller read it a moment ago (a
     * form post reads it before its body): what a form asks never changes, and
     * whether it still takes an answer is decided as the answer is written.
     */
    async submit(
      formOrId: string | StoredForm,
      values: unknown,
      submitter: Submitter,
      /** `locale`: the page's language, for a form post (its numbers are read as that language writes them). */
      options: { receiptToken?: string; locale?: Locale; region?: string; checkOnly?: boolean } = {},
    ): Promise<RecordedSubmission> {
      const form = typeof formOrId === 'string' ? await publicForm(formOrId) : formOrId
      // A form read a moment ago may have expired since; a cancel is found as the answer is written.
      const expired = form.status === 'active' && form.expiresAt !== null && form.expiresAt <= clock()
      const closed = closedFormError(expired ? { status: 'expired' } : form)
      if (closed) throw closed
      if (!isPlainObject(values))
        throw invalid([{ path: '', message: 'Expected a JSON object of field keys to values', code: 'invalid_type' }])
      const fields = form.fields
      const { data, uploads, problems, moreProblems } = await parseAnswers(
        fields,
        values,
        options.locale === undefined ? undefined : { locale: options.locale, region: options.region },
      )
      if (problems.length > 0) throw invalid(problems, moreProblems)
      // A review page (page.review): the answer checked as its Send will record it, and nothing written.
      if (options.checkOnly) return { id: '', formId: form.id, submittedAt: clock(), checked: { data, uploads } }

      const responseId = newId()
      const newFiles: NewFile[] = uploads.map(({ key, upload }) => {
        data[key] = fileUrl(baseUrl(), form.id, responseId, key)
        return {
          fieldKey: key,
          name: safeFileName(upload.name),
          contentType: safeContentType(upload.type),
          size: upload.size,
          // Its bytes were written as they arrived; recording the answer claims them.
          fileId: upload.fileId,
        }
      })
      const submittedAt = clock()
      const hasFileField = fields.some((field) => field.type === 'file')
      // Answers in the order of the form's fields, whatever order the files were read in.
      const ordered = Object.fromEntries(
        fields.flatMap((f) => (Object.hasOwn(data, f.key) ? [[f.key, data[f.key]!]] : [])),
      )
      const response = {
        id: responseId,
        formId: form.id,
        data: ordered,
        ip: submitter.ip,
        userAgent: submitter.userAgent,
        submittedAt,
      }
      // The webhook body, which is the feed's payload too: built once, sent byte-for-byte on every attempt.
      const payload = completedEventBody({
        formId: form.id,
        formTitle: form.title,
        responseId,
        submittedAt,
        data: ordered,
        metadata: { ip: submitter.ip, user_agent: submitter.userAgent },
        callbackMetadataJson: form.callbackMetadata,
        contextJson: form.context,
      })
      // The response with its files, the form's move to `completed`, its event and delivery commit together or not at all.
      const recorded = await store
        .transaction(async (tx) => {
          // Only an active, unexpired form moves: the first submission to commit wins.
          if (!(await completeForm(tx, form.id, submittedAt))) return undefined
          await recordResponse(tx, response, newFiles)
          // Claimed first (on PostgreSQL that waits for a sweep removing them): then every byte must be there.
          const incomplete = newFiles.length === 0 ? [] : await incompleteUploads(tx, newFiles)
          if (incomplete.length > 0) throw new IncompleteFiles(incomplete)
          const deliveryQueued = await recordEnding(tx, {
            type: FORM_COMPLETED,
            form,
            occurredAt: submittedAt,
            payload,
            responseId,
            now: submittedAt,
          })
          // Files kept across a 422 go with the answer: the one it used is its own now (see the trigger).
          if (hasFileField) await releaseHeldFiles(tx, form.id)
          if (options.receiptToken !== undefined) {
            await tx.submissions.rememberReceipt({
              tokenHash: sha256(options.receiptToken),
              formId: form.id,
              expiresAt: submittedAt + RECEIPT_MS,
            })
          }
          return { deliveryQueued }
        })
        .catch((error: unknown) => {
          if (!(error instanceof IncompleteFiles)) throw error
          // Rolled back: nothing recorded. The person chooses the file again; everything else they sent is kept.
          throw invalid(
            newFiles
              .filter((file) => error.fileIds.includes(file.fileId))
              .map((file) => fileLostProblem(file.fieldKey)),
          )
        })
      if (!recorded) {
        // Another submission (or cancellation, or expiry) got there first.
        throw closedFormError(await publicForm(form.id)) ?? conflict('This form has already been submitted')
      }
      onRecorded(form, recorded.deliveryQueued)
      return { id: responseId, formId: form.id, submittedAt }
    },
  }
}

export type SubmissionService = ReturnType<typeof createSubmissionService>

/** Files of an answer whose bytes are not all in the database (chunks lost): the answer is not recorded. */
class IncompleteFiles extends Error {
  constructor(readonly fileIds: string[]) {
    super('files of the answer are incomplete')
  }
}
