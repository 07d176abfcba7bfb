/**
 * Signing in to the console (CONTRACT 15): set-up links, passwords, sessions
 * and their expiry, sign-out, CSRF and cross-site refusals, who sees what.
 */
import { describe, expect, test } from 'bun:test'
import {
  addConsoleUser,
  CONSOLE_PASSWORD,
  clientFor,
  consoleClient,
  consoleRequest,
  sessionCookieOf,
  setUpThroughLink,
} from './console-fixtures.ts'
import { contextsPerTest, type TestContext } from './utils.ts'

const DAY = 86_400_000
const contexts = contextsPerTest()

const signIn = (t: TestContext, email: string, password: string, headers: Record<string, string> = {}) =>
  consoleRequest(t, 'POST', '/console/sign-in', { body: new URLSearchParams({ email, password }), headers })

describe('set-up links', () => {
  test('a link sets the password and signs in; it works once', async () => {
    const t = await contexts.create()
    const user = await addConsoleUser(t, { operator: true }, 'ops@example.com')
    const page = await consoleRequest(t, 'GET', user.setupPath)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('ops@example.com')
    const cookie = await setUpThroughLink(t, user.setupPath)
    expect((await consoleRequest(t, 'GET', '/console', { cookie })).status).toBe(200)
    expect((await consoleRequest(t, 'GET', user.setupPath)).status).toBe(404)
    const again = await consoleRequest(t, 'POST', user.setupPath, {
      body: new URLSearchParams({ password: 'another long password', again: 'another long password' }),
    })
    expect(again.status).toBe(404)
    expect(sessionCookieOf(again)).toBeUndefined()
  })

  test('a link is refused after 24 hours', async () => {
    const t = await contexts.create()
    const user = await addConsoleUser(t, { operator: true })
    t.clock.advance(DAY - 1000)
    expect((await consoleRequest(t, 'GET', user.setupPath)).status).toBe(200)
    t.clock.advance(1000)
    expect((await consoleRequest(t, 'GET', user.setupPath)).status).toBe(404)
    const posted = await consoleRequest(t, 'POST', user.setupPath, {
      body: new URLSearchParams({ password: CONSOLE_PASSWORD, again: CONSOLE_PASSWORD }),
    })
    expect(posted.status).toBe(404)
  })

  test('a password under 12 characters, or typed twice differently, is refused with the reason', async () => {
    const t = await contexts.create()
    const user = await addConsoleUser(t, { operator: true })
    const post = (password: string, again: string) =>
      consoleRequest(t, 'POST', user.setupPath, { body: new URLSearchParams({ password, again }) })
    const short = await post('elevenchars', 'elevenchars')
    expect(short.status).toBe(422)
    expect(await short.text()).toContain('Enter at least 12 characters')
    const mismatch = await post(CONSOLE_PASSWORD, `${CONSOLE_PASSWORD}!`)
    expect(mismatch.status).toBe(422)
    expect(await mismatch.text()).toContain('The two passwords are not the same')
    // Still usable after refusals.
    await setUpThroughLink(t, user.setupPath)
  })
})

