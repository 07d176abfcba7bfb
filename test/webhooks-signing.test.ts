/**
 * The signed form.completed delivery as a receiver sees it (spec 6; CONTRACT 8):
 * its headers, body and signatures, checked with the official Standard Webhooks
 * library. Receivers are real HTTP servers on 127.0.0.1 only.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import packageJson from '../package.json' with { type: 'json' }
import { contextsPerTest, postForm, type Resolver, type TestContext, ULID_PATTERN } from './utils.ts'
import {
  apiTime,
  hexHmac,
  replyWith,
  retryDelay,
  standardVerifier,
  waitForReceived,
  webhookRequests,
} from './webhooks-fixtures.ts'

setDefaultTimeout(20_000)

// ---------------------------------------------------------------- context and cleanup

let t: TestContext
/** `cleanups`: receivers and sockets to stop, run before the app closes, so no attempt is left hanging. */
const { create, cleanups } = contextsPerTest()

const { receiver, advanceAndWake, secretOf, hookedForm, answer, waitForDelivery, waitForAttempts } = webhookRequests(
  () => t,
  cleanups,
)

async function setup(env: Record<string, string> = {}, resolver?: Resolver): Promise<TestContext> {
  return (t = await create(env, { resolver }))
}

// ================================================================= signing and shape

