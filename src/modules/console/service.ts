import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { HttpError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import type { Clock } from '../../lib/time.ts'
import type { Store } from '../../stores.ts'
import type { ConsoleUser, ConsoleUserListing, SetupGrant } from './store/index.ts'
import type { Viewer } from './viewer.ts'

/** CONTRACT 15's numbers. */
const SETUP_LINK_LIFETIME_MS = 24 * 3_600_000
const SESSION_IDLE_MS = 7 * 86_400_000
export const SESSION_LIFETIME_MS = 30 * 86_400_000
export const PASSWORD_MIN_LENGTH = 12
/** Hashing is the costly part of a sign-in: a password longer than this is refused before it is hashed. */
export const PASSWORD_MAX_LENGTH = 1024
const FAILURE_WINDOW_MS = 15 * 60_000
const FAILURES_PER_EMAIL = 5
const FAILURES_PER_CLIENT = 20
/** Writing last_seen_at on every page would turn reads into writes; once a minute is plenty for a 7-day expiry. */
const LAST_SEEN_RESOLUTION_MS = 60_000

const EMAIL_MAX_LENGTH = 254
const EMAIL_PATTERN = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+$/u

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex')
const newToken = () => randomBytes(32).toString('base64url')
/** The CSRF token of a session: derived from its token, so it is stored nowhere and dies with it. */
const csrfOf = (sessionToken: string) =>
  createHash('sha256').update('intake console csrf\0').update(sessionToken).digest('base64url')

/** An email as users are known by: trimmed, lower case; undefined when it is not an address. */
function normalEmail(text: string): string | undefined {
  const email = text.trim().toLowerCase()
  return email.length <= EMAIL_MAX_LENGTH && EMAIL_PATTERN.test(email) ? email : undefined
}

/** Whether `sent` is the session's CSRF token, compared in constant time. */
export function csrfMatches(viewer: Viewer, sent: string | undefined): boolean {
  if (sent === undefined) return false
  const a = Buffer.from(viewer.csrf)
  const b = Buffer.from(sent)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** Why a new password is refused, or undefined when it is good. */
export type PasswordProblem = 'too_short' | 'too_long' | 'mismatch'

function passwordProblem(password: string, again: string): PasswordProblem | undefined {
  if ([...password].length < PASSWORD_MIN_LENGTH) return 'too_short'
  if (password.length > PASSWORD_MAX_LENGTH) return 'too_long'
  if (password !== again) return 'mismatch'
  return undefined
}

export type SignInOutcome =
  | { kind: 'signed-in'; sessionToken: string }
  | { kind: 'refused' }
  | { kind: 'throttled'; retryAfterSeconds: number }

export type SetupOutcome =
  | { kind: 'signed-in'; sessionToken: string }
  | { kind: 'gone' }
  | { kind: 'email-invalid' }
  | { kind: 'email-taken' }
  | { kind: 'password'; problem: PasswordProblem }

/** Who a user is to be: a member of the named account, or an operator. */
export type NewUserRole = { account: string } | { operator: true }

/**
 * Console users, their set-up links and sessions, and sign-in throttling
 * (CONTRACT 15). Used by the console's pages and by `intake users`.
 */
export function createConsoleService(store: Store, clock: Clock, baseUrl: () => string) {
  /** Verified against when the email names no one with a password, so both take the same time. */
  let dummyHash: Promise<string> | undefined
  const setupLink = (token: string) => `${baseUrl()}/console/setup/${token}`

  async function newSetupToken(userId: string | null) {
    const token = newToken()
    const now = clock()
    await store.transaction((tx) =>
      tx.console.insertSetupToken({
        tokenHash: hashToken(token),
        userId,
        createdAt: now,
        expiresAt: now + SETUP_LINK_LIFETIME_MS,
      }),
    )
    return setupLink(token)
  }

  async function startSession(userId: string, now: number): Promise<string> {
    const sessionToken = newToken()
    await store.transaction(async (tx) => {
      await tx.console.insertSession({ tokenHash: hashToken(sessionToken), userId, createdAt: now })
      // A password set (by a set-up link) ends every other session of the user.
      await tx.console.deleteUserSessions(userId, hashToken(sessionToken))
    })
    return sessionToken
  }

  /** Seconds until the email and the client may try again, or 0 when they may now. */
  async function waitBeforeSignIn(email: string, client: string, now: number): Promise<number> {
    const since = now - FAILURE_WINDOW_MS
    const [byEmail, byClient] = await Promise.all([
      store.console.nthNewestFailure('email', email, since, FAILURES_PER_EMAIL),
      store.console.nthNewestFailure('client', client, since, FAILURES_PER_CLIENT),
    ])
    const until = Math.max(byEmail ?? 0, byClient ?? 0)
    return until === 0 ? 0 : Math.max(1, Math.ceil((until + FAILURE_WINDOW_MS - now) / 1000))
  }

  return {
    setupLink,

    /** Adds a user and returns their one-time set-up link. */
    async addUser(emailText: string, role: NewUserRole): Promise<{ user: ConsoleUser; link: string }> {
      const email = normalEmail(emailText)
      if (!email) throw new HttpError(422, `"${emailText}" is not an email address`)
      let accountId: string | null = null
      if ('account' in role) {
        const account = await store.keys.accountByName(role.account)
        if (!account)
          throw new HttpError(
            422,
            `No account is named "${role.account}" (intake keys create --account NAME makes one)`,
          )
        accountId = account.id
      }
      const user = { id: newId(), email, accountId }
      const added = await store.transaction((tx) => tx.console.insertUser({ ...user, createdAt: clock() }))
      if (!added) throw new HttpError(409, `A user with the email ${email} exists already`)
      return { user, link: await newSetupToken(user.id) }
    },

    /** A new set-up link for the user (earlier ones stop working); undefined when no user has that email. */
    async resetUser(emailText: string): Promise<string | undefined> {
      const email = normalEmail(emailText)
      const user = email === undefined ? undefined : await store.console.userByEmail(email)
      return user ? newSetupToken(user.id) : undefined
    },

    listUsers: (): Promise<ConsoleUserListing[]> => store.console.listUsers(),

    /** True when the user existed; their sessions end with them. */
    async removeUser(emailText: string): Promise<boolean> {
      const email = normalEmail(emailText)
      const user = email === undefined ? undefined : await store.console.userByEmail(email)
      return user ? store.transaction((tx) => tx.console.deleteUser(user.id)) : false
    },

    /**
     * At the first start, while no user exists: a link to set up the first
     * operator, stored by `commit` once it has been shown (as the first key).
     */
    async prepareFirstOperatorLink(): Promise<{ link: string; commit(): Promise<void> } | undefined> {
      if (await store.console.usersExist()) return undefined
      const token = newToken()
      return {
        link: setupLink(token),
        commit: async () => {
          const now = clock()
          await store.transaction((tx) =>
            tx.console.insertSetupToken({
              tokenHash: hashToken(token),
              userId: null,
              createdAt: now,
              expiresAt: now + SETUP_LINK_LIFETIME_MS,
            }),
          )
        },
      }
    },

    /** What a set-up link stands for while it works. */
    setupGrant: (token: string): Promise<SetupGrant | undefined> => store.console.setupGrant(hashToken(token), clock()),

    /**
     * Sets the password through a set-up link (the first operator's also
     * names their email), uses the link up, ends the user's other sessions
     * and signs them in.
     */
    async completeSetup(
      token: string,
      input: { email?: string; password: string; again: string },
    ): Promise<SetupOutcome> {
      const grant = await store.console.setupGrant(hashToken(token), clock())
      if (!grant) return { kind: 'gone' }
      let email: string | undefined
      if (grant.userId === null) {
        email = normalEmail(input.email ?? '')
        if (!email) return { kind: 'email-invalid' }
      }
      const problem = passwordProblem(input.password, input.again)
      if (problem) return { kind: 'password', problem }
      const passwordHash = await Bun.password.hash(input.password, 'argon2id')
      const now = clock()
      const userId = await store
        .transaction(async (tx) => {
          if (!(await tx.console.useSetupToken(hashToken(token), now))) return 'gone' as const
          let id = grant.userId
          if (id === null) {
            id = newId()
            if (!(await tx.console.insertUser({ id, email: email!, accountId: null, createdAt: now })))
              throw new EmailTaken()
          }
          await tx.console.setPassword(id, passwordHash)
          return id
        })
        .catch((error) => {
          if (error instanceof EmailTaken) return 'taken' as const
          throw error
        })
      if (userId === 'gone') return { kind: 'gone' }
      if (userId === 'taken') return { kind: 'email-taken' }
      return { kind: 'signed-in', sessionToken: await startSession(userId, now) }
    },

    /**
     * Signs in with an email and a password, unless this email or client
     * failed too often lately. Unknown emails are answered as wrong
     * passwords are, in about the same time, and count as failures alike.
     */
    async signIn(emailText: string, password: string, client: string): Promise<SignInOutcome> {
      const email = emailText.trim().toLowerCase().slice(0, EMAIL_MAX_LENGTH)
      const now = clock()
      const wait = await waitBeforeSignIn(email, client, now)
      if (wait > 0) return { kind: 'throttled', retryAfterSeconds: wait }
      const user = email === '' ? undefined : await store.console.userByEmail(email)
      const hash = user?.passwordHash ?? (await (dummyHash ??= Bun.password.hash(newToken(), 'argon2id')))
      const right = password.length <= PASSWORD_MAX_LENGTH && (await Bun.password.verify(password, hash, 'argon2id'))
      if (!right || !user?.passwordHash) {
        await store.transaction((tx) =>
          tx.console.insertFailure({ id: newId(), email, client, failedAt: now }, now - FAILURE_WINDOW_MS),
        )
        return { kind: 'refused' }
      }
      const sessionToken = newToken()
      await store.transaction((tx) =>
        tx.console.insertSession({ tokenHash: hashToken(sessionToken), userId: user.id, createdAt: now }),
      )
      return { kind: 'signed-in', sessionToken }
    },

    /** The viewer of a session token while the session lasts (idle 7 days, 30 at most). */
    async viewerOf(sessionToken: string): Promise<Viewer | undefined> {
      const now = clock()
      const tokenHash = hashToken(sessionToken)
      const found = await store.console.sessionUser(tokenHash, now - SESSION_IDLE_MS, now - SESSION_LIFETIME_MS)
      if (!found) return undefined
      if (now - found.lastSeenAt >= LAST_SEEN_RESOLUTION_MS)
        await store.transaction((tx) => tx.console.touchSession(tokenHash, now))
      const { user } = found
      return {
        userId: user.id,
        email: user.email,
        operator: user.accountId === null,
        accountId: user.accountId,
        csrf: csrfOf(sessionToken),
      }
    },

    /** Changes a signed-in user's password, given the current one; their other sessions end. */
    async changePassword(
      viewer: Viewer,
      sessionToken: string,
      input: { current: string; password: string; again: string },
    ): Promise<{ kind: 'changed' } | { kind: 'wrong-current' } | { kind: 'password'; problem: PasswordProblem }> {
      const user = await store.console.userByEmail(viewer.email)
      const right =
        user?.passwordHash != null &&
        input.current.length <= PASSWORD_MAX_LENGTH &&
        (await Bun.password.verify(input.current, user.passwordHash, 'argon2id'))
      if (!right) return { kind: 'wrong-current' }
      const problem = passwordProblem(input.password, input.again)
      if (problem) return { kind: 'password', problem }
      const passwordHash = await Bun.password.hash(input.password, 'argon2id')
      await store.transaction(async (tx) => {
        await tx.console.setPassword(viewer.userId, passwordHash)
        await tx.console.deleteUserSessions(viewer.userId, hashToken(sessionToken))
      })
      return { kind: 'changed' }
    },

    signOut: (sessionToken: string) => store.transaction((tx) => tx.console.deleteSession(hashToken(sessionToken))),
  }
}

class EmailTaken extends Error {}

export type ConsoleService = ReturnType<typeof createConsoleService>
