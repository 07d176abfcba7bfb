import { Type } from '@sinclair/typebox'
import type { DatePart, Message } from '../i18n/index.ts'
import { isCalendarDate } from '../lib/time.ts'
import { Autocomplete, autocompleteProblem } from './autocomplete.ts'
import { answer, checkBounds, EMPTY, type FieldType, isBlank, type Parsed, rejected } from './types.ts'

interface DateConfig {
  default?: string
  min?: string
  max?: string
  autocomplete?: string
  input?: 'calendar' | 'memorable'
}

const CalendarDate = Type.String({
  pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
  errorMessage: 'Expected a date as YYYY-MM-DD',
})

/** The control a date field shows: the given `input`, else three boxes for a date of birth (GOV.UK's advice), else the calendar. */
function dateInput(config: DateConfig): 'calendar' | 'memorable' {
  return config.input ?? (isBirthday(config.autocomplete) ? 'memorable' : 'calendar')
}

const isBirthday = (token: string | undefined) =>
  token !== undefined && token.trim().toLowerCase().split(/\s+/).at(-1) === 'bday'

export const DATE_PARTS: readonly DatePart[] = ['day', 'month', 'year']

/** The page's name for one part of a memorable date (keys starting with "_" belong to the page, not the form). */
export const datePartName = (part: DatePart, key: string) => `_${part}_${key}`

/** Whether a post's name is one of a memorable date's boxes: the answer's words, though the page names them. */
export const isDatePartName = (name: string) => DATE_PARTS.some((part) => name.startsWith(`_${part}_`))

/** What the person typed in a memorable date's three boxes, as typed. */
export type TypedDateParts = Record<DatePart, string>

/**
 * Three typed parts that make no date: why (the catalog key the page words it
 * with) and which parts to mark. The field's `parse` refuses it.
 */
export class UnreadableDate {
  constructor(
    readonly problem:
      | 'missing_day'
      | 'missing_month'
      | 'missing_year'
      | 'missing_day_month'
      | 'missing_day_year'
      | 'missing_month_year'
      | 'not_real'
      | 'year_digits',
    readonly parts: readonly DatePart[],
  ) {}
}

/**
 * The date three typed parts name, as `YYYY-MM-DD`; undefined when all three
 * are empty (no answer); else why they name none. Digits of any script count
 * (٢٧ is 27); around a part, spaces do not.
 */
export function composeDate(typed: TypedDateParts): string | undefined | UnreadableDate {
  const parts = {
    day: asciiDigits(typed.day.trim()),
    month: asciiDigits(typed.month.trim()),
    year: asciiDigits(typed.year.trim()),
  }
  const missing = DATE_PARTS.filter((part) => parts[part] === '')
  if (missing.length === 3) return undefined
  if (missing.length > 0)
    return new UnreadableDate(`missing_${missing.join('_')}` as UnreadableDate['problem'], missing)
  const notNumbers = DATE_PARTS.filter((part) => !/^[0-9]+$/.test(parts[part]))
  if (notNumbers.length > 0) return new UnreadableDate('not_real', notNumbers)
  const day = Number(parts.day),
    month = Number(parts.month)
  if (!/^[0-9]{4}$/.test(parts.year)) return new UnreadableDate('year_digits', ['year'])
  if (month < 1 || month > 12) return new UnreadableDate('not_real', ['month'])
  if (day < 1 || day > 31) return new UnreadableDate('not_real', ['day'])
  const value = `${parts.year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`
  return isCalendarDate(value) ? value : new UnreadableDate('not_real', DATE_PARTS)
}

/** The digit 0 of each decimal script a person may type in (Arabic-Indic, Persian, Devanagari, Bengali, full-width, Thai). */
const DIGIT_ZEROS = [0x0660, 0x06f0, 0x0966, 0x09e6, 0xff10, 0x0e50]

function asciiDigits(text: string): string {
  return text.replace(/\p{Nd}/gu, (digit) => {
    const code = digit.codePointAt(0)!
    const zero = DIGIT_ZEROS.find((start) => code >= start && code <= start + 9)
    return zero === undefined ? digit : String(code - zero)
  })
}

