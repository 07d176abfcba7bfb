/**
 * dist/intake through Debian's PgBouncer (CONTRACT 13a), with the
 * pgbouncer.ini of docs/postgresql.md ("PgBouncer", the block marked
 * `pgbouncer-ini`), only its ports, paths, database and pool mode changed:
 * in transaction and statement mode (with or without `prepare=false`)
 * intake refuses to start with one line and exit code 2, the database
 * untouched, instead of serving 500s behind a /healthz 200; in session
 * mode it serves (creates at once, answers, files, the feed, a revocation
 * heard through LISTEN). PgBouncer and the databases stay on loopback.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL, type Subprocess } from 'bun'
import { operatingBlock } from '../doc-blocks.ts'
import { freshPostgresDatabase } from '../postgres.ts'
import { PGBOUNCER, PGBOUNCER_PATH, POSTGRES, skipWithout, TEST_DATABASE_URL } from '../prerequisites.ts'
import { keysIn, request, runIntake, startIntake, useBuiltBinary } from './binary.ts'

const skip = skipWithout(POSTGRES) || skipWithout(PGBOUNCER)
const intake = useBuiltBinary('intake-pgbouncer-')
const cleanups: Array<() => unknown> = []

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
}, 60_000)

/** The password in userlist.txt, which intake gives PgBouncer in PGPASSWORD. */
const PASSWORD = 'pgbouncer-test-password'

const FORM = {
  title: 'Expenses',
  fields: [
    { key: 'name', type: 'text', label: 'Name', required: true },
    { key: 'receipt', type: 'file', label: 'Receipt', required: false },
  ],
}

/** A port nothing listens on now. */
function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const { port } = probe
  probe.stop(true)
  return port
}

/** Replaces the one line of `ini` that `pattern` matches (the guide changed otherwise). */
function replaceLine(ini: string, pattern: RegExp, line: string): string {
  const found = ini.split('\n').filter((l) => pattern.test(l)).length
  if (found !== 1)
    throw new Error(`the pgbouncer.ini of docs/postgresql.md: expected one line matching ${pattern}, found ${found}`)
  return ini
    .split('\n')
    .map((l) => (pattern.test(l) ? line : l))
    .join('\n')
}

/**
 * PgBouncer in front of `databaseUrl`'s database with the guide's
 * pgbouncer.ini in `mode`, as a child of the test (not a daemon; as the
 * user "postgres" when the test runs as root, since PgBouncer refuses root).
 * Returns intake's URL through it (the guide's database alias, "intake").
 */
