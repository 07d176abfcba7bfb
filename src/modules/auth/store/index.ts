/**
 * What the auth module keeps (the tables `accounts` and `api_keys`), and the
 * one interface every database gives it (sqlite.ts, postgres.ts beside this
 * file). Keys are stored as the SHA-256 hex of the whole key, never in plain.
 */

export interface ApiKeyRecord {
  id: string
  accountId: string
  lastUsedAt: number | null
  revokedAt: number | null
}

export interface KeyListing {
  id: string
  account: string
  /** The key's last 4 characters, to tell keys apart. */
  hint: string
  createdAt: number
  lastUsedAt: number | null
  revokedAt: number | null
}

/** An account, as the console names and lists it. */
export interface Account {
  id: string
  name: string
}

export interface KeyReads {
  accountById(id: string): Promise<Account | undefined>
  accountByName(name: string): Promise<Account | undefined>
  /** Every account, by name. */
  listAccounts(): Promise<Account[]>
  keyByHash(hash: string): Promise<ApiKeyRecord | undefined>
  usableKeyExists(): Promise<boolean>
  listKeys(): Promise<KeyListing[]>
  /** The account's keys, oldest first (revoked ones too). */
  listKeysOfAccount(accountId: string): Promise<KeyListing[]>
  keyExists(id: string): Promise<boolean>
  /**
   * A value that stays the same (by ===) while no other process can have
   * changed any key: what a key was found to be may be remembered until it
   * changes. A database that cannot tell returns a new value every time.
   */
  keysVersion(): Promise<unknown>
}

export interface KeyWrites extends KeyReads {
  /** Finds the account by name, creating it (with `newId`) when new; returns its id. */
  ensureAccount(newId: string, name: string, now: number): Promise<string>
  insertKey(key: { id: string; accountId: string; hash: string; hint: string; createdAt: number }): Promise<void>
  /** True when the key existed and was not yet revoked. */
  revoke(id: string, now: number): Promise<boolean>
  touch(id: string, now: number): Promise<void>
}
