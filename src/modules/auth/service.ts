import { createHash, randomBytes } from 'node:crypto'
import { API_KEY_PATTERN } from '../../config.ts'
import { HttpError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import type { Clock } from '../../lib/time.ts'
import type { AuthStore, KeyListRow, KeyRow } from './store.ts'

/** Who is calling: resolved from the bearer key of one request. */
export interface Principal {
  accountId: string
  keyId: string
  /** The plaintext key, held only for this request: webhook secrets are derived from it. */
  key: string
}

export const DEFAULT_ACCOUNT = 'default'
export const ACCOUNT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

// Writing last_used_at on every request would turn reads into writes; once a minute is plenty.
const LAST_USED_RESOLUTION_MS = 60_000

export const hashKey = (key: string) => createHash('sha256').update(key).digest('hex')

/** Keys (and their rows) remembered between requests; past this many the memory starts over. */
const KEYS_REMEMBERED = 1000
export const generateKey = () => `svc_live_${randomBytes(24).toString('hex')}`

const notAuthenticated = () => new HttpError(403, 'Not authenticated')
const invalidKey = () => new HttpError(401, 'Invalid API key', undefined, { 'WWW-Authenticate': 'Bearer' })

/**
 * `write` runs the occasional last-used update: through the server's group
 * commit, or at once from the command line.
 */
export function createAuthService(store: AuthStore, clock: Clock, write: (work: () => void) => void = (work) => work()) {
  /**
   * What each presented key turned out to be (its row, or null when unknown),
   * so most requests skip hashing and the lookup. Keys are created and revoked
   * by other processes (the command line). Once per turn of the event loop,
   * before the first request it handles, the database's data_version says
   * whether any other connection has committed since; if one has, everything
   * remembered is forgotten. Requests a turn handles were read off the network
   * before it began, so a revocation holds for every request sent after it.
   */
  const remembered = new Map<string, KeyRow | null>()
  let rememberedVersion: number | undefined
  let checkedThisTurn = false

  function keyRow(key: string): KeyRow | null {
    if (!checkedThisTurn) {
      checkedThisTurn = true
      setImmediate(() => (checkedThisTurn = false))
      const version = store.dataVersion()
      if (version !== rememberedVersion) {
        remembered.clear()
        rememberedVersion = version
      }
    }
    let row = remembered.get(key)
    if (row === undefined) {
      row = store.keyByHash(hashKey(key)) ?? null
      if (remembered.size >= KEYS_REMEMBERED) remembered.clear()
      remembered.set(key, row)
    }
    return row
  }

  function register(accountName: string, key: string) {
    const now = clock()
    return store.transaction(() => {
      const accountId = store.ensureAccount(newId(), accountName, now)
      const id = newId()
      store.insertKey({ id, accountId, hash: hashKey(key), hint: key.slice(-4), createdAt: now })
      return { id, account: accountName }
    })
  }

  return {
    /** Creates a key (and its account when new). The plaintext is returned once and stored nowhere. */
    createKey(accountName: string = DEFAULT_ACCOUNT) {
      if (!ACCOUNT_NAME_PATTERN.test(accountName)) {
        throw new HttpError(422, 'An account name starts with a letter or digit and holds only letters, digits, ".", "_" and "-" (at most 64 characters)')
      }
      const key = generateKey()
      return { ...register(accountName, key), key }
    },

    /**
     * At server start: registers SERVICE_API_KEY when given; then, when no key
     * works, makes one to show once. It is stored by `commit`, only once it has
     * been shown: nobody must be left with a key they never saw as the only one.
     */
    prepareStartupKey(configuredKey: string | undefined): { key: string; commit(): void } | undefined {
      if (configuredKey && !store.keyByHash(hashKey(configuredKey))) register(DEFAULT_ACCOUNT, configuredKey)
      if (store.usableKeyExists()) return undefined
      const key = generateKey()
      return { key, commit: () => void register(DEFAULT_ACCOUNT, key) }
    },

    listKeys: (): KeyListRow[] => store.listKeys(),

    /** 'revoked', 'already revoked', or 'unknown'. */
    revokeKey(id: string): 'revoked' | 'already revoked' | 'unknown' {
      if (store.revoke(id, clock())) return 'revoked'
      return store.keyExists(id) ? 'already revoked' : 'unknown'
    },

    /** The principal of an `Authorization` header value, or a 403 / 401 as the contract says. */
    authenticate(authorization: string | null): Principal {
      if (authorization === null || authorization.trim() === '') throw notAuthenticated()
      const match = /^Bearer(?:\s+(.*))?$/is.exec(authorization.trim())
      if (!match) throw invalidKey()
      const key = (match[1] ?? '').trim()
      if (key === '') throw notAuthenticated()
      if (!API_KEY_PATTERN.test(key)) throw invalidKey()
      const row = keyRow(key)
      if (!row || row.revoked_at !== null) throw invalidKey()
      const now = clock()
      if (row.last_used_at === null || now - row.last_used_at >= LAST_USED_RESOLUTION_MS) {
        row.last_used_at = now
        write(() => store.touch(row.id, now))
      }
      return { accountId: row.account_id, keyId: row.id, key }
    },
  }
}

export type AuthService = ReturnType<typeof createAuthService>
