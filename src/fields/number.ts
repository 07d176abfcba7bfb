import { Type } from '@sinclair/typebox'
import type { Message, MessageParams } from '../i18n/index.ts'
import type { Problem } from '../lib/errors.ts'
import { EMPTY, answer, checkBounds, isBlank, rejected, type FieldType } from './types.ts'
import { Placeholder } from './shared.ts'

interface NumberConfig {
  placeholder?: string
  default?: number
  min?: number
  max?: number
  step?: number
}

// What a browser sends for type=number: a plain decimal, optionally with an exponent.
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/

export const number: FieldType<NumberConfig> = {
  name: 'number',
  config: Type.Object(
    {
      placeholder: Type.Optional(Placeholder),
      default: Type.Optional(Type.Number()),
      min: Type.Optional(Type.Number()),
      max: Type.Optional(Type.Number()),
      step: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Allowed increment, counted from min (or 0)' })),
    },
    { additionalProperties: false },
  ),
  checkConfig: (config): Problem[] => checkBounds(config),
  parse(input, config) {
    if (isBlank(input)) return EMPTY
    let value: number
    if (typeof input === 'number') value = input
    else if (typeof input === 'string' && DECIMAL.test(input.trim())) value = Number(input.trim())
    else return rejected('Enter a number', typeof input === 'string' ? 'invalid_format' : 'invalid_type')
    // Beyond 2^53 a number loses digits on the way to storage; refuse rather than change it.
    if (!Number.isFinite(value) || Math.abs(value) > Number.MAX_SAFE_INTEGER) return rejected('Enter a number between -9007199254740991 and 9007199254740991', Number.isFinite(value) && value < 0 ? 'too_small' : 'too_large', value < 0 ? { min: -Number.MAX_SAFE_INTEGER } : { max: Number.MAX_SAFE_INTEGER })
    if (config.min !== undefined && value < config.min) return rejected(`Must be at least ${config.min}`, 'too_small', { min: config.min })
    if (config.max !== undefined && value > config.max) return rejected(`Must be at most ${config.max}`, 'too_large', { max: config.max })
    if (config.step !== undefined && !onStep(value, config.min ?? 0, config.step)) {
      const params: MessageParams = config.min ? { step: config.step, min: config.min } : { step: config.step }
      return rejected(`Must be a multiple of ${config.step}${config.min ? ` from ${config.min}` : ''}`, 'step', params)
    }
    // -0 would serialise as 0 anyway; keep answers canonical.
    return answer(value === 0 ? 0 : value)
  },
  control: (config) => ({
    kind: 'input',
    attributes: {
      type: 'number',
      min: config.min,
      max: config.max,
      // Without a step the browser would allow whole numbers only.
      step: config.step ?? 'any',
      placeholder: config.placeholder,
      inputmode: 'decimal',
    },
  }),
  note(config): Message | undefined {
    if (config.min !== undefined && config.max !== undefined) return { key: 'hint.number_between', params: { min: config.min, max: config.max } }
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

function onStep(value: number, base: number, step: number): boolean {
  const steps = (value - base) / step
  // Decimal steps such as 0.1 do not divide exactly in binary floating point:
  // allow the rounding error of numbers this size (a few ulps, in steps), never half a step.
  const roundingError = (Math.max(Math.abs(value), Math.abs(base), step) * 2 ** -40) / step
  return Math.abs(steps - Math.round(steps)) <= roundingError
}
