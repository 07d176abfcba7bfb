/**
 * Several intake instances on one PostgreSQL database: 1, 2 and 3 instances
 * under the same load, and how soon a long-poll on one instance wakes for an
 * answer sent through another.
 *
 *   bun run build && BENCH_DATABASE_URL=postgres://intake@127.0.0.1:5432/intake bun run bench:instances
 *
 * `bun run bench` runs it too, after the PostgreSQL column, and writes its
 * tables into bench/results.md. Without BENCH_DATABASE_URL it is skipped
 * (scripts/postgres-cluster.sh start makes a throwaway server).
 *
 * It runs dist/intake as built (it never builds), on 127.0.0.1, rate limits
 * off, each instance on its own port logging its requests to a file. Each
 * count N gets a fresh database of its own (`intake_bench_<random>_n<N>`,
 * dropped at the end) and its N instances: the first starts alone (it makes
 * the schema and prints the key they all use), the others together. Beside
 * them, a control: 3 instances each on a database of its own (`..._apart_1`
 * to `_3`), sharing nothing. What 3 instances on one database lose against
 * the control is what coordinating through one database costs; what the
 * control loses against one instance is what the cores cost.
 *
 * All of them run side by side and take turns (1 2 3 control, then control
 * 3 2 1, ...), as bench/run.ts does with a baseline: this machine's speed
 * drifts by a third over tens of seconds, and one count measured a minute
 * after another would measure that drift. The load is the same for each: one
 * wrk process per instance, all started together, one thread each, 32
 * connections in all (32; 16 + 16; 11 + 11 + 10), the processes' requests
 * summed; per route a warm-up, then rounds making up BENCH_INSTANCES_SECONDS:
 *   - reads: GET /api/v1/forms/<id>, one form, with the key;
 *   - creates: POST /api/v1/forms;
 *   - submissions: POST /f/<id> with JSON answers, every request answering a
 *     form created beforehand and never answered (each wrk its own forms).
 * Over the rounds: the whole machine's busy cores, the instances', and the
 * transaction ids PostgreSQL handed out. Then, for each count on one
 * database with no other load, the wake: 200 forms, a few at a time, each
 * with a long-poll (`?wait=30`) held on instance i while the answer goes
 * through instance j ≠ i (every ordered pair in turn; with N = 1, both on
 * the one instance): answer sent → long-poll returned.
 *
 * It asserts no speed (on 2 cores shared by wrk, the instances and
 * PostgreSQL, more instances cannot be faster); it exits 1 when something is
 * wrong: a failed request, an answer not written, a long-poll that returned
 * early or with the wrong response, an instance that logged an error, wrote
 * to stderr or exited other than 0 on SIGTERM.
 *
 * Settings (env): BENCH_DATABASE_URL; BENCH_INSTANCES_SECONDS (seconds
 * measured per route and count, default 5).
 */

import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import {
  alive,
  type BenchState,
  type Child,
  fmt,
  machineLine,
  makeTempDir,
  pool,
  removeTempDir,
  startIntake,
  stopIntake,
  whenReady,
} from '../test/e2e/intake-child.ts'
import {
  BenchError,
  binaryPresent,
  clockTicksPerSecond,
  cpuTicks,
  createForms,
  exitCodeFor,
  log,
  markdownTable,
  percentile,
  runBench,
  sleep,
} from './lib.ts'
import { createBenchDatabases, redactUrl } from './pg.ts'
import {
  combineRounds,
  runWrk,
  type WrkResult,
  type WrkRun,
  writePerFormScript,
  writeStaticScript,
  wrkPresent,
} from './wrk.ts'

/** The instance counts measured on one database, in this order, and the control: as many on a database each. */
export const INSTANCE_COUNTS = [1, 2, 3]
const CONTROL_COUNT = 3
/** wrk connections in all, split over the instances: the same load whatever the count. */
const CONNECTIONS = 32
/** One thread per wrk process (see bench/run.ts's THREADS: on 2 cores, more take CPU from the servers). */
const THREADS = 1
const WARMUP_S = 1
/** At most this many rounds per route, the counts taking turns in each. */
const MAX_ROUNDS = 5
const WAKE_SAMPLES = 200
/** Long-polls waiting at once during the wake measure. */
const WAKE_IN_FLIGHT = 4
/** Lets a long-poll just sent reach its instance and start waiting before the answer goes. */
const WAKE_SETTLE_MS = 100
const WAIT_S = 30
/** CONTRACT 10: a long-poll on any instance answers within a second of a change made through another. */
export const WAKE_BOUND_MS = 1000
const ERROR_LINES_QUOTED = 3

/** A small form of three types; the answers fill all three. */
const FORM = {
  title: 'Several instances',
  fields: [
    { key: 'name', type: 'text', label: 'Your name', required: true },
    { key: 'guests', type: 'number', label: 'Guests', config: { min: 1, max: 8 } },
    { key: 'agree', type: 'checkbox', label: 'I can come', required: true },
  ],
  expires_in: '24h',
}
const CREATE_BODY = JSON.stringify(FORM)
const ANSWER_BODY = JSON.stringify({ name: 'Ada Lovelace', guests: 2, agree: true })
const JSON_TYPE = 'application/json'

