import { Type } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { HttpError } from '../../lib/errors.ts'
import { clientAddress, isJsonContentType, readJson } from '../../lib/http.ts'
import { apiDoc } from '../../lib/openapi.ts'
import type { RateLimiter } from '../../lib/rate-limit.ts'
import { ApiTime, JsonObject, Ulid } from '../../lib/schemas.ts'
import { formatApiTime } from '../../lib/time.ts'
import type { SubmissionService } from './service.ts'

export interface SubmissionRouteOptions {
  trustProxy: boolean
  /** Per client address, for every POST to a public form. */
  publicLimiter: RateLimiter
}

const SubmissionReceipt = Type.Object({ id: Ulid, form_id: Ulid, submitted_at: ApiTime }, { title: 'SubmissionReceipt' })

/** The public side: what the human (or a custom front end) sends to /f/<id>. */
export function submissionRoutes(submissions: SubmissionService, options: SubmissionRouteOptions) {
  return new Elysia({ name: 'submissions' }).post(
    '/f/:id',
    async ({ request, params, server, set }) => {
      // A browser tells us when another site's page made this request: never accept that.
      if (request.headers.get('sec-fetch-site') === 'cross-site') {
        throw new HttpError(403, 'Cross-site submissions are refused')
      }
      const ip = clientAddress(request, server?.requestIP(request)?.address, options.trustProxy)
      const decision = options.publicLimiter.take(ip ?? 'unknown')
      if (!decision.allowed) {
        throw new HttpError(429, 'Too many submissions from this address; try again shortly', undefined, {
          'Retry-After': String(decision.retryAfterSeconds),
        })
      }
      if (!isJsonContentType(request.headers.get('content-type'))) {
        throw new HttpError(415, 'Send the answers as application/json')
      }
      const values = await readJson(request)
      const recorded = submissions.submit(params.id, values, { ip, userAgent: request.headers.get('user-agent') })
      set.status = 201
      return { id: recorded.id, form_id: recorded.formId, submitted_at: formatApiTime(recorded.submittedAt) }
    },
    {
      detail: apiDoc({
        tag: 'Submissions',
        auth: false,
        summary: 'Submit the answer to a form (JSON)',
        description:
          'For custom front ends: the body is the data object itself, field key to value. The same rules as the HTML page apply; the first submission wins.',
        params: { id: 'Form id' },
        body: JsonObject,
        responses: { 201: SubmissionReceipt },
        errors: [403, 404, 409, 410, 413, 415, 422, 429],
      }),
    },
  )
}
