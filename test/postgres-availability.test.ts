/**
 * The PostgreSQL store when things go wrong or come at once: the pool under
 * hundreds of concurrent transactions and under killed backends (failures
 * are DatabaseUnavailable, nothing acknowledged is lost, never a hang), the
 * migrations (once, under a lock; a newer intake's database refused
 * untouched), and a server that cannot be reached or stops (DatabaseUnreachable
 * after the wait, DatabaseUnavailable while running, never a password). The
 * tests that stop a server start a cluster of their own.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import type { SQL } from 'bun'
import { DatabaseOpenError, DatabaseUnavailable, DatabaseUnreachable, type Upgrade } from '../src/db/driver.ts'
import { describeDatabaseUrl } from '../src/db/postgres/connect.ts'
import { DatabaseUnanswered } from '../src/db/postgres/deadlines.ts'
import { POSTGRES_SCHEMA_VERSION } from '../src/db/postgres/migrations.ts'
import { newId } from '../src/lib/ids.ts'
import { openPostgresStore } from '../src/stores.ts'
import { type FreezingProxy, startFreezingProxy } from './freezing-proxy.ts'
import { formRecord, postgresFixtures, settle, startThrowawayCluster, T0, within } from './postgres.ts'
import { POSTGRES, skipWithout, TEST_DATABASE_URL } from './prerequisites.ts'

const skipPostgres = skipWithout(POSTGRES)
const { freshDatabase, openStore, inspect } = postgresFixtures(TEST_DATABASE_URL)

describe.skipIf(skipPostgres)('the pool under load', () => {
  test('200 concurrent transactions (a form and its Idempotency-Key each) and 200 reads, all done, all there', async () => {
    const database = await freshDatabase()
    const store = await openStore(database.url)
    const account = await store.transaction((tx) => tx.keys.ensureAccount(newId(), 'default', T0))
    const made = Array.from({ length: 200 }, () => formRecord(account))
    const started = performance.now()
    const work: Promise<unknown>[] = []
    for (const [i, f] of made.entries()) {
      work.push(
        store.transaction(async (tx) => {
          await tx.forms.insert(f)
          await tx.forms.rememberIdempotencyKey({
            accountId: account,
            key: `k${i}`,
            requestHash: 'h',
            formId: f.id,
            createdAt: T0,
          })
        }),
      )
      work.push(store.forms.list({ accountId: account, status: undefined, before: undefined, limit: 20, now: T0 }))
    }
    await within(30_000, Promise.all(work))
    const elapsed = performance.now() - started
    console.log(`200 transactions and 200 reads at once: ${Math.round(elapsed)} ms`)
    const sql = inspect(database.url)
    const [row] =
      await sql`SELECT (SELECT count(*) FROM forms)::int AS forms, (SELECT count(*) FROM idempotency_keys)::int AS keys`
    expect(row).toEqual({ forms: 200, keys: 200 })
  }, 30_000)

  test('backends killed in the middle of a load: failures are DatabaseUnavailable, nothing acknowledged is lost, then it answers again', async () => {
    const database = await freshDatabase()
    const store = await openStore(database.url)
    const account = await store.transaction((tx) => tx.keys.ensureAccount(newId(), 'default', T0))
    const admin = inspect(TEST_DATABASE_URL)
    const kill = () =>
      admin`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = ${database.name}`
    const acknowledged: string[] = []
    const failures: unknown[] = []
    let killing = true
    const killer = (async () => {
      let kills = 0
      while (killing) {
        // Long enough apart for a new connection to commit between kills: acknowledged writes are made under the kills.
        await Bun.sleep(150)
        kills += (await kill())[0].n
      }
      return kills
    })()
    const started = performance.now()
    // A kill fails a unit only when it lands between BEGIN's answer and COMMIT (earlier, the unit
    // is begun again on another connection): the load goes on until one has, up to 12 s.
    const loading = () => {
      const elapsed = performance.now() - started
      return elapsed < 2500 || (failures.length === 0 && elapsed < 12_000)
    }
    const workers = Array.from({ length: 20 }, async () => {
      while (loading()) {
        const f = formRecord(account)
        const outcome = await within(
          15_000,
          settle(
            store.transaction(async (tx) => {
              await tx.forms.insert(f)
              await tx.forms.rememberIdempotencyKey({
                accountId: account,
                key: f.id,
                requestHash: 'h',
                formId: f.id,
                createdAt: T0,
              })
            }),
          ),
        )
        if (outcome.ok) acknowledged.push(f.id)
        else failures.push(outcome.error)
        // Reads meet the same killed connections.
        const read = await within(15_000, settle(store.forms.find(f.id, T0)))
        if (!read.ok) failures.push(read.error)
      }
    })
    await Promise.all(workers)
    killing = false
    const kills = await killer
    const unexpected = failures.filter((error) => !(error instanceof DatabaseUnavailable))
    expect(unexpected.map(String)).toEqual([])
    console.log(
      `killed ${kills} backends: ${acknowledged.length} transactions acknowledged, ${failures.length} failures (all DatabaseUnavailable)`,
    )
    expect(kills).toBeGreaterThan(0)
    expect(failures.length).toBeGreaterThan(0)
    expect(acknowledged.length).toBeGreaterThan(0)

    // Answers again at once: the pool drops the dead connections and opens new ones.
    await within(5000, store.ping())
    const after = formRecord(account)
    await within(
      5000,
      store.transaction((tx) => tx.forms.insert(after)),
    )
    const sql = inspect(database.url)
    const stored = new Set((await sql`SELECT id FROM forms`).map((row: { id: string }) => row.id))
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([])
    expect(stored.has(after.id)).toBe(true)
    const keys = new Set((await sql`SELECT key FROM idempotency_keys`).map((row: { key: string }) => row.key))
    expect(acknowledged.filter((id) => !keys.has(id))).toEqual([])
  }, 30_000)
})

describe.skipIf(skipPostgres)('a server that stops answering (a proxy that holds every byte, CONTRACT 13a)', () => {
  /** Far above the store's deadline (4 s): only a hang takes longer. */
  const HANG_MS = 15_000

  async function frozenStore() {
    const database = await freshDatabase()
    const proxy = await startFreezingProxy(database.url)
    proxies.push(proxy)
    const store = await openStore(proxy.url)
    const account = await store.transaction((tx) => tx.keys.ensureAccount(newId(), 'default', T0))
    return { database, proxy, store, account }
  }
  const proxies: FreezingProxy[] = []
  afterAll(() => {
    for (const proxy of proxies) proxy.stop()
  })

  test('ping, reads, transactions and the unit in flight fail with DatabaseUnavailable instead of waiting; after the thaw the same store answers', async () => {
    const { database, proxy, store, account } = await frozenStore()
    const held = settle(
      store.transaction(async (tx) => {
        await tx.forms.insert(formRecord(account))
        proxy.freeze()
        await tx.forms.insert(formRecord(account))
      }),
    )
    while (!proxy.frozen) await Bun.sleep(10)
    const attempts: Array<[string, () => Promise<unknown>]> = [
      [
        'the unit in flight',
        () => held.then((outcome) => (outcome.ok ? outcome.value : Promise.reject(outcome.error))),
      ],
      ['ping', () => store.ping()],
      ['a read', () => store.forms.find(newId(), T0)],
      ['a transaction', () => store.transaction((tx) => tx.forms.insert(formRecord(account)))],
      ['a staged transaction', () => store.stagedTransaction((tx) => tx.forms.insert(formRecord(account)))],
    ]
    const started = performance.now()
    const outcomes = await Promise.all(attempts.map(([, attempt]) => within(HANG_MS, settle(attempt()))))
    console.log(`frozen: all failed within ${Math.round(performance.now() - started)} ms`)
    for (const [i, outcome] of outcomes.entries()) {
      expect([attempts[i]![0], outcome.ok]).toEqual([attempts[i]![0], false])
      expect((outcome as { error: unknown }).error).toBeInstanceOf(DatabaseUnavailable)
    }
    // Still frozen: what comes next fails too, rather than queueing behind what is stuck.
    expect((await within(HANG_MS, settle(store.ping()))).ok).toBe(false)

    proxy.thaw()
    const f = formRecord(account)
    await within(HANG_MS, store.ping())
    await within(
      HANG_MS,
      store.transaction((tx) => tx.forms.insert(f)),
    )
    expect(await store.forms.find(f.id, T0)).toMatchObject({ id: f.id })
    const sql = inspect(database.url)
    const [row] = await sql`SELECT count(*)::int AS n FROM forms`
    // The unit in flight wrote nothing: it never committed.
    expect(row.n).toBe(1)
  }, 60_000)

  test('a COMMIT the server took and never answered: DatabaseUnavailable, not success and not another error (it may have committed)', async () => {
    const { database, proxy, store, account } = await frozenStore()
    const f = formRecord(account)
    proxy.freezeWhen('COMMIT')
    const outcome = await within(HANG_MS, settle(store.transaction((tx) => tx.forms.insert(f))))
    expect(proxy.frozen).toBe(true)
    expect(outcome.ok).toBe(false)
    expect((outcome as { error: unknown }).error).toBeInstanceOf(DatabaseUnanswered)
    proxy.thaw()
    await within(HANG_MS, store.ping())
    // The held COMMIT reached the server at the thaw, after the store had given up on it.
    const sql = inspect(database.url)
    await Bun.sleep(200)
    const [row] = await sql`SELECT count(*)::int AS n FROM forms WHERE id = ${f.id}`
    expect(row.n).toBeLessThanOrEqual(1)
    console.log(`the COMMIT held by the freeze: ${row.n === 1 ? 'committed' : 'not committed'} after the thaw`)
  }, 60_000)

  test('connections the network lost for good are let go of: the store answers again by itself, and hears other processes again', async () => {
    const { database, proxy, store } = await frozenStore()
    const direct = await openStore(database.url)
    const account = await direct.transaction((tx) => tx.keys.ensureAccount(newId(), 'other', T0))
    // The store starts listening at the first question; heard from within a moment.
    const stable = async () => {
      const version = await store.keys.keysVersion()
      return version === (await store.keys.keysVersion()) ? version : undefined
    }
    const heardFrom = () =>
      within(
        HANG_MS,
        (async () => {
          for (;;) {
            const version = await stable()
            if (version !== undefined) return version
            await Bun.sleep(100)
          }
        })(),
      )
    await heardFrom()
    // Every connection open now (the pool's and the listening one) is lost; new ones work.
    proxy.strand()
    const lost = await within(HANG_MS, settle(store.ping()))
    expect(lost.ok).toBe(false)
    await within(
      HANG_MS,
      (async () => {
        while (!(await settle(store.ping())).ok) await Bun.sleep(100)
      })(),
    )
    const f = formRecord(account)
    await within(
      HANG_MS,
      store.transaction((tx) => tx.forms.insert(f)),
    )
    // Listening again on a connection of its own: a key made by another process is heard of.
    const version = await heardFrom()
    await direct.transaction((tx) =>
      tx.keys.insertKey({ id: newId(), accountId: account, hash: `h-${newId()}`, hint: 'abcd', createdAt: T0 }),
    )
    await within(
      HANG_MS,
      (async () => {
        while ((await store.keys.keysVersion()) === version) await Bun.sleep(50)
      })(),
    )
  }, 60_000)
})

