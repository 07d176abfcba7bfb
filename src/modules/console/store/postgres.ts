import type { Query } from '../../../db/postgres/driver.ts'
import type { RowTime } from '../../../db/rows.ts'
import type { ConsoleWrites } from './index.ts'
import {
  LIST_USERS,
  nthNewestFailure,
  SESSION_USER,
  SETUP_GRANT,
  toCredentials,
  toListing,
  toUser,
  USE_SETUP_TOKEN,
  USER_COLUMNS,
  type UserListingRow,
  type UserRow,
} from './rows.ts'

/** `?` placeholders numbered as PostgreSQL takes them. */
const numbered = (text: string) => {
  let n = 0
  return text.replace(/\?/g, () => `$${++n}`)
}

const USER_BY_EMAIL = `SELECT ${USER_COLUMNS} FROM console_users WHERE email = $1`
const USERS_EXIST = 'SELECT EXISTS (SELECT 1 FROM console_users) AS found'
const INSERT_USER =
  'INSERT INTO console_users (id, email, account_id, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (email) DO NOTHING'
const DELETE_USER = 'DELETE FROM console_users WHERE id = $1'
const SET_PASSWORD = 'UPDATE console_users SET password_hash = $1 WHERE id = $2'
const DROP_UNUSED_TOKENS = 'DELETE FROM console_setup_tokens WHERE user_id IS NOT DISTINCT FROM $1 AND used_at IS NULL'
const INSERT_TOKEN =
  'INSERT INTO console_setup_tokens (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)'
const INSERT_SESSION =
  'INSERT INTO console_sessions (token_hash, user_id, created_at, last_seen_at) VALUES ($1, $2, $3, $3)'
const TOUCH_SESSION = 'UPDATE console_sessions SET last_seen_at = $1 WHERE token_hash = $2'
const DELETE_SESSION = 'DELETE FROM console_sessions WHERE token_hash = $1'
const DELETE_USER_SESSIONS = 'DELETE FROM console_sessions WHERE user_id = $1 AND token_hash IS DISTINCT FROM $2'
const INSERT_FAILURE = 'INSERT INTO console_sign_in_failures (id, email, client, failed_at) VALUES ($1, $2, $3, $4)'
const FORGET_FAILURES = 'DELETE FROM console_sign_in_failures WHERE failed_at <= $1'
const FAILURES = { email: numbered(nthNewestFailure('email')), client: numbered(nthNewestFailure('client')) }

/** The console module's store on PostgreSQL: one for the pool's reads, one per transaction. */
export function createPostgresConsoleStore(query: Query): ConsoleWrites {
  return {
    async userByEmail(email) {
      const [row] = await query<UserRow>(USER_BY_EMAIL, [email])
      return row ? toCredentials(row) : undefined
    },
    listUsers: async () => (await query<UserListingRow>(LIST_USERS)).map(toListing),
    usersExist: async () => (await query<{ found: boolean }>(USERS_EXIST))[0]!.found,
    async sessionUser(tokenHash, idleSince, madeSince) {
      const [row] = await query<Omit<UserRow, 'password_hash'> & { last_seen_at: RowTime }>(numbered(SESSION_USER), [
        tokenHash,
        idleSince,
        madeSince,
      ])
      return row ? { user: toUser(row), lastSeenAt: Number(row.last_seen_at) } : undefined
    },
    async setupGrant(tokenHash, now) {
      const [row] = await query<{ user_id: string | null; email: string | null }>(numbered(SETUP_GRANT), [
        tokenHash,
        now,
      ])
      return row ? { userId: row.user_id, email: row.email } : undefined
    },
    async nthNewestFailure(key, value, since, nth) {
      const [row] = await query<{ failed_at: RowTime }>(FAILURES[key], [value, since, nth - 1])
      return row ? Number(row.failed_at) : null
    },
    insertUser: async (user) =>
      (await query(INSERT_USER, [user.id, user.email, user.accountId, user.createdAt])).count === 1,
    deleteUser: async (id) => (await query(DELETE_USER, [id])).count === 1,
    setPassword: async (userId, passwordHash) => void (await query(SET_PASSWORD, [passwordHash, userId])),
    async insertSetupToken(token) {
      await query(DROP_UNUSED_TOKENS, [token.userId])
      await query(INSERT_TOKEN, [token.tokenHash, token.userId, token.createdAt, token.expiresAt])
    },
    useSetupToken: async (tokenHash, now) =>
      (await query(numbered(USE_SETUP_TOKEN), [now, tokenHash, now])).count === 1,
    insertSession: async (session) =>
      void (await query(INSERT_SESSION, [session.tokenHash, session.userId, session.createdAt])),
    touchSession: async (tokenHash, now) => void (await query(TOUCH_SESSION, [now, tokenHash])),
    deleteSession: async (tokenHash) => void (await query(DELETE_SESSION, [tokenHash])),
    deleteUserSessions: async (userId, keep) => void (await query(DELETE_USER_SESSIONS, [userId, keep ?? null])),
    async insertFailure(failure, forgetBefore) {
      await query(FORGET_FAILURES, [forgetBefore])
      await query(INSERT_FAILURE, [failure.id, failure.email, failure.client, failure.failedAt])
    },
  }
}
