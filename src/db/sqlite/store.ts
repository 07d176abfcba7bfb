import { Database } from 'bun:sqlite'
import { resolve } from 'node:path'
import { createSqliteKeyStore } from '../../modules/auth/store/sqlite.ts'
import { createSqliteFormStore } from '../../modules/forms/store/sqlite.ts'
import { createSqliteResponseStore } from '../../modules/responses/store/sqlite.ts'
import { createSqliteDeliveryStore } from '../../modules/webhooks/store/sqlite.ts'
import type { Reads, Store, Transaction } from '../store.ts'
import { openDatabase, type OpenOptions } from './open.ts'
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
  const reads: Reads = {
    forms: createSqliteFormStore(reader),
    responses: createSqliteResponseStore(reader),
    deliveries: createSqliteDeliveryStore(reader),
    keys: createSqliteKeyStore(reader, db),
  }
  const writer = createWriter(db, tx)
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
      reader.close()
      db.close()
    },
  }
}
