import { randomBytes } from 'node:crypto'
import { Elysia } from 'elysia'
import { pathOf, type ResponseSet } from './http.ts'
import type { Logger } from './log.ts'

// An id from a proxy is reused (so log lines join up) only when it is plainly an id.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/

// Ids are a random per-process prefix and a counter: unique, and far cheaper than random bytes per request.
const idPrefix = randomBytes(4).toString('hex')
let idCounter = 0
const nextRequestId = () => idPrefix + (idCounter = (idCounter + 1) >>> 0).toString(16).padStart(8, '0')

/** The id of a request in flight, from its `set`: as logged and sent back in X-Request-Id. */
export const requestIdOf = (set: ResponseSet) => set.headers['x-request-id'] as string | undefined

/** Gives every request an id (a plain one from a proxy is kept), sent back in X-Request-Id. */
export function requestIds() {
  return new Elysia({ name: 'request-ids' }).onRequest(({ request, set }) => {
    const offered = request.headers.get('x-request-id')
    // An id that looks like an API key is never kept: it would be written to the log.
    set.headers['x-request-id'] =
      offered && SAFE_REQUEST_ID.test(offered) && !offered.includes('svc_') ? offered : nextRequestId()
  })
}

/**
 * Wraps a request handler with the access log: one line per request with
 * method, path without the query, status, duration and request id. Nothing
 * else: no headers, no bodies. (Around the handler rather than an Elysia
 * afterResponse hook, which schedules an async task for every request.)
 */
export function withAccessLog(
  handle: (request: Request) => Promise<Response>,
  logger: Logger,
  /** Told of every request as it is logged (the metrics, when they are on). */
  observe?: (request: Request, status: number, ms: number) => void,
) {
  return async (request: Request): Promise<Response> => {
    const startedAt = performance.now()
    const response = await handle(request)
    const ms = performance.now() - startedAt
    logger.info('request', {
      method: request.method,
      path: pathOf(request.url),
      status: response.status,
      ms: Math.round(ms * 10) / 10,
      request_id: response.headers.get('x-request-id') ?? undefined,
    })
    observe?.(request, response.status, ms)
    return response
  }
}
