/**
 * Where an event sits in an account's feed: ordered by `position`, then `seq`
 * (store/index.ts says what each is). A cursor and an event id are the same
 * text: both halves in base 32, 13 digits each, so the text sorts as the
 * position does. Opaque to clients, who only hand it back.
 */
export interface EventPosition {
  position: number
  seq: number
}

/** Before every event: the feed read from its start. */
export const FEED_START: EventPosition = { position: 0, seq: 0 }

const DIGITS = 13
const ENCODED = /^[0-9a-v]{26}$/

export const encodePosition = ({ position, seq }: EventPosition): string =>
  position.toString(32).padStart(DIGITS, '0') + seq.toString(32).padStart(DIGITS, '0')

/** The position a cursor names, or undefined when the text is no cursor intake wrote. */
export function decodePosition(text: string): EventPosition | undefined {
  if (!ENCODED.test(text)) return undefined
  const position = safeInteger(text.slice(0, DIGITS))
  const seq = safeInteger(text.slice(DIGITS))
  return position === undefined || seq === undefined ? undefined : { position, seq }
}

function safeInteger(digits: string): number | undefined {
  let value = 0n
  for (const digit of digits) value = value * 32n + BigInt(Number.parseInt(digit, 32))
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : undefined
}
