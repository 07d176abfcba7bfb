/**
 * Fuzzing (see test/fuzz-world.ts) the reads: the list of forms, and a form, its
 * schema, responses and deliveries with any id.
 * Reproduce: FUZZ_SEED=<seed> FUZZ_RUNS=<runs> bun test test/fuzz-reads.test.ts
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { nth, opt } from './fuzz-forms.ts'
import { API_TIME, hostile, must, named, STATUSES, show, TIMEOUT } from './fuzz-json.ts'
import { ACCEPTS, CONTENT_TYPES, ID_SHAPES, resolvesAs, shapeId, strangeId } from './fuzz-requests.ts'
import { call, createWorld, errorPaths, freshForm, holds, modelStatus, type World } from './fuzz-world.ts'

// ---------------------------------------------------------------- GET /api/v1/forms (list)

describe(named('GET /api/v1/forms'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
    for (let i = 0; i < 25; i++) await freshForm(w, { expires_in: i % 5 === 0 ? '1m' : '48h' })
    w.t.clock.advance(61_000)
    for (let i = 0; i < 5; i++) await freshForm(w, {}, 'other')
  })
  afterAll(() => w.t.close())

  test(
    named("any query string: 422 for each invalid parameter, else exactly the model's page"),
    async () => {
      const limit = fc.oneof(
        { weight: 1, arbitrary: fc.constant(undefined) },
        {
          weight: 4,
          arbitrary: fc.integer({ min: 1, max: 100 }).map((n) => ({ v: String(n), ok: true as boolean | undefined })),
        },
        fc
          .constantFrom(
            '0',
            '101',
            '-1',
            '1.5',
            'abc',
            '',
            '1e1',
            'NaN',
            'Infinity',
            '12345678901234567890',
            '0x10',
            ' ',
            '-0',
            '١٠',
            '5 5',
            '99999999999999999999999',
          )
          .map((v) => ({ v, ok: false as boolean | undefined })),
        fc.constantFrom('+5', '05', '007', '+100').map((v) => ({ v, ok: undefined as boolean | undefined })),
        hostile(8)
          .filter((s) => !/^[+-]?\d+$/.test(s))
          .map((v) => ({ v, ok: false as boolean | undefined })),
      )
      const status = fc.oneof(
        { weight: 2, arbitrary: fc.constant(undefined) },
        { weight: 4, arbitrary: fc.constantFrom(...STATUSES).map((v) => ({ v, ok: true })) },
        fc
          .constantFrom('ACTIVE', 'Active', '', 'deleted', 'active ', 'active,completed', '__proto__')
          .map((v) => ({ v, ok: false })),
        hostile(8)
          .filter((s) => !(STATUSES as readonly string[]).includes(s))
          .map((v) => ({ v, ok: false })),
      )
      const cursorArb = fc.oneof(
        { weight: 3, arbitrary: fc.constant(undefined) },
        fc.tuple(fc.nat(), fc.boolean()).map(([n, lower]) => ({ pick: n, lower, v: '', ok: true })),
        fc.ulid().map((v) => ({ pick: -1, lower: false, v, ok: true })),
        fc
          .constantFrom('00000000000000000000000000', '7ZZZZZZZZZZZZZZZZZZZZZZZZZ')
          .map((v) => ({ pick: -1, lower: false, v, ok: true })),
        fc
          .constantFrom(
            '8ZZZZZZZZZZZZZZZZZZZZZZZZZ',
            'OOOOOOOOOOOOOOOOOOOOOOOOOO',
            '01ARZ3NDEKTSV4RRFFQ69G5FA',
            '01ARZ3NDEKTSV4RRFFQ69G5FAVV',
            '',
            'null',
          )
          .map((v) => ({ pick: -1, lower: false, v, ok: false })),
        hostile(30)
          .filter((s) => !/^[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{25}$/.test(s))
          .map((v) => ({ pick: -1, lower: false, v, ok: false })),
      )
      const extras = fc.array(
        fc
          .tuple(
            fc.oneof(
              fc.constantFrom(
                '__proto__',
                'constructor',
                'prototype',
                '__proto__[polluted]',
                'constructor[prototype][polluted]',
                'a[b]',
                'wait',
                'LIMIT',
                'Status',
              ),
              hostile(8),
            ),
            hostile(8),
          )
          .filter(([k]) => !/^(limit|status|cursor)/.test(k.toWellFormed())),
        { maxLength: 4 },
      )
      const scenario = fc.record({
        limit,
        status,
        cursor: cursorArb,
        extras,
        as: fc.constantFrom('owner', 'owner', 'other', 'observer') as fc.Arbitrary<'owner' | 'other' | 'observer'>,
        follow: fc.boolean(),
      })
      await holds(w, scenario, 2, async (s) => {
        const mine = [...w.forms.values()]
          .filter((f) => !f.deleted && f.account === s.as)
          .sort((a, b) => (a.id < b.id ? 1 : -1))
        const all = [...w.forms.keys()].sort()
        let cursor = s.cursor?.v
        if (s.cursor && s.cursor.pick >= 0) cursor = nth(all, s.cursor.pick)
        if (s.cursor?.lower && cursor) cursor = cursor.toLowerCase()
        const params: Array<[string, string]> = [...s.extras]
        if (s.limit) params.push(['limit', s.limit.v])
        if (s.status) params.push(['status', s.status.v])
        if (cursor !== undefined) params.push(['cursor', cursor])
        const query = params
          .map(([k, v]) => `${encodeURIComponent(k.toWellFormed())}=${encodeURIComponent(v.toWellFormed())}`)
          .join('&')
        const res = await call(w, { method: 'GET', path: `/api/v1/forms?${query}`, as: s.as })
        const invalid = [
          s.limit?.ok === false && '/limit',
          s.status?.ok === false && '/status',
          s.cursor?.ok === false && '/cursor',
        ].filter((p): p is string => typeof p === 'string')
        if (invalid.length > 0) {
          must(res.status === 422, `invalid ${invalid.join(', ')}: ${res.where}`)
          for (const p of invalid) must(errorPaths(res).includes(p), `errors do not name ${p}: ${res.where}`)
          return
        }
        if (s.limit?.ok === undefined && s.limit !== undefined && res.status === 422) return
        must(res.status === 200 && Array.isArray(res.body), `a valid list query failed: ${res.where}`)
        const size = s.limit ? Number(s.limit.v) : 20
        const filtered = mine.filter(
          (f) =>
            (s.status ? modelStatus(w, f) === s.status.v : true) &&
            (cursor === undefined || f.id < cursor.toUpperCase()),
        )
        const want = filtered.slice(0, size).map((f) => f.id)
        expect(res.body.map((f: { id: string }) => f.id)).toEqual(want)
        for (const item of res.body) {
          must(
            JSON.stringify(Object.keys(item)) ===
              '["id","title","description","url","status","fields_count","expires_at","created_at"]',
            `list item keys ${Object.keys(item)} (context must never be in a list)`,
          )
          must(item.status === modelStatus(w, w.forms.get(item.id)!), `listed status ${item.status}`)
        }
        const link = res.headers.get('link')
        must(
          Boolean(link) === filtered.length > size,
          `Link header ${show(link)} with ${filtered.length} forms and limit ${size}`,
        )
        if (link && s.follow) {
          const next = /^<http:\/\/intake\.test(\/api\/v1\/forms\?[^>]*)>; rel="next"$/.exec(link)?.[1]
          must(next, `Link ${link}`)
          const page = await call(w, { method: 'GET', path: next, as: s.as })
          expect(page.body.map((f: { id: string }) => f.id)).toEqual(filtered.slice(size, size * 2).map((f) => f.id))
        }
      })
    },
    TIMEOUT,
  )
})

// ---------------------------------------------------------------- GET form / responses / schema / deliveries with random ids

describe(named('GET /api/v1/forms/<id>[/schema|/responses|/deliveries] with any id'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  const WAITS_INVALID = [
    '0',
    '61',
    '-1',
    'abc',
    '1.5',
    '',
    '1e1',
    '99999999999999999999',
    ' 1',
    'NaN',
    'Infinity',
    '0x1',
    '１',
  ]
  const WAITS_VALID = ['1', '01', '60']

  test(
    named('the owner reads its own forms under any spelling of the id; nothing else resolves'),
    async () => {
      const scenario = fc.record({
        target: fc.constantFrom(
          'active',
          'hooked',
          'completed',
          'hookedCompleted',
          'cancelled',
          'expired',
          'deleted',
          'otherForm',
          'random',
          'random',
        ),
        shape: fc.constantFrom(...ID_SHAPES),
        salt: fc.nat(),
        random: strangeId,
        endpoint: fc.constantFrom('form', 'schema', 'responses', 'response', 'file', 'deliveries', 'redeliver'),
        sub: fc.oneof(fc.constantFrom('own', 'own', 'lower'), strangeId),
        fileKey: fc.oneof(fc.constantFrom('photo', 'name', '__proto__', 'constructor', '%2F', '%00'), strangeId),
        wait: opt(
          fc.oneof(
            fc.constantFrom(...WAITS_INVALID).map((v) => ({ v, ok: false })),
            fc.constantFrom(...WAITS_VALID).map((v) => ({ v, ok: true })),
          ),
        ),
        extraQuery: fc.array(
          fc.tuple(fc.constantFrom('__proto__', 'constructor', 'x', 'prototype[polluted]'), hostile(6)),
          { maxLength: 2 },
        ),
        as: fc.constantFrom('owner', 'owner', 'other') as fc.Arbitrary<'owner' | 'other'>,
        headers: fc.record(
          { accept: fc.constantFrom(...ACCEPTS), 'content-type': fc.constantFrom(...CONTENT_TYPES) },
          { requiredKeys: [] },
        ),
      })
      await holds(w, scenario, 2.5, async (s) => {
        const fx = w.fx
        const id =
          s.target === 'random'
            ? undefined
            : s.target === 'active'
              ? nth(fx.active, s.salt)
              : (fx[s.target as keyof World['fx']] as string)
        const segment = id === undefined ? s.random : shapeId(id, s.shape, s.salt)
        const form = id !== undefined && resolvesAs(s.shape) ? w.forms.get(id) : undefined
        const resolves = form !== undefined && !form.deleted && form.account === s.as
        const responseId =
          id === fx.completed ? fx.completedResponse : id === fx.hookedCompleted ? fx.hookedResponse : undefined
        const sub =
          s.sub === 'own'
            ? s.endpoint === 'redeliver'
              ? fx.delivery
              : responseId
            : s.sub === 'lower'
              ? (s.endpoint === 'redeliver' ? fx.delivery : responseId)?.toLowerCase()
              : s.sub
        const subResolves =
          (s.sub === 'own' || s.sub === 'lower') &&
          sub !== undefined &&
          (s.endpoint !== 'redeliver' || id === fx.hookedCompleted)
        const query = new URLSearchParams(s.extraQuery.map(([k, v]): [string, string] => [k, v.toWellFormed()]))
        // A valid wait on an active, unanswered form would hold the request: such a wait is left out.
        const blocks = resolves && form !== undefined && modelStatus(w, form) === 'active'
        if (s.endpoint === 'responses' && s.wait && !(s.wait.ok && blocks)) query.set('wait', s.wait.v)
        const base = `/api/v1/forms/${segment}`
        const path = {
          form: base,
          schema: `${base}/schema`,
          responses: `${base}/responses`,
          response: `${base}/responses/${sub ?? s.random}`,
          file: `${base}/responses/${sub ?? s.random}/files/${s.fileKey}`,
          deliveries: `${base}/deliveries`,
          redeliver: `${base}/deliveries/${sub ?? s.random}/redeliver`,
        }[s.endpoint]
        const res = await call(w, {
          method: s.endpoint === 'redeliver' ? 'POST' : 'GET',
          path: `${path}?${query}`,
          as: s.as,
          headers: s.headers,
        })
        if (s.endpoint === 'responses' && query.has('wait') && s.wait?.ok === false) {
          must(res.status === 422 && errorPaths(res).includes('/wait'), `wait=${s.wait.v}: ${res.where}`)
          return
        }
        if (!resolves) {
          must(res.status === 404 && res.body.detail === 'Form not found', `should be Form not found: ${res.where}`)
          return
        }
        const status = modelStatus(w, form)
        switch (s.endpoint) {
          case 'form':
            must(res.status === 200 && res.body.id === id && res.body.status === status, res.where)
            break
          case 'schema':
            must(
              res.status === 200 &&
                res.body.$schema === 'https://json-schema.org/draft/2020-12/schema' &&
                res.body.additionalProperties === false,
              res.where,
            )
            break
          case 'responses':
            must(
              res.status === 200 && Array.isArray(res.body) && res.body.length === (status === 'completed' ? 1 : 0),
              res.where,
            )
            if (res.body.length === 1) must(res.body[0].id === responseId && res.body[0].form_id === id, res.where)
            break
          case 'response':
            if (subResolves && responseId)
              must(
                res.status === 200 &&
                  res.body.id === responseId &&
                  res.body.form_id === id &&
                  API_TIME.test(res.body.submitted_at),
                res.where,
              )
            else must(res.status === 404 && res.body.detail === 'Response not found', res.where)
            break
          case 'file':
            must(res.status === 404, `no file was uploaded: ${res.where}`)
            break
          case 'deliveries':
            must(
              res.status === 200 && Array.isArray(res.body) && res.body.length === (id === fx.hookedCompleted ? 1 : 0),
              res.where,
            )
            for (const d of res.body)
              must(d.status === 'pending' && d.event === 'form.completed' && d.attempts === 0, `delivery ${show(d)}`)
            break
          case 'redeliver':
            // The background loop is not running: the delivery stays pending, and a pending one is 409.
            if (subResolves) must(res.status === 409, res.where)
            else must(res.status === 404 && res.body.detail === 'Delivery not found', res.where)
            break
        }
      })
    },
    TIMEOUT,
  )
})
