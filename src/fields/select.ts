import { Type } from '@sinclair/typebox'
import type { Message } from '../i18n/index.ts'
import type { Problem } from '../lib/errors.ts'
import { Autocomplete, autocompleteProblem } from './autocomplete.ts'
import { Placeholder } from './shared.ts'
import { answer, type Control, EMPTY, type FieldType, isBlank, type Parsed, rejected } from './types.ts'

export type SelectOption = string | { value: string; label: string }

interface SelectConfig {
  options: SelectOption[]
  placeholder?: string
  default?: string | string[]
  multiple?: boolean
  min_selected?: number
  max_selected?: number
  display?: 'auto' | 'radio' | 'dropdown'
  autocomplete?: string
}

const OptionText = Type.String({ minLength: 1, maxLength: 255 })
/** CONTRACT 13a. A list past it is refused before any option is looked at (forms/create-body.ts). */
const MAX_OPTIONS = 1000
/** With `display: auto`, more options than this are a drop-down: a longer list of radios is hard to scan. */
const RADIOS_UP_TO = 7

export const optionValue = (option: SelectOption) => (typeof option === 'string' ? option : option.value)
export const optionLabel = (option: SelectOption) => (typeof option === 'string' ? option : option.label)

const Selected = Type.Integer({ minimum: 1, maximum: MAX_OPTIONS })

