/**
 * The console, driven as a browser drives it: users made as `intake users
 * add` makes them, signed in for real (their set-up link, a password, the
 * session cookie), then pages fetched with that cookie and POST forms sent
 * with the session's `csrf` field.
 */
import { createConsoleService } from '../src/modules/console/service.ts'
import { BASE_URL, type TestContext } from './utils.ts'

/** The password every fixture user sets (12 characters or more, as the console asks). */
export const CONSOLE_PASSWORD = 'correct horse battery staple'

export interface ConsoleClient {
  get(path: string, headers?: Record<string, string>): Promise<Response>
  /** A POST form (urlencoded) with the session's `csrf` added (unless `fields` has its own). */
  post(path: string, fields: Record<string, string>, headers?: Record<string, string>): Promise<Response>
  viewer: { email: string; accountId: string | null }
  /** The Cookie header the client sends. */
  cookie: string
  csrf: string
}

type Who = { operator: true } | { account: string /* account name */ }

let users = 0

/** The users of `intake`, as the command line makes them (over the app's store, as another process would share it). */
const usersOf = (intake: TestContext) => createConsoleService(intake.store, intake.clock, () => BASE_URL)

/** A request to the app, as a browser sends one (HTML wanted, same-origin). */
export function consoleRequest(
  intake: TestContext,
  method: string,
  path: string,
  options: { cookie?: string; body?: URLSearchParams; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { accept: 'text/html', ...options.headers }
  if (options.cookie) headers.cookie = options.cookie
  if (options.body) headers['content-type'] = 'application/x-www-form-urlencoded'
  return intake.app.handle(new Request(`${BASE_URL}${path}`, { method, headers, body: options.body }))
}

/** The `name=value` of the session cookie a response sets, or undefined. */
export function sessionCookieOf(response: Response): string | undefined {
  const set = response.headers.get('set-cookie')
  const pair = set?.split(';')[0]
  return pair && !pair.endsWith('=') ? pair : undefined
}

/** The CSRF token a console page's forms carry. */
function csrfOf(html: string): string | undefined {
  return /name="csrf" value="([^"]+)"/.exec(html)?.[1]
}

/** Adds a user (and their account, with a key, when new) and returns their set-up link's path. */
export async function addConsoleUser(intake: TestContext, who: Who, email?: string) {
  const address = email ?? `user${++users}@example.com`
  if ('account' in who && !(await intake.store.keys.accountByName(who.account))) await intake.createKey(who.account)
  const { user, link } = await usersOf(intake).addUser(address, 'operator' in who ? { operator: true } : who)
  return { email: address, accountId: user.accountId, setupPath: new URL(link).pathname }
}

/** Signs in through a set-up link: the cookie of the session it starts. */
export async function setUpThroughLink(intake: TestContext, setupPath: string, password = CONSOLE_PASSWORD) {
  const response = await consoleRequest(intake, 'POST', setupPath, {
    body: new URLSearchParams({ password, again: password }),
  })
  const cookie = sessionCookieOf(response)
  if (response.status !== 303 || !cookie) throw new Error(`set-up failed: ${response.status} ${await response.text()}`)
  return cookie
}

/** A client for the console of `intake`, signed in as a new operator or a new member of an account. */
export async function consoleClient(intake: TestContext, who: Who): Promise<ConsoleClient> {
  const added = await addConsoleUser(intake, who)
  const cookie = await setUpThroughLink(intake, added.setupPath)
  return clientFor(intake, cookie, { email: added.email, accountId: added.accountId })
}

/** A client for a session cookie already held. */
export async function clientFor(
  intake: TestContext,
  cookie: string,
  viewer: ConsoleClient['viewer'],
): Promise<ConsoleClient> {
  const page = await consoleRequest(intake, 'GET', '/console/password', { cookie })
  const csrf = csrfOf(await page.text())
  if (!csrf) throw new Error(`no CSRF token on the password page (${page.status})`)
  return {
    get: (path, headers) => consoleRequest(intake, 'GET', path, { cookie, headers }),
    post: (path, fields, headers) =>
      consoleRequest(intake, 'POST', path, { cookie, headers, body: new URLSearchParams({ csrf, ...fields }) }),
    viewer,
    cookie,
    csrf,
  }
}
