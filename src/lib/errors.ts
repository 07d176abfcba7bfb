import type { MessageParams } from '../i18n/index.ts'

/**
 * What kind of problem an `errors[]` item reports, so a client can react
 * without reading the message: CONTRACT 11's list, in its order (docs/agents.md
 * lists the same, and the OpenAPI document names them).
 */
export const ERROR_CODES = [
  'required',
  'unknown_key',
  'invalid_type',
  'invalid_value',
  'invalid_format',
  'not_unique',
  'too_short',
  'too_long',
  'too_small',
  'too_large',
  'step',
  'pattern',
  'invalid_pattern',
  'email',
  'not_an_option',
  'too_few_selected',
  'too_many_selected',
  'unchecked',
  'date',
  'date_too_early',
  'date_too_late',
  'file_too_large',
  'file_type',
  'unknown_field',
  'control_character',
  'invalid_encoding',
] as const

export type ErrorCode = (typeof ERROR_CODES)[number]

/** One problem with a request, located by JSON Pointer (`/fields/0/label`; `` is the whole body). */
export interface Problem {
  path: string
  /** The built-in English, what the API says. */
  message: string
  code: ErrorCode
  /**
   * What the page needs to word the message in its own language (the
   * placeholders of the catalog's `error.<code>`). Never sent by the API.
   */
  params?: MessageParams
}

/** A problem as the API sends it: never its params, which are for the page. */
export const publicProblem = ({ path, message, code }: Problem) => ({ path, message, code })

/**
 * The most problems one 422 lists. Finding more costs time and bytes a client
 * cannot use: it fixes these and sends again.
 */
const PROBLEMS_LISTED = 100

/**
 * Problems as they are found, up to PROBLEMS_LISTED; `full` tells a walk that
 * it can stop, since nothing more would be reported.
 */
export class ProblemList {
  readonly items: Problem[] = []
  /** True once a problem was refused for lack of room. */
  overflowed = false

  get full(): boolean {
    return this.items.length >= PROBLEMS_LISTED
  }

  get empty(): boolean {
    return this.items.length === 0
  }

  add(problem: Problem): void {
    if (this.full) this.overflowed = true
    else this.items.push(problem)
  }

  /** Adds each problem with `prefix` before its path. */
  addAll(problems: Iterable<Problem>, prefix = ''): void {
    for (const problem of problems) this.add(prefix ? { ...problem, path: `${prefix}${problem.path}` } : problem)
  }

  /** A 422 listing them, when there is any. */
  throwIfAny(): void {
    if (!this.empty) throw invalid(this.items, this.overflowed)
  }
}

/**
 * An expected failure: the one error type services throw. The app maps it to
 * an HTTP response in one place; anything else is an internal error.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly problems?: Problem[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail)
  }
}

export const formNotFound = () => new HttpError(404, 'Form not found')
export const responseNotFound = () => new HttpError(404, 'Response not found')
export const conflict = (detail: string) => new HttpError(409, detail)

/**
 * A 422 whose `detail` summarises the problems so a client that reads only
 * `detail` still learns what to fix. `more` says the list stopped at
 * PROBLEMS_LISTED with problems left unexamined.
 */
export function invalid(problems: Problem[], more = false): HttpError {
  const listed = problems.slice(0, PROBLEMS_LISTED)
  const described = listed.slice(0, 5).map((p) => (p.path ? `${p.path}: ${p.message}` : p.message))
  const rest = listed.length - described.length
  const tail = more
    ? `; and ${rest} more in errors, which stops at the first ${PROBLEMS_LISTED} found (there are others)`
    : rest > 0
      ? `; and ${rest} more`
      : ''
  return new HttpError(422, `Validation failed: ${described.join('; ')}${tail}`, listed)
}

export const invalidAt = (path: string, message: string, code: ErrorCode) => invalid([{ path, message, code }])

/** Escape one segment of a JSON Pointer (RFC 6901). */
export const pointerSegment = (segment: string | number) => String(segment).replaceAll('~', '~0').replaceAll('/', '~1')