export const select: FieldType<SelectConfig> = {
  name: 'select',
  config: Type.Object(
    {
      options: Type.Array(
        Type.Union(
          [OptionText, Type.Object({ value: OptionText, label: OptionText }, { additionalProperties: false })],
          { errorMessage: 'Expected a string or an object {"value", "label"}' },
        ),
        { minItems: 1, maxItems: MAX_OPTIONS, description: 'The choices; a string is both value and label' },
      ),
      placeholder: Type.Optional(Placeholder),
      default: Type.Optional(
        Type.Union(
          [Type.String({ maxLength: 255 }), Type.Array(Type.String({ maxLength: 255 }), { maxItems: MAX_OPTIONS })],
          {
            description: 'An option value; with multiple, an array of them',
          },
        ),
      ),
      multiple: Type.Optional(
        Type.Boolean({
          default: false,
          description:
            'Any number of options may be chosen (checkboxes); the answer is an array of values in option order',
        }),
      ),
      min_selected: Type.Optional({ ...Selected, description: 'With multiple: the fewest options an answer chooses' }),
      max_selected: Type.Optional({ ...Selected, description: 'With multiple: the most options an answer chooses' }),
      display: Type.Optional(
        Type.Union([Type.Literal('auto'), Type.Literal('radio'), Type.Literal('dropdown')], {
          default: 'auto',
          description: `How a single choice is shown: auto (radio buttons up to ${RADIOS_UP_TO} options, a drop-down beyond), radio or dropdown`,
        }),
      ),
      autocomplete: Type.Optional({
        ...Autocomplete,
        description:
          'An HTML autofill token for a single choice, such as country, country-name or sex: the choice is a drop-down (the control browsers fill)',
      }),
    },
    { additionalProperties: false },
  ),
  checkConfig(config) {
    const problems: Problem[] = []
    const seen = new Set<string>()
    config.options.forEach((option, index) => {
      const value = optionValue(option)
      if (seen.has(value))
        problems.push({
          path: `/options/${index}`,
          message: `Duplicate option value ${JSON.stringify(value)}`,
          code: 'not_unique',
        })
      seen.add(value)
    })
    const autocomplete = autocompleteProblem('select', config.autocomplete)
    if (autocomplete) problems.push(autocomplete)
    // Browsers fill only a drop-down: radio buttons and checkboxes take no autofill.
    else if (config.autocomplete !== undefined && (config.multiple || config.display === 'radio')) {
      problems.push({
        path: '/autocomplete',
        message:
          'Only a drop-down can be filled by the browser: leave autocomplete out, or use a single choice with "display": "auto" or "dropdown"',
        code: 'invalid_value',
      })
    }
    if (config.multiple) {
      if (config.display === 'dropdown')
        problems.push({
          path: '/display',
          message: 'A multiple select is a group of checkboxes: use "auto" or leave display out',
          code: 'invalid_value',
        })
      if (config.placeholder !== undefined)
        problems.push({
          path: '/placeholder',
          message: 'A multiple select (checkboxes) has no placeholder',
          code: 'invalid_value',
        })
      if (typeof config.default === 'string')
        problems.push({
          path: '/default',
          message: 'Expected an array of option values (multiple is true)',
          code: 'invalid_type',
        })
      const options = config.options.length
      const { min_selected: min, max_selected: max } = config
      if (min !== undefined && min > options)
        problems.push({
          path: '/min_selected',
          message: `Must be at most the number of options (${options})`,
          code: 'too_large',
        })
      if (max !== undefined && max > options)
        problems.push({
          path: '/max_selected',
          message: `Must be at most the number of options (${options})`,
          code: 'too_large',
        })
      if (min !== undefined && max !== undefined && min > max)
        problems.push({ path: '/max_selected', message: 'Must not be less than min_selected', code: 'invalid_value' })
    } else {
      for (const key of ['min_selected', 'max_selected'] as const) {
        if (config[key] !== undefined)
          problems.push({
            path: `/${key}`,
            message: 'Only for a multiple select: set "multiple": true',
            code: 'invalid_value',
          })
      }
      if (Array.isArray(config.default))
        problems.push({
          path: '/default',
          message: 'Expected one option value (an array only with "multiple": true)',
          code: 'invalid_type',
        })
    }
    return problems
  },
  parse(input, config) {
    if (config.multiple) return parseChoices(input, config)
    if (isBlank(input)) return EMPTY
    if (typeof input !== 'string') return rejected('Choose one of the options', 'invalid_type')
    if (!config.options.some((option) => optionValue(option) === input))
      return rejected('Choose one of the options', 'not_an_option')
    return answer(input)
  },
  control(config): Control {
    const options = config.options.map((option) => ({ value: optionValue(option), label: optionLabel(option) }))
    if (config.multiple) return { kind: 'checkboxes', options }
    const display = config.display ?? 'auto'
    const radios =
      display === 'radio' || (display === 'auto' && options.length <= RADIOS_UP_TO && config.autocomplete === undefined)
    if (radios) return { kind: 'radios', options }
    return {
      kind: 'select',
      attributes: { autocomplete: config.autocomplete },
      options,
      placeholder: config.placeholder,
    }
  },
  note(config): Message | undefined {
    if (!config.multiple) return undefined
    const { min_selected: min, max_selected: max } = config
    if (min !== undefined && max !== undefined) {
      return min === max
        ? { key: 'hint.select_exactly', params: { count: min } }
        : { key: 'hint.select_between', params: { min, max } }
    }
    if (min !== undefined) return { key: 'hint.select_at_least', params: { count: min } }
    if (max !== undefined) return { key: 'hint.select_at_most', params: { count: max } }
    return { key: 'hint.select_any' }
  },
  // A form post repeats the key for every tick: each value percent-encoded (up to 12 bytes a character) with its key and part headers.
  maxSubmittedBytes: (config) =>
    config.multiple
      ? config.options.reduce((total, option) => total + (optionValue(option).length + 64) * 12 + 256, 4096)
      : 4096,
  answerSchema(config, required) {
    const values = config.options.map(optionValue)
    if (!config.multiple) return { type: 'string', enum: values }
    // Nothing chosen is no answer: an answer that is there chose at least one.
    const minItems = Math.max(config.min_selected ?? 0, required ? 1 : 0)
    return {
      type: 'array',
      items: { type: 'string', enum: values },
      uniqueItems: true,
      ...(minItems > 0 ? { minItems } : {}),
      ...(config.max_selected !== undefined ? { maxItems: config.max_selected } : {}),
    }
  },
}

/** A multiple select's answer: option values, each once, in option order; none chosen is no answer. */
function parseChoices(input: unknown, config: SelectConfig): Parsed {
  if (input === undefined || input === null) return EMPTY
  if (!Array.isArray(input) || !input.every((value) => typeof value === 'string')) {
    return rejected('Expected an array of option values', 'invalid_type')
  }
  if (input.length === 0) return EMPTY
  const chosen = new Set<string>(input)
  if (chosen.size < input.length) return rejected('Choose each option only once', 'not_unique')
  const values = config.options.map(optionValue)
  if (input.some((value) => !values.includes(value))) return rejected('Choose only from the options', 'not_an_option')
  const { min_selected: min, max_selected: max } = config
  if (min !== undefined && chosen.size < min)
    return rejected(`Choose at least ${min} option${min === 1 ? '' : 's'}`, 'too_few_selected', { count: min })
  if (max !== undefined && chosen.size > max)
    return rejected(`Choose at most ${max} option${max === 1 ? '' : 's'}`, 'too_many_selected', { count: max })
  return answer(values.filter((value) => chosen.has(value)))
}
