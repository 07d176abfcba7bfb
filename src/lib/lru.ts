/**
 * A small least-recently-used cache. For things that never change once made
 * (a form's rendered page): bounded by entries, never stale.
 */
export function createLruCache<V>(maxEntries: number) {
  const entries = new Map<string, V>()
  const cache = {
    get(key: string): V | undefined {
      const found = entries.get(key)
      if (found !== undefined) {
        // Map keeps insertion order: re-inserting marks the entry most recently used.
        entries.delete(key)
        entries.set(key, found)
      }
      return found
    },
    set(key: string, value: V): V {
      entries.set(key, value)
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!)
      return value
    },
    /** The cached value, or what `make` returns (then kept). */
    getOrMake(key: string, make: () => V): V {
      return cache.get(key) ?? cache.set(key, make())
    },
  }
  return cache
}