/** A date a memorable input's example uses: 27 March 2007 (GOV.UK's), moved into the field's range when outside it. */
function exampleDate(config: DateConfig): string {
  const example = '2007-03-27'
  if (config.min !== undefined && example < config.min) return config.min
  if (config.max !== undefined && example > config.max) return config.max
  return example
}

/** The words of a date refused for its range: "on <date>" for a one-day range. */
function outOfRange(config: DateConfig, value: string): Parsed | undefined {
  const { min, max } = config
  if (min !== undefined && min === max && value !== min)
    return rejected(`Must be ${min}`, value < min ? 'date_too_early' : 'date_too_late', {
      date: { date: min },
      wording: 'date.on',
    })
  if (min !== undefined && value < min)
    return rejected(`Must be on or after ${min}`, 'date_too_early', { date: { date: min } })
  if (max !== undefined && value > max)
    return rejected(`Must be on or before ${max}`, 'date_too_late', { date: { date: max } })
  return undefined
}

export const date: FieldType<DateConfig> = {
  name: 'date',
  config: Type.Object(
    {
      default: Type.Optional(CalendarDate),
      min: Type.Optional(CalendarDate),
      max: Type.Optional(CalendarDate),
      autocomplete: Type.Optional(Autocomplete),
      input: Type.Optional(
        Type.Union([Type.Literal('calendar'), Type.Literal('memorable')], {
          description:
            "How the page asks for the date: calendar (the browser's date control) or memorable (three boxes: day, month and year, for a date the person knows, such as a date of birth). Default: memorable when autocomplete is bday, else calendar",
        }),
      ),
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
    if (input instanceof UnreadableDate) {
      const message =
        input.problem === 'not_real'
          ? 'Enter a real date'
          : input.problem === 'year_digits'
            ? 'The year must have 4 digits'
            : `The date must include a ${input.parts.join(' and ')}`
      return rejected(message, 'date', { wording: `date.${input.problem}`, parts: input.parts.join(' ') })
    }
    if (isBlank(input)) return EMPTY
    if (typeof input !== 'string') return rejected('Enter a real date as YYYY-MM-DD', 'invalid_type')
    if (!isCalendarDate(input.trim())) return rejected('Enter a real date as YYYY-MM-DD', 'date')
    const value = input.trim()
    return outOfRange(config, value) ?? answer(value)
  },
  control(config) {
    if (dateInput(config) === 'memorable') {
      const autocomplete = isBirthday(config.autocomplete)
        ? config.autocomplete!.trim().toLowerCase().replace(/bday$/, 'bday-')
        : undefined
      return { kind: 'date-parts', autocompletePrefix: autocomplete, example: exampleDate(config) }
    }
    return {
      kind: 'input',
      attributes: { type: 'date', min: config.min, max: config.max, autocomplete: config.autocomplete },
    }
  },
  // Only the bounds: the date control shows its own format, which a written one would contradict (the memorable input adds an example).
  note(config): Message | undefined {
    if (config.min !== undefined && config.min === config.max)
      return { key: 'hint.date_on', params: { date: { date: config.min } } }
    if (config.min !== undefined && config.max !== undefined)
      return { key: 'hint.date_between', params: { min: { date: config.min }, max: { date: config.max } } }
    if (config.min !== undefined) return { key: 'hint.date_min', params: { min: { date: config.min } } }
    if (config.max !== undefined) return { key: 'hint.date_max', params: { max: { date: config.max } } }
    return undefined
  },
  answerSchema(config) {
    const bounds =
      config.min !== undefined && config.min === config.max
        ? [`on ${config.min}`]
        : [config.min && `on or after ${config.min}`, config.max && `on or before ${config.max}`].filter(Boolean)
    return {
      type: 'string',
      format: 'date',
      ...(bounds.length > 0 ? { description: `A date ${bounds.join(' and ')}` } : {}),
    }
  },
}
