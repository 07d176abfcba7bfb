/**
 * What one throughput mechanism is worth: two intakes side by side, one with
 * it and one without, under the same wrk load, in alternating rounds
 * (A B, then B A, ...) so that a busy machine weighs on both alike. Each
 * figure is the median of the per-round ratios without/with.
 *
 *   bun bench/mechanisms.ts <with> <without> [rounds=5] [seconds=3]
 *
 * <with> and <without> are executables that take intake's arguments (a
 * dist/intake, or a script running `bun <tree>/src/main.ts "$@"`). With
 * BENCH_DATABASE_URL both run on PostgreSQL, each on a fresh database of its
 * own (dropped at the end); without it, on SQLite files in temp dirs.
 * Figures, requests per second: POST /api/v1/forms (creates), POST /f/<id>
 * with JSON (answers, each form once), the same as a page post with a 1 MiB
 * file (uploads), GET /api/v1/forms/<id> and GET /f/<id> (reads); choose with
 * BENCH_FIGURES (comma-separated). Prints one line per round and a table.
 */
import { Database } from 'bun:sqlite'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { type BenchState, fmt, makeTempDir, startIntake, whenReady } from '../test/e2e/intake-child.ts'
import { BenchError, log, markdownTable, percentile, runBench, sleep } from './lib.ts'
import { runWrk, type WrkResult, writePerFormScript, writeStaticScript } from './wrk.ts'

const [withBinary, withoutBinary, roundsArg = '5', secondsArg = '3'] = process.argv.slice(2)
const ROUNDS = Number(roundsArg)
const SECONDS = Number(secondsArg)
if (!withBinary || !withoutBinary || !(ROUNDS > 0) || !(SECONDS > 0)) {
  console.error('usage: bun bench/mechanisms.ts <with> <without> [rounds] [seconds]')
  process.exit(2)
}
const databaseUrl = process.env.BENCH_DATABASE_URL
const FIGURES = (process.env.BENCH_FIGURES ?? 'creates,answers,api-read,page-read').split(',')
const THREADS = 1
const CONNECTIONS = 32

const FORM = JSON.stringify({
  title: 'Book the team dinner',
  fields: [
    { key: 'name', type: 'text', label: 'Your name', required: true },
    { key: 'email', type: 'email', label: 'Email' },
    { key: 'guests', type: 'number', label: 'Guests', config: { min: 1, max: 8 } },
    { key: 'agree', type: 'checkbox', label: 'I can come on Friday', required: true },
  ],
  context: { thread: 'T-1234' },
  expires_in: '24h',
})
const ANSWER = JSON.stringify({ name: 'Ada Lovelace', email: 'ada@example.com', guests: 2, agree: true })
/** A page post with a 1 MiB file: two chunks, each stored in a transaction of its own before the answer. */
const UPLOAD_FORM = JSON.stringify({
  title: 'Send the scan',
  fields: [
    { key: 'name', type: 'text', label: 'Your name', required: true },
    { key: 'doc', type: 'file', label: 'Document', required: true },
  ],
  expires_in: '24h',
})
const BOUNDARY = 'mechanisms-bench-boundary'
const UPLOAD = [
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\nAda\r\n`,
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="doc"; filename="scan.txt"\r\nContent-Type: text/plain\r\n\r\n`,
  'x'.repeat(1024 * 1024),
  `\r\n--${BOUNDARY}--\r\n`,
].join('')
/** What an answering figure posts: forms of one kind (told by their title), each answered once. */
const ANSWERING = {
  answers: { form: FORM, title: 'Book the team dinner', type: 'application/json', body: ANSWER },
  uploads: {
    form: UPLOAD_FORM,
    title: 'Send the scan',
    type: `multipart/form-data; boundary=${BOUNDARY}`,
    body: UPLOAD,
  },
}

interface Side {
  label: string
  url: string
  dir: string
  auth: Record<string, string>
  readId: string
  unanswered(title: string): Promise<string[]>
  answersPerSecond: Record<keyof typeof ANSWERING, number>
}