async function startPgBouncer(
  databaseUrl: string,
  mode: 'session' | 'transaction' | 'statement',
): Promise<{ url: string; log: () => string }> {
  const server = new URL(databaseUrl)
  const dir = mkdtempSync('/var/tmp/intake-pgbouncer-')
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const port = freePort()
  let ini = operatingBlock('pgbouncer-ini')
  ini = replaceLine(
    ini,
    /^intake = host=/,
    `intake = host=127.0.0.1 port=${server.port} dbname=${server.pathname.slice(1)}`,
  )
  ini = replaceLine(ini, /^listen_port = /, `listen_port = ${port}`)
  ini = replaceLine(ini, /^auth_file = /, `auth_file = ${join(dir, 'userlist.txt')}`)
  ini = replaceLine(ini, /^pool_mode = /, `pool_mode = ${mode}`)
  // No unix socket: nothing is written outside the test's folder.
  ini += 'unix_socket_dir =\n'
  writeFileSync(join(dir, 'pgbouncer.ini'), ini)
  writeFileSync(join(dir, 'userlist.txt'), `"intake" "${PASSWORD}"\n`)
  for (const path of [dir, join(dir, 'pgbouncer.ini'), join(dir, 'userlist.txt')])
    chmodSync(path, path === dir ? 0o755 : 0o644)
  const asRoot = process.getuid?.() === 0
  const command = [
    ...(asRoot ? ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups'] : []),
    PGBOUNCER_PATH,
    join(dir, 'pgbouncer.ini'),
  ]
  const child: Subprocess<'ignore', 'pipe', 'pipe'> = Bun.spawn(command, {
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let log = ''
  const decoder = new TextDecoder()
  void (async () => {
    for await (const chunk of child.stderr) log += decoder.decode(chunk, { stream: true })
  })()
  cleanups.push(async () => {
    child.kill('SIGTERM')
    await child.exited
  })
  const deadline = Date.now() + 10_000
  while (!/listening on 127\.0\.0\.1:\d+/.test(log)) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`PgBouncer did not start (exit code ${child.exitCode}):\n${log}`)
    await Bun.sleep(25)
  }
  return { url: `postgres://intake@127.0.0.1:${port}/intake`, log: () => log }
}

async function freshDatabase(): Promise<string> {
  const database = await freshPostgresDatabase(TEST_DATABASE_URL, { migrated: false })
  cleanups.push(() => database.drop().catch(() => {}))
  return database.url
}

const REFUSAL =
  'is reached through a connection pooler that shares server sessions between connections (PgBouncer in transaction or statement mode): ' +
  'intake needs a session of its own on each connection, for its prepared statements and LISTEN. ' +
  'Use pool_mode = session, or connect to PostgreSQL directly (docs/postgresql.md, "PgBouncer").'

describe.skipIf(skip)('intake through PgBouncer', () => {
  for (const mode of ['transaction', 'statement'] as const) {
    test(`${mode} mode: serve and migrate refuse to start with one line and exit code 2 (with and without prepare=false); the database is untouched`, async () => {
      const database = await freshDatabase()
      const pgbouncer = await startPgBouncer(database, mode)
      for (const url of [pgbouncer.url, `${pgbouncer.url}?prepare=false`]) {
        for (const args of [['serve', '--port', '0'], ['migrate']]) {
          const result = await runIntake(intake.path, args, {
            cwd: intake.tempDir(),
            env: { SERVICE_DATABASE_URL: url, PGPASSWORD: PASSWORD },
            timeoutMs: 30_000,
          })
          expect({ args, url, code: result.code }).toEqual({ args, url, code: 2 })
          expect(result.stderr).toBe(
            `intake: The PostgreSQL database at postgres://intake@127.0.0.1:${new URL(url).port}/intake ${REFUSAL}\n`,
          )
          expect(keysIn(result.stdout)).toEqual([])
          expect(result.stdout + result.stderr).not.toContain(PASSWORD)
        }
      }
      const sql = new SQL(database, { max: 1 })
      const [row] = await sql`SELECT count(*)::int AS tables FROM pg_tables WHERE schemaname = 'public'`
      await sql.close()
      expect(row.tables).toBe(0)
    }, 90_000)
  }

  test('session mode: creates at once, answers (JSON, the page, a file), the feed, and a revocation heard within a second', async () => {
    const database = await freshDatabase()
    const pgbouncer = await startPgBouncer(database, 'session')
    const env = {
      SERVICE_DATABASE_URL: pgbouncer.url,
      PGPASSWORD: PASSWORD,
      SERVICE_RATE_LIMIT: '0',
      SERVICE_PUBLIC_RATE_LIMIT: '0',
    }
    const cwd = intake.tempDir()
    const server = await startIntake(intake.path, { cwd, env })
    cleanups.push(() => server.stop('SIGKILL').catch(() => {}))
    const key = server.apiKey!
    expect(key).toMatch(/^svc_live_/)

    const created = await Promise.all(
      Array.from({ length: 100 }, () => request(`${server.url}/api/v1/forms`, { key, body: FORM })),
    )
    expect(created.map((res) => res.status)).toEqual(created.map(() => 201))
    const [first, second] = created.map((res) => res.body.id as string)
    expect((await request(`${server.url}/f/${first}`, { body: { name: 'Ada' } })).status).toBe(201)
    const post = new FormData()
    post.append('name', 'Grace')
    post.append(
      'receipt',
      new File([new Uint8Array(300_000).fill(7)], 'receipt.bin', { type: 'application/octet-stream' }),
    )
    expect((await fetch(`${server.url}/f/${second}`, { method: 'POST', body: post, redirect: 'manual' })).status).toBe(
      303,
    )
    const [response] = (await request(`${server.url}/api/v1/forms/${second}/responses`, { key })).body
    const file = await fetch(response.data.receipt.replace(/^http:\/\/localhost:\d+/, server.url), {
      headers: { authorization: `Bearer ${key}` },
    })
    expect((await file.arrayBuffer()).byteLength).toBe(300_000)
    const feed = await request(`${server.url}/api/v1/events`, { key })
    expect(feed.status).toBe(200)
    expect(JSON.stringify(feed.body)).toContain(first!)
    expect(JSON.stringify(feed.body)).toContain(second!)

    // Another process, through PgBouncer too, makes a key and revokes it: the server hears of it by LISTEN.
    const made = await runIntake(intake.path, ['keys', 'create', '--account', 'research'], { cwd, env })
    expect(made.code).toBe(0)
    const [other] = keysIn(made.stdout)
    expect((await request(`${server.url}/api/v1/forms`, { key: other })).status).toBe(200)
    const keys = JSON.parse((await runIntake(intake.path, ['keys', 'list', '--json'], { cwd, env })).stdout) as Array<{
      id: string
      account: string
    }>
    expect(
      (await runIntake(intake.path, ['keys', 'revoke', keys.find((k) => k.account === 'research')!.id], { cwd, env }))
        .code,
    ).toBe(0)
    const revokedAt = Date.now()
    while ((await request(`${server.url}/api/v1/forms`, { key: other })).status !== 401) {
      if (Date.now() - revokedAt > 1000)
        throw new Error('the revoked key was still accepted a second after its revocation')
      await Bun.sleep(20)
    }
    expect((await request(`${server.url}/healthz`)).status).toBe(200)
    expect(server.stdout() + server.stderr()).not.toContain('internal error')
    expect(pgbouncer.log()).not.toContain('unsupported startup parameter')
    expect(await server.stop()).toBe(0)
  }, 90_000)
})
