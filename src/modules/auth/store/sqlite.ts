import type { Database } from 'bun:sqlite'
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

/**
 * The auth module's store on SQLite. `writer` is the connection the server
 * writes through: its data_version changes only when another connection (the
 * command line) commits, so the server's own writes never count as a change.
 */
export function createSqliteKeyStore(db: Database, writer: Database = db): KeyWrites {
  const accountByName = db.query<Account, [string]>('SELECT id, name FROM accounts WHERE name = ?')
  const accountById = db.query<Account, [string]>('SELECT id, name FROM accounts WHERE id = ?')
  const listAccounts = db.query<Account, []>('SELECT id, name FROM accounts ORDER BY name')
  const insertAccount = db.query('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)')
  const insertKey = db.query(
    'INSERT INTO api_keys (id, account_id, key_hash, key_hint, created_at) VALUES (?, ?, ?, ?, ?)',
  )
  const keyByHash = db.query<KeyRow, [string]>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = ?`)
  const usableKeyExists = db.query<{ found: number }, []>(
    'SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL) AS found',
  )
  const listKeys = db.query<KeyListingRow, []>(LIST_KEYS)
  const keysOfAccount = db.query<KeyListingRow, [string]>(listKeysOfAccount('?1'))
  const revoke = db.query('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
  const keyExists = db.query<{ found: number }, [string]>(
    'SELECT EXISTS (SELECT 1 FROM api_keys WHERE id = ?) AS found',
  )
  const touch = db.query('UPDATE api_keys SET last_used_at = ? WHERE id = ?')
  const dataVersion = writer.query<{ data_version: number }, []>('PRAGMA data_version')

  return {
    accountById: async (id) => accountById.get(id) ?? undefined,
    accountByName: async (name) => accountByName.get(name) ?? undefined,
    listAccounts: async () => listAccounts.all(),
    async ensureAccount(newId, name, now) {
      const existing = accountByName.get(name)
      if (existing) return existing.id
      insertAccount.run(newId, name, now)
      return newId
    },
    insertKey: async (key) => void insertKey.run(key.id, key.accountId, key.hash, key.hint, key.createdAt),
    async keyByHash(hash): Promise<ApiKeyRecord | undefined> {
      const row = keyByHash.get(hash)
      return row ? toApiKeyRecord(row) : undefined
    },
    usableKeyExists: async () => usableKeyExists.get()!.found === 1,
    listKeys: async (): Promise<KeyListing[]> => listKeys.all().map(toKeyListing),
    listKeysOfAccount: async (accountId) => keysOfAccount.all(accountId).map(toKeyListing),
    revoke: async (id, now) => revoke.run(now, id).changes === 1,
    keyExists: async (id) => keyExists.get(id)!.found === 1,
    touch: async (id, now) => void touch.run(now, id),
    keysVersion: async () => dataVersion.get()!.data_version,
  }
}
