/** The operator's console pages: Users (add with a link shown once, a new link, remove behind a confirmation), Server, Accounts. */
import { expect, test } from 'bun:test'
import { consoleClient, consoleRequest, setUpThroughLink } from './console-fixtures.ts'
import { contextsPerTest } from './utils.ts'

const contexts = contextsPerTest()
const linkIn = (html: string) => /value="(http:\/\/intake\.test\/console\/setup\/[A-Za-z0-9_-]{43})"/.exec(html)?.[1]

test('an operator adds a member: the link is shown once and works; a bad email or account says why', async () => {
  const t = await contexts.create()
  await t.createKey('research')
  const ops = await consoleClient(t, { operator: true })
  const list = await (await ops.get('/console/users')).text()
  expect(list).toContain(ops.viewer.email)
  expect(list).toContain('<option value="research">research</option>')

  const added = await ops.post('/console/users', { email: 'Ada@Example.com', role: 'research' })
  expect(added.status).toBe(200)
  const link = linkIn(await added.text())
  expect(link).toBeDefined()
  const cookie = await setUpThroughLink(t, new URL(link!).pathname)
  expect((await consoleRequest(t, 'GET', '/console', { cookie })).headers.get('location')).toStartWith(
    '/console/accounts/',
  )
  const after = await (await ops.get('/console/users')).text()
  expect(after).toContain('ada@example.com')
  expect(linkIn(after)).toBeUndefined()

  const taken = await ops.post('/console/users', { email: 'ada@example.com', role: ':operator' })
  expect(taken.status).toBe(422)
  expect(await taken.text()).toContain('A user with this email address exists already')
  const invalid = await ops.post('/console/users', { email: 'not an email', role: ':operator' })
  expect(await invalid.text()).toContain('Enter an email address like name@example.com')
  const unknown = await ops.post('/console/users', { email: 'bob@example.com', role: 'nobody' })
  expect(await unknown.text()).toContain('There is no account with that name')
})

test('a new set-up link replaces the last; removing asks first, then signs the user out', async () => {
  const t = await contexts.create()
  const ops = await consoleClient(t, { operator: true })
  const member = await consoleClient(t, { account: 'research' })
  const reset = await ops.post('/console/users/reset', { email: member.viewer.email })
  expect(linkIn(await reset.text())).toBeDefined()

  const confirm = await ops.get(`/console/users/remove?email=${encodeURIComponent(member.viewer.email)}`)
  expect(confirm.status).toBe(200)
  expect(await confirm.text()).toContain('Yes, remove this user')
  expect((await member.get('/console')).status).toBe(303)
  expect((await member.get('/console')).headers.get('location')).toStartWith('/console/accounts/')
  const removed = await ops.post('/console/users/remove', { email: member.viewer.email })
  expect(removed.status).toBe(303)
  expect(await (await ops.get(removed.headers.get('location')!)).text()).toContain(`Removed ${member.viewer.email}.`)
  expect((await member.get('/console')).headers.get('location')).toStartWith('/console/sign-in')
  // Not oneself.
  expect((await ops.get(`/console/users/remove?email=${encodeURIComponent(ops.viewer.email)}`)).status).toBe(404)
  expect((await ops.post('/console/users/remove', { email: ops.viewer.email })).status).toBe(404)
})

test('the server page: version, store and schema, settings in force, never a secret', async () => {
  const key = `svc_live_${'ab'.repeat(24)}`
  const t = await contexts.create({ SERVICE_API_KEY: key, SERVICE_WEBHOOK_TIMEOUT: '4' })
  const ops = await consoleClient(t, { operator: true })
  const page = await (await ops.get('/console/server')).text()
  const { VERSION } = await import('../src/version.ts')
  expect(page).toContain(VERSION)
  expect(page).toMatch(/SQLite|PostgreSQL/)
  expect(page).toContain('SERVICE_WEBHOOK_TIMEOUT')
  expect(page).toMatch(/SERVICE_WEBHOOK_TIMEOUT<\/code><\/th><td><span>4<\/span><\/td>/)
  expect(page).toContain('SERVICE_API_KEY')
  expect(page).not.toContain(key)
  expect(page).toContain('(set, not shown)')
})

test('the accounts list links each account; members never see it', async () => {
  const t = await contexts.create()
  await t.createKey('research')
  const ops = await consoleClient(t, { operator: true })
  const page = await (await ops.get('/console')).text()
  const research = await t.store.keys.accountByName('research')
  expect(page).toContain(`<a href="/console/accounts/${research!.id}">research</a>`)
  const member = await consoleClient(t, { account: 'research' })
  expect((await member.get('/console')).status).toBe(303)
})
