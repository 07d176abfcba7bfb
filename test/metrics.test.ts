/**
 * Prometheus metrics (CONTRACT 15): the real server with
 * SERVICE_METRICS_LISTEN, driven over HTTP as clients would, then scraped as
 * Prometheus would, the text judged by Prometheus's own parser (promtool).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, loadConfig } from '../src/config.ts'
import { createLogger, type StdoutWriter } from '../src/lib/log.ts'
import { type RunningServer, startServer } from '../src/server.ts'
import { operatingBlock } from './doc-blocks.ts'
import { type FreezingProxy, startFreezingProxy } from './freezing-proxy.ts'
import { promtoolProblems, type Sample, samplesOf, sampleValue } from './metrics-text.ts'
import { freshPostgresDatabase } from './postgres.ts'
import { POSTGRES, PROMTOOL, PROMTOOL_PATH, skipWithout, TEST_DATABASE_URL } from './prerequisites.ts'

const skipPromtool = skipWithout(PROMTOOL)
const KEY = `svc_live_${'ab'.repeat(24)}`
const FORM = { title: 'Dinner', fields: [{ key: 'name', type: 'text', label: 'Your name', required: true }] }
const cleanups: Array<() => unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const quietStdout: StdoutWriter = { line() {}, print() {}, writeNow() {} }

/** intake as `intake serve` runs it, on a free port, with metrics on a second free port. */
async function serve(env: Record<string, string>): Promise<RunningServer> {
  const dir = mkdtempSync(join(tmpdir(), 'intake-metrics-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const config = loadConfig({
    SERVICE_PORT: '0',
    SERVICE_METRICS_LISTEN: '127.0.0.1:0',
    // A stop here is the test's cleanup, not a restart behind a proxy: no drain.
    SERVICE_DRAIN_SECONDS: '0',
    SERVICE_API_KEY: KEY,
    ...(env.SERVICE_DATABASE_URL ? {} : { SERVICE_DB_PATH: join(dir, 'intake.db') }),
    ...env,
  })
  const server = await startServer(
    config,
    quietStdout,
    createLogger(() => {}),
  )
  cleanups.push(() => server.stop())
  return server
}

const api = (server: RunningServer, method: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })

async function scrape(server: RunningServer): Promise<{ text: string; samples: Sample[] }> {
  const response = await fetch(`${server.metricsUrl}/metrics`)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toStartWith('text/plain; version=0.0.4')
  const text = await response.text()
  if (!skipPromtool) expect(await promtoolProblems(text)).toBe('')
  return { text, samples: samplesOf(text) }
}

