import type { Database } from '../../db/index.ts'

export interface KeyRow {
  id: string
  account_id: string
  last_used_at: number | null
  revoked_at: number | null
}

export interface KeyListRow {
  id: string
  account: string
  key_hint: string
  created_at: number
  last_used_at: number | null
  revoked_at: number | null
}

/** The SQL of accounts and keys. */
export function createAuthStore(db: Database) {
  const accountByName = db.query<{ id: string }, [string]>('SELECT id FROM accounts WHERE name = ?')
  const insertAccount = db.query('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)')
  const insertKey = db.query(
    'INSERT INTO api_keys (id, account_id, key_hash, key_hint, created_at) VALUES (?, ?, ?, ?, ?)',
  )
  const keyByHash = db.query<KeyRow, [string]>(
    'SELECT id, account_id, last_used_at, revoked_at FROM api_keys WHERE key_hash = ?',
  )
  const usableKeyExists = db.query<{ found: number }, []>(
    'SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL) AS found',
  )
  const listKeys = db.query<KeyListRow, []>(
    `SELECT k.id, a.name AS account, k.key_hint, k.created_at, k.last_used_at, k.revoked_at
       FROM api_keys k JOIN accounts a ON a.id = k.account_id
      ORDER BY k.id`,
  )
  const revoke = db.query('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
  const keyExists = db.query<{ found: number }, [string]>('SELECT EXISTS (SELECT 1 FROM api_keys WHERE id = ?) AS found')
  const touch = db.query('UPDATE api_keys SET last_used_at = ? WHERE id = ?')
  // Changes when another connection (another process: the command line) commits.
  const dataVersion = db.query<{ data_version: number }, []>('PRAGMA data_version')

  return {
    /** Finds the account by name, creating it (with `newId`) when new; returns its id. */
    ensureAccount(newId: string, name: string, now: number): string {
      const existing = accountByName.get(name)
      if (existing) return existing.id
      insertAccount.run(newId, name, now)
      return newId
    },
    insertKey(key: { id: string; accountId: string; hash: string; hint: string; createdAt: number }) {
      insertKey.run(key.id, key.accountId, key.hash, key.hint, key.createdAt)
    },
    keyByHash: (hash: string) => keyByHash.get(hash),
    usableKeyExists: () => usableKeyExists.get()!.found === 1,
    listKeys: () => listKeys.all(),
    /** True when the key existed and was not yet revoked. */
    revoke: (id: string, now: number) => revoke.run(now, id).changes === 1,
    keyExists: (id: string) => keyExists.get(id)!.found === 1,
    touch: (id: string, now: number) => void touch.run(now, id),
    /** A number that changes whenever another connection has committed to the database. */
    dataVersion: () => dataVersion.get()!.data_version,
    transaction: <T>(work: () => T): T => db.transaction(work).immediate(),
  }
}

export type AuthStore = ReturnType<typeof createAuthStore>