describe.skipIf(skipPostgres)('migrations', () => {
  const schemaRow = async (sql: SQL) => [...(await sql`SELECT version, oldest_compatible FROM intake_schema`)]

  test('5 stores opened at once on an empty database apply the schema once; none calls it an upgrade', async () => {
    const database = await freshDatabase(false)
    const upgrades: Upgrade[] = []
    const opened = await within(
      20_000,
      Promise.all(
        Array.from({ length: 5 }, () => openStore(database.url, { poolSize: 2, onUpgrade: (u) => upgrades.push(u) })),
      ),
    )
    expect(opened.map((s) => s.schemaVersion)).toEqual([1, 1, 1, 1, 1].map(() => POSTGRES_SCHEMA_VERSION))
    expect(upgrades).toEqual([])
    const sql = inspect(database.url)
    expect(await schemaRow(sql)).toEqual([{ version: POSTGRES_SCHEMA_VERSION, oldest_compatible: 1 }])
    await opened[0]!.transaction((tx) => tx.keys.ensureAccount(newId(), 'default', T0))
    expect(await opened[4]!.keys.listKeys()).toEqual([])
  }, 30_000)

  test('migrate: false writes nothing, not even the schema table', async () => {
    const database = await freshDatabase(false)
    const store = await openStore(database.url, { migrate: false })
    expect(store.schemaVersion).toBe(0)
    const sql = inspect(database.url)
    const [row] = await sql`SELECT to_regclass('intake_schema') IS NULL AS absent`
    expect(row.absent).toBe(true)
  }, 30_000)

  test("a newer intake's database is refused untouched when it needs a newer intake, and runs when it allows this one", async () => {
    const database = await freshDatabase()
    const sql = inspect(database.url)
    const newer = POSTGRES_SCHEMA_VERSION + 1
    await sql.unsafe(
      `UPDATE intake_schema SET version = ${newer + 1}, oldest_compatible = ${newer}; CREATE TABLE from_the_future (x int)`,
    )
    const tables = async () =>
      (await sql`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`).map(
        (r: { table_name: string }) => r.table_name,
      )
    const before = await tables()
    const refused = await settle(openPostgresStore(database.url, { connectTimeoutMs: 2000 }))
    expect(refused.ok).toBe(false)
    const error = (refused as { error: Error }).error
    expect(error).toBeInstanceOf(DatabaseOpenError)
    expect(error.message).toBe(
      `The PostgreSQL database at ${describeDatabaseUrl(database.url)} was written by a newer intake (schema ${newer + 1}, which needs at least schema ${newer}; this intake knows up to ${POSTGRES_SCHEMA_VERSION}). Upgrade intake; the database was not changed.`,
    )
    expect(await schemaRow(sql)).toEqual([{ version: newer + 1, oldest_compatible: newer }])
    expect(await tables()).toEqual(before)

    await sql.unsafe(`UPDATE intake_schema SET oldest_compatible = ${POSTGRES_SCHEMA_VERSION}`)
    const upgrades: Upgrade[] = []
    const store = await openStore(database.url, { onUpgrade: (u) => upgrades.push(u) })
    expect(store.schemaVersion).toBe(newer + 1)
    expect(upgrades).toEqual([])
    expect(await schemaRow(sql)).toEqual([{ version: newer + 1, oldest_compatible: POSTGRES_SCHEMA_VERSION }])
    await store.transaction((tx) => tx.keys.ensureAccount(newId(), 'default', T0))
  }, 30_000)
})

