/**
 * Sign-in throttling (CONTRACT 15): after 5 failures in 15 minutes for an
 * email, or 20 from a client, 429 with Retry-After, in the same words and
 * status whether or not the email names a user; shared by every server on
 * the database.
 */
import { expect, test } from 'bun:test'
import { addConsoleUser, CONSOLE_PASSWORD, consoleRequest, setUpThroughLink } from './console-fixtures.ts'
import { contextsPerTest, type TestContext } from './utils.ts'

const MINUTE = 60_000
const contexts = contextsPerTest()

type Handler = Pick<TestContext, 'app'>

const signIn = (t: Handler, email: string, password: string, client = '192.0.2.1') =>
  consoleRequest(t as TestContext, 'POST', '/console/sign-in', {
    body: new URLSearchParams({ email, password }),
    headers: { 'x-forwarded-for': client },
  })

/** What a visitor sees of an answer: its status, Retry-After, and its words without the echoed email. */
async function seen(response: Response, email: string) {
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: (await response.text()).replaceAll(email, 'EMAIL'),
  }
}

async function withUser(t: TestContext, email: string) {
  const user = await addConsoleUser(t, { operator: true }, email)
  await setUpThroughLink(t, user.setupPath)
}

test('after 5 failures for an email in 15 minutes: 429 and Retry-After, the same for a user and for no one', {
  timeout: 30_000,
}, async () => {
  const t = await contexts.create({ SERVICE_TRUST_PROXY: 'true' })
  await withUser(t, 'ops@example.com')
  const known: Array<Awaited<ReturnType<typeof seen>>> = []
  const unknown: Array<Awaited<ReturnType<typeof seen>>> = []
  for (let i = 0; i < 6; i++) {
    // Each from another client: only the email counts here.
    known.push(await seen(await signIn(t, 'ops@example.com', 'wrong password', `192.0.2.${i}`), 'ops@example.com'))
    unknown.push(
      await seen(await signIn(t, 'ghost@example.com', 'wrong password', `198.51.100.${i}`), 'ghost@example.com'),
    )
    t.clock.advance(MINUTE)
  }
  expect(known.map((r) => r.status)).toEqual([401, 401, 401, 401, 401, 429])
  expect(unknown).toEqual(known)
  // The first failure leaves the window 15 minutes after it: 10 minutes from now.
  expect(known[5]!.retryAfter).toBe(String(10 * 60))
  expect(known[5]!.body).toContain('Too many tries to sign in. Try again in 600 seconds.')
  // Even the right password waits.
  expect((await signIn(t, 'ops@example.com', CONSOLE_PASSWORD, '203.0.113.9')).status).toBe(429)
  t.clock.advance(10 * MINUTE)
  expect((await signIn(t, 'ops@example.com', CONSOLE_PASSWORD, '203.0.113.9')).status).toBe(303)
})

test('after 20 failures from a client: 429 for any email from it, not for other clients', {
  timeout: 30_000,
}, async () => {
  const t = await contexts.create({ SERVICE_TRUST_PROXY: 'true' })
  await withUser(t, 'ops@example.com')
  for (let i = 0; i < 20; i++) expect((await signIn(t, `guess${i}@example.com`, 'wrong password')).status).toBe(401)
  const refused = await signIn(t, 'ops@example.com', CONSOLE_PASSWORD)
  expect(refused.status).toBe(429)
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
  expect((await signIn(t, 'ops@example.com', CONSOLE_PASSWORD, '192.0.2.99')).status).toBe(303)
})

test('failures are kept in the database: another server on it refuses as well', { timeout: 30_000 }, async () => {
  const t = await contexts.create({ SERVICE_TRUST_PROXY: 'true' })
  await withUser(t, 'ops@example.com')
  const other = await t.anotherServer()
  for (let i = 0; i < 5; i++) expect((await signIn(t, 'ops@example.com', 'wrong password')).status).toBe(401)
  expect((await signIn(other, 'ops@example.com', CONSOLE_PASSWORD)).status).toBe(429)
})
