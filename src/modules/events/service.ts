import { HttpError, invalidAt } from '../../lib/errors.ts'
import { type FormSignals, feedSignal } from '../../lib/signals.ts'
import { formatApiTime } from '../../lib/time.ts'
import { integerQuery, validate } from '../../lib/validation.ts'
import type { Store } from '../../stores.ts'
import { invalidKey, type KeyHolds, type Principal } from '../auth/service.ts'
import { EVENTS_LIMIT, ListEventsQuery } from './model.ts'
import type { EventType } from './names.ts'
import { decodeCursor, encodeNumber, FEED_START } from './position.ts'
import type { EventSummary } from './store/index.ts'

/** `after=latest`: start from the head of the feed. */
const LATEST = 'latest'

/** A page's JSON holds at most this many bytes, unless it is one event larger than that alone (CONTRACT 12a). */
const PAGE_MAX_BYTES = 1024 * 1024
/**
 * Payload bytes read from the database at once (the events of a page, a few
 * at a time; a larger event alone), and the most handed to the connection at
 * once: a page is built and sent a piece at a time, each taken only once the
 * client has taken the one before.
 */
const PIECE_BYTES = 256 * 1024
/**
 * What a read of the feed counts against the memory budget (the request
 * bodies' budget, lib/request-body.ts) while it is answered, as a multiple of
 * the most it holds at a time. A page sent over HTTP holds one group of
 * payloads as the database gave them, and the connection may keep a copy of
 * the piece it could not send yet: at most twice its largest group. That is a
 * bound, not an estimate: measured (bench/events-pages.ts, bench/results.md),
 * 100 reads of pages of 1 MB events left unread by their clients added about
 * 13 MiB of RSS in all (the kernel's socket buffers take the pieces).
 */
const HTTP_HOLD_FACTOR = 2
/**
 * An MCP answer is built whole: the page's JSON, parsed again into objects,
 * then written twice into the JSON-RPC answer (as text and as structured
 * content). Measured (bench/events-pages.ts): 16 wait_for_events answering
 * pages of about 1 MB at once added about 114 MiB of RSS, 7 times the page each.
 */
const MCP_HOLD_FACTOR = 8
/** Seconds a read refused for memory is asked to wait: pages in flight are sent by then. */
const BUSY_RETRY_AFTER_SECONDS = 1

const busy = () =>
  new HttpError(503, 'The server is sending as much as it can hold right now; try again shortly', undefined, {
    'Retry-After': String(BUSY_RETRY_AFTER_SECONDS),
  })

/** An event of a page, with its payload's JSON as stored. */
export interface FeedEvent {
  number: number
  formId: string
  type: EventType
  occurredAt: number
  payload: string
}

/** What MCP's wait_for_events answers with: the page, its events with their payloads. */
export interface FeedPage {
  events: FeedEvent[]
  /** The cursor to go on from. */
  next: string
  limit: number
}

/** What GET /api/v1/events answers with: the page's JSON as a stream, built a piece at a time as the client reads. */
export interface FeedResponse {
  body: ReadableStream<Uint8Array>
  next: string
  limit: number
}

/** What the feed counts its reads against: the request bodies' budget (lib/request-body.ts). */
export interface MemoryBudget {
  reserve(bytes: number): (() => void) | undefined
}

const utf8 = new TextDecoder()
const encoder = new TextEncoder()

const PAGE_START = '{"events":['
const pageEnd = (next: string) => `],"next":"${next}"}`
/** The bytes of a page's JSON around its events: `next` is the last event's id, 13 characters. */
const PAGE_FRAME_BYTES = PAGE_START.length + pageEnd(encodeNumber(0)).length

/** An event's JSON up to its payload (ASCII), which the payload as stored and `}` follow. */
const eventHead = (event: Pick<EventSummary, 'number' | 'type' | 'formId' | 'occurredAt'>) =>
  `{"id":"${encodeNumber(event.number)}","type":"${event.type}","form_id":"${event.formId}","occurred_at":"${formatApiTime(event.occurredAt)}","payload":`

const eventBytes = (event: EventSummary) => eventHead(event).length + event.payloadBytes + 1