/** The line printed (and written into bench/results.md) instead of the section. */
export const INSTANCES_SKIPPED =
  'Several instances on one PostgreSQL database: skipped, BENCH_DATABASE_URL is not set (scripts/postgres-cluster.sh start makes a throwaway server).'

/** Seconds measured per route and count: BENCH_INSTANCES_SECONDS, else 5. */
function measureSeconds(): number {
  const raw = process.env.BENCH_INSTANCES_SECONDS?.trim()
  if (!raw) return 5
  const n = Number(raw.replace(/s$/, ''))
  if (!Number.isInteger(n) || n < 1)
    throw new BenchError(`BENCH_INSTANCES_SECONDS=${raw}: expected a whole number of seconds >= 1`)
  return n
}

const plural = (count: number) => `${count} instance${count === 1 ? '' : 's'}`
const groupName = (count: number, apart: boolean) => `${plural(count)}${apart ? ', a database each' : ''}`

/** `total` connections over `count` wrk processes, the first ones taking what does not divide: 11 + 11 + 10. */
const splitConnections = (count: number, total = CONNECTIONS) =>
  Array.from({ length: count }, (_, k) => Math.floor(total / count) + (k < total % count ? 1 : 0))

/** The order of `count` things in round `i`: as given on even rounds, reversed on odd ones (bench/run.ts's turns). */
const turn = (count: number, i: number) => {
  const order = Array.from({ length: count }, (_, k) => k)
  return i % 2 === 0 ? order : order.reverse()
}

/** (instance waited on, instance answered through) for each sample in turn: every ordered pair of two instances, or (0, 0) alone. */
function wakePairs(count: number): [number, number][] {
  if (count === 1) return [[0, 0]]
  const pairs: [number, number][] = []
  for (let i = 0; i < count; i++) for (let j = 0; j < count; j++) if (i !== j) pairs.push([i, j])
  return pairs
}

/** Busy and total clock ticks of every core since boot (/proc/stat's first line; idle and iowait are not busy). */
function machineTicks(): { busy: number; total: number } {
  const [user, nice, system, idle, iowait, ...rest] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map(Number)
  const busy = user! + nice! + system! + rest.reduce((a, b) => a + b, 0)
  return { busy, total: busy + idle! + iowait! }
}

/** Status > 399 (a submission that found no unanswered form left gets a 404, so it is one of them) and socket errors. */
const failures = (r: WrkResult) =>
  r.badStatus + r.socketErrors.connect + r.socketErrors.read + r.socketErrors.write + r.socketErrors.timeout
/** Requests wrk counted as answered with 2xx or 3xx. */
const answeredWell = (r: WrkResult) => r.requests - r.badStatus

// ---------------------------------------------------------------------------
// The figures

/** Where the machine's CPU went during a route's measured runs, and what PostgreSQL committed. */
export interface Usage {
  /** Cores busy on the whole machine (/proc/stat): wrk, the instances, PostgreSQL, and anything else running. */
  machineCores: number
  /** Cores the instances used, together. */
  intakeCores: number
  /** Transaction ids PostgreSQL handed out per request: writing transactions per write, below 1 when writes are committed together. */
  xidsPerRequest: number
}

/** A route on one count of instances: all its rounds as one result, each instance's share, and the CPU it took. */
export interface Measured {
  all: WrkResult
  /** Requests per second of each instance's wrk (the mean of its rounds), in instance order. */
  each: number[]
  usage: Usage
}

/** What one count of instances gave. */
export interface InstancesRun {
  count: number
  /** The control: each instance on a database of its own (no wake measured). */
  apart: boolean
  reads: Measured
  creates: Measured
  submissions: Measured
  /** Responses the database gained during the measured submissions. */
  responsesWritten: number
  /** Answer sent → long-poll returned, sorted, ms. */
  wake: number[]
  /** Answer sent → its 201, sorted, ms (the part of the wake that is the answer's own commit). */
  receipt: number[]
  /** One line per instance: requests logged by status, error and warning lines. */
  logs: string[]
}

export interface InstancesFigures {
  server: string
  serverVersion: string
  synchronousCommit: string
  version: string
  rounds: number
  roundSeconds: number
  runs: InstancesRun[]
  /** The whole section, s. */
  elapsed: number
  /** What went wrong (empty when all is well): the figures are not to be trusted if any. */
  problems: string[]
}

// ---------------------------------------------------------------------------
// The instances

/** A database of a group, and what its first instance made on it. */
interface Database {
  look: DatabaseLook
  /** The key its first instance printed, which the others on it start with. */
  key: string
  /** The form every read on it asks for. */
  readFormId: string
}

interface Instance {
  child: Child
  dir: string
  url: string
  label: string
  db: Database
  createScript: string
}

