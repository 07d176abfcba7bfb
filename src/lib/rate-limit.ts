import type { Clock } from './time.ts'

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number }

/**
 * A token bucket per caller: `perMinute` requests in a burst, refilled evenly
 * over the minute. In memory, because intake is one process; a restart
 * forgives everyone. `perMinute` 0 turns limiting off.
 */
export function createRateLimiter(perMinute: number, clock: Clock) {
  const buckets = new Map<string, { tokens: number; updatedAt: number }>()
  const refillPerMs = perMinute / 60_000
  let takesSinceSweep = 0

  function sweep(now: number) {
    // A bucket that has refilled completely holds no information: drop it.
    for (const [caller, bucket] of buckets) {
      if (bucket.tokens + (now - bucket.updatedAt) * refillPerMs >= perMinute) buckets.delete(caller)
    }
  }

  return {
    take(caller: string): RateDecision {
      if (perMinute === 0) return { allowed: true }
      const now = clock()
      if (++takesSinceSweep >= 10_000) {
        takesSinceSweep = 0
        sweep(now)
      }
      const bucket = buckets.get(caller) ?? { tokens: perMinute, updatedAt: now }
      bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.updatedAt) * refillPerMs)
      bucket.updatedAt = now
      buckets.set(caller, bucket)
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1
        return { allowed: true }
      }
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / refillPerMs / 1000)) }
    },
  }
}

export type RateLimiter = ReturnType<typeof createRateLimiter>
