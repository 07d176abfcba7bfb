import { HttpError, invalid } from './errors.ts'
import {
  type FormEntry,
  type FormPostHandling,
  multipartBoundary,
  multipartParser,
  urlencodedParser,
} from './form-data.ts'
import { parseJsonBody } from './json.ts'
import { timeSlicer, yieldToLoop } from './slices.ts'

/** Bytes of a form post handed to its parser at once: about a millisecond of copying. */
const PARSED_AT_ONCE_BYTES = 256 * 1024

/**
 * Reading request bodies, the one place a client decides how many bytes the
 * server holds and for how long (CONTRACT 13):
 *
 * - every body counts against one budget for the process while it is held; a
 *   request that would pass it is refused (503, Retry-After) before a byte of
 *   its body is read;
 * - a body larger than its route allows is refused (413) as soon as that is
 *   known: by its Content-Length, else by the bytes that arrive;
 * - a body that stalls, or trickles in slower than 1 KiB/s over 30 s, is cut
 *   (408) and its connection closed.
 */

/** The most an API request body (and a JSON submission) may carry. */
export const API_BODY_LIMIT = 1024 * 1024

/**
 * The largest form post any form accepts: its files (at most 100 MiB together),
 * the multipart framing around them and a little text.
 */
export const FORM_POST_MAX_BYTES = 101 * 1024 * 1024

/** How a slow body is judged: at least `minBytes` in every `windowMs` (checked every `tickMs`). */
export interface BodyPace {
  windowMs: number
  minBytes: number
  tickMs: number
}

/** 1 KiB/s averaged over any 30 s; a body that sends nothing for 30 s fails it too. */
const BODY_PACE: BodyPace = { windowMs: 30_000, minBytes: 30 * 1024, tickMs: 1000 }

/** Slow bodies cut (and so answered) per turn of the event loop. */
const CUTS_PER_TURN = 20

/** Seconds a client is asked to wait when the budget is full: uploads in progress take about that to finish. */
const BUSY_RETRY_AFTER_SECONDS = 5

const utf8 = new TextDecoder('utf-8', { fatal: true })

// The body was not read to its end: the connection cannot carry another request.
const closing = { Connection: 'close' }

const tooLarge = (limit: number) =>
  new HttpError(
    413,
    `Request body is larger than ${limit === API_BODY_LIMIT ? '1 MiB' : `${limit} bytes`}`,
    undefined,
    closing,
  )

const tooSlow = () =>
  new HttpError(
    408,
    'The request body arrived too slowly (at least 1 KiB/s over 30 s is needed); the connection is closed',
    undefined,
    closing,
  )

const busy = () =>
  new HttpError(503, 'The server is receiving as much as it can hold right now; try again shortly', undefined, {
    ...closing,
    'Retry-After': String(BUSY_RETRY_AFTER_SECONDS),
  })

/** Of the budget, this much is only ever held by bodies of at most API_BODY_LIMIT (API calls, JSON answers). */
const SMALL_BODIES_RESERVE = 32 * 1024 * 1024

/**
 * Bytes held at once by every request together. Large bodies (uploads) leave
 * SMALL_BODIES_RESERVE to API-sized ones, so that uploads in progress never
 * shut agents out of the API; but one upload of any allowed size always fits
 * when nothing else is held. A reservation is given back exactly once.
 */
function createByteBudget(capacity: number) {
  const uploadCapacity = Math.max(capacity - SMALL_BODIES_RESERVE, Math.min(capacity, FORM_POST_MAX_BYTES))
  let held = 0
  return {
    /** A release function, or undefined when `bytes` more would pass the budget. */
    reserve(bytes: number): (() => void) | undefined {
      const limit = bytes > API_BODY_LIMIT ? uploadCapacity : capacity
      // A body larger than the whole budget (a form's full allowance on the smallest budget) may still be read alone.
      const wanted = Math.min(bytes, limit)
      if (held + wanted > limit) return undefined
      held += wanted
      let released = false
      return () => {
        if (released) return
        released = true
        held -= wanted
      }
    },
    get held() {
      return held
    },
  }
}

