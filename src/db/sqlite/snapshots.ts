import type { Database } from 'bun:sqlite'

/**
 * Keeps readers on the state before a commit until the commit is on disk.
 * The writer commits without waiting for the disk and syncs the log off the
 * event loop (see createWriter); meanwhile the reading connection stays in a
 * read transaction begun before the commit, so every read sees the state
 * before it, and the first read after the sync sees it. No request reads
 * what could still be lost. Outside a commit, reads run on their own.
 *
 * Only this process writes the tables read through this connection. Other
 * processes (the command line) write keys alone, and keys are read on another
 * connection, never held: a revocation holds for every request sent after it.
 */
export interface ReadSnapshot {
  /** Begins a read transaction on the reading connection, its snapshot taken now, until `end`. */
  hold(): void
  /** Ends the held snapshot: the next read sees every commit so far. */
  end(): void
}

export function createReadSnapshot(reader: Database): ReadSnapshot {
  const begin = reader.prepare('BEGIN')
  // A deferred BEGIN takes its snapshot at the first read: hold() must take it before the commit.
  const firstRead = reader.prepare('SELECT 1 FROM sqlite_schema LIMIT 1')
  const commit = reader.prepare('COMMIT')
  let held = false
  return {
    hold() {
      if (held) return
      begin.run()
      held = true
      firstRead.get()
    },
    end() {
      if (!held) return
      held = false
      commit.run()
    },
  }
}
