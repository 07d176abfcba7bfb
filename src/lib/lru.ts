/**
 * A small least-recently-used cache for things that never change once made
 * (a form's rendered page, its JSON, a date format). Bounded in entries and
 * in bytes: one client's many small entries, or few large ones, must not grow
 * the server's memory (CONTRACT 13, 13a).
 */
export interface LruLimits<V> {
  /** Bytes all entries may take together. */
  maxBytes: number
  /** Entries kept at most, whatever their size (DEFAULT_MAX_ENTRIES when not given). */
  maxEntries?: number
  /** An entry larger than this is not kept at all (it would push out many others). */
  maxEntryBytes: number
  /** An entry's size in bytes (near enough). */
  sizeOf(value: V): number
}

/** Entries a cache keeps when its limits name no number: each costs some memory of its own beyond its bytes. */
const DEFAULT_MAX_ENTRIES = 10_000

export function createLruCache<V>(limits: LruLimits<V>) {
  const maxEntries = limits.maxEntries ?? DEFAULT_MAX_ENTRIES
  const entries = new Map<string, { value: V; bytes: number }>()
  let totalBytes = 0

  function remove(key: string) {
    const found = entries.get(key)
    if (found === undefined) return
    entries.delete(key)
    totalBytes -= found.bytes
  }

  const cache = {
    get(key: string): V | undefined {
      const found = entries.get(key)
      if (found === undefined) return undefined
      // Map keeps insertion order: re-inserting marks the entry most recently used.
      entries.delete(key)
      entries.set(key, found)
      return found.value
    },
    /** Keeps `value` when it fits, pushing out the least recently used; returns it either way. */
    set(key: string, value: V): V {
      remove(key)
      const bytes = limits.sizeOf(value)
      if (bytes > limits.maxEntryBytes) return value
      entries.set(key, { value, bytes })
      totalBytes += bytes
      for (const oldest of entries.keys()) {
        if (totalBytes <= limits.maxBytes && entries.size <= maxEntries) break
        remove(oldest)
      }
      return value
    },
    /** The cached value, or what `make` returns (then kept when it fits). */
    getOrMake(key: string, make: () => V): V {
      return cache.get(key) ?? cache.set(key, make())
    },
    /** Forgets the entry: what it was made from is gone. */
    delete: remove,
    /** What is kept now, to compare with the limits. */
    size: () => ({ entries: entries.size, bytes: totalBytes }),
  }
  return cache
}

/** A string's size in memory, near enough: two bytes per UTF-16 unit. */
export const stringBytes = (text: string) => text.length * 2
