import type { Logger } from '../../lib/log.ts'
import type { Store } from '../../stores.ts'

/**
 * Waits held by keys that may be revoked meanwhile (CONTRACT 12a): a
 * long-poll or a feed wait ends with 401 within a second of its key's
 * revocation, whichever process or instance revoked it.
 *
 * A wait registers its key for as long as it is held. While any is, one
 * timer for the whole process looks every LOOK_EVERY_MS at whether keys may
 * have changed (the store's keysVersion: PostgreSQL's notification channel,
 * or on SQLite another process's commit); only then, or for a key not yet
 * looked at since its request was authenticated under an older version, does
 * it look the waiting keys up, once each, and end the waits of those revoked
 * or gone. Nothing runs per wait, and nothing while no wait is held.
 */

/** How often the timer looks; a revocation is heard within this, plus the notification's way (CONTRACT 12a: 1 s). */
const LOOK_EVERY_MS = 500

/** A wait's hold on its key: `revoked` fires when the key is found revoked; `release` when the wait ends. */
export interface KeyHold {
  readonly revoked: AbortSignal
  release(): void
}

/** What a waiting request's key is known by: its hash, and the keys version it was found valid at. */
export interface WaitingKey {
  hash: string
  version: unknown
}

export function createKeyWatch(store: Pick<Store, 'keys'>, logger?: Logger) {
  interface Watched {
    /** The version the key was last found valid at; undefined: to be looked up at the next look. */
    version: unknown
    holds: Set<AbortController>
  }
  const watched = new Map<string, Watched>()
  let timer: ReturnType<typeof setInterval> | undefined
  let looking = false

  async function look(): Promise<void> {
    if (looking) return
    looking = true
    try {
      const version = await store.keys.keysVersion()
      for (const [hash, entry] of watched) {
        if (entry.version === version) continue
        const record = await store.keys.keyByHash(hash)
        // Released meanwhile: nobody to tell.
        if (watched.get(hash) !== entry) continue
        if (record && record.revokedAt === null) {
          entry.version = version
          continue
        }
        watched.delete(hash)
        for (const hold of entry.holds) hold.abort()
      }
    } catch (error) {
      // The database away: the next look tries again (and the wait's own time still ends it).
      logger?.warn('waiting keys not checked', { error: String(error) })
    } finally {
      looking = false
      if (watched.size === 0) stop()
    }
  }

  function stop() {
    clearInterval(timer)
    timer = undefined
  }

  return {
    /** Registers a waiting request's key until `release`. */
    hold(key: WaitingKey): KeyHold {
      let entry = watched.get(key.hash)
      if (!entry) watched.set(key.hash, (entry = { version: key.version, holds: new Set() }))
      // Found valid at another version than the one watched: look it up at the next look.
      else if (entry.version !== key.version) entry.version = undefined
      const hold = new AbortController()
      entry.holds.add(hold)
      if (!timer) {
        timer = setInterval(() => void look(), LOOK_EVERY_MS)
        // A process with nothing else to do may still exit.
        timer.unref?.()
      }
      const held = entry
      return {
        revoked: hold.signal,
        release() {
          held.holds.delete(hold)
          if (held.holds.size === 0 && watched.get(key.hash) === held) watched.delete(key.hash)
          if (watched.size === 0) stop()
        },
      }
    },

    /** This process revoked a key: every waiting key is looked up now (its own write changes no version on SQLite). */
    revokedHere(): void {
      for (const entry of watched.values()) entry.version = undefined
      void look()
    },
  }
}
