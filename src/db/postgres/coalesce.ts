import type { Query, Scope } from './driver.ts'

/**
 * Calls made together, answered by one statement. On the pool: lookups asked
 * for in one turn of the event loop.
 * Under load the requests that each read one form's state arrive together,
 * and one statement for all of them costs PostgreSQL, the round trip and the
 * client about what one costs: the pool's connections, not the rows, are what
 * runs short. Each lookup is sent after it was asked for, so it sees every
 * commit made before: nothing is served from earlier than the request.
 *
 * In a transaction (`schedule` queueMicrotask): the writes that units running
 * side by side make at the same step (see GroupCommitOptions), sent once the
 * units that made them have gone as far as they can.
 *
 * `load` gets the calls in the order they were made and answers each, in the same order.
 */
export function coalesced<Call, Result>(
  load: (calls: Call[]) => Promise<Result[]>,
  schedule: (send: () => void) => void = setImmediate,
): (call: Call) => Promise<Result> {
  let calls: Call[] = []
  let waiters: Array<PromiseWithResolvers<Result>> = []

  function send() {
    const sent = calls
    const waiting = waiters
    calls = []
    waiters = []
    load(sent).then(
      (results) => waiting.forEach((waiter, i) => waiter.resolve(results[i] as Result)),
      (error) => waiting.forEach((waiter) => waiter.reject(error)),
    )
  }

  return (call) => {
    if (calls.length === 0) schedule(send)
    calls.push(call)
    const waiter = Promise.withResolvers<Result>()
    waiters.push(waiter)
    return waiter.promise
  }
}

/** The calls' parameters as one array per parameter (the calls' values in call order): what `unnest` takes. */
export const columnsOf = (calls: unknown[][]): unknown[][] => calls[0]!.map((_, i) => calls.map((call) => call[i]))

/**
 * A write of one row: `one` alone on the pool; in a transaction, the calls
 * that units running side by side make at the same step share `many` (its
 * parameters arrays of the calls' values, see columnsOf), and a call made
 * alone still runs `one`.
 */
export function writtenTogether<Result>(
  scope: Scope,
  one: (args: unknown[]) => Promise<Result>,
  many: (calls: unknown[][]) => Promise<Result[]>,
): (args: unknown[]) => Promise<Result> {
  if (scope === 'pool') return one
  return coalesced(
    (calls: unknown[][]) => (calls.length === 1 ? one(calls[0]!).then((result) => [result]) : many(calls)),
    queueMicrotask,
  )
}

/** An INSERT of one row: `one` alone, or `many` (over `unnest` of columnsOf) for the rows units make together. */
export const insertedTogether = (
  query: Query,
  scope: Scope,
  one: string,
  many: string,
): ((args: unknown[]) => Promise<void>) =>
  writtenTogether<void>(
    scope,
    async (args) => void (await query(one, args)),
    async (calls) => {
      await query(many, columnsOf(calls))
      return calls.map(() => undefined)
    },
  )
