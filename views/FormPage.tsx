/** @jsxImportSource @kitajs/html */
import type { FieldDefinition } from '../src/fields/types.ts'
import type { Problem } from '../src/lib/errors.ts'
import type { MessageKey, Translator } from '../src/i18n/index.ts'
import { en } from '../src/i18n/catalogs/en.ts'
import { attr } from './attributes.ts'
import { Field, controlId, type HeldFile } from './Field.tsx'
import { Layout } from './Layout.tsx'
import { RichText } from './RichText.tsx'
import { Sentence, SLOT } from './Sentence.tsx'
import { pageBytes, type PageBytes } from '../src/lib/http.ts'
import { timeSlicer } from '../src/lib/slices.ts'
import type { PageSettings } from '../src/modules/forms/model.ts'

export interface FormView {
  id: string
  title: string
  description: string | null
  fields: FieldDefinition[]
  page: PageSettings
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
}

/** `autofocus` on any focusable element is HTML; @kitajs/html's types know it only on controls. */
const AUTOFOCUS = { autofocus: true } as Record<string, unknown>

/** Where the fields go in the page around them: a comment no escaped text can contain. */
const FIELDS_GO_HERE = `<!--fields-${crypto.randomUUID()}-->`

/**
 * The page as the bytes it is sent as, rendered and encoded a field at a time,
 * with the event loop given a turn whenever a slice of time is used: a form
 * of 100 fields with 200 options each is megabytes of HTML, and neither
 * building nor encoding it in one piece may hold the loop (see htmlPage for
 * how the pieces are sent).
 */
export async function renderFormPage(props: FormPageProps): Promise<PageBytes> {
  const { form, submitted, problems = [], held = {}, t } = props
  const fieldsByKey = new Map(form.fields.map((f) => [f.key, f]))
  const fieldErrors = new Map<string, string>()
  for (const problem of problems) {
    const field = fieldsByKey.get(keyOf(problem.path))
    if (field && !fieldErrors.has(field.key)) fieldErrors.set(field.key, pageMessage(problem, field, t))
  }
  const marked = markedSet(form.fields)
  const slices = timeSlicer()
  const fields: Uint8Array[] = []
  for (const field of form.fields) {
    const html = (
      <Field
        field={field}
        value={submitted ? submitted[field.key] : defaultValue(field)}
        error={fieldErrors.get(field.key)}
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
  return pageBytes([Buffer.from(page.slice(0, at), 'utf8'), ...fields, Buffer.from(page.slice(at + FIELDS_GO_HERE.length), 'utf8')])
}

/** A field's key from a problem's JSON Pointer (`/email` -> `email`). */
const keyOf = (path: string) => path.slice(1).replaceAll('~1', '/').replaceAll('~0', '~')

/**
 * What the page says about a problem, in its language: the field's own
 * `config.error_message` when the API client gave one, else the built-in
 * message for the problem's code, worded for the field's type.
 */
export function pageMessage(problem: Problem, field: FieldDefinition, t: Translator): string {
  const custom = field.config?.error_message
  if (typeof custom === 'string' && custom !== '') return custom
  const params = problem.params ?? {}
  const code = problem.code ?? 'invalid_value'
  const multiple = field.type === 'select' && field.config?.multiple === true
  let key: string
  if (code === 'required') key = field.type === 'checkbox' ? 'error.unchecked' : `error.required.${multiple ? 'select_multiple' : field.type}`
  else if (code === 'step' && params.min !== undefined) key = 'error.step_from'
  else if (`error.${code}.${field.type}` in en) key = `error.${code}.${field.type}`
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

/** A label in the error summary: long ones cut at a word, so each line reads as a link. */
function shortLabel(label: string): string {
  if (label.length <= 48) return label
  const cut = label.slice(0, 48)
  const space = cut.lastIndexOf(' ')
  return `${(space > 24 ? cut.slice(0, space) : cut).trimEnd()}…`
}

/** The form, ready for its one answer; after a refused try, with every problem and the person's input. */
function FormPage({ form, problems = [], t, fieldsHtml, fieldErrors, notice }: FormPageProps & { fieldsHtml: JSX.Element; fieldErrors: Map<string, string> }) {
  const labels = new Map(form.fields.map((f) => [f.key, f.label]))
  const hasFile = form.fields.some((f) => f.type === 'file')
  const zone = form.page.time_zone ?? 'UTC'
  const unlinked = problems.filter((problem) => !labels.has(keyOf(problem.path)))
  return (
    <Layout title={problems.length > 0 ? t.t('page.title_error', { title: form.title }) : form.title} t={t}>
      {problems.length > 0 ? (
        // Focus starts here on a refused try (autofocus: no script needed), so the summary is read first.
        <div class="error-summary" role="alert" aria-labelledby="error-summary-title" tabindex="-1" {...AUTOFOCUS}>
          <h2 id="error-summary-title" safe>
            {t.t('summary.title')}
          </h2>
          <ul>
            {[...fieldErrors].map(([key, message]) => (
              <li>
                <a href={`#${attr(controlId(key))}`}>
                  <Sentence text={t.t('summary.item', { label: SLOT, message })} part={shortLabel(labels.get(key)!)} />
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
      {form.description ? <RichText text={form.description} t={t} class="description" /> : ''}
      <form
        method="post"
        action={`/f/${attr(form.id)}`}
        enctype={hasFile ? 'multipart/form-data' : undefined}
        accept-charset="utf-8"
        novalidate
      >
        {fieldsHtml}
        <div class="actions">
          {/* With a review page, this button goes on to it; the review's own button sends (and takes submit_label). */}
          {form.page.review === true ? (
            <button type="submit" safe>
              {t.t('review.continue')}
            </button>
          ) : form.page.submit_label ? (
            <button type="submit" dir="auto" safe>
              {form.page.submit_label}
            </button>
          ) : (
            <button type="submit" safe>
              {t.t('page.submit')}
            </button>
          )}
        </div>
      </form>
      <p class="footer" safe>
        {t.t('page.footer')}
      </p>
    </Layout>
  )
}

/** The configured default as what a control shows ("true" ticks a checkbox; a multiple select's default is its values). */
function defaultValue(field: FieldDefinition): string | string[] | undefined {
  const value = field.config?.default
  if (value === undefined || value === false) return undefined
  return Array.isArray(value) ? value.map(String) : String(value)
}
