import { createHash, randomBytes } from 'node:crypto'
import { API_KEY_PATTERN } from '../../config.ts'
import { HttpError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import type { Logger } from '../../lib/log.ts'
import type { Clock } from '../../lib/time.ts'
import type { Store } from '../../stores.ts'
import type { ApiKeyRecord, KeyListing } from './store/index.ts'
import { createKeyWatch, type KeyHold } from './waits.ts'

/** Who is calling: resolved from the bearer key of one request, or a console user acting for an account. */
export interface Principal {
  accountId: string
  /** null for a console user, who holds no key (CONTRACT 15). */
  keyId: string | null
  /** The plaintext key, held only for this request: webhook secrets are derived from it. null: a console user. */
  key: string | null
  /** The store's keys version the key was found valid at (see KeyReads.keysVersion). */
  keysVersion: unknown
}

/** A principal an API key makes: its rate limit and waits go by the key. */
export interface KeyPrincipal extends Principal {
  keyId: string
  key: string
}

/** A console user acting for an account: the services' principal without an API key. */
export const consolePrincipal = (accountId: string): Principal => ({
  accountId,
  keyId: null,
  key: null,
  keysVersion: null,
})

type KeyRevocation = 'revoked' | 'already revoked' | 'unknown'

const DEFAULT_ACCOUNT = 'default'
const ACCOUNT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

// Writing last_used_at on every request would turn reads into writes; once a minute is plenty.
const LAST_USED_RESOLUTION_MS = 60_000

const hashKey = (key: string) => createHash('sha256').update(key).digest('hex')

/** Keys (and their rows) remembered between requests; past this many the memory starts over. */
const KEYS_REMEMBERED = 1000
const generateKey = () => `svc_live_${randomBytes(24).toString('hex')}`

const notAuthenticated = () => new HttpError(403, 'Not authenticated')
/** The refusal of a key unknown or revoked: also what a wait ends with when its key is revoked meanwhile. */
export const invalidKey = () => new HttpError(401, 'Invalid API key', undefined, { 'WWW-Authenticate': 'Bearer' })

/**
 * What a request that waits (a long-poll, a feed wait) holds while it waits:
 * `revoked` fires once its key is found revoked, and the wait then ends with
 * `invalidKey()`. `release` when the wait ends, however it ends.
 */
export type WaitingHold = KeyHold

/** What waiting services ask of the auth module: a hold on a principal's key while they wait. */
export interface KeyHolds {
  holdWhileWaiting(principal: Principal): WaitingHold
}

/** Keys and accounts: creating, listing and revoking keys, and who a request's key says it is. */
export function createAuthService(store: Store, clock: Clock, logger?: Logger) {
  /**
   * What each presented key turned out to be (its record, or null when
   * unknown), so most requests skip hashing and the lookup. Keys are created
   * and revoked by other processes (the command line, other instances). Once
   * per turn of the event loop, before the first request it handles, the
   * store says whether keys may have changed since; if so, everything
   * remembered is forgotten. On SQLite (another connection committed) a
   * revocation so holds for every request sent after it, as requests a turn
   * handles were read off the network before it began; on PostgreSQL the
   * change is heard by notification, within a second (CONTRACT 10).
   */
  const remembered = new Map<string, ApiKeyRecord | null>()
  let rememberedVersion: unknown
  let versionThisTurn: Promise<unknown> | undefined
  const waits = createKeyWatch(store, logger)
  /** Requests whose wait ended because their key was revoked meanwhile (see refusedWhileWaiting). */
  const revokedWhileWaiting = new WeakSet<Principal>()

  /** The key's record (null when unknown), and the keys version it was read at. */
  async function keyRecord(key: string): Promise<{ record: ApiKeyRecord | null; version: unknown }> {
    if (!versionThisTurn) {
      versionThisTurn = store.keys.keysVersion()
      setImmediate(() => (versionThisTurn = undefined))
    }
    const version = await versionThisTurn
    if (version !== rememberedVersion) {
      remembered.clear()
      rememberedVersion = version
    }
    let record = remembered.get(key)
    if (record === undefined) {
      record = (await store.keys.keyByHash(hashKey(key))) ?? null
      if (version !== rememberedVersion) return { record, version }
      if (remembered.size >= KEYS_REMEMBERED) remembered.clear()
      remembered.set(key, record)
    }
    return { record, version }
  }

  /** 'revoked', 'already revoked', or 'unknown'. */
  async function revokeKey(id: string): Promise<KeyRevocation> {
    const now = clock()
    if (await store.transaction((tx) => tx.keys.revoke(id, now))) {
      // Refused from this process's next request, whatever the store says of other processes' changes,
      // and its waits held by that key end now.
      remembered.clear()
      waits.revokedHere()
      return 'revoked'
    }
    return (await store.keys.keyExists(id)) ? 'already revoked' : 'unknown'
  }

  function register(accountName: string, key: string) {
    const now = clock()
    return store.transaction(async (tx) => {
      const accountId = await tx.keys.ensureAccount(newId(), accountName, now)
      const id = newId()
      await tx.keys.insertKey({ id, accountId, hash: hashKey(key), hint: key.slice(-4), createdAt: now })
      return { id, account: accountName }
    })
  }

  return {
    /** Creates a key (and its account when new). The plaintext is returned once and stored nowhere. */
    async createKey(accountName: string = DEFAULT_ACCOUNT) {
      if (!ACCOUNT_NAME_PATTERN.test(accountName)) {
        throw new HttpError(
          422,
          'An account name starts with a letter or digit and holds only letters, digits, ".", "_" and "-" (at most 64 characters)',
        )
      }
      const key = generateKey()
      return { ...(await register(accountName, key)), key }
    },

    /**
     * At server start: registers SERVICE_API_KEY when given; then, when no key
     * works, makes one to show once. It is stored by `commit`, only once it has
     * been shown: nobody must be left with a key they never saw as the only one.
     */
    async prepareStartupKey(
      configuredKey: string | undefined,
    ): Promise<{ key: string; commit(): Promise<void> } | undefined> {
      if (configuredKey && !(await store.keys.keyByHash(hashKey(configuredKey))))
        await register(DEFAULT_ACCOUNT, configuredKey)
      if (await store.keys.usableKeyExists()) return undefined
      const key = generateKey()
      return { key, commit: async () => void (await register(DEFAULT_ACCOUNT, key)) }
    },

    listKeys: (): Promise<KeyListing[]> => store.keys.listKeys(),

    listKeysOfAccount: (accountId: string): Promise<KeyListing[]> => store.keys.listKeysOfAccount(accountId),

    revokeKey,

    /** revokeKey for a key of the account: another account's key is 'unknown', as a key that never was. */
    async revokeKeyOfAccount(accountId: string, id: string): Promise<KeyRevocation> {
      const keys = await store.keys.listKeysOfAccount(accountId)
      return keys.some((key) => key.id === id) ? revokeKey(id) : 'unknown'
    },

    /** The principal of an `Authorization` header value, or a 403 / 401 as the contract says. */
    async authenticate(authorization: string | null): Promise<KeyPrincipal> {
      if (authorization === null || authorization.trim() === '') throw notAuthenticated()
      const match = /^Bearer(?:\s+(.*))?$/is.exec(authorization.trim())
      if (!match) throw invalidKey()
      const key = (match[1] ?? '').trim()
      if (key === '') throw notAuthenticated()
      if (!API_KEY_PATTERN.test(key)) throw invalidKey()
      const { record, version } = await keyRecord(key)
      if (!record || record.revokedAt !== null) throw invalidKey()
      const now = clock()
      if (record.lastUsedAt === null || now - record.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
        record.lastUsedAt = now
        store
          .transaction((tx) => tx.keys.touch(record.id, now))
          .catch((error) => logger?.warn('last-used time not recorded', { error: String(error) }))
      }
      return { accountId: record.accountId, keyId: record.id, key, keysVersion: version }
    },

    /**
     * Holds the principal's key while its request waits (see waits.ts): the
     * hold's `revoked` fires once the key is found revoked, within a second,
     * whoever revoked it. The request then answers 401 (refusedWhileWaiting).
     */
    holdWhileWaiting(principal: Principal): WaitingHold {
      // Without a key nothing can be revoked under the wait.
      if (principal.key === null) return { revoked: new AbortController().signal, release() {} }
      const hold = waits.hold({ hash: hashKey(principal.key), version: principal.keysVersion })
      hold.revoked.addEventListener('abort', () => revokedWhileWaiting.add(principal), { once: true })
      return hold
    },

    /** Whether the request's wait ended because its key was revoked: it answers 401, whatever it made of that. */
    refusedWhileWaiting: (principal: Principal): boolean => revokedWhileWaiting.has(principal),
  }
}

export type AuthService = ReturnType<typeof createAuthService>