/** One count of instances, on one database or (the control) a database each, while the section runs. */
interface Group {
  count: number
  apart: boolean
  name: string
  instances: Instance[]
  databases: Database[]
  version: string
  responsesWritten: number
}

/** The instances of `g` on `db`. */
const usersOf = (g: Group, db: Database) => g.instances.filter((i) => i.db === db)

/** The sum of `f` over the databases of `g`. */
const sumOver = async (g: Group, f: (db: Database) => Promise<number>) =>
  (await Promise.all(g.databases.map(f))).reduce((a, b) => a + b, 0)

/**
 * `count` instances spread evenly over `databaseUrls`: on each, the first
 * alone (it makes the schema and prints the key), the others together with
 * that key.
 */
async function startGroup(
  state: BenchState,
  count: number,
  databaseUrls: string[],
  binary: string | undefined,
): Promise<Group> {
  const apart = databaseUrls.length > 1
  const g: Group = {
    count,
    apart,
    name: groupName(count, apart),
    instances: [],
    databases: [],
    version: '',
    responsesWritten: 0,
  }
  const perDatabase = count / databaseUrls.length
  for (const [d, url] of databaseUrls.entries()) {
    const start = async (k: number, key?: string) => {
      const dir = makeTempDir(state, `instances-${count}${apart ? '-apart' : ''}-${k + 1}`)
      const child = startIntake(state, dir, {}, { logToFile: true, binary, databaseUrl: url })
      return { k, child, dir, ready: await whenReady(child, 60_000, key === undefined ? {} : { key }) }
    }
    const first = await start(d * perDatabase)
    const others = await Promise.all(
      Array.from({ length: perDatabase - 1 }, (_, j) => start(d * perDatabase + j + 1, first.ready.key)),
    )
    const key = first.ready.key
    const { ids } = await createForms({ url: first.ready.url, key, signal: state.abort.signal }, 1, 1, () => FORM)
    const db: Database = { look: databaseLook(url), key, readFormId: ids[0]! }
    g.databases.push(db)
    g.version = first.ready.version
    for (const started of [first, ...others]) {
      g.instances.push({
        child: started.child,
        dir: started.dir,
        url: started.ready.url,
        label: `instance ${started.k + 1} of ${count}${apart ? ' (a database each)' : ''}`,
        db,
        createScript: writeStaticScript(
          started.dir,
          'create',
          'POST',
          { Authorization: `Bearer ${key}`, 'Content-Type': JSON_TYPE },
          CREATE_BODY,
        ),
      })
    }
  }
  log(`${g.name}: ${g.instances.map((i) => i.url).join(', ')} on ${databaseUrls.map(redactUrl).join(', ')}`)
  return g
}

/** Throws, with its last lines other than requests, when an instance has exited. */
function ensureAlive(groups: Group[], during: string): void {
  for (const instance of groups.flatMap((g) => g.instances)) {
    if (alive(instance.child)) continue
    const last = instance.child.out.tail
      .split('\n')
      .filter((line) => line.trim() && !line.includes('"msg":"request"'))
      .slice(-5)
      .join('\n')
    throw new BenchError(
      `${instance.label} exited during ${during} (code ${instance.child.proc.exitCode}, signal ${instance.child.proc.signalCode}):\n${last}\n${instance.child.err.tail.trim()}`,
    )
  }
}

/**
 * What an instance's log says: requests by status, and its error and warning
 * lines (the first few errors quoted). Read once the instance has stopped.
 */
function readInstanceLog(instance: Instance): { summary: string; problems: string[] } {
  const statuses = new Map<number, number>()
  const errors: string[] = []
  let warnings = 0
  for (const line of readFileSync(join(instance.dir, 'intake.stdout.log'), 'utf8').split('\n')) {
    const status = /"msg":"request".*"status":(\d+)/.exec(line)?.[1]
    if (status !== undefined) statuses.set(Number(status), (statuses.get(Number(status)) ?? 0) + 1)
    if (line.includes('"level":"error"')) errors.push(line)
    else if (line.includes('"level":"warn"')) warnings++
  }
  const byStatus = [...statuses].sort(([a], [b]) => a - b)
  const requests = byStatus.reduce((sum, [, n]) => sum + n, 0)
  const problems = [
    ...byStatus
      .filter(([status]) => status > 399)
      .map(([status, n]) => `${instance.label} logged ${fmt(n)} responses with status ${status}`),
    ...errors.slice(0, ERROR_LINES_QUOTED).map((line) => `${instance.label} logged an error: ${line.slice(0, 600)}`),
    ...(errors.length > ERROR_LINES_QUOTED
      ? [`${instance.label} logged ${fmt(errors.length - ERROR_LINES_QUOTED)} more error lines`]
      : []),
  ]
  const stderr = instance.child.err.tail.trim()
  if (stderr) problems.push(`${instance.label} wrote to stderr: ${stderr.slice(-300)}`)
  const summary =
    `${instance.label}: ${fmt(requests)} requests logged (${byStatus.map(([status, n]) => `${status} × ${fmt(n)}`).join(', ') || 'none'}), ` +
    `${fmt(errors.length)} error lines${warnings > 0 ? `, ${fmt(warnings)} warnings` : ''}`
  return { summary, problems }
}

