import type { Logger } from './lib/log.ts'
import type { FormSignals } from './lib/signals.ts'
import type { Clock } from './lib/time.ts'
import type { FormStore } from './modules/forms/store.ts'
import { systemResolver, type Resolver } from './modules/webhooks/addresses.ts'
import { attemptDelivery, type AttemptOutcome } from './modules/webhooks/delivery.ts'
import type { ClaimedDelivery, DeliveryStore } from './modules/webhooks/store.ts'

/** Attempts in flight at once: a slow receiver holds one slot, never the others. */
export const PARALLEL_ATTEMPTS = 16
/** The loop looks at least this often, so expiry is written within about a second. */
const MAX_SLEEP_MS = 1000
/** Expired forms written per pass; more wait for the next pass, a moment later. */
const EXPIRY_BATCH = 500
/** A claim outlives the attempt's timeout by this much before another may take it over. */
const LEASE_MARGIN_MS = 5000

export interface BackgroundOptions {
  deliveries: DeliveryStore
  forms: FormStore
  signals: FormSignals
  clock: Clock
  logger: Logger
  webhookTimeoutMs: number
  webhookMaxRetries: number
  webhookBlockPrivate: boolean
  /** How host names are resolved when private targets are blocked; tests stub it. */
  resolver?: Resolver
}

/**
 * The one background loop: it sends due webhook deliveries (read only from
 * the deliveries table) and writes `expired` on forms whose time has come.
 * It sleeps until the next thing is due (at most a second) and is woken at
 * once when a response is recorded or a delivery is queued again.
 */
export function createBackgroundLoop(options: BackgroundOptions) {
  const { deliveries, forms, signals, clock, logger } = options
  const inFlight = new Set<Promise<void>>()
  let timer: ReturnType<typeof setTimeout> | undefined
  let running = false

  function schedule(ms: number) {
    clearTimeout(timer)
    timer = setTimeout(pass, ms)
  }

  function pass() {
    if (!running) return
    try {
      const now = clock()
      const expiry = forms.nextExpiryAt()
      if (expiry !== null && expiry <= now) {
        for (const formId of forms.expireDue(now, EXPIRY_BATCH)) signals.notify(formId)
      }
      const free = PARALLEL_ATTEMPTS - inFlight.size
      const due = deliveries.nextDueAt()
      if (free > 0 && due !== null && due <= now) {
        for (const claim of deliveries.claimDue(now, free, now + options.webhookTimeoutMs + LEASE_MARGIN_MS)) launch(claim)
      }
    } catch (error) {
      logger.error('background loop failed', { error: error instanceof Error ? error.message : String(error) })
    }
    schedule(sleepMs())
  }

  function sleepMs(): number {
    const now = clock()
    let next = now + MAX_SLEEP_MS
    const expiry = forms.nextExpiryAt()
    if (expiry !== null) next = Math.min(next, expiry)
    if (inFlight.size < PARALLEL_ATTEMPTS) {
      const due = deliveries.nextDueAt()
      if (due !== null) next = Math.min(next, due)
    }
    return Math.max(0, next - now)
  }

  function launch(claim: ClaimedDelivery) {
    const attempt = attemptDelivery(claim, {
      timeoutMs: options.webhookTimeoutMs,
      blockPrivate: options.webhookBlockPrivate,
      resolver: options.resolver ?? systemResolver,
      nowSeconds: Math.floor(clock() / 1000),
    })
      .then((outcome) => record(claim, outcome))
      .catch((error) => logger.error('webhook attempt failed to record', { delivery_id: claim.id, error: String(error) }))
      .finally(() => {
        inFlight.delete(attempt)
        // A slot is free: look again now rather than at the next tick.
        if (running) schedule(0)
      })
    inFlight.add(attempt)
  }

  function record(claim: ClaimedDelivery, outcome: AttemptOutcome) {
    deliveries.recordAttempt({
      id: claim.id,
      lease: claim.lease_until,
      roundAttempt: claim.round_attempts,
      now: clock(),
      delivered: outcome.delivered,
      statusCode: outcome.statusCode,
      error: outcome.error,
      attemptsPerRound: 1 + options.webhookMaxRetries,
    })
    logger.info('webhook attempt', {
      delivery_id: claim.id,
      attempt: claim.round_attempts,
      delivered: outcome.delivered,
      status: outcome.statusCode,
      error: outcome.error ?? undefined,
    })
  }

  return {
    start() {
      if (running) return
      running = true
      schedule(0)
    },
    /** Look now: a response was recorded, or a delivery queued again. */
    wake() {
      if (running) schedule(0)
    },
    /** Stops taking work and waits for attempts in flight (each bounded by the webhook timeout). */
    async stop(): Promise<void> {
      running = false
      clearTimeout(timer)
      await Promise.allSettled([...inFlight])
    },
    /** Attempts in flight now. */
    get inFlight() {
      return inFlight.size
    },
  }
}

export type BackgroundLoop = ReturnType<typeof createBackgroundLoop>
