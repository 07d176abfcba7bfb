/**
 * Fuzzing (see test/fuzz-world.ts) the JSON answers: POST /f/<id> with JSON, and
 * generated forms taking generated answers.
 * Reproduce: FUZZ_SEED=<seed> FUZZ_RUNS=<runs> bun test test/fuzz-answers.test.ts
 */
import { afterAll, beforeAll, describe, test } from 'bun:test'
import fc from 'fast-check'
import {
  ABSENT,
  answerFor,
  answersArb,
  FIELD_KEYS,
  few,
  NOT_JSON,
  readsAsJson,
  schemaProblems,
} from './fuzz-answer-values.ts'
import { garbageBody, opt, validCreate } from './fuzz-forms.ts'
import {
  API_TIME,
  anyJson,
  CANONICAL_ULID,
  deepRaw,
  holdsLoneSurrogate,
  hostile,
  type J,
  jsonText,
  must,
  named,
  Obj,
  PROTO_KEYS,
  parsed,
  pointer,
  show,
  storableObject,
  TIMEOUT,
} from './fuzz-json.ts'
import { ACCEPTS, CONTENT_TYPES, hostileHeader, type IdShape, shapeId, strangeId } from './fuzz-requests.ts'
import { type Answer, call, createWorld, errorPaths, freshForm, holds, modelStatus, type World } from './fuzz-world.ts'