/** Reads of a group's database, one connection, never in the instances' way. */
function databaseLook(url: string) {
  const sql = new SQL({ url, max: 1 })
  const count = async (query: string) => Number(((await sql.unsafe(query)) as { n: string | number }[])[0]!.n)
  return {
    responses: () => count('SELECT count(*)::int8 AS n FROM responses'),
    unansweredCount: () => count(`SELECT count(*)::int8 AS n FROM forms WHERE status = 'active'`),
    unanswered: async () =>
      ((await sql`SELECT id FROM forms WHERE status = 'active' ORDER BY id`) as { id: string }[]).map((r) => r.id),
    /** The next transaction id, read without taking one (txid_current would). */
    nextXid: () => count('SELECT pg_snapshot_xmax(pg_current_snapshot())::text::int8 AS n'),
    close: () => sql.close(),
  }
}
type DatabaseLook = ReturnType<typeof databaseLook>

// ---------------------------------------------------------------------------
// Load

type Request = (instance: Instance, k: number) => Omit<WrkRun, 'threads' | 'connections' | 'seconds'>

/** One wrk process per instance, all started together, CONNECTIONS split over them; their requests summed. */
async function together(
  state: BenchState,
  instances: Instance[],
  seconds: number,
  request: Request,
): Promise<{ all: WrkResult; each: number[] }> {
  const connections = splitConnections(instances.length)
  const runs = await Promise.all(
    instances.map((instance, k) =>
      runWrk(state, { ...request(instance, k), threads: THREADS, connections: connections[k]!, seconds }),
    ),
  )
  // combineRounds adds the failures and takes the worst p99; the runs overlapped, so the rate is the sum of theirs.
  const each = runs.map((r) => r.requestsPerSecond)
  return {
    all: {
      ...combineRounds(runs),
      requestsPerSecond: each.reduce((a, b) => a + b, 0),
      seconds: Math.max(...runs.map((r) => r.seconds)),
    },
    each,
  }
}

/** A route as the section runs it: what each run sends, made afresh for every run (a submission's forms are used once). */
interface Route {
  name: string
  /** `run` is 'warm-up' or the round's number. `done` is called after the run with wrk's count of requests answered 2xx or 3xx. */
  prepare(g: Group, run: 'warm-up' | number): Promise<{ request: Request; done?: (answered: number) => Promise<void> }>
  /** Between the warm-ups and the rounds, with the warm-up's rate. */
  afterWarmUp?(g: Group, warmUpRate: number): Promise<void>
}

interface Schedule {
  rounds: number
  roundSeconds: number
}

/**
 * A route on every group: a warm-up each, then `rounds` rounds, the groups
 * taking turns in each; the figures of each group's rounds as one.
 */
async function inTurns(
  state: BenchState,
  groups: Group[],
  route: Route,
  schedule: Schedule,
  problems: string[],
): Promise<Measured[]> {
  const check = (g: Group, what: string, r: WrkResult) => {
    const where = `${g.name}, ${what}`
    if (r.badStatus > 0) problems.push(`${where}: ${fmt(r.badStatus)} responses with a status > 399`)
    if (r.exhausted > 0)
      problems.push(`${where}: ${fmt(r.exhausted)} requests found no unanswered form left (too few forms made)`)
    const sockets = failures(r) - r.badStatus
    if (sockets > 0) problems.push(`${where}: socket errors ${JSON.stringify(r.socketErrors)}`)
  }
  for (const g of groups) {
    const { request, done } = await route.prepare(g, 'warm-up')
    const warm = await together(state, g.instances, WARMUP_S, request)
    await done?.(answeredWell(warm.all))
    check(g, `${route.name} warm-up`, warm.all)
    await route.afterWarmUp?.(g, warm.all.requestsPerSecond)
  }
  const ticksPerSecond = clockTicksPerSecond()
  const intakeTicks = (g: Group) => g.instances.reduce((sum, i) => sum + cpuTicks(i.child.proc.pid), 0)
  const sums = groups.map(() => ({
    runs: [] as { all: WrkResult; each: number[] }[],
    machineBusy: 0,
    machineTotal: 0,
    intakeTicks: 0,
    ms: 0,
    xids: 0,
  }))
  for (let round = 0; round < schedule.rounds; round++) {
    for (const k of turn(groups.length, round)) {
      const g = groups[k]!
      const sum = sums[k]!
      const { request, done } = await route.prepare(g, round)
      // Transaction ids are the cluster's: any database of it tells.
      const look = g.databases[0]!.look
      const [machine0, intake0, xid0, t0] = [machineTicks(), intakeTicks(g), await look.nextXid(), performance.now()]
      const run = await together(state, g.instances, schedule.roundSeconds, request)
      const [machine1, intake1, xid1, t1] = [machineTicks(), intakeTicks(g), await look.nextXid(), performance.now()]
      ensureAlive(groups, route.name)
      await done?.(answeredWell(run.all))
      sum.runs.push(run)
      sum.machineBusy += machine1.busy - machine0.busy
      sum.machineTotal += machine1.total - machine0.total
      sum.intakeTicks += intake1 - intake0
      sum.ms += t1 - t0
      sum.xids += xid1 - xid0
    }
  }
  return groups.map((g, k) => {
    const sum = sums[k]!
    const all = combineRounds(sum.runs.map((r) => r.all))
    check(g, route.name, all)
    const measured = {
      all,
      each: g.instances.map((_, i) => sum.runs.reduce((total, r) => total + r.each[i]!, 0) / sum.runs.length),
      usage: {
        machineCores: (sum.machineBusy / sum.machineTotal) * navigator.hardwareConcurrency,
        intakeCores: sum.intakeTicks / ticksPerSecond / (sum.ms / 1000),
        xidsPerRequest: sum.xids / all.requests,
      },
    }
    log(
      `  ${route.name}, ${g.name}: ${fmt(all.requestsPerSecond)} req/s (${measured.each.map((n) => fmt(n)).join(' + ')}), ` +
        `p50 ${fmt(all.p50Ms, 2)} ms, p99 ${fmt(all.p99Ms, 1)} ms${failures(all) ? `, ${fmt(failures(all))} failed` : ''}; ` +
        `machine ${fmt(measured.usage.machineCores, 2)} cores busy, instances ${fmt(measured.usage.intakeCores, 2)}; ${fmt(measured.usage.xidsPerRequest, 2)} xids per request`,
    )
    return measured
  })
}

