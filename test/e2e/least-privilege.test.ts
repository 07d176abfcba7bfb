/**
 * The least-privilege setup of docs/postgresql.md ("The role and the
 * database", the blocks marked `least-privilege-role` and
 * `least-privilege-grants`), run as written on the test cluster (CONTRACT
 * 13a): the role block as a superuser, the grants as the owner, with roles
 * and a database of the test's own in place of `intake` and `intake_app`.
 * The owner migrates (dist/intake migrate) and later adds a table and a
 * sequence as a later migration would; then dist/intake serves, makes and
 * revokes keys and backs up as the restricted role, and every route of the
 * API and the page that reads or writes answers without a 500 (the old
 * recipe's grants lacked the sequences: `permission denied for sequence
 * events_seq_seq` on every answer, cancel, expiry and delete).
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { SQL } from 'bun'
import { operatingBlock } from '../doc-blocks.ts'
import { databaseUrl } from '../postgres.ts'
import { POSTGRES, skipWithout, TEST_DATABASE_URL } from '../prerequisites.ts'
import { keysIn, request, runIntake, startIntake, useBuiltBinary } from './binary.ts'

const skipPostgres = skipWithout(POSTGRES)
const intake = useBuiltBinary('intake-least-privilege-')
const cleanups: Array<() => unknown> = []

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
}, 60_000)

/** `url` (the test cluster's) as `user`, on database `name`. */
function urlAs(user: string, name: string): string {
  const url = new URL(databaseUrl(TEST_DATABASE_URL, name))
  url.username = user
  url.password = ''
  return url.toString()
}

/** A guide's block with the test's roles for `intake` (the owner) and `intake_app`, and a password for '…'. */
function recipe(block: string, roles: { owner: string; app: string }): string {
  const sql = operatingBlock(block)
  if (!sql.includes('intake_app'))
    throw new Error(`the block ${block} of docs/postgresql.md no longer names intake_app`)
  return sql
    .replace(/\bintake_app\b/g, roles.app)
    .replace(/\bintake\b/g, roles.owner)
    .replace(/'…'/g, `'${randomBytes(12).toString('hex')}'`)
}

async function until(condition: () => Promise<boolean>, ms: number, what: string) {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up after ${ms} ms waiting for: ${what}`)
    await Bun.sleep(50)
  }
}

/** A receiver on 127.0.0.1 that records every delivery and answers 200. */
function receiver() {
  const received: Array<{ event: string; formId: string }> = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const body = JSON.parse(await req.text())
      received.push({ event: req.headers.get('x-service-event') ?? '', formId: body.form_id })
      return new Response('ok')
    },
  })
  cleanups.push(() => server.stop(true))
  return { url: `http://127.0.0.1:${server.port}/hook`, received }
}

