/**
 * Several real dist/intake instances on one PostgreSQL database (CONTRACT
 * 10): racing answers and Idempotency-Keys, state and files seen by every
 * instance, long-polls and revocations heard across instances within 1 s,
 * a kill -9 with deliveries claimed, concurrent first starts, SIGTERM under
 * load, and a rolling restart under load with a ledger of what was
 * acknowledged (INTAKE_INSTANCE_ROUNDS rounds, 1 unless set;
 * bench/instances-rounds.ts runs 20).
 *
 * Databases are made fresh on INTAKE_TEST_DATABASE_URL's server. Every
 * server, receiver and client is on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { reportFigure } from '../figures.ts'
import { freshPostgresDatabase } from '../postgres.ts'
import { POSTGRES, skipWithout, TEST_DATABASE_URL } from '../prerequisites.ts'
import {
  keysIn,
  killAllChildren,
  type RunningIntake,
  request,
  runIntake,
  startIntake,
  useBuiltBinary,
} from './binary.ts'
import {
  awaitDeliveries,
  describeRound,
  findLost,
  INSTANCE_SETTINGS,
  type ReceivedDelivery,
  RoundRobin,
  rollingRestart,
  startInstance,
  startInstances,
  startLoad,
  until,
  type WebhookReceiver,
  webhookReceiver,
} from './instances.ts'

const skipPostgres = skipWithout(POSTGRES)
const intake = useBuiltBinary('intake-instances-')
const databases: Array<{ drop(): Promise<void> }> = []
const receivers: WebhookReceiver[] = []
const ROUNDS = Number(process.env.INTAKE_INSTANCE_ROUNDS ?? 1)

afterAll(async () => {
  // Nothing may hold a connection to a database being dropped.
  await killAllChildren()
  for (const database of databases) await database.drop().catch(() => {})
  for (const receiver of receivers) await receiver.stop()
}, 60_000)

/** A webhook receiver, stopped after the file's tests even when a test fails half-way. */
function receiver(options: Parameters<typeof webhookReceiver>[0] = {}): WebhookReceiver {
  const started = webhookReceiver(options)
  receivers.push(started)
  return started
}

async function freshDatabase(): Promise<string> {
  const database = await freshPostgresDatabase(TEST_DATABASE_URL, { migrated: false })
  databases.push(database)
  return database.url
}

const FORM = { title: 'Instances', fields: [{ key: 'name', type: 'text', label: 'Name' }] }
const FILE_FORM = {
  title: 'Instances with a file',
  fields: [
    { key: 'name', type: 'text', label: 'Name' },
    { key: 'file', type: 'file', label: 'File', config: { max_size: 2_000_000 } },
  ],
}

/** A form's API URL as another instance serves it: URLs in responses name the instance that wrote them. */
const servedBy = (instance: RunningIntake, url: string) => url.replace(/^http:\/\/localhost:\d+/, instance.url)

async function createForm(instance: RunningIntake, key: string, body: unknown = FORM): Promise<string> {
  const created = await request(`${instance.url}/api/v1/forms`, { key, body })
  expect(created.status).toBe(201)
  return created.body.id
}

