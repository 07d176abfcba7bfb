/** @jsxImportSource @kitajs/html */

import { DATE_PARTS, datePartName, type TypedDateParts } from '../src/fields/date.ts'
import { fieldTypes } from '../src/fields/index.ts'
import type { Control, FieldDefinition } from '../src/fields/types.ts'
import type { Translator } from '../src/i18n/index.ts'
import { attr, attributes } from './attributes.ts'
import { RichText } from './RichText.tsx'
import { Sentence, SLOT } from './Sentence.tsx'

export const controlId = (key: string) => `field-${key}`

/** A file the person sent with a refused answer, kept for the next try (CONTRACT 11). */
export interface HeldFile {
  /** The hold id the page posts back (`_held_<key>`). */
  id: string
  name: string
  size: number
}

export interface FieldProps {
  field: FieldDefinition
  /** What the control shows: the person's own input on a second try, else the default. */
  value: string | string[] | undefined
  /** The message, in the page's language, when the last try was refused for this field. */
  error: string | undefined
  /** Which of required and optional the page marks (the smaller set); this field shows it when it is one. */
  marked: 'required' | 'optional' | undefined
  held: HeldFile | undefined
  t: Translator
  /** A memorable date's boxes the error is about (all, when not given). */
  errorParts?: string[]
  /** A memorable date's boxes as the person typed them on the last try. */
  typedParts?: TypedDateParts
}

/**
 * One field: label, hint, error and the native control its type asks for,
 * tied together with `for` and aria-describedby. Choices are a fieldset with
 * the label as its legend. What the API client wrote carries `dir="auto"`.
 */
