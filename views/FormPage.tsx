/** @jsxImportSource @kitajs/html */

import { DATE_PARTS, datePartName, type TypedDateParts } from '../src/fields/date.ts'
import type { FieldDefinition } from '../src/fields/types.ts'
import { en } from '../src/i18n/catalogs/en.ts'
import type { MessageKey, Translator } from '../src/i18n/index.ts'
import { writeNumber } from '../src/i18n/numbers.ts'
import type { Problem } from '../src/lib/errors.ts'
import { insertIntoPage, type PageBytes, pageBytes } from '../src/lib/http.ts'
import { timeSlicer } from '../src/lib/slices.ts'
import { attr } from './attributes.ts'
import { controlId, Field, type HeldFile } from './Field.tsx'
import { Layout } from './Layout.tsx'
import { RichText } from './RichText.tsx'
import { SendButton } from './SendButton.tsx'
import { Sentence, SLOT } from './Sentence.tsx'

/** What of a form's page settings (CONTRACT 11) the page itself shows. */
interface PageWording {
  sender?: string
  submit_label?: string
  time_zone?: string
  review?: boolean
}

export interface FormView {
  id: string
  title: string
  description: string | null
  fields: FieldDefinition[]
  page: PageWording
  /** When the form stops taking an answer (epoch ms), or null. */
  expiresAt: number | null
}

export interface FormPageProps {
  form: FormView
  t: Translator
  /** What the person sent, by field key (files excepted); absent on a first visit, when defaults show. */
  submitted?: Record<string, string | string[]>
  problems?: Problem[]
  /** Files sent with the refused try and kept, by field key. */
  held?: Record<string, HeldFile>
  /** Said above the form: why it is shown again (a review's answers lapsed, CONTRACT 14). */
  notice?: string
  /**
   * The console's preview (CONTRACT 15): this banner first, and a form that
   * cannot be sent (no action, every control disabled).
   */
  preview?: JSX.Element
}

/** `autofocus` on any focusable element is HTML; @kitajs/html's types know it only on controls. */
const AUTOFOCUS = { autofocus: true } as Record<string, unknown>

/** Where the fields go in the page around them: a comment no escaped text can contain. */
const FIELDS_GO_HERE = `<!--fields-${crypto.randomUUID()}-->`
/** Where how long is left goes, under the deadline: written at each visit, since the page is kept rendered. */
const TIME_LEFT_GOES_HERE = `<!--time-left-${crypto.randomUUID()}-->`

/** Under this much time left, the page says how long is left (CONTRACT 14). */
const TIME_LEFT_SHOWN_MS = 48 * 3_600_000

/** A form page's bytes, and where under its deadline (a byte offset in its first piece) how long is left goes. */
export type FormPageBytes = PageBytes & { timeLeft?: { at: number; expiresAt: number } }

/**
 * The page as sent at `now`: when its deadline is less than 48 hours away,
 * with how long is left, written for the page's language; else as kept.
 */
export function withTimeLeft(page: FormPageBytes, now: number, t: Translator): PageBytes {
  const left = page.timeLeft === undefined ? 0 : page.timeLeft.expiresAt - now
  if (page.timeLeft === undefined || left <= 0 || left >= TIME_LEFT_SHOWN_MS) return page
  const html = (
    <p class="closes-in" safe>
      {t.t('page.closes_in', { duration: t.duration(left) })}
    </p>
  ) as string
  return insertIntoPage(page, page.timeLeft.at, Buffer.from(html, 'utf8'))
}

/**
 * The page as the bytes it is sent as, rendered and encoded a field at a time,
 * with the event loop given a turn whenever a slice of time is used: a form
 * of 100 fields with 200 options each is megabytes of HTML, and neither
 * building nor encoding it in one piece may hold the loop (see htmlPage for
 * how the pieces are sent).
 */
