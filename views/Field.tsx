/** @jsxImportSource @kitajs/html */
import { fieldTypes } from '../src/fields/index.ts'
import type { ControlOption, FieldDefinition } from '../src/fields/types.ts'
import { translator } from '../src/i18n/index.ts'
import { attr, attributes } from './attributes.ts'

export const controlId = (key: string) => `field-${key}`

export interface FieldProps {
  field: FieldDefinition
  /** What the control shows: the person's own input on a second try, else the default. */
  value: string | string[] | undefined
  error: string | undefined
}

/**
 * One field: label, help, error and the native control its type asks for.
 * Help and error are tied to the control with aria-describedby.
 */
export function Field({ field, value, error }: FieldProps) {
  const type = fieldTypes[field.type]!
  const config = field.config ?? {}
  const control = type.control(config)
  const id = controlId(field.key)
  const note = type.note?.(config)
  const hintId = field.description || note ? `${id}-hint` : undefined
  const errorId = error ? `${id}-error` : undefined
  const required = field.required ?? false
  const shared = {
    id,
    name: field.key,
    required,
    'aria-invalid': error ? 'true' : undefined,
    'aria-describedby': [hintId, errorId].filter(Boolean).join(' ') || undefined,
  }

  const label = (
    <label for={id} class="label">
      <span safe>{field.label}</span>
      {required ? <span class="required"> (required)</span> : ''}
    </label>
  )
  const hint = hintId ? (
    <div id={hintId} class="hint">
      {field.description ? <p class="hint-text" safe>{field.description}</p> : ''}
      {note ? <p class="hint-note" safe>{translator('en').t(note.key, note.params)}</p> : ''}
    </div>
  ) : (
    ''
  )
  const errorMessage = errorId ? (
    <p id={errorId} class="error-message">
      <span class="visually-hidden">Error: </span>
      <span safe>{error}</span>
    </p>
  ) : (
    ''
  )

  if (control.kind === 'radios' || control.kind === 'checkboxes') {
    const multiple = control.kind === 'checkboxes'
    const chosen = (option: string) => (Array.isArray(value) ? value.includes(option) : value === option)
    const options: ControlOption[] = [...control.options]
    // An optional single choice can be taken back: an empty value is no answer.
    if (!multiple && !required) options.push({ value: '', label: translator('en').t('select.no_answer') })
    return (
      <fieldset
        class={error ? 'field field-invalid' : 'field'}
        aria-describedby={[hintId, errorId].filter(Boolean).join(' ') || undefined}
      >
        <legend class="label">
          <span safe>{field.label}</span>
          {required ? <span class="required"> (required)</span> : ''}
        </legend>
        {hint}
        {errorMessage}
        {options.map((option, index) => {
          // The first is the field's own id, where the error summary's link lands.
          const optionId = index === 0 ? id : `${id}-${index}`
          return (
            <div class="choice">
              <input
                {...attributes({
                  type: multiple ? 'checkbox' : 'radio',
                  id: optionId,
                  name: field.key,
                  value: option.value,
                  checked: chosen(option.value),
                  required: required && !multiple,
                  'aria-invalid': error ? 'true' : undefined,
                })}
              />
              <label for={optionId} safe>
                {option.label}
              </label>
            </div>
          )
        })}
      </fieldset>
    )
  }

  // Only a group holds several values; any other control shows one.
  const single = Array.isArray(value) ? undefined : value
  if (control.kind === 'checkbox') {
    return (
      <div class={error ? 'field field-checkbox field-invalid' : 'field field-checkbox'}>
        {errorMessage}
        <div class="checkbox">
          <input type="checkbox" value="true" checked={single === 'true'} {...attributes(shared)} />
          {label}
        </div>
        {hint}
      </div>
    )
  }

  let input: JSX.Element
  if (control.kind === 'textarea') {
    input = (
      // The HTML parser drops one newline right after <textarea>: give it one, keep the value's own.
      <textarea {...attributes({ ...control.attributes, ...shared })} safe>
        {`\n${single ?? ''}`}
      </textarea>
    )
  } else if (control.kind === 'select') {
    input = (
      <select {...attributes({ ...control.attributes, ...shared })}>
        <option value="" safe>
          {control.placeholder ?? translator('en').t('select.placeholder')}
        </option>
        {control.options.map((option) => (
          <option value={attr(option.value)} selected={option.value === single} safe>
            {option.label}
          </option>
        ))}
      </select>
    )
  } else {
    // A file input cannot be given a value; everything else shows what it holds.
    const shown = control.attributes.type === 'file' ? undefined : single
    input = <input {...attributes({ ...control.attributes, ...shared, value: shown })} />
  }

  return (
    <div class={error ? 'field field-invalid' : 'field'}>
      {label}
      {hint}
      {errorMessage}
      {input}
    </div>
  )
}
