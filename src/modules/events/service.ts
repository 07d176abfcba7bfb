import type { Store } from '../../db/store.ts'
import { invalidAt } from '../../lib/errors.ts'
import { feedSignal, type FormSignals } from '../../lib/signals.ts'
import { formatApiTime } from '../../lib/time.ts'
import { integerQuery, validate } from '../../lib/validation.ts'
import type { Principal } from '../auth/service.ts'
import { EVENTS_LIMIT, ListEventsQuery } from './model.ts'
import { FEED_START, decodeCursor, encodeNumber } from './position.ts'
import type { EventSummary, EventType } from './store/index.ts'

/** `after=latest`: start from the head of the feed. */
const LATEST = 'latest'

/** An event of a page, with its payload's JSON as stored. */
export interface FeedEvent {
  number: number
  formId: string
  type: EventType
  occurredAt: number
  payload: string
}

export interface FeedPage {
  events: FeedEvent[]
  /** The cursor to go on from. */
  next: string
  limit: number
}

const utf8 = new TextDecoder()

/** An event as the API shows it, as JSON text: its payload is spliced in as stored. */
const eventJson = (event: FeedEvent) =>
  `{"id":"${encodeNumber(event.number)}","type":"${event.type}","form_id":"${event.formId}","occurred_at":"${formatApiTime(event.occurredAt)}","payload":${event.payload}}`

/** The JSON of events read once for many waiters (see sharedReads), written once for all of them. */
const eventsJsonOf = new WeakMap<FeedEvent[], string>()

/** The answer of GET /api/v1/events (and of the MCP tool, parsed). */
export function feedPageJson(page: FeedPage): string {
  let events = eventsJsonOf.get(page.events)
  if (events === undefined) eventsJsonOf.set(page.events, (events = page.events.map(eventJson).join(',')))
  return `{"events":[${events}],"next":"${page.next}"}`
}

/** The events of `summaries` with their payloads; an event deleted since it was chosen is left out. */
async function withPayloads(store: Store, accountId: string, summaries: EventSummary[]): Promise<FeedEvent[]> {
  if (summaries.length === 0) return []
  const payloads = new Map(
    (await store.events.payloads(accountId, summaries[0]!.number, summaries.at(-1)!.number)).map((row) => [row.number, utf8.decode(row.payload)]),
  )
  return summaries.flatMap((event) => {
    const payload = payloads.get(event.number)
    return payload === undefined ? [] : [{ number: event.number, formId: event.formId, type: event.type, occurredAt: event.occurredAt, payload }]
  })
}

/**
 * Reads of the feed asked for in one turn of the event loop, shared by the
 * requests that ask for the same account, number and limit: one event wakes
 * every wait on its account, and a thousand waiting agents would otherwise
 * read it a thousand times, holding the server meanwhile. Only reads begun
 * in the same turn are shared, so each request's read still begins after it
 * started listening (an event committed before then is seen).
 */
function sharedReads(store: Store) {
  const reads = new Map<string, Promise<{ summaries: EventSummary[]; events: FeedEvent[] }>>()
  let clearing = false
  return (accountId: string, after: number, limit: number) => {
    const key = `${accountId} ${after} ${limit}`
    let read = reads.get(key)
    if (read === undefined) {
      read = store.events.after(accountId, after, limit).then(async (summaries) => ({ summaries, events: await withPayloads(store, accountId, summaries) }))
      reads.set(key, read)
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
 * The account's event feed (CONTRACT 12 and 12a): its events in the order
 * they committed, after a cursor. With `wait`, a read that finds none waits
 * for the account's next event, woken by the signal its writer sends in this
 * process or, on PostgreSQL, by the notification from any instance. A wait
 * holds a timer and a set entry, nothing more: no polling. Every committed
 * event is readable at once (store/index.ts: an account's numbers commit in
 * order), so nothing else on the database holds a read back.
 */
export function createEventService(store: Store, signals: FormSignals) {
  const readAfter = sharedReads(store)
  return {
    async list(principal: Principal, rawQuery: Record<string, unknown>, abort?: AbortSignal): Promise<FeedPage> {
      const query = validate(ListEventsQuery, integerQuery(rawQuery, ['limit', 'wait']))
      const limit = query.limit ?? EVENTS_LIMIT.default
      const waitMs = (query.wait ?? 0) * 1000
      const { accountId } = principal
      let after: number
      // What `next` is while nothing is new: the cursor as given (a cursor from before numbers included).
      let given: string
      if (query.after === undefined) {
        after = FEED_START
        given = encodeNumber(after)
      } else if (query.after === LATEST) {
        after = await store.events.head(accountId)
        given = encodeNumber(after)
        if (waitMs === 0) return { events: [], next: given, limit }
      } else {
        const cursor = decodeCursor(query.after)
        if (!cursor) throw invalidAt('/after', 'Expected a cursor from an earlier answer\'s `next` (or an event id), or "latest"', 'invalid_format')
        after = 'number' in cursor ? cursor.number : await store.events.afterLegacy(accountId, cursor.legacy)
        given = query.after
      }

      const signal = feedSignal(accountId)
      const deadline = performance.now() + waitMs
      for (;;) {
        // Listening before looking: an event that commits while the feed is read still wakes this wait.
        const round = new AbortController()
        const endRound = () => round.abort()
        abort?.addEventListener('abort', endRound)
        try {
          const left = deadline - performance.now()
          const changed = left > 0 && !abort?.aborted ? signals.wait(signal, left, round.signal) : undefined
          const { summaries, events } = await readAfter(accountId, after, limit)
          if (summaries.length > 0 || !changed || abort?.aborted || signals.closed) {
            return { events, next: summaries.length > 0 ? encodeNumber(summaries.at(-1)!.number) : given, limit }
          }
          await changed
        } finally {
          round.abort()
          abort?.removeEventListener('abort', endRound)
        }
      }
    },
  }
}

export type EventService = ReturnType<typeof createEventService>
