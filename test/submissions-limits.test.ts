/**
 * The JSON submission path, POST /f/<id> (CONTRACT 5, 7; spec 6.2): the per-IP
 * public rate limit, exactly one response under concurrency, and the webhook
 * delivery written with the response (the database is read directly for it).
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { expectReceipt, HOOK, submissionRequests } from './submissions-fixtures.ts'
import { createTestContext, EVERY_TYPE_ANSWERS, EVERY_TYPE_FIELDS, submit, type TestContext } from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())
const { responsesOf, onlyResponse, formStatus, deliveries } = submissionRequests(() => t)

// ------------------------------------------------------------ public rate limit

describe('the per-IP public rate limit', () => {
  async function forms(ctx: TestContext, n: number) {
    const ids: string[] = []
    for (let i = 0; i < n; i++) ids.push((await ctx.api.createForm()).id)
    return ids
  }
  const from = (ip: string) => ({ 'x-forwarded-for': ip })

  test('the 4th POST from one address within the minute is 429 with Retry-After; another address still passes; 60 s later the first passes again', async () => {
    const ctx = await createTestContext({ SERVICE_PUBLIC_RATE_LIMIT: '3', SERVICE_TRUST_PROXY: 'true' })
    try {
      const ids = await forms(ctx, 6)
      for (let i = 0; i < 3; i++)
        expectReceipt(await submit(ctx.app, ids[i]!, { name: 'Ada' }, from('203.0.113.1')), ids[i]!)

      const limited = await submit(ctx.app, ids[3]!, { name: 'Ada' }, from('203.0.113.1'))
      expect(limited.status).toBe(429)
      expect(typeof limited.body.detail).toBe('string')
      const retryAfter = limited.headers.get('retry-after')
      expect(retryAfter).toMatch(/^[0-9]+$/)
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
      expect(Number(retryAfter)).toBeLessThanOrEqual(60)
      expect(await responsesOf(ids[3]!, ctx)).toEqual([])

      // Another address has its own allowance.
      expectReceipt(await submit(ctx.app, ids[3]!, { name: 'Ada' }, from('198.51.100.2')), ids[3]!)

      ctx.clock.advance(60_000)
      expectReceipt(await submit(ctx.app, ids[4]!, { name: 'Ada' }, from('203.0.113.1')), ids[4]!)
    } finally {
      ctx.close()
    }
  })

  test('rejected submissions count too', async () => {
    const ctx = await createTestContext({ SERVICE_PUBLIC_RATE_LIMIT: '3', SERVICE_TRUST_PROXY: 'true' })
    try {
      const [id] = await forms(ctx, 1)
      for (let i = 0; i < 3; i++) expect((await submit(ctx.app, id!, {}, from('203.0.113.1'))).status).toBe(422)
      expect((await submit(ctx.app, id!, { name: 'Ada' }, from('203.0.113.1'))).status).toBe(429)
      expect(await responsesOf(id!, ctx)).toEqual([])
    } finally {
      ctx.close()
    }
  })

  test('waiting Retry-After seconds is enough to be let in again', async () => {
    const ctx = await createTestContext({ SERVICE_PUBLIC_RATE_LIMIT: '3', SERVICE_TRUST_PROXY: 'true' })
    try {
      const ids = await forms(ctx, 5)
      for (let i = 0; i < 3; i++)
        expect((await submit(ctx.app, ids[i]!, { name: 'Ada' }, from('203.0.113.1'))).status).toBe(201)
      const limited = await submit(ctx.app, ids[3]!, { name: 'Ada' }, from('203.0.113.1'))
      expect(limited.status).toBe(429)
      ctx.clock.advance(Number(limited.headers.get('retry-after')) * 1000)
      expectReceipt(await submit(ctx.app, ids[3]!, { name: 'Ada' }, from('203.0.113.1')), ids[3]!)
    } finally {
      ctx.close()
    }
  })

  test('without SERVICE_TRUST_PROXY a changing X-Forwarded-For does not escape the limit', async () => {
    const ctx = await createTestContext({ SERVICE_PUBLIC_RATE_LIMIT: '3' })
    try {
      const ids = await forms(ctx, 4)
      for (let i = 0; i < 3; i++)
        expect((await submit(ctx.app, ids[i]!, { name: 'Ada' }, from(`203.0.113.${i + 1}`))).status).toBe(201)
      expect((await submit(ctx.app, ids[3]!, { name: 'Ada' }, from('203.0.113.99'))).status).toBe(429)
    } finally {
      ctx.close()
    }
  })
})

// ------------------------------------------------------------ concurrency

describe('exactly one response under concurrency', () => {
  test.each([
    ['without a callback_url', {}],
    ['with a callback_url', { callback_url: HOOK }],
  ] as const)('20 simultaneous submissions %s: one 201, nineteen 409', async (_mode, extra) => {
    const form = await t.api.createForm(extra)
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        submit(t.app, form.id, { name: `person-${i}` }, { 'user-agent': `agent-${i}` }).then((res) => ({ i, res })),
      ),
    )
    const created = results.filter(({ res }) => res.status === 201)
    const conflicts = results.filter(({ res }) => res.status === 409)
    expect(created).toHaveLength(1)
    expect(conflicts).toHaveLength(19)
    for (const { res } of conflicts) expect(typeof res.body.detail).toBe('string')

    const winner = created[0]!
    expectReceipt(winner.res, form.id)
    const stored = await onlyResponse(form.id)
    expect(stored.id).toBe(winner.res.body.id)
    expect(stored.submitted_at).toBe(winner.res.body.submitted_at)
    expect(stored.data).toEqual({ name: `person-${winner.i}` })
    expect(stored.metadata.user_agent).toBe(`agent-${winner.i}`)
    expect(await formStatus(form.id)).toBe('completed')

    const rows = await deliveries()
    if ('callback_url' in extra) {
      expect(rows).toHaveLength(1)
      expect(rows[0].response_id).toBe(winner.res.body.id)
      expect(JSON.parse(rows[0].payload).data).toEqual({ name: `person-${winner.i}` })
    } else {
      expect(rows).toHaveLength(0)
    }
  })
})

describe('an answer racing a cancellation', () => {
  test('each of 30 forms ends one way: answered (201, completed, its response) or cancelled (200, no response), never both', async () => {
    const forms = await Promise.all(Array.from({ length: 30 }, () => t.api.createForm()))
    const outcomes = await Promise.all(
      forms.map(async (form) => {
        const [answer, cancel] = await Promise.all([
          submit(t.app, form.id, { name: 'Ada' }),
          t.api.patch(`/forms/${form.id}`, { status: 'cancelled' }),
        ])
        const status = await formStatus(form.id)
        const responses = (await t.api.get(`/forms/${form.id}/responses`)).body as unknown[]
        return { answer: answer.status, cancel: cancel.status, status, responses: responses.length }
      }),
    )
    for (const outcome of outcomes) {
      expect([
        { answer: 201, cancel: 409, status: 'completed', responses: 1 },
        { answer: 410, cancel: 200, status: 'cancelled', responses: 0 },
      ]).toContainEqual(outcome)
    }
  })
})

// ------------------------------------------------------------ webhook outbox

describe('the webhook delivery written with the response', () => {
  const PAYLOAD_KEYS = [
    'callback_metadata',
    'completed_at',
    'context',
    'data',
    'event',
    'form_id',
    'form_title',
    'metadata',
    'response_id',
  ]

  test('one row whose payload has the spec 6.2 shape', async () => {
    const context = { step: 3, nested: { list: [1, 'two', null], flag: true }, text: 'Zoë' }
    const callback_metadata = { ticket: 'T-42', n: 7 }
    const form = await t.api.createForm({
      title: 'Dinner RSVP',
      fields: EVERY_TYPE_FIELDS,
      callback_url: HOOK,
      callback_metadata,
      context,
    })
    const res = await submit(t.app, form.id, EVERY_TYPE_ANSWERS, { 'user-agent': 'ua-test/1' })
    expectReceipt(res, form.id)
    const stored = await onlyResponse(form.id)

    const rows = await deliveries()
    expect(rows).toHaveLength(1)
    const row = rows[0]
    expect(row.form_id).toBe(form.id)
    expect(row.response_id).toBe(res.body.id)
    expect(row.event).toBe('form.completed')
    expect(row.url).toBe(HOOK)

    const payload = JSON.parse(row.payload)
    expect(Object.keys(payload).sort()).toEqual(PAYLOAD_KEYS)
    expect(payload.event).toBe('form.completed')
    expect(payload.form_id).toBe(form.id)
    expect(payload.form_title).toBe('Dinner RSVP')
    expect(payload.completed_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/)
    expect(new Date(payload.completed_at).getTime()).toBe(new Date(`${res.body.submitted_at}Z`).getTime())
    expect(payload.response_id).toBe(res.body.id)
    expect(payload.data).toEqual(EVERY_TYPE_ANSWERS)
    expect(payload.data).toEqual(stored.data)
    expect(payload.metadata).toEqual({ ip: null, user_agent: 'ua-test/1' })
    expect(payload.metadata).toEqual(stored.metadata)
    expect(payload.callback_metadata).toEqual(callback_metadata)
    expect(payload.context).toEqual(context)
  })

  test('callback_metadata is {} and context null when none were given', async () => {
    const form = await t.api.createForm({ callback_url: HOOK })
    expectReceipt(await submit(t.app, form.id, { name: 'Ada' }), form.id)
    const rows = await deliveries()
    expect(rows).toHaveLength(1)
    const payload = JSON.parse(rows[0].payload)
    expect(payload.callback_metadata).toEqual({})
    expect(payload.context).toBeNull()
    expect(Object.hasOwn(payload, 'context')).toBe(true)
    expect(payload.data).toEqual({ name: 'Ada' })
  })

  test('the payload records the trusted-proxy ip', async () => {
    const ctx = await createTestContext({ SERVICE_TRUST_PROXY: 'true' })
    try {
      const form = await ctx.api.createForm({ callback_url: HOOK })
      expectReceipt(
        await submit(ctx.app, form.id, { name: 'Ada' }, { 'x-forwarded-for': '10.1.1.1, 203.0.113.9' }),
        form.id,
      )
      const rows = await deliveries(ctx)
      expect(rows).toHaveLength(1)
      expect(JSON.parse(rows[0].payload).metadata).toEqual({ ip: '203.0.113.9', user_agent: null })
    } finally {
      ctx.close()
    }
  })

  test('no row without a callback_url', async () => {
    const form = await t.api.createForm()
    expectReceipt(await submit(t.app, form.id, { name: 'Ada' }), form.id)
    expect(await deliveries()).toEqual([])
  })

  test('no row for a refused submission (422, 409, 410)', async () => {
    const invalidForm = await t.api.createForm({ callback_url: HOOK })
    expect((await submit(t.app, invalidForm.id, {})).status).toBe(422)
    expect(await deliveries()).toEqual([])

    const done = await t.api.createForm({ callback_url: HOOK })
    expectReceipt(await submit(t.app, done.id, { name: 'Ada' }), done.id)
    expect((await submit(t.app, done.id, { name: 'Grace' })).status).toBe(409)
    expect(await deliveries()).toHaveLength(1)

    const cancelled = await t.api.createForm({ callback_url: HOOK })
    expect((await t.api.patch(`/forms/${cancelled.id}`, { status: 'cancelled' })).status).toBe(200)
    expect((await submit(t.app, cancelled.id, { name: 'Ada' })).status).toBe(410)
    expect(await deliveries()).toHaveLength(1)
  })
})