/**
 * A page of the feed, chosen from the events' lengths alone: the first events
 * of `summaries` whose JSON, with the page's, stays within PAGE_MAX_BYTES
 * (one at least), in groups of at most PIECE_BYTES of payload read together.
 */
interface ChosenPage {
  events: EventSummary[]
  /** The JSON's length in bytes, at most. */
  bytes: number
  groups: EventSummary[][]
  /** Reads of the groups' payloads, shared by the requests that share the page (see sharedReads). */
  reads: Map<number, { payloads: Promise<Map<number, Uint8Array>>; taken: number }>
  /** The requests that took the page, each to read every group once. */
  readers: number
  /** Every payload at once, for MCP. */
  whole?: Promise<FeedEvent[]>
}

function choosePage(summaries: EventSummary[]): ChosenPage {
  const events: EventSummary[] = []
  let bytes = PAGE_FRAME_BYTES
  for (const event of summaries) {
    const more = (events.length > 0 ? 1 : 0) + eventBytes(event)
    if (events.length > 0 && bytes + more > PAGE_MAX_BYTES) break
    events.push(event)
    bytes += more
  }
  const groups: EventSummary[][] = []
  let group: EventSummary[] = []
  let groupBytes = 0
  for (const event of events) {
    if (group.length > 0 && groupBytes + event.payloadBytes > PIECE_BYTES) {
      groups.push(group)
      group = []
      groupBytes = 0
    }
    group.push(event)
    groupBytes += event.payloadBytes
  }
  if (group.length > 0) groups.push(group)
  return { events, bytes, groups, reads: new Map(), readers: 0 }
}

/** The most bytes of JSON one group of the page makes. */
const largestGroupBytes = (page: ChosenPage) =>
  Math.max(
    PAGE_FRAME_BYTES,
    ...page.groups.map((group) => group.reduce((sum, event) => sum + 1 + eventBytes(event), 0)),
  )

/**
 * The payloads of the page's group `index`: read once for the requests that
 * share the page, and let go once each has taken them.
 */
function takeGroup(store: Store, accountId: string, page: ChosenPage, index: number): Promise<Map<number, Uint8Array>> {
  let read = page.reads.get(index)
  if (!read) {
    const group = page.groups[index]!
    const payloads = store.events
      .payloads(accountId, group[0]!.number, group.at(-1)!.number)
      .then((rows) => new Map(rows.map((row) => [row.number, row.payload])))
    read = { payloads, taken: 0 }
    page.reads.set(index, read)
  }
  if (++read.taken >= page.readers) page.reads.delete(index)
  return read.payloads
}

/** Every event of the page with its payload (an event deleted since it was chosen is left out). */
function wholePage(store: Store, accountId: string, page: ChosenPage): Promise<FeedEvent[]> {
  page.whole ??= (async () => {
    if (page.events.length === 0) return []
    const rows = await store.events.payloads(accountId, page.events[0]!.number, page.events.at(-1)!.number)
    const payloads = new Map(rows.map((row) => [row.number, utf8.decode(row.payload)]))
    return page.events.flatMap((event) => {
      const payload = payloads.get(event.number)
      return payload === undefined
        ? []
        : [{ number: event.number, formId: event.formId, type: event.type, occurredAt: event.occurredAt, payload }]
    })
  })()
  return page.whole
}

/**
 * The page's JSON, a piece at a time, as the client takes it: each pull reads
 * the next group's payloads (or hands over the next slice of an event larger
 * than a piece). An event deleted since the page was chosen is left out;
 * `next` is the page's last event's all the same. `done` runs once, when the
 * stream ends, fails or is cancelled.
 */
