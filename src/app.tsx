/** @jsxImportSource @kitajs/html */

import { Type } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { STYLESHEET } from '../views/assets.ts'
import { HomePage } from '../views/HomePage.tsx'
import { type StatusKind, StatusPage } from '../views/StatusPage.tsx'
import type { Config } from './config.ts'
import { DatabaseUnavailable } from './db/driver.ts'
import { SCHEMA_VERSION as SQLITE_SCHEMA_VERSION } from './db/sqlite/open.ts'
import { pageLanguageOf } from './i18n/index.ts'
import { requestIdOf, requestIds, withAccessLog } from './lib/access-log.ts'
import { HttpError, publicProblem } from './lib/errors.ts'
import { htmlPage, isFormContentType, isJsonContentType, pathOf, SECURITY_HEADERS } from './lib/http.ts'
import { createLogger, type Logger } from './lib/log.ts'
import { createMetrics, type Metrics, routeTemplates } from './lib/metrics.ts'
import { apiDoc, buildOpenApi } from './lib/openapi.ts'
import { addressBlock, createRateLimiter } from './lib/rate-limit.ts'
import { type BodyPace, type BodyReader, closeWhenBodyUnread, createBodyReader } from './lib/request-body.ts'
import { createFormSignals, feedSignal } from './lib/signals.ts'
import { type Clock, systemClock } from './lib/time.ts'
import { type ApiKeyAuth, apiKeyAuth } from './modules/auth/index.ts'
import type { AuthService } from './modules/auth/service.ts'
import { createAuthService } from './modules/auth/service.ts'
import { consoleRoutes } from './modules/console/index.tsx'
import { type ConsoleService, createConsoleService } from './modules/console/service.ts'
import { consoleSession } from './modules/console/session.ts'
import { eventRoutes } from './modules/events/index.ts'
import { createEventService, type EventService } from './modules/events/service.ts'
import { formRoutes } from './modules/forms/index.ts'
import type { FormService } from './modules/forms/service.ts'
import { createFormService } from './modules/forms/service.ts'
import type { FormOfAccount } from './modules/forms/store/index.ts'
import { createFormSweeper } from './modules/forms/sweeper.ts'
import { mcpRoutes } from './modules/mcp/index.ts'
import { MCP_PATH } from './modules/mcp/paths.ts'
import { createFileStorage, type FileStorage } from './modules/responses/files.ts'
import { responseRoutes } from './modules/responses/index.ts'
import type { ResponseService } from './modules/responses/service.ts'
import { createResponseService } from './modules/responses/service.ts'
import { createRenderedPages, type RenderedPages, submissionRoutes } from './modules/submissions/index.tsx'
import { pageFormOf } from './modules/submissions/pages.tsx'
import type { SubmissionService } from './modules/submissions/service.ts'
import { createSubmissionService } from './modules/submissions/service.ts'
import type { Resolver } from './modules/webhooks/addresses.ts'
import { webhookRoutes } from './modules/webhooks/index.ts'
import type { WebhookService } from './modules/webhooks/service.ts'
import { createWebhookService } from './modules/webhooks/service.ts'
import { createDeliveryWorker } from './modules/webhooks/worker.ts'
import type { PostgresStore, Store } from './stores.ts'
import { VERSION } from './version.ts'

export interface IntakeOptions {
  config: Config
  store: Store
  /** Origin of form URLs; a function when it is known only once the server listens. */
  baseUrl: string | (() => string)
  clock?: Clock
  logger?: Logger
  /** How webhook host names are resolved when private targets are blocked (tests stub it). */
  resolver?: Resolver
  /** How slow a request body may arrive before it is cut (tests shorten it). */
  bodyPace?: BodyPace
}

/**
 * Everything intake runs, wired together but not yet running: the HTTP app
 * (tests drive it with `app.handle(request)`), the background loop (started by
 * the server, or by a test), and the in-process signals long-polls wait on.
 */
