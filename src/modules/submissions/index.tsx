/** @jsxImportSource @kitajs/html */
import { Type } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { type FormPageBytes, type FormView, renderFormPage, withTimeLeft } from '../../../views/FormPage.tsx'
import { AnsweredPage, ReceiptPage } from '../../../views/ReceiptPage.tsx'
import { ReviewPage, type ReviewView } from '../../../views/ReviewPage.tsx'
import { type SentAnswer, SentAnswers } from '../../../views/SentAnswers.tsx'
import { type FileLimit, StatusPage } from '../../../views/StatusPage.tsx'
import { composeDate, DATE_PARTS, datePartName, type UnreadableDate } from '../../fields/date.ts'
import { fileMaxSize } from '../../fields/file.ts'
import { type FieldDefinition, submissionBodyLimit } from '../../fields/index.ts'
import { Upload } from '../../fields/types.ts'
import {
  languageOfTag,
  negotiateLanguage,
  rememberPageLanguage,
  type Translator,
  translator,
} from '../../i18n/index.ts'
import { HttpError, type Problem } from '../../lib/errors.ts'
import type { FormEntry } from '../../lib/form-data.ts'
import { clientAddress, htmlPage, isFormContentType, isJsonContentType, type ResponseSet } from '../../lib/http.ts'
import { createLruCache } from '../../lib/lru.ts'
import { apiDoc } from '../../lib/openapi.ts'
import type { RateLimiter } from '../../lib/rate-limit.ts'
import { API_BODY_LIMIT, type BodyReader } from '../../lib/request-body.ts'
import { ApiTime, JsonObject, Ulid } from '../../lib/schemas.ts'
import { type Clock, formatApiTime } from '../../lib/time.ts'
import type { PageSettings } from '../forms/model.ts'
import type { FormPublicState, StoredForm } from '../forms/store/index.ts'
import type { FileStorage, IncomingFile } from '../responses/files.ts'
import type { StoredResponse } from '../responses/store/index.ts'
import {
  draftFilesKept,
  draftFormPage,
  draftOfPost,
  heldViews,
  lapsedDraftPage,
  reviewPost,
  sentAnswers,
} from './review.tsx'
import {
  type AnsweredForm,
  type HeldFileView,
  type PostedHolds,
  RECEIPT_MS,
  RepeatedValue,
  type SubmissionService,
} from './service.ts'

export interface SubmissionRouteOptions {
  trustProxy: boolean
  /** Per client address, for every POST to a public form. */
  publicLimiter: RateLimiter
  bodies: BodyReader
  /** Where uploaded files' bytes go as they arrive. */
  fileStorage: FileStorage
  baseUrl: () => string
  renderedPages: RenderedPages
  /** Now, for how long is left to answer. */
  clock: Clock
}

const SubmissionReceipt = Type.Object(
  { id: Ulid, form_id: Ulid, submitted_at: ApiTime },
  { title: 'SubmissionReceipt' },
)

const formView = (form: StoredForm): FormView => ({
  id: form.id,
  title: form.title,
  description: form.description,
  fields: form.fields,
  page: form.page,
  expiresAt: form.expiresAt,
})

/**
 * The language a form's pages speak to this request: the form's `page.locale`
 * when its author set one, else the best match for the browser's
 * Accept-Language, else English (CONTRACT 11).
 */
function pageLanguage(page: PageSettings | undefined, request: Request): Translator {
  // Dates take the region of the tag that chose the language (de-AT, or the Accept-Language range that matched).
  const chosen =
    (page?.locale === undefined ? undefined : languageOfTag(page.locale)) ??
    negotiateLanguage(request.headers.get('accept-language'))
  return rememberPageLanguage(request, translator(chosen.locale, chosen.region))
}

/**
 * The form a page request is about, once its route knows it: an error page for
 * that request (413, 408, 503 from reading the post) names the form, links
 * back to it and, when too large, says what each file question takes.
 */
