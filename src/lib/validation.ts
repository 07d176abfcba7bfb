import type { Static, TSchema } from '@sinclair/typebox'
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler'
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors'
import { type ErrorCode, type Problem, ProblemList } from './errors.ts'
import { pointerAt, walkJson } from './json.ts'

/**
 * Validation against TypeBox schemas with messages a person (or a language
 * model) can act on. The same schemas document the API in OpenAPI.
 *
 * Schema annotations read here:
 * - `errorMessage`: replaces the generic message for this schema.
 * - `discriminator: { propertyName }` on a union of objects: errors are
 *   reported against the variant the value names, not as "no variant matched".
 */

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>()

function compile(schema: TSchema): TypeCheck<TSchema> {
  let check = compiled.get(schema)
  if (!check) {
    check = TypeCompiler.Compile(schema)
    compiled.set(schema, check)
  }
  return check
}

/** Compiles `schema` now, so the first request that needs it does not wait for that. */
export function prepareValidation(schema: TSchema): void {
  compile(schema)
}

/**
 * Adds the problems of `value` against `schema` to `into`, paths prefixed
 * with `at`, and stops looking once `into` is full: the work is bounded by
 * the problems reported, not by how many a body holds.
 */
export function collectProblems(schema: TSchema, value: unknown, into: ProblemList, at = ''): void {
  const check = compile(schema)
  if (check.Check(value)) return
  const seen = new Set<string>()
  for (const error of check.Errors(value)) {
    if (into.full) {
      into.overflowed = true
      return
    }
    for (const problem of explain(error, at, into)) {
      // TypeBox may report one missing or mistyped value more than once.
      if (seen.has(problem.path)) continue
      seen.add(problem.path)
      into.add(problem)
    }
  }
}

/** Returns `value` typed by `schema`, or throws a 422 listing its problems. */
export function validate<S extends TSchema>(schema: S, value: unknown, at = ''): Static<S> {
  const problems = new ProblemList()
  collectProblems(schema, value, problems, at)
  problems.throwIfAny()
  return value as Static<S>
}

/** Problems of a union's variant go straight into `into`; the others come back to be added. */
function explain(error: ValueError, at: string, into: ProblemList): Problem[] {
  const path = at + error.path
  const custom = (error.schema as { errorMessage?: string }).errorMessage
  if (error.type === ValueErrorType.Union) return explainUnion(error, path, into)
  const code = codeFor(error)
  if (custom && error.type !== ValueErrorType.ObjectRequiredProperty) return [{ path, message: custom, code }]
  return [{ path, message: messageFor(error), code }]
}

function explainUnion(error: ValueError, path: string, into: ProblemList): Problem[] {
  const union = error.schema as TSchema & { anyOf: TSchema[]; discriminator?: { propertyName: string } }
  const value = error.value
  const discriminator = union.discriminator?.propertyName
  if (discriminator && isPlainObject(value)) {
    const tag = value[discriminator]
    const variant = union.anyOf.find((v) => v.properties?.[discriminator]?.const === tag)
    if (variant) {
      collectProblems(variant, value, into, path)
      return []
    }
    const allowed = union.anyOf.map((v) => v.properties?.[discriminator]?.const).join(', ')
    return [
      tag === undefined
        ? { path: `${path}/${discriminator}`, message: 'Required', code: 'required' }
        : { path: `${path}/${discriminator}`, message: `Must be one of: ${allowed}`, code: 'invalid_value' },
    ]
  }
  const constants = union.anyOf.map((v) => v.const)
  if (constants.every((c) => c !== undefined))
    return [{ path, message: `Must be one of: ${constants.join(', ')}`, code: 'invalid_value' }]
  // Otherwise report against the variant of the value's own JSON type, when there is one.
  const variant = union.anyOf.find((v) => jsonTypeOf(v) === jsonTypeOfValue(value))
  if (variant) {
    collectProblems(variant, value, into, path)
    return []
  }
  const custom = (union as { errorMessage?: string }).errorMessage
  const expected = [...new Set(union.anyOf.map(jsonTypeOf))].join(' or ')
  return [{ path, message: custom ?? `Expected ${expected}`, code: 'invalid_type' }]
}

