/** @jsxImportSource @kitajs/html */
import { attr } from '../../../../views/attributes.ts'
import { answerText } from '../../../../views/ReceiptPage.tsx'
import type { FieldDefinition } from '../../../fields/types.ts'
import { translator } from '../../../i18n/index.ts'
import { formNotFound, HttpError } from '../../../lib/errors.ts'
import { canonicalUlid } from '../../../lib/ids.ts'
import { parseApiTime } from '../../../lib/time.ts'
import type { EventSummary } from '../../events/store/index.ts'
import type { FormStatus } from '../../forms/model.ts'
import type { StoredForm } from '../../forms/store/index.ts'
import type { ResponseObject } from '../../responses/model.ts'
import type { DeliveryObject } from '../../webhooks/model.ts'
import type { ConsoleDeps } from '../deps.ts'
import { CsrfField } from '../layout.tsx'
import type { Viewer } from '../viewer.ts'
import type { ConsoleWords } from '../words/index.ts'

/** The pieces of the form pages: paths, a status, the fields, the answer, deliveries and events. */

export const accountPath = (accountId: string) => `/console/accounts/${encodeURIComponent(accountId)}`
export const formPath = (accountId: string, formId: string) => `${accountPath(accountId)}/forms/${formId}`

/** The account's form, or 404 (also for another account's form and a malformed id). */
export async function accountForm(deps: ConsoleDeps, accountId: string, formId: string): Promise<StoredForm> {
  const id = canonicalUlid(formId)
  const form = id && (await deps.store.forms.findForAccount(accountId, id, deps.clock()))
  if (!form) throw formNotFound()
  return form
}

export const statusWord = (words: ConsoleWords, status: FormStatus) => words.t(`forms.status_${status}`)

export function StatusTag({ status, words }: { status: FormStatus; words: ConsoleWords }) {
  return (
    <span class={`console-status console-status-${status}`} safe>
      {statusWord(words, status)}
    </span>
  )
}

/** An API time (`2026-11-25T21:01:18.123`) as the console writes moments; `fallback` for null. */
const apiTime = (words: ConsoleWords, text: string | null, fallback = '') =>
  text === null ? fallback : words.dateTime(parseApiTime(text)!)

/** A service's 422 or 409 as the problems a page lists (each with its JSON Pointer), or the error itself. */
export function problemsOf(error: unknown): Array<{ path: string; message: string }> {
  if (!(error instanceof HttpError) || (error.status !== 422 && error.status !== 409)) throw error
  return error.problems?.length ? error.problems : [{ path: '', message: error.detail }]
}

/** JSON as a block to read and copy: indented, in a focusable region so a keyboard can scroll it. */
export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return (
    <section aria-label={attr(label)}>
      <pre class="console-json" tabindex="0" safe>
        {JSON.stringify(value, null, 2)}
      </pre>
    </section>
  )
}