/** Submissions: each run answers forms never answered, each wrk its own; before the rounds, forms enough for them all. */
function submissionRoute(
  state: BenchState,
  schedule: Schedule,
  createRates: Map<Group, number>,
  problems: string[],
): Route {
  return {
    name: 'POST /f/<id> (JSON)',
    async prepare(g, run) {
      const scripts = new Map<Instance, string>()
      for (const db of g.databases) {
        const users = usersOf(g, db)
        let ids = await db.look.unanswered()
        // The warm-up answers no more than it can (about three times the create rate's worth): the rest are for the rounds.
        if (run === 'warm-up')
          ids = ids.slice(0, Math.ceil((Math.max(createRates.get(g)!, 1000) * WARMUP_S * 3 * users.length) / g.count))
        users.forEach((instance, k) => {
          const idsFile = join(instance.dir, `submit-${run}.ids`)
          writeFileSync(idsFile, `${ids.filter((_, n) => n % users.length === k).join('\n')}\n`)
          scripts.set(
            instance,
            writePerFormScript(
              instance.dir,
              `submit-${run}`,
              idsFile,
              THREADS,
              { 'Content-Type': JSON_TYPE },
              ANSWER_BODY,
            ),
          )
        })
      }
      const responsesBefore = await sumOver(g, (db) => db.look.responses())
      return {
        request: (instance) => ({ url: instance.url, script: scripts.get(instance) }),
        async done(answered) {
          const written = (await sumOver(g, (db) => db.look.responses())) - responsesBefore
          if (run !== 'warm-up') g.responsesWritten += written
          if (written < answered)
            problems.push(
              `${g.name}, POST /f/<id> (${run === 'warm-up' ? 'warm-up' : `round ${run + 1}`}): wrk counted ${fmt(answered)} good answers, ${fmt(written)} responses were written`,
            )
        },
      }
    },
    async afterWarmUp(g, warmUpRate) {
      // Half as much again as the faster of creates and the warm-up would answer, and 100 per connection; each database its share.
      const needed =
        Math.ceil(Math.max(warmUpRate, createRates.get(g)!) * schedule.rounds * schedule.roundSeconds * 1.5) +
        100 * CONNECTIONS
      await Promise.all(
        g.databases.map(async (db) => {
          const users = usersOf(g, db)
          const share = Math.ceil((needed * users.length) / g.count)
          const left = await db.look.unansweredCount()
          if (left >= share) return
          log(
            `  ${g.name}: ${fmt(left)} unanswered forms on a database, creating ${fmt(share - left)} more for the submissions...`,
          )
          const topUp = await runWrk(
            state,
            {
              url: `${users[0]!.url}/api/v1/forms`,
              script: users[0]!.createScript,
              threads: THREADS,
              connections: CONNECTIONS,
              seconds: 120,
            },
            async () => (await db.look.unansweredCount()) >= share,
            250,
          )
          if (failures(topUp) > 0)
            problems.push(`${g.name}, creates for the submissions: ${fmt(failures(topUp))} failed`)
        }),
      )
    },
  }
}

/**
 * For each form: a long-poll on one instance, then (once it waits) the answer
 * through another; answer sent → long-poll returned. WAKE_IN_FLIGHT at a time.
 */
