import type { Logger } from '../../lib/log.ts'
import { type Clock, settledWithin } from '../../lib/time.ts'
import type { Store } from '../../stores.ts'
import { endedEventBody, forgetEventsBefore, recordEnding } from '../events/endings.ts'
import { FORM_EXPIRED } from '../events/names.ts'
import { forgetSettledDeliveries } from '../webhooks/queue.ts'
import { IDEMPOTENCY_WINDOW_MS } from './service.ts'
import type { FormOfAccount } from './store/index.ts'

/** The sweep looks at least this often, so expiry is written within about a second. */
const MAX_SLEEP_MS = 1000
/** Expired forms written per pass; more wait for the next pass, a moment later. */
const EXPIRY_BATCH = 500
/** Forms added to the title search's index per pass (one transaction: FTS5 writes a segment per transaction). */
const TITLE_BATCH = 500
/**
 * The pause after a full batch: the index catches up at about 1,000 forms a
 * second, a few percent of the writer, so a burst of creates pays nothing for
 * it (keeping up at once cost creates 0.88 ×; bench/results.md, issue 28).
 * A search reads the forms the index does not hold yet one by one meanwhile.
 */
const TITLE_PAUSE_MS = 500
/** How long a stop waits for a pass under way. */
const STOP_WAIT_MS = 2000
/** How often Idempotency-Keys past their 24 hours, and events past their 7 days, are cleared away. */
const KEY_SWEEP_INTERVAL_MS = 60_000
/** How long the account's feed keeps an event, and a form.expired delivery the context it carries (CONTRACT 12). */
const EVENT_RETENTION_MS = 7 * 86_400_000
/** Events (and expiry deliveries) removed per pass: a backlog goes a bounded step a minute, never in one long transaction. */
const RETENTION_BATCH = 5000

export interface FormSweeperOptions {
  store: Store
  clock: Clock
  logger: Logger
  /** Hears of each form the sweep expired, once committed with its event, so long-polls on it and its account's feed wake. */
  onExpired: (form: FormOfAccount, deliveryQueued: boolean) => void
}

/**
 * Writes `expired` on forms whose time has come (reads compute it already;
 * this makes it so for good and drops the context), with each one's
 * form.expired event and delivery in the same transaction: exactly once,
 * however many instances sweep (each takes forms no other holds) and
 * whenever one stops (its transaction is then not committed, and the forms
 * are swept again). It clears away Idempotency-Keys past their 24 hours and
 * events past their 7 days, and adds new forms to the title search's index.
 * It sleeps until the next expiry, at most a second.
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
          if (sweepingKeys) {
            await tx.forms.forgetIdempotencyKeysBefore(now - IDEMPOTENCY_WINDOW_MS)
            await forgetEventsBefore(tx, now - EVENT_RETENTION_MS, RETENTION_BATCH)
            await forgetSettledDeliveries(tx, FORM_EXPIRED, now - EVENT_RETENTION_MS, RETENTION_BATCH)
          }
          if (!expiring) return []
          const forms = await tx.forms.expireDue(now, EXPIRY_BATCH)
          // Side by side, so the writes of all the forms go together (on PostgreSQL one statement per step).
          const ended = await Promise.all(
            forms.map(async (form) => {
              // The context as it was: kept only in this event and its delivery.
              const payload = endedEventBody({
                event: FORM_EXPIRED,
                formId: form.id,
                occurredAt: form.expiresAt,
                callbackMetadataJson: form.callbackMetadata,
                contextJson: form.context,
              })
              const deliveryQueued = await recordEnding(tx, {
                type: FORM_EXPIRED,
                form,
                occurredAt: form.expiresAt,
                payload,
                now,
              })
              return { form: { id: form.id, accountId: form.accountId } satisfies FormOfAccount, deliveryQueued }
            }),
          )
          return ended
        })
        for (const { form, deliveryQueued } of expired) onExpired(form, deliveryQueued)
        if (expired.length === EXPIRY_BATCH) return 0
      }
      let sleep = MAX_SLEEP_MS
      if (await store.forms.titlesToIndex()) {
        const indexed = await store.transaction((tx) => tx.forms.indexTitles(TITLE_BATCH))
        if (indexed === TITLE_BATCH) sleep = TITLE_PAUSE_MS
      }
      const next = await store.forms.nextExpiryAt()
      return Math.max(0, Math.min(sleep, next === null ? sleep : next - clock()))
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