async function start(state: BenchState, label: string, binary: string): Promise<Side> {
  const dir = makeTempDir(state, `mech-${label}`)
  let url: string | undefined
  if (databaseUrl) {
    const name = `intake_mech_${label}_${Math.random().toString(36).slice(2, 8)}`
    const admin = new SQL({ url: databaseUrl, max: 1 })
    await admin.unsafe(`CREATE DATABASE ${name}`)
    await admin.close()
    const dbUrl = new URL(databaseUrl)
    dbUrl.pathname = `/${name}`
    url = dbUrl.toString()
    state.exitHooks.add(() => {
      Bun.spawnSync(['psql', databaseUrl, '-c', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`], { stdout: 'ignore' })
    })
  }
  const child = startIntake(state, dir, {}, { binary, logToFile: true, databaseUrl: url })
  const ready = await whenReady(child, 60_000)
  const auth = { Authorization: `Bearer ${ready.key}` }
  const res = await fetch(`${ready.url}/api/v1/forms`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: FORM,
  })
  const readId = ((await res.json()) as { id: string }).id
  // Active forms of one kind, but the one the reads read.
  const activeIds = `SELECT id FROM forms WHERE status = 'active' AND title = $1 AND id <> '${readId}' ORDER BY id`
  let unanswered: (title: string) => Promise<string[]>
  if (url) {
    const view = new SQL({ url, max: 1 })
    unanswered = async (title) => ((await view.unsafe(activeIds, [title])) as { id: string }[]).map((r) => r.id)
  } else {
    const view = new Database(join(dir, 'intake.db'), { readonly: true })
    unanswered = async (title) =>
      (view.query(activeIds.replace('$1', '?')).all(title) as { id: string }[]).map((r) => r.id)
  }
  return { label, url: ready.url, dir, auth, readId, unanswered, answersPerSecond: { answers: 5000, uploads: 300 } }
}

function checked(route: string, side: Side, r: WrkResult): number {
  const failed = r.badStatus + r.exhausted + r.socketErrors.connect + r.socketErrors.read + r.socketErrors.write
  if (failed > 0) throw new BenchError(`${route} on ${side.label}: ${failed} failed requests\n${r.text}`)
  return r.requestsPerSecond
}

async function figure(state: BenchState, name: string, side: Side, round: number): Promise<number> {
  const base = { threads: THREADS, connections: CONNECTIONS, seconds: SECONDS }
  const json = { ...side.auth, 'Content-Type': 'application/json' }
  switch (name) {
    case 'creates': {
      const script = writeStaticScript(side.dir, 'create', 'POST', json, FORM)
      return checked(name, side, await runWrk(state, { ...base, url: `${side.url}/api/v1/forms`, script }))
    }
    case 'answers':
    case 'uploads': {
      const kind = ANSWERING[name]
      const needed = Math.ceil(side.answersPerSecond[name] * SECONDS * 3) + 1000
      const enough = async (goal: number) => (await side.unanswered(kind.title)).length >= goal
      while (!(await enough(needed))) {
        const script = writeStaticScript(side.dir, `create-${name}`, 'POST', json, kind.form)
        const run = { ...base, url: `${side.url}/api/v1/forms`, script, seconds: 60 }
        await runWrk(state, run, () => enough(needed + 1000), 500)
      }
      // Posts still in flight when the last run stopped may yet answer their forms: let them land first.
      await sleep(2000)
      const idsFile = join(side.dir, `${name}-${round}.ids`)
      writeFileSync(idsFile, `${(await side.unanswered(kind.title)).join('\n')}\n`)
      const headers = { 'Content-Type': kind.type }
      const script = writePerFormScript(side.dir, `${name}-${round}`, idsFile, THREADS, headers, kind.body)
      const rate = checked(name, side, await runWrk(state, { ...base, url: side.url, script }))
      side.answersPerSecond[name] = Math.max(side.answersPerSecond[name], rate)
      return rate
    }
    case 'api-read':
      return checked(
        name,
        side,
        await runWrk(state, { ...base, url: `${side.url}/api/v1/forms/${side.readId}`, headers: side.auth }),
      )
    case 'page-read':
      return checked(name, side, await runWrk(state, { ...base, url: `${side.url}/f/${side.readId}` }))
    default:
      throw new BenchError(`no figure named ${name}`)
  }
}

await runBench(async (state) => {
  log(`${databaseUrl ? 'PostgreSQL' : 'SQLite'}: ${ROUNDS} rounds of ${SECONDS} s, wrk -t${THREADS} -c${CONNECTIONS}`)
  const sides = [await start(state, 'with', withBinary), await start(state, 'without', withoutBinary)]
  const ratios = new Map<string, number[]>(FIGURES.map((f) => [f, []]))
  const rates = new Map<string, number[]>(FIGURES.flatMap((f) => sides.map((s) => [`${f} ${s.label}`, []])))
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of FIGURES) {
      const order = round % 2 === 0 ? sides : [...sides].reverse()
      const got: Record<string, number> = {}
      for (const side of order) got[side.label] = await figure(state, name, side, round)
      ratios.get(name)!.push(got.without! / got.with!)
      for (const side of sides) rates.get(`${name} ${side.label}`)!.push(got[side.label]!)
      log(
        `round ${round + 1} ${name}: with ${fmt(got.with!)}/s, without ${fmt(got.without!)}/s, ${fmt(got.without! / got.with!, 2)} ×`,
      )
    }
  }
  const median = (values: number[]) =>
    percentile(
      [...values].sort((a, b) => a - b),
      50,
    )
  const rows = FIGURES.map((name) => {
    const r = [...ratios.get(name)!].sort((a, b) => a - b)
    return [
      name,
      fmt(median(rates.get(`${name} with`)!)),
      fmt(median(rates.get(`${name} without`)!)),
      `${fmt(median(r), 2)} × (rounds ${fmt(r[0]!, 2)}-${fmt(r.at(-1)!, 2)})`,
    ]
  })
  for (const line of markdownTable(['figure (req/s)', 'with', 'without', 'without/with, median'], rows)) log(line)
  return 0
})
