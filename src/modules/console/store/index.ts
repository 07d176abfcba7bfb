/**
 * What the console module keeps (the tables `console_users`,
 * `console_setup_tokens`, `console_sessions`, `console_sign_in_failures`), and
 * the one interface every database gives it (sqlite.ts, postgres.ts beside
 * this file). Tokens (set-up links, sessions) are stored as the SHA-256 hex of
 * the token alone; passwords as argon2id hashes. Every expiry is decided in
 * the query, by the times the caller passes.
 */

export interface ConsoleUser {
  id: string
  email: string
  /** The one account a member sees; null for an operator. */
  accountId: string | null
}

/** A user as sign-in sees it: the password's hash, or null while the user has not set one. */
export interface ConsoleUserCredentials extends ConsoleUser {
  passwordHash: string | null
}

/** A line of the users list (`intake users list`, the console's Users page). */
export interface ConsoleUserListing extends ConsoleUser {
  /** The account's name; null for an operator. */
  account: string | null
  createdAt: number
  passwordSet: boolean
  /** The latest use of any of the user's sessions, or null. */
  lastSeenAt: number | null
}

/** What a set-up link stands for: a user's, or (userId null) the first operator's, whose email its page asks. */
export interface SetupGrant {
  userId: string | null
  /** The user's email, or null for the first operator's link. */
  email: string | null
}

interface SessionUser {
  user: ConsoleUser
  lastSeenAt: number
}

/** Which key sign-in failures are counted by. */
export type FailureKey = 'email' | 'client'

export interface ConsoleReads {
  userByEmail(email: string): Promise<ConsoleUserCredentials | undefined>
  listUsers(): Promise<ConsoleUserListing[]>
  usersExist(): Promise<boolean>
  /** The session's user, when the session was last used after `idleSince` and made after `madeSince`. */
  sessionUser(tokenHash: string, idleSince: number, madeSince: number): Promise<SessionUser | undefined>
  /** What an unused set-up link stands for, when it expires after `now`. */
  setupGrant(tokenHash: string, now: number): Promise<SetupGrant | undefined>
  /**
   * The time of the `nth` newest failure for this email or client since
   * `since` (once it leaves the window, fewer than `nth` remain), or null
   * when there are fewer than `nth`.
   */
  nthNewestFailure(key: FailureKey, value: string, since: number, nth: number): Promise<number | null>
}

export interface ConsoleWrites extends ConsoleReads {
  /** False when a user with that email exists. */
  insertUser(user: ConsoleUser & { createdAt: number }): Promise<boolean>
  /** True when the user existed. Their sessions and set-up links go with them. */
  deleteUser(id: string): Promise<boolean>
  setPassword(userId: string, passwordHash: string): Promise<void>
  /** A new set-up link; the user's earlier links (or the first operator's, for null) stop working. */
  insertSetupToken(token: {
    tokenHash: string
    userId: string | null
    createdAt: number
    expiresAt: number
  }): Promise<void>
  /** Marks the link used: true only for the one caller that found it unused and unexpired at `now`. */
  useSetupToken(tokenHash: string, now: number): Promise<boolean>
  insertSession(session: { tokenHash: string; userId: string; createdAt: number }): Promise<void>
  touchSession(tokenHash: string, now: number): Promise<void>
  deleteSession(tokenHash: string): Promise<void>
  /** Ends every session of the user but `keep` (when given). */
  deleteUserSessions(userId: string, keep?: string): Promise<void>
  /** Records a failure, and forgets those at or before `forgetBefore` (no window reaches them any more). */
  insertFailure(
    failure: { id: string; email: string; client: string; failedAt: number },
    forgetBefore: number,
  ): Promise<void>
}
