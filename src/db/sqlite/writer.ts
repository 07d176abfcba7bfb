import type { Database } from 'bun:sqlite'
import { DatabaseUnavailable } from '../driver.ts'
import type { ReadSnapshot } from './snapshots.ts'

/** Runs units of work that write, on the one connection that writes. */
export interface Writer<Tx> {
  /** Runs `work` in the next group commit; resolves once its writes are durable. */
  run<T>(work: (tx: Tx) => Promise<T>): Promise<T>
  /**
   * Runs `work` in a transaction of its own committed without waiting for the
   * disk. Its writes become durable with the next commit of `run`, which
   * syncs the whole write-ahead log. A staged chunk of a file costs a copy,
   * not a disk sync that holds the event loop. The log is checkpointed right
   * after, so that each staged write pays for its own pages rather than one
   * commit in four paying for four writes' worth.
   */
  stage<T>(work: (tx: Tx) => Promise<T>): Promise<T>
  /** Resolves once everything queued so far is done. */
  idle(): Promise<void>
  /** Throws LogNotSynced once a sync of the log has failed: the writer then refuses every write. */
  check(): void
}

interface Outcome {
  ok: boolean
  value: unknown
}

interface Queued<Tx> {
  work: (tx: Tx) => Promise<unknown>
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/** What the writer's commits need around them. */
export interface Durability {
  /**
   * Makes everything committed so far durable: the write-ahead log synced to
   * disk. Commits themselves do not wait for the disk (synchronous=NORMAL);
   * this runs off the event loop, which meanwhile takes the next requests.
   */
  syncLog(): Promise<void>
  /** Keeps readers on the state before a commit until it is durable. */
  snapshot: ReadSnapshot
  /** Hears, once, that a sync failed. */
  log?: (line: string) => void
}

/**
 * How often the writer checkpoints the log while it commits. SQLite's own
 * automatic checkpoint is off on the writer: it runs inside COMMIT, while a
 * reader still holds the snapshot from before it, so under a steady load the
 * log could never start over and every commit paid for a checkpoint. Four
 * times a second, after a sync, when no snapshot is held, the log is copied
 * into the database and starts over (a burst of writes leaves it a few MiB).
 */
const CHECKPOINT_INTERVAL_MS = 250

/**
 * Group commit. Writes that arrive together (concurrent requests in one turn
 * of the event loop) share one transaction, and so one disk sync, instead of
 * one each: about ten times the creates and five times the answers a second
 * (bench/results.md, issue 27). Each unit runs once, in a savepoint of its
 * own: what it returns or throws is exactly its own, and a throw undoes only
 * its own writes. Each caller hears back only after the sync that makes its
 * write durable, and no read sees the batch before then (see Durability).
 *
 * One thing at a time uses the connection: a batch (until its sync is done),
 * or a staged write. A unit awaits only its transaction's methods, which on
 * SQLite are done by the time they return, so a batch holds the connection
 * for no longer than its SQL; while its log is synced, the requests that
 * arrive make the next batch. Reads outside transactions go through another
 * connection, which sees only what is committed and synced.
 */
export function createWriter<Tx>(db: Database, tx: Tx, durability: Durability): Writer<Tx> {
  const begin = db.prepare('BEGIN IMMEDIATE')
  const commit = db.prepare('COMMIT')
  const rollback = db.prepare('ROLLBACK')
  const savepoint = db.prepare('SAVEPOINT unit')
  const release = db.prepare('RELEASE unit')
  const undo = db.prepare('ROLLBACK TO unit')
  const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)')
  let queue: Array<Queued<Tx>> = []
  const staged: Array<Queued<Tx>> = []
  let busy = false
  let scheduled = false
  let stagedLast = false
  let lastCheckpoint = performance.now()
  /**
   * Why a sync of the log failed, once one has. Linux may then have dropped
   * the pages it could not write, so a later sync that succeeds does not make
   * them durable, and a lost frame in the middle of the log would lose every
   * commit after it at the next start. So, as PostgreSQL does, no write is
   * made after that: each is refused (503) until intake restarts and reopens
   * the log as it is on disk.
   */
  let failedSync: unknown