describe.skipIf(skipPostgres)('a database that cannot be reached', () => {
  test('a closed port: DatabaseUnreachable (exit code 1) after the wait, one log line per try, the password nowhere', async () => {
    // A port nothing listens on: one a server had a moment ago.
    const server = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    const port = server.port
    server.stop(true)
    const url = `postgres://intake:Sup3r-s3cret@127.0.0.1:${port}/intake`
    const lines: string[] = []
    // How long it waits is the setting's (the message says so), not measured here: a busy machine only makes it longer.
    const outcome = await within(
      10_000,
      settle(openPostgresStore(url, { connectTimeoutMs: 2500, log: (line) => lines.push(line) })),
    )
    expect(outcome.ok).toBe(false)
    const error = (outcome as { error: Error }).error
    expect(error).toBeInstanceOf(DatabaseUnreachable)
    expect(error.message).toStartWith(
      `Cannot reach the PostgreSQL database at postgres://intake@127.0.0.1:${port}/intake after 3 s: `,
    )
    expect(error.message.split('\n')).toHaveLength(1)
    expect(lines.length).toBeGreaterThanOrEqual(1)
    expect(lines.length).toBeLessThanOrEqual(3)
    expect(lines[0]).toStartWith(
      `Cannot reach the PostgreSQL database at postgres://intake@127.0.0.1:${port}/intake yet (try 1): `,
    )
    for (const text of [error.message, String(error.stack), ...lines]) expect(text).not.toContain('Sup3r-s3cret')
  }, 30_000)

  describe('on a server of its own', () => {
    let cluster: Awaited<ReturnType<typeof startThrowawayCluster>>
    beforeAll(async () => {
      if (skipPostgres) return
      cluster = await startThrowawayCluster()
    }, 60_000)
    afterAll(async () => {
      await cluster?.resume().catch(() => {})
      await cluster?.remove()
    }, 60_000)

    test('a stopped server: DatabaseUnavailable at once (ping, reads, transactions), then back by itself', async () => {
      const store = await openStore(cluster.url)
      const account = await store.transaction((tx) => tx.keys.ensureAccount(newId(), 'default', T0))
      const held = store.transaction(async (tx) => {
        await tx.forms.insert(formRecord(account))
        await Bun.sleep(1500)
        await tx.forms.insert(formRecord(account))
      })
      const heldOutcome = settle(held)
      await Bun.sleep(200)
      await cluster.pause()
      expect((await within(5000, heldOutcome)).ok).toBe(false)
      const attempts: Array<() => Promise<unknown>> = [
        () => store.ping(),
        () => store.forms.find(newId(), T0),
        () => store.transaction((tx) => tx.forms.insert(formRecord(account))),
      ]
      for (const attempt of attempts) {
        const outcome = await within(5000, settle(attempt()))
        expect(outcome.ok).toBe(false)
        expect((outcome as { error: unknown }).error).toBeInstanceOf(DatabaseUnavailable)
      }
      await cluster.resume()
      await within(5000, store.ping())
      const f = formRecord(account)
      await within(
        5000,
        store.transaction((tx) => tx.forms.insert(f)),
      )
      expect(await store.forms.find(f.id, T0)).toMatchObject({ id: f.id })
      const sql = inspect(cluster.url)
      const [row] = await sql`SELECT count(*)::int AS n FROM forms`
      expect(row.n).toBe(1)
    }, 30_000)

    test('a URL without a password takes PGPASSWORD; a wrong password is refused without showing it', async () => {
      const password = `pw-${randomBytes(6).toString('hex')}`
      const sql = inspect(cluster.url)
      await sql.unsafe(`CREATE ROLE alice LOGIN CREATEDB PASSWORD '${password}'`)
      await sql.unsafe('CREATE DATABASE alices OWNER alice')
      await cluster.authenticate('host all alice 127.0.0.1/32 scram-sha-256')
      const port = new URL(cluster.url).port
      const url = `postgres://alice@127.0.0.1:${port}/alices`
      // In a process of its own: Bun reads the PG* variables when a client is made.
      const script = `
        const { openPostgresStore } = await import(${JSON.stringify(new URL('../src/stores.ts', import.meta.url).pathname)})
        try {
          const store = await openPostgresStore(process.argv[1], { connectTimeoutMs: 1500, log: (line) => console.log('log:', line) })
          await store.ping()
          console.log('opened', store.location)
          await store.close()
        } catch (error) { console.log('failed:', error.constructor.name, error.message) }`
      const open = async (env: Record<string, string>, target = url) => {
        const child = Bun.spawn([process.execPath, '-e', script, target], {
          env: { PATH: process.env.PATH ?? '', ...env },
          stdout: 'pipe',
          stderr: 'pipe',
        })
        const [out, err] = await Promise.all([
          new Response(child.stdout).text(),
          new Response(child.stderr).text(),
          child.exited,
        ])
        return out + err
      }
      expect(await open({ PGPASSWORD: password })).toBe(`opened postgres://alice@127.0.0.1:${port}/alices\n`)
      // PGDATABASE does not take the URL's database away.
      expect(await open({ PGPASSWORD: password, PGDATABASE: 'intake' })).toBe(
        `opened postgres://alice@127.0.0.1:${port}/alices\n`,
      )
      const wrong = await open({ PGPASSWORD: `${password}-wrong` })
      expect(wrong).toContain(
        `failed: DatabaseUnreachable Cannot reach the PostgreSQL database at postgres://alice@127.0.0.1:${port}/alices after 2 s: `,
      )
      expect(wrong).toContain('28P01')
      expect(wrong).not.toContain(password)
      const inUrl = await open({}, `postgres://alice:${password}-wrong@127.0.0.1:${port}/alices`)
      expect(inUrl).toContain('failed: DatabaseUnreachable')
      expect(inUrl).not.toContain(password)
    }, 30_000)
  })
})
