import type { Logger } from '../../lib/log.ts'
import { type Clock, settledWithin } from '../../lib/time.ts'
import type { Store, Transaction } from '../../stores.ts'
import { type Resolver, systemResolver } from './addresses.ts'
import { type AttemptOutcome, attemptDelivery } from './delivery.ts'
import type { AttemptRecord, DueDelivery, DuePosition, LeasedDelivery } from './store/index.ts'

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
/** The worker looks at least this often, for deliveries falling due and leases running out. */
const MAX_SLEEP_MS = 1000
/** How long a stop waits for a pass under way, and for the last outcomes to be written. */
const STOP_WAIT_MS = 2000
/** A claim outlives the attempt's timeout by this much before another may take it over. */
const LEASE_MARGIN_MS = 5000

/** A delivery taken for an attempt, with its form's account and secret. */
export interface ClaimedDelivery extends LeasedDelivery {
  accountId: string
  secret: string
}

export interface DeliveryWorkerOptions {
  store: Store
  clock: Clock
  logger: Logger
  webhookTimeoutMs: number
  webhookMaxRetries: number
  /** Delay before retry n: entry n-1, the last one past the end (config.ts). */
  webhookRetryScheduleMs: readonly number[]
  webhookBlockPrivate: boolean
  /** How host names are resolved when private targets are blocked; tests stub it. */
  resolver?: Resolver
  /** Told of each finished attempt (the metrics, when they are on); `answeredAt` as leased. */
  onAttempt?: (delivered: boolean, answeredAt: number | null, now: number) => void
}