const requestForms = new WeakMap<Request, { id: string; title: string; fileLimits: FileLimit[] }>()

export const pageFormOf = (request: Request) => requestForms.get(request)

function rememberPageForm(request: Request, form: FormView) {
  const fileLimits = form.fields
    .filter((field) => field.type === 'file')
    .map((field) => ({ label: field.label, bytes: fileMaxSize(field.config) }))
  requestForms.set(request, { id: form.id, title: form.title, fileLimits })
}

/**
 * The page of a form that takes no answer: a thank-you once answered (409 when
 * someone posts to it again), 410 when cancelled or expired. A post's page
 * shows what it sent, so that nothing typed is lost (CONTRACT 14).
 */
function closedPage(
  set: ResponseSet,
  form: FormPublicState,
  posted: boolean,
  t: Translator,
  sent?: SentAnswer[],
): string {
  const about = { id: form.id, title: form.title }
  const kind = form.status === 'completed' ? 'answered' : form.status === 'cancelled' ? 'cancelled' : 'expired'
  const page = (
    <StatusPage kind={kind} form={about} t={t}>
      {sent ? <SentAnswers answers={sent} title={form.title} t={t} recordedSaid={kind === 'answered'} /> : ''}
    </StatusPage>
  )
  return htmlPage(set, page, kind === 'answered' ? (posted ? 409 : 200) : 410)
}

/**
 * A form post as the submission service takes it: strings and uploads by
 * field key (keys starting with "_" belong to the page, not the form), the
 * strings alone, to show the person again if something needs fixing, and
 * what the page says of files kept from the last try (`_held_<key>`,
 * `_remove_<key>`). A multiple select's key comes once per ticked box: its
 * values are collected, in the order sent, into an array (nothing ticked:
 * absent). Any other key sent more than once is a RepeatedValue, which the
 * service refuses (the page shows the first value sent): never "the last one
 * wins" (CONTRACT 13a). A memorable date's three boxes (`_day_<key>`,
 * `_month_<key>`, `_year_<key>`) become its field's `YYYY-MM-DD` value (none
 * when all are empty; an UnreadableDate the date field refuses when they name
 * no date), and are kept as typed, to show again.
 */
function formPostValues(entries: Array<FormEntry<IncomingFile>>, fields: FieldDefinition[]) {
  const multiple = new Set(
    fields.filter((field) => field.type === 'select' && field.config?.multiple === true).map((field) => field.key),
  )
  // No prototype: a field key can never reach Object.prototype.
  const values: Record<string, string | string[] | Upload | RepeatedValue | UnreadableDate> = Object.create(null)
  const typed: Record<string, string | string[]> = Object.create(null)
  const holds: PostedHolds = { ids: new Map(), removed: new Set() }
  const dateBoxes = new Map(
    fields
      .filter((field) => field.type === 'date')
      .flatMap((field) => DATE_PARTS.map((part) => [datePartName(part, field.key), field.key])),
  )
  const datesTyped = new Set<string>()
  const datesRepeated = new Set<string>()
  for (const [key, entry] of entries) {
    if (key.startsWith('_')) {
      if (typeof entry !== 'string') continue
      const dateKey = dateBoxes.get(key)
      if (dateKey !== undefined) {
        // A box sent twice is the field's value sent twice.
        if (key in typed) datesRepeated.add(dateKey)
        else typed[key] = entry
        datesTyped.add(dateKey)
      } else if (key.startsWith(HELD_PREFIX)) holds.ids.set(key.slice(HELD_PREFIX.length), entry)
      else if (key.startsWith(REMOVE_PREFIX)) holds.removed.add(key.slice(REMOVE_PREFIX.length))
      continue
    }
    if (typeof entry === 'string' && multiple.has(key)) {
      const chosen = typed[key]
      if (Array.isArray(chosen)) chosen.push(entry)
      else {
        values[key] = typed[key] = [entry]
      }
    } else if (key in values) {
      values[key] = REPEATED
    } else if (typeof entry === 'string') {
      values[key] = entry
      typed[key] = entry
    } else {
      values[key] = new Upload(entry.filename, entry.type, entry.size, entry.fileId)
    }
  }
  for (const key of datesTyped) {
    const parts = { day: '', month: '', year: '' }
    for (const part of DATE_PARTS) parts[part] = (typed[datePartName(part, key)] as string | undefined) ?? ''
    const composed = composeDate(parts)
    if (key in values || datesRepeated.has(key)) values[key] = REPEATED
    else if (composed !== undefined) values[key] = composed
    // What the page shows of it elsewhere (the boxes show the parts): the date, or what was typed.
    typed[key] ??= typeof composed === 'string' ? composed : `${parts.day} ${parts.month} ${parts.year}`.trim()
  }
  return { values, typed, holds }
}

