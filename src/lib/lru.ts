/**
 * A small least-recently-used cache. For things that never change once made
 * (a form's rendered page): bounded by entries, never stale.
 */
export function createLruCache<V>(maxEntries: number) {
  const entries = new Map<string, V>()
  return {
    /** The cached value, or what `make` returns (then kept). */
    getOrMake(key: string, make: () => V): V {
      const found = entries.get(key)
      if (found !== undefined) {
        // Map keeps insertion order: re-inserting marks the entry most recently used.
        entries.delete(key)
        entries.set(key, found)
        return found
      }
      const made = make()
      entries.set(key, made)
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!)
      return made
    },
  }
}
