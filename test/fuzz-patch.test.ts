/**
 * Fuzzing (see test/fuzz-world.ts) PATCH /api/v1/forms/<id>.
 * Reproduce: FUZZ_SEED=<seed> FUZZ_RUNS=<runs> bun test test/fuzz-patch.test.ts
 */
import { afterAll, beforeAll, describe, test } from 'bun:test'
import fc from 'fast-check'
import { DAY_MS, extraKey, garbageBody } from './fuzz-forms.ts'
import { anyJson, hostile, type J, jsonText, must, named, Obj, PROTO_KEYS, Raw, show, TIMEOUT } from './fuzz-json.ts'
import { ID_SHAPES, resolvesAs, shapeId, strangeId } from './fuzz-requests.ts'
import { call, createWorld, freshForm, holds, modelStatus, type World } from './fuzz-world.ts'
import { EVERY_TYPE_ANSWERS } from './utils.ts'

// ---------------------------------------------------------------- PATCH /api/v1/forms/<id>

type PatchBody =
  | { kind: 'invalid'; text: string }
  | {
      kind: 'valid'
      text: string
      cancel: boolean
      expires?: { kind: 'future'; ms: number } | { kind: 'null' } | { kind: 'past' } | { kind: 'bad' }
    }

function formatWithOffset(ms: number, offsetMinutes: number, compactOffset: boolean): string {
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, -1)
  const sign = offsetMinutes >= 0 ? '+' : '-'
  const abs = Math.abs(offsetMinutes)
  const hh = String(Math.floor(abs / 60)).padStart(2, '0')
  const mm = String(abs % 60).padStart(2, '0')
  return `${local}${sign}${hh}${compactOffset ? '' : ':'}${mm}`
}

