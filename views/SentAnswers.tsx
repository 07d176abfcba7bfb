/** @jsxImportSource @kitajs/html */
import { optionLabel, optionValue, type SelectOption } from '../src/fields/select.ts'
import type { FieldDefinition } from '../src/fields/types.ts'
import type { Translator } from '../src/i18n/index.ts'
import { AnswerRow } from './ReceiptPage.tsx'

/** What a post that could not be recorded sent for one field: texts as typed, a file's name and size (never its bytes). */
export interface SentAnswer {
  field: FieldDefinition
  /** The post's text (a multiple select's values as a list); undefined when nothing came. */
  text: string | string[] | undefined
  file?: { name: string; size: number }
}

/**
 * What the person sent with a post that was not recorded (the form ended or
 * was answered meanwhile, CONTRACT 14): each answer read-only, as they typed
 * it (choices by their labels, a box ticked or not, files by name), and all of
 * it once more as plain text in a read-only box to select and copy, since the
 * page has no script to copy with. `recordedSaid`: the page's message already
 * says nothing was recorded.
 */
export function SentAnswers({
  answers,
  title,
  t,
  recordedSaid,
}: {
  answers: SentAnswer[]
  title: string
  t: Translator
  recordedSaid: boolean
}) {
  const shown = answers.map((answer) => ({ label: answer.field.label, ...sentLines(answer, t) }))
  // "Label: answer"; a label that ends in its own punctuation ("Anything else?", "Note:") takes no colon.
  const heading = (label: string) => (/[:：?？!！.。]\s*$/.test(label) ? label.trimEnd() : `${label}:`)
  const text = [
    title,
    '',
    ...shown.map(({ label, lines }) =>
      lines.length === 1 && !lines[0]!.includes('\n')
        ? `${heading(label)} ${lines[0]}`
        : `${heading(label)}\n${lines.join('\n')}`,
    ),
  ].join('\n')
  const rows = Math.min(20, text.split('\n').length + 1)
  return (
    <>
      {recordedSaid ? '' : <p safe>{t.t('sent.not_recorded')}</p>}
      <h2 safe>{t.t('sent.heading')}</h2>
      <p safe>{t.t('sent.intro')}</p>
      <dl class="receipt">
        {answers.map((answer, index) => (
          <AnswerRow label={answer.field.label}>{sentAnswer(answer, shown[index]!)}</AnswerRow>
        ))}
      </dl>
      <div class="field sent-copy">
        <label for="sent-text" class="label" safe>
          {t.t('sent.copy_label')}
        </label>
        <p id="sent-text-hint" class="hint" safe>
          {t.t('sent.copy_hint')}
        </p>
        {/* The HTML parser drops one newline right after <textarea>: give it one, keep the text's own. */}
        <textarea id="sent-text" readonly rows={String(rows)} dir="auto" aria-describedby="sent-text-hint" safe>
          {`\n${text}`}
        </textarea>
      </div>
    </>
  )
}

/** One answer as lines of text: as typed, an option by its label, Yes or No, a file's name and size, "Not answered". */
function sentLines({ field, text, file }: SentAnswer, t: Translator): { lines: string[]; unanswered: boolean } {
  const unanswered = { lines: [t.t('receipt.not_answered')], unanswered: true }
  const answered = (lines: string[]) => ({ lines, unanswered: false })
  if (field.type === 'file')
    return file ? answered([t.t('receipt.file', { name: file.name, size: { bytes: file.size } })]) : unanswered
  // An unticked box sends nothing.
  if (field.type === 'checkbox') return answered([t.t(text === 'true' ? 'receipt.yes' : 'receipt.no')])
  const values = (Array.isArray(text) ? text : text === undefined ? [] : [text]).filter((value) => value !== '')
  if (values.length === 0) return unanswered
  if (field.type === 'select') {
    const options = (field.config?.options ?? []) as SelectOption[]
    const label = (chosen: string) => {
      const option = options.find((o) => optionValue(o) === chosen)
      return option === undefined ? chosen : optionLabel(option)
    }
    if (Array.isArray(text)) return answered(values.map((value) => `- ${label(value)}`))
    return answered([label(values[0]!)])
  }
  return answered([values[0]!.replace(/\r\n?/g, '\n')])
}

function sentAnswer(answer: SentAnswer, { lines, unanswered }: { lines: string[]; unanswered: boolean }): JSX.Element {
  if (unanswered)
    return (
      <span class="not-answered" safe>
        {lines[0]}
      </span>
    )
  if (answer.field.type === 'select' && Array.isArray(answer.text)) {
    return (
      <ul>
        {lines.map((line) => (
          <li dir="auto" safe>
            {line.slice(2)}
          </li>
        ))}
      </ul>
    )
  }
  return (
    <span dir="auto" safe>
      {lines[0]}
    </span>
  )
}
