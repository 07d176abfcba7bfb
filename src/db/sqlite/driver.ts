import { Database } from 'bun:sqlite'
import { closeSync, fdatasync, openSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Driver } from '../driver.ts'
import { type OpenOptions, openDatabase } from './open.ts'
import { createReadSnapshot } from './snapshots.ts'
import { createWriter } from './writer.ts'

/** The connections a module's SQLite store is made on (see openSqlite). */
interface SqliteConnections {
  /** The one connection that writes: every unit of work runs on it. */
  writer: Database
  /** Reads only, what is committed and synced. */
  reader: Database
  /** Reads only, outside any snapshot: the latest commit, other processes' included. */
  latestReader: Database
}

/** The stores a composition root makes on the connections: those that read, and those a transaction gets. */
interface SqliteStores<Reads, Tx> {
  reads: Reads
  transaction: Tx
}

/**
 * intake on one SQLite file. Three connections: one that writes (every unit of
 * work through the group-commit writer), one that reads forms, answers and
 * deliveries, which sees only what is committed and synced (held on the state
 * before a commit until its sync is done), so no request reads what a batch
 * has not made durable; and one that reads outside any snapshot (keys, which
 * other processes write). `storesOn` makes the module stores on them.
 */
export function openSqlite<Reads extends object, Tx>(
  path: string,
  options: OpenOptions,
  storesOn: (connections: SqliteConnections) => SqliteStores<Reads, Tx>,
): Reads & Driver<Tx> {
  const db = openDatabase(path, options)
  let reader: Database
  try {
    // The writer syncs the log itself, off the event loop, before anyone hears of a commit, and
    // checkpoints it when no reader holds a snapshot from before (see createWriter). A log left
    // larger than 64 MiB by a burst is cut back when it starts over (smaller, it is overwritten
    // in place: a sync of an overwrite costs two thirds of one that grows the file).
    db.exec('PRAGMA synchronous = NORMAL')
    db.exec('PRAGMA wal_autocheckpoint = 0')
    db.exec('PRAGMA journal_size_limit = 67108864')
    // Each unit of work runs in a savepoint, whose statement journal would otherwise be a temporary
    // file made and removed for every unit: a fifth of the answers a second (bench/results.md, issue 27).
    db.exec('PRAGMA temp_store = MEMORY')
    reader = openReader(path)
  } catch (error) {
    db.close()
    throw error
  }
  let latestReader: Database
  try {
    latestReader = openReader(path)
  } catch (error) {
    reader.close()
    db.close()
    throw error
  }
  const snapshot = createReadSnapshot(reader)
  const { reads, transaction: tx } = storesOn({ writer: db, reader, latestReader })
  const log = createLogSync(`${path}-wal`)
  const writer = createWriter(db, tx, { syncLog: log.sync, snapshot, log: options.log })
  const health = reader.query('SELECT 1')
  return {
    kind: 'sqlite',
    location: resolve(path),
    ...reads,
    transaction: writer.run,
    stagedTransaction: writer.stage,
    watchForms: () => () => {},
    watchEvents: () => () => {},
    alone: (work) => work(),
    ping: async () => {
      writer.check()
      health.get()
    },
    async close() {
      await writer.idle()
      snapshot.end()
      log.close()
      latestReader.close()
      reader.close()
      db.close()
    },
  }
}

/** A connection that only reads. */
function openReader(path: string): Database {
  const reader = new Database(path, { strict: true })
  try {
    reader.exec('PRAGMA busy_timeout = 5000')
    reader.exec('PRAGMA query_only = ON')
  } catch (error) {
    reader.close()
    throw error
  }
  return reader
}

/**
 * fdatasync of the write-ahead log on the thread pool: what synchronous=FULL
 * does inside COMMIT, without holding the event loop. Any descriptor of the
 * file syncs it; the log stays the same file while the store's connections
 * are open (SQLite deletes it only when the last one closes).
 */
function createLogSync(walPath: string) {
  let fd: number | undefined
  return {
    sync: () =>
      new Promise<void>((resolve, reject) => {
        try {
          fd ??= openSync(walPath, 'r')
        } catch (error) {
          reject(error)
          return
        }
        fdatasync(fd, (error) => (error ? reject(error) : resolve()))
      }),
    close() {
      if (fd !== undefined) closeSync(fd)
      fd = undefined
    },
  }
}