describe.skipIf(skipPostgres)('three instances on one database', () => {
  let instances: RunningIntake[] = []
  let key = ''
  let databaseUrl = ''

  beforeAll(async () => {
    if (skipPostgres) return
    databaseUrl = await freshDatabase()
    ;({ instances, key } = await startInstances(intake.path, { databaseUrl, cwd: intake.tempDir(), count: 3 }))
  }, 60_000)

  test('racing answers: of 6 sent at once to a form over the three instances, one is 201 and five 409; every instance reads that one', async () => {
    const formIds = await Promise.all(Array.from({ length: 60 }, (_, i) => createForm(instances[i % 3]!, key)))
    const answers = await Promise.all(
      formIds.map((formId) =>
        Promise.all(
          Array.from({ length: 6 }, (_, j) =>
            request(`${instances[j % 3]!.url}/f/${formId}`, { body: { name: `answer ${j}` } }),
          ),
        ),
      ),
    )
    for (const [i, formId] of formIds.entries()) {
      const statuses = answers[i]!.map((answer) => answer.status).sort()
      expect({ formId, statuses }).toEqual({ formId, statuses: [201, 409, 409, 409, 409, 409] })
      const receipt = answers[i]!.find((answer) => answer.status === 201)!.body
      for (const instance of instances) {
        const responses = (await request(`${instance.url}/api/v1/forms/${formId}/responses`, { key })).body as Array<{
          id: string
        }>
        expect(responses.map((r) => r.id)).toEqual([receipt.id])
      }
    }
  }, 60_000)

  test('one Idempotency-Key sent to the three instances at once makes one form', async () => {
    const title = `Idempotent ${crypto.randomUUID()}`
    for (let attempt = 0; attempt < 10; attempt++) {
      const idempotencyKey = crypto.randomUUID()
      const sent = await Promise.all(
        instances.map((instance) =>
          request(`${instance.url}/api/v1/forms`, {
            key,
            body: { ...FORM, title },
            headers: { 'idempotency-key': idempotencyKey },
          }),
        ),
      )
      // A duplicate still in flight may be 409; every other answer is the one form.
      for (const answer of sent) expect([201, 409]).toContain(answer.status)
      const ids = new Set(sent.filter((answer) => answer.status === 201).map((answer) => answer.body.id))
      expect(ids.size).toBe(1)
      const again = await request(`${instances[attempt % 3]!.url}/api/v1/forms`, {
        key,
        body: { ...FORM, title },
        headers: { 'idempotency-key': idempotencyKey },
      })
      expect(again.status).toBe(201)
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      expect(ids.has(again.body.id)).toBe(true)
    }
    const listed = (await request(`${instances[0]!.url}/api/v1/forms?limit=100`, { key })).body as Array<{
      title: string
    }>
    expect(listed.filter((form) => form.title === title)).toHaveLength(10)
  }, 30_000)

  test('a cancel through one instance is seen by the others at once; a file uploaded through one downloads through another byte for byte', async () => {
    const cancelled = await createForm(instances[0]!, key)
    expect(
      (
        await request(`${instances[0]!.url}/api/v1/forms/${cancelled}`, {
          key,
          method: 'PATCH',
          body: { status: 'cancelled' },
        })
      ).status,
    ).toBe(200)
    for (const instance of instances.slice(1)) {
      expect((await request(`${instance.url}/api/v1/forms/${cancelled}`, { key })).body.status).toBe('cancelled')
      expect((await fetch(`${instance.url}/f/${cancelled}`)).status).toBe(410)
      expect((await request(`${instance.url}/f/${cancelled}`, { body: { name: 'too late' } })).status).toBe(410)
    }

    const withFile = await createForm(instances[0]!, key, FILE_FORM)
    const bytes = crypto.getRandomValues(new Uint8Array(1_300_000))
    const post = new FormData()
    post.append('name', 'Ada')
    post.append('file', new File([bytes], 'scan.bin', { type: 'application/octet-stream' }))
    const answered = await fetch(`${instances[0]!.url}/f/${withFile}`, {
      method: 'POST',
      body: post,
      redirect: 'manual',
    })
    expect(answered.status).toBe(303)
    const [response] = (await request(`${instances[1]!.url}/api/v1/forms/${withFile}/responses`, { key })).body
    expect(response.data.name).toBe('Ada')
    const file = await fetch(servedBy(instances[2]!, response.data.file), {
      headers: { authorization: `Bearer ${key}` },
    })
    expect(file.status).toBe(200)
    expect(file.headers.get('content-type')).toBe('application/octet-stream')
    expect(Buffer.compare(new Uint8Array(await file.arrayBuffer()), bytes)).toBe(0)
  }, 30_000)

  test('a long-poll on one instance answers once an answer, cancel, delete or expiry goes through another', async () => {
    // Instance 2 holds each wait; the change goes through instance 1 or 3. The wait is far longer than any of
    // them should take: a wait that ran out (its answer [] like a cancel's) is told from one woken by its length.
    const [changer, waiter, third] = [instances[0]!, instances[1]!, instances[2]!]
    const WAIT_S = 20
    const hold = (formId: string) =>
      request(`${waiter.url}/api/v1/forms/${formId}/responses?wait=${WAIT_S}`, { key }).then((answer) => ({
        answer,
        at: performance.now(),
      }))
    /** Lets a wait just sent reach the server and start waiting. */
    const settle = () => Bun.sleep(500)

    /** A long-poll held on `waiter`, then `change` made through another instance: how long until it answered. */
    const wokenBy = async (
      what: string,
      change: (formId: string) => Promise<void>,
      check: (answer: { status: number; body: any }) => void,
    ) => {
      const formId = await createForm(changer, key)
      const waiting = hold(formId)
      await settle()
      const sentAt = performance.now()
      await change(formId)
      const { answer, at } = await waiting
      check(answer)
      return { what, ms: at - sentAt }
    }
    const afterAnswer = () =>
      wokenBy(
        'an answer',
        async (formId) =>
          expect((await request(`${changer.url}/f/${formId}`, { body: { name: 'Ada' } })).status).toBe(201),
        (answer) => expect(answer.body).toHaveLength(1),
      )
    const afterCancel = () =>
      wokenBy(
        'a cancel',
        async (formId) =>
          expect(
            (
              await request(`${third.url}/api/v1/forms/${formId}`, {
                key,
                method: 'PATCH',
                body: { status: 'cancelled' },
              })
            ).status,
          ).toBe(200),
        (answer) => expect(answer.body).toEqual([]),
      )
    const afterDelete = () =>
      wokenBy(
        'a delete',
        async (formId) =>
          expect((await request(`${changer.url}/api/v1/forms/${formId}`, { key, method: 'DELETE' })).status).toBe(204),
        (answer) => expect(answer.status).toBe(404),
      )
    const afterExpiry = async () => {
      const formId = await createForm(changer, key)
      const patched = await request(`${changer.url}/api/v1/forms/${formId}`, {
        key,
        method: 'PATCH',
        body: { expires_at: new Date(Date.now() + 2000).toISOString() },
      })
      expect(patched.status).toBe(200)
      const expiresAt = Date.parse(`${patched.body.expires_at}Z`)
      const { answer } = await hold(formId)
      const ms = Date.now() - expiresAt
      expect(answer.body).toEqual([])
      // Not before the expiry: a wait that ends early with [] says nothing happened while the form still takes an answer.
      expect(ms).toBeGreaterThanOrEqual(-50)
      for (const instance of instances)
        expect((await request(`${instance.url}/api/v1/forms/${formId}`, { key })).body.status).toBe('expired')
      return { what: 'the expiry', ms }
    }

    const results = await Promise.all([afterAnswer(), afterCancel(), afterDelete(), afterExpiry()])
    expect(results.filter(({ ms }) => ms >= WAIT_S * 1000)).toEqual([])
    for (const { what, ms } of results) reportFigure('wake across instances (ms)', `a long-poll, after ${what}`, ms)
  }, 30_000)

  test('a key revoked with `intake keys revoke` is refused by every instance', async () => {
    const env = { SERVICE_DATABASE_URL: databaseUrl }
    const created = await runIntake(intake.path, ['keys', 'create', '--account', 'revocation'], {
      cwd: intake.tempDir(),
      env,
    })
    expect(created.code).toBe(0)
    const [revocable] = keysIn(created.stdout)
    const keyId = /Created key (\S+) /.exec(created.stdout)![1]!
    // Each instance has used the key: it is what each would go on accepting.
    for (const instance of instances)
      expect((await request(`${instance.url}/api/v1/forms`, { key: revocable })).status).toBe(200)

    const revoked = await runIntake(intake.path, ['keys', 'revoke', keyId], { cwd: intake.tempDir(), env })
    expect(revoked.code).toBe(0)
    const revokedAt = performance.now()
    const delays = await Promise.all(
      instances.map(async (instance) => {
        await until(
          async () => (await request(`${instance.url}/api/v1/forms`, { key: revocable })).status === 401,
          20_000,
          `instance ${instance.url} to refuse the revoked key`,
        )
        return performance.now() - revokedAt
      }),
    )
    for (const [i, ms] of delays.entries())
      reportFigure('revocation heard by another server (ms)', `instance ${i + 1}, after intake keys revoke`, ms)
    // The others' key still works everywhere.
    for (const instance of instances) expect((await request(`${instance.url}/api/v1/forms`, { key })).status).toBe(200)
  }, 30_000)
})

