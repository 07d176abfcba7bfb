/**
 * Several servers on one PostgreSQL database, in one process (CONTRACT 10):
 * a long-poll on one server woken by an answer, a cancel, a delete or an
 * expiry made through another (by notification), and by the poll while its
 * notification connection is down; `alone`, which lets one of several
 * starting servers make the first key. The real binaries, several at once:
 * test/e2e/instances.test.ts.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { SQL } from 'bun'
import { type Bound, reportFigure } from './figures.ts'
import { POSTGRES, skipWithout, TEST_DATABASE_URL } from './prerequisites.ts'
import { apiClient, createTestContext, submit, type TestContext, until } from './utils.ts'

const skipPostgres = skipWithout(POSTGRES)
setDefaultTimeout(30_000)

/**
 * Only a hang takes this long; a wait of 30 s that was never woken answers
 * later still. How soon a wait wakes (CONTRACT 10's second) is reported for
 * bench/check-bounds.ts, not asserted.
 */
const HANG_MS = 20_000

let t: TestContext
afterEach(async () => {
  await t?.close()
})

/** A promise whose settling can be seen without awaiting it, and when it settled. */
function track<T>(promise: Promise<T>) {
  const state: { settled: boolean; settledAt: number; promise: Promise<T> } = { settled: false, settledAt: 0, promise }
  const done = () => {
    state.settled = true
    state.settledAt = performance.now()
  }
  promise.then(done, done)
  return state
}

/** Two servers on one fresh database: `one` (the test context's) and `other`, each with its own store and notifications. */
async function twoServers() {
  t = await createTestContext({}, { store: 'postgres' })
  const other = await t.anotherServer()
  return { one: t.api, other: apiClient(other.app, t.key), otherServer: other }
}

/** A long-poll on `server`, checked to be held: it answers only once something changes. */
async function heldWait(server: ReturnType<typeof apiClient>, formId: string) {
  const waiter = track(server.get(`/forms/${formId}/responses?wait=30`))
  await Bun.sleep(300)
  expect(waiter.settled).toBe(false)
  return waiter
}

/** The wait's answer once it is woken; how long after `changedAt` that was is reported against `bound`. */
async function woken<T>(
  waiter: ReturnType<typeof track<T>>,
  changedAt: number,
  bound: Bound,
  what: string,
): Promise<T> {
  await until(() => waiter.settled, HANG_MS, what)
  reportFigure(bound, what, waiter.settledAt - changedAt)
  return waiter.promise
}