export function createIntake(options: IntakeOptions) {
  const { config, store } = options
  const clock = options.clock ?? systemClock
  const logger = options.logger ?? createLogger()
  const baseUrl = typeof options.baseUrl === 'string' ? () => options.baseUrl as string : options.baseUrl

  const signals = createFormSignals()
  // Only when they are scraped: otherwise nothing is counted, and no request pays for it.
  let metrics: Metrics | undefined
  const countAttempt = (delivered: boolean, answeredAt: number | null, now: number) =>
    metrics?.webhookAttempt(delivered, delivered && answeredAt !== null ? (now - answeredAt) / 1000 : undefined)
  // Forms other servers changed, and feeds they added to (PostgreSQL): long-polls here wake too.
  store.watchForms((formIds) => (formIds ? formIds.forEach(signals.notify) : signals.notifyAll()))
  store.watchEvents((accountIds) =>
    accountIds ? accountIds.forEach((id) => signals.notify(feedSignal(id))) : signals.notifyAll(),
  )
  const deliveryWorker = createDeliveryWorker({
    store,
    clock,
    logger,
    webhookTimeoutMs: config.webhookTimeoutMs,
    webhookMaxRetries: config.webhookMaxRetries,
    webhookRetryScheduleMs: config.webhookRetryScheduleMs,
    webhookBlockPrivate: config.webhookBlockPrivate,
    resolver: options.resolver,
    onAttempt: config.metricsListen ? countAttempt : undefined,
  })
  const fileStorage = createFileStorage({ store, clock, logger, forgetLapsed: () => submissions.forgetLapsed() })
  const renderedPages = createRenderedPages()
  const bodies = createBodyReader({ budgetBytes: config.uploadBudgetBytes, pace: options.bodyPace })
  const auth = createAuthService(store, clock, logger)
  /** A form changed state, committed with its event: whatever waits on it, or on its account's feed, looks again. */
  const formChanged = (form: FormOfAccount, deliveryQueued: boolean) => {
    renderedPages.forget(form.id)
    signals.notify(form.id)
    signals.notify(feedSignal(form.accountId))
    // Each wake costs the worker a look at the deliveries table: only for a change that queued one.
    if (deliveryQueued) deliveryWorker.wake()
  }
  const formSweeper = createFormSweeper({ store, clock, logger, onExpired: formChanged })
  const forms = createFormService(store, clock, baseUrl, (form, deliveryQueued) => {
    formChanged(form, deliveryQueued)
    // A deleted form's files, and a cancelled form's kept ones, are unclaimed now.
    fileStorage.wake()
  })
  const responses = createResponseService(store, forms, signals, auth)
  const submissions = createSubmissionService(store, clock, baseUrl, (form, deliveryQueued) => {
    metrics?.responseRecorded()
    formChanged(form, deliveryQueued)
  })
  const events = createEventService(store, signals, bodies, auth)
  const webhooks = createWebhookService(store, forms, clock, deliveryWorker.wake)
  const services = { auth, forms, responses, submissions, webhooks, events }
  // From the start of a stop (server.ts): /healthz says so, and no connection is kept for another request.
  let draining = false
  const app = createApp({
    config,
    clock,
    logger,
    baseUrl,
    services,
    users: createConsoleService(store, clock, baseUrl),
    bodies,
    fileStorage,
    renderedPages,
    store,
    draining: () => draining,
  })
  if (config.metricsListen) {
    metrics = createMetrics({
      formsByStatus: () => store.forms.countAllByStatus(),
      pendingDeliveries: () => store.deliveries.countPending(),
      databaseUp: () => store.ping(),
      eventWaiters: () => signals.waiting,
      uploadBudgetBytesInUse: () => bodies.bytesHeld,
    })
  }
  const logged = withAccessLog(
    async (request) => {
      const response = closeWhenBodyUnread(request, transportSecurity(await app.handle(request), baseUrl()))
      if (draining) response.headers.set('connection', 'close')
      return response
    },
    logger,
    metrics && countRequest(metrics, routeTemplates(app.routes)),
  )
  /** Every request goes through here: its url made routable, then the app, with the access log around it. */
  const handle = (request: Request) => logged(withRoutableUrl(request))
  // The work that runs beside requests: webhooks, expiry, and removing files no answer holds.
  const backgroundWork = {
    start() {
      deliveryWorker.start()
      formSweeper.start()
      fileStorage.start()
    },
    wake: deliveryWorker.wake,
    async stop() {
      await Promise.all([deliveryWorker.stop(), formSweeper.stop(), fileStorage.stop()])
    },
    get inFlight() {
      return deliveryWorker.inFlight
    },
  }
  return {
    app,
    handle,
    background: backgroundWork,
    signals,
    metrics,
    /** The stop's first step: /healthz answers 503 draining, every response closes its connection. */
    startDraining() {
      draining = true
    },
  }
}

/** Counts a request under its route template: an Elysia hook would cost every route, and miss the 404s. */
function countRequest(metrics: Metrics, routeOf: (request: Request) => string) {
  return (request: Request, status: number, ms: number) =>
    metrics.request(routeOf(request), request.method, status, ms / 1000)
}

export type Intake = ReturnType<typeof createIntake>

interface AppParts {
  config: Config
  clock: Clock
  logger: Logger
  baseUrl: () => string
  services: {
    auth: AuthService
    forms: FormService
    responses: ResponseService
    submissions: SubmissionService
    webhooks: WebhookService
    events: EventService
  }
  users: ConsoleService
  bodies: BodyReader
  fileStorage: FileStorage
  renderedPages: RenderedPages
  store: Store
  /** True once a stop began: /healthz says draining. */
  draining(): boolean
}