describe(named('POST /f/<id> with JSON'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  test(
    named('a submission is recorded exactly when every value is valid; the form then takes no other'),
    async () => {
      const scenario = fc.record({
        answers: answersArb,
        extras: few(
          fc.tuple(
            fc
              .oneof(fc.constantFrom(...PROTO_KEYS, '_x', '_csrf', '', 'Name', 'name ', 'toString'), hostile(10))
              .filter((k) => !FIELD_KEYS.includes(k)),
            anyJson,
          ),
        ),
        order: fc.nat(),
        hooked: fc.boolean(),
        context: opt(storableObject),
        contentType: fc.constantFrom(
          'application/json',
          'application/json; charset=utf-8',
          'APPLICATION/JSON',
          'application/vnd.intake+json',
          'application/json;foo=bar',
        ),
        xff: opt(hostileHeader),
        ua: opt(hostileHeader),
        fetchSite: fc.constantFrom(undefined, 'same-origin', 'same-site', 'none', 'cross-site'),
        idShape: fc.constantFrom('canonical', 'canonical', 'lower', 'mixed', 'percent') as fc.Arbitrary<IdShape>,
        salt: fc.nat(),
        again: anyJson,
      })
      await holds(w, scenario, 2, async (s) => {
        const extra: Record<string, unknown> = {}
        if (s.hooked) extra.callback_url = 'http://127.0.0.1:9/hook'
        if (s.context) extra.context = parsed(s.context)
        const id = await freshForm(w, extra)
        const entries: Array<[string, J]> = []
        for (const key of FIELD_KEYS) {
          const a = s.answers[key]!
          if (a.value !== ABSENT) entries.push([key, a.value])
        }
        entries.push(...s.extras)
        const rotated = entries.map((_, i) => entries[(i + s.order) % entries.length]!)
        const text = jsonText(new Obj(rotated))
        const headers: Record<string, string> = { 'content-type': s.contentType }
        if (s.xff !== undefined) headers['x-forwarded-for'] = s.xff
        if (s.ua !== undefined) headers['user-agent'] = s.ua
        if (s.fetchSite) headers['sec-fetch-site'] = s.fetchSite
        const res = await call(w, { method: 'POST', path: `/f/${shapeId(id, s.idShape, s.salt)}`, body: text, headers })
        const invalid = FIELD_KEYS.filter((k) => !s.answers[k]!.ok)
          .map((k) => `/${k}`)
          .concat(s.extras.map(([k]) => pointer(k)))
        if (s.fetchSite === 'cross-site') {
          must(res.status === 403, `cross-site: ${res.where}`)
          return
        }
        if (holdsLoneSurrogate(text)) {
          // Text that is not valid Unicode is refused whole, at the first place it is found.
          must(
            res.status === 422 && res.body.errors.some((e: { message: string }) => /surrogate/.test(e.message)),
            `a lone surrogate not refused: ${res.where}`,
          )
          return
        }
        if (invalid.length > 0) {
          must(res.status === 422, `invalid ${invalid.join(' ')} not refused: ${res.where} body ${show(text, 1000)}`)
          for (const p of invalid) must(errorPaths(res).includes(p), `errors ${show(errorPaths(res))} do not name ${p}`)
          const after = await call(w, { method: 'GET', path: `/api/v1/forms/${id}/responses`, as: 'owner' })
          must(after.body.length === 0, 'a refused submission left a response')
          return
        }
        must(res.status === 201, `a valid submission refused: ${res.where} body ${show(text, 1000)}`)
        must(
          res.body.form_id === id && CANONICAL_ULID.test(res.body.id) && API_TIME.test(res.body.submitted_at),
          `receipt ${show(res.body)}`,
        )
        const list = await call(w, { method: 'GET', path: `/api/v1/forms/${id}/responses`, as: 'owner' })
        must(list.body.length === 1, list.where)
        const response = list.body[0]
        const want: Record<string, unknown> = {}
        for (const key of FIELD_KEYS) {
          const stored = s.answers[key]!.stored
          if (stored !== ABSENT) want[key] = stored
        }
        must(
          JSON.stringify(response.data) === JSON.stringify(want),
          `stored ${show(response.data)}, want ${show(want)}`,
        )
        must(
          response.id === res.body.id && response.submitted_at === res.body.submitted_at,
          'the response differs from the receipt',
        )
        must(
          JSON.stringify(response.context) === JSON.stringify(s.context ? parsed(s.context) : null),
          'the response context differs',
        )
        const sentXff = s.xff === undefined ? null : new Headers({ x: s.xff }).get('x')
        const last = sentXff?.split(',').at(-1)?.trim()
        must(
          response.metadata.ip === (last ? last.slice(0, 64).replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, '$1') : null),
          `metadata.ip ${show(response.metadata.ip)} for X-Forwarded-For ${show(sentXff)}`,
        )
        must(
          response.metadata.user_agent === (s.ua === undefined ? null : new Headers({ x: s.ua }).get('x')),
          'metadata.user_agent differs',
        )
        const deliveries = await call(w, { method: 'GET', path: `/api/v1/forms/${id}/deliveries`, as: 'owner' })
        must(deliveries.body.length === (s.hooked ? 1 : 0), deliveries.where)
        if (s.hooked) {
          const [row] = (await w.t.sql('SELECT payload FROM deliveries WHERE form_id = ?', id)) as Array<{
            payload: string
          }>
          const payload = JSON.parse(row!.payload)
          must(
            JSON.stringify(payload.data) === JSON.stringify(want) &&
              JSON.stringify(payload.context) === JSON.stringify(response.context),
            'the webhook payload differs from the response',
          )
        }
        // The form is answered: any other submission is 409, whatever it holds, unless the body
        // cannot be read as JSON text at all (a lone surrogate in it), which is 422 wherever it is sent.
        const againText = jsonText(s.again)
        const again = await call(w, {
          method: 'POST',
          path: `/f/${id}`,
          body: againText,
          headers: { 'content-type': 'application/json' },
        })
        must(again.status === (holdsLoneSurrogate(againText) ? 422 : 409), `a second submission: ${again.where}`)
      })
    },
    TIMEOUT,
  )

  test(
    named('bodies of any shape, closed and unknown forms, content types: the statuses of CONTRACT 6'),
    async () => {
      const scenario = fc.record({
        target: fc.constantFrom('active', 'completed', 'cancelled', 'expired', 'deleted', 'random'),
        random: strangeId,
        body: fc.oneof(
          anyJson.map((v) => ({ text: jsonText(v) as string | Uint8Array, object: v instanceof Obj })),
          garbageBody.map((t) => ({ text: t, object: false })),
          deepRaw().map((r) => ({ text: r.text as string | Uint8Array, object: r.text.startsWith('{') })),
          fc.constant({ text: `{"name":"${'x'.repeat(1024 * 1024)}"}` as string | Uint8Array, object: true }),
        ),
        contentType: fc.oneof(fc.constantFrom(...CONTENT_TYPES), fc.constant(undefined)),
        accept: opt(fc.constantFrom(...ACCEPTS)),
      })
      await holds(w, scenario, 1.5, async (s) => {
        const fx = w.fx
        const id =
          s.target === 'random' ? undefined : s.target === 'active' ? await freshForm(w) : (fx[s.target] as string)
        const headers: Record<string, string> = {}
        if (s.contentType !== undefined) headers['content-type'] = s.contentType
        if (s.accept !== undefined) headers.accept = s.accept
        const form = id === undefined ? undefined : w.forms.get(id)
        const state = form && !form.deleted ? modelStatus(w, form) : undefined
        const res = await call(w, { method: 'POST', path: `/f/${id ?? s.random}`, body: s.body.text, headers })
        const sent = new Headers(headers).get('content-type')
        const json = sent !== null && /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(sent)
        const big = s.body.text.length > 1024 * 1024
        if (json) {
          let want: number[]
          if (big) want = [413]
          else {
            // A body that is UTF-8 JSON: the form's state decides first, then the body.
            const value = readsAsJson(s.body.text)
            // Unreadable text (not JSON, or not valid Unicode) is refused before the form is looked at.
            if (value === NOT_JSON || (typeof s.body.text === 'string' && holdsLoneSurrogate(s.body.text))) want = [422]
            else if (state === undefined) want = [404]
            else if (state === 'completed') want = [409]
            else if (state === 'cancelled' || state === 'expired') want = [410]
            else want = typeof value === 'object' && value !== null && !Array.isArray(value) ? [422, 201] : [422]
          }
          must(
            want.includes(res.status),
            `JSON submission to a ${state ?? 'missing'} form: want ${want}, got ${res.where}`,
          )
          if (res.status === 201) must(s.body.object, `a non-object was recorded: ${res.where}`)
          must(
            !/text\/html/.test(res.headers.get('content-type') ?? ''),
            `a JSON submission answered with a page: ${res.where}`,
          )
        } else if (
          sent === null ||
          !/^(?:application\/x-www-form-urlencoded|multipart\/form-data)\s*(?:;|$)/i.test(sent)
        ) {
          must(res.status === 415, `content-type ${show(sent)}: ${res.where}`)
        } else {
          must([303, 400, 404, 409, 410, 413, 422].includes(res.status), `a form post: ${res.where}`)
        }
      })
    },
    TIMEOUT,
  )
})