describe.skipIf(skipPostgres)('the least-privilege setup of docs/postgresql.md, as written', () => {
  test('the owner migrates; the restricted role serves every route, makes and revokes keys, backs up: no 500 anywhere, and it cannot create a table', async () => {
    const suffix = randomBytes(4).toString('hex')
    const roles = { owner: `lp_owner_${suffix}`, app: `lp_app_${suffix}` }
    const name = `lp_${suffix}`
    const admin = new SQL(TEST_DATABASE_URL, { max: 1 })
    cleanups.push(async () => {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {})
      for (const role of [roles.app, roles.owner]) await admin.unsafe(`DROP ROLE IF EXISTS ${role}`).catch(() => {})
      await admin.close()
    })
    // The simplest setup of the guide: the owner can log in, owns its database, and nothing more.
    await admin.unsafe(`CREATE ROLE ${roles.owner} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE`)
    await admin.unsafe(`CREATE DATABASE ${name} OWNER ${roles.owner}`)
    const ownerUrl = urlAs(roles.owner, name)
    const appUrl = urlAs(roles.app, name)

    // Step 1, as a superuser.
    await admin.unsafe(recipe('least-privilege-role', roles))
    const cwd = intake.tempDir()
    const migrated = await runIntake(intake.path, ['migrate'], { cwd, env: { SERVICE_DATABASE_URL: ownerUrl } })
    expect(migrated.code).toBe(0)
    // Step 2, as the owner.
    const owner = new SQL(ownerUrl, { max: 1 })
    cleanups.push(() => owner.close())
    await owner.unsafe(recipe('least-privilege-grants', roles))
    // A later migration adds a table with a sequence: the restricted role may use both, with no step of the operator's.
    await owner.unsafe('CREATE TABLE later_migration (id bigserial PRIMARY KEY, note text NOT NULL)')
    const app = new SQL(appUrl, { max: 1 })
    cleanups.push(() => app.close())
    expect(await app.unsafe(`INSERT INTO later_migration (note) VALUES ('added') RETURNING id`)).toHaveLength(1)
    // Gone again: intake backup refuses a database with tables it does not know.
    await owner.unsafe('DROP TABLE later_migration')
    // And it has no DDL.
    const refused = await app.unsafe('CREATE TABLE not_allowed (x int)').then(
      () => undefined,
      (error: { errno?: string }) => error.errno,
    )
    expect(refused).toBe('42501')

    // Step 3: everything else as the restricted role.
    const env = {
      SERVICE_DATABASE_URL: appUrl,
      SERVICE_RATE_LIMIT: '0',
      SERVICE_PUBLIC_RATE_LIMIT: '0',
      SERVICE_WEBHOOK_BLOCK_PRIVATE: 'false',
    }
    const server = await startIntake(intake.path, { cwd, env })
    cleanups.push(() => server.stop('SIGKILL').catch(() => {}))
    const key = server.apiKey!
    expect(key).toMatch(/^svc_live_/)
    const statuses: Array<[string, number]> = []
    const call = async (what: string, url: string, options: Parameters<typeof request>[1] = {}) => {
      const res = await request(`${server.url}${url}`, { key, ...options })
      statuses.push([what, res.status])
      return res
    }
    const page = async (what: string, url: string, init: RequestInit = {}) => {
      const res = await fetch(`${server.url}${url}`, { redirect: 'manual', ...init })
      statuses.push([what, res.status])
      return res
    }
    const hooks = receiver()
    const callback = { callback_url: hooks.url, callback_events: ['form.completed', 'form.expired', 'form.cancelled'] }
    const FORM = {
      title: 'Expenses',
      fields: [{ key: 'name', type: 'text', label: 'Name', required: true }],
      ...callback,
    }
    const WITH_FILE = {
      ...FORM,
      fields: [
        ...FORM.fields,
        { key: 'receipt', type: 'file', label: 'Receipt', required: true, config: { max_size: 1_000_000 } },
      ],
    }

    // Forms: made (twice with one Idempotency-Key), read, listed, their schema.
    const made = await call('create', '/api/v1/forms', { body: FORM, headers: { 'idempotency-key': 'one' } })
    expect(made.status).toBe(201)
    const a = made.body.id as string
    expect(
      (await call('create again', '/api/v1/forms', { body: FORM, headers: { 'idempotency-key': 'one' } })).body.id,
    ).toBe(a)
    await call('get', `/api/v1/forms/${a}`)
    await call('list', '/api/v1/forms')
    await call('list active', '/api/v1/forms?status=active')
    await call('schema', `/api/v1/forms/${a}/schema`)

    // Answered as JSON; its webhook delivered, then delivered again.
    expect((await call('answer (JSON)', `/f/${a}`, { body: { name: 'Ada' } })).status).toBe(201)
    await call('answer again (JSON)', `/f/${a}`, { body: { name: 'Ada' } })
    await call('responses', `/api/v1/forms/${a}/responses`)
    await until(async () => hooks.received.some((r) => r.formId === a), 10_000, 'the completion webhook')
    await until(
      async () => (await call('deliveries', `/api/v1/forms/${a}/deliveries`)).body[0]?.status === 'delivered',
      10_000,
      'the delivery delivered',
    )
    const [delivery] = (await call('deliveries', `/api/v1/forms/${a}/deliveries`)).body
    expect(
      (await call('redeliver', `/api/v1/forms/${a}/deliveries/${delivery.id}/redeliver`, { method: 'POST' })).status,
    ).toBe(202)
    await until(async () => hooks.received.filter((r) => r.formId === a).length >= 2, 10_000, 'the delivery sent again')

    // Through the page, with a file: kept across a 422, then sent; the receipt; the file read back.
    const b = (await call('create (file)', '/api/v1/forms', { body: WITH_FILE })).body.id as string
    expect((await page('the page', `/f/${b}`)).status).toBe(200)
    const bytes = crypto.getRandomValues(new Uint8Array(200_000))
    const first = new FormData()
    first.append('receipt', new File([bytes], 'receipt.bin', { type: 'application/octet-stream' }))
    const refusedPost = await page('a post with a field missing', `/f/${b}`, { method: 'POST', body: first })
    expect(refusedPost.status).toBe(422)
    const hold = /name="_held_receipt" value="([^"]+)"/.exec(await refusedPost.text())?.[1]
    expect(hold).toBeString()
    const second = new FormData()
    second.append('name', 'Grace')
    second.append('_held_receipt', hold!)
    const sent = await page('the post again, the file kept', `/f/${b}`, { method: 'POST', body: second })
    expect(sent.status).toBe(303)
    const cookie = (sent.headers.get('set-cookie') ?? '').split(';')[0]!
    expect((await page('the receipt', sent.headers.get('location')!, { headers: { cookie } })).status).toBe(200)
    const [response] = (await call('responses (file)', `/api/v1/forms/${b}/responses`)).body
    await call('one response', `/api/v1/forms/${b}/responses/${response.id}`)
    const file = await fetch(response.data.receipt.replace(/^http:\/\/localhost:\d+/, server.url), {
      headers: { authorization: `Bearer ${key}` },
    })
    statuses.push(['download', file.status])
    expect(Buffer.compare(new Uint8Array(await file.arrayBuffer()), bytes)).toBe(0)

    // An expiry set, and swept; a cancel; a delete.
    const c = (await call('create (to expire)', '/api/v1/forms', { body: FORM })).body.id as string
    const soon = new Date(Date.now() + 1500).toISOString()
    expect(
      (await call('set an expiry', `/api/v1/forms/${c}`, { method: 'PATCH', body: { expires_at: soon } })).status,
    ).toBe(200)
    await until(
      async () => hooks.received.some((r) => r.formId === c && r.event === 'form.expired'),
      15_000,
      'the expiry swept and its webhook',
    )
    expect((await call('the expired form', `/api/v1/forms/${c}`)).body.status).toBe('expired')
    await page('the expired page', `/f/${c}`)
    const d = (await call('create (to cancel)', '/api/v1/forms', { body: FORM })).body.id as string
    expect(
      (await call('cancel', `/api/v1/forms/${d}`, { method: 'PATCH', body: { status: 'cancelled' } })).status,
    ).toBe(200)
    await until(
      async () => hooks.received.some((r) => r.formId === d && r.event === 'form.cancelled'),
      10_000,
      'the cancel webhook',
    )
    expect((await call('delete', `/api/v1/forms/${b}`, { method: 'DELETE' })).status).toBe(204)
    expect((await call('the deleted form', `/api/v1/forms/${b}`)).status).toBe(404)

    // The event feed, and MCP.
    const feed = await call('the event feed', '/api/v1/events')
    expect(feed.status).toBe(200)
    const types = JSON.stringify(feed.body)
    for (const type of ['form.completed', 'form.expired', 'form.cancelled', 'form.deleted'])
      expect(types).toContain(type)
    const mcp = await call('MCP list_forms', '/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_forms', arguments: {} } },
      headers: { accept: 'application/json, text/event-stream' },
    })
    expect(mcp.body.result?.isError).toBeFalsy()

    // Keys, as the operator makes and revokes them: with the server's settings.
    const keyMade = await runIntake(intake.path, ['keys', 'create', '--account', 'research'], { cwd, env })
    expect(keyMade.code).toBe(0)
    const [other] = keysIn(keyMade.stdout)
    expect((await call('with the new key', '/api/v1/forms', { key: other })).status).toBe(200)
    const listed = await runIntake(intake.path, ['keys', 'list', '--json'], { cwd, env })
    expect(listed.code).toBe(0)
    const research = (JSON.parse(listed.stdout) as Array<{ id: string; account: string }>).find(
      (k) => k.account === 'research',
    )!
    expect((await runIntake(intake.path, ['keys', 'revoke', research.id], { cwd, env })).code).toBe(0)
    await until(
      async () => (await request(`${server.url}/api/v1/forms`, { key: other })).status === 401,
      5000,
      'the revoked key refused',
    )
    const backup = await runIntake(intake.path, ['backup', join(cwd, 'backup.db')], { cwd, env })
    expect({ code: backup.code, stderr: backup.stderr }).toEqual({ code: 0, stderr: '' })
    expect((await call('health', '/healthz')).status).toBe(200)

    expect(statuses.filter(([, status]) => status >= 500)).toEqual([])
    const output = server.stdout() + server.stderr()
    expect(output).not.toContain('internal error')
    expect(output).not.toContain('permission denied')
    expect(await server.stop()).toBe(0)
  }, 120_000)
})
