/**
 * Where an event sits in its account's feed: its number, 1, 2, 3... in the
 * account's commit order (store/index.ts says how). A cursor and an event id
 * are the same text: the number in base 32, 13 digits. Opaque to clients, who
 * only hand it back; it tells nothing of other accounts (CONTRACT 12a).
 *
 * Before numbers, intake gave cursors of 26 digits: the event's `position`
 * and `seq` in the order of the time (global to the database, and on
 * PostgreSQL a transaction id). Agents may hold such a cursor across the
 * upgrade: it still reads, from the first of the account's events after it in
 * that order (the store keeps every event's position and seq for this).
 */

/** A cursor as a client gave it: a number, or a cursor from before numbers. */
export type Cursor = { number: number } | { legacy: LegacyPosition }

/** An event's place in the order before numbers. */
export interface LegacyPosition {
  position: number
  seq: number
}

/** Before every event: the feed read from its start. */
export const FEED_START = 0

const DIGITS = 13
const NUMBER = /^[0-9a-v]{13}$/
const LEGACY = /^[0-9a-v]{26}$/

export const encodeNumber = (number: number): string => number.toString(32).padStart(DIGITS, '0')

/** The place a cursor names, or undefined when the text is no cursor intake wrote. */
export function decodeCursor(text: string): Cursor | undefined {
  if (NUMBER.test(text)) {
    const number = safeInteger(text)
    return number === undefined ? undefined : { number }
  }
  if (!LEGACY.test(text)) return undefined
  const position = safeInteger(text.slice(0, DIGITS))
  const seq = safeInteger(text.slice(DIGITS))
  return position === undefined || seq === undefined ? undefined : { legacy: { position, seq } }
}

function safeInteger(digits: string): number | undefined {
  let value = 0n
  for (const digit of digits) value = value * 32n + BigInt(Number.parseInt(digit, 32))
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : undefined
}
