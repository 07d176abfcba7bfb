/** @jsxImportSource @kitajs/html */
import type { FieldDefinition } from '../src/fields/types.ts'
import type { HeldFileView } from '../src/modules/submissions/service.ts'
import type { Problem } from '../src/lib/errors.ts'
import { attr } from './attributes.ts'
import { Field, controlId } from './Field.tsx'
import { Layout } from './Layout.tsx'
import { pageBytes, type PageBytes } from '../src/lib/http.ts'
import { timeSlicer } from '../src/lib/slices.ts'

export interface FormView {
  id: string
  title: string
  description: string | null
  fields: FieldDefinition[]
}

export interface FormPageProps {
  form: FormView
  /** What the person sent, by field key (files excepted); absent on a first visit, when defaults show. */
  submitted?: Record<string, string>
  problems?: Problem[]
  /** Files kept from a refused try, by field key: the page names each and offers to remove or replace it. */
  held?: Record<string, HeldFileView>
}

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
  const { form, submitted, problems = [], held = {} } = props
  const fieldErrors = new Map(problems.map((p) => [keyOf(p.path), p.message]))
  const slices = timeSlicer()
  const fields: Uint8Array[] = []
  for (const field of form.fields) {
    const html = (<Field field={field} value={submitted ? submitted[field.key] : defaultText(field)} error={fieldErrors.get(field.key)} held={held[field.key]} />) as string
    fields.push(Buffer.from(html, 'utf8'))
    await slices.pause()
  }
  const page = (<FormPage {...props} fieldsHtml={FIELDS_GO_HERE} />) as string
  const at = page.indexOf(FIELDS_GO_HERE)
  return pageBytes([Buffer.from(page.slice(0, at), 'utf8'), ...fields, Buffer.from(page.slice(at + FIELDS_GO_HERE.length), 'utf8')])
}

/** A field's key from a problem's JSON Pointer (`/email` -> `email`). */
const keyOf = (path: string) => path.slice(1).replaceAll('~1', '/').replaceAll('~0', '~')

/** The form, ready for its one answer; after a refused try, with every problem and the person's input. */
function FormPage({ form, problems = [], fieldsHtml }: FormPageProps & { fieldsHtml: JSX.Element }) {
  const labels = new Map(form.fields.map((f) => [f.key, f.label]))
  const anyRequired = form.fields.some((f) => f.required)
  const hasFile = form.fields.some((f) => f.type === 'file')
  return (
    <Layout title={problems.length > 0 ? `Error: ${form.title}` : form.title}>
      {problems.length > 0 ? (
        <div class="error-summary" role="alert" aria-labelledby="error-summary-title">
          <h2 id="error-summary-title" safe>There {problems.length === 1 ? 'is a problem' : `are ${problems.length} problems`}</h2>
          <ul>
            {problems.map((problem) => {
              const key = keyOf(problem.path)
              return labels.has(key) ? (
                <li>
                  <a href={`#${controlId(key)}`} safe>
                    {`${labels.get(key)}: ${problem.message}`}
                  </a>
                </li>
              ) : (
                <li safe>{problem.message}</li>
              )
            })}
          </ul>
        </div>
      ) : (
        ''
      )}
      <h1 safe>{form.title}</h1>
      {form.description ? <p class="description" safe>{form.description}</p> : ''}
      {anyRequired ? <p class="required-note">Fields marked (required) must be filled in.</p> : ''}
      <form
        method="post"
        action={`/f/${attr(form.id)}`}
        enctype={hasFile ? 'multipart/form-data' : undefined}
        accept-charset="utf-8"
      >
        {fieldsHtml}
        <div class="actions">
          <button type="submit">Send answer</button>
        </div>
      </form>
      <p class="footer">Your answer goes to whoever sent you this link. A form takes one answer.</p>
    </Layout>
  )
}

/** The configured default as the text a control shows ("true" ticks a checkbox). */
function defaultText(field: FieldDefinition): string | undefined {
  const value = field.config?.default
  return value === undefined || value === false ? undefined : String(value)
}
