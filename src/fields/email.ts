import { Type } from '@sinclair/typebox'
import { Autocomplete, autocompleteProblem } from './autocomplete.ts'
import { Placeholder } from './shared.ts'
import { characterCount, tooLong } from './text.ts'
import { answer, EMPTY, type FieldType, isBlank, rejected } from './types.ts'

// The HTML "valid e-mail address" grammar, plus a dot in the domain: an
// address a person means to be reached at has one.
const LOCAL = "[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+"
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?'
const EMAIL = new RegExp(`^${LOCAL}@${LABEL}(?:\\.${LABEL})+$`)

const EMAIL_MAX_LENGTH = 254

interface EmailConfig {
  placeholder?: string
  default?: string
  autocomplete?: string
}

export const email: FieldType<EmailConfig> = {
  name: 'email',
  config: Type.Object(
    {
      placeholder: Type.Optional(Placeholder),
      default: Type.Optional(Type.String({ maxLength: EMAIL_MAX_LENGTH })),
      autocomplete: Type.Optional(Autocomplete),
    },
    { additionalProperties: false },
  ),
  checkConfig: (config) => [autocompleteProblem('email', config.autocomplete)].filter((p) => p !== undefined),
  parse(input) {
    if (isBlank(input)) return EMPTY
    if (typeof input !== 'string') return rejected('Expected an email address', 'invalid_type')
    // Browsers strip surrounding whitespace from type=email; so do we.
    const value = input.trim()
    const length = characterCount(value)
    if (length > EMAIL_MAX_LENGTH) return tooLong(EMAIL_MAX_LENGTH, length - EMAIL_MAX_LENGTH)
    if (!EMAIL.test(value)) return rejected('Enter an email address such as name@example.com', 'email')
    return answer(value)
  },
  control: (config) => ({
    kind: 'input',
    attributes: {
      type: 'email',
      placeholder: config.placeholder,
      autocomplete: config.autocomplete ?? 'email',
      spellcheck: 'false',
    },
  }),
  answerSchema: () => ({ type: 'string', format: 'email', maxLength: EMAIL_MAX_LENGTH }),
}
