/**
 * Property-based fuzzing (fast-check) of every JSON endpoint and both
 * submission paths, in-process through `app.handle`: the world the fuzz-*.test.ts
 * files share.
 *
 * Every request any property sends goes through `call`, which checks what must
 * hold for every response (no 5xx, no exception out of app.handle, errors are
 * JSON with a string `detail` or an HTML page with the CONTRACT 6 headers, no
 * CORS, pages without script) and remembers every state change it saw, so that
 * `checkWorld` can compare the service with a model afterwards: statuses and
 * their transitions, one response per completed form and none otherwise, the
 * accounts' isolation, the database holding exactly the forms the API created,
 * and no API key or webhook secret in any body, header or log line.
 *
 * Each property has its own subject; a dimension that finds a bug gets a
 * property of its own (lone surrogates, HEAD, trailing slashes, /mcp errors,
 * JSON Schema lengths), so one bug does not stop the others from being explored.
 *
 * Reproduce a failure: FUZZ_SEED=<seed> FUZZ_RUNS=<runs> bun test test/fuzz-<part>.test.ts
 * (the seed is in every test name; fast-check prints the counterexample and its path).
 * FUZZ_STATS=1 prints, after each property, how often each route answered each status.
 */
import { expect } from 'bun:test'
import fc from 'fast-check'
import { webhookSecret } from '../src/modules/forms/service.ts'
import { CANONICAL_ULID, CSP, must, STATUSES, type Status, settings, show } from './fuzz-json.ts'
import { checkPageSafety } from './fuzz-requests.ts'
import {
  BASE_URL,
  createTestContext,
  EVERY_TYPE_ANSWERS,
  EVERY_TYPE_FIELDS,
  type TestContext,
  ULID_PATTERN,
} from './utils.ts'

// ---------------------------------------------------------------- the world: a service, its accounts, a model

export interface Tracked {
  id: string
  account: 'owner' | 'other'
  status: Status
  expiresAt: number | null
  deleted: boolean
  /** Status last read through the API, for the transition check. */
  seen: Status
  /** The 201 that created it (not a replay) has been seen. */
  original: boolean
}

export interface World {
  t: TestContext
  keys: { owner: string; other: string; observer: string; revoked: string }
  forms: Map<string, Tracked>
  /** Fixtures: forms in every state, created before the properties run. */
  fx: {
    active: string[]
    hooked: string
    completed: string
    completedResponse: string
    hookedCompleted: string
    hookedResponse: string
    delivery: string
    cancelled: string
    expired: string
    deleted: string
    otherForm: string
  }
  /** Long hex runs seen in any response body, header or log line: where a key or secret would show. */
  hexRuns: Set<string>
  requests: number
  /**
   * Forms under concurrent requests: their answers arrive in any order, not
   * the order they committed in, so a PATCH heard to leave one "active" may
   * have committed before a cancel heard earlier.
   */
  raced: Set<string>
}

const LEGAL: Record<Status, Status[]> = {
  active: ['active', 'completed', 'cancelled', 'expired'],
  completed: ['completed'],
  cancelled: ['cancelled'],
  expired: ['expired'],
}
const parseApiTime = (text: unknown) => (typeof text === 'string' ? Date.parse(`${text}Z`) : null)
/** The status the model expects now: an active form past its expiry is expired. */
export function modelStatus(w: World, form: Tracked): Status {
  if (form.status === 'active' && form.expiresAt !== null && form.expiresAt <= w.t.clock()) return 'expired'
  return form.status
}

function collectHex(w: World, text: string) {
  for (const match of text.toLowerCase().matchAll(/[0-9a-f]{40,}/g)) {
    // Padding ("aaaa...") is split off: a key or secret never repeats one character 12 times in a row.
    for (const piece of match[0].split(/(?:([0-9a-f])\1{11,})+/)) if (piece && piece.length >= 40) w.hexRuns.add(piece)
  }
}

function accountOf(w: World, authorization: string | null): 'owner' | 'other' | undefined {
  if (authorization === null) return undefined
  if (authorization.includes(w.keys.owner)) return 'owner'
  if (authorization.includes(w.keys.other)) return 'other'
  return undefined
}

function canonicalFromPath(segment: string): string | undefined {
  let decoded: string
  try {
    decoded = decodeURIComponent(segment)
  } catch {
    return undefined
  }
  return ULID_PATTERN.test(decoded.toUpperCase()) ? decoded.toUpperCase() : undefined
}

