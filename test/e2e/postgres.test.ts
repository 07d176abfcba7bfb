/**
 * The real executable (dist/intake) on PostgreSQL (CONTRACT 9): the first
 * start, forms, answers, files and webhooks, a kill -9 with deliveries
 * pending, a restart, `intake keys` and `intake backup`; the settings that
 * are refused (exit 2) and a database that never answers (exit 1 after
 * SERVICE_DATABASE_CONNECT_TIMEOUT), the password never shown; a database that goes away while
 * intake runs (503, /healthz 503, back by itself) and backends killed under
 * load (nothing acknowledged lost).
 *
 * Databases are made fresh on INTAKE_TEST_DATABASE_URL's server; the tests
 * that stop a server start a throwaway cluster of their own
 * (scripts/postgres-cluster.sh). Everything stays on loopback.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { freshPostgresDatabase, startThrowawayCluster, type ThrowawayCluster } from '../postgres.ts'
import { POSTGRES, skipWithout, TEST_DATABASE_URL } from '../prerequisites.ts'
import { keysIn, type RunningIntake, request, runIntake, startIntake, useBuiltBinary } from './binary.ts'

const skipPostgres = skipWithout(POSTGRES)
const intake = useBuiltBinary('intake-postgres-')
const databases: Array<{ drop(): Promise<void> }> = []
const clusters: ThrowawayCluster[] = []

afterAll(async () => {
  for (const database of databases) await database.drop().catch(() => {})
  for (const cluster of clusters) await cluster.remove().catch(() => {})
}, 60_000)

async function freshDatabase(): Promise<string> {
  const database = await freshPostgresDatabase(TEST_DATABASE_URL, { migrated: false })
  databases.push(database)
  return database.url
}

const startOn = (databaseUrl: string, extra: Record<string, string> = {}, cwd = intake.tempDir()) =>
  startIntake(intake.path, { cwd, env: { SERVICE_DATABASE_URL: databaseUrl, ...extra } })

/** A receiver on 127.0.0.1 that records every delivery and answers 200. */
function receiver(port = 0) {
  const received: Array<{ id: string; body: string; signature: string }> = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port,
    async fetch(req) {
      received.push({
        id: req.headers.get('x-service-delivery') ?? '',
        body: await req.text(),
        signature: req.headers.get('x-service-signature') ?? '',
      })
      return new Response('ok')
    },
  })
  return { url: `http://127.0.0.1:${server.port}/hook`, port: server.port!, received, stop: () => server.stop(true) }
}