/** What kind of problem a TypeBox error is (CONTRACT 11's codes). */
function codeFor(error: ValueError): ErrorCode {
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'required'
    case ValueErrorType.ObjectAdditionalProperties:
      return 'unknown_key'
    case ValueErrorType.StringMinLength:
    case ValueErrorType.ArrayMinItems:
    case ValueErrorType.ObjectMinProperties:
      return 'too_short'
    case ValueErrorType.StringMaxLength:
    case ValueErrorType.ArrayMaxItems:
    case ValueErrorType.ObjectMaxProperties:
      return 'too_long'
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberExclusiveMinimum:
    case ValueErrorType.IntegerExclusiveMinimum:
      return 'too_small'
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberExclusiveMaximum:
    case ValueErrorType.IntegerExclusiveMaximum:
      return 'too_large'
    case ValueErrorType.NumberMultipleOf:
    case ValueErrorType.IntegerMultipleOf:
      return 'step'
    case ValueErrorType.StringPattern:
    case ValueErrorType.StringFormat:
    case ValueErrorType.StringFormatUnknown:
      return 'invalid_format'
    case ValueErrorType.ArrayUniqueItems:
      return 'not_unique'
    case ValueErrorType.Literal:
    case ValueErrorType.Never:
      return 'invalid_value'
    default:
      return 'invalid_type'
  }
}

function messageFor(error: ValueError): string {
  const s = error.schema as Record<string, unknown>
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'Required'
    case ValueErrorType.ObjectAdditionalProperties:
      return 'Unknown key'
    case ValueErrorType.StringMinLength:
      return s.minLength === 1 ? 'Must not be empty' : `Must be at least ${s.minLength} characters`
    case ValueErrorType.StringMaxLength:
      return `Must be at most ${s.maxLength} characters`
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `Must be at least ${s.minimum}`
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `Must be at most ${s.maximum}`
    case ValueErrorType.NumberExclusiveMinimum:
    case ValueErrorType.IntegerExclusiveMinimum:
      return `Must be greater than ${s.exclusiveMinimum}`
    case ValueErrorType.ArrayMinItems:
      return `Must have at least ${s.minItems} item${s.minItems === 1 ? '' : 's'}`
    case ValueErrorType.ArrayMaxItems:
      return `Must have at most ${s.maxItems} items`
    case ValueErrorType.Literal:
      return `Must be ${JSON.stringify(s.const)}`
    case ValueErrorType.String:
      return 'Expected a string'
    case ValueErrorType.Number:
      return 'Expected a number'
    case ValueErrorType.Integer:
      return 'Expected an integer'
    case ValueErrorType.Boolean:
      return 'Expected true or false'
    case ValueErrorType.Object:
      return 'Expected an object'
    case ValueErrorType.Array:
      return 'Expected an array'
    case ValueErrorType.Null:
      return 'Expected null'
    default:
      return error.message
  }
}

function jsonTypeOf(schema: TSchema): string {
  if (schema.const !== undefined) return jsonTypeOfValue(schema.const)
  return schema.type === 'integer' ? 'number' : String(schema.type)
}

function jsonTypeOfValue(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Query values arrive as text: those named that hold a whole number become one, for an integer schema to judge. */
export function integerQuery(query: Record<string, unknown>, names: string[]): Record<string, unknown> {
  const converted = { ...query }
  for (const name of names) {
    const value = query[name]
    if (typeof value === 'string' && /^[+-]?\d+$/.test(value)) converted[name] = Number(value)
  }
  return converted
}

/** C0 control characters other than tab, LF and CR: invisible, and a browser can neither show nor send most of them. */
const CONTROL_CHARACTER = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/

const CONTROL_CHARACTER_NAMES = [
  'NUL',
  'SOH',
  'STX',
  'ETX',
  'EOT',
  'ENQ',
  'ACK',
  'BEL',
  'BS',
  'HT',
  'LF',
  'VT',
  'FF',
  'CR',
  'SO',
  'SI',
  'DLE',
  'DC1',
  'DC2',
  'DC3',
  'DC4',
  'NAK',
  'SYN',
  'ETB',
  'CAN',
  'EM',
  'SUB',
  'ESC',
  'FS',
  'GS',
  'RS',
  'US',
]

/**
 * The problem of text holding a control character, naming the first one
 * (it cannot be seen, so the message says which it is); undefined when none.
 */
export function controlCharacterProblem(text: string, path: string): Problem | undefined {
  const found = CONTROL_CHARACTER.exec(text)
  if (found === null) return undefined
  const code = found[0].charCodeAt(0)
  const name = `U+${code.toString(16).toUpperCase().padStart(4, '0')} (${CONTROL_CHARACTER_NAMES[code]})`
  return {
    path,
    message: `Contains the invisible control character ${name}; remove it`,
    code: 'control_character',
    params: { character: name },
  }
}

/**
 * Adds a problem for every string inside `value` that holds a control
 * character, except in the members `freeForm` names (JSON kept as given).
 */
export function collectControlCharacters(value: unknown, into: ProblemList, freeForm: readonly string[] = []): void {
  walkJson(value, (node, place, key) => {
    if (place.depth === 1 && typeof key === 'string' && freeForm.includes(key)) return 'skip'
    if (typeof node === 'string' && CONTROL_CHARACTER.test(node))
      into.add(controlCharacterProblem(node, pointerAt('', place, key))!)
    return into.overflowed ? 'stop' : undefined
  })
}