/** Bodies being read, looked at once per tick: one timer for all of them, running only while there are any. */
function createPaceWatch(pace: BodyPace) {
  interface Watched {
    received: number
    /** Bytes received at each of the last ticks, oldest first. */
    history: number[]
    cut(): void
  }
  const watched = new Set<Watched>()
  const ticksPerWindow = Math.ceil(pace.windowMs / pace.tickMs)
  let timer: ReturnType<typeof setInterval> | undefined

  function tick() {
    const tooSlow: Watched[] = []
    for (const body of watched) {
      body.history.push(body.received)
      if (body.history.length <= ticksPerWindow) continue
      const windowStart = body.history.shift()!
      if (body.received - windowStart < pace.minBytes) {
        watched.delete(body)
        tooSlow.push(body)
      }
    }
    if (watched.size === 0) {
      clearInterval(timer)
      timer = undefined
    }
    void cutInTurns(tooSlow)
  }

  /**
   * Each cut request answers (408) as soon as the turn it was cut in ends:
   * thousands cut in one turn would be answered in one stretch.
   */
  async function cutInTurns(bodies: Watched[]) {
    for (let i = 0; i < bodies.length; i++) {
      if (i > 0 && i % CUTS_PER_TURN === 0) await yieldToLoop()
      bodies[i]!.cut()
    }
  }

  return {
    watch(cut: () => void): Watched & { done(): void } {
      const body = { received: 0, history: [0], cut, done: () => void watched.delete(body) }
      watched.add(body)
      timer ??= setInterval(tick, pace.tickMs)
      // A server with nothing else to do may still exit.
      timer.unref?.()
      return body
    },
  }
}

/**
 * A response to a request whose body was not read (refused before it: no key,
 * no such route, too large) closes the connection. Otherwise the server keeps
 * receiving the rest of that body, for as long as the client cares to send
 * it, before the connection can carry another request.
 */
export function closeWhenBodyUnread(request: Request, response: Response): Response {
  const declared = request.headers.get('content-length')
  const hasBody = (declared !== null && declared !== '0') || request.headers.has('transfer-encoding')
  if (hasBody && !request.bodyUsed) response.headers.set('connection', 'close')
  return response
}

export interface BodyReaderOptions {
  budgetBytes: number
  /** Tests shorten it; the server uses BODY_PACE. */
  pace?: BodyPace
}

/**
 * The body reader of one server: JSON, raw bytes and form posts, each within
 * its limit, the budget and the pace.
 */
