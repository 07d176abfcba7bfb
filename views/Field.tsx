/** @jsxImportSource @kitajs/html */
import { fieldTypes } from '../src/fields/index.ts'
import type { FieldDefinition } from '../src/fields/types.ts'
import { translator } from '../src/i18n/index.ts'
import type { HeldFileView } from '../src/modules/submissions/service.ts'
import { attr, attributes } from './attributes.ts'

export const controlId = (key: string) => `field-${key}`

export interface FieldProps {
  field: FieldDefinition
  /** What the control shows: the person's own input on a second try, else the default. */
  value: string | undefined
  error: string | undefined
  /** A file field's file kept from the last try. */
  held?: HeldFileView
}

/**
 * One field: label, help, error and the native control its type asks for.
 * Help and error are tied to the control with aria-describedby.
 */
export function Field({ field, value, error, held }: FieldProps) {
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
      {note ? <p class="hint-note" safe>{note}</p> : ''}
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

  if (control.kind === 'checkbox') {
    return (
      <div class={error ? 'field field-checkbox field-invalid' : 'field field-checkbox'}>
        {errorMessage}
        <div class="checkbox">
          <input type="checkbox" value="true" checked={value === 'true'} {...attributes(shared)} />
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
        {`\n${value ?? ''}`}
      </textarea>
    )
  } else if (control.kind === 'select') {
    input = (
      <select {...attributes({ ...control.attributes, ...shared })}>
        <option value="" safe>
          {control.placeholder}
        </option>
        {control.options.map((option) => (
          <option value={attr(option.value)} selected={option.value === value} safe>
            {option.label}
          </option>
        ))}
      </select>
    )
  } else if (control.attributes.type === 'file') {
    // A file input cannot be given a value: a file kept from the last try is named, with a box to remove it,
    // and the control (no longer required: the kept file answers) replaces it.
    const describedBy = [shared['aria-describedby'], `${id}-kept`, `${id}-replace`].filter(Boolean).join(' ')
    const replacing = { ...control.attributes, ...shared, required: false, 'aria-describedby': describedBy }
    input = held ? <HeldFile fieldKey={field.key} held={held} control={<input {...attributes(replacing)} />} /> : (
      <input {...attributes({ ...control.attributes, ...shared })} />
    )
  } else {
    input = <input {...attributes({ ...control.attributes, ...shared, value })} />
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

/** A file kept from a refused try: what it is, its hold id to post back, a box to remove it, and the control to replace it. */
function HeldFile({ fieldKey, held, control }: { fieldKey: string; held: HeldFileView; control: JSX.Element }) {
  const { t } = translator('en')
  const removeId = `${controlId(fieldKey)}-remove`
  return (
    <div class="held-file">
      <p id={attr(`${controlId(fieldKey)}-kept`)} class="held-file-name" safe>
        {t('file.kept', { name: held.name, size: { bytes: held.size } })}
      </p>
      <input type="hidden" name={attr(`_held_${fieldKey}`)} value={attr(held.id)} />
      <div class="checkbox">
        <input type="checkbox" id={attr(removeId)} name={attr(`_remove_${fieldKey}`)} value="true" />
        <label for={attr(removeId)} safe>
          {t('file.remove')}
        </label>
      </div>
      <p id={attr(`${controlId(fieldKey)}-replace`)} class="hint-text" safe>
        {t('file.replace')}
      </p>
      {control}
    </div>
  )
}
