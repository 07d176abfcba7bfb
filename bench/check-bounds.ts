/**
 * The timing, memory and throughput bounds of CONTRACT 10 and 13, judged in
 * one place (`bun test` asserts correctness only: a busy machine must not
 * fail it):
 *
 *   bun run check:bounds
 *
 * Runs the tests that measure them with INTAKE_FIGURES_FILE set (they report
 * each figure through test/figures.ts), prints every figure beside its limit,
 * and exits 1 when one is missed, when a bound was not measured at all, or
 * when a test failed. The built-binary tests build dist/intake themselves.
 * The PostgreSQL runs use INTAKE_TEST_DATABASE_URL, or a throwaway cluster
 * (scripts/postgres-cluster.sh) started and stopped here.
 *
 *   bun run check:bounds --figures-from FILE
 *
 * judges the figures a whole `bun test` already wrote to FILE (its
 * INTAKE_FIGURES_FILE, with PostgreSQL and Chromium required, as .ci/run
 * runs it) instead of running again the files that `bun test` ran as they
 * are; only the runs with settings of their own still run here.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Bound, Figure } from '../test/figures.ts'

const ROOT = resolve(import.meta.dir, '..')

/** Each bound's limit (a figure must stay below it) and where it comes from. */
const LIMITS: Record<Bound, { limit: number; source: string }> = {
  'event-loop stall, median of 5 (ms)': { limit: 50, source: 'CONTRACT 13' },
  'event-loop stall under a backlog (ms)': { limit: 2 * 50, source: 'CONTRACT 13, room for 100,000 rows read' },
  'first webhook attempt (ms)': { limit: 100, source: 'CONTRACT 13' },
  'first webhook attempt under a backlog (ms)': { limit: 2 * 100, source: 'CONTRACT 13, room for 100,000 rows read' },
  // Far above an idle loop's (under 1 %), far below one that keeps looking at refused deliveries (about 25 %).
  'resting loop CPU, share of one core': { limit: 0.1, source: 'a loose bound' },
  'wake across servers (ms)': { limit: 1000, source: 'CONTRACT 10' },
  'wake across instances (ms)': { limit: 1000, source: 'CONTRACT 10' },
  'wake by the poll, notification lost (ms)': { limit: 6500, source: 'the 5 s poll, and noticing the loss' },
  'wake by an expiry another server wrote (ms)': { limit: 2000, source: 'CONTRACT 10, and the sweep every second' },
  'revocation heard by another server (ms)': { limit: 1000, source: 'CONTRACT 10' },
  // 50 ms is the contract's; the probe's latency also carries the scheduling of a shared 2-core machine.
  '/healthz under attack, slowest (ms)': { limit: 50 + 100, source: 'CONTRACT 13, with room for scheduling' },
  'RSS under attack, peak (MiB)': { limit: 768, source: 'CONTRACT 13' },
  'slow bodies all cut after (s)': { limit: 35, source: "CONTRACT 13's 30 s window" },
  // The backlog is 1 MiB, the runtime settles in some 7 MB; lines kept whole would be 30 MiB.
  'RSS growth while stdout is blocked (MiB)': { limit: 32, source: 'CONTRACT 13' },
  // The heartbeat is every 250 ms.
  'keys version held once listening (ms)': { limit: 2000, source: 'CONTRACT 10' },
  'keys version changed, heard after (ms)': { limit: 1000, source: 'CONTRACT 10' },
}

interface Run {
  name: string
  files: string[]
  env?: Record<string, string>
  postgres?: boolean
  /** What the run must measure: a bound with no figure is a failure, not a pass. */
  measures: Bound[]
}

const RUNS: Run[] = [
  {
    name: 'in-process, SQLite',
    files: ['test/bounds-input.test.ts', 'test/webhooks-fairness.test.ts'],
    measures: [
      'event-loop stall, median of 5 (ms)',
      'event-loop stall under a backlog (ms)',
      'first webhook attempt (ms)',
      'first webhook attempt under a backlog (ms)',
      'resting loop CPU, share of one core',
    ],
  },
  {
    name: 'the built executable',
    files: ['test/e2e/bounds.test.ts', 'test/e2e/bounds-cpu.test.ts', 'test/e2e/stdout.test.ts'],
    measures: [
      '/healthz under attack, slowest (ms)',
      'RSS under attack, peak (MiB)',
      'slow bodies all cut after (s)',
      'RSS growth while stdout is blocked (MiB)',
    ],
  },
  {
    name: 'in-process, PostgreSQL',
    files: [
      'test/bounds-input.test.ts',
      'test/webhooks-fairness.test.ts',
      'test/instances.test.ts',
      'test/security-keys.test.ts',
    ],
    env: { INTAKE_TEST_STORE: 'postgres' },
    postgres: true,
    measures: [
      'event-loop stall, median of 5 (ms)',
      'first webhook attempt (ms)',
      'wake across servers (ms)',
      'wake by the poll, notification lost (ms)',
      'wake by an expiry another server wrote (ms)',
      'revocation heard by another server (ms)',
    ],
  },
  {
    name: 'PostgreSQL store and several executables',
    files: ['test/postgres-store.test.ts', 'test/e2e/instances.test.ts'],
    postgres: true,
    measures: [
      'keys version held once listening (ms)',
      'keys version changed, heard after (ms)',
      'wake across instances (ms)',
      'revocation heard by another server (ms)',
    ],
  },
]

