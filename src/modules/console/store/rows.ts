import { optionalTimeOf, type RowTime, timeOf } from '../../../db/rows.ts'
import type { ConsoleUser, ConsoleUserCredentials, ConsoleUserListing, FailureKey } from './index.ts'

/** The statements both databases share, with `?` for each parameter (postgres.ts numbers them). */

export interface UserRow {
  id: string
  email: string
  account_id: string | null
  password_hash: string | null
}

export const USER_COLUMNS = 'id, email, account_id, password_hash'

export const toUser = (row: Omit<UserRow, 'password_hash'>): ConsoleUser => ({
  id: row.id,
  email: row.email,
  accountId: row.account_id,
})

export const toCredentials = (row: UserRow): ConsoleUserCredentials => ({
  ...toUser(row),
  passwordHash: row.password_hash,
})

export interface UserListingRow {
  id: string
  email: string
  account_id: string | null
  account: string | null
  created_at: RowTime
  password_set: number | boolean
  last_seen_at: RowTime | null
}

export const LIST_USERS = `SELECT u.id, u.email, u.account_id, a.name AS account, u.created_at,
       u.password_hash IS NOT NULL AS password_set,
       (SELECT max(s.last_seen_at) FROM console_sessions s WHERE s.user_id = u.id) AS last_seen_at
  FROM console_users u LEFT JOIN accounts a ON a.id = u.account_id
 ORDER BY u.email`

export const toListing = (row: UserListingRow): ConsoleUserListing => ({
  id: row.id,
  email: row.email,
  accountId: row.account_id,
  account: row.account,
  createdAt: timeOf(row.created_at),
  passwordSet: Boolean(row.password_set),
  lastSeenAt: optionalTimeOf(row.last_seen_at),
})

export const SESSION_USER = `SELECT u.id, u.email, u.account_id, s.last_seen_at
  FROM console_sessions s JOIN console_users u ON u.id = s.user_id
 WHERE s.token_hash = ? AND s.last_seen_at > ? AND s.created_at > ?`

export const SETUP_GRANT = `SELECT t.user_id, u.email
  FROM console_setup_tokens t LEFT JOIN console_users u ON u.id = t.user_id
 WHERE t.token_hash = ? AND t.used_at IS NULL AND t.expires_at > ?`

/** A failure key's column: a closed set, never text from a request. */
const FAILURE_COLUMNS: Record<FailureKey, string> = { email: 'email', client: 'client' }

export const nthNewestFailure = (key: FailureKey) =>
  `SELECT failed_at FROM console_sign_in_failures WHERE ${FAILURE_COLUMNS[key]} = ? AND failed_at > ?
    ORDER BY failed_at DESC LIMIT 1 OFFSET ?`

export const USE_SETUP_TOKEN =
  'UPDATE console_setup_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?'