export function Field({ field, value, error, marked, held, t, errorParts, typedParts }: FieldProps) {
  const type = fieldTypes[field.type]!
  const config = field.config ?? {}
  const control = type.control(config)
  const id = controlId(field.key)
  const note = type.note?.(config)
  // A memorable date shows how to write one, in the language's order: "For example, 27 3 2007".
  const example =
    control.kind === 'date-parts' ? t.t('date.example', { example: t.dateExample(control.example) }) : undefined
  const hintId = field.description || note || example ? `${id}-hint` : undefined
  const errorId = error ? `${id}-error` : undefined
  const required = field.required ?? false
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined
  const mark =
    marked === 'required' && required
      ? t.t('mark.required')
      : marked === 'optional' && !required
        ? t.t('mark.optional')
        : undefined
  const noteText = note ? t.t(note.key, note.params) : undefined
  const heldTexts = held ? [t.t('file.kept', { name: held.name, size: { bytes: held.size } }), t.t('file.replace')] : []
  const fieldClass = [
    'field',
    `field-${control.kind}`,
    error ? 'field-invalid' : '',
    scrollRoom(field, control, error, noteText, heldTexts),
  ]
    .filter(Boolean)
    .join(' ')

  const labelText = (
    <>
      <span dir="auto" safe>
        {field.label}
      </span>
      {mark ? <span class="mark" safe>{` ${mark}`}</span> : ''}
    </>
  )
  const hint = hintId ? (
    <div id={hintId} class="hint">
      {field.description ? <RichText text={field.description} t={t} class="hint-text" /> : ''}
      {noteText ? (
        <p class="hint-note" safe>
          {noteText}
        </p>
      ) : (
        ''
      )}
      {example ? (
        <p class="hint-note" safe>
          {example}
        </p>
      ) : (
        ''
      )}
    </div>
  ) : (
    ''
  )
  const errorMessage = errorId ? (
    <p id={errorId} class="error-message">
      <span class="visually-hidden" safe>{`${t.t('error.prefix')} `}</span>
      <span dir="auto" safe>
        {error}
      </span>
    </p>
  ) : (
    ''
  )
  const invalid = error ? 'true' : undefined

  if (control.kind === 'radios' || control.kind === 'checkboxes') {
    const chosen = new Set(value === undefined ? [] : Array.isArray(value) ? value : [value])
    const inputType = control.kind === 'radios' ? 'radio' : 'checkbox'
    const choices = control.options.map((option) => ({ ...option, builtIn: false }))
    // An optional single choice can be taken back: the last choice is "no answer" (an empty value).
    if (control.kind === 'radios' && !required)
      choices.push({ value: '', label: t.t('select.no_answer'), builtIn: true })
    // The first carries the field's id: where the error summary's link lands.
    const options = choices.map((choice, index) => ({ ...choice, id: index === 0 ? id : `${id}-${index}` }))
    return (
      <div class={fieldClass}>
        <fieldset class="choices" aria-describedby={describedBy}>
          <legend class="label">{labelText}</legend>
          {hint}
          {errorMessage}
          {options.map((option) => {
            const builtIn = option.builtIn
            return (
              <div class="choice">
                <input
                  {...attributes({
                    type: inputType,
                    id: option.id,
                    name: field.key,
                    value: option.value,
                    checked: chosen.has(option.value),
                    required: required && inputType === 'radio',
                    'aria-invalid': invalid,
                  })}
                />
                <label for={option.id} dir={builtIn ? undefined : 'auto'} safe>
                  {option.label}
                </label>
              </div>
            )
          })}
        </fieldset>
      </div>
    )
  }

  if (control.kind === 'date-parts') {
    const parts = typedParts ?? partsOf(Array.isArray(value) ? value[0] : value)
    const inError = new Set(error ? (errorParts ?? DATE_PARTS) : [])
    return (
      <div class={fieldClass}>
        <fieldset class="date-parts" aria-describedby={describedBy}>
          <legend class="label">{labelText}</legend>
          {hint}
          {errorMessage}
          <div class="date-input">
            {t.dateOrder.map((part, index) => {
              // The first box carries the field's id: where the error summary's link lands.
              const partId = index === 0 ? id : `${id}-${part}`
              return (
                <div class="date-input-item">
                  <label for={attr(partId)} class="date-input-label" safe>
                    {t.t(`date.${part}`)}
                  </label>
                  <input
                    {...attributes({
                      type: 'text',
                      id: partId,
                      name: datePartName(part, field.key),
                      class: `date-input-${part}`,
                      inputmode: 'numeric',
                      spellcheck: 'false',
                      autocomplete:
                        control.autocompletePrefix === undefined ? undefined : `${control.autocompletePrefix}${part}`,
                      value: parts[part],
                      'aria-invalid': inError.has(part) ? 'true' : undefined,
                    })}
                  />
                </div>
              )
            })}
          </div>
        </fieldset>
      </div>
    )
  }

  const shared = {
    id,
    name: field.key,
    // The server checks every rule and says what is wrong in the page's language (the form is `novalidate`).
    required,
    'aria-invalid': invalid,
    'aria-describedby': describedBy,
  }
  const single = Array.isArray(value) ? value[0] : value

  if (control.kind === 'checkbox') {
    return (
      <div class={fieldClass}>
        {errorMessage}
        <div class="checkbox">
          <input type="checkbox" value="true" checked={single === 'true'} {...attributes(shared)} />
          <label for={id} class="label">
            {labelText}
          </label>
        </div>
        {hint}
      </div>
    )
  }

  return (
    <div class={fieldClass}>
      <label for={id} class="label">
        {labelText}
      </label>
      {hint}
      {errorMessage}
      {held && control.kind === 'input' && control.attributes.type === 'file' ? (
        <HeldFileNote field={field} held={held} t={t}>
          {/* The kept file answers the field: the control that replaces it is not required. */}
          {input(
            control,
            { ...shared, required: false, 'aria-describedby': [describedBy, `${id}-kept`, `${id}-replace`].join(' ') },
            single,
            t,
          )}
        </HeldFileNote>
      ) : (
        input(control, shared, single, t)
      )}
    </div>
  )
}

/** A `YYYY-MM-DD` value (a default) as the boxes show it: 2007-03-07 is 7, 3, 2007. */
function partsOf(value: string | undefined): TypedDateParts {
  const match = value === undefined ? null : /^(\d{4})-(\d{2})-(\d{2})$/.exec(value.trim())
  if (!match) return { day: '', month: '', year: '' }
  return { day: String(Number(match[3])), month: String(Number(match[2])), year: match[1]! }
}