async function startPostgres(): Promise<{ url: string; stop: () => Promise<void> }> {
  const given = process.env.INTAKE_TEST_DATABASE_URL
  if (given) return { url: given, stop: async () => {} }
  const start = Bun.spawn(['bash', 'scripts/postgres-cluster.sh', 'start'], { cwd: ROOT, stderr: 'inherit' })
  const url = (await new Response(start.stdout).text()).trim()
  if ((await start.exited) !== 0 || !url) throw new Error('scripts/postgres-cluster.sh start failed')
  return {
    url,
    stop: async () => {
      await Bun.spawn(['bash', 'scripts/postgres-cluster.sh', 'stop', url], { cwd: ROOT, stdout: 'inherit' }).exited
    },
  }
}

/** Runs one group of test files; returns whether every test passed. */
async function runTests(run: Run, figuresFile: string, databaseUrl: string | undefined): Promise<boolean> {
  console.log(`\n::: ${run.name}: bun test ${run.files.join(' ')}`)
  const env: Record<string, string | undefined> = { ...process.env, ...run.env, INTAKE_FIGURES_FILE: figuresFile }
  // A missing prerequisite fails instead of skipping: a skipped test measures nothing.
  if (run.postgres) Object.assign(env, { INTAKE_TEST_DATABASE_URL: databaseUrl, INTAKE_REQUIRE_POSTGRES: '1' })
  const proc = Bun.spawn(['bun', 'test', ...run.files.map((file) => `./${file}`)], {
    cwd: ROOT,
    env,
    stdout: 'inherit',
    stderr: 'inherit',
  })
  return (await proc.exited) === 0
}

function readFigures(file: string): Figure[] {
  try {
    return readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Figure)
  } catch {
    // No file: nothing was measured, which the caller reports.
    return []
  }
}

const problems: string[] = []
const rows: string[][] = []
function judge(name: string, measures: Bound[], figures: Figure[]) {
  for (const bound of measures)
    if (!figures.some((figure) => figure.bound === bound)) problems.push(`${name}: nothing measured "${bound}"`)
  for (const { bound, what, value } of figures) {
    const { limit, source } = LIMITS[bound]
    const met = value < limit
    if (!met) problems.push(`${name}: ${bound}: ${what}: ${value.toFixed(2)}, limit ${limit}`)
    rows.push([met ? 'ok' : 'MISSED', bound, `${value.toFixed(2)} < ${limit}`, `${what} (${name}; ${source})`])
  }
}

const fromFlag = process.argv.indexOf('--figures-from')
const figuresFrom = fromFlag === -1 ? undefined : process.argv[fromFlag + 1]
// The runs `bun test` made as they are (no settings of their own) need not run again.
const runsDone = figuresFrom === undefined ? [] : RUNS.filter((run) => run.env === undefined)
if (figuresFrom !== undefined) {
  judge(
    'bun test',
    runsDone.flatMap((run) => run.measures),
    readFigures(figuresFrom),
  )
}

const folder = mkdtempSync(join(tmpdir(), 'intake-bounds-'))
const startedAt = performance.now()
let postgres: Awaited<ReturnType<typeof startPostgres>> | undefined
try {
  for (const [i, run] of RUNS.entries()) {
    if (runsDone.includes(run)) continue
    if (run.postgres) postgres ??= await startPostgres()
    const file = join(folder, `figures-${i}.jsonl`)
    if (!(await runTests(run, file, postgres?.url))) problems.push(`${run.name}: a test failed (see above)`)
    judge(run.name, run.measures, readFigures(file))
  }
} finally {
  await postgres?.stop()
  rmSync(folder, { recursive: true, force: true })
}

console.log('\n::: figures and their limits')
for (const row of rows) console.log(row.join('  |  '))
console.log(`\n::: ${rows.length} figures in ${((performance.now() - startedAt) / 1000).toFixed(0)} s`)
if (problems.length > 0) {
  console.log(`::: ${problems.length} bound(s) missed or not measured:`)
  for (const problem of problems) console.log(`  ${problem}`)
  process.exit(1)
}
console.log('::: every bound met')
