import { randomBytes } from 'node:crypto'
import { encodeTime } from 'ulidx'

/**
 * ULIDs that sort in creation order (list pages walk forms newest first by
 * id) and that nobody can guess from another. A form's id is its link's only
 * secret, so a later id in the same millisecond does not step by one, as a
 * plain monotonic ULID does, but by a random amount of up to 2^64.
 */

const BASE32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const RANDOM_BITS = 80n
const RANDOM_LIMIT = 1n << RANDOM_BITS

const randomBigInt = (bytes: number) => BigInt(`0x${randomBytes(bytes).toString('hex')}`)

function encodeRandom(value: bigint): string {
  let text = ''
  for (let i = 0; i < 16; i++) {
    text = BASE32[Number(value & 31n)] + text
    value >>= 5n
  }
  return text
}

let lastTime = 0
let lastRandom = 0n

export function newId(): string {
  let time = Date.now()
  let random: bigint
  if (time > lastTime) {
    random = randomBigInt(10)
  } else {
    // The same millisecond (or the clock stepped back): keep order, not predictability.
    time = lastTime
    random = lastRandom + 1n + randomBigInt(8)
    if (random >= RANDOM_LIMIT) {
      time = lastTime + 1
      random = randomBigInt(10)
    }
  }
  lastTime = time
  lastRandom = random
  return encodeTime(time, 10) + encodeRandom(random)
}

const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/i

/** The canonical (upper-case) form of a ULID, or undefined when the text is not one. */
export function canonicalUlid(text: string | undefined): string | undefined {
  return text !== undefined && ULID.test(text) ? text.toUpperCase() : undefined
}
