import { Elysia } from 'elysia'
import { HttpError } from '../../lib/errors.ts'
import type { RateLimiter } from '../../lib/rate-limit.ts'
import { type AuthService, invalidKey, type KeyPrincipal } from './service.ts'

/**
 * Bearer authentication and the per-key rate limit: a macro a route opts into
 * with `apiKey: true`, which hands its handler the caller as `principal`.
 * Routes read their bodies themselves (lib/request-body.ts) and never ask
 * Elysia to parse one, so this runs before any body is read: a caller without
 * a valid key learns nothing else (not even that its body was malformed or
 * too large). Routes that need no key (the page, /healthz) pay nothing.
 */
export function apiKeyAuth(auth: AuthService, limiter: RateLimiter) {
  return new Elysia({ name: 'api-key' }).macro({
    apiKey: {
      async resolve({ request }) {
        const principal = await auth.authenticate(request.headers.get('authorization'))
        takeRequests(limiter, principal, 1)
        return { principal }
      },
      // A wait that ended because its key was revoked meanwhile answers 401, whatever its route made of
      // that: MCP answers a tool's failure as a result, and the client must hear that its key is gone.
      afterHandle(context) {
        // The resolve above put it there; Elysia's types do not carry it to a macro's own hooks.
        const { principal } = context as typeof context & { principal: KeyPrincipal }
        if (auth.refusedWhileWaiting(principal)) throw invalidKey()
      },
    },
  })
}

export type ApiKeyAuth = ReturnType<typeof apiKeyAuth>

/**
 * Counts `count` requests against the caller's key, all or none: when fewer
 * are left, a 429 with Retry-After (and `detail`) refuses them all.
 */
export function takeRequests(
  limiter: RateLimiter,
  principal: KeyPrincipal,
  count: number,
  detail = 'Rate limit exceeded: too many requests for this API key',
) {
  const decision = limiter.take(principal.keyId, count)
  if (!decision.allowed)
    throw new HttpError(429, detail, undefined, { 'Retry-After': String(decision.retryAfterSeconds) })
}
