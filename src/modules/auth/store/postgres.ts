import type { Query, Scope } from '../../../db/postgres/store.ts'
import type { ApiKeyRecord, KeyListing, KeyWrites } from './index.ts'

/** Times are int8, which Bun's client returns as strings (Number() them here). */
const time = (value: string | null) => (value === null ? null : Number(value))

/**
 * A transaction that asks whether any key works, to make one when none does
 * (the first start), holds this lock until it commits: instances starting
 * together on an empty database then make one key between them. A two-int4
 * advisory lock: "key" in ASCII, and 0.
 */
const FIRST_KEY_LOCK = `SELECT pg_advisory_xact_lock(${0x6b6579}, 0)`

const ACCOUNT_BY_NAME = 'SELECT id FROM accounts WHERE name = $1'
const INSERT_ACCOUNT = 'INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING'
const INSERT_KEY = 'INSERT INTO api_keys (id, account_id, key_hash, key_hint, created_at) VALUES ($1, $2, $3, $4, $5)'
const KEY_BY_HASH = 'SELECT id, account_id, last_used_at, revoked_at FROM api_keys WHERE key_hash = $1'
const USABLE_KEY_EXISTS = 'SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL) AS found'
const LIST_KEYS = `SELECT k.id, a.name AS account, k.key_hint, k.created_at, k.last_used_at, k.revoked_at
  FROM api_keys k JOIN accounts a ON a.id = k.account_id
  ORDER BY k.id`
const REVOKE = 'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL'
const KEY_EXISTS = 'SELECT EXISTS (SELECT 1 FROM api_keys WHERE id = $1) AS found'
const TOUCH = 'UPDATE api_keys SET last_used_at = $1 WHERE id = $2'

/**
 * The auth module's store on PostgreSQL: one for the pool's reads, one per
 * transaction. `keysVersion` is the store's notification channel's (see
 * db/postgres/changes.ts); without one, nothing may be remembered.
 */
export function createPostgresKeyStore(query: Query, scope: Scope, keysVersion: () => unknown = () => ({})): KeyWrites {
  return {
    async ensureAccount(newId, name, now) {
      // Race-safe: a concurrent insert of the same name makes this one wait for
      // it, then do nothing; the select after it (a statement of its own, so a
      // snapshot of its own) then sees that account.
      if ((await query(INSERT_ACCOUNT, [newId, name, now])).count === 1) return newId
      const [row] = await query<{ id: string }>(ACCOUNT_BY_NAME, [name])
      return row!.id
    },
    insertKey: async (key) => void (await query(INSERT_KEY, [key.id, key.accountId, key.hash, key.hint, key.createdAt])),
    async keyByHash(hash): Promise<ApiKeyRecord | undefined> {
      const [row] = await query<{ id: string; account_id: string; last_used_at: string | null; revoked_at: string | null }>(KEY_BY_HASH, [hash])
      return row ? { id: row.id, accountId: row.account_id, lastUsedAt: time(row.last_used_at), revokedAt: time(row.revoked_at) } : undefined
    },
    async usableKeyExists() {
      if (scope === 'transaction') await query(FIRST_KEY_LOCK)
      return (await query<{ found: boolean }>(USABLE_KEY_EXISTS))[0]!.found
    },
    listKeys: async (): Promise<KeyListing[]> =>
      (
        await query<{ id: string; account: string; key_hint: string; created_at: string; last_used_at: string | null; revoked_at: string | null }>(LIST_KEYS)
      ).map((row) => ({
        id: row.id,
        account: row.account,
        hint: row.key_hint,
        createdAt: Number(row.created_at),
        lastUsedAt: time(row.last_used_at),
        revokedAt: time(row.revoked_at),
      })),
    revoke: async (id, now) => (await query(REVOKE, [now, id])).count === 1,
    keyExists: async (id) => (await query<{ found: boolean }>(KEY_EXISTS, [id]))[0]!.found,
    touch: async (id, now) => void (await query(TOUCH, [now, id])),
    keysVersion: async () => keysVersion(),
  }
}
