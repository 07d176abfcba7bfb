import type { Database } from 'bun:sqlite'

/** Runs a unit of work that writes; resolves once the work is durable. */
export interface Writer {
  run<T>(work: () => T): Promise<T>
  /**
   * Runs `work` at once, in a transaction of its own committed without
   * waiting for the disk. Its writes become durable with the next commit of
   * `run`, which syncs the whole write-ahead log. For bytes that matter only
   * once a later unit of work refers to them (a file's chunks, before the
   * answer that holds them): a chunk then costs a copy, not a disk sync that
   * holds the event loop. The log is checkpointed right after, so that each
   * staged write pays for its own pages rather than one commit in four
   * paying for four writes' worth.
   */
  stage<T>(work: () => T): T
}

interface Queued {
  work: () => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/**
 * Group commit. Writes that arrive together (concurrent requests in one turn
 * of the event loop) share one transaction, and so one disk sync, instead of
 * one each. Every unit of work runs in its own savepoint: what it returns or
 * throws is exactly its own, and a failure undoes only its own writes. Each
 * caller hears back only after the commit that makes its write durable.
 *
 * Work must be synchronous (no await inside): it runs while the batch's
 * transaction is open.
 */
export function createWriter(db: Database): Writer {
  const begin = db.prepare('BEGIN IMMEDIATE')
  const commit = db.prepare('COMMIT')
  const rollback = db.prepare('ROLLBACK')
  const savepoint = db.prepare('SAVEPOINT unit')
  const release = db.prepare('RELEASE unit')
  const undo = db.prepare('ROLLBACK TO unit')
  let queue: Queued[] = []

  function flush() {
    const batch = queue
    queue = []
    try {
      begin.run()
    } catch (error) {
      for (const unit of batch) unit.reject(error)
      return
    }
    const outcomes: Array<{ ok: boolean; value: unknown }> = []
    for (const unit of batch) {
      savepoint.run()
      try {
        outcomes.push({ ok: true, value: unit.work() })
        release.run()
      } catch (error) {
        undo.run()
        release.run()
        outcomes.push({ ok: false, value: error })
      }
    }
    try {
      commit.run()
    } catch (error) {
      // Nothing of this batch is durable: every unit fails, with the reason.
      if (db.inTransaction) rollback.run()
      for (const unit of batch) unit.reject(error)
      return
    }
    batch.forEach((unit, i) => (outcomes[i]!.ok ? unit.resolve(outcomes[i]!.value) : unit.reject(outcomes[i]!.value)))
  }

  const withoutSync = db.prepare('PRAGMA synchronous = NORMAL')
  const withSync = db.prepare('PRAGMA synchronous = FULL')
  const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)')

  return {
    stage<T>(work: () => T): T {
      // Synchronous from start to end: no batch of `run` can be open meanwhile.
      withoutSync.run()
      let value: T
      try {
        begin.run()
        try {
          value = work()
          commit.run()
        } catch (error) {
          if (db.inTransaction) rollback.run()
          throw error
        }
      } finally {
        withSync.run()
      }
      checkpoint.run()
      return value
    },
    run<T>(work: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        if (queue.push({ work, resolve: resolve as (value: unknown) => void, reject }) === 1) setImmediate(flush)
      })
    },
  }
}