describe.skipIf(skipPostgres)('instances that crash, start together, stop or restart under load', () => {
  test('kill -9 of an instance holding 20 deliveries: the others make them once its lease ends, each delivered once', async () => {
    const databaseUrl = await freshDatabase()
    // A short timeout makes a short lease (timeout + 5 s).
    const env = { SERVICE_WEBHOOK_TIMEOUT: '3' }
    const leaseMs = 3000 + 5000
    let killed = false
    const held: Array<() => void> = []
    const afterKill: ReceivedDelivery[] = []
    const answer = (delivery: ReceivedDelivery) => {
      if (killed) {
        afterKill.push(delivery)
        return new Response('ok')
      }
      // Held until the instance that sent it is dead: its attempt never ends.
      return new Promise<Response>((resolve) => held.push(() => resolve(new Response('late', { status: 503 }))))
    }
    // Two receivers: one instance sends at most 16 attempts at once to one host and port.
    const hooks = [receiver({ answer }), receiver({ answer })]
    const a = await startInstance(intake.path, { databaseUrl, cwd: intake.tempDir(), env })
    const key = a.apiKey!
    const formIds = await Promise.all(
      Array.from({ length: 20 }, (_, i) => createForm(a, key, { ...FORM, callback_url: hooks[i % 2]!.url })),
    )
    // Answered through A while it is the only instance: A claims all 20.
    const answers = await Promise.all(
      formIds.map((formId) => request(`${a.url}/f/${formId}`, { body: { name: 'Ada' } })),
    )
    expect(answers.map((r) => r.status)).toEqual(formIds.map(() => 201))
    await until(() => held.length === 20, 5000, 'A to send the 20 deliveries')
    const others = await Promise.all(
      [0, 1].map(() => startInstance(intake.path, { databaseUrl, cwd: intake.tempDir(), env })),
    )

    const sql = new SQL(databaseUrl, { max: 1 })
    try {
      // A's claims are what the others must take over: 20 pending, each leased, none tried by anyone else.
      const leases = await sql<Array<{ id: string; lease_until: string; attempts: number }>>`
        SELECT id, lease_until, attempts FROM deliveries WHERE status = 'pending' AND lease_until > (extract(epoch from clock_timestamp()) * 1000)::bigint`
      expect(leases).toHaveLength(20)
      expect(leases.every((lease) => lease.attempts === 1)).toBe(true)
      a.proc.kill('SIGKILL')
      await a.proc.exited
      killed = true
      const killedAt = Date.now()
      for (const release of held) release()

      await until(
        () => new Set(afterKill.map((d) => d.deliveryId)).size === 20,
        leaseMs + 10_000,
        'the 20 deliveries through the other instances',
      )
      const leaseEnds = new Map(leases.map((lease) => [lease.id, Number(lease.lease_until)]))
      const takeover = Math.max(...afterKill.map((d) => d.at)) - killedAt
      console.log(
        `kill -9 with 20 deliveries claimed: all 20 arrived through the others ${takeover} ms after the kill (lease ${leaseMs} ms)`,
      )
      expect(new Set(afterKill.map((d) => d.formId))).toEqual(new Set(formIds))
      // Taken over once the lease ended, not before: A might only have been slow.
      for (const d of afterKill) expect(d.at).toBeGreaterThanOrEqual(leaseEnds.get(d.deliveryId)! - 100)

      // A second made a second attempt visible (the loop looks at least once a second): each was made once.
      await Bun.sleep(2000)
      const requestsPerDelivery = new Map<string, number>()
      for (const d of afterKill) requestsPerDelivery.set(d.deliveryId, (requestsPerDelivery.get(d.deliveryId) ?? 0) + 1)
      expect([...requestsPerDelivery.values()]).toEqual(formIds.map(() => 1))
      for (const formId of formIds) {
        const [delivery] = (await request(`${others[0]!.url}/api/v1/forms/${formId}/deliveries`, { key })).body
        expect({ status: delivery.status, attempts: delivery.attempts }).toEqual({ status: 'delivered', attempts: 2 })
      }
    } finally {
      await sql.close()
    }
    for (const other of others) expect(await other.stop()).toBe(0)
  }, 60_000)

  test('four first starts at once on an empty database: all start, one prints the key, which works on all; one account, one key', async () => {
    const databaseUrl = await freshDatabase()
    const started = await Promise.all(
      Array.from({ length: 4 }, () =>
        startIntake(intake.path, {
          cwd: intake.tempDir(),
          args: ['serve'],
          env: { ...INSTANCE_SETTINGS, SERVICE_DATABASE_URL: databaseUrl, SERVICE_PORT: '0' },
        }),
      ),
    )
    const printed = started.flatMap((instance) => keysIn(instance.stdout()))
    const printedBy = started.filter((instance) => keysIn(instance.stdout()).length > 0)
    console.log(`concurrent first starts: ${printedBy.length} of 4 printed a key (${new Set(printed).size} distinct)`)
    expect(new Set(printed).size).toBe(1)
    expect(printedBy).toHaveLength(1)
    const key = printed[0]!
    for (const instance of started) expect((await request(`${instance.url}/api/v1/forms`, { key })).status).toBe(200)
    const sql = new SQL(databaseUrl, { max: 1 })
    try {
      expect((await sql`SELECT name FROM accounts`).map((row: { name: string }) => row.name)).toEqual(['default'])
      expect(Number((await sql`SELECT count(*) AS n FROM api_keys`)[0].n)).toBe(1)
    } finally {
      await sql.close()
    }
    for (const instance of started) expect(await instance.stop()).toBe(0)
  }, 60_000)

  test('SIGTERM to instances whose database is gone: each exits 0 within a few seconds, not waiting on the database', async () => {
    const database = await freshPostgresDatabase(TEST_DATABASE_URL, { migrated: false })
    const { instances } = await startInstances(intake.path, {
      databaseUrl: database.url,
      cwd: intake.tempDir(),
      count: 3,
    })
    const admin = new SQL(TEST_DATABASE_URL, { max: 1 })
    try {
      await admin.unsafe(`DROP DATABASE "${database.name}" WITH (FORCE)`)
    } finally {
      await admin.close()
    }
    // Their background passes and listening connections now fail and try again.
    await Bun.sleep(2000)
    const startedAt = performance.now()
    const codes = await Promise.all(instances.map((instance) => instance.stop('SIGTERM', 10_000)))
    console.log(
      `SIGTERM with the database gone: all three exited after ${(performance.now() - startedAt).toFixed(0)} ms`,
    )
    expect(codes).toEqual([0, 0, 0])
  }, 60_000)

  test("SIGTERM to one of three instances under load: it exits 0; every acknowledged create and answer is there, every answer's webhook arrives", async () => {
    const databaseUrl = await freshDatabase()
    const hooks = receiver()
    const { instances, key } = await startInstances(intake.path, { databaseUrl, cwd: intake.tempDir(), count: 3 })
    const client = new RoundRobin(instances.map((instance) => instance.url))
    const load = startLoad({ client, key, callbackUrl: hooks.url, workers: 8, pauseMs: 5 })
    try {
      await until(() => load.ledger.submissions.length >= 30, 15_000, 'the load to get going')
      expect(await instances[1]!.stop('SIGTERM', 30_000)).toBe(0)
      const after = load.ledger.submissions.length
      await until(() => load.ledger.submissions.length >= after + 30, 15_000, 'the load to go on through the other two')
    } finally {
      await load.stop()
    }
    const { ledger } = load
    const lost = await findLost(client, key, ledger.creates, ledger.submissions)
    const deliveries = await awaitDeliveries(hooks, ledger.submissions, 30_000)
    const unanswered = await load.settleUnknown(ledger.unknown)
    console.log(
      `SIGTERM under load: ${ledger.creates.length} creates and ${ledger.submissions.length} answers acknowledged, ${lost.length} lost; ` +
        `${deliveries.arrived} of ${deliveries.expected} webhooks arrived, ${deliveries.duplicates} duplicated; ` +
        `${ledger.unknown.length} requests without an answer (${unanswered.done.length} of them done), ${client.connectRetries} connects retried on another instance` +
        (ledger.unknown.length ? `; e.g. ${ledger.unknown[0]!.error}` : ''),
    )
    expect(lost).toEqual([])
    expect(deliveries.missing).toEqual([])
    // Requests in flight at the SIGTERM finish: none fails, none is done without its answer coming back.
    expect(ledger.refused).toEqual([])
    expect(unanswered.done).toEqual([])
    for (const instance of [instances[0]!, instances[2]!]) expect(await instance.stop()).toBe(0)
  }, 90_000)

  test(
    `rolling restart under load, ${ROUNDS} round(s): each instance in turn SIGTERMed (exit 0) and started again; nothing acknowledged lost, every webhook arrives`,
    async () => {
      const report = await rollingRestart({
        binary: intake.path,
        databaseUrl: await freshDatabase(),
        cwd: intake.tempDir(),
        rounds: ROUNDS,
        workers: 8,
        pauseMs: 5,
        onRound: (round) => console.log(describeRound(round)),
      })
      const t = report.total
      console.log(
        `rolling restart, ${report.rounds.length} round(s): ${t.creates} creates + ${t.submissions} answers acknowledged, ${t.lost.length} lost; ` +
          `${t.deliveries.arrived} of ${t.deliveries.expected} webhooks arrived, ${t.deliveries.duplicates} duplicated; ` +
          `${t.unknown} requests without an answer (${t.doneUnanswered.length} of them done), ${t.connectRetries} connects retried${report.examples.length ? `; e.g. ${report.examples.join(' | ')}` : ''}`,
      )
      for (const round of report.rounds) {
        expect(round.restarts.map((restart) => restart.exitCode)).toEqual([0, 0, 0])
        expect(round.lost).toEqual([])
        expect(round.deliveries.missing).toEqual([])
      }
      expect(t.lost).toEqual([])
      // A request in flight at a SIGTERM finishes: none is done without its answer coming back.
      expect(t.doneUnanswered).toEqual([])
      expect(t.deliveries.missing).toEqual([])
      expect(t.refused).toEqual({})
      expect(report.finalExitCodes).toEqual([0, 0, 0])
    },
    60_000 + ROUNDS * 60_000,
  )
})
