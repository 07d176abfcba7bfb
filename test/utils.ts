/**
 * Test helpers: an in-process app on a fresh database, and requests that read
 * like what an API client sends. Every test drives the public HTTP interface.
 */

import { Database } from 'bun:sqlite'
import { afterEach } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { createIntake, type Intake } from '../src/app.tsx'
import { loadConfig } from '../src/config.ts'
import type { StoreKind } from '../src/db/driver.ts'
import { createLogger } from '../src/lib/log.ts'
import type { BodyPace } from '../src/lib/request-body.ts'
import { createAuthService } from '../src/modules/auth/service.ts'
import type { Resolver } from '../src/modules/webhooks/addresses.ts'
import { openStore, type Store } from '../src/stores.ts'
import { reportFigure } from './figures.ts'
import { freshPostgresDatabase } from './postgres.ts'

export type { Resolver }

export const BASE_URL = 'http://intake.test'

/**
 * The leak sweep's view of the run, and nothing else: test/leak-sweep.ts
 * (preloaded by bunfig.toml) reads it at the end of `bun test` and fails the run
 * if a key or webhook secret reached a log line or a response body. Filled by
 * createTestContext (each context's keys and its captured log lines) and by
 * `readResponse` (each response body, with the Authorization it was sent with).
 * Tests never read it (`send` reads every response through `readResponse`, and
 * so does a helper that sends another way, as security.test.ts's sendRaw does);
 * it changes nothing a test does.
 */
export const seen = {
  contexts: [] as Array<{ keys: string[]; lines: string[] }>,
  onResponse: undefined as ((authorization: string | undefined, body: string) => void) | undefined,
}

/** An id as intake writes it. */
export const ULID_PATTERN = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/
/** A datetime as the API writes it: UTC, milliseconds, no zone suffix. */
export const API_TIME_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/
/** A well-formed id that names nothing. */
export const UNKNOWN_ID = '01ARZ3NDEKTSV4RRFFQ69G5FAV'

/** A clock tests can move: starts now, advances only when told. */
export function testClock(start = Date.now()) {
  let now = start
  const clock = () => now
  return Object.assign(clock, {
    advance(ms: number) {
      now += ms
    },
    set(ms: number) {
      now = ms
    },
  })
}
type TestClock = ReturnType<typeof testClock>

export interface TestContext {
  /** Requests go in through `handle`, as the server sends them (access log included); `routes` for the OpenAPI check. */
  app: { handle: Intake['handle']; routes: Intake['app']['routes'] }
  /** The background work (webhooks, expiry, file sweep): not running until a test starts it. */
  background: Intake['background']
  /** The store the app runs on: SQLite, or PostgreSQL when INTAKE_TEST_STORE=postgres. */
  store: Store
  /** The SQLite database itself, for what only SQLite has (files, WAL, pragmas); undefined on PostgreSQL. */
  sqlite: Database | undefined
  /**
   * Raw SQL on the test's database, for what no API shows (file chunks, rows
   * as stored, a row as an older version wrote it). Written in SQL that SQLite
   * and PostgreSQL both accept, `?` for each parameter; cast counts and sums
   * to INTEGER (PostgreSQL's bigint comes back as text).
   */
  sql(text: string, ...params: unknown[]): Promise<Array<Record<string, any>>>
  /** A valid key of the account "default". */
  key: string
  clock: TestClock
  /** Every log line the app wrote, parsed. */
  logs: Array<Record<string, unknown>>
  /** Raw log lines, to search for things that must never be logged. */
  logText: () => string
  /** Creates another key, for the named account (created when new). */
  createKey(account?: string): Promise<{ id: string; key: string }>
  /** Revokes a key by id, as `intake keys revoke` does (over a store of its own, as another process). */
  revokeKey(id: string): Promise<void>
  /**
   * Another server on the same database, as a second instance would be: an
   * app over a store of its own, sharing the clock. Closed with the context.
   */
  anotherServer(): Promise<{ app: TestContext['app']; background: Intake['background']; store: Store }>
  api: ReturnType<typeof apiClient>
  close(): Promise<void>
}