export async function renderFormPage(props: FormPageProps): Promise<FormPageBytes> {
  const { form, submitted, problems = [], held = {}, t } = props
  const fieldsByKey = new Map(form.fields.map((f) => [f.key, f]))
  const fieldErrors = new Map<string, string>()
  /** Which of a memorable date's boxes the problem is in (all of them when not said). */
  const partsInError = new Map<string, string[]>()
  for (const problem of problems) {
    const field = fieldsByKey.get(keyOf(problem.path))
    if (field && !fieldErrors.has(field.key)) {
      fieldErrors.set(field.key, pageMessage(problem, field, t))
      if (typeof problem.params?.parts === 'string') partsInError.set(field.key, problem.params.parts.split(' '))
    }
  }
  const marked = markedSet(form.fields)
  const slices = timeSlicer()
  const fields: Uint8Array[] = []
  for (const field of form.fields) {
    const html = (
      <Field
        field={field}
        value={submitted ? submitted[field.key] : defaultValue(field, t)}
        error={fieldErrors.get(field.key)}
        errorParts={partsInError.get(field.key)}
        typedParts={submitted ? typedDateParts(submitted, field.key) : undefined}
        marked={marked}
        held={held[field.key]}
        t={t}
      />
    ) as string
    fields.push(Buffer.from(html, 'utf8'))
    await slices.pause()
  }
  const page = (<FormPage {...props} fieldErrors={fieldErrors} fieldsHtml={FIELDS_GO_HERE} />) as string
  const at = page.indexOf(FIELDS_GO_HERE)
  let head = page.slice(0, at)
  const timeLeftAt = head.indexOf(TIME_LEFT_GOES_HERE)
  if (timeLeftAt !== -1) head = head.slice(0, timeLeftAt) + head.slice(timeLeftAt + TIME_LEFT_GOES_HERE.length)
  const bytes = pageBytes([
    Buffer.from(head, 'utf8'),
    ...fields,
    Buffer.from(page.slice(at + FIELDS_GO_HERE.length), 'utf8'),
  ])
  if (timeLeftAt === -1 || form.expiresAt === null) return bytes
  return { ...bytes, timeLeft: { at: Buffer.byteLength(head.slice(0, timeLeftAt), 'utf8'), expiresAt: form.expiresAt } }
}

/** What the person typed in a memorable date's boxes, when the post had them. */
function typedDateParts(submitted: Record<string, string | string[]>, key: string): TypedDateParts | undefined {
  const typed = DATE_PARTS.map((part) => submitted[datePartName(part, key)])
  if (typed.every((part) => part === undefined)) return undefined
  const [day, month, year] = typed.map((part) => (typeof part === 'string' ? part : ''))
  return { day: day!, month: month!, year: year! }
}

/** A field's key from a problem's JSON Pointer (`/email` -> `email`). */
const keyOf = (path: string) => path.slice(1).replaceAll('~1', '/').replaceAll('~0', '~')

/**
 * What the page says about a problem, in its language: the field's own
 * `config.error_message` when the API client gave one, else the built-in
 * message for the problem's code, worded for the field's type.
 */
function pageMessage(problem: Problem, field: FieldDefinition, t: Translator): string {
  const custom = field.config?.error_message
  if (typeof custom === 'string' && custom !== '') return custom
  const params = problem.params ?? {}
  const code = problem.code ?? 'invalid_value'
  const multiple = field.type === 'select' && field.config?.multiple === true
  let key: string
  // A field type may name the words itself, when its code alone cannot tell (a date's missing part, a one-day range).
  if (typeof params.wording === 'string') key = params.wording
  else if (code === 'required')
    key = field.type === 'checkbox' ? 'error.unchecked' : `error.required.${multiple ? 'select_multiple' : field.type}`
  else if (code === 'step' && params.min !== undefined) key = 'error.step_from'
  // The limit, and by how much the answer is over it (GOV.UK's character count, said once it is sent).
  else if (code === 'too_long' && typeof params.over === 'number') {
    return t.t('error.too_long_by', { limit: t.t('error.too_long', { count: params.count ?? 0 }), count: params.over })
  } else if (`error.${code}.${field.type}` in en) key = `error.${code}.${field.type}`
  else key = `error.${code}`
  return t.t((key in en ? key : 'error.invalid_value') as MessageKey, params)
}

/**
 * GOV.UK's advice: mark whichever of required and optional is the smaller
 * set, the same way throughout. When every field is the same, none is marked.
 */