function transition(w: World, id: string, status: unknown, expiresAt: unknown, where: string) {
  const form = w.forms.get(id)
  must(form, `${where}: a state change of a form nobody created through the API: ${id}`)
  must(STATUSES.includes(status as Status), `${where}: status ${show(status)}`)
  const before = modelStatus(w, form)
  if (w.raced.has(id) && status === 'active' && before !== 'active') return
  must(LEGAL[before].includes(status as Status), `${where}: illegal transition ${before} -> ${String(status)} of ${id}`)
  form.status = status as Status
  if (expiresAt !== undefined) form.expiresAt = parseApiTime(expiresAt)
}

export interface Call {
  method: string
  path: string
  headers?: Record<string, string>
  /** Shorthand for a valid bearer key. */
  as?: 'owner' | 'other' | 'observer'
  body?: string | Uint8Array | FormData | URLSearchParams
}
export interface Answer {
  status: number
  headers: Headers
  text: string
  bytes: Uint8Array
  body: any
  where: string
}

/**
 * Sends one request through app.handle and checks what every response owes:
 * no 5xx, no exception, errors as JSON with `detail` or as a page with the
 * CONTRACT 6 headers. Remembers state changes and every long hex run it saw.
 */
export async function call(w: World, c: Call): Promise<Answer> {
  const headers = new Headers()
  for (const [name, value] of Object.entries(c.headers ?? {})) headers.set(name, value)
  if (c.as) headers.set('authorization', `Bearer ${w.keys[c.as]}`)
  // Bun turns methods it does not know into GET: ask it which method this is before adding a body.
  const method = new Request(`${BASE_URL}${c.path}`, { method: c.method }).method
  const hasBody = c.body !== undefined && method !== 'GET' && method !== 'HEAD'
  const request = new Request(`${BASE_URL}${c.path}`, { method: c.method, headers, body: hasBody ? c.body : undefined })
  const where = `${c.method} ${c.path.length > 200 ? `${c.path.slice(0, 200)}...` : c.path} (headers ${show(Object.fromEntries(headers), 400)})`
  let response: Response
  let bytes: Uint8Array
  try {
    response = await w.t.app.handle(request)
    bytes = new Uint8Array(await response.arrayBuffer())
  } catch (error) {
    throw new Error(
      `${where}: an exception escaped app.handle: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    )
  }
  w.requests++
  if (STATS) {
    const route = new URL(request.url).pathname.replace(
      /\/(?:f|forms|responses|deliveries)\/[^/]+/g,
      (m) => `${m.slice(0, m.indexOf('/', 1) + 1)}:id`,
    )
    const key = `${request.method} ${route.length > 60 ? `${route.slice(0, 60)}...` : route} ${response.status}`
    STATS.set(key, (STATS.get(key) ?? 0) + 1)
  }
  const text = new TextDecoder().decode(bytes)
  let body: any
  try {
    body = JSON.parse(text)
  } catch {}
  const answer: Answer = {
    status: response.status,
    headers: response.headers,
    text,
    bytes,
    body,
    where: `${where} -> ${response.status} ${show(text, 300)}`,
  }
  collectHex(w, text)
  for (const [name, value] of response.headers) collectHex(w, `${name}: ${value}`)
  checkResponse(request, answer)
  track(w, request, answer)
  return answer
}

function checkResponse(request: Request, res: Answer) {
  const at = res.where
  const method = request.method
  const path = new URL(request.url).pathname
  const type = res.headers.get('content-type') ?? ''
  const html = /^text\/html/i.test(type)
  must(res.status >= 200 && res.status < 500, `${at}: status ${res.status}`)
  must(!res.headers.has('access-control-allow-origin'), `${at}: a CORS header`)
  if (html) {
    must(type === 'text/html; charset=utf-8', `${at}: page content-type ${type}`)
    must(
      res.headers.get('content-security-policy') === CSP,
      `${at}: page CSP ${show(res.headers.get('content-security-policy'))}`,
    )
    must(res.headers.get('x-content-type-options') === 'nosniff', `${at}: page without nosniff`)
    must(res.headers.get('referrer-policy') === 'no-referrer', `${at}: page without Referrer-Policy: no-referrer`)
    must(res.headers.get('cache-control') === 'no-store', `${at}: page without Cache-Control: no-store`)
    if (method !== 'HEAD') checkPageSafety(res.text, at)
  }
  if (path.startsWith('/api/')) must(!html, `${at}: an HTML answer under /api/`)
  const sentType = request.headers.get('content-type')
  if (path.startsWith('/f/') && method === 'GET' && sentType === null)
    must(html, `${at}: the page path answered without a page`)
  if (
    path.startsWith('/f/') &&
    method === 'POST' &&
    sentType !== null &&
    /^(application\/x-www-form-urlencoded|multipart\/form-data)\s*(;|$)/i.test(sentType)
  ) {
    must(html || res.status === 303, `${at}: a form post answered without a page`)
  }
  if (res.status === 303)
    must(/^\/f\/[0-9A-Z]{26}$/.test(res.headers.get('location') ?? ''), `${at}: 303 to ${res.headers.get('location')}`)
  if (res.status >= 400 && method !== 'HEAD' && !html) {
    must(/^application\/(?:[\w.+-]+\+)?json/i.test(type), `${at}: an error with content-type ${show(type)}`)
    must(
      typeof res.body === 'object' && res.body !== null && !Array.isArray(res.body),
      `${at}: an error body that is not a JSON object`,
    )
    const jsonRpc = path === '/mcp' && res.body.jsonrpc === '2.0'
    if (jsonRpc) must(typeof res.body.error?.message === 'string', `${at}: a JSON-RPC error without message`)
    else
      must(typeof res.body.detail === 'string' && res.body.detail.length > 0, `${at}: an error without a string detail`)
    if (res.status === 422 && !jsonRpc) {
      must(Array.isArray(res.body.errors) && res.body.errors.length > 0, `${at}: a 422 without errors`)
      for (const e of res.body.errors)
        must(
          typeof e?.path === 'string' && (e.path === '' || e.path.startsWith('/')) && typeof e.message === 'string',
          `${at}: a malformed error ${show(e)}`,
        )
    }
    if (res.status === 401)
      must(res.headers.get('www-authenticate') === 'Bearer', `${at}: 401 without WWW-Authenticate: Bearer`)
  }
  if (res.status === 429) must(res.headers.has('retry-after'), `${at}: 429 without Retry-After`)
}

/** Every state change the service reports, applied to the model (and checked to be legal). */
function track(w: World, request: Request, res: Answer) {
  const path = new URL(request.url).pathname
  const account = accountOf(w, request.headers.get('authorization'))
  if (request.method === 'POST' && /^\/api\/v1\/forms\/?$/.test(path) && res.status === 201) {
    const id = res.body?.id
    must(typeof id === 'string' && CANONICAL_ULID.test(id), `${res.where}: created form id ${show(id)}`)
    must(account, `${res.where}: a form created without a valid key`)
    const known = w.forms.get(id)
    const replayed = res.headers.get('idempotent-replayed') === 'true'
    must(
      replayed || res.headers.get('idempotent-replayed') === null,
      `${res.where}: Idempotent-Replayed ${res.headers.get('idempotent-replayed')}`,
    )
    if (known) {
      must(
        known.account === account && (replayed || !known.original),
        `${res.where}: a second 201 for ${id} that is not a replay`,
      )
      if (!replayed) known.original = true
    } else {
      // A replay may be answered before the request that created the form: it waited for that one's commit, not its answer.
      must(replayed || res.body.status === 'active', `${res.where}: a new form that is not active`)
      w.forms.set(id, {
        id,
        account,
        status: 'active',
        expiresAt: parseApiTime(res.body.expires_at),
        deleted: false,
        seen: 'active',
        original: !replayed,
      })
    }
  }
  if (request.method === 'PATCH' && res.status === 200 && /^\/api\/v1\/forms\/[^/]+\/?$/.test(path)) {
    transition(w, res.body?.id, res.body?.status, res.body?.expires_at, res.where)
  }
  const deleted = /^\/api\/v1\/forms\/([^/]+)\/?$/.exec(path)
  if (request.method === 'DELETE' && deleted && res.status === 204) {
    const id = canonicalFromPath(deleted[1]!)
    const form = id && w.forms.get(id)
    must(
      form && !form.deleted && form.account === account,
      `${res.where}: deleted a form that was not the caller's (or already gone)`,
    )
    form.deleted = true
  }
  if (request.method === 'POST' && /^\/f\/[^/]+\/?$/.test(path) && (res.status === 201 || res.status === 303)) {
    const id = res.status === 201 ? res.body?.form_id : res.headers.get('location')?.slice(3)
    const form = typeof id === 'string' ? w.forms.get(id) : undefined
    must(form && !form.deleted, `${res.where}: a submission recorded for an unknown form ${show(id)}`)
    must(
      modelStatus(w, form) === 'active',
      `${res.where}: an answer recorded for a form that was ${modelStatus(w, form)}`,
    )
    transition(w, form.id, 'completed', undefined, res.where)
  }
}

