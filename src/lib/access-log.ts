import { Elysia } from 'elysia'
import { randomBytes } from 'node:crypto'
import { pathOf } from './http.ts'
import type { Logger } from './log.ts'

interface RequestTiming {
  id: string
  startedAt: number
}

const timings = new WeakMap<Request, RequestTiming>()

// An id from a proxy is reused (so log lines join up) only when it is plainly an id.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/

// Ids are a random per-process prefix and a counter: unique, and far cheaper than random bytes per request.
const idPrefix = randomBytes(4).toString('hex')
let idCounter = 0
const nextRequestId = () => idPrefix + ((idCounter = (idCounter + 1) >>> 0).toString(16).padStart(8, '0'))

/** The id of a request in flight, as logged and sent back in X-Request-Id. */
export const requestIdOf = (request: Request) => timings.get(request)?.id

/**
 * One log line per request: method, path without the query, status, duration
 * and request id. Nothing else: no headers, no bodies.
 */
export function accessLog(logger: Logger) {
  return new Elysia({ name: 'access-log' })
    .onRequest(({ request, set }) => {
      const offered = request.headers.get('x-request-id')
      const id = offered && SAFE_REQUEST_ID.test(offered) ? offered : nextRequestId()
      timings.set(request, { id, startedAt: performance.now() })
      set.headers['x-request-id'] = id
    })
    .onAfterResponse({ as: 'global' }, ({ request, set, responseValue }) => {
      const timing = timings.get(request)
      logger.info('request', {
        method: request.method,
        path: pathOf(request.url),
        status: responseValue instanceof Response ? responseValue.status : Number(set.status ?? 200),
        ms: timing ? Math.round((performance.now() - timing.startedAt) * 10) / 10 : undefined,
        request_id: timing?.id,
      })
    })
}
