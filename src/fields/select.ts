import { Type } from '@sinclair/typebox'
import type { Problem } from '../lib/errors.ts'
import { EMPTY, answer, isBlank, rejected, type FieldType } from './types.ts'
import { Placeholder } from './shared.ts'

export type SelectOption = string | { value: string; label: string }

interface SelectConfig {
  options: SelectOption[]
  placeholder?: string
  default?: string
}

const OptionText = Type.String({ minLength: 1, maxLength: 255 })

export const optionValue = (option: SelectOption) => (typeof option === 'string' ? option : option.value)
export const optionLabel = (option: SelectOption) => (typeof option === 'string' ? option : option.label)

export const select: FieldType<SelectConfig> = {
  name: 'select',
  config: Type.Object(
    {
      options: Type.Array(
        Type.Union([
          OptionText,
          Type.Object({ value: OptionText, label: OptionText }, { additionalProperties: false }),
        ], { errorMessage: 'Expected a string or an object {"value", "label"}' }),
        { minItems: 1, maxItems: 200, description: 'The choices; a string is both value and label' },
      ),
      placeholder: Type.Optional(Placeholder),
      default: Type.Optional(Type.String({ maxLength: 255 })),
    },
    { additionalProperties: false },
  ),
  checkConfig(config) {
    const problems: Problem[] = []
    const seen = new Set<string>()
    config.options.forEach((option, index) => {
      const value = optionValue(option)
      if (seen.has(value)) problems.push({ path: `/options/${index}`, message: `Duplicate option value ${JSON.stringify(value)}` })
      seen.add(value)
    })
    return problems
  },
  parse(input, config) {
    if (isBlank(input)) return EMPTY
    if (typeof input !== 'string') return rejected('Choose one of the options')
    if (!config.options.some((option) => optionValue(option) === input)) return rejected('Choose one of the options')
    return answer(input)
  },
  control: (config) => ({
    kind: 'select',
    attributes: {},
    options: config.options.map((option) => ({ value: optionValue(option), label: optionLabel(option) })),
    placeholder: config.placeholder ?? 'Choose an option',
  }),
  answerSchema: (config) => ({ type: 'string', enum: config.options.map(optionValue) }),
}