async function until(condition: () => boolean | Promise<boolean>, ms: number, what: string) {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up after ${ms} ms waiting for: ${what}`)
    await Bun.sleep(25)
  }
}

const FORM = {
  title: 'Expenses',
  fields: [
    { key: 'name', type: 'text', label: 'Name', required: true },
    { key: 'receipt', type: 'file', label: 'Receipt', config: { max_size: 2_000_000 } },
  ],
}

describe.skipIf(skipPostgres)('dist/intake on PostgreSQL', () => {
  test('the first start prints the key once; forms, answers, files and webhooks work; a restart finds everything', async () => {
    const database = await freshDatabase()
    const hooks = receiver()
    const cwd = intake.tempDir()
    const first = await startOn(database, {}, cwd)
    const key = first.apiKey!
    expect(key).toMatch(/^svc_live_/)
    expect(keysIn(first.stdout())).toEqual([key, key]) // the key line and the curl line
    expect(first.stdout()).toContain(`Data   ${database}  (PostgreSQL`)
    // Nothing is written to the working directory: no SQLite file.
    expect(existsSync(join(cwd, 'data'))).toBe(false)

    const created = await request(`${first.url}/api/v1/forms`, { key, body: { ...FORM, callback_url: hooks.url } })
    expect(created.status).toBe(201)
    const form = created.body
    const bytes = crypto.getRandomValues(new Uint8Array(1_300_000))
    const post = new FormData()
    post.append('name', 'Ada')
    post.append('receipt', new File([bytes], 'receipt.bin', { type: 'application/octet-stream' }))
    const answered = await fetch(`${first.url}/f/${form.id}`, { method: 'POST', body: post, redirect: 'manual' })
    expect(answered.status).toBe(303)
    await until(() => hooks.received.length === 1, 5000, 'the webhook')
    const delivery = hooks.received[0]!
    const secret = createHmac('sha256', key).update(form.id).digest('hex')
    expect(delivery.signature).toBe(`sha256=${createHmac('sha256', secret).update(delivery.body).digest('hex')}`)
    expect(JSON.parse(delivery.body).data.name).toBe('Ada')
    expect(await first.stop()).toBe(0)

    const again = await startOn(database, {}, cwd)
    expect(again.apiKey).toBeUndefined()
    expect(keysIn(again.stdout())).toEqual([])
    expect(again.stdout()).toContain(`(data: ${database})`)
    const [response] = (await request(`${again.url}/api/v1/forms/${form.id}/responses`, { key })).body
    expect(response.data.name).toBe('Ada')
    const file = await fetch(response.data.receipt.replace(/^http:\/\/localhost:\d+/, again.url), {
      headers: { authorization: `Bearer ${key}` },
    })
    expect(file.status).toBe(200)
    expect(Buffer.compare(new Uint8Array(await file.arrayBuffer()), bytes)).toBe(0)
    expect((await request(`${again.url}/api/v1/forms/${form.id}/deliveries`, { key })).body[0].status).toBe('delivered')
    expect(await again.stop()).toBe(0)
    await hooks.stop()
  }, 60_000)

  test('kill -9 with 20 deliveries pending loses none: the restart delivers them all', async () => {
    const database = await freshDatabase()
    // A receiver's port, closed for now: every first attempt is refused and retried.
    const probe = receiver()
    const port = probe.port
    await probe.stop()
    // A retry every second, ten of them: still pending at the kill, and due soon after the restart (not 5 or 25 s later).
    const retries = { SERVICE_WEBHOOK_RETRY_SCHEDULE: '1s', SERVICE_WEBHOOK_MAX_RETRIES: '10' }
    const first = await startOn(database, retries)
    const key = first.apiKey!
    const ids: string[] = []
    for (let i = 0; i < 20; i++) {
      const form = (
        await request(`${first.url}/api/v1/forms`, {
          key,
          body: { ...FORM, callback_url: `http://127.0.0.1:${port}/hook` },
        })
      ).body
      expect((await request(`${first.url}/f/${form.id}`, { body: { name: `n${i}` } })).status).toBe(201)
      ids.push(form.id)
    }
    first.proc.kill('SIGKILL')
    await first.proc.exited
    const hooks = receiver(port)
    const again = await startOn(database, retries)
    await until(
      () => new Set(hooks.received.map((r) => JSON.parse(r.body).form_id)).size === 20,
      40_000,
      '20 deliveries after the restart',
    )
    expect(new Set(hooks.received.map((r) => JSON.parse(r.body).form_id))).toEqual(new Set(ids))
    expect(await again.stop()).toBe(0)
    await hooks.stop()
  }, 90_000)

  test('intake keys and intake backup work against it; a revoked key is refused by the running server', async () => {
    const database = await freshDatabase()
    const cwd = intake.tempDir()
    const server = await startOn(database, {}, cwd)
    const env = { SERVICE_DATABASE_URL: database }
    const created = await runIntake(intake.path, ['keys', 'create', '--account', 'research'], { cwd, env })
    expect(created.code).toBe(0)
    const [key] = keysIn(created.stdout)
    expect((await request(`${server.url}/api/v1/forms`, { key })).status).toBe(200)
    const listed = await runIntake(intake.path, ['keys', 'list', '--json'], { cwd, env })
    const keys = JSON.parse(listed.stdout) as Array<{ id: string; account: string }>
    expect(keys.map((k) => k.account).sort()).toEqual(['default', 'research'])
    const research = keys.find((k) => k.account === 'research')!
    expect((await runIntake(intake.path, ['keys', 'revoke', research.id], { cwd, env })).code).toBe(0)
    // Another process revoked it: the server hears of it by notification, within a second (CONTRACT 10).
    await until(
      async () => (await request(`${server.url}/api/v1/forms`, { key })).status === 401,
      1000,
      'the revoked key to be refused',
    )

    await request(`${server.url}/api/v1/forms`, { key: server.apiKey, body: FORM })
    const backup = await runIntake(intake.path, ['backup', join(cwd, 'backup.db')], { cwd, env })
    expect(backup).toMatchObject({ code: 0 })
    // The backup is a SQLite database intake serves as it is.
    const fromBackup = await startIntake(intake.path, {
      cwd,
      args: ['serve', '--port', '0', '--db', join(cwd, 'backup.db')],
    })
    expect((await request(`${fromBackup.url}/api/v1/forms`, { key: server.apiKey })).body).toHaveLength(1)
    expect(await fromBackup.stop()).toBe(0)
    expect(await server.stop()).toBe(0)
  }, 60_000)

  test('intake migrate applies the migrations and exits; serve then finds nothing to do', async () => {
    const database = await freshDatabase()
    const cwd = intake.tempDir()
    const migrated = await runIntake(intake.path, ['migrate'], { cwd, env: { SERVICE_DATABASE_URL: database } })
    expect(migrated.code).toBe(0)
    const again = await runIntake(intake.path, ['migrate'], { cwd, env: { SERVICE_DATABASE_URL: database } })
    expect(again.code).toBe(0)
    expect(again.stdout).toMatch(/up to date/)
  }, 30_000)
})

