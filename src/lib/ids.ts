import { monotonicFactory } from 'ulidx'

/** ULIDs from one process sort in creation order, even within one millisecond. */
export const newId: () => string = monotonicFactory()

const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/i

/** The canonical (upper-case) form of a ULID, or undefined when the text is not one. */
export function canonicalUlid(text: string | undefined): string | undefined {
  return text !== undefined && ULID.test(text) ? text.toUpperCase() : undefined
}
