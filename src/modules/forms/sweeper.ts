import type { Store } from '../../db/store.ts'
import type { Logger } from '../../lib/log.ts'
import { settledWithin, type Clock } from '../../lib/time.ts'
import { IDEMPOTENCY_WINDOW_MS } from './service.ts'

/** The sweep looks at least this often, so expiry is written within about a second. */
const MAX_SLEEP_MS = 1000
/** Expired forms written per pass; more wait for the next pass, a moment later. */
const EXPIRY_BATCH = 500
/** How long a stop waits for a pass under way. */
const STOP_WAIT_MS = 2000
/** How often Idempotency-Keys past their 24 hours are cleared away. */
const KEY_SWEEP_INTERVAL_MS = 60_000

export interface FormSweeperOptions {
  store: Store
  clock: Clock
  logger: Logger
  /** Hears of each form the sweep expired, so long-polls on it wake. */
  onExpired: (formId: string) => void
}

/**
 * Writes `expired` on forms whose time has come (reads compute it already;
 * this makes it so for good and drops the context), and clears away
 * Idempotency-Keys past their 24 hours. It sleeps until the next expiry, at
 * most a second.
 */
export function createFormSweeper({ store, clock, logger, onExpired }: FormSweeperOptions) {
  let timer: ReturnType<typeof setTimeout> | undefined
  let running = false
  let passing: Promise<void> | undefined
  let keysSweptAt = -Infinity

  async function pass(): Promise<number> {
    const now = clock()
    try {
      const expiry = await store.forms.nextExpiryAt()
      const expiring = expiry !== null && expiry <= now
      const sweepingKeys = now - keysSweptAt >= KEY_SWEEP_INTERVAL_MS
      if (expiring || sweepingKeys) {
        if (sweepingKeys) keysSweptAt = now
        const expired = await store.transaction(async (tx) => {
          if (sweepingKeys) await tx.forms.forgetIdempotencyKeysBefore(now - IDEMPOTENCY_WINDOW_MS)
          return expiring ? await tx.forms.expireDue(now, EXPIRY_BATCH) : []
        })
        for (const formId of expired) onExpired(formId)
        if (expired.length === EXPIRY_BATCH) return 0
      }
      const next = await store.forms.nextExpiryAt()
      return Math.max(0, Math.min(MAX_SLEEP_MS, next === null ? MAX_SLEEP_MS : next - clock()))
    } catch (error) {
      logger.error('form sweep failed', { error: error instanceof Error ? error.message : String(error) })
      return MAX_SLEEP_MS
    }
  }

  function schedule(ms: number) {
    clearTimeout(timer)
    timer = setTimeout(() => {
      timer = undefined
      passing = pass().then((next) => {
        passing = undefined
        if (running) schedule(next)
      })
    }, ms)
  }

  return {
    start() {
      if (running) return
      running = true
      schedule(0)
    },
    async stop() {
      running = false
      clearTimeout(timer)
      // A pass stuck on a database that went away is given up: its transaction never committed.
      await settledWithin(passing, STOP_WAIT_MS)
    },
  }
}
