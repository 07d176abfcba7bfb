import { Type } from '@sinclair/typebox'
import { answer, type FieldType, isBlank, rejected } from './types.ts'

interface CheckboxConfig {
  default?: boolean
}

// A browser sends a ticked box as its value ("on" unless set) and an unticked one not at all.
const TICKED = new Set(['on', 'true'])
const UNTICKED = new Set(['off', 'false'])

export const checkbox: FieldType<CheckboxConfig> = {
  name: 'checkbox',
  config: Type.Object(
    { default: Type.Optional(Type.Boolean({ description: 'Whether the box starts ticked' })) },
    { additionalProperties: false },
  ),
  checkConfig: () => [],
  parse(input, _config, required) {
    let ticked: boolean
    // No value at all is how a browser sends an unticked box; a blank one means the same.
    if (isBlank(input)) ticked = false
    else if (typeof input === 'boolean') ticked = input
    else if (typeof input === 'string' && TICKED.has(input.toLowerCase())) ticked = true
    else if (typeof input === 'string' && UNTICKED.has(input.toLowerCase())) ticked = false
    else return rejected('Expected true or false', 'invalid_type')
    if (required && !ticked) return rejected('This box must be ticked', 'unchecked')
    return answer(ticked)
  },
  control: () => ({ kind: 'checkbox', attributes: {} }),
  // A required box is always ticked in a response; an optional one is true or false.
  answerSchema: (_config, required) => (required ? { type: 'boolean', const: true } : { type: 'boolean' }),
}
