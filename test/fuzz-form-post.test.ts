/**
 * Fuzzing (see test/fuzz-world.ts) answers as a page sends them: concurrent
 * requests on one form, and form posts (urlencoded and multipart).
 * Reproduce: FUZZ_SEED=<seed> FUZZ_RUNS=<runs> bun test test/fuzz-form-post.test.ts
 */
import { afterAll, beforeAll, describe, test } from 'bun:test'
import fc from 'fast-check'
import { ABSENT, balanced, FIELD_KEYS, few, POST_VALUES, photoArb } from './fuzz-answer-values.ts'
import { opt, validCreate } from './fuzz-forms.ts'
import { hostile, jsonText, must, named, show, TIMEOUT } from './fuzz-json.ts'
import { ACCEPTS, decodeHtml, hostileHeader, normalText, strangeId, tagsOf } from './fuzz-requests.ts'
import { call, createWorld, freshForm, holds, modelStatus, type World } from './fuzz-world.ts'
import { BASE_URL, EVERY_TYPE_ANSWERS } from './utils.ts'

describe(named('concurrent requests on one form'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  test(
    named('concurrent answers and cancellations: one outcome, never two responses'),
    async () => {
      type Op = 'json' | 'json-invalid' | 'post' | 'post-invalid' | 'cancel' | 'expiry' | 'delete'
      const op = fc.constantFrom<Op>(
        'json',
        'json',
        'json-invalid',
        'post',
        'post',
        'post-invalid',
        'cancel',
        'expiry',
        'delete',
      )
      await holds(w, fc.array(op, { minLength: 2, maxLength: 8 }), 0.5, async (ops) => {
        const id = await freshForm(w)
        const json = { 'content-type': 'application/json' }
        w.raced.add(id)
        const results = await Promise.all(
          ops.map((o) => {
            switch (o) {
              case 'json':
                return call(w, {
                  method: 'POST',
                  path: `/f/${id}`,
                  body: JSON.stringify(EVERY_TYPE_ANSWERS),
                  headers: json,
                })
              case 'json-invalid':
                return call(w, {
                  method: 'POST',
                  path: `/f/${id}`,
                  body: JSON.stringify({ ...EVERY_TYPE_ANSWERS, guests: 99 }),
                  headers: json,
                })
              case 'post':
                return call(w, {
                  method: 'POST',
                  path: `/f/${id}`,
                  body: new URLSearchParams({ name: 'Ada', agree: 'on' }),
                })
              case 'post-invalid':
                return call(w, {
                  method: 'POST',
                  path: `/f/${id}`,
                  body: new URLSearchParams({ name: '', agree: 'on' }),
                })
              case 'cancel':
                return call(w, {
                  method: 'PATCH',
                  path: `/api/v1/forms/${id}`,
                  as: 'owner',
                  body: '{"status":"cancelled"}',
                })
              case 'expiry':
                return call(w, {
                  method: 'PATCH',
                  path: `/api/v1/forms/${id}`,
                  as: 'owner',
                  body: '{"expires_at":null}',
                })
              case 'delete':
                return call(w, { method: 'DELETE', path: `/api/v1/forms/${id}`, as: 'owner' })
            }
          }),
        )
        const answered = results.filter(
          (r, i) => (ops[i] === 'json' || ops[i] === 'post') && (r.status === 201 || r.status === 303),
        )
        const cancelled = results.filter(
          (r, i) => ops[i] === 'cancel' && r.status === 200 && r.body.status === 'cancelled',
        )
        const deleted = results.some((r, i) => ops[i] === 'delete' && r.status === 204)
        must(answered.length <= 1, `${answered.length} answers recorded for one form: ${ops.join(', ')}`)
        must(!(answered.length === 1 && cancelled.length > 0), `answered and cancelled at once: ${ops.join(', ')}`)
        for (const [i, r] of results.entries()) {
          const o = ops[i]!
          if (o === 'json-invalid' || o === 'post-invalid')
            must([404, 409, 410, 422].includes(r.status), `${o}: ${r.where}`)
          if (o === 'json' || o === 'post') must([201, 303, 404, 409, 410].includes(r.status), `${o}: ${r.where}`)
          if (o === 'cancel' || o === 'expiry') must([200, 404, 409].includes(r.status), `${o}: ${r.where}`)
        }
        if (!deleted && !ops.includes('cancel') && (ops.includes('json') || ops.includes('post')))
          must(answered.length === 1, `no answer recorded: ${ops.join(', ')}`)
        const after = await call(w, { method: 'GET', path: `/api/v1/forms/${id}`, as: 'owner' })
        if (deleted) must(after.status === 404, after.where)
        else
          must(
            after.body.status === (answered.length === 1 ? 'completed' : cancelled.length > 0 ? 'cancelled' : 'active'),
            `final state ${after.body.status} after ${ops.join(', ')}`,
          )
      })
    },
    TIMEOUT,
  )

  test(
    named('concurrent duplicates with one Idempotency-Key create one form'),
    async () => {
      await holds(
        w,
        fc.tuple(validCreate, fc.integer({ min: 2, max: 6 }), fc.stringMatching(/^[\x21-\x7e]{1,30}$/)),
        0.3,
        async ([spec, n, key]) => {
          const unique = `${key}-${w.requests}`
          const text = jsonText(spec.body)
          const results = await Promise.all(
            Array.from({ length: n }, () =>
              call(w, {
                method: 'POST',
                path: '/api/v1/forms',
                as: 'owner',
                body: text,
                headers: { 'idempotency-key': unique },
              }),
            ),
          )
          const ids = new Set(results.map((r) => r.body?.id))
          must(
            results.every((r) => r.status === 201) && ids.size === 1,
            `${n} concurrent duplicates: ${results.map((r) => `${r.status} ${r.body?.id}`).join(', ')}`,
          )
          must(
            results.filter((r) => r.headers.get('idempotent-replayed') === null).length === 1,
            'not exactly one original among concurrent duplicates',
          )
        },
      )
    },
    TIMEOUT,
  )
})

