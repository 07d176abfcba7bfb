/**
 * Cooperative time slicing. Work whose size a client decides (validating a
 * large body, rendering a large page, parsing an upload) hands the event loop
 * back every few milliseconds, so that no single request holds it for long
 * (CONTRACT 13: at most 50 ms) and /healthz and every other request keep
 * being answered while it runs.
 */

/** How long one stretch of work may run before it gives the event loop a turn. */
const SLICE_BUDGET_MS = 8

/** One turn of the event loop: timers, I/O and other requests run before this resolves. */
export const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * A stopwatch for one piece of long work: call `pause()` between steps; it
 * resolves at once while the slice has time left, and after a turn of the
 * event loop once it has not.
 */
export function timeSlicer(budgetMs = SLICE_BUDGET_MS) {
  let sliceStartedAt = performance.now()
  return {
    /** Gives the event loop a turn when the slice is spent; starts a new slice after it. */
    async pause(): Promise<void> {
      if (performance.now() - sliceStartedAt < budgetMs) return
      await yieldToLoop()
      sliceStartedAt = performance.now()
    },
  }
}

export type TimeSlicer = ReturnType<typeof timeSlicer>