// These need no PostgreSQL server: they run everywhere.
describe('settings for PostgreSQL (CONTRACT 9)', () => {
  const refused = [
    {
      name: 'both SERVICE_DB_PATH and SERVICE_DATABASE_URL',
      env: { SERVICE_DB_PATH: './x.db', SERVICE_DATABASE_URL: 'postgres://intake@127.0.0.1:1/intake' },
      says: /not both/,
    },
    {
      name: 'a URL of another scheme',
      env: { SERVICE_DATABASE_URL: 'mysql://intake:sekret-pw@127.0.0.1/intake' },
      says: /postgres:\/\//,
    },
    {
      name: 'a URL that does not parse',
      env: { SERVICE_DATABASE_URL: 'postgres://intake:sekret-pw@[bad/intake' },
      says: /postgres:\/\//,
    },
  ]
  for (const c of refused) {
    test(`${c.name}: exit 2 with one line, no password shown`, async () => {
      const result = await runIntake(intake.path, ['serve', '--port', '0'], { cwd: intake.tempDir(), env: c.env })
      expect(result.code).toBe(2)
      expect(result.stderr.trim().split('\n')).toHaveLength(1)
      expect(result.stderr).toMatch(c.says)
      expect(result.stdout + result.stderr).not.toContain('sekret-pw')
    })
  }

  test.skipIf(skipPostgres)(
    'a database that never answers: a line per try for SERVICE_DATABASE_CONNECT_TIMEOUT, then exit 1 with one line; the password never shown',
    async () => {
      const probe = receiver()
      const closedPort = probe.port
      await probe.stop()
      // A try a second for 4 s instead of the default 30 s: the same lines, a few of them.
      const result = await runIntake(intake.path, ['serve', '--port', '0'], {
        cwd: intake.tempDir(),
        env: {
          SERVICE_DATABASE_URL: `postgres://intake:sekret-pw@127.0.0.1:${closedPort}/intake`,
          SERVICE_DATABASE_CONNECT_TIMEOUT: '4',
        },
        timeoutMs: 60_000,
      })
      expect(result.code).toBe(1)
      expect(result.stdout + result.stderr).not.toContain('sekret-pw')
      expect(result.stdout + result.stderr).toContain(`postgres://intake@127.0.0.1:${closedPort}/intake`)
      expect(result.stderr.trim().split('\n')).toHaveLength(1)
      const tries = result.stdout.trim().split('\n')
      expect(tries.length).toBeGreaterThanOrEqual(2)
      for (const line of tries) expect(line).toMatch(/^Cannot reach the PostgreSQL database at .* \(try \d+\)/)
    },
    70_000,
  )
})

describe.skipIf(skipPostgres)('the database going away while intake runs', () => {
  let server: RunningIntake | undefined

  test('503 "Database unavailable" with Retry-After and /healthz 503 while it is away; back by itself; nothing acknowledged lost', async () => {
    const cluster = await startThrowawayCluster()
    clusters.push(cluster)
    server = await startOn(cluster.url)
    const key = server.apiKey!
    const before = (await request(`${server.url}/api/v1/forms`, { key, body: FORM })).body

    await cluster.pause()
    const away = await request(`${server.url}/api/v1/forms/${before.id}`, { key })
    expect(away.status).toBe(503)
    expect(away.body).toEqual({ detail: 'Database unavailable' })
    expect(Number(away.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await request(`${server.url}/healthz`)).status).toBe(503)
    const page = await fetch(`${server.url}/f/${before.id}`)
    expect(page.status).toBe(503)
    expect(await page.text()).not.toMatch(/at \w+ \(|node_modules|\.ts:\d+/)

    await cluster.resume()
    await until(async () => (await request(`${server!.url}/healthz`)).status === 200, 15_000, '/healthz 200 again')
    expect((await request(`${server.url}/api/v1/forms/${before.id}`, { key })).status).toBe(200)
    expect(server.stdout() + server.stderr()).not.toContain('"level":"error","msg":"internal error"')
    expect(await server.stop()).toBe(0)
  }, 90_000)

  test('backends killed under a load of creates: the server answers again, and every acknowledged form is there', async () => {
    const database = await freshDatabase()
    const running = await startOn(database)
    const key = running.apiKey!
    const admin = new SQL(database)
    const acknowledged: string[] = []
    const statuses = new Map<number, number>()
    let stop = false
    const worker = async () => {
      while (!stop) {
        const res = await request(`${running.url}/api/v1/forms`, { key, body: FORM }).catch(() => undefined)
        if (!res) continue
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        if (res.status === 201) acknowledged.push(res.body.id)
        else expect(res.status).toBe(503)
      }
    }
    const workers = Array.from({ length: 8 }, worker)
    // Every connection of intake's pool is killed, five times, while creates are in flight.
    await until(() => acknowledged.length >= 10, 20_000, 'the first creates')
    let killed = 0
    for (let round = 0; round < 5; round++) {
      const before = acknowledged.length
      killed += (
        await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`
      ).length
      await until(() => acknowledged.length > before, 20_000, 'a create acknowledged after the kill')
    }
    stop = true
    await Promise.all(workers)
    console.log(`creates under ${killed} killed backends: ${JSON.stringify(Object.fromEntries(statuses))}`)
    expect(killed).toBeGreaterThanOrEqual(5)
    await until(async () => (await request(`${running.url}/healthz`)).status === 200, 10_000, '/healthz 200')
    const stored = new Set((await admin`select id from forms`).map((row: { id: string }) => row.id))
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([])
    expect((await request(`${running.url}/api/v1/forms`, { key, body: FORM })).status).toBe(201)
    await admin.close()
    expect(await running.stop()).toBe(0)
  }, 60_000)
})
