/**
 * Rolling restarts of three intake instances on one PostgreSQL database,
 * under load, round after round (CONTRACT 10: "SIGTERM to one instance loses
 * nothing"). The scenario is test/e2e/instances.ts's `rollingRestart`, which
 * test/e2e/instances.test.ts runs for one round (INTAKE_INSTANCE_ROUNDS).
 *
 *   bun run build && bun bench/instances-rounds.ts
 *   BENCH_ROUNDS=50 BENCH_DATABASE_URL=postgres://intake@127.0.0.1:5432/intake bun bench/instances-rounds.ts
 *
 * It runs dist/intake as built (it never builds), three instances on
 * 127.0.0.1, rate limits off, on a fresh database (`intake_bench_<random>`,
 * dropped at the end) on BENCH_DATABASE_URL's server; without it, on a
 * throwaway cluster of its own (scripts/postgres-cluster.sh, removed at the
 * end). Eight clients create forms (with a callback_url to a receiver in
 * this process) and answer them through a round-robin balancer that sends a
 * request elsewhere only when it could not connect. Each round, every
 * instance in turn gets SIGTERM, must exit 0, and is started again on its
 * port before the next one goes. After each round it reads back every
 * create and answer acknowledged in the round, and waits for every
 * acknowledged answer's webhook.
 *
 * Per round it prints: operations acknowledged, lost (must be 0), webhooks
 * expected and arrived, duplicated deliveries, requests that got no answer
 * (and how many of those the server did nonetheless: must be 0), the stop
 * and start times; then a summary. It exits 1 when anything was lost, a
 * webhook never came, an instance exited other than 0, or a request was
 * refused or done without its answer. Duplicates are reported, not failed
 * (webhooks are at least once).
 *
 * Settings (env): BENCH_ROUNDS (20), BENCH_DATABASE_URL.
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { killAllChildren } from '../test/e2e/binary.ts'
import { describeRound, type RoundReport, rollingRestart } from '../test/e2e/instances.ts'
import { type BenchState, BINARY, fmt, makeTempDir } from '../test/e2e/intake-child.ts'
import { BenchError, binaryPresent, exitCodeFor, log, logFigures, PROJECT_ROOT, percentile, runBench } from './lib.ts'
import { createBenchDatabases, redactUrl } from './pg.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20)
const WORKERS = 8

/**
 * A PostgreSQL cluster of the bench's own on 127.0.0.1 (scripts/postgres-cluster.sh,
 * a state file of its own so that `stop` finds only it), removed on the way out.
 */
function throwawayCluster(state: BenchState): string {
  const script = join(PROJECT_ROOT, 'scripts', 'postgres-cluster.sh')
  const stateFile = `/var/tmp/intake-bench-instances-${process.pid}-${randomBytes(3).toString('hex')}`
  const env = { ...process.env, INTAKE_PG_STATE: stateFile }
  // initdb's many lines are shown only when the start fails.
  const started = spawnSync('bash', [script, 'start'], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  const url = started.stdout.trim()
  if (started.status !== 0 || !/^postgres:\/\//.test(url))
    throw new BenchError(`scripts/postgres-cluster.sh start failed (exit ${started.status}):\n${started.stderr}`)
  state.exitHooks.add(() => {
    spawnSync('bash', [script, 'stop', url], { env, stdio: ['ignore', 'ignore', 'inherit'] })
    // The state file stays, empty, as the script's lock: nothing else will use this one.
    rmSync(stateFile, { force: true })
    rmSync(`${stateFile}.lock`, { force: true })
  })
  return url
}

async function run(state: BenchState): Promise<number> {
  if (!binaryPresent()) return 1
  if (!Number.isInteger(ROUNDS) || ROUNDS < 1)
    throw new BenchError(`BENCH_ROUNDS must be a whole number from 1, got "${process.env.BENCH_ROUNDS}"`)
  const given = process.env.BENCH_DATABASE_URL?.trim()
  const server = given || throwawayCluster(state)
  const databases = await createBenchDatabases(state, server, ['instances'])
  log(
    `Rolling restarts: ${ROUNDS} round(s), 3 instances, ${WORKERS} clients, on ${redactUrl(databases.urls.instances!)}${given ? '' : ' (a throwaway cluster)'}`,
  )
  const started = performance.now()
  try {
    const report = await rollingRestart({
      binary: BINARY,
      databaseUrl: databases.urls.instances!,
      cwd: makeTempDir(state, 'instances'),
      rounds: ROUNDS,
      workers: WORKERS,
      pauseMs: 5,
      onRound: (round) => log(describeRound(round)),
    })
    const rounds = report.rounds
    const t = report.total
    const sorted = (pick: (r: RoundReport) => number[]) => rounds.flatMap(pick).sort((a, b) => a - b)
    const stops = sorted((r) => r.restarts.map((s) => s.stopMs))
    const starts = sorted((r) => r.restarts.map((s) => s.startMs))
    const roundMs = sorted((r) => [r.ms])
    const spread = (values: number[]) => `p50 ${fmt(percentile(values, 50))} ms, max ${fmt(values.at(-1) ?? NaN)} ms`
    logFigures(`Rolling restarts of 3 instances on one PostgreSQL database, ${rounds.length} round(s)`, [
      ['creates acknowledged', fmt(t.creates)],
      ['answers acknowledged', fmt(t.submissions)],
      ['acknowledged, not found when read back (must be 0)', fmt(t.lost.length)],
      ['webhooks expected / arrived', `${fmt(t.deliveries.expected)} / ${fmt(t.deliveries.arrived)}`],
      [
        'deliveries that arrived more than once',
        `${fmt(t.deliveries.duplicates)} (${fmt(t.deliveries.duplicateRequests)} extra requests)`,
      ],
      ['requests without an answer / of them done (must be 0)', `${fmt(t.unknown)} / ${fmt(t.doneUnanswered.length)}`],
      ['answers other than 201', JSON.stringify(t.refused)],
      ['requests sent elsewhere after a refused connect', fmt(t.connectRetries)],
      ['SIGTERM → exit', spread(stops)],
      ['start again → /healthz 200', spread(starts)],
      ['round (3 restarts and the checks)', spread(roundMs)],
      ['whole run', `${fmt((performance.now() - started) / 1000, 1)} s`],
    ])
    for (const example of report.examples) log(`  ${example}`)

    const problems: string[] = []
    for (const r of rounds) {
      for (const s of r.restarts)
        if (s.exitCode !== 0)
          problems.push(`round ${r.round}: instance ${s.instance} exited ${s.exitCode} after SIGTERM`)
      for (const line of r.lost) problems.push(`round ${r.round}: ${line}`)
      for (const id of r.deliveries.missing)
        problems.push(`round ${r.round}: the webhook of answer ${id} never arrived`)
      for (const line of r.doneUnanswered) problems.push(`round ${r.round}: ${line}`)
    }
    for (const line of t.lost) problems.push(`after the run: ${line}`)
    for (const id of t.deliveries.missing) problems.push(`after the run: the webhook of answer ${id} never arrived`)
    if (Object.keys(t.refused).length) problems.push(`answers other than 201: ${JSON.stringify(t.refused)}`)
    report.finalExitCodes.forEach(
      (code, i) => code !== 0 && problems.push(`instance ${i + 1} exited ${code} after the final SIGTERM`),
    )
    // The ledger's own lines say which, once each.
    return exitCodeFor([...new Set(problems)])
  } finally {
    await killAllChildren()
    await databases.drop()
  }
}

if (import.meta.main) await runBench(run)