function pageStream(
  store: Store,
  accountId: string,
  page: ChosenPage,
  next: string,
  done: () => void,
): ReadableStream<Uint8Array> {
  let finished = false
  const finish = () => {
    if (finished) return
    finished = true
    done()
  }
  let group = 0
  let written = 0
  const pending: Uint8Array[] = [encoder.encode(PAGE_START)]

  /** The group's JSON, in pieces of at most PIECE_BYTES (slices of a large payload, small events put together). */
  function piecesOf(events: EventSummary[], payloads: Map<number, Uint8Array>) {
    let parts: Uint8Array[] = []
    let size = 0
    const flush = () => {
      if (size === 0) return
      pending.push(parts.length === 1 ? parts[0]! : Buffer.concat(parts, size))
      parts = []
      size = 0
    }
    const add = (bytes: Uint8Array) => {
      for (let at = 0; at < bytes.byteLength; at += PIECE_BYTES) {
        const piece = bytes.subarray(at, at + PIECE_BYTES)
        if (size + piece.byteLength > PIECE_BYTES) flush()
        parts.push(piece)
        size += piece.byteLength
      }
    }
    for (const event of events) {
      const payload = payloads.get(event.number)
      if (payload === undefined) continue
      add(encoder.encode((written++ > 0 ? ',' : '') + eventHead(event)))
      add(payload)
      add(encoder.encode('}'))
    }
    flush()
  }

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          while (pending.length === 0) {
            if (group === page.groups.length) {
              controller.enqueue(encoder.encode(pageEnd(next)))
              controller.close()
              finish()
              return
            }
            const events = page.groups[group]!
            piecesOf(events, await takeGroup(store, accountId, page, group++))
          }
          controller.enqueue(pending.shift()!)
        } catch (error) {
          finish()
          controller.error(error)
        }
      },
      cancel: finish,
    },
    // Nothing is read ahead of the client: the next piece is made when the last one is taken.
    { highWaterMark: 0 },
  )
}

/**
 * Reads of the feed asked for in one turn of the event loop, shared by the
 * requests that ask for the same account, number and limit: one event wakes
 * every wait on its account, and a thousand waiting agents would otherwise
 * read it a thousand times, holding the server meanwhile. Only reads begun
 * in the same turn are shared, so each request's read still begins after it
 * started listening (an event committed before then is seen). What they
 * share is the page chosen and its payloads as read (see takeGroup).
 */