async function until(condition: () => Promise<boolean>, what: string, ms = 10_000) {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for: ${what}`)
    await Bun.sleep(50)
  }
}

describe('SERVICE_METRICS_LISTEN', () => {
  test('is HOST:PORT, off when unset, and a bad value says what it must be', () => {
    expect(loadConfig({}).metricsListen).toBeUndefined()
    expect(loadConfig({ SERVICE_METRICS_LISTEN: '127.0.0.1:9464' }).metricsListen).toEqual({
      host: '127.0.0.1',
      port: 9464,
    })
    expect(loadConfig({ SERVICE_METRICS_LISTEN: '[::1]:9464' }).metricsListen).toEqual({ host: '::1', port: 9464 })
    for (const bad of [':9464', '9464', '127.0.0.1', '127.0.0.1:70000', 'http://127.0.0.1:9464'])
      expect(() => loadConfig({ SERVICE_METRICS_LISTEN: bad })).toThrow(
        new ConfigError(
          `SERVICE_METRICS_LISTEN must be HOST:PORT like 127.0.0.1:9464 ([::1]:9464 for IPv6; 0.0.0.0:9464 for every address), got "${bad}"`,
        ),
      )
  })
})

describe('GET /metrics on its own listener', () => {
  let server: RunningServer
  let receiver: ReturnType<typeof Bun.serve>
  let formId = ''
  let before: Sample[]
  let after: { text: string; samples: Sample[] }

  beforeAll(async () => {
    receiver = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(null, { status: 204 }) })
    cleanups.push(() => receiver.stop(true))
    server = await serve({})
    before = (await scrape(server)).samples
    const created = await api(server, 'POST', '/api/v1/forms', { ...FORM, callback_url: receiver.url.href })
    expect(created.status).toBe(201)
    formId = ((await created.json()) as { id: string }).id
    expect((await api(server, 'GET', `/api/v1/forms/${formId}`)).status).toBe(200)
    expect((await api(server, 'GET', '/api/v1/forms/01ARZ3NDEKTSV4RRFFQ69G5FAV')).status).toBe(404)
    expect((await fetch(`${server.url}/f/${formId}`)).status).toBe(200)
    expect((await fetch(`${server.url}/no/such/${formId}`)).status).toBe(404)
    expect((await fetch(`${server.url}/nothing`)).status).toBe(404)
    const answered = await fetch(`${server.url}/f/${formId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ada' }),
    })
    expect(answered.status).toBe(201)
    await until(
      async () =>
        sampleValue((await scrape(server)).samples, 'intake_webhook_attempts_total', { result: 'delivered' }) === 1,
      'the webhook delivered',
    )
    after = await scrape(server)
  })

  test('counts requests under their route templates, never an id', () => {
    const count = (route: string, method: string, status: string) =>
      sampleValue(after.samples, 'intake_http_requests_total', { route, method, status })
    expect(count('/api/v1/forms', 'POST', '201')).toBe(1)
    expect(count('/api/v1/forms/{id}', 'GET', '200')).toBe(1)
    expect(count('/api/v1/forms/{id}', 'GET', '404')).toBe(1)
    expect(count('/f/{id}', 'GET', '200')).toBe(1)
    expect(count('/f/{id}', 'POST', '201')).toBe(1)
    // Paths no route takes are one label: clients cannot grow the label set.
    expect(count('unmatched', 'GET', '404')).toBe(2)
    expect(after.text).not.toContain(formId)
    expect(after.text).not.toContain('/nothing')
  })

  test('histograms are cumulative, end in +Inf and agree with their count', () => {
    const buckets = after.samples.filter(
      (s) =>
        s.name === 'intake_http_request_duration_seconds_bucket' &&
        s.labels.route === '/api/v1/forms/{id}' &&
        s.labels.method === 'GET',
    )
    expect(buckets.length).toBeGreaterThan(5)
    const bounds = buckets.map((s) => Number(s.labels.le === '+Inf' ? Infinity : s.labels.le))
    expect(bounds).toEqual([...bounds].sort((a, b) => a - b))
    expect(bounds.at(-1)).toBe(Infinity)
    const counts = buckets.map((s) => s.value)
    expect(counts).toEqual([...counts].sort((a, b) => a - b))
    expect(counts.at(-1)).toBe(
      sampleValue(after.samples, 'intake_http_request_duration_seconds_count', {
        route: '/api/v1/forms/{id}',
        method: 'GET',
      })!,
    )
    expect(counts.at(-1)).toBe(2)
  })

  test('forms by status, answers, deliveries and their seconds follow what happened', () => {
    for (const status of ['active', 'completed', 'cancelled', 'expired'])
      expect(sampleValue(before, 'intake_forms', { status })).toBe(0)
    expect(sampleValue(after.samples, 'intake_forms', { status: 'completed' })).toBe(1)
    expect(sampleValue(after.samples, 'intake_forms', { status: 'active' })).toBe(0)
    expect(sampleValue(before, 'intake_responses_total')).toBe(0)
    expect(sampleValue(after.samples, 'intake_responses_total')).toBe(1)
    expect(sampleValue(after.samples, 'intake_webhook_attempts_total', { result: 'failed' })).toBe(0)
    expect(sampleValue(after.samples, 'intake_webhook_delivery_seconds_count')).toBe(1)
    expect(sampleValue(after.samples, 'intake_webhook_delivery_seconds_sum')).toBeLessThan(10)
  })

  test('a created form moves intake_forms{status="active"} at the next scrape', async () => {
    expect((await api(server, 'POST', '/api/v1/forms', FORM)).status).toBe(201)
    const { samples } = await scrape(server)
    expect(sampleValue(samples, 'intake_forms', { status: 'active' })).toBe(1)
  })

  test('the gauges of this process and the standard process_* metrics are there', () => {
    expect(sampleValue(after.samples, 'intake_database_up')).toBe(1)
    expect(sampleValue(after.samples, 'intake_event_waiters')).toBe(0)
    expect(sampleValue(after.samples, 'intake_upload_budget_bytes_in_use')).toBe(0)
    expect(sampleValue(after.samples, 'intake_webhook_deliveries_pending')).toBe(0)
    expect(sampleValue(after.samples, 'process_cpu_seconds_total')).toBeGreaterThan(0)
    expect(sampleValue(after.samples, 'process_resident_memory_bytes')).toBeGreaterThan(0)
    expect(sampleValue(after.samples, 'process_start_time_seconds')).toBeGreaterThan(0)
    const names = new Set(after.samples.map((s) => s.name.replace(/_(bucket|sum|count)$/, '')))
    expect([...names].filter((name) => !name.startsWith('process_')).sort()).toEqual([
      'intake_database_up',
      'intake_event_waiters',
      'intake_forms',
      'intake_http_request_duration_seconds',
      'intake_http_requests_total',
      'intake_responses_total',
      'intake_upload_budget_bytes_in_use',
      'intake_webhook_attempts_total',
      'intake_webhook_deliveries_pending',
      'intake_webhook_delivery_seconds',
    ])
  })

  test('a long-poll in progress is an event waiter', async () => {
    const waiting = api(server, 'GET', '/api/v1/events?after=latest&wait=5')
    await until(
      async () => sampleValue((await scrape(server)).samples, 'intake_event_waiters') === 1,
      'the long-poll counted as waiting',
    )
    expect((await waiting).status).toBe(200)
  }, 15_000)

  test('only GET /metrics there, and never /metrics on the public listener', async () => {
    expect((await fetch(`${server.metricsUrl}/`)).status).toBe(404)
    expect((await fetch(`${server.metricsUrl}/metrics/x`)).status).toBe(404)
    expect((await fetch(`${server.metricsUrl}/api/v1/forms`)).status).toBe(404)
    expect((await fetch(`${server.metricsUrl}/metrics`, { method: 'POST' })).status).toBe(405)
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404)
  })

  test('stopping the server closes the metrics listener too', async () => {
    const other = await serve({})
    const url = `${other.metricsUrl}/metrics`
    expect((await fetch(url)).status).toBe(200)
    await other.stop()
    expect(fetch(url)).rejects.toThrow()
  })
})

