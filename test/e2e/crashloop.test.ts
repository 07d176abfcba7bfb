/**
 * The crash loop of crashloop.ts, short, for CI (bench/crashloop.ts runs it
 * long): the real executable under a mixed storm (creates, JSON and form-post
 * answers, cancels, short expiries, reads, webhooks to a flaky receiver on
 * 127.0.0.1), killed with SIGKILL at a random moment in each of 3 rounds and
 * restarted on the same database. After each kill: integrity_check and
 * foreign_key_check on the file, every acknowledged form, answer and cancel
 * present, every form in a legal state (through the file and through the
 * API); at the end every delivery of an answered form with a callback
 * arrives. The logic is the bench's own (runCrashloop); only the parameters
 * are smaller.
 *
 * The seed is random and printed; CRASH_SEED=<n> repeats its choices.
 */
import { afterAll, expect, test } from 'bun:test'
import { useBuiltBinary } from './binary.ts'
import { runCrashloop } from './crashloop.ts'
import { createBenchState, disposeBenchState } from './intake-child.ts'

const intake = useBuiltBinary('intake-crashloop-')
const state = createBenchState()
afterAll(() => disposeBenchState(state))

const ROUNDS = 3

test(`${ROUNDS} rounds of SIGKILL under a storm: nothing acknowledged is lost, every state is legal, the file is sound, every delivery arrives`, async () => {
  const seed = process.env.CRASH_SEED ? Number(process.env.CRASH_SEED) : Math.floor(Math.random() * 2 ** 31)
  const lines: string[] = []
  const report = await runCrashloop(state, {
    rounds: ROUNDS,
    seed,
    stormMinMs: 1500,
    stormMaxMs: 4000,
    workers: 8,
    thinkMaxMs: 8,
    burstShare: 0.7,
    failureRate: 0.3,
    hangRate: 0.05,
    webhookTimeoutSeconds: 1,
    // Two retries a second apart, then `failed` and redelivered: the end waits a second or two, not 5 or 25 s.
    webhookMaxRetries: 2,
    webhookRetrySchedule: '1s',
    deliveryGraceMs: 15_000,
    deliveryMaxWaitMs: 60_000,
    binary: intake.path,
    print: (line) => {
      lines.push(line)
      console.log(line)
    },
  })
  // Every violation, each with its round, the seed and the intake log lines naming it.
  expect(report.problems).toEqual([])
  // And the run did something worth checking.
  expect(report.rounds).toHaveLength(ROUNDS)
  expect(report.rounds.every((round) => round.counts.creates > 0)).toBe(true)
  expect(report.totals.answersJson).toBeGreaterThan(0)
  expect(report.totals.answersPost).toBeGreaterThan(0)
  expect(report.totals.cancels + report.totals.expiries).toBeGreaterThan(0)
  expect(report.deliveries.expected).toBeGreaterThan(0)
  expect(report.deliveries.arrived).toBe(report.deliveries.expected)
  expect(lines.at(-1)).toBe('verdict: no violation')
}, 120_000)
