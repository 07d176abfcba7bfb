/**
 * Lookups asked for in one turn of the event loop, answered by one statement.
 * Under load the requests that each read one form's state arrive together,
 * and one statement for all of them costs PostgreSQL, the round trip and the
 * client about what one costs: the pool's connections, not the rows, are what
 * runs short. Each lookup is sent after it was asked for, so it sees every
 * commit made before: nothing is served from earlier than the request.
 *
 * `load` gets the calls in the order they were made and answers each, in the same order.
 */
export function coalesced<Call, Result>(load: (calls: Call[]) => Promise<Result[]>): (call: Call) => Promise<Result> {
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
    if (calls.length === 0) setImmediate(send)
    calls.push(call)
    const waiter = Promise.withResolvers<Result>()
    waiters.push(waiter)
    return waiter.promise
  }
}
