import type { Clock } from './time.ts'

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number }

/**
 * Callers remembered at once, whatever clients do (many addresses, made-up
 * X-Forwarded-For values): under 200 bytes each, so under 20 MB. Past it,
 * full buckets are dropped, then the oldest: those callers start afresh.
 */
export const CALLERS_REMEMBERED = 100_000
/** Takes between sweeps of full buckets. */
const TAKES_PER_SWEEP = 10_000

/**
 * A token bucket per caller: `perMinute` requests in a burst, refilled evenly
 * over the minute. In memory, because intake is one process; a restart
 * forgives everyone. `perMinute` 0 turns limiting off. `callerOf` says which
 * callers share a bucket (see `addressBlock`).
 */
export function createRateLimiter(
  perMinute: number,
  clock: Clock,
  callerOf: (caller: string) => string = (caller) => caller,
) {
  const buckets = new Map<string, { tokens: number; updatedAt: number }>()
  const refillPerMs = perMinute / 60_000
  let takesSinceSweep = 0

  function sweep(now: number) {
    // A bucket that has refilled completely holds no information: drop it.
    for (const [caller, bucket] of buckets) {
      if (bucket.tokens + (now - bucket.updatedAt) * refillPerMs >= perMinute) buckets.delete(caller)
    }
  }

  function makeRoom(now: number) {
    sweep(now)
    // Map keeps insertion order: the first are the callers first seen longest ago.
    for (const caller of buckets.keys()) {
      if (buckets.size < CALLERS_REMEMBERED * 0.9) break
      buckets.delete(caller)
    }
  }

  return {
    perMinute,
    /** Takes `count` requests (one unless said) from the caller's bucket, all or none. */
    take(caller: string, count = 1): RateDecision {
      if (perMinute === 0) return { allowed: true }
      const now = clock()
      if (++takesSinceSweep >= TAKES_PER_SWEEP) {
        takesSinceSweep = 0
        sweep(now)
      }
      const key = callerOf(caller)
      let bucket = buckets.get(key)
      if (bucket === undefined) {
        if (buckets.size >= CALLERS_REMEMBERED) makeRoom(now)
        bucket = { tokens: perMinute, updatedAt: now }
        buckets.set(key, bucket)
      } else {
        bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.updatedAt) * refillPerMs)
        bucket.updatedAt = now
      }
      if (bucket.tokens >= count) {
        bucket.tokens -= count
        return { allowed: true }
      }
      // More than a minute's worth never fits: the soonest a full minute's worth does.
      const wanted = Math.min(count, perMinute)
      return {
        allowed: false,
        retryAfterSeconds: Math.max(1, Math.ceil((wanted - bucket.tokens) / refillPerMs / 1000)),
      }
    },
    /** Callers remembered now. */
    get callers() {
      return buckets.size
    },
  }
}

export type RateLimiter = ReturnType<typeof createRateLimiter>

const HEX_GROUP = /^[0-9a-f]{1,4}$/

/**
 * The caller a client address counts as: an IPv6 address by its /64, the
 * block one subscriber is usually given (anyone holding one can use any of
 * its 2^64 addresses); any other address as itself.
 */
export function addressBlock(address: string): string {
  if (!address.includes(':')) return address
  const bare = address.toLowerCase().replace(/%.*$/, '')
  const halves = bare.split('::')
  if (halves.length > 2) return bare
  const groupsOf = (half: string | undefined) => (half ? half.split(':') : [])
  const [left, right] = [groupsOf(halves[0]), groupsOf(halves[1])]
  // "::" stands for as many zero groups as make eight (an IPv4 tail is two).
  const rightCount = right.reduce((count, group) => count + (group.includes('.') ? 2 : 1), 0)
  const zeros = halves.length === 2 ? Array<string>(Math.max(0, 8 - left.length - rightCount)).fill('0') : []
  const groups = [...left, ...zeros, ...right]
  const block = groups.slice(0, 4)
  if (block.length < 4 || !block.every((group) => HEX_GROUP.test(group))) return bare
  return `${block.map((group) => parseInt(group, 16).toString(16)).join(':')}::/64`
}