describe.skipIf(skipPostgres)('several servers on one PostgreSQL database', () => {
  test('a long-poll on one server answers once an answer is made through another', async () => {
    const { one, other } = await twoServers()
    const form = await one.createForm()
    const waiter = await heldWait(other, form.id)
    const answeredAt = performance.now()
    const receipt = await submit(t.app, form.id, { name: 'Ada' })
    expect(receipt.status).toBe(201)
    const res = await woken(
      waiter,
      answeredAt,
      'wake across servers (ms)',
      'a long-poll woken by an answer through another server',
    )
    expect(res.status).toBe(200)
    expect(res.body.map((response: { id: string }) => response.id)).toEqual([receipt.body.id])
  })

  test('and of a cancel (the form comes back with no response) and a delete (404) made through another', async () => {
    const { one, other } = await twoServers()
    const cancelled = await one.createForm()
    const deleted = await one.createForm()
    const cancelWaiter = await heldWait(other, cancelled.id)
    const deleteWaiter = await heldWait(other, deleted.id)

    let changedAt = performance.now()
    expect((await one.patch(`/forms/${cancelled.id}`, { status: 'cancelled' })).status).toBe(200)
    const afterCancel = await woken(
      cancelWaiter,
      changedAt,
      'wake across servers (ms)',
      'a long-poll woken by a cancel through another server',
    )
    expect({ status: afterCancel.status, body: afterCancel.body }).toEqual({ status: 200, body: [] })

    changedAt = performance.now()
    expect((await one.delete(`/forms/${deleted.id}`)).status).toBe(204)
    const afterDelete = await woken(
      deleteWaiter,
      changedAt,
      'wake across servers (ms)',
      'a long-poll woken by a delete through another server',
    )
    expect({ status: afterDelete.status, body: afterDelete.body }).toEqual({
      status: 404,
      body: { detail: 'Form not found' },
    })
  })

  test('and of an expiry that another server wrote', async () => {
    const { one, other } = await twoServers()
    const form = await one.createForm({ expires_in: '1m' })
    const waiter = await heldWait(other, form.id)
    // Only the first server's sweep runs: it writes the expiry; the second hears of it.
    t.background.start()
    t.clock.advance(61_000)
    const expiredAt = performance.now()
    // The sweep looks at least once a second.
    const res = await woken(
      waiter,
      expiredAt,
      'wake by an expiry another server wrote (ms)',
      'a long-poll woken by an expiry another server wrote',
    )
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: [] })
    expect((await other.get(`/forms/${form.id}`)).body.status).toBe('expired')
  })

  test('a wake that finds nothing changed keeps the long-poll waiting: another form answered, or every form said to have changed', async () => {
    const { one, other } = await twoServers()
    const waited = await one.createForm()
    const neighbour = await one.createForm()
    const waiter = await heldWait(other, waited.id)
    expect((await submit(t.app, neighbour.id, { name: 'Grace' })).status).toBe(201)
    await Bun.sleep(300)
    expect(waiter.settled).toBe(false)
    // Listening again after its connection was cut, a server is told that any form may have changed.
    const listening = async () =>
      (
        await t.sql(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`)
      ).map((row) => row.pid)
    const before = await listening()
    expect(before).toHaveLength(2)
    await t.sql(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`,
    )
    await until(
      async () => (await listening()).filter((pid) => !before.includes(pid)).length === 2,
      5000,
      'both servers to listen again',
    )
    await Bun.sleep(300)
    expect(waiter.settled).toBe(false)
    const answeredAt = performance.now()
    expect((await submit(t.app, waited.id, { name: 'Ada' })).status).toBe(201)
    const res = await woken(
      waiter,
      answeredAt,
      'wake across servers (ms)',
      'the long-poll woken by its own form, after a wake for another',
    )
    expect(res.body).toHaveLength(1)
  })

  test('with its notification connection down, a long-poll still hears of an answer made through another server (the poll every 5 s)', async () => {
    const { one, other } = await twoServers()
    const form = await one.createForm()
    const waiter = await heldWait(other, form.id)
    // Every listening connection is cut and none can come back (no new connection is let in);
    // the connections already open (each server's pool) go on working.
    const name = (await t.sql('SELECT current_database() AS name'))[0]!.name as string
    const admin = new SQL(TEST_DATABASE_URL, { max: 1 })
    await admin.unsafe(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`)
    try {
      const cut = await t.sql(
        `SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`,
      )
      expect(cut).toHaveLength(2)
      const answeredAt = performance.now()
      expect((await submit(t.app, form.id, { name: 'Ada' })).status).toBe(201)
      const res = await woken(
        waiter,
        answeredAt,
        'wake by the poll, notification lost (ms)',
        'a long-poll whose notification was lost',
      )
      expect(res.body).toHaveLength(1)
    } finally {
      await admin.unsafe(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`)
      await admin.close()
    }
  }, 30_000)

  test('webhooks with two servers sending: each answer delivered once, on its first attempt', async () => {
    const { one, other, otherServer } = await twoServers()
    const arrivals: Array<{ id: string; at: number }> = []
    const receiver = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch(request) {
        arrivals.push({ id: request.headers.get('x-service-delivery') ?? '', at: performance.now() })
        return new Response('ok')
      },
    })
    try {
      t.background.start()
      otherServer.background.start()
      const servers = [t.app, otherServer.app]
      const answeredAt = new Map<string, number>()
      const forms = await Promise.all(
        Array.from({ length: 20 }, () => one.createForm({ callback_url: `http://127.0.0.1:${receiver.port}/hook` })),
      )
      await Promise.all(
        forms.map(async (form, i) => {
          const sentAt = performance.now()
          expect((await submit(servers[i % 2]!, form.id, { name: `person ${i}` })).status).toBe(201)
          answeredAt.set(form.id, sentAt)
        }),
      )
      await until(() => arrivals.length >= 20, HANG_MS, '20 deliveries')
      // Each outcome is recorded after its receiver answered: on a busy machine, a moment later.
      const deliveryOf = async (formId: string) => (await other.get(`/forms/${formId}/deliveries`)).body[0]
      await until(
        async () => (await Promise.all(forms.map((form) => deliveryOf(form.id)))).every((d) => d.status !== 'pending'),
        HANG_MS,
        'every outcome recorded',
      )
      expect(arrivals).toHaveLength(20)
      expect(new Set(arrivals.map((arrival) => arrival.id)).size).toBe(20)
      const delays: number[] = []
      for (const form of forms) {
        const delivery = await deliveryOf(form.id)
        expect({ status: delivery.status, attempts: delivery.attempts }).toEqual({ status: 'delivered', attempts: 1 })
        delays.push(arrivals.find((arrival) => arrival.id === delivery.id)!.at - answeredAt.get(form.id)!)
      }
      delays.sort((a, b) => a - b)
      console.log(
        `answer sent → first attempt arrived, two servers sending: median ${delays[10]!.toFixed(1)} ms, max ${delays[19]!.toFixed(1)} ms`,
      )
    } finally {
      receiver.stop(true)
    }
  })

  test('`alone`: of servers starting at once, one runs at a time (the first key is made once)', async () => {
    const { otherServer } = await twoServers()
    const third = await t.anotherServer()
    const log: string[] = []
    const work = (name: string) => async () => {
      log.push(`${name} in`)
      await Bun.sleep(100)
      log.push(`${name} out`)
      return name
    }
    const ran = await Promise.all([
      t.store.alone(work('a')),
      otherServer.store.alone(work('b')),
      third.store.alone(work('c')),
    ])
    expect(ran).toEqual(['a', 'b', 'c'])
    // Each `in` is followed by its own `out`: no two overlapped.
    for (let i = 0; i < log.length; i += 2) expect(log[i + 1]).toBe(log[i]!.replace(' in', ' out'))
    expect(log).toHaveLength(6)
  })
})

