import { Database } from 'bun:sqlite'
import { closeSync, fdatasync, fstatSync, openSync } from 'node:fs'
import { resolve } from 'node:path'
import { createSqliteKeyStore } from '../../modules/auth/store/sqlite.ts'
import { createSqliteFormStore } from '../../modules/forms/store/sqlite.ts'
import { createSqliteResponseStore } from '../../modules/responses/store/sqlite.ts'
import { createSqliteDeliveryStore } from '../../modules/webhooks/store/sqlite.ts'
import type { Reads, Store, Transaction } from '../store.ts'
import { openDatabase, type OpenOptions } from './open.ts'
import { createReadSnapshots, readingInSnapshot } from './snapshots.ts'
import { createWriter } from './writer.ts'

/**
 * intake on one SQLite file. Two connections: one that writes (every unit of
 * work through the group-commit writer) and one that reads, which sees only
 * what is committed, so no request reads what a batch has not made durable.
 */
export function createSqliteStore(path: string, options: OpenOptions = {}): Store {
  const db = openDatabase(path, options)
  let reader: Database
  try {
    // The writer syncs the log itself, off the event loop, before anyone hears of a commit, and
    // checkpoints it once no reader holds a snapshot from before (see createWriter). A log that
    // starts over is cut to what it holds, so its size says how much it holds.
    db.exec('PRAGMA synchronous = NORMAL')
    db.exec('PRAGMA wal_autocheckpoint = 0')
    db.exec('PRAGMA journal_size_limit = 0')
    reader = new Database(path, { strict: true })
    reader.exec('PRAGMA busy_timeout = 5000')
    reader.exec('PRAGMA query_only = ON')
  } catch (error) {
    db.close()
    throw error
  }
  const tx: Transaction = {
    forms: createSqliteFormStore(db),
    responses: createSqliteResponseStore(db),
    deliveries: createSqliteDeliveryStore(db),
    keys: createSqliteKeyStore(db),
  }
  const snapshots = createReadSnapshots(reader)
  const reads: Reads = {
    forms: readingInSnapshot(createSqliteFormStore(reader), snapshots),
    responses: readingInSnapshot(createSqliteResponseStore(reader), snapshots),
    deliveries: readingInSnapshot(createSqliteDeliveryStore(reader), snapshots),
    keys: createSqliteKeyStore(reader, db),
  }
  const log = createLogSync(`${path}-wal`)
  const writer = createWriter(db, tx, { syncLog: log.sync, snapshots, logBytes: log.bytes })
  const health = reader.query('SELECT 1')
  return {
    kind: 'sqlite',
    location: resolve(path),
    ...reads,
    transaction: writer.run,
    stagedTransaction: writer.stage,
    ping: async () => void health.get(),
    async close() {
      await writer.idle()
      snapshots.end()
      log.close()
      reader.close()
      db.close()
    },
  }
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
    bytes: () => (fd === undefined ? 0 : fstatSync(fd).size),
    close() {
      if (fd !== undefined) closeSync(fd)
      fd = undefined
    },
  }
}
