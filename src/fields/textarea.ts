import { Type } from '@sinclair/typebox'
import type { Problem } from '../lib/errors.ts'
import { Autocomplete, autocompleteProblem } from './autocomplete.ts'
import { Placeholder } from './shared.ts'
import { checkLength, encodedTextBytes, lengthNote } from './text.ts'
import { answer, EMPTY, type FieldType, isBlank, rejected } from './types.ts'

const TEXTAREA_MAX_LENGTH = 100_000

interface TextareaConfig {
  placeholder?: string
  default?: string
  min_length?: number
  max_length?: number
  rows?: number
  autocomplete?: string
}

export const textarea: FieldType<TextareaConfig> = {
  name: 'textarea',
  config: Type.Object(
    {
      placeholder: Type.Optional(Placeholder),
      default: Type.Optional(Type.String({ maxLength: TEXTAREA_MAX_LENGTH })),
      min_length: Type.Optional(Type.Integer({ minimum: 0, maximum: TEXTAREA_MAX_LENGTH })),
      max_length: Type.Optional(Type.Integer({ minimum: 1, maximum: TEXTAREA_MAX_LENGTH, default: 10_000 })),
      rows: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 4 })),
      autocomplete: Type.Optional(Autocomplete),
    },
    { additionalProperties: false },
  ),
  checkConfig(config) {
    const problems: Problem[] = []
    const maxLength = config.max_length ?? 10_000
    if (config.min_length !== undefined && config.min_length > maxLength) {
      problems.push({
        path: '/min_length',
        message: `Must not be greater than max_length (${maxLength})`,
        code: 'invalid_value',
      })
    }
    const autocomplete = autocompleteProblem('textarea', config.autocomplete)
    if (autocomplete) problems.push(autocomplete)
    return problems
  },
  parse(input, config) {
    if (isBlank(input)) return EMPTY
    if (typeof input !== 'string') return rejected('Expected text', 'invalid_type')
    // Browsers submit line breaks as CRLF; a person sees one character.
    const value = input.replace(/\r\n?/g, '\n')
    return checkLength(value, config.min_length, config.max_length ?? 10_000) ?? answer(value)
  },
  control: (config) => ({
    kind: 'textarea',
    attributes: {
      rows: config.rows ?? 4,
      minlength: config.min_length,
      placeholder: config.placeholder,
      autocomplete: config.autocomplete,
    },
  }),
  note: (config) => lengthNote(config.min_length, config.max_length),
  // Line breaks arrive as CRLF: two characters where the length counts one.
  maxSubmittedBytes: (config) => encodedTextBytes((config.max_length ?? 10_000) * 2),
  answerSchema: (config) => ({
    type: 'string',
    ...(config.min_length ? { minLength: config.min_length } : {}),
    maxLength: config.max_length ?? 10_000,
  }),
}
