/** @jsxImportSource @kitajs/html */
import { Type } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { type FormPageBytes, renderFormPage, withTimeLeft } from '../../../views/FormPage.tsx'
import { ReviewPage, type ReviewView } from '../../../views/ReviewPage.tsx'
import type { SentAnswer } from '../../../views/SentAnswers.tsx'
import { submissionBodyLimit } from '../../fields/index.ts'
import { Upload } from '../../fields/types.ts'
import type { Translator } from '../../i18n/index.ts'
import { HttpError, type Problem } from '../../lib/errors.ts'
import { clientAddress, htmlPage, isFormContentType, isJsonContentType } from '../../lib/http.ts'
import { createLruCache } from '../../lib/lru.ts'
import { apiDoc } from '../../lib/openapi.ts'
import type { RateLimiter } from '../../lib/rate-limit.ts'
import { API_BODY_LIMIT, type BodyReader } from '../../lib/request-body.ts'
import { ApiTime, JsonObject, Ulid } from '../../lib/schemas.ts'
import { type Clock, formatApiTime } from '../../lib/time.ts'
import type { FormPublicState } from '../forms/store/index.ts'
import type { FileStorage } from '../responses/files.ts'
import type { HeldFileView } from './files.ts'
import { fileAllowances, formPostValues, isCrossSite } from './form-post.ts'
import {
  answeredPage,
  closedPage,
  formView,
  isHttps,
  pageLanguage,
  receiptCookie,
  receiptPage,
  receiptToken,
  rememberPageForm,
} from './pages.tsx'
import {
  draftFilesKept,
  draftFormPage,
  draftOfPost,
  heldViews,
  lapsedDraftPage,
  reviewPost,
  sentAnswers,
} from './review.tsx'
import { RECEIPT_MS, type SubmissionService } from './service.ts'

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
