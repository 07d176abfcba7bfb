import type { Database } from 'bun:sqlite'
import type { RowTime } from '../../../db/rows.ts'
import type { ConsoleWrites, FailureKey } from './index.ts'
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

/** The console module's store on SQLite. */
export function createSqliteConsoleStore(db: Database): ConsoleWrites {
  const userByEmail = db.query<UserRow, [string]>(`SELECT ${USER_COLUMNS} FROM console_users WHERE email = ?`)
  const listUsers = db.query<UserListingRow, []>(LIST_USERS)
  const usersExist = db.query<{ found: number }, []>('SELECT EXISTS (SELECT 1 FROM console_users) AS found')
  const sessionUser = db.query<Omit<UserRow, 'password_hash'> & { last_seen_at: RowTime }, [string, number, number]>(
    SESSION_USER,
  )
  const setupGrant = db.query<{ user_id: string | null; email: string | null }, [string, number]>(SETUP_GRANT)
  const failures: Record<FailureKey, ReturnType<typeof db.query<{ failed_at: RowTime }, [string, number, number]>>> = {
    email: db.query(nthNewestFailure('email')),
    client: db.query(nthNewestFailure('client')),
  }
  const insertUser = db.query(
    'INSERT INTO console_users (id, email, account_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (email) DO NOTHING',
  )
  const deleteUser = db.query('DELETE FROM console_users WHERE id = ?')
  const setPassword = db.query('UPDATE console_users SET password_hash = ? WHERE id = ?')
  const dropUnusedTokens = db.query('DELETE FROM console_setup_tokens WHERE user_id IS ? AND used_at IS NULL')
  const insertToken = db.query(
    'INSERT INTO console_setup_tokens (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)',
  )
  const useToken = db.query(USE_SETUP_TOKEN)
  const insertSession = db.query(
    'INSERT INTO console_sessions (token_hash, user_id, created_at, last_seen_at) VALUES (?, ?, ?, ?)',
  )
  const touchSession = db.query('UPDATE console_sessions SET last_seen_at = ? WHERE token_hash = ?')
  const deleteSession = db.query('DELETE FROM console_sessions WHERE token_hash = ?')
  const deleteUserSessions = db.query('DELETE FROM console_sessions WHERE user_id = ? AND token_hash IS NOT ?')
  const insertFailure = db.query(
    'INSERT INTO console_sign_in_failures (id, email, client, failed_at) VALUES (?, ?, ?, ?)',
  )
  const forgetFailures = db.query('DELETE FROM console_sign_in_failures WHERE failed_at <= ?')

  return {
    async userByEmail(email) {
      const row = userByEmail.get(email)
      return row ? toCredentials(row) : undefined
    },
    listUsers: async () => listUsers.all().map(toListing),
    usersExist: async () => usersExist.get()!.found === 1,
    async sessionUser(tokenHash, idleSince, madeSince) {
      const row = sessionUser.get(tokenHash, idleSince, madeSince)
      return row ? { user: toUser(row), lastSeenAt: Number(row.last_seen_at) } : undefined
    },
    async setupGrant(tokenHash, now) {
      const row = setupGrant.get(tokenHash, now)
      return row ? { userId: row.user_id, email: row.email } : undefined
    },
    async nthNewestFailure(key, value, since, nth) {
      const row = failures[key].get(value, since, nth - 1)
      return row ? Number(row.failed_at) : null
    },
    insertUser: async (user) => insertUser.run(user.id, user.email, user.accountId, user.createdAt).changes === 1,
    deleteUser: async (id) => deleteUser.run(id).changes === 1,
    setPassword: async (userId, passwordHash) => void setPassword.run(passwordHash, userId),
    async insertSetupToken(token) {
      dropUnusedTokens.run(token.userId)
      insertToken.run(token.tokenHash, token.userId, token.createdAt, token.expiresAt)
    },
    useSetupToken: async (tokenHash, now) => useToken.run(now, tokenHash, now).changes === 1,
    insertSession: async (session) =>
      void insertSession.run(session.tokenHash, session.userId, session.createdAt, session.createdAt),
    touchSession: async (tokenHash, now) => void touchSession.run(now, tokenHash),
    deleteSession: async (tokenHash) => void deleteSession.run(tokenHash),
    deleteUserSessions: async (userId, keep) => void deleteUserSessions.run(userId, keep ?? null),
    async insertFailure(failure, forgetBefore) {
      forgetFailures.run(forgetBefore)
      insertFailure.run(failure.id, failure.email, failure.client, failure.failedAt)
    },
  }
}
