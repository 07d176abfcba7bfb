/** @jsxImportSource @kitajs/html */
import type { FormView } from '../../../views/FormPage.tsx'
import { AnsweredPage, ReceiptPage } from '../../../views/ReceiptPage.tsx'
import { type SentAnswer, SentAnswers } from '../../../views/SentAnswers.tsx'
import { type FileLimit, StatusPage } from '../../../views/StatusPage.tsx'
import { fileMaxSize } from '../../fields/file.ts'
import {
  languageOfTag,
  negotiateLanguage,
  rememberPageLanguage,
  type Translator,
  translator,
} from '../../i18n/index.ts'
import { htmlPage, type ResponseSet } from '../../lib/http.ts'
import type { PageSettings } from '../forms/model.ts'
import type { FormPublicState, StoredForm } from '../forms/store/index.ts'
import type { StoredResponse } from '../responses/store/index.ts'
import type { AnsweredForm } from './service.ts'

/**
 * The pages of a form's link around the form itself: the language they speak,
 * the form an error page of the request names, the pages of an answered or
 * ended form, and the receipt with its cookie.
 */

export const formView = (form: StoredForm): FormView => ({
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
export function pageLanguage(page: PageSettings | undefined, request: Request): Translator {
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

export function rememberPageForm(request: Request, form: FormView) {
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
export function closedPage(
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

/** The cookie that carries a receipt token from the 303 to the page it leads to. */
const RECEIPT_COOKIE = 'intake_receipt'

/** The receipt token the request's cookies carry, if any. */
export function receiptToken(request: Request): string | undefined {
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
export function receiptCookie(formId: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${RECEIPT_COOKIE}=${value}; Path=/f/${formId}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`
}

/** What the person sent, shown once right after sending (its token spent now). */
export function receiptPage(
  set: ResponseSet,
  answered: AnsweredForm & { response: StoredResponse },
  t: Translator,
): string {
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
export function answeredPage(
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

export const isHttps = (url: string) => url.toLowerCase().startsWith('https:')
