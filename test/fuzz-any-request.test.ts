/**
 * Fuzzing (see test/fuzz-world.ts) GET /f/<id> with any id, and any method, path
 * and headers on the whole app.
 * Reproduce: FUZZ_SEED=<seed> FUZZ_RUNS=<runs> bun test test/fuzz-any-request.test.ts
 */
import { afterAll, beforeAll, describe, test } from 'bun:test'
import fc from 'fast-check'
import { garbageBody, nth, validCreate } from './fuzz-forms.ts'
import { anyJson, hostile, jsonText, must, named, show, TIMEOUT } from './fuzz-json.ts'
import {
  ACCEPTS,
  type Auth,
  anyStrangeId,
  authArb,
  extraHeaders,
  hostileHeader,
  ID_SHAPES,
  type IdShape,
  resolvesAs,
  shapeId,
  strangeId,
} from './fuzz-requests.ts'
import { type Answer, call, createWorld, holds, modelStatus, type World } from './fuzz-world.ts'
import { BASE_URL } from './utils.ts'

// ---------------------------------------------------------------- GET /f/<id>

describe(named('GET /f/<id> with any id'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  const pageScenario = fc.record({
    target: fc.constantFrom('active', 'completed', 'cancelled', 'expired', 'deleted', 'otherForm', 'hooked', 'random'),
    shape: fc.constantFrom(...ID_SHAPES),
    salt: fc.nat(),
    random: strangeId,
    headers: fc.record(
      {
        accept: fc.oneof(fc.constantFrom(...ACCEPTS), hostileHeader),
        'user-agent': hostileHeader,
        'x-forwarded-for': hostileHeader,
        'accept-language': hostileHeader,
        'sec-fetch-site': fc.constantFrom('cross-site', 'same-origin'),
      },
      { requiredKeys: [] },
    ),
    query: fc.array(fc.tuple(fc.constantFrom('__proto__', 'constructor', 'x', 'id'), hostile(8)), { maxLength: 2 }),
  })
  const pagePath = (s: {
    target: string
    shape: IdShape
    salt: number
    random: string
    query: Array<[string, string]>
  }) => {
    const fx = w.fx
    const id =
      s.target === 'random'
        ? undefined
        : s.target === 'active'
          ? nth(fx.active, s.salt)
          : (fx[s.target as keyof World['fx']] as string)
    const segment = id === undefined ? s.random : shapeId(id, s.shape, s.salt)
    const query = new URLSearchParams(s.query.map(([k, v]): [string, string] => [k, v.toWellFormed()]))
    const form = id !== undefined && resolvesAs(s.shape) ? w.forms.get(id) : undefined
    const state = form && !form.deleted ? modelStatus(w, form) : undefined
    return { id, path: `/f/${segment}?${query}`, state }
  }

  test(
    named('GET: the page for every state, a 404 page for everything else, always with the CONTRACT 6 headers'),
    async () => {
      await holds(w, pageScenario, 2, async (s) => {
        const { id, path, state } = pagePath(s)
        const res = await call(w, { method: 'GET', path, headers: s.headers })
        must(/^text\/html/.test(res.headers.get('content-type') ?? ''), `not a page: ${res.where}`)
        const want = state === undefined ? 404 : state === 'active' || state === 'completed' ? 200 : 410
        must(res.status === want, `a ${state ?? 'missing'} form: want ${want}, got ${res.where}`)
        must(res.text.includes('<html lang='), 'a page without lang')
        if (state === 'active')
          must(res.text.includes(`action="/f/${id}"`) && res.text.includes('<form'), 'the active page has no form')
        else must(!res.text.includes('<form'), `a ${state ?? 'missing'} form's page offers a form`)
        must(!res.text.includes('ticket') && !res.text.includes('T-1'), 'the page shows the context')
      })
    },
    TIMEOUT,
  )

  test(
    named('HEAD answers as GET does: same status and the same page headers, no body'),
    async () => {
      await holds(w, pageScenario, 0.5, async (s) => {
        const { path } = pagePath(s)
        const get = await call(w, { method: 'GET', path, headers: s.headers })
        const head = await call(w, { method: 'HEAD', path, headers: s.headers })
        must(head.status === get.status, `HEAD ${head.status} but GET ${get.status}: ${head.where}`)
        must(head.bytes.length === 0, `HEAD with a body: ${head.where}`)
        for (const name of [
          'content-type',
          'content-security-policy',
          'x-content-type-options',
          'referrer-policy',
          'cache-control',
        ]) {
          must(
            head.headers.get(name) === get.headers.get(name),
            `HEAD ${name}: ${show(head.headers.get(name))} but GET ${name}: ${show(get.headers.get(name))} (${head.where})`,
          )
        }
      })
    },
    TIMEOUT,
  )
})

// ---------------------------------------------------------------- anything at all