export interface TestContextOptions {
  /** Stands in for DNS when a test blocks private webhook targets. */
  resolver?: Resolver
  /** How slow a request body may arrive (shortened, so a test need not wait 30 s). */
  bodyPace?: BodyPace
  /** The store, for tests of one store only (several servers share only PostgreSQL); TEST_STORE when not given. */
  store?: StoreKind
  /** The origin intake is served at (BASE_URL when not given): `https://...` for what only https does. */
  baseUrl?: string
}

/** Which store the in-process suite runs on: `INTAKE_TEST_STORE=postgres` (with INTAKE_TEST_DATABASE_URL) for PostgreSQL. */
export const TEST_STORE: StoreKind = process.env.INTAKE_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite'

/** An app on a fresh database, with settings as environment variables (SERVICE_*) on top of test defaults. */
export async function createTestContext(
  env: Record<string, string> = {},
  options: TestContextOptions = {},
): Promise<TestContext> {
  const dir = mkdtempSync(join(tmpdir(), 'intake-test-'))
  let database: { url: string; drop(): Promise<void> } | undefined
  let storeSettings: Record<string, string>
  const storeKind = options.store ?? TEST_STORE
  if (storeKind === 'postgres') {
    const baseUrl = process.env.INTAKE_TEST_DATABASE_URL
    if (!baseUrl)
      throw new Error(
        'INTAKE_TEST_STORE=postgres needs INTAKE_TEST_DATABASE_URL (scripts/postgres-cluster.sh start prints one)',
      )
    // Pooled: a closed context's database is emptied and given to the next (test/postgres.ts).
    database = await freshPostgresDatabase(baseUrl)
    storeSettings = { SERVICE_DATABASE_URL: database!.url }
  } else {
    storeSettings = { SERVICE_DB_PATH: join(dir, 'intake.db') }
  }
  const config = loadConfig({ ...storeSettings, SERVICE_RATE_LIMIT: '0', SERVICE_PUBLIC_RATE_LIMIT: '0', ...env })
  // Two connections: Bun opens a pool's every connection at its first query, and a context needs few.
  const store = await openStore(config, { poolSize: 2 })
  const sqlite = storeKind === 'sqlite' ? new Database(config.dbPath, { strict: true }) : undefined
  sqlite?.exec('PRAGMA busy_timeout = 5000')
  // One connection: Bun opens a pool's every connection at its first query (ten by default, 50 ms).
  const postgres = database ? new SQL(database.url, { max: 1 }) : undefined
  const sql = async (text: string, ...params: unknown[]) => {
    if (sqlite) return sqlite.query(text).all(...(params as any[])) as Array<Record<string, any>>
    let n = 0
    return [
      ...(await postgres!.unsafe(
        text.replace(/\?/g, () => `$${++n}`),
        params,
      )),
    ] as Array<Record<string, any>>
  }
  const clock = testClock()
  const lines: string[] = []
  const logger = createLogger((line) => lines.push(line))
  const servedAt = options.baseUrl ?? BASE_URL
  const intake = createIntake({
    config,
    store,
    baseUrl: servedAt,
    clock,
    logger,
    resolver: options.resolver,
    bodyPace: options.bodyPace,
  })
  const { background } = intake
  const app = { handle: intake.handle, routes: intake.app.routes }
  // Keys a test makes or revokes go over a store of their own, as `intake keys` does from another process,
  // opened when a test first asks (most never do: a connection costs 20 ms on PostgreSQL). The first key
  // is made before the app has seen any, over the app's own store.
  let keysStore: Promise<Store> | undefined
  let otherProcess: ReturnType<typeof createAuthService> | undefined
  const asAnotherProcess = async () =>
    (otherProcess ??= createAuthService(await (keysStore ??= openStore(config, { poolSize: 1 })), clock))
  const keys: string[] = []
  seen.contexts.push({ keys, lines })
  const remember = (created: { id: string; key: string }) => {
    keys.push(created.key)
    return { id: created.id, key: created.key }
  }
  const createKey = async (account = 'default') => remember(await (await asAnotherProcess()).createKey(account))
  const otherServers: Array<{ background: Intake['background']; store: Store }> = []
  const anotherServer = async () => {
    const otherStore = await openStore(config, { poolSize: 2 })
    const other = createIntake({
      config,
      store: otherStore,
      baseUrl: servedAt,
      clock,
      logger,
      resolver: options.resolver,
      bodyPace: options.bodyPace,
    })
    const server = {
      app: { handle: other.handle, routes: other.app.routes },
      background: other.background,
      store: otherStore,
    }
    otherServers.push(server)
    return server
  }
  const { key } = remember(await createAuthService(store, clock).createKey())
  return {
    app,
    background,
    store,
    sqlite,
    sql,
    key,
    clock,
    get logs() {
      return lines.map((line) => JSON.parse(line))
    },
    logText: () => lines.join('\n'),
    createKey,
    revokeKey: async (id) => void (await (await asAnotherProcess()).revokeKey(id)),
    anotherServer,
    api: apiClient(app, key),
    async close() {
      await background.stop()
      for (const other of otherServers) {
        await other.background.stop()
        await other.store.close()
      }
      await (await keysStore)?.close()
      sqlite?.close()
      await postgres?.close()
      await store.close()
      await database?.drop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * Makes every call the app makes to its store fail as an unexpected error
 * would (not a lost connection, which is a 503): for the 500 path.
 */
export function failEveryStoreCall(store: Store): void {
  const fail = async () => {
    throw new Error('the store failed unexpectedly (a test made it)')
  }
  for (const part of [
    store.forms,
    store.responses,
    store.deliveries,
    store.keys,
    store.submissions,
  ] as unknown as Array<Record<string, unknown>>) {
    for (const name of Object.keys(part)) part[name] = fail
  }
  Object.assign(store, { transaction: fail, stagedTransaction: fail, ping: fail })
}

/**
 * For a test file whose tests each make their own context (settings of their
 * own, a stub resolver): `create` makes one that is closed after the test;
 * `cleanups` (receivers, sockets, a fetch guard) run before that, last added
 * first, so no attempt is left hanging when the app closes.
 */
export function contextsPerTest() {
  const contexts: TestContext[] = []
  const cleanups: Array<() => unknown> = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
    for (const context of contexts.splice(0)) await context.close()
  })
  return {
    cleanups,
    async create(env: Record<string, string> = {}, options: TestContextOptions = {}): Promise<TestContext> {
      const context = await createTestContext(env, options)
      contexts.push(context)
      return context
    },
  }
}

/** A stand-in for DNS that records every name asked; names it does not know fail the lookup. */
export function stubResolver(answers: Record<string, string[]>) {
  const asked: string[] = []
  const resolver: Resolver = async (hostname) => {
    asked.push(hostname)
    const found = answers[hostname]
    if (!found) throw new Error(`stub resolver: unexpected lookup of ${hostname}`)
    return found
  }
  return { resolver, asked }
}

/** Waits until `condition` holds; fails the test with `what` (and the state) when it does not in `ms`. */
export async function until(
  condition: () => boolean | Promise<boolean>,
  ms: number,
  what: string,
  state?: () => unknown,
): Promise<void> {
  const deadline = Date.now() + ms
  for (;;) {
    if (await condition()) return
    if (Date.now() > deadline) {
      const last = state ? `\n  last seen: ${JSON.stringify(await state())}` : ''
      throw new Error(`gave up after ${ms} ms waiting for: ${what}${last}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** The access log line is written after the response is handed over: let that happen. */
/** A promise whose settling can be seen without awaiting it. */
export function track<T>(promise: Promise<T>) {
  const state = { settled: false, promise }
  promise.then(
    () => (state.settled = true),
    () => (state.settled = true),
  )
  return state
}

export const logsWritten = () => new Promise((resolve) => setImmediate(resolve))

/** Only a hang takes this long for a process to refuse a key another revoked (CONTRACT 10 says a second: check:bounds). */
export const REVOCATION_HANG_MS = 10_000

/**
 * Waits, after `t.revokeKey` (a revocation by another process), until the app
 * has heard of it: on SQLite, a turn of the event loop (the next request is
 * refused); on PostgreSQL, until `isRefused` (a request with the key) says so.
 * How long that took is reported for bench/check-bounds.ts.
 */
export async function revocationHeard(isRefused: () => Promise<boolean>, what: string): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve))
  if (TEST_STORE === 'sqlite') return
  const startedAt = performance.now()
  while (!(await isRefused())) {
    if (performance.now() - startedAt > REVOCATION_HANG_MS)
      throw new Error(`a key another process revoked was still accepted after ${REVOCATION_HANG_MS} ms`)
    await Bun.sleep(5)
  }
  reportFigure('revocation heard by another server (ms)', what, performance.now() - startedAt)
}

export interface TestResponse<T = any> {
  status: number
  headers: Headers
  /** Parsed JSON, or the raw text when the body is not JSON. */
  body: T
  text: string
}

type Handler = { handle(request: Request): Promise<Response> }

/**
 * Sends one request through the app. FormData and URLSearchParams bodies go as
 * a browser sends them (multipart, urlencoded); strings and bytes as they are;
 * anything else as JSON.
 */
export async function send(
  app: Handler,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; key?: string | null } = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.key) headers.authorization ??= `Bearer ${options.key}`
  let body: string | Uint8Array | FormData | URLSearchParams | undefined
  if (
    options.body instanceof FormData ||
    options.body instanceof URLSearchParams ||
    options.body instanceof Uint8Array
  ) {
    body = options.body
  } else if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
    headers['content-type'] ??= 'application/json'
  }
  const response = await app.handle(new Request(`${BASE_URL}${path}`, { method, headers, body }))
  return readResponse(response, headers.authorization)
}

/**
 * Reads a response the app gave: its body parsed as JSON (or kept as text), and
 * handed to the leak sweep with the Authorization the request carried.
 */
export async function readResponse(response: Response, authorization: string | undefined): Promise<TestResponse> {
  const text = await response.text()
  seen.onResponse?.(authorization, text)
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: response.status, headers: response.headers, body, text }
}

/** Requests authenticated with `key`, the way an API client makes them. */
export function apiClient(app: Handler, key: string) {
  const call = (method: string) => (path: string, body?: unknown, headers?: Record<string, string>) =>
    send(app, method, `/api/v1${path}`, { body, headers, key })
  return {
    get: call('GET'),
    post: call('POST'),
    patch: call('PATCH'),
    delete: call('DELETE'),
    /** Creates a form from `validForm()` with `overrides`; fails the test unless it is created. */
    async createForm(overrides: Record<string, unknown> = {}) {
      const res = await send(app, 'POST', '/api/v1/forms', { body: validForm(overrides), key })
      if (res.status !== 201) throw new Error(`form not created: ${res.status} ${res.text}`)
      return res.body as { id: string; url: string; status: string; context: unknown; expires_at: string | null }
    },
  }
}

/** What a human (or a custom front end) sends: POST /f/<id> with a JSON object. */
export const submit = (app: Handler, formId: string, data: unknown, headers: Record<string, string> = {}) =>
  send(app, 'POST', `/f/${formId}`, { body: data, headers })

/** What the page sends: a form post of field key to text (urlencoded, or multipart when given FormData). */
export const postForm = (
  app: Handler,
  formId: string,
  fields: Record<string, string> | Array<[string, string]> | FormData,
  headers: Record<string, string> = {},
) =>
  send(app, 'POST', `/f/${formId}`, {
    body: fields instanceof FormData ? fields : new URLSearchParams(fields),
    headers,
  })

/** The page a person opens: GET /f/<id>. */
export const openPage = (app: Handler, formId: string, headers: Record<string, string> = {}) =>
  send(app, 'GET', `/f/${formId}`, { headers })

/** A minimal valid create body. */
export function validForm(overrides: Record<string, unknown> = {}) {
  return {
    title: 'Travel preferences',
    fields: [{ key: 'name', type: 'text', label: 'Your name', required: true }],
    ...overrides,
  }
}

/** One field of each type with typical config, and answers that satisfy them. */
export const EVERY_TYPE_FIELDS = [
  { key: 'name', type: 'text', label: 'Name', required: true, config: { max_length: 50 } },
  { key: 'notes', type: 'textarea', label: 'Notes', config: { rows: 3 } },
  { key: 'email', type: 'email', label: 'Email' },
  { key: 'guests', type: 'number', label: 'Guests', config: { min: 1, max: 10, step: 1 } },
  { key: 'meal', type: 'select', label: 'Meal', config: { options: ['fish', { value: 'veg', label: 'Vegetarian' }] } },
  { key: 'agree', type: 'checkbox', label: 'I agree', required: true },
  { key: 'day', type: 'date', label: 'Day', config: { min: '2026-01-01', max: '2026-12-31' } },
  { key: 'photo', type: 'file', label: 'Photo', config: { accept: 'image/*', max_size: 1024 } },
]

export const EVERY_TYPE_ANSWERS = {
  name: 'Ada',
  notes: 'Line one\nLine two',
  email: 'ada@example.com',
  guests: 3,
  meal: 'veg',
  agree: true,
  day: '2026-06-01',
}

/** An entry of a form's delivery log, as GET /api/v1/forms/<id>/deliveries lists it. */
export interface Delivery {
  id: string
  event: string
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  last_status_code: number | null
  last_error: string | null
  next_attempt_at: string | null
  delivered_at: string | null
  created_at: string
}

/**
 * Watches the event loop while `work` runs: a timer that should fire every
 * millisecond, and the longest gap between its firings. A request that holds
 * the loop for 80 ms shows as a stall of about 80 ms (CONTRACT 13 allows 50).
 */
export async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stallMs: number }> {
  let last = performance.now()
  let stallMs = 0
  const timer = setInterval(() => {
    const now = performance.now()
    stallMs = Math.max(stallMs, now - last)
    last = now
  }, 1)
  try {
    const result = await work()
    const now = performance.now()
    stallMs = Math.max(stallMs, now - last)
    return { result, stallMs }
  } finally {
    clearInterval(timer)
  }
}

/**
 * The uploaded files of a database migrated from intake 0.1.0, as 0.1.0 kept
 * them (bytes in `content`), read back from their chunks (migration 3); and
 * the largest chunk seen.
 */
export function filesAsFirstStored(db: Database): { files: Array<Record<string, unknown>>; largestChunk: number } {
  let largestChunk = 0
  const files = db
    .query<Record<string, unknown> & { file_id: string }, []>('SELECT * FROM response_files ORDER BY rowid')
    .all()
    .map(({ file_id, content: _emptied, ...file }) => {
      const chunks = db
        .query<{ bytes: Uint8Array }, [string]>('SELECT bytes FROM file_chunks WHERE file_id = ? ORDER BY seq')
        .all(file_id)
      for (const chunk of chunks) largestChunk = Math.max(largestChunk, chunk.bytes.byteLength)
      return { ...file, content: new Uint8Array(Buffer.concat(chunks.map((chunk) => chunk.bytes))) }
    })
  return { files, largestChunk }
}