describe(named('POST /f/<id> as a form post (urlencoded and multipart)'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  test(
    named('recorded (303) exactly when valid; otherwise the page again with the typed values and errors'),
    async () => {
      const ignoredName = fc.oneof(
        fc.constantFrom('_csrf', '__proto__', '_', '_charset_', '__proto__[polluted]', '_name'),
        hostile(8).map((s) => `_${s.toWellFormed()}`),
      )
      const unknownName = fc.oneof(
        fc.constantFrom('constructor', 'prototype', 'toString', 'Name', 'name ', 'polluted', ' name'),
        hostile(8)
          .map((s) => s.toWellFormed())
          .filter((s) => s.length > 0 && !s.startsWith('_') && !FIELD_KEYS.includes(s)),
      )
      const scenario = fc.record({
        values: balanced(POST_VALUES),
        photo: photoArb,
        ignored: fc.array(fc.tuple(ignoredName, hostile(20)), { maxLength: 3 }),
        unknown: few(fc.tuple(unknownName, hostile(10)), 2),
        multipart: fc.boolean(),
        order: fc.nat(),
        fetchSite: fc.constantFrom(undefined, undefined, 'same-origin', 'none', 'cross-site'),
        charset: fc.constantFrom('', '', '; charset=utf-8', '; charset=UTF-8'),
      })
      await holds(w, scenario, 2, async (s) => {
        const id = await freshForm(w)
        const entries: Array<[string, string | File]> = []
        for (const key of Object.keys(POST_VALUES)) {
          const v = s.values[key]!.value
          if (v !== ABSENT) entries.push([key, v])
        }
        if (s.photo.kind === 'text') entries.push(['photo', s.photo.value])
        entries.push(...s.ignored, ...s.unknown)
        const multipart = s.multipart || s.photo.kind === 'file' || s.photo.kind === 'empty'
        if (multipart && s.photo.kind === 'file')
          entries.push(['photo', new File([s.photo.bytes], s.photo.name, { type: s.photo.type })])
        if (multipart && s.photo.kind === 'empty')
          entries.push(['photo', new File([], '', { type: 'application/octet-stream' })])
        const rotated = entries.map((_, i) => entries[(i + s.order) % entries.length]!)
        let body: FormData | URLSearchParams
        const headers: Record<string, string> = {}
        if (multipart) {
          body = new FormData()
          for (const [k, v] of rotated) body.append(k, v)
        } else {
          body = new URLSearchParams(rotated.map(([k, v]): [string, string] => [k, v as string]))
          if (s.charset) headers['content-type'] = `application/x-www-form-urlencoded${s.charset}`
        }
        if (s.fetchSite) headers['sec-fetch-site'] = s.fetchSite
        const res = await call(w, { method: 'POST', path: `/f/${id}`, body, headers })
        if (s.fetchSite === 'cross-site') {
          must(
            res.status === 403 && /text\/html/.test(res.headers.get('content-type') ?? ''),
            `cross-site post: ${res.where}`,
          )
          return
        }
        const photoOk = s.photo.kind === 'file' ? s.photo.ok : s.photo.kind !== 'text'
        const invalid = Object.keys(POST_VALUES).filter((k) => !s.values[k]!.ok)
        if (!photoOk) invalid.push('photo')
        const allOk = invalid.length === 0 && s.unknown.length === 0
        if (!allOk) {
          must(
            res.status === 422,
            `an invalid post (${invalid.join(', ')}${s.unknown.length ? ` unknown ${show(s.unknown.map(([k]) => k))}` : ''}) was not refused: ${res.where}`,
          )
          must(res.text.includes('error-summary'), 'the 422 page has no error summary')
          const tags = tagsOf(res.text)
          for (const key of invalid) {
            const control = tags.find(
              (t) => t.attrs.get('name') === key && ['input', 'textarea', 'select'].includes(t.name),
            )
            must(control?.attrs.get('aria-invalid') === 'true', `the control of ${key} is not marked aria-invalid`)
          }
          // Every value typed is kept (files excepted): the last one sent under the key.
          const typed = (key: string) =>
            rotated.filter(([k, v]) => k === key && typeof v === 'string').at(-1)?.[1] as string | undefined
          const name = typed('name')
          if (name !== undefined) {
            const shown =
              tags.find((t) => t.name === 'input' && t.attrs.get('name') === 'name')?.attrs.get('value') ?? ''
            must(normalText(shown) === normalText(name), `the name typed ${show(name)} came back as ${show(shown)}`)
          }
          const notes = typed('notes')
          if (notes !== undefined) {
            const m = /<textarea[^>]*name="notes"[^>]*>([\s\S]*?)<\/textarea>/.exec(res.text)
            must(
              m && normalText(decodeHtml(m[1]!)).slice(1) === normalText(notes),
              `the notes typed ${show(notes)} came back as ${show(m?.[1])}`,
            )
          }
          const after = await call(w, { method: 'GET', path: `/api/v1/forms/${id}`, as: 'owner' })
          must(after.body.status === 'active', 'a refused post changed the form')
          return
        }
        must(
          res.status === 303 && res.headers.get('location') === `/f/${id}`,
          `a valid post was not recorded: ${res.where}`,
        )
        const list = await call(w, { method: 'GET', path: `/api/v1/forms/${id}/responses`, as: 'owner' })
        const data = list.body[0].data
        const want: Record<string, unknown> = {}
        for (const key of FIELD_KEYS) {
          if (key === 'photo') {
            if (s.photo.kind === 'file' && (s.photo.bytes.length > 0 || s.photo.name !== ''))
              want.photo = `${BASE_URL}/api/v1/forms/${id}/responses/${list.body[0].id}/files/photo`
            continue
          }
          const stored = s.values[key]!.stored
          if (stored !== ABSENT) want[key] = stored
        }
        must(JSON.stringify(data) === JSON.stringify(want), `stored ${show(data)}, want ${show(want)}`)
        if (want.photo && s.photo.kind === 'file') {
          const file = await call(w, {
            method: 'GET',
            path: (want.photo as string).slice(BASE_URL.length),
            as: 'owner',
          })
          must(
            file.status === 200 && Buffer.from(file.bytes).equals(Buffer.from(s.photo.bytes)),
            `the file came back different: ${file.where}`,
          )
          must(
            (file.headers.get('content-disposition') ?? '').startsWith('attachment;'),
            'a file download that is not an attachment',
          )
          must(
            file.headers.get('content-type') === s.photo.type.toLowerCase(),
            `the file type ${file.headers.get('content-type')}`,
          )
          const stranger = await call(w, {
            method: 'GET',
            path: (want.photo as string).slice(BASE_URL.length),
            as: 'other',
          })
          must(stranger.status === 404, `another account downloads the file: ${stranger.where}`)
        }
        const page = await call(w, { method: 'GET', path: `/f/${id}` })
        must(page.status === 200 && !page.text.includes('<form'), `the thank-you page: ${page.where}`)
        const again = await call(w, {
          method: 'POST',
          path: `/f/${id}`,
          body: new URLSearchParams({ name: 'again', agree: 'on' }),
        })
        must(again.status === 409, `a second post: ${again.where}`)
      })
    },
    TIMEOUT,
  )

  test(
    named('broken, oversized and odd form posts; closed and unknown forms'),
    async () => {
      const scenario = fc.record({
        target: fc.constantFrom('active', 'active', 'completed', 'cancelled', 'expired', 'deleted', 'random'),
        random: strangeId,
        body: fc.oneof(
          fc.tuple(fc.string({ maxLength: 8 }), hostile(200)).map(([boundary, junk]) => ({
            type: `multipart/form-data; boundary=${boundary.replace(/[^\x21-\x7e]/g, 'b') || 'x'}`,
            text: junk as string | Uint8Array,
          })),
          hostile(200).map((junk) => ({
            type: 'application/x-www-form-urlencoded',
            text: junk as string | Uint8Array,
          })),
          fc.uint8Array({ maxLength: 300 }).map((bytes) => ({
            type: 'multipart/form-data; boundary=zzz',
            text: Uint8Array.from([
              ...Buffer.from('--zzz\r\nContent-Disposition: form-data; name="name"\r\n\r\n'),
              ...bytes,
            ]) as string | Uint8Array,
          })),
          fc.constantFrom(
            { type: 'multipart/form-data', text: 'x' },
            { type: 'multipart/form-data; boundary=', text: '--\r\n' },
            {
              type: 'multipart/form-data; boundary=zzz',
              text: '--zzz\r\nContent-Disposition: form-data; name="name"\r\n\r\nAda\r\n--zzz--',
            },
            {
              type: 'multipart/form-data; boundary=zzz',
              text: '--zzz\r\nContent-Disposition: form-data; name="__proto__"\r\n\r\n{"polluted":1}\r\n--zzz\r\nContent-Disposition: form-data; name="name"\r\n\r\nAda\r\n--zzz\r\nContent-Disposition: form-data; name="agree"\r\n\r\non\r\n--zzz--',
            },
            {
              type: 'multipart/form-data; boundary=zzz',
              text: `--zzz\r\nContent-Disposition: form-data; name="photo"; filename="../../x.png"\r\nContent-Type: image/png\r\n\r\n${'A'.repeat(300_000)}\r\n--zzz--`,
            },
            { type: 'application/x-www-form-urlencoded', text: `name=${'x'.repeat(300_000)}` },
            {
              type: 'application/x-www-form-urlencoded',
              text: '__proto__[polluted]=1&constructor[prototype][polluted]=1&name=Ada&agree=on',
            },
            { type: 'application/x-www-form-urlencoded', text: '%%%&&&===&name=%ZZ&agree=%E0%A4%A' },
            { type: 'application/x-www-form-urlencoded; charset=utf-16', text: 'name=Ada&agree=on' },
            { type: 'application/x-www-form-urlencoded; charset=nope', text: 'name=Ada&agree=on' },
            {
              type: 'application/x-www-form-urlencoded',
              text: `${Array.from({ length: 2000 }, (_, i) => `_k${i}=v`).join('&')}&name=Ada&agree=on`,
            },
          ),
        ),
        accept: opt(fc.constantFrom(...ACCEPTS)),
        xff: opt(hostileHeader),
      })
      await holds(w, scenario, 1, async (s) => {
        const fx = w.fx
        const id =
          s.target === 'random' ? undefined : s.target === 'active' ? await freshForm(w) : (fx[s.target] as string)
        const headers: Record<string, string> = { 'content-type': s.body.type }
        if (s.accept) headers.accept = s.accept
        if (s.xff) headers['x-forwarded-for'] = s.xff
        const form = id === undefined ? undefined : w.forms.get(id)
        const state = form && !form.deleted ? modelStatus(w, form) : undefined
        const res = await call(w, { method: 'POST', path: `/f/${id ?? s.random}`, body: s.body.text, headers })
        must(
          /text\/html/.test(res.headers.get('content-type') ?? '') || res.status === 303,
          `a form post not answered with a page: ${res.where}`,
        )
        if (state === undefined) must(res.status === 404, `unknown form: ${res.where}`)
        else if (state === 'completed') must(res.status === 409, `completed form: ${res.where}`)
        else if (state !== 'active') must(res.status === 410, `${state} form: ${res.where}`)
        else must([303, 400, 413, 422].includes(res.status), `active form: ${res.where}`)
      })
    },
    TIMEOUT,
  )
})
