import { Elysia } from 'elysia'
import { HttpError } from '../../lib/errors.ts'
import { pathOf, type ResponseSet } from '../../lib/http.ts'
import type { RateLimiter } from '../../lib/rate-limit.ts'
import { MCP_PATH } from '../mcp/paths.ts'
import { type AuthService, invalidKey, type Principal } from './service.ts'

/**
 * The caller rides on the request's own `set` object: a WeakMap keyed by
 * Request costs the garbage collector dearly at tens of thousands of requests a second.
 */
const PRINCIPAL = Symbol('principal')
type WithPrincipal = ResponseSet & { [PRINCIPAL]?: Principal }

const API_PREFIX = '/api/v1/'
const PUBLIC_API_PATHS = new Set(['/api/v1/openapi.json'])

// /mcp/ with a slash reaches the same route: it needs the key just the same.
const needsKey = (path: string) =>
  (path.startsWith(API_PREFIX) && !PUBLIC_API_PATHS.has(path)) || path === MCP_PATH || path.startsWith(`${MCP_PATH}/`)

/**
 * Bearer authentication and the per-key rate limit for everything under
 * /api/v1 and for /mcp. It runs when the request arrives, before any body is read, so a
 * caller without a valid key learns nothing else (not even that its body was
 * malformed or too large).
 */
export function apiAuth(auth: AuthService, limiter: RateLimiter) {
  return (
    new Elysia({ name: 'api-auth' })
      .onRequest(async ({ request, set }) => {
        // The path the router goes by: intake's handle has replaced any url Elysia would read otherwise.
        if (!needsKey(pathOf(request.url))) return
        const principal = await auth.authenticate(request.headers.get('authorization'))
        takeRequests(limiter, principal, 1)
        ;(set as WithPrincipal)[PRINCIPAL] = principal
      })
      // A wait that ended because its key was revoked meanwhile answers 401, whatever its route made of
      // that: MCP answers a tool's failure as a result, and the client must hear that its key is gone.
      .onAfterHandle({ as: 'global' }, ({ set }) => {
        const principal = (set as WithPrincipal)[PRINCIPAL]
        if (principal && auth.refusedWhileWaiting(principal)) throw invalidKey()
      })
  )
}

/**
 * Counts `count` requests against the caller's key, all or none: when fewer
 * are left, a 429 with Retry-After (and `detail`) refuses them all.
 */
export function takeRequests(
  limiter: RateLimiter,
  principal: Principal,
  count: number,
  detail = 'Rate limit exceeded: too many requests for this API key',
) {
  const decision = limiter.take(principal.keyId, count)
  if (!decision.allowed)
    throw new HttpError(429, detail, undefined, { 'Retry-After': String(decision.retryAfterSeconds) })
}

/** The caller of an /api/v1 request (from its `set`), authenticated by `apiAuth`. */
export function principalOf(set: ResponseSet): Principal {
  const principal = (set as WithPrincipal)[PRINCIPAL]
  if (!principal) throw new Error('No principal for this request: a route outside /api/v1?')
  return principal
}
