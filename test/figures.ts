/**
 * Figures a test measures on the way (how long the event loop was held, how
 * fast /healthz answered, how much memory the server took) are printed, and
 * when INTAKE_FIGURES_FILE names a file, appended to it one JSON line each.
 * Tests never judge them: a busy machine would fail a correct server.
 * bench/check-bounds.ts runs the tests that report them, holds each bound's
 * limit, prints every figure beside it, and fails when one is missed.
 */
import { appendFileSync } from 'node:fs'

/** The bounds a figure is judged against: bench/check-bounds.ts gives each its limit. */
export type Bound =
  | 'event-loop stall, median of 5 (ms)'
  | 'event-loop stall under a backlog (ms)'
  | 'first webhook attempt (ms)'
  | 'first webhook attempt under a backlog (ms)'
  | 'resting loop CPU, share of one core'
  | 'wake across servers (ms)'
  | 'wake across instances (ms)'
  | 'wake by the poll, notification lost (ms)'
  | 'wake by an expiry another server wrote (ms)'
  | 'revocation heard by another server (ms)'
  | '/healthz under attack, slowest (ms)'
  | 'RSS under attack, peak (MiB)'
  | 'slow bodies all cut after (s)'
  | 'RSS growth while stdout is blocked (MiB)'
  | 'keys version held once listening (ms)'
  | 'keys version changed, heard after (ms)'

export interface Figure {
  bound: Bound
  what: string
  value: number
}

/** Prints a figure and, for bench/check-bounds.ts, records it. */
export function reportFigure(bound: Bound, what: string, value: number): void {
  console.log(`figure: ${bound}: ${what}: ${Number(value.toFixed(2))}`)
  const file = process.env.INTAKE_FIGURES_FILE
  if (file) appendFileSync(file, `${JSON.stringify({ bound, what, value } satisfies Figure)}\n`)
}