function sharedReads(store: Store) {
  const reads = new Map<string, Promise<ChosenPage>>()
  let clearing = false
  return async (accountId: string, after: number, limit: number): Promise<ChosenPage> => {
    const key = `${accountId} ${after} ${limit}`
    let read = reads.get(key)
    if (read === undefined) {
      read = store.events.after(accountId, after, limit).then(choosePage)
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

/** The answer of MCP's wait_for_events, as JSON (the same as GET /api/v1/events gives). */
export function feedPageJson(page: FeedPage): string {
  const events = page.events.map((event) => `${eventHead(event)}${event.payload}}`).join(',')
  return `${PAGE_START}${events}${pageEnd(page.next)}`
}

/**
 * The account's event feed (CONTRACT 12 and 12a): its events in the order
 * they committed, after a cursor. With `wait`, a read that finds none waits
 * for the account's next event, woken by the signal its writer sends in this
 * process or, on PostgreSQL, by the notification from any instance. A wait
 * holds a timer and a set entry, nothing more: no polling. Every committed
 * event is readable at once (store/index.ts: an account's numbers commit in
 * order), so nothing else on the database holds a read back.
 *
 * A page holds at most `limit` events and PAGE_MAX_BYTES of JSON (an event
 * larger than that comes alone), chosen from the events' lengths before any
 * payload is read. Over HTTP its JSON is streamed a piece at a time as the
 * client reads it; for MCP it is built whole. Either way the read counts
 * against the memory budget from when its page is chosen until it is
 * answered, and is refused (503, Retry-After) before anything is sent when
 * that would pass the budget.
 */
export function createEventService(store: Store, signals: FormSignals, memory: MemoryBudget, keys: KeyHolds) {
  const readAfter = sharedReads(store)

  /** The page to answer with: waited for when asked to, and `next`. */
  async function pageFor(principal: Principal, rawQuery: Record<string, unknown>, abort?: AbortSignal) {
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
      if (waitMs === 0) return { page: choosePage([]), next: given, limit }
    } else {
      const cursor = decodeCursor(query.after)
      if (!cursor)
        throw invalidAt(
          '/after',
          'Expected a cursor from an earlier answer\'s `next` (or an event id), or "latest"',
          'invalid_format',
        )
      after = 'number' in cursor ? cursor.number : await store.events.afterLegacy(accountId, cursor.legacy)
      given = query.after
    }

    const signal = feedSignal(accountId)
    const deadline = performance.now() + waitMs
    // A wait ends with 401 once its key is revoked (CONTRACT 12a); a read that does not wait needs no hold.
    const hold = waitMs > 0 ? keys.holdWhileWaiting(principal) : undefined
    try {
      for (;;) {
        // Listening before looking: an event that commits while the feed is read still wakes this wait.
        const round = new AbortController()
        const endRound = () => round.abort()
        abort?.addEventListener('abort', endRound)
        hold?.revoked.addEventListener('abort', endRound)
        try {
          const left = deadline - performance.now()
          const changed = left > 0 && !abort?.aborted ? signals.wait(signal, left, round.signal) : undefined
          const page = await readAfter(accountId, after, limit)
          if (hold?.revoked.aborted) throw invalidKey()
          if (page.events.length > 0 || !changed || abort?.aborted || signals.closed) {
            // Taken in the turn the shared read ends, with every other request that shares it.
            page.readers++
            return { page, next: page.events.length > 0 ? encodeNumber(page.events.at(-1)!.number) : given, limit }
          }
          await changed
          if (hold?.revoked.aborted) throw invalidKey()
        } finally {
          round.abort()
          abort?.removeEventListener('abort', endRound)
          hold?.revoked.removeEventListener('abort', endRound)
        }
      }
    } finally {
      hold?.release()
    }
  }

  /**
   * MCP's wait_for_events: the page with its payloads. Its answer is built
   * from it at once, in the turns its read ends in: it counts against the
   * budget until then.
   */
  async function list(principal: Principal, rawQuery: Record<string, unknown>, abort?: AbortSignal): Promise<FeedPage> {
    const { page, next, limit } = await pageFor(principal, rawQuery, abort)
    const release = memory.reserve(MCP_HOLD_FACTOR * page.bytes)
    if (!release) throw busy()
    try {
      return { events: await wholePage(store, principal.accountId, page), next, limit }
    } finally {
      setImmediate(release)
    }
  }

  return {
    /** GET /api/v1/events: the page's JSON as a stream; `abort` (the request's) ends it too. */
    async read(principal: Principal, rawQuery: Record<string, unknown>, abort?: AbortSignal): Promise<FeedResponse> {
      const { page, next, limit } = await pageFor(principal, rawQuery, abort)
      const release = memory.reserve(HTTP_HOLD_FACTOR * largestGroupBytes(page))
      if (!release) throw busy()
      let released = false
      const done = () => {
        if (released) return
        released = true
        abort?.removeEventListener('abort', done)
        release()
      }
      abort?.addEventListener('abort', done)
      return { body: pageStream(store, principal.accountId, page, next, done), next, limit }
    },

    list,

    /**
     * The console's look at the feed, waiting for nothing: the page after
     * `after` (a cursor of the feed), or without one the account's latest
     * `limit` events (a number of events as the API takes it, checked as
     * there). `earlier` reads the events just before the page, as many as
     * there are up to a page: null at the feed's start, or after a cursor from
     * before numbers. `later` is `next` while events follow the page.
     */
    async browse(
      principal: Principal,
      after: string | undefined,
      limit: number,
    ): Promise<FeedPage & { earlier: { after: string; limit: number } | null; later: string | null }> {
      const head = await store.events.head(principal.accountId)
      const from = after ?? encodeNumber(Math.max(FEED_START, head - limit))
      const page = await list(principal, { after: from, limit })
      const cursor = decodeCursor(from)
      const number = cursor && 'number' in cursor ? cursor.number : FEED_START
      const earlier = Math.max(FEED_START, number - page.limit)
      const last = page.events.at(-1)?.number ?? number
      return {
        ...page,
        earlier: number > FEED_START ? { after: encodeNumber(earlier), limit: number - earlier } : null,
        later: last < head ? page.next : null,
      }
    },
  }
}

export type EventService = ReturnType<typeof createEventService>
