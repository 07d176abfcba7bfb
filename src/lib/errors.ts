/** One problem with a request, located by JSON Pointer (`/fields/0/label`; `` is the whole body). */
export interface Problem {
  path: string
  message: string
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

/** A 422 whose `detail` summarises the problems so a client that reads only `detail` still learns what to fix. */
export function invalid(problems: Problem[]): HttpError {
  const described = problems.slice(0, 5).map((p) => (p.path ? `${p.path}: ${p.message}` : p.message))
  const more = problems.length > 5 ? `; and ${problems.length - 5} more` : ''
  return new HttpError(422, `Validation failed: ${described.join('; ')}${more}`, problems)
}

export const invalidAt = (path: string, message: string) => invalid([{ path, message }])

/** Escape one segment of a JSON Pointer (RFC 6901). */
export const pointerSegment = (segment: string | number) =>
  String(segment).replaceAll('~', '~0').replaceAll('/', '~1')
