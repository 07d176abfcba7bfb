import { type TObject, type TSchema, Type } from '@sinclair/typebox'
import type { Problem } from '../lib/errors.ts'
import { FORM_POST_MAX_BYTES } from '../lib/request-body.ts'
import { checkbox } from './checkbox.ts'
import { date } from './date.ts'
import { email } from './email.ts'
import { file } from './file.ts'
import { number } from './number.ts'
import { select } from './select.ts'
import { text } from './text.ts'
import { textarea } from './textarea.ts'
import type { FieldDefinition, FieldType } from './types.ts'

export type { AnswerValue, FieldDefinition, FieldType } from './types.ts'

/** Every field type, by name. Adding a type is one file and one entry here. */
export const fieldTypes: Record<string, FieldType> = Object.fromEntries(
  [text, textarea, email, number, select, checkbox, date, file].map((type) => [type.name, type]),
)

const FIELD_KEY_PATTERN = '^[A-Za-z][A-Za-z0-9_-]{0,63}$'

/**
 * Every type's config also takes `error_message`: the page shows it instead of
 * the built-in message for any invalid or missing value (CONTRACT 11).
 */
const ERROR_MESSAGE_MAX_LENGTH = 300
const ErrorMessage = Type.String({
  minLength: 1,
  maxLength: ERROR_MESSAGE_MAX_LENGTH,
  description:
    "What the page says, instead of its built-in message, when this field's value is missing or invalid (write it in the page's language). The API's messages stay as they are.",
})

function configSchema(type: FieldType): TObject {
  const { properties, required: _required, ...options } = type.config
  return Type.Object({ ...properties, error_message: Type.Optional(ErrorMessage) }, options)
}

function fieldSchema(type: FieldType): TSchema {
  const config = configSchema(type)
  return Type.Object(
    {
      key: Type.String({
        pattern: FIELD_KEY_PATTERN,
        errorMessage: 'Must start with a letter and hold only letters, digits, "_" and "-" (at most 64 characters)',
        description: "Key of this field's value in the response data",
      }),
      type: Type.Literal(type.name),
      label: Type.String({ minLength: 1, maxLength: 255 }),
      description: Type.Optional(
        Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], {
          description: 'Helper text shown below the label',
        }),
      ),
      required: Type.Optional(Type.Boolean({ default: false })),
      // A type with required config keys (select's options) needs its config.
      config: config.required?.length ? config : Type.Optional(config),
    },
    { additionalProperties: false, title: `${type.name} field` },
  )
}

/** A field in a create body: one object schema per type, told apart by `type`. */
export const FieldInput = Type.Union(Object.values(fieldTypes).map(fieldSchema), {
  discriminator: { propertyName: 'type' },
})

/** What a form post answering these fields can weigh at most, with room for the encoding around it. */
export function submissionBodyLimit(fields: FieldDefinition[]): number {
  const allowance = fields.reduce(
    (total, field) => total + (fieldTypes[field.type]!.maxSubmittedBytes?.(field.config ?? {}) ?? 4096),
    64 * 1024,
  )
  return Math.min(allowance, FORM_POST_MAX_BYTES)
}

/**
 * Rules of a field's config beyond its schema, including that `default` is
 * itself a valid answer. Paths are relative to the field.
 */
export async function checkFieldConfig(field: FieldDefinition): Promise<Problem[]> {
  const type = fieldTypes[field.type]!
  const config = field.config ?? {}
  const problems = type.checkConfig(config).map((p) => ({ ...p, path: `/config${p.path}` }))
  if (problems.length === 0 && config.default !== undefined) {
    const parsed = await type.parse(config.default, config, false)
    if (parsed.kind === 'invalid')
      problems.push({ path: '/config/default', message: parsed.message, code: parsed.code })
  }
  return problems
}

/**
 * The JSON Schema (draft 2020-12) of a response's `data` for these fields:
 * what an agent can validate the answer against, or generate types from.
 */
export function answersSchema(title: string, fields: FieldDefinition[]): Record<string, unknown> {
  const properties: Record<string, unknown> = {}
  const required: string[] = []
  for (const field of fields) {
    const isRequired = field.required ?? false
    const { description: rule, ...schema } = fieldTypes[field.type]!.answerSchema(field.config ?? {}, isRequired)
    const description = [field.description, rule].filter(Boolean).join('. ')
    properties[field.key] = { title: field.label, ...(description ? { description } : {}), ...schema }
    // An unticked checkbox is stored as false: a checkbox always has a value.
    if (isRequired || field.type === 'checkbox') required.push(field.key)
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title,
    type: 'object',
    properties,
    required,
    additionalProperties: false,
  }
}
