/**
 * Fuzzing (see test/fuzz-world.ts) POST /api/v1/forms.
 * Reproduce: FUZZ_SEED=<seed> FUZZ_RUNS=<runs> bun test test/fuzz-create.test.ts
 */
import { afterAll, beforeAll, describe, test } from 'bun:test'
import fc from 'fast-check'
import { DAY_MS, garbageBody, mutate, mutation, nth, validCreate } from './fuzz-forms.ts'
import {
  bounded,
  compact,
  deepRaw,
  deepText,
  hostile,
  jsonText,
  must,
  named,
  nesting,
  Obj,
  parsed,
  Raw,
  show,
  storableObject,
  TIMEOUT,
} from './fuzz-json.ts'
import { CONTENT_TYPES, decodeHtml, extraHeaders, hostileHeader, tagsOf } from './fuzz-requests.ts'
import { call, createWorld, errorPaths, holds, names, type World } from './fuzz-world.ts'

// ---------------------------------------------------------------- POST /api/v1/forms

describe(named('POST /api/v1/forms'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  test(
    named('a valid body with hostile content is created and returned exactly'),
    async () => {
      await holds(
        w,
        fc.tuple(validCreate, fc.constantFrom(...CONTENT_TYPES.slice(0, 8), undefined)),
        1,
        async ([spec, contentType]) => {
          const text = jsonText(spec.body)
          const res = await call(w, {
            method: 'POST',
            path: '/api/v1/forms',
            as: 'owner',
            body: text,
            headers: contentType === undefined ? {} : { 'content-type': contentType },
          })
          must(res.status === 201, `a valid body refused: ${res.where} body ${show(text, 2000)}`)
          const sent = parsed(spec.body) as Record<string, any>
          const got = await call(w, { method: 'GET', path: `/api/v1/forms/${res.body.id}`, as: 'owner' })
          must(got.status === 200, got.where)
          const form = got.body
          must(form.title === sent.title.toWellFormed(), `title ${show(sent.title)} came back as ${show(form.title)}`)
          must(
            form.description === (sent.description == null ? null : sent.description.toWellFormed()),
            `description ${show(sent.description)} came back as ${show(form.description)}`,
          )
          must(
            JSON.stringify(res.body.context) === JSON.stringify(sent.context ?? null),
            `context came back as ${show(res.body.context)} for ${show(sent.context)}`,
          )
          must(JSON.stringify(form.context) === JSON.stringify(sent.context ?? null), 'context differs on GET')
          must(
            JSON.stringify(form.settings) === JSON.stringify(sent.settings ?? {}),
            `settings came back as ${show(form.settings)}`,
          )
          must(
            JSON.stringify(form.callback_metadata) === JSON.stringify(sent.callback_metadata ?? {}),
            `callback_metadata came back as ${show(form.callback_metadata)}`,
          )
          must(form.callback_url === (sent.callback_url ?? null), 'callback_url differs')
          must(!('webhook_secret' in form) && !('webhook_secret' in res.body), 'the webhook secret is in a response')
          must(
            form.fields.length === sent.fields.length && form.fields_count === sent.fields.length,
            'fields count differs',
          )
          sent.fields.forEach((f: any, i: number) => {
            const g = form.fields[i]
            must(g.key === f.key && g.type === f.type && g.label === f.label, `field ${i} came back as ${show(g)}`)
            must(
              g.description === (f.description ?? null) && g.required === (f.required ?? false),
              `field ${i} description/required differ`,
            )
            must(
              JSON.stringify(g.config) === JSON.stringify(f.config ?? {}),
              `field ${i} config came back as ${show(g.config)} for ${show(f.config)}`,
            )
          })
          const created = Date.parse(`${form.created_at}Z`)
          const duration = sent.expires_in === null ? null : (sent.expires_in ?? '48h')
          const ms =
            duration === null
              ? null
              : Number(duration.slice(0, -1)) *
                { m: 60_000, h: 3_600_000, d: DAY_MS }[duration.at(-1) as 'm' | 'h' | 'd']
          must(
            form.expires_at === (ms === null ? null : new Date(created + ms).toISOString().slice(0, -1)),
            `expires_at ${form.expires_at} for expires_in ${sent.expires_in}`,
          )
          // The schema of the answers names every field.
          const schema = await call(w, { method: 'GET', path: `/api/v1/forms/${res.body.id}/schema`, as: 'owner' })
          must(
            schema.status === 200 &&
              JSON.stringify(Object.keys(schema.body.properties)) ===
                JSON.stringify(sent.fields.map((f: any) => f.key)),
            `schema: ${schema.where}`,
          )
          // The page shows what the API client wrote, escaped: title, labels, option values.
          const page = await call(w, { method: 'GET', path: `/f/${res.body.id}` })
          must(page.status === 200, page.where)
          const tags = tagsOf(page.text)
          const h1 = /<h1[^>]*>([\s\S]*?)<\/h1>/.exec(page.text)?.[1]
          must(
            h1 !== undefined && decodeHtml(h1) === form.title.toWellFormed(),
            `the page's h1 ${show(h1)} for title ${show(form.title)}`,
          )
          for (const f of sent.fields) {
            // A memorable date is three boxes named after the field (`_day_<key>`, ...).
            const names =
              f.type === 'date' && f.config?.input === 'memorable'
                ? ['day', 'month', 'year'].map((part) => `_${part}_${f.key}`)
                : [f.key]
            for (const name of names)
              must(
                tags.some((tag) => tag.attrs.get('name') === name),
                `no control named ${show(name)} on the page`,
              )
            if (f.type === 'select') {
              // A drop-down's options, or the radios (or checkboxes) named after the field.
              const shown = tags
                .filter((tag) => tag.name === 'option' || (tag.name === 'input' && tag.attrs.get('name') === f.key))
                .map((tag) => tag.attrs.get('value'))
              for (const o of f.config.options) {
                const value = typeof o === 'string' ? o : o.value
                must(shown.includes(value.toWellFormed()), `option ${show(value)} is not on the page`)
              }
            }
          }
        },
      )
    },
    TIMEOUT,
  )

  test(
    named('one wrong, missing or unknown key anywhere is a 422 naming it'),
    async () => {
      await holds(w, fc.tuple(validCreate, mutation), 1.5, async ([spec, m]) => {
        const { body, path } = mutate(spec, spec.body, m)
        const res = await call(w, { method: 'POST', path: '/api/v1/forms', as: 'owner', body: jsonText(body) })
        must(
          res.status === 422,
          `an invalid body (${m.kind} at ${path}) was not refused: ${res.where} body ${show(jsonText(body), 1500)}`,
        )
        must(names(errorPaths(res), path), `${m.kind}: errors ${show(errorPaths(res))} do not name ${path}`)
      })
    },
    TIMEOUT,
  )

  test(
    named('several mutations, garbage bodies and header noise are refused, never a 5xx'),
    async () => {
      const body = fc.oneof(
        fc.tuple(validCreate, fc.array(mutation, { minLength: 2, maxLength: 5 })).map(([spec, ms]) => ({
          text: jsonText(ms.reduce((b, m) => mutate(spec, b, m).body, spec.body)),
          paths: [] as string[],
        })),
        garbageBody.map((text) => ({ text, paths: [] as string[] })),
        fc
          .tuple(validCreate, deepRaw())
          .map(([spec, deep]) => ({ text: jsonText(spec.body.with('fields', deep)), paths: ['/fields'] })),
      )
      await holds(w, fc.tuple(body, extraHeaders), 1.5, async ([b, headers]) => {
        const { 'idempotency-key': _ignored, ...rest } = headers
        const res = await call(w, { method: 'POST', path: '/api/v1/forms', as: 'owner', body: b.text, headers: rest })
        const declared = Number(rest['content-length'])
        if (declared > 1024 * 1024) must(res.status === 413, `a declared length of ${declared} bytes: ${res.where}`)
        else must(res.status === 422, `not refused: ${res.where}`)
        if (res.status === 422)
          for (const p of b.paths) must(names(errorPaths(res), p), `errors do not name ${p}: ${res.where}`)
      })
    },
    TIMEOUT,
  )

  test(
    named('context of exactly 65,536 bytes is accepted, 65,537 refused at /context'),
    async () => {
      const PAD = 'zz-pad\u0000'
      await holds(w, fc.tuple(storableObject, hostile(200), fc.boolean()), 0.3, async ([base, text, over]) => {
        const core = base.without(PAD).with('hostile', text)
        const size = Buffer.byteLength(compact(core))
        const room = 65_536 - size - Buffer.byteLength(`,${JSON.stringify(PAD)}:""`)
        must(room >= 0, `generated context too large: ${size}`)
        const context = core.with(PAD, 'a'.repeat(room + (over ? 1 : 0)))
        must(Buffer.byteLength(compact(context)) === 65_536 + (over ? 1 : 0), 'the test built the wrong size')
        const body = new Obj([
          ['title', 'Sized'],
          [
            'fields',
            [
              new Obj([
                ['key', 'a'],
                ['type', 'text'],
                ['label', 'A'],
              ]),
            ],
          ],
          ['context', context],
        ])
        const res = await call(w, { method: 'POST', path: '/api/v1/forms', as: 'owner', body: jsonText(body) })
        if (over) {
          must(res.status === 422 && JSON.stringify(errorPaths(res)) === '["/context"]', `65,537 bytes: ${res.where}`)
        } else {
          must(res.status === 201, `65,536 bytes refused: ${res.where}`)
          must(JSON.stringify(res.body.context) === compact(context), 'the context came back different')
          const got = await call(w, { method: 'GET', path: `/api/v1/forms/${res.body.id}`, as: 'owner' })
          must(Buffer.byteLength(JSON.stringify(got.body.context)) === 65_536, 'the stored context changed size')
        }
      })
    },
    TIMEOUT,
  )

  test(
    named('nesting: 100 levels of context are kept, 101..5000 refused at /context'),
    async () => {
      await holds(
        w,
        fc.tuple(
          fc.integer({ min: 50, max: 5000 }),
          fc.constantFrom('array', 'object', 'proto', 'mixed') as fc.Arbitrary<'array' | 'object' | 'proto' | 'mixed'>,
        ),
        0.3,
        async ([depth, kind]) => {
          // The context object itself is one level.
          const context = new Obj([['d', new Raw(deepText(depth - 1, kind))]])
          const body = new Obj([
            ['title', 'Deep'],
            [
              'fields',
              [
                new Obj([
                  ['key', 'a'],
                  ['type', 'text'],
                  ['label', 'A'],
                ]),
              ],
            ],
            ['context', context],
          ])
          const levels = nesting(parsed(context))
          const res = await call(w, { method: 'POST', path: '/api/v1/forms', as: 'owner', body: jsonText(body) })
          if (levels <= 100) {
            must(
              res.status === 201 && JSON.stringify(res.body.context) === compact(context),
              `${levels} levels refused or changed: ${res.where}`,
            )
          } else {
            must(res.status === 422 && names(errorPaths(res), '/context'), `${levels} levels: ${res.where}`)
          }
        },
      )
    },
    TIMEOUT,
  )

  test(
    named('Idempotency-Key: replays, conflicts and garbage keys'),
    async () => {
      const IDEM = /^[\x21-\x7e]{1,255}$/
      const remembered = {
        owner: [] as Array<{ key: string; text: string; id: string; canonical: string }>,
        other: [] as Array<{ key: string; text: string; id: string; canonical: string }>,
      }
      const canonical = (v: unknown): string =>
        Array.isArray(v)
          ? `[${v.map(canonical).join(',')}]`
          : typeof v === 'object' && v !== null
            ? `{${Object.keys(v)
                .sort()
                .map((k) => `${JSON.stringify(k)}:${canonical((v as any)[k])}`)
                .join(',')}}`
            : JSON.stringify(v)
      const scenario = fc.record({
        spec: validCreate,
        key: fc.oneof(
          fc.stringMatching(/^[\x21-\x7e]{1,40}$/),
          hostileHeader,
          fc.constantFrom('', ' ', 'k'.repeat(255), 'k'.repeat(256), ' padded '),
        ),
        reuse: fc.constantFrom('fresh', 'same', 'reordered', 'different'),
        pick: fc.nat(),
        as: fc.constantFrom('owner', 'owner', 'other') as fc.Arbitrary<'owner' | 'other'>,
      })
      await holds(w, scenario, 0.8, async (s) => {
        let key = s.key
        let text = jsonText(s.spec.body)
        const mine = remembered[s.as]
        const earlier = mine.length > 0 && s.reuse !== 'fresh' ? nth(mine, s.pick) : undefined
        if (earlier) {
          key = earlier.key
          if (s.reuse === 'same') text = earlier.text
          if (s.reuse === 'reordered')
            text = ` ${JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(earlier.text)).reverse()), null, 2)}\n`
        }
        const normalized = new Headers({ 'idempotency-key': key }).get('idempotency-key')!
        const res = await call(w, {
          method: 'POST',
          path: '/api/v1/forms',
          as: s.as,
          body: text,
          headers: { 'idempotency-key': key },
        })
        if (!IDEM.test(normalized)) {
          must(res.status === 422, `a bad Idempotency-Key ${show(normalized)} accepted: ${res.where}`)
          return
        }
        const match = mine.find((r) => r.key === normalized)
        if (match && match.canonical === canonical(JSON.parse(text))) {
          must(
            res.status === 201 && res.body.id === match.id && res.headers.get('idempotent-replayed') === 'true',
            `no replay: ${res.where}`,
          )
        } else if (match) {
          must(res.status === 422, `the same key with another body: ${res.where}`)
        } else {
          must(res.status === 201 && res.headers.get('idempotent-replayed') === null, `a new key: ${res.where}`)
          mine.push({ key: normalized, text, id: res.body.id, canonical: canonical(JSON.parse(text)) })
        }
      })
    },
    TIMEOUT,
  )

  test(
    named('strings with lone surrogates are refused (they could not be stored as they are)'),
    async () => {
      const withSurrogate = fc
        .tuple(bounded(0, 100), fc.constantFrom('\ud800', '\udfff', '\udbff', 'a\ud83d'), bounded(0, 100))
        .map(([a, s, b]) => `${a}${s}${b}`.slice(0, 255))
      await holds(
        w,
        fc.tuple(withSurrogate, fc.constantFrom('title', 'description', 'label', 'option')),
        0.2,
        async ([text, where]) => {
          const field =
            where === 'option'
              ? { key: 'pick', type: 'select', label: 'Pick', config: { options: [text, 'plain'] } }
              : { key: 'a', type: 'text', label: where === 'label' ? text : 'A' }
          const body = {
            title: where === 'title' ? text : 'T',
            description: where === 'description' ? text : null,
            fields: [field],
          }
          const res = await call(w, { method: 'POST', path: '/api/v1/forms', as: 'owner', body: JSON.stringify(body) })
          must(res.status === 422, `${where} ${show(text)} holds a lone surrogate and was not refused: ${res.where}`)
          must(
            res.body.errors.some((e: { message: string }) => /surrogate/.test(e.message)),
            `the 422 does not say why: ${res.where}`,
          )
        },
      )
    },
    TIMEOUT,
  )
})