async function measureWake(state: BenchState, g: Group) {
  const { instances } = g
  const pairs = wakePairs(instances.length)
  const { key } = g.databases[0]!
  const { ids: formIds } = await createForms(
    { url: instances[0]!.url, key, signal: state.abort.signal },
    WAKE_SAMPLES,
    8,
    () => FORM,
  )
  const wake: number[] = []
  const receipt: number[] = []
  const problems: string[] = []
  const signal = state.abort.signal
  await pool(formIds.length, WAKE_IN_FLIGHT, async (n) => {
    const formId = formIds[n]!
    const [waitOn, answerVia] = pairs[n % pairs.length]!
    const where = `${g.name}, wake: form ${n + 1}, waiting on instance ${waitOn + 1}, answered through instance ${answerVia + 1}`
    const polled = fetch(`${instances[waitOn]!.url}/api/v1/forms/${formId}/responses?wait=${WAIT_S}`, {
      headers: { Authorization: `Bearer ${key}` },
      signal,
    }).then(
      async (res) => ({ status: res.status, text: await res.text(), at: performance.now() }),
      (error: unknown) => ({
        status: 0,
        text: error instanceof Error ? error.message : String(error),
        at: performance.now(),
      }),
    )
    await sleep(WAKE_SETTLE_MS)
    const sentAt = performance.now()
    try {
      const res = await fetch(`${instances[answerVia]!.url}/f/${formId}`, {
        method: 'POST',
        headers: { 'Content-Type': JSON_TYPE },
        body: ANSWER_BODY,
        signal,
      })
      const text = await res.text()
      receipt.push(performance.now() - sentAt)
      if (res.status !== 201) problems.push(`${where}: the answer got ${res.status} ${text.slice(0, 200)}`)
    } catch (error) {
      problems.push(`${where}: the answer failed: ${error instanceof Error ? error.message : String(error)}`)
    }
    const poll = await polled
    let one: { form_id?: unknown } | undefined
    try {
      const body = JSON.parse(poll.text) as unknown
      if (Array.isArray(body) && body.length === 1) one = body[0] as { form_id?: unknown }
    } catch {
      // not JSON: wrong below
    }
    if (poll.at < sentAt)
      problems.push(
        `${where}: the long-poll returned before the answer was sent (${poll.status} ${poll.text.slice(0, 200)})`,
      )
    else if (poll.status !== 200 || one?.form_id !== formId)
      problems.push(`${where}: the long-poll returned ${poll.status} ${poll.text.slice(0, 200)}`)
    else wake.push(poll.at - sentAt)
  })
  wake.sort((a, b) => a - b)
  receipt.sort((a, b) => a - b)
  log(
    `  wake, ${g.name}${g.count > 1 ? ', across instances' : ''}: p50 ${fmt(percentile(wake, 50), 1)} ms, p99 ${fmt(percentile(wake, 99), 1)} ms, ` +
      `max ${fmt(wake.at(-1) ?? NaN, 1)} ms; answer → 201 p50 ${fmt(percentile(receipt, 50), 1)} ms`,
  )
  return { wake, receipt, problems }
}

// ---------------------------------------------------------------------------
// The section

/**
 * Every count of INSTANCE_COUNTS on a fresh database of `server`
 * (BENCH_DATABASE_URL), and the control on a database per instance; the
 * databases are dropped before it returns.
 */
