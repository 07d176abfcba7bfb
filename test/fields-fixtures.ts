/**
 * What the field type tests (test/fields-*.test.ts) share: a type's parse called
 * through the registry, parsed values, field definitions and uploads.
 */
import { expect } from 'bun:test'
import { fieldTypes } from '../src/fields/index.ts'
import { type FieldDefinition, type FieldType, type Parsed, Upload } from '../src/fields/types.ts'

// ---------------------------------------------------------------- helpers

export type Config = Record<string, unknown>

export function typeOf(name: string): FieldType {
  const type = fieldTypes[name]
  if (!type) throw new Error(`No field type ${name}`)
  return type
}

/** A parse that answers at once: every check but an old pattern's. */
export function parse(name: string, input: unknown, config: Config = {}, required = false): Parsed {
  const parsed = typeOf(name).parse(input, config, required)
  if (parsed instanceof Promise) throw new Error('this parse answers later: await it')
  return parsed
}

/** The expected outcomes, as `toEqual` compares them. */
export const value = (v: string | number | boolean): Parsed => ({ kind: 'value', value: v })
// Every rejection says what kind it is (CONTRACT 11's codes); params only where the message has placeholders.
export const INVALID: Parsed = expect.objectContaining({
  kind: 'invalid',
  message: expect.any(String),
  code: expect.any(String),
})
export const EMPTY: Parsed = { kind: 'empty' }

export const field = (key: string, type: string, config?: Config, required?: boolean): FieldDefinition => ({
  key,
  type,
  label: key,
  ...(config === undefined ? {} : { config }),
  ...(required === undefined ? {} : { required }),
})

/** An upload of `size` bytes. */
export const upload = (name: string, type: string, size: number) => new Upload(name, type, size, 'file-id')

/** The smallest config each type accepts. */
export const BASE: Record<string, Config> = {
  text: {},
  textarea: {},
  email: {},
  number: {},
  select: { options: ['a', 'b'] },
  checkbox: {},
  date: {},
  file: {},
}

export const MIB = 1024 * 1024
