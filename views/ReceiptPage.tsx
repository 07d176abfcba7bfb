/** @jsxImportSource @kitajs/html */

import { optionLabel, optionValue, type SelectOption } from '../src/fields/select.ts'
import type { FieldDefinition } from '../src/fields/types.ts'
import type { Translator } from '../src/i18n/index.ts'
import { writeNumber } from '../src/i18n/numbers.ts'
import { Layout } from './Layout.tsx'
import { Sentence, SLOT } from './Sentence.tsx'

/**
 * One row of a list of answers (the receipt, the review page, what a post not
 * recorded sent): the question as the API client wrote it, its answer, then
 * what follows it (the review's Change link).
 */
export function AnswerRow({
  label,
  children,
  after = '',
}: {
  label: string
  children: JSX.Element
  after?: JSX.Element
}) {
  return (
    <div class="receipt-row">
      <dt dir="auto" safe>
        {label}
      </dt>
      <dd class="receipt-answer">{children}</dd>
      {after}
    </div>
  )
}

/** What was sent for one field: its answer as stored (`undefined` when left empty), and a file's name and size. */
export interface ReceiptAnswer {
  field: FieldDefinition
  value: unknown
  file?: { name: string; size: number }
}

/** The receipt, shown once right after sending (CONTRACT 11). */
export interface ReceiptView {
  title: string
  /** Every field of the form, in its order. */
  answers: ReceiptAnswer[]
  submittedAt: number
  /** IANA zone the time is written in (`page.time_zone`, else UTC). */
  timeZone: string
  /** `page.success_message`, when set. */
  successMessage: string | undefined
}

/** Every later visit to an answered form: that it was answered, and when. */
export interface AnsweredView {
  title: string
  /** Undefined only if the answer cannot be found. */
  submittedAt: number | undefined
  timeZone: string
  successMessage: string | undefined
}

/** What the person sent, field by field: labels and answers as words, files by name and size (never their contents or URLs). */
export function ReceiptPage({ t, view }: { t: Translator; view: ReceiptView }) {
  return (
    <Layout title={t.t('receipt.title', { title: view.title })} t={t}>
      <p class="form-name" dir="auto" safe>
        {view.title}
      </p>
      <div class="receipt-panel">
        <h1 safe>{t.t('receipt.heading')}</h1>
        <Message message={view.successMessage} fallback={t.t('receipt.default_message')} />
        <p safe>{t.t('receipt.sent_at', { time: t.dateTime(view.submittedAt, view.timeZone) })}</p>
      </div>
      <h2 safe>{t.t('receipt.what_you_sent')}</h2>
      <dl class="receipt">
        {view.answers.map((answer) => (
          <AnswerRow label={answer.field.label}>{answerText(t, answer)}</AnswerRow>
        ))}
      </dl>
    </Layout>
  )
}

/** An answered form, to anyone at any later time: nothing of the answer itself. */
export function AnsweredPage({ t, view }: { t: Translator; view: AnsweredView }) {
  return (
    <Layout title={t.t('answered.title', { title: view.title })} t={t}>
      <p class="form-name" dir="auto" safe>
        {view.title}
      </p>
      <h1 safe>{t.t('answered.heading')}</h1>
      {view.submittedAt === undefined ? (
        ''
      ) : (
        <p safe>{t.t('answered.at', { time: t.dateTime(view.submittedAt, view.timeZone) })}</p>
      )}
      <Message message={view.successMessage} fallback={t.t('answered.default_message')} />
    </Layout>
  )
}

/** The API client's words once sent (paragraphs kept), or the built-in ones. */
function Message({ message, fallback }: { message: string | undefined; fallback: string }) {
  if (message === undefined || message.trim() === '') return <p safe>{fallback}</p>
  return (
    <>
      {message
        .split(/\r?\n\s*\r?\n/)
        .filter((paragraph) => paragraph.trim() !== '')
        .map((paragraph) => (
          <p class="success-message" dir="auto" safe>
            {paragraph}
          </p>
        ))}
    </>
  )
}

/** One answer as the person reads it: option labels, Yes or No, dates in words, a file's name and size, "Not answered". */
export function answerText(t: Translator, { field, value, file }: ReceiptAnswer): JSX.Element {
  if (field.type === 'file') {
    // The name isolated, the size in the page's direction: an Arabic size after a Latin name still reads right to left.
    return file ? (
      <Sentence text={t.t('receipt.file', { name: SLOT, size: { bytes: file.size } })} part={file.name} />
    ) : (
      <NotAnswered t={t} />
    )
  }
  if (value === undefined || value === null || value === '') return <NotAnswered t={t} />
  if (field.type === 'checkbox') return <span safe>{t.t(value === true ? 'receipt.yes' : 'receipt.no')}</span>
  if (field.type === 'select') {
    const options = (field.config?.options ?? []) as SelectOption[]
    const label = (chosen: unknown) => {
      const option = options.find((o) => optionValue(o) === chosen)
      return option === undefined ? String(chosen) : optionLabel(option)
    }
    // A multiple select's answer is the list of chosen values.
    if (Array.isArray(value)) {
      if (value.length === 0) return <NotAnswered t={t} />
      return (
        <ul>
          {value.map((chosen) => (
            <li dir="auto" safe>
              {label(chosen)}
            </li>
          ))}
        </ul>
      )
    }
    return (
      <span dir="auto" safe>
        {label(value)}
      </span>
    )
  }
  if (field.type === 'date' && typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value))
    return <span safe>{t.date(value)}</span>
  // As the page's language writes it (412,8 in de), in the page's direction: Intl places what a minus needs.
  if (field.type === 'number' && typeof value === 'number') return <span safe>{writeNumber(t.locale, value)}</span>
  return (
    <span dir="auto" safe>
      {String(value)}
    </span>
  )
}

const NotAnswered = ({ t }: { t: Translator }) => (
  <span class="not-answered" safe>
    {t.t('receipt.not_answered')}
  </span>
)