  function schedule() {
    if (scheduled || busy) return
    scheduled = true
    setImmediate(next)
  }

  /**
   * Does one thing per turn of the event loop, taking turns between staged
   * writes and batches when both wait: however many uploads are being
   * stored, answers and creates are not held behind them, nor they behind a
   * stream of batches.
   */
  async function next() {
    scheduled = false
    if (busy) return
    busy = true
    try {
      stagedLast = staged.length > 0 && (queue.length === 0 || !stagedLast)
      if (stagedLast) await runStaged(staged.shift()!)
      else if (queue.length > 0) await flush()
    } finally {
      busy = false
      if (staged.length > 0 || queue.length > 0) schedule()
    }
  }

  async function flush() {
    const batch = queue
    queue = []
    let outcomes: Outcome[]
    try {
      begin.run()
      outcomes = await runUnits(batch)
    } catch (error) {
      if (db.inTransaction) rollback.run()
      for (const unit of batch) unit.reject(error)
      return
    }
    durability.snapshot.hold()
    try {
      try {
        commit.run()
      } catch (error) {
        // Nothing of this batch is durable: every unit fails, with the reason.
        if (db.inTransaction) rollback.run()
        for (const unit of batch) unit.reject(error)
        return
      }
      try {
        await durability.syncLog()
      } catch (error) {
        // Committed, but perhaps not on disk: nobody is told it is, and nothing is written after it.
        failedSync = error
        durability.log?.(
          `The database's write-ahead log could not be synced to disk (${new LogNotSynced(error).message}). ` +
            'Writes are refused (503) from now on; check the disk, then restart intake.',
        )
        for (const unit of [...batch, ...queue.splice(0), ...staged.splice(0)]) unit.reject(new LogNotSynced(error))
        return
      }
    } finally {
      durability.snapshot.end()
    }
    if (performance.now() - lastCheckpoint >= CHECKPOINT_INTERVAL_MS) {
      checkpoint.run()
      lastCheckpoint = performance.now()
    }
    batch.forEach((unit, i) => (outcomes[i]!.ok ? unit.resolve(outcomes[i]!.value) : unit.reject(outcomes[i]!.value)))
  }

  /** Runs the units one after another in the open transaction, each once, in a savepoint of its own. */
  async function runUnits(batch: Array<Queued<Tx>>): Promise<Outcome[]> {
    const outcomes: Outcome[] = []
    for (const unit of batch) {
      savepoint.run()
      try {
        outcomes.push({ ok: true, value: await unit.work(tx) })
      } catch (error) {
        undo.run()
        outcomes.push({ ok: false, value: error })
      }
      release.run()
    }
    return outcomes
  }

  async function runStaged(unit: Queued<Tx>) {
    try {
      begin.run()
      try {
        const value = await unit.work(tx)
        commit.run()
        unit.resolve(value)
      } catch (error) {
        if (db.inTransaction) rollback.run()
        unit.reject(error)
      }
    } catch (error) {
      unit.reject(error)
    }
    checkpoint.run()
  }

  const enqueue = <T>(into: Array<Queued<Tx>>, work: (tx: Tx) => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      if (failedSync !== undefined) return reject(new LogNotSynced(failedSync))
      into.push({ work, resolve: resolve as (value: unknown) => void, reject })
      schedule()
    })

  return {
    run: (work) => enqueue(queue, work),
    stage: (work) => enqueue(staged, work),
    async idle() {
      while (busy || scheduled || staged.length > 0 || queue.length > 0)
        await new Promise((resolve) => setImmediate(resolve))
    },
    check() {
      if (failedSync !== undefined) throw new LogNotSynced(failedSync)
    },
  }
}

/** The write-ahead log could not be synced: the batch's writes are committed but may not be on disk, and no write is made after. */
class LogNotSynced extends DatabaseUnavailable {
  constructor(cause: unknown) {
    super(
      `the database's write-ahead log could not be synced to disk: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    )
  }
}