describe('sign-in and sessions', () => {
  test('the right password signs in (the cookie as the contract says); a wrong one does not', async () => {
    const t = await contexts.create()
    const user = await addConsoleUser(t, { operator: true }, 'ops@example.com')
    await setUpThroughLink(t, user.setupPath)
    const wrong = await signIn(t, 'ops@example.com', 'not the password')
    expect(wrong.status).toBe(401)
    expect(sessionCookieOf(wrong)).toBeUndefined()
    expect(await wrong.text()).toContain('The email address or the password is not right')
    const right = await signIn(t, 'OPS@example.com ', CONSOLE_PASSWORD)
    expect(right.status).toBe(303)
    expect(right.headers.get('location')).toBe('/console')
    const setCookie = right.headers.get('set-cookie')!
    expect(setCookie).toMatch(/^intake_console=[A-Za-z0-9_-]{43};/)
    for (const part of ['HttpOnly', 'SameSite=Lax', 'Path=/console']) expect(setCookie).toContain(part)
    expect(setCookie).not.toContain('Secure')
    expect((await consoleRequest(t, 'GET', '/console', { cookie: sessionCookieOf(right) })).status).toBe(200)
  })

  test('under an https base URL the cookie is Secure', async () => {
    const t = await contexts.create({}, { baseUrl: 'https://intake.test' })
    const user = await addConsoleUser(t, { operator: true })
    const response = await consoleRequest(t, 'POST', user.setupPath, {
      body: new URLSearchParams({ password: CONSOLE_PASSWORD, again: CONSOLE_PASSWORD }),
    })
    expect(response.headers.get('set-cookie')).toContain('; Secure')
  })

  test('without a session a page is 303 to sign in (coming back after), a POST 403', async () => {
    const t = await contexts.create()
    const page = await consoleRequest(t, 'GET', '/console/password?x=1')
    expect(page.status).toBe(303)
    expect(page.headers.get('location')).toBe(`/console/sign-in?next=${encodeURIComponent('/console/password?x=1')}`)
    expect((await consoleRequest(t, 'POST', '/console/sign-out', { body: new URLSearchParams() })).status).toBe(403)
    const user = await addConsoleUser(t, { operator: true }, 'ops@example.com')
    await setUpThroughLink(t, user.setupPath)
    const back = await consoleRequest(t, 'POST', '/console/sign-in', {
      body: new URLSearchParams({
        email: 'ops@example.com',
        password: CONSOLE_PASSWORD,
        next: '/console/password?x=1',
      }),
    })
    expect(back.headers.get('location')).toBe('/console/password?x=1')
    const elsewhere = await consoleRequest(t, 'POST', '/console/sign-in', {
      body: new URLSearchParams({ email: 'ops@example.com', password: CONSOLE_PASSWORD, next: '//evil.example/' }),
    })
    expect(elsewhere.headers.get('location')).toBe('/console')
  })

  test('a session ends after 7 idle days, and after 30 days however used', async () => {
    const t = await contexts.create()
    const idle = await consoleClient(t, { operator: true })
    t.clock.advance(7 * DAY - 60_000)
    expect((await idle.get('/console')).status).toBe(200)
    t.clock.advance(7 * DAY - 60_000)
    expect((await idle.get('/console')).status).toBe(200)
    t.clock.advance(7 * DAY)
    expect((await idle.get('/console')).status).toBe(303)

    const busy = await consoleClient(t, { operator: true })
    for (let day = 1; day < 30; day++) {
      t.clock.advance(DAY)
      expect((await busy.get('/console')).status).toBe(200)
    }
    t.clock.advance(DAY)
    expect((await busy.get('/console')).status).toBe(303)
  })

  test('sign-out ends the session', async () => {
    const t = await contexts.create()
    const client = await consoleClient(t, { operator: true })
    const out = await client.post('/console/sign-out', {})
    expect(out.status).toBe(303)
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0')
    expect((await client.get('/console')).status).toBe(303)
  })

  test('changing the password ends the user’s other sessions, not this one', async () => {
    const t = await contexts.create()
    const user = await addConsoleUser(t, { operator: true }, 'ops@example.com')
    const first = await clientFor(t, await setUpThroughLink(t, user.setupPath), user)
    const second = sessionCookieOf(await signIn(t, 'ops@example.com', CONSOLE_PASSWORD))!
    const changed = await first.post('/console/password', {
      current: CONSOLE_PASSWORD,
      password: 'a brand new passphrase',
      again: 'a brand new passphrase',
    })
    expect(changed.status).toBe(200)
    expect((await first.get('/console')).status).toBe(200)
    expect((await consoleRequest(t, 'GET', '/console', { cookie: second })).status).toBe(303)
    expect((await signIn(t, 'ops@example.com', CONSOLE_PASSWORD)).status).toBe(401)
    expect((await signIn(t, 'ops@example.com', 'a brand new passphrase')).status).toBe(303)
  })

  test('a new set-up link (a reset) ends every session once used', async () => {
    const t = await contexts.create()
    const user = await addConsoleUser(t, { operator: true }, 'ops@example.com')
    const before = await setUpThroughLink(t, user.setupPath)
    const { createConsoleService } = await import('../src/modules/console/service.ts')
    const link = await createConsoleService(t.store, t.clock, () => 'http://intake.test').resetUser('ops@example.com')
    await setUpThroughLink(t, new URL(link!).pathname, 'a brand new passphrase')
    expect((await consoleRequest(t, 'GET', '/console', { cookie: before })).status).toBe(303)
  })
})