describe('a delivery as the receiver sees it', () => {
  test('carries every documented header, both signatures verify, and the payload is that of spec 6.2', async () => {
    await setup({ SERVICE_TRUST_PROXY: 'true' })
    const rx = receiver()
    const callbackMetadata = { run: 'r-42', tags: ['a', 'b'], nested: { ok: true } }
    const context = { agent: 'planner', step: 3, state: { ids: [1, 2, 3] }, note: 'Zoë' }
    const form = await hookedForm(rx.url, {
      title: 'Trip to Lisbon',
      callback_metadata: callbackMetadata,
      context,
      fields: [
        { key: 'name', type: 'text', label: 'Name', required: true },
        { key: 'guests', type: 'number', label: 'Guests' },
      ],
    })
    t.background.start()
    const receipt = await answer(
      form.id,
      { name: 'Ada', guests: 2 },
      { 'user-agent': 'ua-test/1', 'x-forwarded-for': '203.0.113.7' },
    )
    await waitForReceived(rx, 1)
    const delivery = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered')
    const hook = rx.received[0]!
    const secret = secretOf(form.id)
    expect(secret).toMatch(/^[0-9a-f]{64}$/)

    expect(hook.method).toBe('POST')
    expect(hook.path).toBe('/hook')
    expect(hook.headers['content-type']).toBe('application/json')
    expect(hook.headers['x-service-event']).toBe('form.completed')
    expect(hook.headers['user-agent']).toBe(`intake/${packageJson.version}`)
    expect(hook.headers['x-service-delivery']).toBe(delivery.id)
    expect(hook.headers['webhook-id']).toBe(delivery.id)
    expect(hook.headers['webhook-timestamp']).toBe(String(Math.floor(t.clock() / 1000)))

    // X-Service-Signature: lowercase hex HMAC-SHA256 of the raw body, keyed with the 64-hex secret.
    expect(hook.headers['x-service-signature']).toMatch(/^sha256=[0-9a-f]{64}$/)
    expect(hook.headers['x-service-signature']).toBe(`sha256=${hexHmac(secret, hook.body)}`)
    // Standard Webhooks, checked by the official library; a different secret does not verify.
    expect(standardVerifier(secret).verify(hook.text, hook.headers)).toEqual(JSON.parse(hook.text))
    const otherSecret = secretOf(form.id, (await t.createKey('someone-else')).key)
    expect(() => standardVerifier(otherSecret).verify(hook.text, hook.headers)).toThrow()

    const stored = (await t.api.get(`/forms/${form.id}/responses`)).body[0]
    const payload = JSON.parse(hook.text)
    expect(Object.keys(payload).sort()).toEqual(
      [
        'callback_metadata',
        'completed_at',
        'context',
        'data',
        'event',
        'form_id',
        'form_title',
        'metadata',
        'response_id',
      ].sort(),
    )
    expect(payload).toEqual({
      event: 'form.completed',
      form_id: form.id,
      form_title: 'Trip to Lisbon',
      completed_at: `${stored.submitted_at}Z`,
      response_id: receipt.id,
      data: { name: 'Ada', guests: 2 },
      metadata: { ip: '203.0.113.7', user_agent: 'ua-test/1' },
      callback_metadata: callbackMetadata,
      context,
    })
    expect(payload.completed_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(payload.response_id).toMatch(ULID_PATTERN)
  })

  test('an HTML form post is delivered too; callback_metadata is {} and context null when none were given', async () => {
    await setup()
    const rx = receiver()
    const form = await hookedForm(rx.url, {
      fields: [
        { key: 'name', type: 'text', label: 'Name', required: true },
        { key: 'guests', type: 'number', label: 'Guests' },
        { key: 'agree', type: 'checkbox', label: 'I agree' },
      ],
    })
    t.background.start()
    const posted = await postForm(
      t.app,
      form.id,
      { name: 'Grace', guests: '4' },
      { 'user-agent': 'Mozilla/5.0 (test)' },
    )
    expect(posted.status).toBe(303)
    await waitForReceived(rx, 1)
    const hook = rx.received[0]!
    expect(hook.headers['x-service-signature']).toBe(`sha256=${hexHmac(secretOf(form.id), hook.body)}`)
    expect(() => standardVerifier(secretOf(form.id)).verify(hook.text, hook.headers)).not.toThrow()

    const stored = (await t.api.get(`/forms/${form.id}/responses`)).body[0]
    const payload = JSON.parse(hook.text)
    expect(payload.callback_metadata).toEqual({})
    expect(payload).toHaveProperty('context', null)
    expect(payload.data).toEqual({ name: 'Grace', guests: 4, agree: false })
    expect(payload.data).toEqual(stored.data)
    expect(payload.metadata).toEqual(stored.metadata)
    expect(payload.metadata.user_agent).toBe('Mozilla/5.0 (test)')
    expect(payload.response_id).toBe(stored.id)
    expect(payload.completed_at).toBe(`${stored.submitted_at}Z`)
  })

  test("every attempt of a delivery has the same body bytes and delivery id; webhook-timestamp is the attempt's own time", async () => {
    await setup()
    const rx = receiver(replyWith(500, 503, 200))
    const form = await hookedForm(rx.url, { context: { step: 1 }, callback_metadata: { run: 7 } })
    t.background.start()
    await answer(form.id)
    const times: number[] = [t.clock()]
    await waitForReceived(rx, 1)
    await waitForAttempts(form.id, 1)

    advanceAndWake(retryDelay(1))
    times.push(t.clock())
    await waitForReceived(rx, 2)
    await waitForAttempts(form.id, 2)

    advanceAndWake(retryDelay(2))
    times.push(t.clock())
    await waitForReceived(rx, 3)
    const delivery = await waitForDelivery(form.id, (d) => d.status === 'delivered', 'delivered on the third attempt')

    expect(rx.received).toHaveLength(3)
    expect(delivery.attempts).toBe(3)
    expect(delivery.last_status_code).toBe(200)
    expect(delivery.last_error).toBeNull()
    expect(delivery.delivered_at).toBe(apiTime(times[2]!))
    const secret = secretOf(form.id)
    rx.received.forEach((hook, i) => {
      expect(hook.body.equals(rx.received[0]!.body)).toBe(true)
      expect(hook.headers['x-service-delivery']).toBe(delivery.id)
      expect(hook.headers['webhook-id']).toBe(delivery.id)
      expect(hook.headers['x-service-signature']).toBe(`sha256=${hexHmac(secret, rx.received[0]!.body)}`)
      expect(hook.headers['webhook-timestamp']).toBe(String(Math.floor(times[i]! / 1000)))
      expect(() => standardVerifier(secret).verify(hook.text, hook.headers)).not.toThrow()
    })
    const stamps = rx.received.map((hook) => Number(hook.headers['webhook-timestamp']))
    expect(stamps[1]! - stamps[0]!).toBe(1)
    expect(stamps[2]! - stamps[0]!).toBe(6)
  })
})