test.skipIf(skipPromtool)("monitoring.md's alert rules are valid rules on these metrics' names", async () => {
  const rules = operatingBlock('alert-rules')
  for (const name of ['intake_http_requests_total', 'intake_webhook_attempts_total', 'intake_database_up'])
    expect(rules).toContain(name)
  const dir = mkdtempSync(join(tmpdir(), 'intake-rules-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  await Bun.write(join(dir, 'intake.rules.yml'), rules)
  const check = Bun.spawnSync([PROMTOOL_PATH, 'check', 'rules', join(dir, 'intake.rules.yml')])
  expect(`${check.stdout}${check.stderr}`).toContain('SUCCESS: 3 rules found')
  expect(check.exitCode).toBe(0)
})

describe.skipIf(skipWithout(POSTGRES))('intake_database_up with a PostgreSQL server that stops answering', () => {
  let proxy: FreezingProxy
  let server: RunningServer

  beforeAll(async () => {
    const database = await freshPostgresDatabase(TEST_DATABASE_URL, { migrated: false })
    cleanups.push(() => database.drop().catch(() => {}))
    proxy = await startFreezingProxy(database.url)
    cleanups.push(() => proxy.stop())
    server = await serve({ SERVICE_DATABASE_URL: proxy.url })
    cleanups.push(() => proxy.thaw())
  })

  test('is 1, then 0 while frozen (the scrape still answers, without the database counts), then 1 again', async () => {
    expect(sampleValue((await scrape(server)).samples, 'intake_database_up')).toBe(1)
    proxy.freeze()
    const { samples } = await scrape(server)
    expect(sampleValue(samples, 'intake_database_up')).toBe(0)
    expect(sampleValue(samples, 'intake_forms', { status: 'active' })).toBeUndefined()
    expect(sampleValue(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0)
    proxy.thaw()
    await until(
      async () => sampleValue((await scrape(server)).samples, 'intake_database_up') === 1,
      'intake_database_up 1 after the thaw',
      20_000,
    )
  }, 40_000)
})