function input(
  control: Exclude<Control, { kind: 'radios' | 'checkboxes' | 'checkbox' | 'date-parts' }>,
  shared: Record<string, string | boolean | undefined>,
  value: string | undefined,
  t: Translator,
) {
  if (control.kind === 'textarea') {
    return (
      // The HTML parser drops one newline right after <textarea>: give it one, keep the value's own.
      <textarea dir="auto" {...attributes({ ...control.attributes, ...shared })} safe>
        {`\n${value ?? ''}`}
      </textarea>
    )
  }
  if (control.kind === 'select') {
    return (
      <select dir="auto" {...attributes({ ...control.attributes, ...shared })}>
        <option value="" safe>
          {control.placeholder ?? t.t('select.placeholder')}
        </option>
        {control.options.map((option) => (
          <option value={attr(option.value)} selected={option.value === value} safe>
            {option.label}
          </option>
        ))}
      </select>
    )
  }
  if (control.attributes.type === 'file') {
    // A file input cannot be given a value; the one already sent is named above it.
    return <input class="file-input" {...attributes({ ...control.attributes, ...shared })} />
  }
  return <input dir="auto" {...attributes({ ...control.attributes, ...shared, value })} />
}

/** A file kept from a refused try: named, its hold id posted back, a box to remove it, and the control to replace it (no JavaScript). */
function HeldFileNote({
  field,
  held,
  t,
  children,
}: {
  field: FieldDefinition
  held: HeldFile
  t: Translator
  children: JSX.Element
}) {
  const id = controlId(field.key)
  const removeId = `${id}-remove`
  return (
    <div class="held-file">
      <p id={attr(`${id}-kept`)} class="held-file-name">
        <Sentence
          text={t.t('file.kept', { name: SLOT, size: { bytes: held.size } })}
          part={held.name}
          class="file-name"
        />
      </p>
      <input type="hidden" name={attr(`_held_${field.key}`)} value={attr(held.id)} />
      <div class="checkbox">
        <input type="checkbox" id={attr(removeId)} name={attr(`_remove_${field.key}`)} value="true" />
        <label for={attr(removeId)} safe>
          {t.t('file.remove')}
        </label>
      </div>
      <p id={attr(`${id}-replace`)} class="hint" safe>
        {t.t('file.replace')}
      </p>
      {children}
    </div>
  )
}

/**
 * Where a followed error-summary link leaves the control: CSS
 * `scroll-margin-top` from three classes (the page has no script to measure,
 * and no inline style is allowed), each a custom property style.css combines:
 * `room-N`, the rem above the control for everything of the field (label,
 * hint, message, a kept file's note); `near-N`, the rem that must show (the
 * message, and a kept file's note, which sits between it and the control);
 * `tall-N`, the control's own height. The margin is the room, but never so
 * much that the control falls below a short viewport (640x400 is 200% zoom on
 * a laptop), and never less than the message needs. Estimated at a phone's
 * width: about 32 columns to a line, a wide (Chinese, Japanese, Korean)
 * character taking two; each line 1.6rem. A checkbox has only its message above
 * it (its label is beside it).
 */
function scrollRoom(
  field: FieldDefinition,
  control: Control,
  error: string | undefined,
  note: string | undefined,
  held: string[],
): string {
  if (!error) return ''
  const lines = (text: string | null | undefined) =>
    text ? text.split('\n').reduce((n, line) => n + Math.max(1, Math.ceil(columns(line) / 32)), 0) : 0
  const heldRoom = held.length ? 1.6 * held.reduce((n, text) => n + lines(text), 0) + 2.5 + 2 : 0
  const near = 1 + 1.6 * lines(error) + heldRoom
  const above =
    control.kind === 'checkbox'
      ? near
      : 2 + 1.6 * (lines(field.label) + lines(field.description) + lines(note) + lines(error) + 1) + heldRoom
  const tall =
    control.kind === 'textarea'
      ? 1.5 * Number(control.attributes.rows ?? 4) + 1.5
      : control.kind === 'radios' || control.kind === 'checkboxes'
        ? Math.max(2.5, 1.6 * lines(control.options[0]?.label))
        : control.kind === 'checkbox'
          ? Math.max(2.5, 1.6 * lines(field.label))
          : 3
  const even = (rem: number, most: number) => Math.min(most, Math.max(2, Math.ceil(rem / 2) * 2))
  return `room-${even(above, 30)} near-${even(near, 30)} tall-${even(tall, 16)}`
}

/** East Asian wide characters (CJK ideographs, kana, Hangul, full-width forms) take two columns of text. */
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/

function columns(line: string): number {
  let width = 0
  for (const character of line) width += WIDE.test(character) ? 2 : 1
  return width
}