describe('refusals', () => {
  test('a POST without the CSRF token, or with another session’s, is 403 and changes nothing', async () => {
    const t = await contexts.create()
    const client = await consoleClient(t, { operator: true })
    const other = await consoleClient(t, { operator: true })
    const without = await consoleRequest(t, 'POST', '/console/sign-out', {
      cookie: client.cookie,
      body: new URLSearchParams(),
    })
    expect(without.status).toBe(403)
    expect((await client.post('/console/sign-out', { csrf: other.csrf })).status).toBe(403)
    expect((await client.post('/console/sign-out', { csrf: '' })).status).toBe(403)
    expect((await client.get('/console')).status).toBe(200)
  })

  test('a cross-site POST is 403, even with the right token', async () => {
    const t = await contexts.create()
    const client = await consoleClient(t, { operator: true })
    expect((await client.post('/console/sign-out', {}, { 'sec-fetch-site': 'cross-site' })).status).toBe(403)
    expect((await client.post('/console/sign-out', {}, { origin: 'https://evil.example' })).status).toBe(403)
    const user = await addConsoleUser(t, { operator: true })
    const setup = await consoleRequest(t, 'POST', user.setupPath, {
      body: new URLSearchParams({ password: CONSOLE_PASSWORD, again: CONSOLE_PASSWORD }),
      headers: { 'sec-fetch-site': 'cross-site' },
    })
    expect(setup.status).toBe(403)
    expect((await client.get('/console')).status).toBe(200)
  })

  test('a member reaching another account by URL gets 404; operator pages are 404 to members', async () => {
    const t = await contexts.create()
    const member = await consoleClient(t, { account: 'research' })
    const other = await consoleClient(t, { account: 'sales' })
    const home = await member.get('/console')
    expect(home.status).toBe(303)
    expect(home.headers.get('location')).toBe(`/console/accounts/${member.viewer.accountId}`)
    expect((await member.get(`/console/accounts/${other.viewer.accountId}`)).status).toBe(404)
    expect((await member.get(`/console/accounts/${other.viewer.accountId}/forms`)).status).toBe(404)
    for (const path of ['/console/users', '/console/server']) expect((await member.get(path)).status).toBe(404)
  })

  test('every console response is no-store', async () => {
    const t = await contexts.create()
    const client = await consoleClient(t, { operator: true })
    for (const response of [
      await client.get('/console'),
      await client.get('/console/password'),
      await client.get('/console/nothing-here'),
      await consoleRequest(t, 'GET', '/console/sign-in'),
      await consoleRequest(t, 'GET', '/console/setup/unknown'),
      await signIn(t, 'nobody@example.com', 'whatever it is'),
    ])
      expect(response.headers.get('cache-control')).toBe('no-store')
  })

  test('SERVICE_CONSOLE=false: every /console path is 404', async () => {
    const t = await contexts.create({ SERVICE_CONSOLE: 'false' })
    const user = await addConsoleUser(t, { operator: true })
    for (const [method, path] of [
      ['GET', '/console'],
      ['GET', '/console/sign-in'],
      ['POST', '/console/sign-in'],
      ['GET', user.setupPath],
      ['GET', '/console/users'],
    ] as const)
      expect(
        (await consoleRequest(t, method, path, { body: method === 'POST' ? new URLSearchParams() : undefined })).status,
      ).toBe(404)
  })
})