export function createBodyReader(options: BodyReaderOptions) {
  const budget = createByteBudget(options.budgetBytes)
  const pace = options.pace ?? BODY_PACE
  const paceWatch = createPaceWatch(pace)

  /**
   * Reserves what the body may take (its declared length, else the route's
   * limit) for as long as `use` runs, and hands `use` the body's chunks as they arrive.
   */
  async function withBody<T>(
    request: Request,
    limit: number,
    use: (chunks: AsyncIterable<Uint8Array>) => Promise<T>,
  ): Promise<T> {
    const declared = request.headers.get('content-length')
    const declaredBytes = declared === null ? undefined : Number(declared)
    if (declaredBytes !== undefined && declaredBytes > limit) throw tooLarge(limit)
    const release = budget.reserve(
      declaredBytes !== undefined && Number.isSafeInteger(declaredBytes) ? declaredBytes : limit,
    )
    if (!release) throw busy()
    try {
      // A body no larger than the pace's minimum arrives whole within one window at that pace: read
      // whole (natively, far cheaper than a stream), it is cut all the same if it is not there in time.
      const small = declaredBytes !== undefined && declaredBytes <= pace.minBytes
      return await use(small ? whole(request) : paced(request, limit))
    } finally {
      release()
    }
  }

  async function* whole(request: Request): AsyncGenerator<Uint8Array> {
    const arrived = request.arrayBuffer()
    // Once cut, the connection closes and the read fails: nobody waits for it then.
    arrived.catch(() => {})
    const cutOff = Promise.withResolvers<never>()
    const body = paceWatch.watch(() => cutOff.reject(tooSlow()))
    try {
      const bytes = new Uint8Array(await Promise.race([arrived, cutOff.promise]))
      if (bytes.byteLength > 0) yield bytes
    } finally {
      body.done()
    }
  }

  async function* paced(request: Request, limit: number): AsyncGenerator<Uint8Array> {
    if (!request.body) return
    const reader = request.body.getReader()
    let cut = false
    const body = paceWatch.watch(() => {
      cut = true
      reader.cancel().catch(() => {})
    })
    let received = 0
    let finished = false
    try {
      for (;;) {
        let next: Awaited<ReturnType<typeof reader.read>>
        try {
          next = await reader.read()
        } catch (error) {
          if (cut) throw tooSlow()
          throw error
        }
        if (cut) throw tooSlow()
        if (next.done) {
          finished = true
          return
        }
        received += next.value.byteLength
        body.received = received
        if (received > limit) throw tooLarge(limit)
        yield next.value
      }
    } finally {
      body.done()
      // Whatever was not read is not wanted: stop receiving it.
      if (finished) reader.releaseLock()
      else reader.cancel().catch(() => {})
    }
  }

  /** The whole body as bytes, at most `limit`. */
  async function bytes(request: Request, limit = API_BODY_LIMIT): Promise<Uint8Array> {
    return withBody(request, limit, async (chunks) => {
      const parts: Uint8Array[] = []
      for await (const chunk of chunks) parts.push(chunk)
      return parts.length === 1 ? parts[0]! : Buffer.concat(parts)
    })
  }

  return {
    /**
     * Counts `bytes` that a response holds while it is built and sent (a page
     * of the event feed) against the same budget as bodies: a release
     * function, or undefined when they would pass it (then refuse with 503).
     */
    reserve: (bytes: number) => budget.reserve(bytes),

    /** Bytes of the budget held now, bodies and pages together. */
    get bytesHeld(): number {
      return budget.held
    },

    /** A JSON body of at most `limit` bytes; malformed JSON is a 422 like any other invalid body. */
    async json(request: Request, limit = API_BODY_LIMIT): Promise<unknown> {
      const raw = await bytes(request, limit)
      let text: string
      try {
        text = utf8.decode(raw)
      } catch {
        throw invalid([{ path: '', message: 'Request body is not valid UTF-8', code: 'invalid_encoding' }])
      }
      if (text.trim() === '')
        throw invalid([{ path: '', message: 'Request body is empty; expected a JSON object', code: 'invalid_type' }])
      return parseJsonBody(text)
    },

    /**
     * A form post (urlencoded or multipart) of at most `limit` bytes, parsed as
     * it arrives, its files' bytes handed to `handling`'s sinks; after each
     * piece of the body, `settled()` is awaited before more is read, so files
     * are stored as fast as they arrive and never pile up in memory. `use` gets
     * the entries while the body still counts against the budget.
     */
    async formPost<F, T>(
      request: Request,
      limit: number,
      handling: FormPostHandling<F> & { settled(): Promise<void> },
      use: (entries: Array<FormEntry<F>>) => Promise<T>,
    ): Promise<T> {
      const contentType = request.headers.get('content-type') ?? ''
      const parser = /^multipart\/form-data/i.test(contentType)
        ? multipartParser(multipartBoundary(contentType), handling)
        : urlencodedParser(handling)
      return withBody(request, limit, async (chunks) => {
        const slices = timeSlicer()
        for await (const chunk of chunks) {
          // A chunk may hold megabytes (a client on a fast link, or a body handed over in one piece):
          // parsed a piece at a time, so copying it into files' chunks never holds the event loop for long.
          for (let offset = 0; offset < chunk.length; offset += PARSED_AT_ONCE_BYTES) {
            parser.write(chunk.subarray(offset, offset + PARSED_AT_ONCE_BYTES))
            await handling.settled()
            await slices.pause()
          }
        }
        const entries = parser.end()
        await handling.settled()
        return use(entries)
      })
    },
  }
}

export type BodyReader = ReturnType<typeof createBodyReader>