export function FieldsTable({ fields, words }: { fields: FieldDefinition[]; words: ConsoleWords }) {
  const t = words.t
  return (
    <div class="console-table-wrap">
      <table class="console-table">
        <thead>
          <tr>
            <th scope="col" safe>
              {t('form.field_key')}
            </th>
            <th scope="col" safe>
              {t('form.field_type')}
            </th>
            <th scope="col" safe>
              {t('form.field_label')}
            </th>
            <th scope="col" safe>
              {t('form.field_required')}
            </th>
          </tr>
        </thead>
        <tbody>
          {fields.map((field) => (
            <tr>
              <th scope="row">
                <code safe>{field.key}</code>
              </th>
              <td safe>{field.type}</td>
              <td dir="auto" safe>
                {field.label}
              </td>
              <td safe>{t(field.required ? 'form.yes' : 'form.no')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

/** A stored file of the answer: its name and size, and where the console serves it. */
export interface AnswerFile {
  name: string
  size: number
  href: string
}

/**
 * The answer as the person's receipt shows it (option labels, Yes or No,
 * dates in words, files by name, in English), each file a download, then the
 * response object as the API gives it.
 */
export function AnswerSection({
  fields,
  response,
  files,
  words,
}: {
  fields: FieldDefinition[]
  response: ResponseObject
  files: Map<string, AnswerFile>
  words: ConsoleWords
}) {
  const t = words.t
  const receipt = translator('en')
  return (
    <>
      <p safe>{t('form.answered_at', { time: apiTime(words, response.submitted_at) })}</p>
      <dl class="receipt">
        {fields.map((field) => {
          const file = files.get(field.key)
          return (
            <div class="receipt-row">
              <dt dir="auto" safe>
                {field.label}
              </dt>
              <dd class="receipt-answer">
                {answerText(receipt, { field, value: response.data[field.key], file })}
                {file ? (
                  <>
                    {' '}
                    <a href={attr(file.href)} download="" safe>
                      {t('form.download', { name: file.name })}
                    </a>
                  </>
                ) : (
                  ''
                )}
              </dd>
            </div>
          )
        })}
      </dl>
      <h3 safe>{t('form.answer_json')}</h3>
      <JsonBlock value={response} label={t('form.answer_json')} />
    </>
  )
}

/** The form's webhook deliveries, each with its attempts and, once settled, Redeliver. */
export function DeliveriesTable({
  deliveries,
  action,
  viewer,
  words,
}: {
  deliveries: DeliveryObject[]
  action: (deliveryId: string) => string
  viewer: Viewer
  words: ConsoleWords
}) {
  const t = words.t
  if (deliveries.length === 0) return <p safe>{t('form.no_deliveries')}</p>
  return (
    <div class="console-table-wrap">
      <table class="console-table">
        <thead>
          <tr>
            <th scope="col" safe>
              {t('form.delivery_event')}
            </th>
            <th scope="col" safe>
              {t('form.delivery_status')}
            </th>
            <th scope="col" class="console-number" safe>
              {t('form.delivery_attempts')}
            </th>
            <th scope="col" safe>
              {t('form.delivery_last')}
            </th>
            <th scope="col" safe>
              {t('form.delivery_when')}
            </th>
            <td />
          </tr>
        </thead>
        <tbody>
          {deliveries.map((delivery) => (
            <tr>
              <th scope="row">
                <code>{delivery.event}</code>
              </th>
              <td safe>{t(`form.delivery_${delivery.status}`)}</td>
              <td class="console-number" safe>
                {words.number(delivery.attempts)}
              </td>
              <td safe>
                {[
                  delivery.last_status_code === null ? '' : `HTTP ${delivery.last_status_code}`,
                  delivery.last_error ?? '',
                ]
                  .filter((part) => part !== '')
                  .join(': ') || t('form.delivery_none_yet')}
              </td>
              <td safe>
                {delivery.status === 'delivered'
                  ? apiTime(words, delivery.delivered_at)
                  : delivery.status === 'pending'
                    ? t('form.delivery_next', { time: apiTime(words, delivery.next_attempt_at, '—') })
                    : apiTime(words, delivery.created_at)}
              </td>
              <td>
                {delivery.status === 'pending' ? (
                  ''
                ) : (
                  <form method="post" action={attr(action(delivery.id))}>
                    <CsrfField viewer={viewer} />
                    <button
                      type="submit"
                      class="console-secondary"
                      aria-label={attr(t('form.redeliver_label', { event: delivery.event }))}
                      safe
                    >
                      {t('form.redeliver')}
                    </button>
                  </form>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

/** The form's events in the account's feed, oldest first, with the ids the feed gives them. */
export function EventsList({ events, words }: { events: Array<EventSummary & { id: string }>; words: ConsoleWords }) {
  const t = words.t
  if (events.length === 0) return <p safe>{t('form.no_events')}</p>
  return (
    <ol class="console-events">
      {events.map((event) => (
        <li>
          <code>{event.type}</code> <span safe>{words.dateTime(event.occurredAt)}</span>{' '}
          <span class="console-muted" safe>
            {t('form.event_id', { id: event.id })}
          </span>
        </li>
      ))}
    </ol>
  )
}
