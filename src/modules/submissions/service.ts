import { fieldTypes, type AnswerValue, type FieldDefinition } from '../../fields/index.ts'
import { rejected, type Parsed, type Upload } from '../../fields/types.ts'
import { HttpError, ProblemList, conflict, formNotFound, invalid, pointerSegment, type Problem } from '../../lib/errors.ts'
import type { Store } from '../../db/store.ts'
import { canonicalUlid, newId } from '../../lib/ids.ts'
import { timeSlicer } from '../../lib/slices.ts'
import { controlCharacterProblem, isPlainObject } from '../../lib/validation.ts'
import type { Clock } from '../../lib/time.ts'
import type { FormPublicState, StoredForm } from '../forms/store/index.ts'
import type { NewFile } from '../responses/store/index.ts'
import { FORM_COMPLETED, completedEventBody } from '../webhooks/events.ts'
import type { NewDelivery } from '../webhooks/store/index.ts'

export interface Submitter {
  ip: string | null
  userAgent: string | null
}

export interface RecordedSubmission {
  id: string
  formId: string
  submittedAt: number
}

/** Why a form takes no answer now, or undefined when it does. The page and the JSON path say the same. */
export function closedFormError(form: Pick<StoredForm, 'status'>): HttpError | undefined {
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
export async function parseAnswers(fields: FieldDefinition[], values: Record<string, unknown>): Promise<ParsedAnswers> {
  const answers: ParsedAnswers = { data: {}, uploads: [], problems: [], moreProblems: false }
  const problems = new ProblemList()
  const slices = timeSlicer()
  const outcomes: Array<Parsed | Promise<Parsed>> = []
  for (const field of fields) {
    // Own properties only: a field named "constructor" must not read Object.prototype.
    const input = Object.hasOwn(values, field.key) ? values[field.key] : undefined
    const invisible = typeof input === 'string' ? controlCharacterProblem(input, '') : undefined
    outcomes.push(invisible ? rejected(invisible.message, invisible.code, invisible.params) : fieldTypes[field.type]!.parse(input, field.config ?? {}, field.required ?? false))
    await slices.pause()
  }
  const parsed = await Promise.all(outcomes)
  for (const [index, field] of fields.entries()) {
    const outcome = parsed[index]!
    const path = `/${pointerSegment(field.key)}`
    if (outcome.kind === 'invalid') problems.add({ path, message: outcome.message, code: outcome.code, ...(outcome.params && { params: outcome.params }) })
    else if (outcome.kind === 'value') answers.data[field.key] = outcome.value
    else if (outcome.kind === 'upload') answers.uploads.push({ key: field.key, upload: outcome.upload })
    else if (field.required) problems.add({ path, message: 'This field is required', code: 'required' })
  }
  const known = new Set(fields.map((field) => field.key))
  for (const key of Object.keys(values)) {
    if (!known.has(key)) problems.add({ path: `/${pointerSegment(key)}`, message: 'Unknown field', code: 'unknown_field' })
    if (problems.overflowed) break
  }
  answers.problems = problems.items
  answers.moreProblems = problems.overflowed
  return answers
}

/** Where the owner downloads a response's file (with their key). */
export const fileUrl = (baseUrl: string, formId: string, responseId: string, key: string) =>
  `${baseUrl}/api/v1/forms/${formId}/responses/${responseId}/files/${encodeURIComponent(key)}`

/**
 * The one way a human's answer is recorded, for the HTML page and the JSON
 * path alike. `onRecorded` runs once the response is committed, told
 * whether a webhook delivery was queued with it.
 */
export function createSubmissionService(
  store: Store,
  clock: Clock,
  baseUrl: () => string,
  onRecorded: (formId: string, deliveryQueued: boolean) => void,
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

    /**
     * Records the one response to a form. `values` maps field keys to JSON
     * values, the strings a browser sent, or uploads. Throws 404, 409, 410 or
     * 422 (with a problem per field) as an HttpError.
     *
     * The form is its id, or the form as the caller read it a moment ago (a
     * form post reads it before its body): what a form asks never changes, and
     * whether it still takes an answer is decided as the answer is written.
     */
    async submit(formOrId: string | StoredForm, values: unknown, submitter: Submitter): Promise<RecordedSubmission> {
      const form = typeof formOrId === 'string' ? await publicForm(formOrId) : formOrId
      // A form read a moment ago may have expired since; a cancel is found as the answer is written.
      const expired = form.status === 'active' && form.expiresAt !== null && form.expiresAt <= clock()
      const closed = closedFormError(expired ? { status: 'expired' } : form)
      if (closed) throw closed
      if (!isPlainObject(values)) throw invalid([{ path: '', message: 'Expected a JSON object of field keys to values', code: 'invalid_type' }])
      const fields = form.fields
      const { data, uploads, problems, moreProblems } = await parseAnswers(fields, values)
      if (problems.length > 0) throw invalid(problems, moreProblems)

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
      // Answers in the order of the form's fields, whatever order the files were read in.
      const ordered = Object.fromEntries(fields.flatMap((f) => (Object.hasOwn(data, f.key) ? [[f.key, data[f.key]!]] : [])))
      const response = {
        id: responseId,
        formId: form.id,
        data: ordered,
        ip: submitter.ip,
        userAgent: submitter.userAgent,
        submittedAt,
      }
      const delivery: NewDelivery | undefined = form.callbackUrl === null ? undefined : {
        id: newId(),
        formId: form.id,
        responseId,
        event: FORM_COMPLETED,
        url: form.callbackUrl,
        payload: completedEventBody({
          formId: form.id,
          formTitle: form.title,
          responseId,
          submittedAt,
          data: ordered,
          metadata: { ip: submitter.ip, user_agent: submitter.userAgent },
          callbackMetadataJson: form.callbackMetadata,
          contextJson: form.context,
        }),
        createdAt: submittedAt,
      }
      // The response with its files, the form's move to `completed` and the delivery commit together or not at all.
      // Independent of other answers (the conditional complete settles a race by itself): answers sent
      // together are written together.
      const recorded = await store.transaction(async (tx) => {
        // Only an active, unexpired form moves: the first submission to commit wins.
        if (!(await tx.forms.complete(form.id, submittedAt))) return false
        await tx.responses.insert(response, newFiles)
        if (delivery) await tx.deliveries.enqueue(delivery)
        return true
      }, { independent: true })
      if (!recorded) {
        // Another submission (or cancellation, or expiry) got there first.
        throw closedFormError(await publicForm(form.id)) ?? conflict('This form has already been submitted')
      }
      onRecorded(form.id, delivery !== undefined)
      return { id: responseId, formId: form.id, submittedAt }
    },
  }
}

export type SubmissionService = ReturnType<typeof createSubmissionService>

/** The last path segment of a browser-sent file name, without control characters; never empty. */
function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).at(-1)!.replace(/[\u0000-\u001f\u007f]/g, '').trim()
  return base.slice(0, 255) || 'upload'
}

/** The declared media type when it is one, else the generic binary type. */
function safeContentType(type: string): string {
  return /^[\w.+-]+\/[\w.+-]+$/.test(type) ? type.toLowerCase() : 'application/octet-stream'
}
