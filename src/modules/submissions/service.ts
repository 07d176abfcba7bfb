import { fieldTypes, type AnswerValue, type FieldDefinition } from '../../fields/index.ts'
import { HttpError, conflict, formNotFound, invalid, pointerSegment, type Problem } from '../../lib/errors.ts'
import { canonicalUlid, newId } from '../../lib/ids.ts'
import { isPlainObject } from '../../lib/validation.ts'
import type { Clock } from '../../lib/time.ts'
import type { FormRow, FormStore } from '../forms/store.ts'
import { FORM_COMPLETED, completedEventBody } from '../webhooks/events.ts'
import type { SubmissionStore } from './store.ts'

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
export function closedFormError(form: Pick<FormRow, 'status'>): HttpError | undefined {
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

/**
 * Turns submitted values into a response's `data`, field by field through the
 * field-type registry. Problems are keyed by JSON Pointer to the field key.
 */
export function parseAnswers(
  fields: FieldDefinition[],
  values: Record<string, unknown>,
): { data: Record<string, AnswerValue>; problems: Problem[] } {
  const data: Record<string, AnswerValue> = {}
  const problems: Problem[] = []
  for (const field of fields) {
    const required = field.required ?? false
    // Own properties only: a field named "constructor" must not read Object.prototype.
    const input = Object.hasOwn(values, field.key) ? values[field.key] : undefined
    const parsed = fieldTypes[field.type]!.parse(input, field.config ?? {}, required)
    const path = `/${pointerSegment(field.key)}`
    if (parsed.kind === 'invalid') problems.push({ path, message: parsed.message })
    else if (parsed.kind === 'value') data[field.key] = parsed.value
    else if (required) problems.push({ path, message: 'This field is required' })
  }
  const known = new Set(fields.map((field) => field.key))
  for (const key of Object.keys(values)) {
    if (!known.has(key)) problems.push({ path: `/${pointerSegment(key)}`, message: 'Unknown field' })
  }
  return { data, problems }
}

/** The one way a human's answer is recorded, for the HTML page and the JSON path alike. */
export function createSubmissionService(forms: FormStore, store: SubmissionStore, clock: Clock) {
  /** The form behind a public link, in any state; 404 when there is none. */
  function publicForm(formId: string): FormRow {
    const id = canonicalUlid(formId)
    const form = id && forms.find(id, clock())
    if (!form) throw formNotFound()
    return form
  }

  return {
    publicForm,

    submit(formId: string, values: unknown, submitter: Submitter): RecordedSubmission {
      const form = publicForm(formId)
      const closed = closedFormError(form)
      if (closed) throw closed
      if (!isPlainObject(values)) throw invalid([{ path: '', message: 'Expected a JSON object of field keys to values' }])
      const { data, problems } = parseAnswers(JSON.parse(form.fields), values)
      if (problems.length > 0) throw invalid(problems)

      const submittedAt = clock()
      const response = {
        id: newId(),
        form_id: form.id,
        data: JSON.stringify(data),
        ip: submitter.ip,
        user_agent: submitter.userAgent,
        submitted_at: submittedAt,
      }
      const delivery = form.callback_url === null ? undefined : {
        id: newId(),
        form_id: form.id,
        response_id: response.id,
        event: FORM_COMPLETED,
        url: form.callback_url,
        payload: completedEventBody({
          formId: form.id,
          formTitle: form.title,
          responseId: response.id,
          submittedAt,
          data,
          metadata: { ip: submitter.ip, user_agent: submitter.userAgent },
          callbackMetadataJson: form.callback_metadata,
          contextJson: form.context,
        }),
        created_at: submittedAt,
      }
      if (!store.record(response, delivery)) {
        // Another submission (or cancellation, or expiry) got there first.
        throw closedFormError(publicForm(form.id)) ?? conflict('This form has already been submitted')
      }
      return { id: response.id, formId: form.id, submittedAt }
    },
  }
}

export type SubmissionService = ReturnType<typeof createSubmissionService>
