/**
 * Time is stored as integer milliseconds since the epoch (UTC) and formatted
 * only at the edge: the API speaks ISO 8601 without a zone suffix, webhooks with `Z`.
 */

export type Clock = () => number
export const systemClock: Clock = () => Date.now()

/** `2026-11-25T21:01:18.123`: UTC, millisecond precision, no zone suffix. */
export const formatApiTime = (ms: number) => new Date(ms).toISOString().slice(0, -1)

/** `2026-11-25T21:01:18.123Z` */
export const formatUtcTime = (ms: number) => new Date(ms).toISOString()

export const formatOptionalApiTime = (ms: number | null) => (ms === null ? null : formatApiTime(ms))

const ISO_DATETIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/

/** Latest instant the API accepts (4-digit years keep the wire format fixed). */
export const MAX_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

/**
 * Parses an ISO 8601 datetime; one without a zone is UTC. Returns undefined for
 * anything else, including impossible dates such as February 30.
 */
export function parseApiTime(text: string): number | undefined {
  const m = ISO_DATETIME.exec(text)
  if (!m) return undefined
  const [, y, mo, d, h, mi, s = '0', frac = '0', , sign, oh, om] = m
  const year = Number(y),
    month = Number(mo),
    day = Number(d)
  const hour = Number(h),
    minute = Number(mi),
    second = Number(s)
  const millis = Number(frac.padEnd(3, '0').slice(0, 3))
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined
  if (day < 1 || day > daysInMonth(year, month)) return undefined
  let ms = Date.UTC(year, month - 1, day, hour, minute, second, millis)
  if (sign) {
    const offsetHours = Number(oh),
      offsetMinutes = Number(om)
    if (offsetHours > 23 || offsetMinutes > 59) return undefined
    const offset = (offsetHours * 60 + offsetMinutes) * 60_000
    ms -= sign === '+' ? offset : -offset
  }
  return ms
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/

/** True for `YYYY-MM-DD` naming a real calendar day. */
export function isCalendarDate(text: string): boolean {
  const m = DATE_ONLY.exec(text)
  if (!m) return false
  const year = Number(m[1]),
    month = Number(m[2]),
    day = Number(m[3])
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month)
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate()
}

const DURATION = /^([1-9][0-9]{0,5})([mhd])$/
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const

/** `90m`, `48h`, `7d` to milliseconds; undefined when not of that shape. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text)
  if (!m) return undefined
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]
}

/**
 * Resolves when `promise` settles or `ms` pass, whichever is first: for a stop
 * that must not wait on a database that stopped answering (the work it gives
 * up on is in a transaction, and is done again by whoever comes next).
 */
export const settledWithin = (promise: Promise<unknown> | undefined, ms: number): Promise<void> =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms)
    const done = () => {
      clearTimeout(timer)
      resolve()
    }
    if (promise) promise.then(done, done)
    else done()
  })
