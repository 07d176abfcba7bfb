import type { Database } from 'bun:sqlite'

/**
 * Read transactions that last one turn of the event loop. In WAL mode every
 * statement outside a transaction takes and drops a read lock on the -shm
 * file, two fcntl calls: about 4 µs on this kind of VM, more than the query
 * itself (0.2 µs). The requests of one turn so share one snapshot, begun at
 * the first read of the turn (after they all arrived) and ended once the
 * turn's I/O is done (setImmediate).
 *
 * Around a commit the writer holds the snapshot: reads go on seeing the state
 * before the commit until the commit is on disk, and the first read after
 * that sees it. No request reads what could still be lost.
 *
 * Only this process writes the tables read through a snapshot. Other
 * processes (the command line) write keys alone, and keys are read on another
 * connection, outside any snapshot: a revocation holds for every request sent
 * after it.
 */
export interface ReadSnapshots {
  /** Makes sure a snapshot is open for the reads that follow. */
  enter(): void
  /** Keeps a snapshot (begun now if none is open) until `end`, whatever turns pass. */
  hold(): void
  /** Ends the open snapshot, held or not: the next read sees every commit so far. */
  end(): void
}

export function createReadSnapshots(reader: Database): ReadSnapshots {
  const begin = reader.prepare('BEGIN')
  // A deferred BEGIN takes its snapshot at the first read: hold() must take it before the commit.
  const firstRead = reader.prepare('SELECT 1 FROM sqlite_schema LIMIT 1')
  const commit = reader.prepare('COMMIT')
  let open = false
  let held = false
  const endOfTurn = () => {
    if (!held) end()
  }
  function end() {
    if (!open) return
    open = false
    held = false
    commit.run()
  }
  function enter() {
    if (open) return
    begin.run()
    open = true
    setImmediate(endOfTurn)
  }
  return {
    enter,
    hold() {
      enter()
      firstRead.get()
      held = true
    },
    end,
  }
}

/** `store` with every method first entering the current snapshot. */
export function readingInSnapshot<T extends object>(store: T, snapshots: ReadSnapshots): T {
  const wrapped: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(store)) {
    wrapped[name] =
      typeof value === 'function'
        ? (...args: unknown[]) => {
            snapshots.enter()
            return value(...args)
          }
        : value
  }
  return wrapped as T
}
