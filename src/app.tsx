/** @jsxImportSource @kitajs/html */
import { html } from '@elysiajs/html'
import { Elysia } from 'elysia'
import stylesheet from '../views/style.css' with { type: 'text' }
import { HomePage } from '../views/HomePage.tsx'
import { STYLESHEET_PATH } from '../views/Layout.tsx'
import type { Config } from './config.ts'
import type { Database } from './db/index.ts'
import { accessLog, requestIdOf } from './lib/access-log.ts'
import { HttpError } from './lib/errors.ts'
import { SECURITY_HEADERS } from './lib/http.ts'
import { createLogger, type Logger } from './lib/log.ts'
import { apiDoc, buildOpenApi } from './lib/openapi.ts'
import { createRateLimiter } from './lib/rate-limit.ts'
import { systemClock, type Clock } from './lib/time.ts'
import { apiAuth } from './modules/auth/index.ts'
import { createAuthService } from './modules/auth/service.ts'
import { createAuthStore } from './modules/auth/store.ts'
import { formRoutes } from './modules/forms/index.ts'
import { createFormService } from './modules/forms/service.ts'
import { createFormStore } from './modules/forms/store.ts'
import { responseRoutes } from './modules/responses/index.ts'
import { createResponseService } from './modules/responses/service.ts'
import { createResponseStore } from './modules/responses/store.ts'
import { submissionRoutes } from './modules/submissions/index.ts'
import { createSubmissionService } from './modules/submissions/service.ts'
import { createSubmissionStore } from './modules/submissions/store.ts'
import { createDeliveryStore } from './modules/webhooks/store.ts'
import { VERSION } from './version.ts'
import { Type } from '@sinclair/typebox'

export interface AppOptions {
  config: Config
  db: Database
  /** Origin of form URLs; a function when it is known only once the server listens. */
  baseUrl: string | (() => string)
  clock?: Clock
  logger?: Logger
}

/** The whole HTTP application, without listening: tests drive it with `app.handle(request)`. */
export function createApp(options: AppOptions) {
  const { config, db } = options
  const clock = options.clock ?? systemClock
  const logger = options.logger ?? createLogger()
  const baseUrl = typeof options.baseUrl === 'string' ? () => options.baseUrl as string : options.baseUrl

  const auth = createAuthService(createAuthStore(db), clock)
  const formStore = createFormStore(db)
  const forms = createFormService(formStore, clock, baseUrl)
  const responses = createResponseService(createResponseStore(db), forms)
  const submissions = createSubmissionService(formStore, createSubmissionStore(db, createDeliveryStore(db)), clock)
  const healthCheck = db.query('SELECT 1')

  const app = new Elysia({ normalize: false })
    .use(accessLog(logger))
    .onRequest(({ set }) => {
      Object.assign(set.headers, SECURITY_HEADERS)
    })
    .onError({ as: 'global' }, ({ code, error, set, request }) => {
      if (error instanceof HttpError) {
        set.status = error.status
        Object.assign(set.headers, error.headers)
        return error.problems ? { detail: error.detail, errors: error.problems } : { detail: error.detail }
      }
      if (code === 'NOT_FOUND') {
        set.status = 404
        return { detail: 'Not found' }
      }
      logger.error('internal error', {
        request_id: requestIdOf(request),
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      })
      set.status = 500
      return { detail: 'Internal server error' }
    })
    // autoDetect's global mapResponse hook empties JSON error bodies raised before routing; pages call html() explicitly.
    .use(html({ autoDetect: false, contentType: 'text/html; charset=utf-8' }))
    .use(apiAuth(auth, createRateLimiter(config.rateLimitPerMinute, clock)))
    .get(
      '/healthz',
      () => {
        healthCheck.get()
        return { status: 'ok' }
      },
      {
        detail: apiDoc({
          tag: 'Operations',
          auth: false,
          summary: 'Health check',
          description: 'Answers 200 when the database answers.',
          responses: { 200: Type.Object({ status: Type.Literal('ok') }) },
        }),
      },
    )
    .get('/', ({ html }) => html(<HomePage version={VERSION} />))
    .get(STYLESHEET_PATH, ({ set }) => {
      set.headers['content-type'] = 'text/css; charset=utf-8'
      set.headers['cache-control'] = 'public, max-age=86400'
      return stylesheet
    })
    .use(formRoutes(forms, baseUrl))
    .use(responseRoutes(responses))
    .use(submissionRoutes(submissions, {
      trustProxy: config.trustProxy,
      publicLimiter: createRateLimiter(config.publicRateLimitPerMinute, clock),
    }))
  // Built on first request, once every route is registered.
  let openApiDocument: object | undefined
  return app.get('/api/v1/openapi.json', () =>
    (openApiDocument ??= buildOpenApi(app.routes, {
      title: 'intake API',
      version: VERSION,
      description: 'Put a typed form in front of a human and get the single answer back.',
    })),
  )
}

export type App = ReturnType<typeof createApp>