/** The HTTP application: routes over the services, one error handler, security headers, the access log. */
function createApp({
  config,
  clock,
  logger,
  baseUrl,
  services,
  users,
  bodies,
  fileStorage,
  renderedPages,
  store,
  draining,
}: AppParts) {
  const { auth, forms, responses, submissions, webhooks, events } = services
  // Per key, for /api/v1 and /mcp alike: an MCP batch takes one request for each of its messages.
  const apiLimiter = createRateLimiter(config.rateLimitPerMinute, clock)
  const apiKey = apiKeyAuth(auth, apiLimiter)

  const app = new Elysia({ normalize: false })
    .headers(SECURITY_HEADERS)
    .use(requestIds())
    .onError({ as: 'global' }, ({ code, error, set, request }) => {
      let failure: HttpError
      // A database that failed may have committed what was sent (a COMMIT unanswered): the page says only
      // that it may not have been recorded, never that nothing was (the busy page's words).
      let kind: StatusKind | undefined
      if (error instanceof HttpError) failure = error
      else if (error instanceof DatabaseUnavailable) {
        failure = new HttpError(503, 'Database unavailable', undefined, {
          'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS),
        })
        kind = 'error'
      } else if (code === 'NOT_FOUND') failure = new HttpError(404, 'Not found')
      else {
        logger.error('internal error', {
          request_id: requestIdOf(set),
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        })
        failure = new HttpError(500, 'Internal server error')
      }
      set.status = failure.status
      Object.assign(set.headers, failure.headers)
      if (wantsPage(request)) {
        const retryAfter = Number(failure.headers?.['Retry-After']) || undefined
        const form = pageFormOf(request)
        return htmlPage(
          set,
          <StatusPage
            kind={kind ?? pageKind(failure.status)}
            t={pageLanguageOf(request)}
            retryAfterSeconds={retryAfter}
            form={form}
            fileLimits={form?.fileLimits}
          />,
          failure.status,
        )
      }
      return failure.problems
        ? { detail: failure.detail, errors: failure.problems.map(publicProblem) }
        : { detail: failure.detail }
    })
    .get(
      '/healthz',
      async ({ set }) => {
        // Before the database: a stopping server is leaving the rotation whatever the database says.
        if (draining()) {
          set.status = 503
          return { status: 'draining' }
        }
        await store.ping()
        return { status: 'ok' }
      },
      {
        detail: apiDoc({
          tag: 'Operations',
          auth: false,
          summary: 'Health check',
          description:
            'Answers 200 when the database answers, 503 while it does not, and 503 `{"status":"draining"}` from the moment the server is told to stop (SIGTERM) until it exits: a load balancer that probes it takes it out while it still answers.',
          responses: {
            200: Type.Object({ status: Type.Literal('ok') }),
            503: Type.Object({ status: Type.Literal('draining') }, { title: 'Stopping: take it out of rotation' }),
          },
        }),
      },
    )
    .get('/', ({ set }) => htmlPage(set, <HomePage version={VERSION} />))
    .get(STYLESHEET.path, ({ set }) => {
      set.headers['content-type'] = 'text/css; charset=utf-8'
      // The path names the content: it never changes under this URL.
      set.headers['cache-control'] = 'public, max-age=31536000, immutable'
      return STYLESHEET.body
    })
    .use(formRoutes(forms, baseUrl, bodies, apiKey))
    .use(responseRoutes(responses, apiKey))
    .use(webhookRoutes(webhooks, apiKey))
    .use(eventRoutes(events, baseUrl, apiKey))
    .use(mcpRoutes(forms, responses, events, bodies, apiLimiter, apiKey))
    .use(keyedNotFound(apiKey))
    .use(
      config.console
        ? consoleRoutes({
            services,
            users,
            store,
            database: databaseOf(store),
            config,
            clock,
            baseUrl,
            bodies,
            session: consoleSession({ users, store, bodies, baseUrl }),
          })
        : new Elysia(),
    )
    .use(
      submissionRoutes(submissions, {
        trustProxy: config.trustProxy,
        publicLimiter: createRateLimiter(config.publicRateLimitPerMinute, clock, addressBlock),
        bodies,
        fileStorage,
        baseUrl,
        renderedPages,
        clock,
      }),
    )
  // Built on first request, once every route is registered.
  let openApiDocument: object | undefined
  return app.get(
    '/api/v1/openapi.json',
    () =>
      (openApiDocument ??= buildOpenApi(app.routes, {
        title: 'intake API',
        version: VERSION,
        description: 'Put a typed form in front of a human and get the single answer back.',
      })),
  )
}

/** What the console's server page says runs underneath: the kind, where, and the schema this build keeps it at. */
function databaseOf(store: Store) {
  const schemaVersion = store.kind === 'postgres' ? (store as PostgresStore).schemaVersion : SQLITE_SCHEMA_VERSION
  return { kind: store.kind, location: store.location, schemaVersion }
}

