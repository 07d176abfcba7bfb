/**
 * Two intake instances (from source, with the default drain) on one
 * PostgreSQL database behind Debian's nginx, configured with the site of
 * docs/operating.md as written (test/e2e/nginx.ts changes only the ports and
 * paths the test owns), under a steady load of creates, API reads, page
 * reads, answers and long-polls through nginx, restarted one at a time by
 * the rolling-restart script of docs/operating.md run as written: it takes
 * each instance out of nginx's upstream (`down`, `nginx -t`, a reload of the
 * test's nginx), restarts it (its `systemctl restart` stops the instance
 * with SIGTERM, checks it exits 0 and starts it again), waits for the real
 * `intake healthcheck` and puts it back. No request fails: every one is
 * answered with its normal status, nothing acknowledged is lost, and nginx
 * never sees a connection cut under a request.
 *
 * Everything listens on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { operatingBlock } from '../doc-blocks.ts'
import { freshPostgresDatabase } from '../postgres.ts'
import { NGINX, POSTGRES, skipWithout, TEST_DATABASE_URL } from '../prerequisites.ts'
import { childEnv, killAllChildren, PROJECT_ROOT, type RunningIntake } from './binary.ts'
import { until } from './instances.ts'
import {
  findLostBehindNginx,
  freePort,
  guideSite,
  type RunningNginx,
  selfSignedCertificate,
  startNginx,
  startProxiedLoad,
  startSourceInstance,
} from './nginx.ts'

const skip = skipWithout(POSTGRES) || skipWithout(NGINX)

/** What each kind of request of the load answers when nothing fails. */
const NORMAL_STATUS = { create: '201', get: '200', page: '200', answer: '201', wait: '200' }
/** Clients creating, reading, opening and answering forms through nginx (INTAKE_NGINX_TEST_WORKERS, 8 unless set), and clients long-polling. */
const WORKERS = Number(process.env.INTAKE_NGINX_TEST_WORKERS ?? 8)
const WAITERS = 2

