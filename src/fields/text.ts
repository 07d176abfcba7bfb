import { Type } from '@sinclair/typebox'
import type { Message } from '../i18n/index.ts'
import type { Problem } from '../lib/errors.ts'
import { Autocomplete, autocompleteProblem, isTelToken } from './autocomplete.ts'
import { matchPattern, type PatternVerdict, patternProblem } from './pattern.ts'
import { Placeholder } from './shared.ts'
import { answer, EMPTY, type FieldType, isBlank, type Parsed, rejected } from './types.ts'

const TEXT_MAX_LENGTH = 10_000

interface TextConfig {
  placeholder?: string
  default?: string
  min_length?: number
  max_length?: number
  pattern?: string
  autocomplete?: string
}

export const text: FieldType<TextConfig> = {
  name: 'text',
  config: Type.Object(
    {
      placeholder: Type.Optional(Placeholder),
      default: Type.Optional(Type.String({ maxLength: TEXT_MAX_LENGTH })),
      min_length: Type.Optional(Type.Integer({ minimum: 0, maximum: TEXT_MAX_LENGTH })),
      max_length: Type.Optional(Type.Integer({ minimum: 1, maximum: TEXT_MAX_LENGTH, default: 1000 })),
      pattern: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 1000,
          description: 'A regular expression the whole value must match, as the HTML pattern attribute',
        }),
      ),
      autocomplete: Type.Optional(Autocomplete),
    },
    { additionalProperties: false },
  ),
  checkConfig(config) {
    const problems: Problem[] = []
    const maxLength = config.max_length ?? 1000
    if (config.min_length !== undefined && config.min_length > maxLength) {
      problems.push({
        path: '/min_length',
        message: `Must not be greater than max_length (${maxLength})`,
        code: 'invalid_value',
      })
    }
    const autocomplete = autocompleteProblem('text', config.autocomplete)
    if (autocomplete) problems.push(autocomplete)
    if (config.pattern !== undefined) {
      const problem = patternProblem(config.pattern, maxLength)
      if (problem !== undefined) problems.push({ path: '/pattern', message: problem, code: 'invalid_pattern' })
    }
    return problems
  },
  parse(input, config) {
    if (isBlank(input)) return EMPTY
    if (typeof input !== 'string') return rejected('Expected text', 'invalid_type')
    if (/[\r\n]/.test(input)) return rejected('Must be a single line', 'invalid_format')
    const maxLength = config.max_length ?? 1000
    const wrongLength = checkLength(input, config.min_length, maxLength)
    if (wrongLength !== undefined || config.pattern === undefined) return wrongLength ?? answer(input)
    const verdict = matchPattern(config.pattern, maxLength, input)
    return verdict instanceof Promise ? verdict.then((v) => patternOutcome(v, input)) : patternOutcome(verdict, input)
  },
  control: (config) => ({
    kind: 'input',
    attributes: {
      // A phone number's token asks for the phone keypad; no maxlength: a longer paste is kept and refused in words (CONTRACT 14).
      type: isTelToken(config.autocomplete) ? 'tel' : 'text',
      minlength: config.min_length,
      pattern: config.pattern,
      placeholder: config.placeholder,
      autocomplete: config.autocomplete,
    },
  }),
  note: (config) => lengthNote(config.min_length, config.max_length),
  maxSubmittedBytes: (config) => encodedTextBytes(config.max_length ?? 1000),
  answerSchema: (config) => ({
    type: 'string',
    ...(config.min_length ? { minLength: config.min_length } : {}),
    maxLength: config.max_length ?? 1000,
    // The whole value must match, as in HTML; JSON Schema patterns match anywhere.
    ...(config.pattern ? { pattern: `^(?:${config.pattern})$` } : {}),
  }),
}

/**
 * Worst case for `maxLength` characters in a form post: 4 UTF-8 bytes per
 * character, each percent-encoded to 3.
 */
export const encodedTextBytes = (maxLength: number) => maxLength * 12

/**
 * The length a person must meet, as the hint says it: the maximum only when
 * the API client set one (the defaults are roomy and a refusal says by how much,
 * so stating "up to 1,000 characters" under every short question is noise).
 */
export function lengthNote(minLength: number | undefined, maxLength: number | undefined): Message | undefined {
  if (minLength && maxLength !== undefined)
    return { key: 'hint.length_between', params: { min: minLength, count: maxLength } }
  if (maxLength !== undefined) return { key: 'hint.max_length', params: { count: maxLength } }
  return minLength ? { key: 'hint.min_length', params: { count: minLength } } : undefined
}

/** The refusal of a value `over` characters longer than `maxLength`: the page says both numbers. */
export const tooLong = (maxLength: number, over: number) =>
  rejected(`Must be at most ${maxLength} characters; this is ${over} too many`, 'too_long', { count: maxLength, over })

/**
 * Lengths of answers are counted in characters (Unicode code points), as JSON
 * Schema counts them, so the published answers schema holds exactly.
 */
export function checkLength(value: string, minLength: number | undefined, maxLength: number) {
  const length = characterCount(value)
  if (minLength !== undefined && length < minLength)
    return rejected(`Must be at least ${minLength} characters`, 'too_short', { count: minLength })
  if (length > maxLength) return tooLong(maxLength, length - maxLength)
  return undefined
}

/** Code points, not UTF-16 units: an emoji is one. */
export function characterCount(text: string): number {
  let count = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    // A high surrogate followed by a low one is one character.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) i++
    }
    count++
  }
  return count
}

function patternOutcome(verdict: PatternVerdict, value: string): Parsed {
  if (verdict === 'match') return answer(value)
  if (verdict === 'timeout')
    return rejected(
      'Could not be checked against the required format in time; try again, or a shorter value',
      'pattern',
    )
  return rejected('Does not match the required format', 'pattern')
}
