import type { Writer } from './db/writer.ts'
import type { Logger } from './lib/log.ts'
import type { FormSignals } from './lib/signals.ts'
import type { Clock } from './lib/time.ts'
import { IDEMPOTENCY_WINDOW_MS } from './modules/forms/service.ts'
import type { FormStore } from './modules/forms/store.ts'
import { systemResolver, type Resolver } from './modules/webhooks/addresses.ts'
import { attemptDelivery, type AttemptOutcome } from './modules/webhooks/delivery.ts'
import type { AttemptRecord, ClaimedDelivery, DeliveryStore } from './modules/webhooks/store.ts'

/** Attempts in flight at once. */
export const PARALLEL_ATTEMPTS = 64
/** Attempts in flight at once to one host: a slow receiver holds at most half the slots, never the others. */
export const PARALLEL_ATTEMPTS_PER_HOST = 32
/** The loop looks at least this often, so expiry is written within about a second. */
const MAX_SLEEP_MS = 1000
/** Expired forms written per pass; more wait for the next pass, a moment later. */
const EXPIRY_BATCH = 500
/** A claim outlives the attempt's timeout by this much before another may take it over. */
const LEASE_MARGIN_MS = 5000
/** How often Idempotency-Keys past their 24 hours are cleared away. */
const KEY_SWEEP_INTERVAL_MS = 60_000

export interface BackgroundOptions {
  deliveries: DeliveryStore
  forms: FormStore
  writer: Writer
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
 * the deliveries table), writes `expired` on forms whose time has come, and
 * clears away Idempotency-Keys past their 24 hours.
 * It sleeps until the next thing is due (at most a second) and is woken at
 * once when a response is recorded or a delivery is queued again.
 */
export function createBackgroundLoop(options: BackgroundOptions) {
  const { deliveries, forms, signals, writer, clock, logger } = options
  const inFlight = new Set<Promise<void>>()
  const inFlightByHost = new Map<string, number>()
  const outcomes: AttemptRecord[] = []
  let timer: ReturnType<typeof setTimeout> | undefined
  let timerDueAt = Infinity
  let running = false
  let passing: Promise<void> | undefined
  let passAgain = false
  let keysSweptAt = -Infinity

  /** Runs a pass in `ms`, unless one is already due sooner: a stream of wakes must not keep pushing it back. */
  function schedule(ms: number) {
    const dueAt = performance.now() + ms
    if (timer !== undefined && timerDueAt <= dueAt) return
    clearTimeout(timer)
    timerDueAt = dueAt
    timer = setTimeout(() => {
      timer = undefined
      timerDueAt = Infinity
      startPass()
    }, ms)
  }

  /** One pass at a time; a wake during a pass asks for another right after it. */
  function startPass() {
    if (!running) return
    if (passing) {
      passAgain = true
      return
    }
    passing = pass().finally(() => {
      passing = undefined
      const again = passAgain
      passAgain = false
      if (running) schedule(again ? 0 : sleepMs())
    })
  }

  /**
   * Records the outcomes of finished attempts, writes `expired` on forms
   * whose time has come and claims due deliveries: one unit of work, so it
   * shares its disk sync with whatever requests are writing at the moment.
   */
  async function pass() {
    try {
      const finished = outcomes.splice(0)
      const now = clock()
      const expiry = forms.nextExpiryAt()
      const expiring = expiry !== null && expiry <= now
      const free = PARALLEL_ATTEMPTS - inFlight.size
      const due = deliveries.nextDueAt()
      const claiming = free > 0 && due !== null && due <= now
      const sweepingKeys = now - keysSweptAt >= KEY_SWEEP_INTERVAL_MS
      if (finished.length === 0 && !expiring && !claiming && !sweepingKeys) return
      if (sweepingKeys) keysSweptAt = now
      const perHost = new Map(inFlightByHost)
      const admit = (url: string) => {
        const host = hostOf(url)
        const count = perHost.get(host) ?? 0
        if (count >= PARALLEL_ATTEMPTS_PER_HOST) return false
        perHost.set(host, count + 1)
        return true
      }
      const { expired, claims } = await writer.run(() => {
        deliveries.recordAttempts(finished)
        if (sweepingKeys) forms.forgetIdempotencyKeysBefore(now - IDEMPOTENCY_WINDOW_MS)
        return {
          expired: expiring ? forms.expireDue(now, EXPIRY_BATCH) : [],
          claims: claiming ? deliveries.claimDue(now, free, now + options.webhookTimeoutMs + LEASE_MARGIN_MS, admit) : [],
        }
      })
      for (const formId of expired) signals.notify(formId)
      for (const claim of claims) launch(claim)
    } catch (error) {
      // Outcomes not recorded are not lost work: their leases run out and the attempts are made again.
      logger.error('background loop failed', { error: error instanceof Error ? error.message : String(error) })
    }
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
    const host = hostOf(claim.url)
    inFlightByHost.set(host, (inFlightByHost.get(host) ?? 0) + 1)
    const attempt = attemptDelivery(claim, {
      timeoutMs: options.webhookTimeoutMs,
      blockPrivate: options.webhookBlockPrivate,
      resolver: options.resolver ?? systemResolver,
      nowSeconds: Math.floor(clock() / 1000),
    })
      .then((outcome) => record(claim, outcome))
      .finally(() => {
        inFlight.delete(attempt)
        const left = (inFlightByHost.get(host) ?? 1) - 1
        if (left > 0) inFlightByHost.set(host, left)
        else inFlightByHost.delete(host)
        // A slot is free and an outcome waits to be written: look again now rather than at the next tick.
        if (running) schedule(0)
      })
    inFlight.add(attempt)
  }

  function record(claim: ClaimedDelivery, outcome: AttemptOutcome) {
    outcomes.push({
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
      timer = undefined
      await passing
      await Promise.allSettled([...inFlight])
      const finished = outcomes.splice(0)
      if (finished.length > 0) await writer.run(() => deliveries.recordAttempts(finished)).catch(() => {})
    },
    /** Attempts in flight now. */
    get inFlight() {
      return inFlight.size
    },
  }
}

export type BackgroundLoop = ReturnType<typeof createBackgroundLoop>

/** The host (and port) a delivery goes to, for sharing attempts fairly between receivers. */
function hostOf(url: string): string {
  try {
    return new URL(url).host
  } catch {
    return url
  }
}
