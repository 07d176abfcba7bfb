import { Type } from '@sinclair/typebox'
import { ERROR_CODES } from './errors.ts'

/** Schemas shared by several modules' models. */

export const ULID_PATTERN = '^[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{25}$'
export const Ulid = Type.String({ pattern: ULID_PATTERN, description: 'ULID' })

/** `2026-11-25T21:01:18.123`: UTC, no zone suffix. */
export const ApiTime = Type.String({
  description: 'UTC datetime, ISO 8601 without zone suffix',
  examples: ['2026-11-25T21:01:18.123'],
})

/** Any JSON object (not an array or scalar). */
export const JsonObject = Type.Object({}, { additionalProperties: true })

export const ErrorBody = Type.Object(
  {
    detail: Type.String(),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          path: Type.String({ description: 'JSON Pointer to the offending value' }),
          message: Type.String(),
          code: Type.Union(
            ERROR_CODES.map((code) => Type.Literal(code)),
            { description: 'What kind of problem it is, for a client to react to without reading the message' },
          ),
        }),
        { description: 'Present on 422: the problems found, at most 100' },
      ),
    ),
  },
  { title: 'Error' },
)