/**
 * The webhook worker: it sends due deliveries (read only from the deliveries
 * table). It sleeps until the next one is due (at most a second) and is woken
 * at once when a response is recorded or a delivery is queued again.
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
export function createDeliveryWorker(options: DeliveryWorkerOptions) {
  const { store, clock, logger } = options
  const retrySchedule = options.webhookRetryScheduleMs
  const inFlight = new Set<Promise<void>>()
  const counts = new AttemptCounts()
  const outcomes: AttemptRecord[] = []
  let timer: ReturnType<typeof setTimeout> | undefined
  let timerDueAt = Infinity
  let running = false
  let passing: Promise<void> | undefined
  let passAgain = false
  /** Stopped for good: no attempt starts any more. */
  let stopped = false
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
    passing = pass()
      .then(() => (passAgain ? 0 : sleepMs()))
      .then((ms) => {
        passing = undefined
        passAgain = false
        if (running) schedule(ms)
      })
  }

  /**
   * Takes the deliveries `admit` lets through among `due`, each with its
   * form's account and secret (read from the forms module): the caps share
   * attempts per account and per host.
   */
  async function claimAdmitted(
    tx: Transaction,
    due: DueDelivery[],
    now: number,
    leaseMs: number,
    admit: (accountId: string, url: string) => boolean,
  ) {
    if (due.length === 0) return []
    const targets = await tx.forms.webhookTargets(due.map((delivery) => delivery.formId))
    const admitted = due.filter((delivery) => {
      const target = targets.get(delivery.formId)
      return target !== undefined && admit(target.accountId, delivery.url)
    })
    const leased = await tx.deliveries.lease(
      admitted.map((delivery) => delivery.id),
      leaseMs,
      now,
    )
    return leased.map((delivery): ClaimedDelivery => ({ ...delivery, ...targets.get(delivery.formId)! }))
  }

  /**
   * Records the outcomes of finished attempts and claims due deliveries: one
   * unit of work, so on SQLite it shares its disk sync with whatever requests
   * are writing at the moment.
   */
  async function pass() {
    try {
      const finished = outcomes.splice(0)
      const now = clock()
      const newlyDue = await store.deliveries.earliestDueAfter(newestLookedAt)
      const lookAtNewest = newestWanted || (newlyDue !== null && newlyDue <= now)
      newestWanted = false
      if (scanFrom === undefined && now - scanStartedAt >= MAX_SLEEP_MS) {
        const earliest = await store.deliveries.earliestDueAfter(-Infinity)
        if (earliest !== null && earliest <= now) {
          scanFrom = null
          scanStartedAt = now
        }
      }
      const scanning = scanFrom
      if (finished.length === 0 && !lookAtNewest && scanning === undefined) return
      const leaseMs = options.webhookTimeoutMs + LEASE_MARGIN_MS
      const { claims, scannedTo } = await store.transaction(async (tx) => {
        // Counted afresh in the unit, which may run more than once.
        const planned = counts.copy()
        const admit = (accountId: string, url: string) => {
          const host = hostOf(url)
          if (!planned.admits(accountId, host)) return false
          planned.add(accountId, host, 1)
          return true
        }
        await tx.deliveries.recordAttempts(finished)
        const claims = lookAtNewest
          ? await claimAdmitted(tx, await tx.deliveries.dueNewest(now, DUE_LOOK), now, leaseMs, admit)
          : []
        let scannedTo: DuePosition | null | undefined
        if (scanning !== undefined) {
          const due = await tx.deliveries.dueAfter(now, scanning, DUE_LOOK)
          claims.push(...(await claimAdmitted(tx, due, now, leaseMs, admit)))
          scannedTo = due.length === DUE_LOOK ? due.at(-1)!.position : undefined
        }
        return { claims, scannedTo }
      })
      if (lookAtNewest) newestLookedAt = now
      scanFrom = scannedTo
      for (const claim of claims) launch(claim)
    } catch (error) {
      // Outcomes not recorded are not lost work: their leases run out and the attempts are made again.
      // The scan starts over at the next second rather than retrying at once.
      scanFrom = undefined
      logger.error('background loop failed', { error: error instanceof Error ? error.message : String(error) })
    }
  }

  async function sleepMs(): Promise<number> {
    if (newestWanted || scanFrom !== undefined) return 0
    const now = clock()
    let next = now + MAX_SLEEP_MS
    // Deliveries due by the last look were looked at; one a cap refused waits for a slot, not for time.
    const newlyDue = await store.deliveries.earliestDueAfter(newestLookedAt).catch(() => null)
    if (newlyDue !== null) next = Math.min(next, newlyDue)
    return Math.max(0, next - now)
  }

  function launch(claim: ClaimedDelivery) {
    if (stopped) return
    const host = hostOf(claim.url)
    counts.add(claim.accountId, host, 1)
    const attempt = attemptDelivery(claim, {
      timeoutMs: options.webhookTimeoutMs,
      blockPrivate: options.webhookBlockPrivate,
      resolver: options.resolver ?? systemResolver,
      nowSeconds: Math.floor(clock() / 1000),
    })
      .then((outcome) => record(claim, outcome))
      .finally(() => {
        inFlight.delete(attempt)
        counts.add(claim.accountId, host, -1)
        // A slot is free, so deliveries a cap refused may go now; and an outcome waits to be written.
        newestWanted = true
        if (running) schedule(0)
      })
    inFlight.add(attempt)
  }

  function record(claim: ClaimedDelivery, outcome: AttemptOutcome) {
    const now = clock()
    options.onAttempt?.(outcome.delivered, claim.answeredAt, now)
    outcomes.push({
      id: claim.id,
      lease: claim.leaseUntil,
      roundAttempt: claim.roundAttempts,
      now,
      delivered: outcome.delivered,
      statusCode: outcome.statusCode,
      error: outcome.error,
      attemptsPerRound: 1 + options.webhookMaxRetries,
      // After attempt n of a round fails, retry n comes this long after it.
      retryDelayMs: retrySchedule[Math.min(claim.roundAttempts, retrySchedule.length) - 1]!,
    })
    logger.info('webhook attempt', {
      delivery_id: claim.id,
      attempt: claim.roundAttempts,
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
      // A pass stuck on a database that went away is given up: claims it makes later are not
      // attempted here, and their leases run out for another instance to take them over.
      await settledWithin(passing, STOP_WAIT_MS)
      stopped = true
      await Promise.allSettled([...inFlight])
      const finished = outcomes.splice(0)
      if (finished.length > 0)
        await settledWithin(
          store.transaction((tx) => tx.deliveries.recordAttempts(finished)),
          STOP_WAIT_MS,
        )
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

/** The host (and port) a delivery goes to, for sharing attempts fairly between receivers. */
function hostOf(url: string): string {
  try {
    return new URL(url).host
  } catch {
    return url
  }
}