export async function measureInstances(
  state: BenchState,
  server: string,
  options: { binary?: string } = {},
): Promise<InstancesFigures> {
  const t0 = performance.now()
  const seconds = measureSeconds()
  const rounds = Math.min(MAX_ROUNDS, seconds)
  const schedule = { rounds, roundSeconds: Math.floor(seconds / rounds) }
  const controlRoles = Array.from({ length: CONTROL_COUNT }, (_, k) => `apart_${k + 1}`)
  const databases = await createBenchDatabases(state, server, [...INSTANCE_COUNTS.map((n) => `n${n}`), ...controlRoles])
  const groups: Group[] = []
  try {
    const settings = new SQL({ url: databases.urls.n1!, max: 1 })
    const [row] =
      (await settings`SELECT current_setting('server_version') AS version, current_setting('synchronous_commit') AS sync`) as {
        version: string
        sync: string
      }[]
    await settings.close()
    log(
      `Several instances on one PostgreSQL database: ${INSTANCE_COUNTS.join(', ')} instances, and ${CONTROL_COUNT} on a database each, taking turns; ` +
        `per route a ${WARMUP_S} s warm-up and ${rounds} rounds of ${schedule.roundSeconds} s; wrk -t${THREADS}, ${CONNECTIONS} connections in all; ` +
        `PostgreSQL ${row!.version} at ${redactUrl(server)} (synchronous_commit ${row!.sync})`,
    )
    for (const count of INSTANCE_COUNTS)
      groups.push(await startGroup(state, count, [databases.urls[`n${count}`]!], options.binary))
    groups.push(
      await startGroup(
        state,
        CONTROL_COUNT,
        controlRoles.map((role) => databases.urls[role]!),
        options.binary,
      ),
    )

    const problems: string[] = []
    const reads = await inTurns(
      state,
      groups,
      {
        name: 'GET /api/v1/forms/<id>',
        prepare: async () => ({
          request: (i) => ({
            url: `${i.url}/api/v1/forms/${i.db.readFormId}`,
            headers: { Authorization: `Bearer ${i.db.key}` },
          }),
        }),
      },
      schedule,
      problems,
    )
    // Creates: the same body every time; the forms they make are the ones the submissions answer.
    const creates = await inTurns(
      state,
      groups,
      {
        name: 'POST /api/v1/forms',
        prepare: async () => ({ request: (i) => ({ url: `${i.url}/api/v1/forms`, script: i.createScript }) }),
      },
      schedule,
      problems,
    )
    const createRates = new Map(groups.map((g, k) => [g, creates[k]!.all.requestsPerSecond]))
    const submissions = await inTurns(
      state,
      groups,
      submissionRoute(state, schedule, createRates, problems),
      schedule,
      problems,
    )

    const runs: InstancesRun[] = []
    for (const [k, g] of groups.entries()) {
      // Forms made now, so that no submission above answered them; no other load meanwhile. The control shares nothing to wake across.
      const wake = g.apart ? { wake: [], receipt: [], problems: [] } : await measureWake(state, g)
      problems.push(...wake.problems)
      const logs: string[] = []
      for (const instance of g.instances) {
        const stopped = await stopIntake(instance.child)
        if (stopped.code !== 0) problems.push(`${instance.label} exited with code ${stopped.code} on SIGTERM`)
        const read = readInstanceLog(instance)
        logs.push(read.summary)
        problems.push(...read.problems)
        log(`  ${read.summary}; stopped in ${fmt(stopped.ms)} ms`)
        removeTempDir(state, instance.dir)
      }
      runs.push({
        count: g.count,
        apart: g.apart,
        reads: reads[k]!,
        creates: creates[k]!,
        submissions: submissions[k]!,
        responsesWritten: g.responsesWritten,
        wake: wake.wake,
        receipt: wake.receipt,
        logs,
      })
    }
    return {
      server: redactUrl(server),
      serverVersion: row!.version,
      synchronousCommit: row!.sync,
      version: groups[0]!.version,
      ...schedule,
      runs,
      elapsed: (performance.now() - t0) / 1000,
      problems,
    }
  } finally {
    for (const g of groups) {
      await Promise.all(g.databases.map((db) => db.look.close()))
      await Promise.all(g.instances.filter((i) => alive(i.child)).map((i) => stopIntake(i.child)))
    }
    await databases.drop()
  }
}

