import type { Store } from '../../db/store.ts'
import { invalidAt } from '../../lib/errors.ts'
import { feedSignal, type FormSignals } from '../../lib/signals.ts'
import { formatApiTime } from '../../lib/time.ts'
import { integerQuery, validate } from '../../lib/validation.ts'
import type { Principal } from '../auth/service.ts'
import { EVENTS_LIMIT, ListEventsQuery } from './model.ts'
import { FEED_START, decodePosition, encodePosition, type EventPosition } from './position.ts'
import type { EventPage, StoredEvent } from './store/index.ts'

/** `after=latest`: start from the head of the feed. */
const LATEST = 'latest'
/**
 * While events wait for an older transaction to commit (PostgreSQL), the feed
 * is looked at again after this long, then twice as long each time, up to
 * UNSETTLED_LOOK_MAX_MS: the commit that makes them readable sends no word.
 */
const UNSETTLED_LOOK_MS = 5
const UNSETTLED_LOOK_MAX_MS = 200
/**
 * How long even a read without `wait` waits for events that have committed
 * but are held back by an older transaction still running (PostgreSQL): an
 * agent that cancels a form and then reads the feed finds its event, unless
 * another client holds a transaction open longer than this.
 */
const SETTLE_MS = 1000

export interface FeedPage {
  events: StoredEvent[]
  /** The cursor to go on from. */
  next: string
  limit: number
}

/** An event as the API shows it, as JSON text: its payload is spliced in as stored. */
const eventJson = (event: StoredEvent) =>
  `{"id":"${encodePosition(event)}","type":"${event.type}","form_id":"${event.formId}","occurred_at":"${formatApiTime(event.occurredAt)}","payload":${event.payload}}`

/** The JSON of events read once for many waiters (see sharedReads), written once for all of them. */
const eventsJsonOf = new WeakMap<StoredEvent[], string>()

/** The answer of GET /api/v1/events (and of the MCP tool, parsed). */
export function feedPageJson(page: FeedPage): string {
  let events = eventsJsonOf.get(page.events)
  if (events === undefined) eventsJsonOf.set(page.events, (events = page.events.map(eventJson).join(',')))
  return `{"events":[${events}],"next":"${page.next}"}`
}

/**
 * Reads of the feed asked for in one turn of the event loop, shared by the
 * requests that ask for the same account, position and limit: one event
 * wakes every wait on its account, and a thousand waiting agents would
 * otherwise read it a thousand times, holding the server meanwhile. Only
 * reads begun in the same turn are shared, so each request's read still
 * begins after it started listening (an event committed before then is seen).
 */
function sharedReads(store: Store) {
  const reads = new Map<string, Promise<EventPage>>()
  let clearing = false
  return (accountId: string, from: EventPosition, limit: number): Promise<EventPage> => {
    const key = `${accountId} ${from.position} ${from.seq} ${limit}`
    let read = reads.get(key)
    if (read === undefined) {
      reads.set(key, (read = store.events.after(accountId, from, limit)))
      if (!clearing) {
        clearing = true
        setImmediate(() => {
          reads.clear()
          clearing = false
        })
      }
    }
    return read
  }
}

/**
 * The account's event feed (CONTRACT 12): its events oldest first, in commit
 * order, after a cursor. With `wait`, a read that finds none waits for the
 * account's next event, woken by the signal its writer sends in this process
 * or, on PostgreSQL, by the notification from any instance. A wait holds a
 * timer and a set entry, nothing more: no polling. (Only while committed
 * events are held back by an older transaction still running, on
 * PostgreSQL, does a read look again until they can be read: briefly.)
 */
export function createEventService(store: Store, signals: FormSignals) {
  const readAfter = sharedReads(store)
  return {
    async list(principal: Principal, rawQuery: Record<string, unknown>, abort?: AbortSignal): Promise<FeedPage> {
      const query = validate(ListEventsQuery, integerQuery(rawQuery, ['limit', 'wait']))
      const limit = query.limit ?? EVENTS_LIMIT.default
      const waitMs = (query.wait ?? 0) * 1000
      let from: EventPosition
      if (query.after === undefined) from = FEED_START
      else if (query.after === LATEST) {
        from = await store.events.head(principal.accountId)
        if (waitMs === 0) return { events: [], next: encodePosition(from), limit }
      } else {
        const decoded = decodePosition(query.after)
        if (!decoded) throw invalidAt('/after', 'Expected a cursor from an earlier answer\'s `next` (or an event id), or "latest"', 'invalid_format')
        from = decoded
      }
      const answer = (events: StoredEvent[]): FeedPage => ({ events, next: events.length > 0 ? encodePosition(events.at(-1)!) : encodePosition(from), limit })

      const signal = feedSignal(principal.accountId)
      const startedAt = performance.now()
      const deadline = startedAt + waitMs
      const settleDeadline = startedAt + Math.max(waitMs, SETTLE_MS)
      let unsettledLookMs = UNSETTLED_LOOK_MS
      for (;;) {
        // Listening before looking: an event that commits while the feed is read still wakes this wait.
        const round = new AbortController()
        const endRound = () => round.abort()
        abort?.addEventListener('abort', endRound)
        try {
          const left = deadline - performance.now()
          const changed = left > 0 && !abort?.aborted ? signals.wait(signal, left, round.signal) : undefined
          const page = await readAfter(principal.accountId, from, limit)
          if (page.events.length > 0 || abort?.aborted || signals.closed) return answer(page.events)
          if (page.unsettled && performance.now() < settleDeadline) {
            await (changed ? Promise.race([changed, Bun.sleep(unsettledLookMs)]) : Bun.sleep(unsettledLookMs))
            unsettledLookMs = Math.min(UNSETTLED_LOOK_MAX_MS, unsettledLookMs * 2)
          } else if (changed) {
            await changed
          } else {
            return answer(page.events)
          }
        } finally {
          round.abort()
          abort?.removeEventListener('abort', endRound)
        }
      }
    },
  }
}

export type EventService = ReturnType<typeof createEventService>
