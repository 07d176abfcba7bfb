/** @jsxImportSource @kitajs/html */
import { Type } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { FormPage, type FormView } from '../../../views/FormPage.tsx'
import { StatusPage } from '../../../views/StatusPage.tsx'
import { submissionBodyLimit, type FieldDefinition } from '../../fields/index.ts'
import { Upload } from '../../fields/types.ts'
import { HttpError } from '../../lib/errors.ts'
import { clientAddress, htmlPage, isFormContentType, isJsonContentType, readFormEntries, readJson, type ResponseSet } from '../../lib/http.ts'
import { apiDoc } from '../../lib/openapi.ts'
import type { RateLimiter } from '../../lib/rate-limit.ts'
import { ApiTime, JsonObject, Ulid } from '../../lib/schemas.ts'
import { createLruCache } from '../../lib/lru.ts'
import { formatApiTime } from '../../lib/time.ts'
import type { FormRow } from '../forms/store.ts'
import type { SubmissionService } from './service.ts'

export interface SubmissionRouteOptions {
  trustProxy: boolean
  /** Per client address, for every POST to a public form. */
  publicLimiter: RateLimiter
}

const SubmissionReceipt = Type.Object({ id: Ulid, form_id: Ulid, submitted_at: ApiTime }, { title: 'SubmissionReceipt' })

const formView = (form: FormRow): FormView => ({
  id: form.id,
  title: form.title,
  description: form.description,
  fields: JSON.parse(form.fields) as FieldDefinition[],
})

/**
 * The page of a form that takes no answer: a thank-you once answered (409 when
 * someone posts to it again), 410 when cancelled or expired.
 */
function closedPage(set: ResponseSet, form: FormRow, posted: boolean): string {
  const about = { id: form.id, title: form.title }
  if (form.status === 'completed') return htmlPage(set, <StatusPage kind={posted ? 'answered' : 'thanks'} form={about} />, posted ? 409 : 200)
  return htmlPage(set, <StatusPage kind={form.status === 'cancelled' ? 'cancelled' : 'expired'} form={about} />, 410)
}

/**
 * A form post as the submission service takes it: strings and uploads by
 * field key (keys starting with "_" belong to the page, not the form), and the
 * strings alone, to show the person again if something needs fixing.
 */
async function readFormPost(request: Request, limit: number) {
  // No prototype: a field key can never reach Object.prototype.
  const values: Record<string, string | Upload> = Object.create(null)
  const typed: Record<string, string> = Object.create(null)
  for (const [key, entry] of await readFormEntries(request, limit)) {
    if (key.startsWith('_')) continue
    if (typeof entry === 'string') {
      values[key] = entry
      typed[key] = entry
    } else {
      values[key] = new Upload(entry.filename, entry.type, entry.bytes)
    }
  }
  return { values, typed }
}

/** Rendered form pages kept for reuse: what a form shows never changes once it is created. */
const RENDERED_PAGES_KEPT = 500

/** The public side: the page a person answers, and where answers are sent (from that page or a custom front end). */
export function submissionRoutes(submissions: SubmissionService, options: SubmissionRouteOptions) {
  const renderedPages = createLruCache<string>(RENDERED_PAGES_KEPT)
  return new Elysia({ name: 'submissions' })
    .get(
      '/f/:id',
      ({ params, set }) => {
        // The state is read every time (answered, cancelled or expired shows another page); the form itself is rendered once.
        const form = submissions.publicForm(params.id)
        if (form.status !== 'active') return closedPage(set, form, false)
        return htmlPage(set, renderedPages.getOrMake(form.id, () => (<FormPage form={formView(form)} />) as string))
      },
      {
        detail: apiDoc({
          tag: 'Submissions',
          auth: false,
          summary: 'The form page (HTML)',
          description: 'What the person you share the link with sees: the form while it is active, else a page saying it was answered (200), cancelled or expired (410).',
          params: { id: 'Form id' },
          responses: { 200: 'The form, or the thank-you page once answered (text/html)' },
          errors: [404, 410],
        }),
      },
    )
    .post(
      '/f/:id',
      async ({ request, params, server, set, redirect }) => {
        // A browser tells us when another site's page made this request: never accept that.
        if (request.headers.get('sec-fetch-site') === 'cross-site') {
          throw new HttpError(403, 'Cross-site submissions are refused')
        }
        const ip = clientAddress(request, server?.requestIP(request)?.address, options.trustProxy)
        const decision = options.publicLimiter.take(ip ?? 'unknown')
        if (!decision.allowed) {
          throw new HttpError(429, 'Too many submissions from this address; try again shortly', undefined, {
            'Retry-After': String(decision.retryAfterSeconds),
          })
        }
        const submitter = { ip, userAgent: request.headers.get('user-agent') }
        const contentType = request.headers.get('content-type')

        if (isJsonContentType(contentType)) {
          const recorded = await submissions.submit(params.id, await readJson(request), submitter)
          set.status = 201
          return { id: recorded.id, form_id: recorded.formId, submitted_at: formatApiTime(recorded.submittedAt) }
        }
        if (!isFormContentType(contentType)) {
          throw new HttpError(415, 'Send the answers as a form post or as application/json')
        }

        // Before reading what may be a large upload: is there a form, and does it take an answer?
        const form = submissions.publicForm(params.id)
        if (form.status !== 'active') return closedPage(set, form, true)
        const view = formView(form)
        const { values, typed } = await readFormPost(request, submissionBodyLimit(view.fields))
        try {
          await submissions.submit(form.id, values, submitter)
        } catch (error) {
          if (!(error instanceof HttpError)) throw error
          if (error.status === 422 && error.problems) {
            return htmlPage(set, <FormPage form={view} submitted={typed} problems={error.problems} />, 422)
          }
          // Answered, cancelled or expired while this person was typing.
          if (error.status === 409 || error.status === 410) return closedPage(set, submissions.publicForm(form.id), true)
          throw error
        }
        // See Other: the thank-you page, which a refresh can never send again.
        return redirect(`/f/${form.id}`, 303)
      },
      {
        detail: apiDoc({
          tag: 'Submissions',
          auth: false,
          summary: 'Submit the answer to a form',
          description:
            'The form page posts here (application/x-www-form-urlencoded or multipart/form-data; 303 to the thank-you page, or 422 with the page and its errors). ' +
            'Custom front ends send application/json: the data object itself, field key to value; 201 with a receipt. The same rules apply to both; the first answer wins.',
          params: { id: 'Form id' },
          body: JsonObject,
          responses: { 201: SubmissionReceipt, 303: 'Recorded (form post): on to the thank-you page' },
          errors: [400, 403, 404, 409, 410, 413, 415, 422, 429],
        }),
      },
    )
}
