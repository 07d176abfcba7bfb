import { Type } from '@sinclair/typebox'
import type { Message } from '../i18n/index.ts'
import { Autocomplete, autocompleteProblem } from './autocomplete.ts'
import { isCalendarDate } from '../lib/time.ts'
import { EMPTY, answer, checkBounds, isBlank, rejected, type FieldType } from './types.ts'

interface DateConfig {
  default?: string
  min?: string
  max?: string
  autocomplete?: string
}

const CalendarDate = Type.String({
  pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
  errorMessage: 'Expected a date as YYYY-MM-DD',
})

export const date: FieldType<DateConfig> = {
  name: 'date',
  config: Type.Object(
    {
      default: Type.Optional(CalendarDate),
      min: Type.Optional(CalendarDate),
      max: Type.Optional(CalendarDate),
      autocomplete: Type.Optional(Autocomplete),
    },
    { additionalProperties: false },
  ),
  checkConfig(config) {
    const unreal = (['min', 'max'] as const)
      .filter((key) => config[key] !== undefined && !isCalendarDate(config[key]))
      .map((key) => ({ path: `/${key}`, message: 'Is not a real calendar date', code: 'date' as const }))
    const autocomplete = autocompleteProblem('date', config.autocomplete)
    // YYYY-MM-DD strings compare as the dates they name.
    return [...(unreal.length > 0 ? unreal : checkBounds(config)), ...(autocomplete ? [autocomplete] : [])]
  },
  parse(input, config) {
    if (isBlank(input)) return EMPTY
    if (typeof input !== 'string') return rejected('Enter a real date as YYYY-MM-DD', 'invalid_type')
    if (!isCalendarDate(input.trim())) return rejected('Enter a real date as YYYY-MM-DD', 'date')
    const value = input.trim()
    if (config.min !== undefined && value < config.min) return rejected(`Must be on or after ${config.min}`, 'date_too_early', { date: { date: config.min } })
    if (config.max !== undefined && value > config.max) return rejected(`Must be on or before ${config.max}`, 'date_too_late', { date: { date: config.max } })
    return answer(value)
  },
  control: (config) => ({ kind: 'input', attributes: { type: 'date', min: config.min, max: config.max, autocomplete: config.autocomplete } }),
  // Only the bounds: the date control shows its own format, which a written one would contradict.
  note(config): Message | undefined {
    if (config.min !== undefined && config.max !== undefined) return { key: 'hint.date_between', params: { min: { date: config.min }, max: { date: config.max } } }
    if (config.min !== undefined) return { key: 'hint.date_min', params: { min: { date: config.min } } }
    if (config.max !== undefined) return { key: 'hint.date_max', params: { max: { date: config.max } } }
    return undefined
  },
  answerSchema(config) {
    const bounds = [config.min && `on or after ${config.min}`, config.max && `on or before ${config.max}`].filter(Boolean)
    return { type: 'string', format: 'date', ...(bounds.length > 0 ? { description: `A date ${bounds.join(' and ')}` } : {}) }
  },
}
