import { optionalTimeOf, type RowTime, timeOf } from '../../../db/rows.ts'
import type { ApiKeyRecord, KeyListing } from './index.ts'

/** A key as both databases hold it, times as integer milliseconds. */
export interface KeyRow {
  id: string
  account_id: string
  last_used_at: RowTime | null
  revoked_at: RowTime | null
}

export const KEY_COLUMNS = 'id, account_id, last_used_at, revoked_at'

export const toApiKeyRecord = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  accountId: row.account_id,
  lastUsedAt: optionalTimeOf(row.last_used_at),
  revokedAt: optionalTimeOf(row.revoked_at),
})

/** A line of `intake keys list`, as both databases return it. */
export interface KeyListingRow {
  id: string
  account: string
  key_hint: string
  created_at: RowTime
  last_used_at: RowTime | null
  revoked_at: RowTime | null
}

const KEY_LISTING = `SELECT k.id, a.name AS account, k.key_hint, k.created_at, k.last_used_at, k.revoked_at
  FROM api_keys k JOIN accounts a ON a.id = k.account_id`

export const LIST_KEYS = `${KEY_LISTING} ORDER BY k.id`

/** LIST_KEYS of one account, its id the statement's one parameter (`$1` on PostgreSQL, `?1` on SQLite). */
export const listKeysOfAccount = (parameter: string) => `${KEY_LISTING} WHERE k.account_id = ${parameter} ORDER BY k.id`

export const toKeyListing = (row: KeyListingRow): KeyListing => ({
  id: row.id,
  account: row.account,
  hint: row.key_hint,
  createdAt: timeOf(row.created_at),
  lastUsedAt: optionalTimeOf(row.last_used_at),
  revokedAt: optionalTimeOf(row.revoked_at),
})