function markedSet(fields: FieldDefinition[]): 'required' | 'optional' {
  const required = fields.filter((f) => f.required).length
  return fields.length - required <= required ? 'optional' : 'required'
}

/** The form, ready for its one answer; after a refused try, with every problem and the person's input. */
function FormPage({
  form,
  problems = [],
  t,
  fieldsHtml,
  fieldErrors,
  notice,
  preview,
}: FormPageProps & { fieldsHtml: JSX.Element; fieldErrors: Map<string, string> }) {
  const labels = new Map(form.fields.map((f) => [f.key, f.label]))
  const hasFile = form.fields.some((f) => f.type === 'file')
  const zone = form.page.time_zone ?? 'UTC'
  const unlinked = problems.filter((problem) => !labels.has(keyOf(problem.path)))
  return (
    <Layout title={problems.length > 0 ? t.t('page.title_error', { title: form.title }) : form.title} t={t}>
      {preview === undefined ? '' : <div class="preview-banner">{preview}</div>}
      {problems.length > 0 ? (
        // Focus starts here on a refused try (autofocus: no script needed), so the summary is read first.
        <div class="error-summary" role="alert" aria-labelledby="error-summary-title" tabindex="-1" {...AUTOFOCUS}>
          <h2 id="error-summary-title" safe>
            {t.t('summary.title')}
          </h2>
          <ul>
            {[...fieldErrors].map(([key, message]) => (
              <li>
                {/* The field's own message, as GOV.UK's summary repeats it: the link takes the person to the field and its label. */}
                <a href={`#${attr(controlId(key))}`} dir="auto" safe>
                  {message}
                </a>
              </li>
            ))}
            {unlinked.map(() => (
              <li safe>{t.t('error.invalid_value')}</li>
            ))}
          </ul>
        </div>
      ) : (
        ''
      )}
      {notice ? (
        <div class="notice">
          <p safe>{notice}</p>
        </div>
      ) : (
        ''
      )}
      {form.page.sender ? (
        <p class="sender">
          <Sentence text={t.t('page.asked_by', { sender: SLOT })} part={form.page.sender} />
        </p>
      ) : (
        ''
      )}
      <h1 dir="auto" safe>
        {form.title}
      </h1>
      {form.expiresAt !== null ? (
        <p class="deadline" safe>
          {t.t('page.answer_by', { deadline: t.dateTime(form.expiresAt, zone) })}
        </p>
      ) : (
        ''
      )}
      {form.expiresAt !== null ? TIME_LEFT_GOES_HERE : ''}
      {form.description ? <RichText text={form.description} t={t} class="description" /> : ''}
      {preview === undefined ? (
        <form
          method="post"
          action={`/f/${attr(form.id)}`}
          enctype={hasFile ? 'multipart/form-data' : undefined}
          accept-charset="utf-8"
          novalidate
        >
          {fieldsHtml}
          <FormActions form={form} t={t} />
        </form>
      ) : (
        <form>
          <fieldset disabled class="preview-fields">
            {fieldsHtml}
            <FormActions form={form} t={t} />
          </fieldset>
        </form>
      )}
      <p class="footer" safe>
        {t.t('page.footer')}
      </p>
    </Layout>
  )
}

/** The form's button: on to the review page when it has one, else Send. */
function FormActions({ form, t }: { form: FormView; t: Translator }) {
  return (
    <div class="actions">
      {/* With a review page, this button goes on to it; the review's own button sends (and takes submit_label). */}
      {form.page.review === true ? (
        <button type="submit" safe>
          {t.t('review.continue')}
        </button>
      ) : (
        <SendButton label={form.page.submit_label} t={t} />
      )}
    </div>
  )
}

/** The configured default as what a control shows ("true" ticks a checkbox; a multiple select's default is its values; a number as the page's language writes it). */
function defaultValue(field: FieldDefinition, t: Translator): string | string[] | undefined {
  const value = field.config?.default
  if (value === undefined || value === false) return undefined
  if (field.type === 'number' && typeof value === 'number') return writeNumber(t.locale, value)
  return Array.isArray(value) ? value.map(String) : String(value)
}