/** The section of bench/results.md: the counts side by side, ratios to one instance, the control, where the CPU went, and what limits them. */
export function renderInstances(f: InstancesFigures): string[] {
  const one = f.runs[0]!
  const shared = f.runs.find((r) => r.count === CONTROL_COUNT && !r.apart)!
  const control = f.runs.find((r) => r.apart)!
  const ms = (n: number) => (Number.isFinite(n) ? `${fmt(n, n < 10 ? 2 : 1)} ms` : 'n/a')
  const routes: [string, (r: InstancesRun) => Measured][] = [
    ['reads', (r) => r.reads],
    ['creates', (r) => r.creates],
    ['submissions', (r) => r.submissions],
  ]
  /** Each route's rate of `r` over that of `base`. */
  const ratios = (r: InstancesRun, base: InstancesRun) =>
    routes
      .map(([name, pick]) => `${name} ${fmt(pick(r).all.requestsPerSecond / pick(base).all.requestsPerSecond, 2)} ×`)
      .join(', ')
  const name = (r: InstancesRun) =>
    r.apart
      ? `${r.count}, a database each (control)`
      : `${r.count}${r.count === 1 ? ' (wake on the same instance)' : ''}`
  const rows = f.runs.map((r) => {
    const p99 = percentile(r.wake, 99)
    const failed =
      routes.reduce((sum, [, pick]) => sum + failures(pick(r).all), 0) + (r.apart ? 0 : WAKE_SAMPLES - r.wake.length)
    return [
      name(r),
      ...routes.map(
        ([, pick]) =>
          `${fmt(pick(r).all.requestsPerSecond)} (${fmt(pick(r).all.requestsPerSecond / pick(one).all.requestsPerSecond, 2)} ×)`,
      ),
      r.apart ? 'n/a: nothing shared' : `${ms(percentile(r.wake, 50))} / ${ms(p99)} / ${ms(r.wake.at(-1) ?? NaN)}`,
      r.apart ? '' : p99 <= WAKE_BOUND_MS ? '✓ pass' : '✗ miss',
      fmt(failed),
    ]
  })
  const usageRows = f.runs.flatMap((r) =>
    routes.map(([route, pick]) => {
      const m = pick(r)
      return [
        name(r).replace(/ \(wake.*\)$/, ''),
        route,
        `${fmt(m.all.requestsPerSecond)} (${m.each.map((n) => fmt(n)).join(' + ')})`,
        `${ms(m.all.p50Ms)} / ${ms(m.all.p99Ms)}`,
        fmt(m.usage.machineCores, 2),
        fmt(m.usage.intakeCores, 2),
        fmt(m.usage.xidsPerRequest, 2),
      ]
    }),
  )
  const cores = navigator.hardwareConcurrency
  return [
    '### Several instances on one PostgreSQL database',
    '',
    `PostgreSQL ${f.serverVersion} at ${f.server} (synchronous_commit ${f.synchronousCommit}); intake ${f.version}. ` +
      `Each count of instances on a fresh database of its own (the first instance starts alone and prints the key, the others start with it), rate limits off, each instance logging its requests to a file; ` +
      `and a control: ${CONTROL_COUNT} instances each on a database of its own, sharing nothing. ` +
      `The same load for every count: one wrk process per instance (-t${THREADS}), all started together, ${CONNECTIONS} connections in all ` +
      `(${INSTANCE_COUNTS.map((n) => splitConnections(n).join(' + ')).join('; ')}); req/s is the sum of the processes'. ` +
      `All ran side by side, each route a ${WARMUP_S} s warm-up then ${f.rounds} rounds of ${f.roundSeconds} s, taking turns in each (1 2 3 control, control 3 2 1, ...; the others idle meanwhile); ` +
      `req/s: all requests over all rounds; p50: the median round's; p99: the highest. ${fmt(f.elapsed)} s in all.`,
    '',
    ...markdownTable(
      [
        'instances',
        'reads/s `GET /api/v1/forms/<id>` (× 1)',
        'creates/s `POST /api/v1/forms` (× 1)',
        'submissions/s `POST /f/<id>` JSON (× 1)',
        `wake p50 / p99 / max, across instances (${WAKE_SAMPLES})`,
        `wake p99 ≤ ${fmt(WAKE_BOUND_MS)} ms (CONTRACT 10)`,
        'failed',
      ],
      rows,
    ),
    '',
    `The machine's limits: ${cores} cores shared by the load generator, the instances and PostgreSQL, so more instances are not expected to be faster, only not much slower. ` +
      'What several instances on one database add is coordination through it: every answer notified to every instance (one LISTEN connection each, with its heartbeats), ' +
      "and each instance's background loops claiming due deliveries and expired forms (FOR UPDATE SKIP LOCKED; these forms have no callback_url, so no delivery is made). " +
      'What any more processes add on these cores is their share of them (instances and wrk taking turns) and the load split thinner, each instance with fewer requests in flight to read and commit together. ' +
      `The control tells the two apart. ${CONTROL_COUNT} instances on one database against ${CONTROL_COUNT} on a database each: ${ratios(shared, control)}, ` +
      `the cost of the coordination. The control against one instance: ${ratios(control, one)}, the cost of ${CONTROL_COUNT} processes on ${cores} cores, shared database or not. ` +
      'No throughput target; the wake has the bound of CONTRACT 10: within a second.',
    '',
    ...markdownTable(
      [
        'instances',
        'route',
        'req/s (per instance)',
        'p50 / p99',
        `machine: cores busy of ${cores}`,
        'instances: cores',
        'PostgreSQL xids per request',
      ],
      usageRows,
    ),
    '',
    'Cores busy over the measured rounds: the whole machine from /proc/stat (wrk, the instances, PostgreSQL and anything else running), and the instances together from /proc/<pid>/stat. ' +
      'xids: transaction ids PostgreSQL handed out during the rounds, per request: writing transactions per write, below 1 when writes are committed together; reads take none.',
    `Wake: ${WAKE_SAMPLES} forms per count, ${WAKE_IN_FLIGHT} at a time, with no other load: a long-poll (\`GET /api/v1/forms/<id>/responses?wait=${WAIT_S}\`) on instance i, ` +
      `${WAKE_SETTLE_MS} ms for it to start waiting, then the answer through instance j ≠ i (every ordered pair in turn; with one instance, both on it); answer sent → long-poll returned. ` +
      `Answer sent → its 201, p50 / p99: ${f.runs
        .filter((r) => !r.apart)
        .map((r) => `${r.count}: ${ms(percentile(r.receipt, 50))} / ${ms(percentile(r.receipt, 99))}`)
        .join('; ')}.`,
    '"failed": status > 399 (a submission that found no unanswered form left among them), socket errors, and wake samples that failed. ' +
      `Responses written by the measured submissions: ${f.runs.map((r) => `${name(r).replace(/ \(wake.*\)$/, '')}: ${fmt(r.responsesWritten)}`).join('; ')}.`,
    `Logs: ${f.runs.flatMap((r) => r.logs).join('; ')}.`,
    '',
  ]
}

async function run(state: BenchState): Promise<number> {
  const server = process.env.BENCH_DATABASE_URL?.trim()
  if (!server) {
    log(INSTANCES_SKIPPED)
    return 0
  }
  if (!wrkPresent() || !binaryPresent()) return 1
  const f = await measureInstances(state, server)
  log('')
  for (const line of renderInstances(f)) log(line)
  log(`Machine: ${machineLine()}`)
  return exitCodeFor(f.problems)
}

if (import.meta.main) await runBench(run)
