import { Type } from '@sinclair/typebox'
import { isCalendarDate } from '../lib/time.ts'
import { EMPTY, answer, checkBounds, isBlank, rejected, type FieldType } from './types.ts'

interface DateConfig {
  default?: string
  min?: string
  max?: string
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
    },
    { additionalProperties: false },
  ),
  checkConfig(config) {
    const unreal = (['min', 'max'] as const)
      .filter((key) => config[key] !== undefined && !isCalendarDate(config[key]))
      .map((key) => ({ path: `/${key}`, message: 'Is not a real calendar date' }))
    // YYYY-MM-DD strings compare as the dates they name.
    return unreal.length > 0 ? unreal : checkBounds(config)
  },
  parse(input, config) {
    if (isBlank(input)) return EMPTY
    if (typeof input !== 'string' || !isCalendarDate(input.trim())) return rejected('Enter a real date as YYYY-MM-DD')
    const value = input.trim()
    if (config.min !== undefined && value < config.min) return rejected(`Must be on or after ${config.min}`)
    if (config.max !== undefined && value > config.max) return rejected(`Must be on or before ${config.max}`)
    return answer(value)
  },
  control: (config) => ({ kind: 'input', attributes: { type: 'date', min: config.min, max: config.max } }),
  // Browsers without a date picker show a plain text box: say which format to type.
  note(config) {
    if (config.min !== undefined && config.max !== undefined) return `A date from ${config.min} to ${config.max} (YYYY-MM-DD).`
    if (config.min !== undefined) return `A date on or after ${config.min} (YYYY-MM-DD).`
    if (config.max !== undefined) return `A date on or before ${config.max} (YYYY-MM-DD).`
    return 'A date, written YYYY-MM-DD.'
  },
  answerSchema(config) {
    const bounds = [config.min && `on or after ${config.min}`, config.max && `on or before ${config.max}`].filter(Boolean)
    return { type: 'string', format: 'date', ...(bounds.length > 0 ? { description: `A date ${bounds.join(' and ')}` } : {}) }
  },
}