describe(named('any method, path and headers on the whole app'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  const TEMPLATES = [
    '/api/v1/forms',
    '/api/v1/forms/{id}',
    '/api/v1/forms/{id}/schema',
    '/api/v1/forms/{id}/responses',
    '/api/v1/forms/{id}/responses/{sub}',
    '/api/v1/forms/{id}/responses/{sub}/files/{key}',
    '/api/v1/forms/{id}/deliveries',
    '/api/v1/forms/{id}/deliveries/{sub}/redeliver',
    '/f/{id}',
    '/healthz',
    '/',
    '/mcp',
    '/api/v1/openapi.json',
    '/api/v1',
    '/api',
    '/assets/style.css',
    '/{key}',
    '/api/v1/{key}',
  ]
  type Transform = 'none' | 'trailing' | 'double' | 'upper' | 'semicolon' | 'percent' | 'dotdot'
  const pathArb = (transforms: Transform[]) =>
    fc.record({
      template: fc.constantFrom(...TEMPLATES),
      transform: fc.constantFrom(...transforms),
      target: fc.constantFrom('active', 'completed', 'cancelled', 'expired', 'hooked', 'otherForm', 'random'),
      shape: fc.constantFrom(...ID_SHAPES),
      salt: fc.nat(),
      random: anyStrangeId,
      sub: fc.oneof(fc.constantFrom('own'), anyStrangeId),
      key: fc.oneof(fc.constantFrom('photo', '__proto__', 'constructor', '..', '%2F'), strangeId),
      query: fc.array(
        fc.tuple(
          fc.oneof(
            fc.constantFrom('limit', 'status', 'cursor', '__proto__', 'constructor[prototype][x]', 'wait'),
            hostile(6),
          ),
          fc.oneof(fc.constantFrom('0', '101', 'x', '', 'active'), hostile(6)),
        ),
        { maxLength: 3 },
      ),
    })
  type PathSpec = {
    template: string
    transform: Transform
    target: string
    shape: IdShape
    salt: number
    random: string
    sub: string
    key: string
    query: Array<[string, string]>
  }

  function buildPath(p: PathSpec): string {
    const fx = w.fx
    const id =
      p.target === 'random'
        ? undefined
        : p.target === 'active'
          ? nth(fx.active, p.salt)
          : (fx[p.target as keyof World['fx']] as string)
    const segment = id === undefined ? p.random : shapeId(id, p.shape, p.salt)
    const sub = p.sub === 'own' ? fx.completedResponse : p.sub
    let path = p.template.replace('{id}', segment).replace('{sub}', sub).replace('{key}', p.key)
    switch (p.transform) {
      case 'trailing':
        path = `${path}/`
        break
      case 'double':
        path = path.replace(/\/(?=[^/]*$)/, '//')
        break
      case 'upper':
        path = path.toUpperCase()
        break
      case 'semicolon':
        path = `${path};x=1`
        break
      case 'percent':
        path = path.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`)
        break
      case 'dotdot':
        path = `${path}/../${p.template.split('/')[1] ?? ''}`
        break
      case 'none':
        break
    }
    // A valid wait on an active form would hold the request for real seconds: never sent here.
    const query = p.query
      .filter(([k, v]) => !(k === 'wait' && /^[+-]?\d+$/.test(v)))
      .map(([k, v]) => `${encodeURIComponent(k.toWellFormed())}=${encodeURIComponent(v.toWellFormed())}`)
      .join('&')
    return `${path}${query ? `?${query}` : ''}`
  }

  /** CONTRACT 2 on everything that needs a key: 403 without one, 401 for a bad one, never either for a good one. */
  function checkAuth(path: string, method: string, auth: Auth, res: Answer) {
    const pathname = new URL(`${BASE_URL}${path}`).pathname
    // The OpenAPI document is public under any spelling the router takes as its path (a trailing slash).
    const needsKey =
      (pathname.startsWith('/api/v1/') && pathname.replace(/\/$/, '') !== '/api/v1/openapi.json') || pathname === '/mcp'
    if (!needsKey) return
    // The detail is read from JSON answers; whether an error may be a page at all is checked by `call`.
    const head = method === 'HEAD' || /^text\/html/.test(res.headers.get('content-type') ?? '')
    if (auth.expect === 'none' || auth.expect === '403')
      must(res.status === 403 && (head || res.body?.detail === 'Not authenticated'), `no key: ${res.where}`)
    if (auth.expect === '401')
      must(res.status === 401 && (head || res.body?.detail === 'Invalid API key'), `a bad key: ${res.where}`)
    if (auth.expect === 'any') must(res.status === 401 || res.status === 403, `a garbage Authorization: ${res.where}`)
    if (auth.expect === 'owner' || auth.expect === 'other')
      must(res.status !== 401 && res.status !== 403, `a valid key refused: ${res.where}`)
  }

  test(
    named(
      'every route under every spelling of its path (trailing slash, double slash, case, percent-encoding): never a 5xx',
    ),
    async () => {
      const scenario = fc.record({
        method: fc.constantFrom('GET', 'POST', 'DELETE', 'PATCH', 'HEAD'),
        path: pathArb(['none', 'trailing', 'trailing', 'double', 'upper', 'semicolon', 'percent', 'dotdot']),
        auth: authArb(w.keys),
        body: fc.constantFrom(
          undefined,
          '{}',
          '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
          '{"status":"cancelled"}',
        ),
        accept: fc.constantFrom(undefined, 'application/json, text/event-stream', 'text/html'),
      })
      await holds(w, scenario, 1.5, async (s) => {
        const path = buildPath(s.path)
        const headers: Record<string, string> = { 'content-type': 'application/json' }
        if (s.auth.header !== undefined) headers.authorization = s.auth.header
        if (s.accept) headers.accept = s.accept
        const res = await call(w, { method: s.method, path, headers, body: s.body })
        checkAuth(path, s.method, s.auth, res)
      })
    },
    TIMEOUT,
  )

  test(
    named('errors on /mcp (an API, not a page) are JSON whatever Accept says'),
    async () => {
      const scenario = fc.record({
        method: fc.constantFrom('GET', 'POST', 'DELETE', 'PUT'),
        auth: authArb(w.keys),
        accept: fc.oneof(
          fc.constantFrom(
            ...ACCEPTS,
            'application/json, text/event-stream',
            'text/html, application/json, text/event-stream',
          ),
          hostileHeader,
        ),
        body: fc.oneof(
          fc.constantFrom(
            '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
            '{"jsonrpc":"2.0","id":1,"method":"nope"}',
            '{}',
          ),
          garbageBody,
        ),
        contentType: fc.constantFrom(undefined, 'application/json', 'text/plain'),
      })
      await holds(w, scenario, 0.5, async (s) => {
        const headers: Record<string, string> = { accept: s.accept }
        if (s.contentType) headers['content-type'] = s.contentType
        if (s.auth.header !== undefined) headers.authorization = s.auth.header
        const res = await call(w, { method: s.method, path: '/mcp', headers, body: s.body })
        checkAuth('/mcp', s.method, s.auth, res)
        if (res.status >= 400)
          must(
            /^application\/(?:[\w.+-]+\+)?json/i.test(res.headers.get('content-type') ?? ''),
            `an error from /mcp as ${show(res.headers.get('content-type'))}: ${res.where}`,
          )
      })
    },
    TIMEOUT,
  )

  test(
    named('never a 5xx or an exception; auth as CONTRACT 2; every error JSON with detail or a page'),
    async () => {
      const MCP_BODIES = [
        '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_forms","arguments":{"limit":"x"}}}',
        '{"jsonrpc":"2.0","id":"__proto__","method":"tools/call","params":{"name":"get_form","arguments":{"form_id":"01ARZ3NDEKTSV4RRFFQ69G5FAV"}}}',
        '{"jsonrpc":"2.0","id":1,"method":"__proto__"}',
        '{"jsonrpc":"1.0"}',
        '[]',
      ]
      const scenario = fc.record({
        method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'PROPFIND', 'FOO', 'get'),
        // Trailing slashes are the previous property's subject.
        path: pathArb(['none', 'none', 'none', 'double', 'upper', 'semicolon', 'percent', 'dotdot']),
        auth: authArb(w.keys),
        headers: extraHeaders,
        body: fc.oneof(
          fc.constant(undefined),
          anyJson.map((v) => jsonText(v) as string | Uint8Array | URLSearchParams | FormData),
          garbageBody.map((b) => b as string | Uint8Array | URLSearchParams | FormData),
          validCreate.map((c) => jsonText(c.body) as string | Uint8Array | URLSearchParams | FormData),
          fc.constantFrom(...MCP_BODIES),
          fc
            .array(fc.tuple(hostile(8), hostile(8)))
            .map(
              (e) =>
                new URLSearchParams(e.map(([k, v]): [string, string] => [k.toWellFormed(), v.toWellFormed()])) as
                  | string
                  | Uint8Array
                  | URLSearchParams
                  | FormData,
            ),
          fc.tuple(hostile(8), fc.uint8Array({ maxLength: 50 })).map(([name, bytes]) => {
            const form = new FormData()
            form.append(name.toWellFormed(), new File([bytes], name.toWellFormed()))
            form.append('name', 'Ada')
            return form as string | Uint8Array | URLSearchParams | FormData
          }),
        ),
      })
      await holds(w, scenario, 4, async (s) => {
        const path = buildPath(s.path)
        const headers: Record<string, string> = { ...s.headers }
        if (s.auth.header !== undefined) headers.authorization = s.auth.header
        // A multipart or urlencoded body brings its own content type (and boundary) unless one is given.
        if (s.body instanceof FormData || s.body instanceof URLSearchParams) delete headers['content-type']
        const res = await call(w, { method: s.method, path, headers, body: s.body })
        checkAuth(path, s.method, s.auth, res)
      })
    },
    TIMEOUT,
  )
})
