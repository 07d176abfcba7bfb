import type { Writer } from './db/writer.ts'
import type { Logger } from './lib/log.ts'
import type { FormSignals } from './lib/signals.ts'
import type { Clock } from './lib/time.ts'
import { IDEMPOTENCY_WINDOW_MS } from './modules/forms/service.ts'
import type { FormStore } from './modules/forms/store.ts'
import { systemResolver, type Resolver } from './modules/webhooks/addresses.ts'
import { attemptDelivery, type AttemptOutcome } from './modules/webhooks/delivery.ts'
import type { AttemptRecord, ClaimedDelivery, DeliveryStore, DuePosition, DueDelivery } from './modules/webhooks/store.ts'

/** Attempts in flight at once, all accounts together; beyond it only an account's reserved few may start. */
export const PARALLEL_ATTEMPTS = 64
/** Attempts in flight at once for one account's forms, whatever hosts they name: host names cost nothing to make. */
export const PARALLEL_ATTEMPTS_PER_ACCOUNT = 32
/** Attempts in flight at once to one host (and port): a slow receiver holds half an account's share, not all of it. */
export const PARALLEL_ATTEMPTS_PER_HOST = 16
/**
 * An account with fewer attempts than this in flight may always start one,
 * even when other accounts hold every slot, so their receivers can never keep
 * its first attempt waiting. Accounts are made only by the operator, which
 * bounds the sockets: PARALLEL_ATTEMPTS plus this many per account.
 */
const RESERVED_ATTEMPTS_PER_ACCOUNT = 4
/** Due deliveries each look of a pass reads: a pass takes a bounded time however many wait. */
const DUE_LOOK = 1000
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
 *
 * Deliveries are found two ways, each reading at most DUE_LOOK rows a pass,
 * so a pass takes a bounded time however many wait. The newest due ones are
 * looked at whenever a delivery is queued, falls due or a slot frees: a fresh
 * answer's first attempt is found at once, however many older ones wait. And
 * once a second, while any are due, a scan goes through all of them, oldest
 * first, a step per pass: it finds those a cap refused before and those whose
 * lease ran out (a crash). A delivery a cap refuses never stops either look,
 * and nothing else makes the loop look at it again: a backlog costs a scan a
 * second, not a busy loop.
 */