/**
 * What no route takes under /api/v1 and /mcp is a 404 for a caller with a
 * key, and the key's refusal for anyone else: a stranger learns not even
 * which routes exist. Routes of these paths win over these (Elysia matches
 * the exact method and path first).
 */
function keyedNotFound(apiKey: ApiKeyAuth) {
  const notFound = () => {
    throw new HttpError(404, 'Not found')
  }
  return (
    new Elysia({ name: 'keyed-not-found' })
      .use(apiKey)
      .all('/api/v1/*', notFound, { apiKey: true })
      // The OpenAPI document is public: any other method on its path is a plain 404.
      .all('/api/v1/openapi.json', notFound)
      .all(MCP_PATH, notFound, { apiKey: true })
      .all(`${MCP_PATH}/*`, notFound, { apiKey: true })
  )
}

/**
 * Under an https base URL every response, errors and 404s included, tells the
 * browser to come back over https only, for a year (CONTRACT 13a). Set here,
 * around the whole app, so no response can miss it. Under http it is not sent:
 * it would pin a name to https that is not served over it.
 */
function transportSecurity(response: Response, baseUrl: string): Response {
  if (baseUrl.startsWith('https:')) response.headers.set('strict-transport-security', 'max-age=31536000')
  return response
}

/** How long a client is asked to wait while the database is away. */
const DATABASE_RETRY_AFTER_SECONDS = 5

/** Stands for the Host of a request whose url is rebuilt: a name reserved never to resolve (RFC 6761). */
const UNROUTABLE_ORIGIN = 'http://invalid'
/** Origins (scheme and Host) known to parse, so an ordinary request is checked without parsing; bounded, as clients choose Host. */
const parsedOrigins = new Set<string>()
const PARSED_ORIGINS_KEPT = 64

/**
 * Makes Elysia route by the request's real path, whatever its Host header says.
 * Elysia takes the path to start at the first "/" from index 11 of the url,
 * which assumes "http://" and a host of 4 characters or more. Bun builds the
 * url by parsing "http://" + Host + target: `Host: x` gives
 * "http://x/zzz/api/v1/forms" (which Elysia reads as /api/v1/forms), and when
 * "http://" + Host does not parse it gives the target as sent, "/../" and all,
 * with or without that prefix (a url no one else can parse either). Only such
 * a url is replaced, by the one Bun makes under a usable Host. It is replaced
 * on the request itself: a new Request would lose the peer address
 * (server.requestIP knows only the original). Afterwards Elysia's path and
 * `pathOf(request.url)`, which the key check and the access log read, are the
 * same, and the url parses.
 */
function withRoutableUrl(request: Request): Request {
  const url = request.url
  const hostStart = url.startsWith('http://') ? 7 : url.startsWith('https://') ? 8 : -1
  const pathStart = hostStart === -1 ? (url.startsWith('/') ? 0 : -1) : url.indexOf('/', hostStart)
  if (hostStart !== -1 && pathStart >= 11) {
    const origin = url.slice(0, pathStart)
    if (parsedOrigins.has(origin)) return request
    if (URL.canParse(origin)) {
      if (parsedOrigins.size >= PARSED_ORIGINS_KEPT) parsedOrigins.clear()
      parsedOrigins.add(origin)
      return request
    }
  }
  const routable =
    URL.parse(UNROUTABLE_ORIGIN + (pathStart === -1 ? '/' : url.slice(pathStart)))?.href ?? `${UNROUTABLE_ORIGIN}/`
  Object.defineProperty(request, 'url', { value: routable })
  return request
}

/**
 * A person's browser, not a program: the form page, form posts, and anything
 * outside the API that asks for HTML. Everything else gets JSON errors.
 */
function wantsPage(request: Request): boolean {
  const path = pathOf(request.url)
  const contentType = request.headers.get('content-type')
  if (
    path.startsWith('/api/') ||
    path === MCP_PATH ||
    path.startsWith(`${MCP_PATH}/`) ||
    isJsonContentType(contentType)
  )
    return false
  // HEAD is GET without the body: the same page headers.
  if (
    path.startsWith('/f/') &&
    (request.method === 'GET' || request.method === 'HEAD' || isFormContentType(contentType))
  )
    return true
  return (request.headers.get('accept') ?? '').includes('text/html')
}

function pageKind(status: number): StatusKind {
  switch (status) {
    case 403:
      return 'cross-site'
    case 404:
      return 'not-found'
    case 409:
      return 'answered'
    case 408:
      return 'too-slow'
    case 413:
      return 'too-large'
    case 429:
      return 'rate-limited'
    case 400:
    case 415:
      return 'unreadable'
    case 503:
      return 'busy'
    default:
      return 'error'
  }
}
