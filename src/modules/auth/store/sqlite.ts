import type { Database } from 'bun:sqlite'
import type { ApiKeyRecord, KeyListing, KeyWrites } from './index.ts'

/**
 * The auth module's store on SQLite. `writer` is the connection the server
 * writes through: its data_version changes only when another connection (the
 * command line) commits, so the server's own writes never count as a change.
 */
export function createSqliteKeyStore(db: Database, writer: Database = db): KeyWrites {
  const accountByName = db.query<{ id: string }, [string]>('SELECT id FROM accounts WHERE name = ?')
  const insertAccount = db.query('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)')
  const insertKey = db.query('INSERT INTO api_keys (id, account_id, key_hash, key_hint, created_at) VALUES (?, ?, ?, ?, ?)')
  const keyByHash = db.query<{ id: string; account_id: string; last_used_at: number | null; revoked_at: number | null }, [string]>(
    'SELECT id, account_id, last_used_at, revoked_at FROM api_keys WHERE key_hash = ?',
  )
  const usableKeyExists = db.query<{ found: number }, []>('SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL) AS found')
  const listKeys = db.query<{ id: string; account: string; key_hint: string; created_at: number; last_used_at: number | null; revoked_at: number | null }, []>(
    `SELECT k.id, a.name AS account, k.key_hint, k.created_at, k.last_used_at, k.revoked_at
       FROM api_keys k JOIN accounts a ON a.id = k.account_id
      ORDER BY k.id`,
  )
  const revoke = db.query('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
  const keyExists = db.query<{ found: number }, [string]>('SELECT EXISTS (SELECT 1 FROM api_keys WHERE id = ?) AS found')
  const touch = db.query('UPDATE api_keys SET last_used_at = ? WHERE id = ?')
  const dataVersion = writer.query<{ data_version: number }, []>('PRAGMA data_version')

  return {
    async ensureAccount(newId, name, now) {
      const existing = accountByName.get(name)
      if (existing) return existing.id
      insertAccount.run(newId, name, now)
      return newId
    },
    insertKey: async (key) => void insertKey.run(key.id, key.accountId, key.hash, key.hint, key.createdAt),
    async keyByHash(hash): Promise<ApiKeyRecord | undefined> {
      const row = keyByHash.get(hash)
      return row ? { id: row.id, accountId: row.account_id, lastUsedAt: row.last_used_at, revokedAt: row.revoked_at } : undefined
    },
    usableKeyExists: async () => usableKeyExists.get()!.found === 1,
    listKeys: async (): Promise<KeyListing[]> =>
      listKeys.all().map((row) => ({
        id: row.id,
        account: row.account,
        hint: row.key_hint,
        createdAt: row.created_at,
        lastUsedAt: row.last_used_at,
        revokedAt: row.revoked_at,
      })),
    revoke: async (id, now) => revoke.run(now, id).changes === 1,
    keyExists: async (id) => keyExists.get(id)!.found === 1,
    touch: async (id, now) => void touch.run(now, id),
    keysVersion: async () => dataVersion.get()!.data_version,
  }
}