export function createBackgroundLoop(options: BackgroundOptions) {
  const { deliveries, forms, signals, writer, clock, logger } = options
  const inFlight = new Set<Promise<void>>()
  const counts = new AttemptCounts()
  const outcomes: AttemptRecord[] = []
  let timer: ReturnType<typeof setTimeout> | undefined
  let timerDueAt = Infinity
  let running = false
  let passing: Promise<void> | undefined
  let passAgain = false
  let keysSweptAt = -Infinity
  /** A delivery was queued or queued again, or a slot freed: the next pass looks at the newest due ones. */
  let newestWanted = true
  /** The clock at the last look at the newest due deliveries: those due later are new. */
  let newestLookedAt = -Infinity
  /** Where the scan through all due deliveries goes on (null: from the oldest); undefined while none is under way. */
  let scanFrom: DuePosition | null | undefined
  let scanStartedAt = -Infinity

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
      const newlyDue = deliveries.earliestDueAfter(newestLookedAt)
      const lookAtNewest = newestWanted || (newlyDue !== null && newlyDue <= now)
      newestWanted = false
      if (scanFrom === undefined && now - scanStartedAt >= MAX_SLEEP_MS) {
        const earliest = deliveries.earliestDueAfter(-Infinity)
        if (earliest !== null && earliest <= now) {
          scanFrom = null
          scanStartedAt = now
        }
      }
      const scanning = scanFrom
      const sweepingKeys = now - keysSweptAt >= KEY_SWEEP_INTERVAL_MS
      if (finished.length === 0 && !expiring && !lookAtNewest && scanning === undefined && !sweepingKeys) return
      if (sweepingKeys) keysSweptAt = now
      const planned = counts.copy()
      const admit = ({ account_id, url }: DueDelivery) => {
        const host = hostOf(url)
        if (!planned.admits(account_id, host)) return false
        planned.add(account_id, host, 1)
        return true
      }
      const leaseUntil = now + options.webhookTimeoutMs + LEASE_MARGIN_MS
      const { expired, claims, scannedTo } = await writer.run(() => {
        deliveries.recordAttempts(finished)
        if (sweepingKeys) forms.forgetIdempotencyKeysBefore(now - IDEMPOTENCY_WINDOW_MS)
        const claims = lookAtNewest ? deliveries.claimNewestDue(now, DUE_LOOK, leaseUntil, admit) : []
        const step = scanning === undefined ? undefined : deliveries.claimDueAfter(now, scanning, DUE_LOOK, leaseUntil, admit)
        if (step) claims.push(...step.claims)
        return { expired: expiring ? forms.expireDue(now, EXPIRY_BATCH) : [], claims, scannedTo: step?.next ?? undefined }
      })
      if (lookAtNewest) newestLookedAt = now
      scanFrom = scannedTo
      for (const formId of expired) signals.notify(formId)
      for (const claim of claims) launch(claim)
    } catch (error) {
      // Outcomes not recorded are not lost work: their leases run out and the attempts are made again.
      // The scan starts over at the next second rather than retrying at once.
      scanFrom = undefined
      logger.error('background loop failed', { error: error instanceof Error ? error.message : String(error) })
    }
  }

  function sleepMs(): number {
    if (newestWanted || scanFrom !== undefined) return 0
    const now = clock()
    let next = now + MAX_SLEEP_MS
    const expiry = forms.nextExpiryAt()
    if (expiry !== null) next = Math.min(next, expiry)
    // Deliveries due by the last look were looked at; one a cap refused waits for a slot, not for time.
    const newlyDue = deliveries.earliestDueAfter(newestLookedAt)
    if (newlyDue !== null) next = Math.min(next, newlyDue)
    return Math.max(0, next - now)
  }

  function launch(claim: ClaimedDelivery) {
    const host = hostOf(claim.url)
    counts.add(claim.account_id, host, 1)
    const attempt = attemptDelivery(claim, {
      timeoutMs: options.webhookTimeoutMs,
      blockPrivate: options.webhookBlockPrivate,
      resolver: options.resolver ?? systemResolver,
      nowSeconds: Math.floor(clock() / 1000),
    })
      .then((outcome) => record(claim, outcome))
      .finally(() => {
        inFlight.delete(attempt)
        counts.add(claim.account_id, host, -1)
        // A slot is free, so deliveries a cap refused may go now; and an outcome waits to be written.
        newestWanted = true
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
      newestWanted = true
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

/** Attempts in flight, counted the ways the caps count them: in all, per account and per host. */
class AttemptCounts {
  private total = 0
  private readonly byAccount = new Map<string, number>()
  private readonly byHost = new Map<string, number>()

  /** Whether one more attempt for `account` to `host` may start now. */
  admits(account: string, host: string): boolean {
    const ofAccount = this.byAccount.get(account) ?? 0
    if (ofAccount < RESERVED_ATTEMPTS_PER_ACCOUNT) return true
    return (
      this.total < PARALLEL_ATTEMPTS &&
      ofAccount < PARALLEL_ATTEMPTS_PER_ACCOUNT &&
      (this.byHost.get(host) ?? 0) < PARALLEL_ATTEMPTS_PER_HOST
    )
  }

  /** Counts `change` attempts (negative when they end) for `account` to `host`. */
  add(account: string, host: string, change: number) {
    this.total += change
    bump(this.byAccount, account, change)
    bump(this.byHost, host, change)
  }

  copy(): AttemptCounts {
    const copy = new AttemptCounts()
    copy.total = this.total
    for (const [account, n] of this.byAccount) copy.byAccount.set(account, n)
    for (const [host, n] of this.byHost) copy.byHost.set(host, n)
    return copy
  }
}

function bump(counts: Map<string, number>, key: string, change: number) {
  const n = (counts.get(key) ?? 0) + change
  if (n > 0) counts.set(key, n)
  else counts.delete(key)
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