export async function createWorld(env: Record<string, string> = {}): Promise<World> {
  const t = await createTestContext({ SERVICE_TRUST_PROXY: 'true', ...env })
  const other = await t.createKey('other')
  const observer = await t.createKey('observer')
  const revoked = await t.createKey('owner-revoked')
  await t.revokeKey(revoked.id)
  const w: World = {
    t,
    keys: { owner: t.key, other: other.key, observer: observer.key, revoked: revoked.key },
    forms: new Map(),
    fx: {} as World['fx'],
    hexRuns: new Set(),
    raced: new Set(),
    requests: 0,
  }
  // The form that expires first: 1 minute, then the clock moves 2.
  const expired = await create(w, {
    title: 'Soon gone',
    fields: EVERY_TYPE_FIELDS,
    expires_in: '1m',
    context: { secret: 'ctx' },
  })
  t.clock.advance(120_000)
  const active = [
    await create(w, {
      title: 'Every type',
      fields: EVERY_TYPE_FIELDS,
      context: { ticket: 'T-1', nested: { a: [1, 2] } },
    }),
    await create(w, { title: 'Every type, no expiry', fields: EVERY_TYPE_FIELDS, expires_in: null }),
    await create(w, {
      title: 'Text only <b>&amp;</b>',
      fields: [{ key: 'name', type: 'text', label: 'Name "quoted"' }],
    }),
  ]
  const hooked = await create(w, {
    title: 'Hooked',
    fields: EVERY_TYPE_FIELDS,
    callback_url: 'http://127.0.0.1:9/hook',
    callback_metadata: { run: 1 },
  })
  const completed = await create(w, { title: 'Answered', fields: EVERY_TYPE_FIELDS, context: { step: 2 } })
  const hookedCompleted = await create(w, {
    title: 'Answered with a hook',
    fields: EVERY_TYPE_FIELDS,
    callback_url: 'http://127.0.0.1:9/hook',
  })
  const cancelled = await create(w, { title: 'Called off', fields: EVERY_TYPE_FIELDS, context: { keep: true } })
  const deleted = await create(w, { title: 'Gone', fields: EVERY_TYPE_FIELDS })
  const otherForm = await create(w, { title: 'Not yours', fields: EVERY_TYPE_FIELDS }, 'other')
  const r1 = await call(w, {
    method: 'POST',
    path: `/f/${completed}`,
    body: JSON.stringify(EVERY_TYPE_ANSWERS),
    headers: { 'content-type': 'application/json' },
  })
  const r2 = await call(w, {
    method: 'POST',
    path: `/f/${hookedCompleted}`,
    body: JSON.stringify(EVERY_TYPE_ANSWERS),
    headers: { 'content-type': 'application/json' },
  })
  const c = await call(w, {
    method: 'PATCH',
    path: `/api/v1/forms/${cancelled}`,
    as: 'owner',
    body: '{"status":"cancelled"}',
  })
  const d = await call(w, { method: 'DELETE', path: `/api/v1/forms/${deleted}`, as: 'owner' })
  const deliveries = await call(w, { method: 'GET', path: `/api/v1/forms/${hookedCompleted}/deliveries`, as: 'owner' })
  expect([r1.status, r2.status, c.status, d.status, deliveries.status]).toEqual([201, 201, 200, 204, 200])
  expect(deliveries.body).toHaveLength(1)
  w.fx = {
    active,
    hooked,
    completed,
    completedResponse: r1.body.id,
    hookedCompleted,
    hookedResponse: r2.body.id,
    delivery: deliveries.body[0].id,
    cancelled,
    expired,
    deleted,
    otherForm,
  }
  await checkWorld(w)
  return w
}

