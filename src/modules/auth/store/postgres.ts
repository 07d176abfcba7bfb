import type { Query } from '../../../db/postgres/driver.ts'
import type { Account, ApiKeyRecord, KeyListing, KeyWrites } from './index.ts'
import {
  KEY_COLUMNS,
  type KeyListingRow,
  type KeyRow,
  LIST_KEYS,
  listKeysOfAccount,
  toApiKeyRecord,
  toKeyListing,
} from './rows.ts'

const ACCOUNT_BY_NAME = 'SELECT id, name FROM accounts WHERE name = $1'
const ACCOUNT_BY_ID = 'SELECT id, name FROM accounts WHERE id = $1'
const LIST_ACCOUNTS = 'SELECT id, name FROM accounts ORDER BY name'
const INSERT_ACCOUNT = 'INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING'
const INSERT_KEY = 'INSERT INTO api_keys (id, account_id, key_hash, key_hint, created_at) VALUES ($1, $2, $3, $4, $5)'
const KEY_BY_HASH = `SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = $1`
const USABLE_KEY_EXISTS = 'SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL) AS found'
const REVOKE = 'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL'
const KEYS_OF_ACCOUNT = listKeysOfAccount('$1')
const KEY_EXISTS = 'SELECT EXISTS (SELECT 1 FROM api_keys WHERE id = $1) AS found'
const TOUCH = 'UPDATE api_keys SET last_used_at = $1 WHERE id = $2'

/**
 * The auth module's store on PostgreSQL: one for the pool's reads, one per
 * transaction. `keysVersion` is the store's notification channel's (see
 * db/postgres/changes.ts); without one, nothing may be remembered.
 */
export function createPostgresKeyStore(query: Query, keysVersion: () => unknown = () => ({})): KeyWrites {
  return {
    accountById: async (id) => (await query<Account>(ACCOUNT_BY_ID, [id]))[0],
    accountByName: async (name) => (await query<Account>(ACCOUNT_BY_NAME, [name]))[0],
    listAccounts: async () => [...(await query<Account>(LIST_ACCOUNTS))],
    async ensureAccount(newId, name, now) {
      // Race-safe: a concurrent insert of the same name makes this one wait for
      // it, then do nothing; the select after it (a statement of its own, so a
      // snapshot of its own) then sees that account.
      if ((await query(INSERT_ACCOUNT, [newId, name, now])).count === 1) return newId
      const [row] = await query<{ id: string }>(ACCOUNT_BY_NAME, [name])
      return row!.id
    },
    insertKey: async (key) =>
      void (await query(INSERT_KEY, [key.id, key.accountId, key.hash, key.hint, key.createdAt])),
    async keyByHash(hash): Promise<ApiKeyRecord | undefined> {
      const [row] = await query<KeyRow>(KEY_BY_HASH, [hash])
      return row ? toApiKeyRecord(row) : undefined
    },
    usableKeyExists: async () => (await query<{ found: boolean }>(USABLE_KEY_EXISTS))[0]!.found,
    listKeys: async (): Promise<KeyListing[]> => (await query<KeyListingRow>(LIST_KEYS)).map(toKeyListing),
    listKeysOfAccount: async (accountId) =>
      (await query<KeyListingRow>(KEYS_OF_ACCOUNT, [accountId])).map(toKeyListing),
    revoke: async (id, now) => (await query(REVOKE, [now, id])).count === 1,
    keyExists: async (id) => (await query<{ found: boolean }>(KEY_EXISTS, [id]))[0]!.found,
    touch: async (id, now) => void (await query(TOUCH, [now, id])),
    keysVersion: async () => keysVersion(),
  }
}
