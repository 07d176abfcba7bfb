/**
 * The HTTP API's smoke on PostgreSQL: one form's life through the services on
 * the PostgreSQL store, for what only shows end to end there (races the
 * database decides with row locks and unique keys, whose failed statements
 * end a PostgreSQL transaction; waits woken on the same server; a file in
 * chunks). Every store method on both databases: test/store/; several
 * servers: instances.test.ts; the binary: e2e/postgres.test.ts.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { POSTGRES, skipWithout } from './prerequisites.ts'
import { createTestContext, postForm, submit, type TestContext, until } from './utils.ts'

const skipPostgres = skipWithout(POSTGRES)

let t: TestContext | undefined
afterEach(async () => {
  await t?.close()
  t = undefined
})

interface FeedEvent {
  type: string
  form_id: string
}

describe.skipIf(skipPostgres)('the HTTP API on PostgreSQL', () => {
  test('one Idempotency-Key sent 10 times at once makes one form; of 10 answers at once one is taken', async () => {
    t = await createTestContext({}, { store: 'postgres' })
    const { api, app } = t
    const created = await Promise.all(
      Array.from({ length: 10 }, () =>
        api.post(
          '/forms',
          { title: 'Once', fields: [{ key: 'name', type: 'text', label: 'Name' }] },
          { 'Idempotency-Key': 'same' },
        ),
      ),
    )
    expect(created.every((res) => res.status === 201 || res.status === 200)).toBe(true)
    const ids = new Set(created.map((res) => res.body.id))
    expect(ids.size).toBe(1)
    const [formId] = [...ids] as [string]
    expect((await api.get('/forms')).body.map((form: { id: string }) => form.id)).toEqual([formId])

    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => submit(app, formId, { name: `person ${i}` })),
    )
    expect(answers.filter((res) => res.status === 201)).toHaveLength(1)
    expect(answers.filter((res) => res.status === 409)).toHaveLength(9)
    const responses = (await api.get(`/forms/${formId}/responses`)).body
    expect(responses).toHaveLength(1)
    expect((await api.get(`/forms/${formId}`)).body.status).toBe('completed')
  })

  test("a form's life: a long-poll woken by the answer, its file byte for byte, the webhook sent and redelivered, the feed", async () => {
    const arrivals: string[] = []
    const receiver = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch(request) {
        arrivals.push(request.headers.get('x-service-delivery') ?? '')
        return new Response('ok')
      },
    })
    try {
      t = await createTestContext({}, { store: 'postgres' })
      const { api, app } = t
      t.background.start()
      const form = await api.createForm({
        title: 'Schadensmeldung',
        context: { ticket: 'é \u{1F600}' },
        callback_url: `http://127.0.0.1:${receiver.port}/hook`,
        fields: [
          { key: 'name', type: 'text', label: 'Name', required: true },
          { key: 'photo', type: 'file', label: 'Foto', config: { max_size: 2 * 1024 * 1024 } },
        ],
      })
      const wait = api.get(`/forms/${form.id}/responses?wait=30`)
      // Larger than a chunk (512 KiB): the file comes back from several.
      const photo = Uint8Array.from({ length: 700 * 1024 }, (_, i) => (i * 31) % 256)
      const body = new FormData()
      body.append('name', 'Anna Müller')
      body.append('photo', new File([photo], 'IMG.jpg', { type: 'image/jpeg' }))
      expect((await postForm(app, form.id, body)).status).toBeLessThan(400)
      const [response] = (await wait).body
      expect(response.data.name).toBe('Anna Müller')
      const file = await api.get(`/forms/${form.id}/responses/${response.id}/files/photo`)
      expect(file.status).toBe(200)
      const bytes = await (
        await app.handle(
          new Request(`http://intake.test/api/v1/forms/${form.id}/responses/${response.id}/files/photo`, {
            headers: { authorization: `Bearer ${t.key}` },
          }),
        )
      ).bytes()
      expect(bytes).toEqual(photo)

      const delivered = async () => (await api.get(`/forms/${form.id}/deliveries`)).body[0]
      await until(async () => (await delivered())?.status === 'delivered', 10_000, 'the webhook')
      const delivery = await delivered()
      expect(delivery.attempts).toBe(1)
      expect((await api.post(`/forms/${form.id}/deliveries/${delivery.id}/redeliver`)).status).toBe(202)
      await until(() => arrivals.length === 2, 10_000, 'the redelivery')
      expect(arrivals).toEqual([delivery.id, delivery.id])

      const feedOf = async () =>
        ((await api.get('/events')).body.events as FeedEvent[]).map((event) => [event.type, event.form_id])
      expect(await feedOf()).toEqual([['form.completed', form.id]])
      const cancelled = await api.createForm()
      expect((await api.patch(`/forms/${cancelled.id}`, { status: 'cancelled' })).status).toBe(200)
      // Deleting a form leaves only its form.deleted in the feed.
      expect((await api.delete(`/forms/${form.id}`)).status).toBeLessThan(300)
      expect(await feedOf()).toEqual([
        ['form.cancelled', cancelled.id],
        ['form.deleted', form.id],
      ])
      expect((await api.get('/forms?status=cancelled')).body.map((f: { id: string }) => f.id)).toEqual([cancelled.id])
    } finally {
      receiver.stop(true)
    }
  })

  test('the sweep expires a form past its time: the API and the feed say so', async () => {
    t = await createTestContext({}, { store: 'postgres' })
    const form = await t.api.createForm({ expires_in: '1m', context: { secret: 'gone after expiry' } })
    t.clock.advance(61_000)
    // Expired in every read at once, written by the sweep.
    expect((await t.api.get(`/forms/${form.id}`)).body).toMatchObject({ status: 'expired', context: null })
    t.background.start()
    await until(
      async () => ((await t!.api.get('/events')).body.events as FeedEvent[]).some((e) => e.type === 'form.expired'),
      10_000,
      'the form.expired event',
    )
    expect((await submit(t.app, form.id, { name: 'late' })).status).toBe(410)
  })
})