describe(named('PATCH /api/v1/forms/<id>'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  const BAD_EXPIRES = [
    '',
    'tomorrow',
    '2026-02-30T00:00:00',
    '2026-13-01T00:00:00Z',
    '2026-01-01T24:00:00',
    '2026-01-01T00:60:00',
    '2026-01-01T00:00:60',
    '+275760-09-13T00:00:00Z',
    '10000-01-01T00:00:00Z',
    '9999-12-31T23:59:59.999-01:00',
    '2026-01-01',
    '2099-01-01T00:00:00+24:00',
    '2099-01-01T00:00:00+05:60',
    '1e400',
    'NaN',
    '2099-01-01T00:00:00ZZ',
    ' 2099-01-01T00:00:00Z',
    '2099-01-01T00:00:00Z ',
    '2099-W01',
    '2099-001T00:00:00',
    '2099-01-01T00:00:00.Z',
    '२०९९-01-01T00:00:00Z',
    '2099-01-01T00:00:00\u0000',
  ]
  const patchBody = (now: number): fc.Arbitrary<PatchBody> => {
    const future = fc
      .tuple(
        fc.integer({ min: 2 * DAY_MS, max: 50 * 365 * DAY_MS }),
        fc.nat(7),
        fc.constantFrom(0, 330, -480, 60, -720, 840),
      )
      .map(([delta, shape, offset]): [J, number] => {
        let ms = now + delta
        if (shape === 4) ms -= ms % 1000
        if (shape === 5) ms -= ms % 60_000
        const iso = new Date(ms).toISOString()
        const text = [
          iso,
          iso.slice(0, -1),
          iso.replace('T', 't').replace('Z', 'z'),
          iso.replace('T', ' '),
          iso.replace('.000Z', 'Z'),
          iso.slice(0, 16),
          `${iso.slice(0, -1)}123456`,
          formatWithOffset(ms, offset, shape % 2 === 0),
        ][shape]!
        return [text, ms]
      })
    const past = fc
      .tuple(fc.integer({ min: 0, max: 400 * 365 * DAY_MS }), fc.boolean())
      .map(([delta, zone]) => new Date(now - delta).toISOString().slice(0, zone ? undefined : -1))
    const wrongStatus = fc.oneof(
      fc.constantFrom<J>(
        'CANCELLED',
        'Cancelled',
        'completed',
        'active',
        'expired',
        'deleted',
        '',
        ' cancelled',
        'cancelled ',
        null,
        1,
        true,
        [],
        new Obj([]),
        ['cancelled'],
      ),
      hostile(10),
    )
    const wrongExpires = fc.constantFrom<J>(0, true, [], new Obj([]), new Raw('1e400'), 1_800_000_000_000)
    const proto = fc.constantFrom(...PROTO_KEYS)
    return fc.oneof(
      {
        weight: 8,
        arbitrary: fc
          .record({
            cancel: fc.boolean(),
            expires: fc.oneof(
              { weight: 2, arbitrary: fc.constant(undefined) },
              { weight: 3, arbitrary: future.map((f) => ({ kind: 'future' as const, f })) },
              fc.constant({ kind: 'null' as const }),
              past.map((p) => ({ kind: 'past' as const, p })),
              fc.constantFrom(...BAD_EXPIRES).map((b) => ({ kind: 'bad' as const, b })),
            ),
          })
          .map(({ cancel, expires }): PatchBody => {
            const entries: Array<[string, J]> = []
            if (cancel) entries.push(['status', 'cancelled'])
            if (expires?.kind === 'future') entries.push(['expires_at', expires.f[0]])
            if (expires?.kind === 'null') entries.push(['expires_at', null])
            if (expires?.kind === 'past') entries.push(['expires_at', expires.p])
            if (expires?.kind === 'bad') entries.push(['expires_at', expires.b])
            const model =
              expires === undefined
                ? undefined
                : expires.kind === 'future'
                  ? { kind: 'future' as const, ms: expires.f[1] }
                  : { kind: expires.kind }
            return { kind: 'valid', text: jsonText(new Obj(entries)), cancel, expires: model }
          }),
      },
      fc.tuple(wrongStatus, fc.boolean()).map(
        ([status, both]): PatchBody => ({
          kind: 'invalid',
          text: jsonText(
            new Obj([['status', status], ...(both ? ([['expires_at', null]] as Array<[string, J]>) : [])]),
          ),
        }),
      ),
      wrongExpires.map((e): PatchBody => ({ kind: 'invalid', text: jsonText(new Obj([['expires_at', e]])) })),
      fc
        .tuple(
          fc.oneof(
            proto,
            extraKey.filter((k) => k !== 'status' && k !== 'expires_at'),
          ),
          anyJson,
        )
        .map(
          ([k, v]): PatchBody => ({
            kind: 'invalid',
            text: jsonText(
              new Obj([
                ['status', 'cancelled'],
                [k, v],
              ]),
            ),
          }),
        ),
      fc
        .tuple(proto, fc.constant(new Obj([['status', 'cancelled']])))
        .map(([k, v]): PatchBody => ({ kind: 'invalid', text: jsonText(new Obj([[k, v]])) })),
      garbageBody.map(
        (text): PatchBody => ({
          kind: 'invalid',
          text: typeof text === 'string' ? text : new TextDecoder().decode(text),
        }),
      ),
    )
  }

  test(
    named('PATCH follows the state machine exactly'),
    async () => {
      const now = w.t.clock()
      const scenario = fc.record({
        target: fc.constantFrom(
          'active',
          'active',
          'active',
          'cancelled',
          'completed',
          'expired',
          'deleted',
          'other',
          'random',
        ),
        shape: fc.constantFrom(...ID_SHAPES),
        salt: fc.nat(),
        random: strangeId,
        // Expiry values are built against the clock at the start; the clock moves at most a few hours here.
        steps: fc.array(patchBody(now), { minLength: 1, maxLength: 3 }),
        contentType: fc.constantFrom(
          undefined,
          'application/json',
          'text/plain',
          'application/x-www-form-urlencoded',
          'garbage/\u00ff',
        ),
      })
      await holds(w, scenario, 1.5, async (s) => {
        let id: string | undefined
        if (s.target !== 'random') {
          id = await freshForm(
            w,
            s.target === 'expired' ? { expires_in: '1m', context: { c: 1 } } : { context: { c: 1 } },
            s.target === 'other' ? 'other' : 'owner',
          )
          if (s.target === 'cancelled')
            await call(w, { method: 'PATCH', path: `/api/v1/forms/${id}`, as: 'owner', body: '{"status":"cancelled"}' })
          if (s.target === 'completed')
            await call(w, {
              method: 'POST',
              path: `/f/${id}`,
              body: JSON.stringify(EVERY_TYPE_ANSWERS),
              headers: { 'content-type': 'application/json' },
            })
          if (s.target === 'expired') w.t.clock.advance(61_000)
          if (s.target === 'deleted') await call(w, { method: 'DELETE', path: `/api/v1/forms/${id}`, as: 'owner' })
        }
        const path = `/api/v1/forms/${id === undefined ? s.random : shapeId(id, s.shape, s.salt)}`
        const form = id !== undefined && resolvesAs(s.shape) && s.target !== 'other' ? w.forms.get(id) : undefined
        for (const step of s.steps) {
          const before = form && !form.deleted ? modelStatus(w, form) : undefined
          const expiresBefore = form?.expiresAt
          const res = await call(w, {
            method: 'PATCH',
            path,
            as: 'owner',
            body: step.text,
            headers: s.contentType ? { 'content-type': s.contentType } : {},
          })
          let want: number
          if (step.kind === 'invalid' || step.expires?.kind === 'past' || step.expires?.kind === 'bad') want = 422
          else if (before === undefined) want = 404
          else if (step.cancel && (before === 'completed' || before === 'expired')) want = 409
          else if (step.expires !== undefined && before !== 'active') want = 409
          else want = 200
          must(
            res.status === want,
            `PATCH ${show(step.text)} on a ${before ?? 'missing'} form: want ${want}, got ${res.where}`,
          )
          if (want === 404) must(res.body.detail === 'Form not found', res.where)
          if (want !== 200 || step.kind !== 'valid') continue
          const status = step.cancel && before === 'active' ? 'cancelled' : before
          must(res.body.status === status, `status ${res.body.status}, want ${status}`)
          const expiresAt =
            step.expires?.kind === 'future' ? step.expires.ms : step.expires?.kind === 'null' ? null : expiresBefore
          must(
            res.body.expires_at === (expiresAt == null ? null : new Date(expiresAt).toISOString().slice(0, -1)),
            `expires_at ${res.body.expires_at}, want ${expiresAt}`,
          )
          must(
            JSON.stringify(res.body.context) === (status === 'expired' ? 'null' : '{"c":1}'),
            `context ${show(res.body.context)} of a ${status} form`,
          )
        }
      })
    },
    TIMEOUT,
  )
})