async function create(w: World, body: unknown, as: 'owner' | 'other' = 'owner'): Promise<string> {
  const res = await call(w, { method: 'POST', path: '/api/v1/forms', as, body: JSON.stringify(body) })
  if (res.status !== 201) throw new Error(`fixture not created: ${res.where}`)
  return res.body.id
}

/** A fresh form of every field type, for properties that use one up. */
export async function freshForm(w: World, extra: Record<string, unknown> = {}, as: 'owner' | 'other' = 'owner') {
  return create(w, { title: 'Fresh', fields: EVERY_TYPE_FIELDS, ...extra }, as)
}

const snapshotPrototypes = () => ({
  object: Object.getOwnPropertyNames(Object.prototype).sort().join(),
  array: Object.getOwnPropertyNames(Array.prototype).sort().join(),
  func: Object.getOwnPropertyNames(Function.prototype).sort().join(),
})
const PROTOTYPES = snapshotPrototypes()

/**
 * The invariants, through the API (the database read-only where the API cannot
 * show it): statuses and transitions, one response per completed form and
 * none otherwise, isolation of accounts, no form the API did not report, no
 * key or webhook secret anywhere, prototypes untouched.
 */
async function checkWorld(w: World) {
  expect(snapshotPrototypes()).toEqual(PROTOTYPES)
  for (const probe of [{}, [], Object.create(Object.prototype)] as any[]) {
    for (const name of ['polluted', 'isAdmin', 'x', 'a', 'y', 'n', 'status', 'title'])
      must(!(name in probe), `a prototype polluted with ${name}`)
  }

  const responseCounts = new Map<string, number>()
  for (const row of await w.t.sql('SELECT form_id, CAST(count(*) AS INTEGER) AS n FROM responses GROUP BY form_id')) {
    responseCounts.set(row.form_id, row.n)
  }
  const dbForms = (await w.t.sql('SELECT id, status FROM forms')) as Array<{ id: string; status: string }>
  const live = [...w.forms.values()].filter((f) => !f.deleted)
  expect(dbForms.map((f) => f.id).sort()).toEqual(live.map((f) => f.id).sort())
  for (const row of dbForms) must(STATUSES.includes(row.status as Status), `stored status ${row.status}`)
  for (const [formId, n] of responseCounts)
    must(n === 1 && w.forms.has(formId), `${n} responses stored for form ${formId}`)

  for (const form of w.forms.values()) {
    const got = await call(w, { method: 'GET', path: `/api/v1/forms/${form.id}`, as: form.account })
    if (form.deleted) {
      must(got.status === 404, `deleted form still answers: ${got.where}`)
      must(!responseCounts.has(form.id), `a deleted form keeps its response: ${form.id}`)
      continue
    }
    must(got.status === 200, `own form not readable: ${got.where}`)
    const status = got.body.status as Status
    const expected = modelStatus(w, form)
    must(status === expected, `form ${form.id} is ${status}, the model says ${expected}`)
    must(LEGAL[form.seen].includes(status), `form ${form.id} went ${form.seen} -> ${status}`)
    form.seen = status
    if (status === 'expired') must(got.body.context === null, `an expired form shows its context: ${got.where}`)
    const responses = await call(w, { method: 'GET', path: `/api/v1/forms/${form.id}/responses`, as: form.account })
    must(responses.status === 200 && Array.isArray(responses.body), `responses not listed: ${responses.where}`)
    const want = status === 'completed' ? 1 : 0
    must(responses.body.length === want, `form ${form.id} (${status}) lists ${responses.body.length} responses`)
    must(
      (responseCounts.get(form.id) ?? 0) === want,
      `form ${form.id} (${status}) has ${responseCounts.get(form.id) ?? 0} stored responses`,
    )
    // Another account (and one that never created anything) sees nothing of it.
    const stranger = form.account === 'owner' ? 'other' : 'owner'
    for (const [as, suffix] of [
      [stranger, ''],
      [stranger, '/responses'],
      ['observer', ''],
      ['observer', '/schema'],
      ['observer', '/deliveries'],
    ] as const) {
      const peek = await call(w, { method: 'GET', path: `/api/v1/forms/${form.id}${suffix}`, as })
      must(
        peek.status === 404 && peek.body?.detail === 'Form not found',
        `another account reads ${form.id}${suffix}: ${peek.where}`,
      )
    }
  }

  // Lists: each account sees exactly its own live forms; the observer none.
  for (const as of ['owner', 'other', 'observer'] as const) {
    const ids: string[] = []
    let path: string | undefined = '/api/v1/forms?limit=100'
    while (path) {
      const page: Answer = await call(w, { method: 'GET', path, as })
      must(page.status === 200 && Array.isArray(page.body), `list failed: ${page.where}`)
      ids.push(...page.body.map((f: { id: string }) => f.id))
      const link = page.headers.get('link')
      path = link ? /^<[^>]*?(\/api\/v1\/forms\?[^>]*)>; rel="next"$/.exec(link)?.[1] : undefined
      if (link) must(path, `a malformed Link header ${link}`)
    }
    const want = live
      .filter((f) => f.account === as)
      .map((f) => f.id)
      .sort()
      .reverse()
    expect(ids).toEqual(want)
  }

  // Deliveries: only for forms with a callback that ended as the delivery tells, with a payload that is JSON.
  for (const row of (await w.t.sql('SELECT form_id, event, payload FROM deliveries')) as Array<{
    form_id: string
    event: string
    payload: string
  }>) {
    const form = w.forms.get(row.form_id)
    must(
      form && !form.deleted && row.event === `form.${form.seen}`,
      `a ${row.event} delivery for form ${row.form_id}, which is ${form?.seen}`,
    )
    const payload = JSON.parse(row.payload)
    must(payload.form_id === row.form_id && payload.event === row.event, `delivery payload ${show(payload)}`)
  }

  // The event feed (CONTRACT 12): each account's holds the endings of its own forms, each once, and
  // a deleted form's form.deleted alone; an expired form's form.expired once the sweep has written it.
  for (const as of ['owner', 'other', 'observer'] as const) {
    const events: Array<{ id: string; type: string; form_id: string; payload: Record<string, unknown> }> = []
    let after = ''
    for (;;) {
      const page: Answer = await call(w, { method: 'GET', path: `/api/v1/events?limit=100${after}`, as })
      must(page.status === 200 && Array.isArray(page.body?.events), `feed failed: ${page.where}`)
      if (page.body.events.length === 0) break
      events.push(...page.body.events)
      after = `&after=${page.body.next}`
    }
    must(new Set(events.map((event) => event.id)).size === events.length, `${as}'s feed lists an event twice`)
    const ofForm = new Map<string, string[]>()
    for (const event of events) {
      must(w.forms.get(event.form_id)?.account === as, `${as}'s feed holds ${event.type} of form ${event.form_id}`)
      must(event.payload.form_id === event.form_id, `event payload ${show(event.payload)}`)
      ofForm.set(event.form_id, [...(ofForm.get(event.form_id) ?? []), event.type])
    }
    for (const form of w.forms.values()) {
      if (form.account !== as) continue
      const got = (ofForm.get(form.id) ?? []).join(' ')
      const want = form.deleted
        ? ['form.deleted']
        : form.seen === 'active'
          ? ['']
          : form.seen === 'expired'
            ? ['', 'form.expired']
            : [`form.${form.seen}`]
      must(
        want.includes(got),
        `form ${form.id} (${form.deleted ? 'deleted' : form.seen}) has the events "${got}" in ${as}'s feed`,
      )
    }
  }

  // No key and no webhook secret in any body, header or log line.
  collectHex(w, w.t.logText())
  const secrets = new Map<string, string>()
  for (const [name, key] of Object.entries(w.keys)) secrets.set(key.slice('svc_live_'.length), `the ${name} API key`)
  for (const form of w.forms.values()) {
    for (const [name, key] of Object.entries(w.keys))
      secrets.set(webhookSecret(key, form.id), `the webhook secret of ${form.id} (${name})`)
  }
  for (const row of (await w.t.sql('SELECT id, webhook_secret FROM forms WHERE webhook_secret IS NOT NULL')) as Array<{
    id: string
    webhook_secret: string
  }>) {
    secrets.set(row.webhook_secret, `the stored webhook secret of ${row.id}`)
  }
  for (const run of w.hexRuns) {
    for (const [secret, what] of secrets) must(!run.includes(secret), `${what} appeared in a response or log line`)
  }
  must(!/svc_live_[0-9a-f]{48}/.test(w.t.logText()), 'an API key in the logs')
}

/** FUZZ_STATS=1 prints, after each property, how often each route answered each status. */
const STATS = process.env.FUZZ_STATS ? new Map<string, number>() : undefined

/** One fast-check property over a world, then the invariants. */
export async function holds<T>(w: World, arb: fc.Arbitrary<T>, factor: number, predicate: (value: T) => Promise<void>) {
  STATS?.clear()
  try {
    await fc.assert(fc.asyncProperty(arb, predicate), settings(factor))
  } finally {
    if (STATS)
      console.log(
        [...STATS]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([k, n]) => `  ${String(n).padStart(5)}  ${k}`)
          .join('\n'),
      )
  }
  await checkWorld(w)
}

export const errorPaths = (res: Answer): string[] =>
  Array.isArray(res.body?.errors) ? res.body.errors.map((e: { path: string }) => e.path) : []
export const names = (paths: string[], want: string) => paths.some((p) => p === want || p.startsWith(`${want}/`))
