/**
 * The console's people from the real executable: the first start's link for
 * the first operator, and `intake users add / reset / list / remove` while the
 * server runs. Servers run on 127.0.0.1 with --port 0, each on its own temp database.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { killAllChildren, type RunningIntake, runIntake, startIntake, useBuiltBinary } from './e2e/binary.ts'

const STEP_TIMEOUT = 30_000
const PASSWORD = 'correct horse battery staple'
const intake = useBuiltBinary('intake-console-cli-')

const SETUP_LINK = /(http:\/\/\S+\/console\/setup\/[A-Za-z0-9_-]{43})/

/** A browser's request to the running server: no redirects followed, a form post when given fields. */
function browse(
  server: RunningIntake,
  path: string,
  options: { cookie?: string; fields?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { accept: 'text/html' }
  if (options.cookie) headers.cookie = options.cookie
  return fetch(`${server.url}${path}`, {
    method: options.fields ? 'POST' : 'GET',
    headers,
    body: options.fields ? new URLSearchParams(options.fields) : undefined,
    redirect: 'manual',
  })
}

const cookieOf = (response: Response) => response.headers.get('set-cookie')?.split(';')[0]
const pathOf = (link: string) => new URL(link).pathname

describe('the console from the command line', () => {
  let cwd: string
  let server: RunningIntake
  const users = (...args: string[]) => runIntake(intake.path, ['users', ...args], { cwd })

  beforeAll(async () => {
    cwd = intake.tempDir()
    server = await startIntake(intake.path, { cwd, args: ['serve', '--port', '0'] })
  }, STEP_TIMEOUT)
  afterAll(() => killAllChildren())

  test(
    'the first start prints a one-time link; its page asks the first operator’s email and signs them in',
    async () => {
      const link = SETUP_LINK.exec(server.stdout())?.[1]
      expect(link).toStartWith(`http://localhost:${server.port}/console/setup/`)
      const page = await browse(server, pathOf(link!))
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('name="email"')
      const setUp = await browse(server, pathOf(link!), {
        fields: { email: 'Ops@Example.com', password: PASSWORD, again: PASSWORD },
      })
      expect(setUp.status).toBe(303)
      const accounts = await browse(server, '/console', { cookie: cookieOf(setUp) })
      expect(accounts.status).toBe(200)
      expect(await accounts.text()).toContain('Signed in as ops@example.com')
      expect((await browse(server, pathOf(link!))).status).toBe(404)
    },
    STEP_TIMEOUT,
  )

  test(
    'a later start prints no link',
    async () => {
      expect(await server.stop()).toBe(0)
      server = await startIntake(intake.path, { cwd, args: ['serve', '--port', '0'] })
      expect(server.stdout()).not.toMatch(SETUP_LINK)
      expect(server.stdout()).not.toContain('/console/setup/')
    },
    STEP_TIMEOUT,
  )

  test(
    'users add prints a link that works against the running server; list, reset and remove',
    async () => {
      expect((await runIntake(intake.path, ['keys', 'create', '--account', 'research'], { cwd })).code).toBe(0)
      const added = await users('add', 'ada@example.com', '--account', 'research', '--base-url', server.url)
      expect({ code: added.code, stderr: added.stderr }).toEqual({ code: 0, stderr: '' })
      expect(added.stdout).toContain('Added ada@example.com, a member of account "research".')
      const link = SETUP_LINK.exec(added.stdout)?.[1]
      expect(link).toStartWith(`${server.url}/console/setup/`)
      const setUp = await browse(server, pathOf(link!), { fields: { password: PASSWORD, again: PASSWORD } })
      expect(setUp.status).toBe(303)
      const cookie = cookieOf(setUp)
      expect((await browse(server, '/console', { cookie })).headers.get('location')).toStartWith('/console/accounts/')

      const listed = JSON.parse((await users('list', '--json')).stdout)
      expect(listed).toEqual([
        {
          email: 'ada@example.com',
          operator: false,
          account: 'research',
          password_set: true,
          last_seen_at: expect.any(String),
        },
        {
          email: 'ops@example.com',
          operator: true,
          account: null,
          password_set: true,
          last_seen_at: expect.any(String),
        },
      ])
      const table = (await users('list')).stdout
      expect(table).toMatch(/^EMAIL\s+SEES\s+PASSWORD SET\s+LAST SEEN/)
      expect(table).toContain('account research')

      const reset = await users('reset', 'ADA@example.com')
      expect(reset.code).toBe(0)
      const newLink = SETUP_LINK.exec(reset.stdout)?.[1]
      expect(newLink).toBeDefined()
      expect(newLink).not.toBe(link)
      const removed = await users('remove', 'ada@example.com')
      expect(removed.stdout).toContain('Removed ada@example.com')
      // Removed while signed in: the very next page sends them to sign in; the reset link is gone too.
      expect((await browse(server, '/console', { cookie })).status).toBe(303)
      expect((await browse(server, pathOf(newLink!))).status).toBe(404)
    },
    STEP_TIMEOUT,
  )

  test(
    'mistakes exit 2 with one line: no role, both roles, an unknown account, an unknown email, a taken one',
    async () => {
      for (const args of [
        ['add', 'x@example.com'],
        ['add', 'x@example.com', '--operator', '--account', 'research'],
        ['add', 'x@example.com', '--account', 'nobody'],
        ['add', 'not-an-email', '--operator'],
        ['add', 'ops@example.com', '--operator'],
        ['reset', 'nobody@example.com'],
        ['remove', 'nobody@example.com'],
        ['frobnicate'],
      ]) {
        const result = await users(...args)
        expect({ args, code: result.code, lines: result.stderr.trim().split('\n').length }).toEqual({
          args,
          code: 2,
          lines: 1,
        })
      }
    },
    STEP_TIMEOUT,
  )
})
