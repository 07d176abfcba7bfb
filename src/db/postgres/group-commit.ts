import type { TransactionOptions } from '../driver.ts'

/**
 * Group commit on PostgreSQL. Units of work that arrive while the store's
 * batches are busy wait and then share one transaction, and so one COMMIT
 * and one WAL flush, instead of a BEGIN, a COMMIT and a flush each: on a
 * small machine the round trips and the commit records, not the statements,
 * are most of what a one-row write costs.
 *
 * A batch runs its units one after another on one connection, each seeing
 * the writes of those before it (as SQLite's writer runs them). There are no
 * savepoints: a subtransaction per unit costs a round trip each way, and
 * past 64 in one transaction PostgreSQL's subtransaction cache overflows and
 * slows every reader on the server. Instead, when any unit of a batch throws,
 * or the batch waits too long for a lock (which may be a deadlock with another
 * instance's batch), the whole batch is rolled back and each unit runs again
 * in a transaction of its own: what a unit returns or throws is exactly its
 * own. A unit may therefore run more than once; it must change nothing
 * outside its transaction (Store.transaction says so).
 *
 * Units marked independent (see TransactionOptions) run side by side, after
 * the others of their batch: the statements they make at the same step are
 * sent as one (the stores' coalesced writes), so a batch of answers costs
 * PostgreSQL a few statements, not a few per answer.
 *
 * Only when a batch loses its connection while COMMIT is in flight is its
 * outcome unknown: then every unit fails with that (503), as one unit alone would.
 * A batch the database did not answer in time (a frozen server) fails every
 * unit with that too, whenever it happened: alone, each would wait as long again.
 */

export interface GroupCommitOptions<Tx> {
  /** One transaction running `work`; `batched` marks the shared transaction of a batch. */
  transact<T>(work: (tx: Tx) => Promise<T>, batched: boolean): Promise<T>
  /** A failure after which a COMMIT may or may not have happened (the connection was lost). */
  isConnectionFailure(error: unknown): boolean
  /** The database did not answer in time: running the units again would only wait as long again. */
  isUnanswered(error: unknown): boolean
  /** Batches in flight at once, each on a connection of its own. */
  parallelBatches: number
  /** Units in one batch at most. */
  maxUnits: number
}

export interface GroupCommit<Tx> {
  run<T>(work: (tx: Tx) => Promise<T>, options?: TransactionOptions): Promise<T>
}

interface Queued<Tx> {
  work: (tx: Tx) => Promise<unknown>
  independent: boolean
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

export function createGroupCommit<Tx>(options: GroupCommitOptions<Tx>): GroupCommit<Tx> {
  let queue: Array<Queued<Tx>> = []
  let running = 0
  let scheduled = false

  /** Starts batches on the next turn of the event loop, so that units arriving together go together. */
  function schedule() {
    if (scheduled || running >= options.parallelBatches || queue.length === 0) return
    scheduled = true
    setImmediate(() => {
      scheduled = false
      while (running < options.parallelBatches && queue.length > 0) {
        const batch = queue.slice(0, options.maxUnits)
        queue = queue.slice(batch.length)
        running++
        void runBatch(batch).finally(() => {
          running--
          schedule()
        })
      }
    })
  }

  const alone = (unit: Queued<Tx>) => options.transact(unit.work, false).then(unit.resolve, unit.reject)

  async function runBatch(batch: Array<Queued<Tx>>) {
    if (batch.length === 1) return alone(batch[0]!)
    let allRan = false
    let values: unknown[]
    try {
      values = await options.transact(async (tx) => {
        const results: unknown[] = new Array(batch.length)
        const together: number[] = []
        for (const [i, unit] of batch.entries()) {
          if (unit.independent) together.push(i)
          else results[i] = await unit.work(tx)
        }
        // All settle before the batch goes on: none may still be using the transaction.
        const outcomes = await Promise.allSettled(together.map((i) => batch[i]!.work(tx)))
        for (const [k, outcome] of outcomes.entries()) {
          if (outcome.status === 'rejected') throw outcome.reason
          results[together[k]!] = outcome.value
        }
        allRan = true
        return results
      }, true)
    } catch (error) {
      if ((allRan && options.isConnectionFailure(error)) || options.isUnanswered(error)) {
        for (const unit of batch) unit.reject(error)
        return
      }
      // Rolled back: nothing of the batch was written. Each unit again, alone.
      await Promise.all(batch.map(alone))
      return
    }
    batch.forEach((unit, i) => unit.resolve(values[i]))
  }

  return {
    run: <T>(work: (tx: Tx) => Promise<T>, transactionOptions?: TransactionOptions) =>
      new Promise<T>((resolve, reject) => {
        queue.push({
          work: work as (tx: Tx) => Promise<unknown>,
          independent: transactionOptions?.independent === true,
          resolve: resolve as (value: unknown) => void,
          reject,
        })
        schedule()
      }),
  }
}
