import { Memoirist } from 'memoirist'
import type { Metric, Registry } from 'prom-client'
import { pathOf } from './http.ts'
import { settledWithin } from './time.ts'

/** What the gauges read when Prometheus scrapes: counts from the database and what this process holds now. */
export interface MetricsSources {
  formsByStatus(): Promise<Map<string, number>>
  pendingDeliveries(): Promise<number>
  databaseUp(): Promise<void>
  eventWaiters(): number
  uploadBudgetBytesInUse(): number
}

/** The statuses a form has (CONTRACT 3): each is a sample, 0 included, so a rate or an alert never sees a gap. */
const FORM_STATUSES = ['active', 'completed', 'cancelled', 'expired'] as const

/** Longest a scrape waits for the database: well inside Prometheus's default scrape timeout of 10 s. */
const DATABASE_READ_MS = 3000

/** Methods a route can have; anything else a client sends is `other`, so clients cannot grow the label set. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/** A request no route takes: one label for every such path. */
const UNMATCHED_ROUTE = 'unmatched'

/** Long-polls answer after up to 60 s: the buckets reach past that, the short ones tell pages from API calls. */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 90]
/** From an answer to its webhook's arrival: one attempt, or retries minutes to hours later. */
const DELIVERY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14_400, 86_400]

/**
 * intake's Prometheus metrics (CONTRACT 15), made only when
 * SERVICE_METRICS_LISTEN is set: without them no request pays anything.
 * Counters count in this process (sum them over instances); gauges of the
 * database are read at scrape time, so every instance reports the same.
 */
export function createMetrics(sources: MetricsSources) {
  // Loaded only when metrics are on: importing prom-client took a start about 25 ms (bench/results.md, issue 28).
  const { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } =
    require('prom-client') as typeof import('prom-client')
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  // The standard process_* ones only: prom-client's nodejs_* add series (and names promtool finds fault with) no one asked for.
  for (const metric of registry.getMetricsAsArray())
    if (!metric.name.startsWith('process_')) registry.removeSingleMetric(metric.name)
  const registers = [registry]

  const requests = requestCounts(registers)
  const responses = new Counter({
    name: 'intake_responses_total',
    help: 'Answers recorded by this process.',
    registers,
  })
  const attempts = new Counter({
    name: 'intake_webhook_attempts_total',
    help: 'Webhook attempts finished, by result (delivered: a 2xx answer; failed: anything else).',
    labelNames: ['result'] as const,
    registers,
  })
  const deliverySeconds = new Histogram({
    name: 'intake_webhook_delivery_seconds',
    help: 'Seconds from an answer until its form.completed webhook was delivered.',
    buckets: DELIVERY_BUCKETS,
    registers,
  })
  for (const result of ['delivered', 'failed']) attempts.inc({ result }, 0)

  new Gauge({
    name: 'intake_forms',
    help: 'Forms by status, every account together (read from the database at scrape time).',
    labelNames: ['status'] as const,
    registers,
    async collect() {
      const counts = await withinDeadline(sources.formsByStatus())
      // A database that does not answer gives no samples rather than stale ones: intake_database_up says why.
      this.reset()
      if (counts) for (const status of FORM_STATUSES) this.set({ status }, counts.get(status) ?? 0)
    },
  })
  new Gauge({
    name: 'intake_webhook_deliveries_pending',
    help: 'Webhook deliveries waiting for an attempt or a retry (read from the database at scrape time).',
    registers,
    async collect() {
      const pending = await withinDeadline(sources.pendingDeliveries())
      this.reset()
      if (pending !== undefined) this.set(pending)
    },
  })
  new Gauge({
    name: 'intake_database_up',
    help: 'Whether the database answered a query at scrape time (1) or not within 3 s (0).',
    registers,
    async collect() {
      const up = await withinDeadline(sources.databaseUp().then(() => true))
      this.set(up ? 1 : 0)
    },
  })
  new Gauge({
    name: 'intake_event_waiters',
    help: 'Requests waiting now on a form or an event feed (long-polls and MCP waits).',
    registers,
    collect() {
      this.set(sources.eventWaiters())
    },
  })
  new Gauge({
    name: 'intake_upload_budget_bytes_in_use',
    help: 'Bytes of SERVICE_UPLOAD_BUDGET held now by request bodies and event feed pages.',
    registers,
    collect() {
      this.set(sources.uploadBudgetBytesInUse())
    },
  })

  return {
    /** Counts one answered request under its route template (never its path). */
    request(route: string, method: string, status: number, seconds: number) {
      requests.count(route, KNOWN_METHODS.has(method) ? method : 'other', status, seconds)
    },
    responseRecorded() {
      responses.inc()
    },
    /** A finished webhook attempt; `secondsSinceAnswer` when it delivered an answer. */
    webhookAttempt(delivered: boolean, secondsSinceAnswer: number | undefined) {
      attempts.inc({ result: delivered ? 'delivered' : 'failed' })
      if (secondsSinceAnswer !== undefined) deliverySeconds.observe(secondsSinceAnswer)
    },
    contentType: registry.contentType,
    /** The exposition text, its database reads made now. */
    text: () => registry.metrics(),
  }
}

