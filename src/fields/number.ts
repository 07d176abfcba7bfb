import { Type } from '@sinclair/typebox'
import type { Message, MessageParams } from '../i18n/index.ts'
import { numberExample, readNumber } from '../i18n/numbers.ts'
import type { Problem } from '../lib/errors.ts'
import { Placeholder } from './shared.ts'
import { answer, checkBounds, EMPTY, type FieldType, isBlank, rejected } from './types.ts'

interface NumberConfig {
  placeholder?: string
  default?: number
  min?: number
  max?: number
  step?: number
}

// A number in a JSON string: a plain ASCII decimal, optionally with an exponent.
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/
const JSON_EXAMPLE = '1234.5'

export const number: FieldType<NumberConfig> = {
  name: 'number',
  config: Type.Object(
    {
      placeholder: Type.Optional(Placeholder),
      default: Type.Optional(Type.Number()),
      min: Type.Optional(Type.Number()),
      max: Type.Optional(Type.Number()),
      step: Type.Optional(
        Type.Number({ exclusiveMinimum: 0, description: 'Allowed increment, counted from min (or 0)' }),
      ),
    },
    { additionalProperties: false },
  ),
  checkConfig: (config): Problem[] => checkBounds(config),
  parse(input, config, _required, context) {
    if (isBlank(input)) return EMPTY
    const locale = context?.locale
    let value: number | undefined
    if (typeof input === 'number') value = input
    else if (typeof input === 'string')
      value =
        locale === undefined
          ? DECIMAL.test(input.trim())
            ? Number(input.trim())
            : undefined
          : readNumber(locale, input, context?.region)
    if (value === undefined) {
      // A form post is read as the page's language writes numbers (src/i18n/numbers.ts); JSON takes JSON numbers or ASCII decimals.
      if (locale !== undefined) {
        const example = numberExample(locale)
        return rejected(
          `Enter a number as the page's language (${locale}) writes it, for example ${example}`,
          'invalid_format',
          { example },
        )
      }
      const expected = `Expected a number, for example ${JSON_EXAMPLE}: a JSON number, or a string of ASCII digits with "." as the decimal point`
      return rejected(expected, typeof input === 'string' ? 'invalid_format' : 'invalid_type', {
        example: JSON_EXAMPLE,
      })
    }
    // Beyond 2^53 a number loses digits on the way to storage; refuse rather than change it.
    if (!Number.isFinite(value) || Math.abs(value) > Number.MAX_SAFE_INTEGER)
      return rejected(
        'Enter a number between -9007199254740991 and 9007199254740991',
        Number.isFinite(value) && value < 0 ? 'too_small' : 'too_large',
        value < 0 ? { min: -Number.MAX_SAFE_INTEGER } : { max: Number.MAX_SAFE_INTEGER },
      )
    if (config.min !== undefined && value < config.min)
      return rejected(`Must be at least ${config.min}`, 'too_small', { min: config.min })
    if (config.max !== undefined && value > config.max)
      return rejected(`Must be at most ${config.max}`, 'too_large', { max: config.max })
    if (config.step !== undefined && !onStep(value, config.min ?? 0, config.step)) {
      const params: MessageParams = config.min ? { step: config.step, min: config.min } : { step: config.step }
      return rejected(`Must be a multiple of ${config.step}${config.min ? ` from ${config.min}` : ''}`, 'step', params)
    }
    // -0 would serialise as 0 anyway; keep answers canonical.
    return answer(value === 0 ? 0 : value)
  },
  // Text, not type=number: a browser's number control reads a decimal comma as its own locale does
  // (Chrome sent 412,80 as 41280, Firefox sent nothing); the server reads it in the page's language.
  // min, max and step would be ignored on a text input: the hint states the limits.
  control: (config) => ({
    kind: 'input',
    attributes: {
      type: 'text',
      inputmode: wholeNumbersOnly(config) ? 'numeric' : 'decimal',
      spellcheck: 'false',
      placeholder: config.placeholder,
    },
  }),
  note(config): Message | undefined {
    if (config.min !== undefined && config.max !== undefined)
      return { key: 'hint.number_between', params: { min: config.min, max: config.max } }
    if (config.min !== undefined) return { key: 'hint.number_min', params: { min: config.min } }
    if (config.max !== undefined) return { key: 'hint.number_max', params: { max: config.max } }
    return undefined
  },
  answerSchema(config) {
    const schema: Record<string, unknown> = { type: 'number' }
    if (config.min !== undefined) schema.minimum = config.min
    if (config.max !== undefined) schema.maximum = config.max
    if (config.step !== undefined) {
      // multipleOf counts from 0; a step counted from another min is stated in words.
      if (onStep(config.min ?? 0, 0, config.step)) schema.multipleOf = config.step
      else schema.description = `A multiple of ${config.step} from ${config.min}`
    }
    return schema
  },
}

/** Only whole numbers are valid: a whole step counted from a whole min (or 0). */
const wholeNumbersOnly = (config: NumberConfig) =>
  config.step !== undefined &&
  Number.isInteger(config.step) &&
  (config.min === undefined || Number.isInteger(config.min))

function onStep(value: number, base: number, step: number): boolean {
  const steps = (value - base) / step
  // Decimal steps such as 0.1 do not divide exactly in binary floating point:
  // allow the rounding error of numbers this size (a few ulps, in steps), never half a step.
  const roundingError = (Math.max(Math.abs(value), Math.abs(base), step) * 2 ** -40) / step
  return Math.abs(steps - Math.round(steps)) <= roundingError
}