describe(named('generated forms take generated answers'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  test(
    named('any generated form: an answer is recorded or refused per field, and what is recorded fits GET /schema'),
    async () => {
      const scenario = validCreate.chain((spec) => {
        const fields = (parsed(spec.body) as { fields: Array<Record<string, any>> }).fields
        return fc.boolean().chain((tidy) =>
          fc.record({
            spec: fc.constant(spec),
            answers: fc.tuple(...fields.map((f) => answerFor(f, tidy))),
            extras: tidy
              ? fc.constant([] as Array<[string, J]>)
              : few(
                  fc.tuple(
                    fc
                      .oneof(fc.constantFrom(...PROTO_KEYS, '_page', 'toString'), hostile(8))
                      .filter((k) => !fields.some((f) => f.key === k)),
                    anyJson,
                  ),
                  2,
                ),
            post: fc.boolean(),
          }),
        )
      })
      await holds(w, scenario, 1, async (s) => {
        const created = await call(w, {
          method: 'POST',
          path: '/api/v1/forms',
          as: 'owner',
          body: jsonText(s.spec.body),
        })
        must(created.status === 201, created.where)
        const id = created.body.id
        const fields = (parsed(s.spec.body) as { fields: Array<Record<string, any>> }).fields
        const entries: Array<[string, J]> = fields.flatMap((f, i) =>
          s.answers[i] === ABSENT ? [] : [[f.key, s.answers[i] as J] as [string, J]],
        )
        entries.push(...s.extras)
        let res: Answer
        if (s.post) {
          const form = new URLSearchParams(
            entries.map(([k, v]): [string, string] => [
              k.toWellFormed(),
              (typeof v === 'string' ? v : jsonText(v)).toWellFormed(),
            ]),
          )
          res = await call(w, { method: 'POST', path: `/f/${id}`, body: form })
          must([303, 422].includes(res.status), `a form post: ${res.where}`)
        } else {
          const text = jsonText(new Obj(entries))
          res = await call(w, {
            method: 'POST',
            path: `/f/${id}`,
            body: text,
            headers: { 'content-type': 'application/json' },
          })
          must([201, 422].includes(res.status), `a JSON answer: ${res.where}`)
          if (holdsLoneSurrogate(text)) {
            // Refused whole, at the first place the bad text is found.
            must(
              res.status === 422 && res.body.errors.some((e: { message: string }) => /surrogate/.test(e.message)),
              `a lone surrogate not refused: ${res.where}`,
            )
            return
          }
          if (res.status === 422) {
            const known = new Set([...fields.map((f) => pointer(f.key)), ...s.extras.map(([k]) => pointer(k))])
            for (const p of errorPaths(res))
              must(known.has(p), `an error at ${p}, which names no field and nothing sent: ${res.where}`)
            for (const [k] of s.extras)
              must(errorPaths(res).includes(pointer(k)), `the unknown key ${show(k)} is not named: ${res.where}`)
          }
        }
        if (res.status === 422) return
        must(
          s.extras.every(([k]) => s.post && k.toWellFormed().startsWith('_')),
          `unknown keys were accepted: ${res.where}`,
        )
        const list = await call(w, { method: 'GET', path: `/api/v1/forms/${id}/responses`, as: 'owner' })
        const schema = await call(w, { method: 'GET', path: `/api/v1/forms/${id}/schema`, as: 'owner' })
        const data = list.body[0].data
        // Lengths as docs/page.md "Field types" counts them (UTF-16 units); the next property holds the schema to JSON Schema's own count.
        const problems = schemaProblems(schema.body, data, 'utf16')
        must(
          problems.length === 0,
          `recorded data ${show(data)} does not fit the published schema: ${problems.join('; ')} (schema ${show(schema.body.properties, 1500)})`,
        )
        must(
          JSON.stringify(Object.keys(data)) ===
            JSON.stringify(fields.map((f) => f.key).filter((k) => Object.hasOwn(data, k))),
          `data keys out of field order: ${Object.keys(data)}`,
        )
      })
    },
    TIMEOUT,
  )

  test(
    named('GET /schema is JSON Schema: what is recorded satisfies it as a JSON Schema validator counts (characters)'),
    async () => {
      const scenario = fc.record({
        type: fc.constantFrom('text', 'textarea'),
        min: fc.integer({ min: 1, max: 40 }),
        text: fc.oneof(
          fc.constantFrom('😀', '𝕏', '👨‍👩‍👧', 'e\u0301', 'x', 'é'),
          hostile(4).filter((t) => t.length > 0),
        ),
      })
      await holds(w, scenario, 0.2, async ({ type, min, text }) => {
        const value = text
          .toWellFormed()
          .repeat(min)
          .slice(0, Math.max(min, text.length))
          .replace(/[\ud800-\udbff]$/, 'x')
          .replace(/[\r\n]/g, 'x')
        if (value.trim() === '' || value.length < min) return
        const created = await call(w, {
          method: 'POST',
          path: '/api/v1/forms',
          as: 'owner',
          body: JSON.stringify({
            title: 'Lengths',
            fields: [{ key: 'v', type, label: 'V', required: true, config: { min_length: min } }],
          }),
        })
        const res = await call(w, {
          method: 'POST',
          path: `/f/${created.body.id}`,
          body: JSON.stringify({ v: value }),
          headers: { 'content-type': 'application/json' },
        })
        if (res.status === 422) return
        must(res.status === 201, res.where)
        const list = await call(w, { method: 'GET', path: `/api/v1/forms/${created.body.id}/responses`, as: 'owner' })
        const schema = await call(w, { method: 'GET', path: `/api/v1/forms/${created.body.id}/schema`, as: 'owner' })
        const problems = schemaProblems(schema.body, list.body[0].data)
        must(
          problems.length === 0,
          `the answer ${show(value)} (${value.length} UTF-16 units, ${[...value].length} characters) was recorded, but a JSON Schema validator rejects it against GET /schema: ${problems.join('; ')}`,
        )
      })
    },
    TIMEOUT,
  )
})
