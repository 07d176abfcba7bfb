import type { TObject } from '@sinclair/typebox'
import type { Locale, Message, MessageParams } from '../i18n/index.ts'
import type { ErrorCode, Problem } from '../lib/errors.ts'

/** A value a response's `data` holds: a multiple select's is the chosen option values. */
export type AnswerValue = string | number | boolean | string[]

/**
 * A file the person uploaded. Its bytes were written to the database as they
 * arrived (up to the field's max_size); the answer that holds it claims them.
 */
export class Upload {
  constructor(
    readonly name: string,
    /** The type the browser declared; '' when it declared none. */
    readonly type: string,
    /** Every byte sent, also those beyond the field's max_size (which were not kept). */
    readonly size: number,
    /** Where its bytes are (see modules/responses/files.ts). */
    readonly fileId: string,
  ) {}
}

/** What one submitted value turned out to be. */
export type Parsed =
  | { kind: 'value'; value: AnswerValue }
  | { kind: 'upload'; upload: Upload }
  | { kind: 'empty' }
  | { kind: 'invalid'; message: string; code: ErrorCode; params?: MessageParams }

export const answer = (value: AnswerValue): Parsed => ({ kind: 'value', value })
export const EMPTY: Parsed = { kind: 'empty' }
/** `params` are the placeholders of the catalog's `error.<code>`, for the page to word it in its language. */
export const rejected = (message: string, code: ErrorCode, params?: MessageParams): Parsed =>
  params === undefined ? { kind: 'invalid', message, code } : { kind: 'invalid', message, code, params }

/** Where a submitted value comes from: `locale` is the page's language for a form post, absent for JSON. */
export interface ParseContext {
  locale?: Locale
  /** The region the person's browser (or `page.locale`) named, when Intl knows it for the language: `CH` for de-CH. */
  region?: string
}

/** A field as the API client defined it (and as it is stored). */
export interface FieldDefinition {
  key: string
  type: string
  label: string
  description?: string | null
  required?: boolean
  config?: Record<string, unknown>
}

/** Attributes of a native control; undefined and false ones are left out. */
export type ControlAttributes = Record<string, string | number | boolean | undefined>

interface ControlOption {
  value: string
  label: string
}

/** How the page shows a field: which native control, with which attributes. */
export type Control =
  | { kind: 'input'; attributes: ControlAttributes & { type: string } }
  | { kind: 'textarea'; attributes: ControlAttributes }
  /** A drop-down; an undefined placeholder: the page writes its own "Choose an option". */
  | { kind: 'select'; attributes: ControlAttributes; options: ControlOption[]; placeholder: string | undefined }
  /** One choice; the page adds "No answer" when the field is optional. */
  | { kind: 'radios'; options: ControlOption[] }
  /** Any number of choices (a multiple select). */
  | { kind: 'checkboxes'; options: ControlOption[] }
  | { kind: 'checkbox'; attributes: ControlAttributes }
  /**
   * A date as three boxes, day, month and year (GOV.UK's memorable date), in
   * the page language's order; `example` (`YYYY-MM-DD`) is the date its hint
   * shows; each box's autocomplete is the prefix and its part (`bday-day`).
   */
  | { kind: 'date-parts'; autocompletePrefix: string | undefined; example: string }

/**
 * One field type: the single place that knows its config keys, the rules
 * between them, the control the page shows, and how a submitted value becomes
 * an answer. A new type is one new file registered in `index.ts`.
 */
// biome-ignore lint/suspicious/noExplicitAny: the registry holds every field type, each with its own config
export interface FieldType<Config = any> {
  name: string
  /** Schema of the field's `config`; unknown keys are rejected. */
  config: TObject
  /** Rules between config keys that a schema cannot express; paths relative to `config`. */
  checkConfig(config: Config): Problem[]
  /**
   * Turns one submitted value (a JSON value, or the string a browser sent;
   * undefined when absent) into an answer. `empty` means "not answered": the
   * caller decides whether that is allowed. A check that cannot run on the
   * event loop (an old pattern) answers later. A form post's strings are
   * read in the page's language (`context.locale`) where that matters.
   */
  parse(input: unknown, config: Config, required: boolean, context?: ParseContext): Parsed | Promise<Parsed>
  /** The native control for this config. The browser's checks are a convenience; `parse` decides. */
  control(config: Config): Control
  /** A line under the description that states the limits a person must meet, if any, for the page to word in its language. */
  note?(config: Config): Message | undefined
  /** The most bytes a valid answer can take in a form post; 4 KiB when not given. */
  maxSubmittedBytes?(config: Config): number
  /** JSON Schema (2020-12) of this field's value in a response's `data`. */
  answerSchema(config: Config, required: boolean): Record<string, unknown>
}

/** Absent, null or only whitespace: the person gave no answer. */
export const isBlank = (input: unknown) =>
  input === undefined || input === null || (typeof input === 'string' && input.trim() === '')

/** `min` must not exceed `max` (numbers, or YYYY-MM-DD strings, which compare as dates). */
export function checkBounds<T extends number | string>(config: { min?: T; max?: T }): Problem[] {
  const { min, max } = config
  if (min !== undefined && max !== undefined && min > max)
    return [{ path: '/max', message: 'Must not be less than min', code: 'invalid_value' }]
  return []
}