describe.skipIf(skip)('two draining instances behind nginx, configured as docs/operating.md says', () => {
  let dir = ''
  let database: { url: string; drop(): Promise<void> } | undefined
  let ports: number[] = []
  let instances: RunningIntake[] = []
  let key = ''
  let nginx: RunningNginx | undefined
  let ca = ''
  /** Stands in for systemd: `systemctl restart intake@PORT` of the recipe comes here. */
  let systemd: ReturnType<typeof Bun.serve> | undefined
  const stops: Array<{ port: number; exitCode: number | null }> = []

  /** The product's own drain (SERVICE_DRAIN_SECONDS unset): what the site's keepalive_timeout is chosen for. */
  const start = (port: number) =>
    startSourceInstance({ databaseUrl: database!.url, cwd: dir, port, env: { SERVICE_DRAIN_SECONDS: undefined } })

  beforeAll(async () => {
    if (skip) return
    dir = mkdtempSync(join(tmpdir(), 'intake-nginx-'))
    database = await freshPostgresDatabase(TEST_DATABASE_URL, { migrated: false })
    ports = [await freePort(), await freePort()]
    // The first alone: it makes the schema and prints the key.
    instances = [await start(ports[0]!)]
    key = instances[0]!.apiKey ?? ''
    if (!key) throw new Error(`the first instance printed no key\n${instances[0]!.stdout()}`)
    instances.push(await start(ports[1]!))
    const certificate = selfSignedCertificate(dir)
    ca = certificate.pem
    const site = {
      instancePorts: ports,
      httpsPort: await freePort(),
      httpPort: await freePort(),
      certificate: certificate.certificate,
      certificateKey: certificate.key,
      accessLog: join(dir, 'intake.access.log'),
    }
    nginx = await startNginx(dir, guideSite(site), site.httpsPort)
    systemd = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      // A restart takes the drain and a start: longer than Bun's default 10 s would wait without a byte.
      idleTimeout: 60,
      fetch: async (request) => {
        const port = Number(/^\/restart\/intake@(\d+)$/.exec(new URL(request.url).pathname)?.[1])
        const i = ports.indexOf(port)
        if (i < 0) return new Response(`no unit for ${request.url}\n`, { status: 404 })
        // As systemd: SIGTERM, wait for the exit, start again (Type=exec: once it runs; ours once it listens).
        stops.push({ port, exitCode: await instances[i]!.stop('SIGTERM', 30_000) })
        instances[i] = await start(port)
        return new Response('')
      },
    })
  }, 60_000)

  afterAll(async () => {
    await systemd?.stop(true)
    await nginx?.stop()
    await killAllChildren()
    await database?.drop().catch(() => {})
    if (dir) rmSync(dir, { recursive: true, force: true })
  }, 30_000)

  /**
   * The recipe as written, its ports and site file the test's, with `sudo`, `systemctl`, `nginx` and
   * `intake` on PATH as stand-ins: `systemctl reload nginx` and `nginx` act on the test's nginx.
   */
  function runRecipe() {
    const bin = join(dir, 'bin')
    mkdirSync(bin, { recursive: true })
    const stub = (name: string, body: string) => writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 })
    const quoted = (args: string[]) => args.map((arg) => `'${arg}'`).join(' ')
    stub('sudo', 'exec "$@"')
    stub('nginx', `exec ${quoted(nginx!.command)} "$@"`)
    stub(
      'systemctl',
      // Debian's nginx.service reloads with `nginx -s reload`. A restart asks the test's stand-in
      // for systemd, and fails as systemctl does when the restart did.
      [
        'if [ "$1 $2" = "reload nginx" ]; then exec nginx -s reload; fi',
        '[ "$1" = restart ] || exit 2',
        `exec '${process.execPath}' -e 'const r = await fetch(process.argv[1], { method: "POST" }); if (!r.ok) { console.error(await r.text()); process.exit(1) }' "http://127.0.0.1:${systemd!.port}/restart/$2"`,
      ].join('\n'),
    )
    stub('intake', `exec '${process.execPath}' '${join(PROJECT_ROOT, 'src', 'main.ts')}' "$@"`)
    const recipe = operatingBlock('rolling-restart')
    const ours = [
      ['for port in 8080 8081;', `for port in ${ports.join(' ')};`],
      ['site=/etc/nginx/sites-available/intake\n', `site='${nginx!.siteFile}'\n`],
    ] as const
    for (const [theirs] of ours)
      if (!recipe.includes(theirs)) throw new Error(`the rolling-restart recipe changed (no "${theirs}"):\n${recipe}`)
    const script = join(dir, 'rolling-restart.sh')
    writeFileSync(
      script,
      ours.reduce((text, [theirs, mine]) => text.replace(theirs, mine), recipe),
    )
    const proc = Bun.spawn(['sh', script], {
      env: childEnv({ PATH: `${bin}:${process.env.PATH}` }),
      stdout: 'pipe',
      stderr: 'pipe',
    })
    return Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  }

  test('a rolling restart under load, as docs/operating.md says: every instance exits 0, no request fails, nothing is lost', async () => {
    const siteBefore = readFileSync(nginx!.siteFile, 'utf8')
    const running = startProxiedLoad({ url: nginx!.url, ca, key, workers: WORKERS, waiters: WAITERS })
    let answeredDuringRestarts = 0
    try {
      await until(() => running.ledger.answers.length >= 10, 20_000, 'the load to get going')
      const before = answered(running.ledger)
      for (let round = 0; round < 2; round++) {
        const [code, stdout, stderr] = await runRecipe()
        expect({ code, stdout, stderr }).toMatchObject({ code: 0 })
        expect(stdout).toContain('200 {"status":"ok"}')
      }
      answeredDuringRestarts = answered(running.ledger) - before
      const answersBefore = running.ledger.answers.length
      await until(() => running.ledger.answers.length >= answersBefore + 10, 20_000, 'answers after the restarts')
    } finally {
      await running.stop()
    }
    const { ledger } = running
    console.log(
      `rolling restart behind nginx, ${WORKERS} clients and ${WAITERS} long-pollers: ${answeredDuringRestarts} requests answered during the restarts; all: ${JSON.stringify(ledger.statuses)}`,
    )
    expect(stops).toEqual([...ports, ...ports].map((port) => ({ port, exitCode: 0 })))
    expect(ledger.failures).toEqual([])
    const kinds = Object.fromEntries(
      Object.entries(ledger.statuses).map(([what, counts]) => [what, Object.keys(counts)]),
    )
    expect(kinds).toEqual(Object.fromEntries(Object.entries(NORMAL_STATUS).map(([what, status]) => [what, [status]])))
    expect(await findLostBehindNginx(instances[0]!.url, key, ledger)).toEqual([])
    // Every instance is back in the upstream, and nginx never had a connection cut under a request.
    expect(readFileSync(nginx!.siteFile, 'utf8')).toBe(siteBefore)
    expect(nginx!.errorLog().match(/.*(upstream prematurely closed|reset by peer|refused).*/g) ?? []).toEqual([])
  }, 240_000)
})

/** Requests of the load answered so far, whatever their status. */
function answered(ledger: { statuses: Record<string, Record<number, number>> }): number {
  return Object.values(ledger.statuses)
    .flatMap((byStatus) => Object.values(byStatus))
    .reduce((sum, n) => sum + n, 0)
}
