/**
 * Two intake instances (from source) on one PostgreSQL database behind
 * Debian's nginx, configured from docs/running.md as written (its
 * site with docs/instances.md's upstream for several instances; test/e2e/nginx.ts
 * changes only the ports and paths the test owns), under a steady load of
 * creates, API reads, page reads and answers through nginx:
 *
 * - restarted one at a time the way docs/instances.md says (each taken out of
 *   nginx, restarted, answering /healthz, then the next): every request is
 *   answered below 500 and nothing acknowledged is lost;
 * - restarted one right after the other without being taken out (issue 25:
 *   nginx's default max_fails made that 502 for 123 of 300 requests): every
 *   read is answered below 500, and a write is acknowledged or, answered
 *   502, was never carried out.
 *
 * Everything listens on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freshPostgresDatabase } from '../postgres.ts'
import { NGINX, POSTGRES, skipWithout, TEST_DATABASE_URL } from '../prerequisites.ts'
import { killAllChildren, type RunningIntake } from './binary.ts'
import { until } from './instances.ts'
import {
  failedWritesDone,
  findLostBehindNginx,
  freePort,
  guideSite,
  type RunningNginx,
  type SiteOptions,
  selfSignedCertificate,
  startNginx,
  startProxiedLoad,
  startSourceInstance,
} from './nginx.ts'

const skip = skipWithout(POSTGRES) || skipWithout(NGINX)

/** docs/instances.md: after each reload of nginx, wait 2 s. */
const AFTER_RELOAD_MS = 2_000

describe.skipIf(skip)('two instances behind nginx, configured as docs/running.md and docs/instances.md say', () => {
  let dir = ''
  let database: { url: string; drop(): Promise<void> } | undefined
  let ports: number[] = []
  let instances: RunningIntake[] = []
  let key = ''
  let nginx: RunningNginx | undefined
  let site: SiteOptions
  let ca = ''

  beforeAll(async () => {
    if (skip) return
    dir = mkdtempSync(join(tmpdir(), 'intake-nginx-'))
    database = await freshPostgresDatabase(TEST_DATABASE_URL, { migrated: false })
    ports = [await freePort(), await freePort()]
    // The first alone: it makes the schema and prints the key.
    instances = [await startSourceInstance({ databaseUrl: database.url, cwd: dir, port: ports[0]! })]
    key = instances[0]!.apiKey ?? ''
    if (!key) throw new Error(`the first instance printed no key\n${instances[0]!.stdout()}`)
    instances.push(await startSourceInstance({ databaseUrl: database.url, cwd: dir, port: ports[1]! }))
    const certificate = selfSignedCertificate(dir)
    ca = certificate.pem
    site = {
      instancePorts: ports,
      httpsPort: await freePort(),
      httpPort: await freePort(),
      certificate: certificate.certificate,
      certificateKey: certificate.key,
      accessLog: join(dir, 'intake.access.log'),
    }
    nginx = await startNginx(dir, guideSite(site), site.httpsPort)
  }, 60_000)

  afterAll(async () => {
    await nginx?.stop()
    await killAllChildren()
    await database?.drop().catch(() => {})
    if (dir) rmSync(dir, { recursive: true, force: true })
  }, 30_000)

  /** Stops instance `i` (SIGTERM, as systemd does) and starts it again on its port; resolves once it answers /healthz 200. */
  async function restart(i: number) {
    expect(await instances[i]!.stop('SIGTERM', 30_000)).toBe(0)
    instances[i] = await startSourceInstance({ databaseUrl: database!.url, cwd: dir, port: ports[i]! })
  }

  function load() {
    return startProxiedLoad({ url: nginx!.url, ca, key, workers: 4 })
  }

  test('restarted one at a time as docs/instances.md says: every request answered below 500, nothing acknowledged lost', async () => {
    const running = load()
    try {
      await until(() => running.ledger.answers.length >= 10, 20_000, 'the load to get going')
      for (let round = 0; round < 2; round++) {
        for (let i = 0; i < instances.length; i++) {
          // 1. Mark it, and no other, down; reload nginx; wait 2 s.
          nginx!.reload(guideSite({ ...site, down: [ports[i]!] }))
          await Bun.sleep(AFTER_RELOAD_MS)
          // 2. Restart it; wait until it answers /healthz.
          await restart(i)
        }
        // After the last: no instance down; reload.
        nginx!.reload(guideSite(site))
        await Bun.sleep(AFTER_RELOAD_MS)
      }
    } finally {
      await running.stop()
    }
    const { ledger } = running
    console.log(`rolling restart behind nginx: ${JSON.stringify(ledger.statuses)}`)
    expect(ledger.failures).toEqual([])
    expect(ledger.answers.length).toBeGreaterThan(10)
    expect(await findLostBehindNginx(instances[0]!.url, key, ledger)).toEqual([])
  }, 90_000)

  test('restarted one right after the other without being taken out: every read answered below 500, a write acknowledged or not carried out', async () => {
    const running = load()
    try {
      await until(() => running.ledger.answers.length >= 10, 20_000, 'the load to get going')
      const answersBefore = running.ledger.answers.length
      // As `systemctl restart` of each in turn (the next once the first answers /healthz), twice.
      for (let round = 0; round < 2; round++) for (let i = 0; i < instances.length; i++) await restart(i)
      // The load goes on until both have been answering for a while.
      await until(() => running.ledger.answers.length >= answersBefore + 20, 20_000, 'answers after the restarts')
    } finally {
      await running.stop()
    }
    const { ledger } = running
    console.log(`restarts without taking out: ${JSON.stringify(ledger.statuses)}`)
    const reads = ledger.failures.filter((failure) => failure.what === 'get' || failure.what === 'page')
    expect(reads).toEqual([])
    // A write that failed was answered 502 by nginx (never no answer at all), and was not carried out.
    const writes = ledger.failures.filter((failure) => failure.what === 'create' || failure.what === 'answer')
    expect(writes.filter((failure) => failure.status !== 502)).toEqual([])
    expect(await failedWritesDone({ url: nginx!.url, ca, instanceUrl: instances[0]!.url, key }, writes)).toEqual([])
    expect(await findLostBehindNginx(instances[0]!.url, key, ledger)).toEqual([])
  }, 90_000)
})