const REPEATED = new RepeatedValue()

/** The page's names for a file kept from the last try, and for removing it (views/Field.tsx writes them). */
const HELD_PREFIX = '_held_'
const REMOVE_PREFIX = '_remove_'

/** The cookie that carries a receipt token from the 303 to the page it leads to. */
const RECEIPT_COOKIE = 'intake_receipt'

/** The receipt token the request's cookies carry, if any. */
function receiptToken(request: Request): string | undefined {
  const header = request.headers.get('cookie')
  if (header === null) return undefined
  for (const part of header.split(';')) {
    const at = part.indexOf('=')
    if (at !== -1 && part.slice(0, at).trim() === RECEIPT_COOKIE) return part.slice(at + 1).trim()
  }
  return undefined
}

/**
 * The receipt cookie: only this form's page receives it, never another
 * site's request, never a script; over https only when intake is served so.
 * `maxAgeSeconds` 0 clears it.
 */
function receiptCookie(formId: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${RECEIPT_COOKIE}=${value}; Path=/f/${formId}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`
}

/** What the person sent, shown once right after sending (its token spent now). */
function receiptPage(set: ResponseSet, answered: AnsweredForm & { response: StoredResponse }, t: Translator): string {
  const { form, response, files } = answered
  const view = {
    title: form.title,
    answers: form.fields.map((field) => ({ field, value: response.data[field.key], file: files.get(field.key) })),
    submittedAt: response.submittedAt,
    timeZone: form.page.time_zone ?? 'UTC',
    successMessage: form.page.success_message,
  }
  return htmlPage(set, <ReceiptPage t={t} view={view} />)
}

/** Every other visit to a completed form: that it was answered, and when; nothing of the answer, so only the state and that time are read. */
function answeredPage(
  set: ResponseSet,
  state: FormPublicState,
  submittedAt: number | undefined,
  t: Translator,
): string {
  const view = {
    title: state.title,
    submittedAt,
    timeZone: state.page.time_zone ?? 'UTC',
    successMessage: state.page.success_message,
  }
  return htmlPage(set, <AnsweredPage t={t} view={view} />)
}

/** The most bytes of each file field that are kept: its max_size (a file beyond it is refused; a part for no file field keeps nothing). */
function fileAllowances(fields: FieldDefinition[]): Map<string, number> {
  return new Map(fields.filter((field) => field.type === 'file').map((field) => [field.key, fileMaxSize(field.config)]))
}

/**
 * A browser's POST made by another site's page: `Sec-Fetch-Site` says so (in
 * any case), or, where a browser sends no such header, `Origin` names an
 * origin that is neither intake's (the base URL's) nor the request's own.
 * `Origin: null` (sent under `Referrer-Policy: no-referrer`) is not.
 */
function isCrossSite(request: Request, baseUrl: string): boolean {
  const fetchSite = request.headers.get('sec-fetch-site')
  if (fetchSite !== null) return fetchSite.trim().toLowerCase() === 'cross-site'
  const origin = request.headers.get('origin')
  if (origin === null || origin.trim() === '' || origin.trim().toLowerCase() === 'null') return false
  const sender = originOf(origin.trim())
  if (sender === undefined) return true
  // The request's own origin is what its Host header names (Bun builds request.url from it).
  return sender !== originOf(baseUrl) && sender !== originOf(request.url)
}

const isHttps = (url: string) => url.toLowerCase().startsWith('https:')

/** The serialised origin of a URL (scheme, host and a non-default port, lower case), or undefined. */
function originOf(url: string): string | undefined {
  try {
    const origin = new URL(url).origin
    return origin === 'null' ? undefined : origin
  } catch {
    return undefined
  }
}

/**
 * Rendered form pages kept for reuse, as the bytes they are sent as (what a
 * form shows never changes once it is created), bounded in bytes; a larger
 * page is rendered each time.
 */
const RENDERED_PAGES_KEPT = { maxBytes: 64 * 1024 * 1024, maxEntryBytes: 16 * 1024 * 1024 }

/** A form's pages kept at most, one per language and region its readers asked for (the oldest goes first). */
const PAGE_VARIANTS_KEPT = 32

/**
 * The rendered pages of forms, by form id, then by what a page varies in:
 * its language and the region its dates are written with. A form's are
 * forgotten together when it is answered, cancelled or deleted.
 */
export function createRenderedPages() {
  type Variants = Map<string, FormPageBytes>
  const total = (variants: Variants) => [...variants.values()].reduce((bytes, page) => bytes + page.size, 0)
  const forms = createLruCache<Variants>({ ...RENDERED_PAGES_KEPT, sizeOf: total })
  const variantOf = (t: Translator) => (t.region === undefined ? t.locale : `${t.locale} ${t.region}`)
  return {
    get: (formId: string, t: Translator) => forms.get(formId)?.get(variantOf(t)),
    set(formId: string, t: Translator, page: FormPageBytes): FormPageBytes {
      if (page.size > RENDERED_PAGES_KEPT.maxEntryBytes) return page
      // A new map each time: the cache counts an entry's bytes when it is set.
      const variants: Variants = new Map(forms.get(formId))
      variants.delete(variantOf(t))
      variants.set(variantOf(t), page)
      for (const oldest of variants.keys()) {
        if (variants.size <= PAGE_VARIANTS_KEPT && total(variants) <= RENDERED_PAGES_KEPT.maxEntryBytes) break
        variants.delete(oldest)
      }
      forms.set(formId, variants)
      return page
    },
    forget(formId: string) {
      forms.delete(formId)
    },
  }
}
export type RenderedPages = ReturnType<typeof createRenderedPages>

/** The public side: the page a person answers, and where answers are sent (from that page or a custom front end). */
export function submissionRoutes(submissions: SubmissionService, options: SubmissionRouteOptions) {
  const { bodies, fileStorage, renderedPages } = options
  return new Elysia({ name: 'submissions' })
    .get(
      '/f/:id',
      async ({ params, set, request, query }) => {
        // The state is read every time (answered, cancelled or expired shows another page); the form itself is rendered once per language.
        const state = await submissions.publicState(params.id)
        const t = pageLanguage(state.page, request)
        if (state.page.locale === undefined) set.headers.vary = 'Accept-Language'
        if (state.status === 'completed') {
          const token = receiptToken(request)
          let receipt = false
          if (token !== undefined) {
            // Shown once: the cookie goes with this visit, whatever it held.
            set.headers['set-cookie'] = receiptCookie(state.id, '', 0, isHttps(options.baseUrl()))
            // Only a GET spends it (a HEAD sends no page).
            receipt = request.method === 'GET' && (await submissions.spendReceipt(state.id, token))
          }
          if (receipt) {
            const { form, response, files } = await submissions.answered(state.id)
            if (response) return receiptPage(set, { form, response, files }, t)
          }
          return answeredPage(set, state, await submissions.answeredAt(state.id), t)
        }
        if (state.status !== 'active') return closedPage(set, state, false, t)
        // From a review page's Change link: the form filled with the answers being checked.
        if (typeof query.draft === 'string') {
          const view = formView(await submissions.publicForm(state.id))
          const page = await draftFormPage(
            submissions,
            view,
            query.draft,
            (entries) => formPostValues(entries, view.fields),
            t,
          )
          return htmlPage(set, withTimeLeft(page, options.clock(), t))
        }
        const page =
          renderedPages.get(state.id, t) ??
          renderedPages.set(
            state.id,
            t,
            await renderFormPage({ form: formView(await submissions.publicForm(state.id)), t }),
          )
        return htmlPage(set, withTimeLeft(page, options.clock(), t))
      },
      {
        detail: apiDoc({
          tag: 'Submissions',
          auth: false,
          summary: 'The form page (HTML)',
          description:
            'What the person you share the link with sees: the form while it is active, else a page saying it was answered (200), cancelled or expired (410).',
          params: { id: 'Form id' },
          responses: {
            200: 'The form; once answered, the receipt (once, right after sending) or a page saying it was answered, and when (text/html)',
          },
          errors: [404, 410],
        }),
      },
    )
    .post(
      '/f/:id',
      async ({ request, params, server, set, redirect }) => {
        // Another site's page made this request: never accept that.
        if (isCrossSite(request, options.baseUrl())) throw new HttpError(403, 'Cross-site submissions are refused')
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
          const recorded = await submissions.submit(params.id, await bodies.json(request), submitter)
          set.status = 201
          return { id: recorded.id, form_id: recorded.formId, submitted_at: formatApiTime(recorded.submittedAt) }
        }
        if (!isFormContentType(contentType)) {
          throw new HttpError(415, 'Send the answers as a form post or as application/json')
        }

        // Before reading what may be a large upload: is there a form, and does it take an answer?
        const form = await submissions.publicForm(params.id)
        const t = pageLanguage(form.page, request)
        // One that takes none still has the post read, without its files' bytes, to show what was sent (CONTRACT 14).
        const ended = form.status !== 'active'
        const view = formView(form)
        rememberPageForm(request, view)
        const allowances = ended ? new Map<string, number>() : fileAllowances(view.fields)
        const hasFileField = allowances.size > 0
        const incoming = fileStorage.receive()
        const claimed = new Set<string>()
        const newToken = submissions.newReceiptToken()
        let refused:
          | {
              kind: 'invalid'
              problems: Problem[]
              typed: Record<string, string | string[]>
              held: Record<string, HeldFileView>
            }
          | { kind: 'closed'; form: FormPublicState; sent: SentAnswer[] | undefined }
          | { kind: 'review'; view: ReviewView }
          | { kind: 'lapsed'; typed: Record<string, string | string[]>; held: Record<string, HeldFileView> }
          | undefined
        try {
          refused = await bodies.formPost(
            request,
            submissionBodyLimit(view.fields),
            {
              textBytes: API_BODY_LIMIT,
              openFile: (name, filename, type) => incoming.open(allowances.get(name) ?? 0, filename, type),
              settled: incoming.settled,
            },
            async (entries) => {
              const { values, typed, holds } = formPostValues(entries, view.fields)
              // A review page's Send: what is recorded is the draft the person checked.
              const sending = await draftOfPost(submissions, form, entries, { values, typed, holds }, (posted) =>
                formPostValues(posted, view.fields),
              )
              if (ended) return { kind: 'closed' as const, form, sent: sentAnswers(view.fields, values, sending.files) }
              if (sending.lapsed) return { kind: 'lapsed' as const, typed, held: {} }
              const used = hasFileField ? await submissions.useHolds(form, values, holds) : new Map()
              if (sending.draft && !draftFilesKept(sending.draft, used)) {
                // A file it named is gone (the form was answered meanwhile, or the file removed in another try): never record it without.
                const state = await submissions.publicState(form.id)
                if (state.status !== 'active')
                  return { kind: 'closed' as const, form: state, sent: sentAnswers(view.fields, values, sending.files) }
                return { kind: 'lapsed' as const, typed, held: heldViews(used) }
              }
              try {
                const reading = { locale: t.locale, region: t.region }
                if (form.page.review === true && !sending.draft)
                  return await reviewPost(
                    submissions,
                    form,
                    entries,
                    { values, typed, holds },
                    used,
                    submitter,
                    claimed,
                    reading,
                  )
                await submissions.submit(form, values, submitter, { receiptToken: newToken, ...reading })
                for (const value of Object.values(values)) if (value instanceof Upload) claimed.add(value.fileId)
                return undefined
              } catch (error) {
                if (!(error instanceof HttpError)) throw error
                if (error.status === 422 && error.problems) {
                  // Each file that passed its own checks is kept for the next try, so the person need not choose it again.
                  const { held, fileIds, lost } = hasFileField
                    ? await submissions.holdAccepted(form, values, used)
                    : { held: {}, fileIds: [], lost: [] }
                  for (const fileId of fileIds) claimed.add(fileId)
                  // A file that lost bytes is asked for again, whatever else the post got wrong.
                  const problems = [
                    ...error.problems,
                    ...lost.filter((problem) => !error.problems!.some((known) => known.path === problem.path)),
                  ]
                  return { kind: 'invalid' as const, problems, typed, held }
                }
                // Answered, cancelled or expired while this person was typing.
                if (error.status === 409 || error.status === 410) {
                  return {
                    kind: 'closed' as const,
                    form: await submissions.publicState(form.id),
                    sent: sentAnswers(view.fields, values, sending.files),
                  }
                }
                throw error
              }
            },
          )
        } catch (error) {
          // A form that takes no answer says so whatever it was sent: a post it cannot read (or too large) shows nothing of it.
          if (ended && error instanceof HttpError) refused = { kind: 'closed', form, sent: undefined }
          else throw error
        } finally {
          // Files written for an answer that was not recorded (or sent twice under one name): nothing holds them.
          await fileStorage.unclaim(incoming.fileIds.filter((fileId) => !claimed.has(fileId))).catch(() => {
            // Not lost: an upload left unclaimed is removed an hour after it was written.
          })
        }
        if (refused === undefined) {
          // See Other: the receipt, once (the cookie's token), then the answered page; a refresh never sends again.
          set.headers['set-cookie'] = receiptCookie(form.id, newToken, RECEIPT_MS / 1000, isHttps(options.baseUrl()))
          return redirect(`/f/${form.id}`, 303)
        }
        if (refused.kind === 'closed') return closedPage(set, refused.form, true, t, refused.sent)
        if (refused.kind === 'review') return htmlPage(set, <ReviewPage t={t} view={refused.view} />)
        const now = options.clock()
        if (refused.kind === 'lapsed')
          return htmlPage(set, withTimeLeft(await lapsedDraftPage(view, refused.typed, refused.held, t), now, t))
        const refusedPage = await renderFormPage({
          form: view,
          t,
          submitted: refused.typed,
          problems: refused.problems,
          held: refused.held,
        })
        return htmlPage(set, withTimeLeft(refusedPage, now, t), 422)
      },
      {
        detail: apiDoc({
          tag: 'Submissions',
          auth: false,
          summary: 'Submit the answer to a form',
          description:
            'The form page posts here (application/x-www-form-urlencoded or multipart/form-data; 303 to the page, which shows the receipt once, with a one-time cookie; or 422 with the page and its errors, files that passed their checks kept for the next try). ' +
            'Custom front ends send application/json: the data object itself, field key to value; 201 with a receipt. The same rules apply to both; the first answer wins. ' +
            'A form post the form can no longer take (409, 410) gets a page showing what it sent, recorded nowhere.',
          params: { id: 'Form id' },
          body: JsonObject,
          responses: {
            201: SubmissionReceipt,
            200: 'With page.review (form post): the "Check your answers" page; its Send posts _draft and records the answer',
            303: 'Recorded (form post): on to the receipt',
          },
          errors: [400, 403, 404, 409, 410, 413, 415, 422, 429],
        }),
      },
    )
}
