/** The key waits on an account's event feed use: apart from every form id (a ULID has no space). */
export const feedSignal = (accountId: string) => `feed ${accountId}`

/**
 * Notice that something about a form changed (answered, cancelled, expired,
 * deleted), or that an account's feed grew (keyed by feedSignal), so
 * long-polls wake at once instead of polling the database: from this process,
 * and on PostgreSQL from every other server by notification
 * (Store.watchForms, Store.watchEvents). A wake says only "look again": a waiter that finds
 * nothing new waits on. Changes made by another process on a SQLite file (the
 * command line) are not heard: such a waiter answers when its time is up.
 */
export function createFormSignals() {
  const waiters = new Map<string, Set<() => void>>()
  let closed = false

  function notify(formId: string): void {
    const waiting = waiters.get(formId)
    if (!waiting) return
    waiters.delete(formId)
    for (const wake of waiting) wake()
  }

  return {
    notify,

    /**
     * Resolves when `formId` changes, after `ms`, or when `abort` fires,
     * whichever comes first. Costs a timer and a set entry while it waits.
     */
    wait(formId: string, ms: number, abort?: AbortSignal): Promise<void> {
      return new Promise((resolve) => {
        if (closed || abort?.aborted) return resolve()
        let waiting = waiters.get(formId)
        if (!waiting) waiters.set(formId, (waiting = new Set()))
        const done = () => {
          clearTimeout(timer)
          abort?.removeEventListener('abort', done)
          const current = waiters.get(formId)
          current?.delete(done)
          if (current?.size === 0) waiters.delete(formId)
          resolve()
        }
        const timer = setTimeout(done, ms)
        abort?.addEventListener('abort', done)
        waiting.add(done)
      })
    },

    /** Wakes every waiter: any form may have changed unheard. */
    notifyAll(): void {
      for (const formId of [...waiters.keys()]) notify(formId)
    },

    /** At shutdown: every wait ends now and none begins, so no request waits out its time. */
    close(): void {
      closed = true
      for (const formId of [...waiters.keys()]) notify(formId)
    },

    /** Whether `close` was called: waiters answer with what they have. */
    get closed(): boolean {
      return closed
    },

    /** How many requests are waiting now. */
    get waiting(): number {
      let count = 0
      for (const set of waiters.values()) count += set.size
      return count
    },
  }
}

export type FormSignals = ReturnType<typeof createFormSignals>