export type Metrics = ReturnType<typeof createMetrics>

type Nested<K, V> = Map<string, Map<K, V>>
type MetricValue = { metricName?: string; labels: Record<string, string | number>; value: number }

/** The map under `key` in `outer`, made when missing. */
function inner<K, V>(outer: Nested<K, V>, key: string): Map<K, V> {
  let map = outer.get(key)
  if (map === undefined) outer.set(key, (map = new Map()))
  return map
}

/**
 * The two metrics every request moves, counted in nested maps and arrays that
 * a request only increments: prom-client's labelled inc and observe hash their
 * label objects on every call, about 10 µs of CPU a request in a server,
 * against nothing measurable for these (bench/metrics-cost.ts; bench/results.md,
 * "Issue 28"). prom-client's registry still writes them out, through `get`.
 */
function requestCounts(registers: Registry[]) {
  // route -> method -> status -> requests
  const counts: Nested<string, Map<number, number>> = new Map()
  // route -> method -> [per bucket (not cumulative)..., +Inf], with the sum of seconds
  const timings: Nested<string, { buckets: number[]; sum: number }> = new Map()

  const counter = {
    name: 'intake_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status.',
    type: 'counter',
    values() {
      const values: MetricValue[] = []
      for (const [route, byMethod] of counts)
        for (const [method, byStatus] of byMethod)
          for (const [status, value] of byStatus) values.push({ labels: { route, method, status }, value })
      return values
    },
  }
  const histogram = {
    name: 'intake_http_request_duration_seconds',
    help: 'Seconds from a request until its response was ready (long-polls include their wait).',
    type: 'histogram',
    values() {
      const values: MetricValue[] = []
      for (const [route, byMethod] of timings)
        for (const [method, { buckets, sum }] of byMethod) {
          let cumulative = 0
          buckets.forEach((n, i) => {
            cumulative += n
            const le = i < REQUEST_BUCKETS.length ? REQUEST_BUCKETS[i]! : '+Inf'
            values.push({ metricName: `${histogram.name}_bucket`, labels: { route, method, le }, value: cumulative })
          })
          values.push({ metricName: `${histogram.name}_sum`, labels: { route, method }, value: sum })
          values.push({ metricName: `${histogram.name}_count`, labels: { route, method }, value: cumulative })
        }
      return values
    },
  }
  for (const metric of [counter, histogram]) {
    const written = { ...metric, get: async () => ({ ...metric, values: metric.values(), aggregator: 'sum' }) }
    // The registry reads a metric through its name and get() alone.
    for (const registry of registers) registry.registerMetric(written as unknown as Metric)
  }

  return {
    count(route: string, method: string, status: number, seconds: number) {
      const byStatus = inner(inner(counts, route), method)
      byStatus.set(status, (byStatus.get(status) ?? 0) + 1)
      const byMethod = inner(timings, route)
      let timing = byMethod.get(method)
      if (timing === undefined)
        byMethod.set(method, (timing = { buckets: new Array(REQUEST_BUCKETS.length + 1).fill(0), sum: 0 }))
      let bucket = 0
      while (bucket < REQUEST_BUCKETS.length && seconds > REQUEST_BUCKETS[bucket]!) bucket++
      timing.buckets[bucket]!++
      timing.sum += seconds
    },
  }
}

/** The value, or undefined when the read failed or took longer than DATABASE_READ_MS. */
async function withinDeadline<T>(read: Promise<T>): Promise<T | undefined> {
  let value: T | undefined
  await settledWithin(
    read.then((v) => (value = v)),
    DATABASE_READ_MS,
  )
  return value
}

/**
 * The route template a request matches, as metrics label it
 * (`/api/v1/forms/{id}`), from the app's own routes: never an id, and one
 * label, `unmatched`, for every path no route takes.
 */
export function routeTemplates(routes: ReadonlyArray<{ method: string; path: string }>) {
  const router = new Memoirist<string>()
  for (const { method, path } of routes) {
    router.add(method, path, path.replace(/:([A-Za-z_]\w*)/g, '{$1}'), { ignoreError: true })
  }
  return (request: Request): string => {
    const path = pathOf(request.url)
    const method = request.method === 'HEAD' ? 'GET' : request.method
    return (router.find(method, path) ?? router.find('ALL', path))?.store ?? UNMATCHED_ROUTE
  }
}