describe.skipIf(skipPostgres)("the account's event feed on several servers (CONTRACT 12)", () => {
  /** A feed read held on `server` from `after`, checked to be held. */
  async function heldFeedWait(server: ReturnType<typeof apiClient>, after: string) {
    const waiter = track(server.get(`/events?after=${after}&wait=30`))
    await Bun.sleep(300)
    expect(waiter.settled).toBe(false)
    return waiter
  }

  test('a feed wait on one server answers once a cancel is made through another, with that event', async () => {
    const { one, other } = await twoServers()
    const form = await one.createForm()
    const head = (await other.get('/events?after=latest')).body.next
    const waiter = await heldFeedWait(other, head)
    const cancelledAt = performance.now()
    expect((await one.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
    const res = await woken(
      waiter,
      cancelledAt,
      'wake across servers (ms)',
      'a feed wait woken by a cancel through another server',
    )
    expect(res.body.events.map((event: { type: string; form_id: string }) => [event.type, event.form_id])).toEqual([
      ['form.cancelled', form.id],
    ])
    expect(res.body.next).toBe(res.body.events[0].id)
  })

  test('with its notification connection down, a feed wait still hears of an answer made through another server (the poll every 5 s)', async () => {
    const { one, other } = await twoServers()
    const form = await one.createForm()
    const waiter = await heldFeedWait(other, (await other.get('/events?after=latest')).body.next)
    const name = (await t.sql('SELECT current_database() AS name'))[0]!.name as string
    const admin = new SQL(TEST_DATABASE_URL, { max: 1 })
    await admin.unsafe(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`)
    try {
      expect(
        await t.sql(
          `SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`,
        ),
      ).toHaveLength(2)
      const answeredAt = performance.now()
      expect((await submit(t.app, form.id, { name: 'Ada' })).status).toBe(201)
      const res = await woken(
        waiter,
        answeredAt,
        'wake by the poll, notification lost (ms)',
        'a feed wait whose notification was lost',
      )
      expect(res.body.events.map((event: { type: string }) => event.type)).toEqual(['form.completed'])
    } finally {
      await admin.unsafe(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`)
      await admin.close()
    }
  }, 30_000)

  test('racing writers of one account on two servers: a reader following `next` sees neither early, both once, in commit order', async () => {
    const { one, otherServer } = await twoServers()
    const accountId = (await t.sql('SELECT id FROM accounts'))[0]!.id as string
    const event = (formId: string) => ({
      accountId,
      formId,
      type: 'form.deleted' as const,
      occurredAt: t.clock(),
      payload: JSON.stringify({ form_id: formId }),
      createdAt: t.clock(),
    })
    const first = '01J0000000000000000000000A'
    const second = '01J0000000000000000000000B'
    const start = (await one.get('/events?after=latest')).body.next

    // The first writer has written its event but not committed when the second writer, on another
    // server, writes one for the same account: the second waits for the first (the account's next
    // number is the first's until it commits), and nothing of either is readable meanwhile.
    const gate = Promise.withResolvers<void>()
    const appended = Promise.withResolvers<void>()
    const firstWriter = t.store.transaction(async (tx) => {
      await tx.events.append(event(first))
      appended.resolve()
      await gate.promise
    })
    await appended.promise
    const secondWriter = track(otherServer.store.transaction((tx) => tx.events.append(event(second))))
    const waiter = await heldFeedWait(one, start)
    expect(secondWriter.settled).toBe(false)
    expect(await t.sql('SELECT form_id FROM events')).toEqual([])
    expect((await one.get(`/events?after=${start}`)).body).toEqual({ events: [], next: start })

    gate.resolve()
    await firstWriter
    await secondWriter.promise
    const res = await woken(
      waiter,
      performance.now(),
      'wake across servers (ms)',
      'a feed wait once the writers committed',
    )
    const seen = res.body.events.map((e: { form_id: string }) => e.form_id)
    // Woken by the first commit, it may answer before the second: what it has is the start of the order.
    expect([first, second].slice(0, seen.length)).toEqual(seen)
    const rest = (await one.get(`/events?after=${res.body.next}`)).body
    expect([...seen, ...rest.events.map((e: { form_id: string }) => e.form_id)]).toEqual([first, second])
    // A reader one event at a time visits both, once each.
    const one1 = (await one.get(`/events?after=${start}&limit=1`)).body
    const one2 = (await one.get(`/events?after=${one1.next}&limit=1`)).body
    expect([...one1.events, ...one2.events].map((e: { form_id: string }) => e.form_id)).toEqual([first, second])
    expect((await one.get(`/events?after=${one2.next}`)).body).toEqual({ events: [], next: one2.next })
  })
})
