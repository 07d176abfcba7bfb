/**
 * Soak: ten minutes of mixed load against dist/intake, watching for leaks and
 * drift. Not run in CI.
 *
 *   bun run build && bun run bench:soak
 *   SOAK_SECONDS=60 bun run bench:soak
 *
 * It runs dist/intake as built (it never builds), on a fresh database in a
 * temp dir, 127.0.0.1 only, rate limits off, its request log to a file. From
 * this process, over loopback:
 *   - SOAK_WORKERS loops (8) of creates (half with a callback_url to a
 *     receiver this process runs, answering 204), reads (a form, its page,
 *     its responses), answers (JSON and form posts, each form answered once)
 *     and list pages (up to three, following Link: rel="next");
 *   - SOAK_POLLERS loops (4) of long-polls: create a form, wait=1..5 on its
 *     responses, and in half of them answer it during the wait: the poll must
 *     come back with that answer (an empty one then is an error);
 *   - the webhooks those answers cause, counted as the receiver gets them; at
 *     the end every answered form with a callback must have been delivered.
 * Every SOAK_INTERVAL_SECONDS (30) it prints intake's RSS (/proc/<pid>/status),
 * its open file descriptors (/proc/<pid>/fd), the requests per second of each
 * kind over the interval, the 4xx (expected: counted, not errors) and the
 * unexpected errors (a 5xx, a socket error, a wrong answer). At the end: a
 * Markdown table of the series, a verdict on flatness (RSS and fd counts,
 * first third against last third, from samples every 5 s) and steadiness
 * (throughput, the same thirds and every interval), and the machine line.
 *
 * Exit 1 on any unexpected error; the verdict on flatness and steadiness is
 * printed, not enforced (a judgement for the reader, with its figures).
 */
import { readdirSync } from 'node:fs'
import {
  type BenchState,
  fmt,
  machineLine,
  makeTempDir,
  startIntake,
  stopIntake,
  whenReady,
} from '../test/e2e/intake-child.ts'
import { BenchError, binaryPresent, log, rssKiB, runBench, sleep } from './lib.ts'

const envNumber = (name: string, fallback: number) => {
  const text = process.env[name]
  if (text === undefined || text === '') return fallback
  const n = Number(text)
  if (!Number.isFinite(n) || n <= 0) throw new BenchError(`${name}=${text} is not a positive number`)
  return n
}

const SECONDS = envNumber('SOAK_SECONDS', 600)
const INTERVAL_SECONDS = envNumber('SOAK_INTERVAL_SECONDS', 30)
const WORKERS = envNumber('SOAK_WORKERS', 8)
const POLLERS = envNumber('SOAK_POLLERS', 4)
/** Each worker pauses 0..THINK_MAX_MS between requests: load, not a flood that only measures the queue. */
const THINK_MAX_MS = envNumber('SOAK_THINK_MAX_MS', 20)
/** RSS and fds are also sampled this often, for the verdict. */
const SAMPLE_MS = 5000
/** Forms kept for reads and answers (the newest). */
const KEEP_FORMS = 5000
/** After the load stops, wait this long for the last webhooks. */
const DELIVERY_GRACE_MS = 15_000
/** The verdict's bounds. */
const RSS_FLAT_PCT = 10
const RSS_FLAT_MIB = 8
const FDS_FLAT = 3
const THROUGHPUT_STEADY_PCT = 15

const KINDS = ['create', 'read', 'answer', 'long-poll', 'list', 'webhook'] as const
type Kind = (typeof KINDS)[number]

const FIELDS = [
  { key: 'name', type: 'text', label: 'Name', required: true },
  { key: 'guests', type: 'number', label: 'Guests', config: { min: 1, max: 8 } },
  { key: 'menu', type: 'select', label: 'Menu', config: { options: ['fish', 'veg'] } },
  { key: 'agree', type: 'checkbox', label: 'Agree' },
]

interface Interval {
  /** Seconds since the load started, at the end of the interval. */
  t: number
  rssKiB: number
  fds: number
  perSecond: Record<Kind, number>
  total: number
  fourXX: number
  unexpected: number
}

const openFds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)

async function run(state: BenchState): Promise<number> {
  if (!binaryPresent()) return 1
  const signal = state.abort.signal

  // The receiver: every webhook answered 204, its form id noted.
  const delivered = new Set<string>()
  const deliveredForms = new Set<string>()
  const receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const body = await request.text()
      count('webhook')
      delivered.add(request.headers.get('x-service-delivery') ?? '')
      try {
        deliveredForms.add(String((JSON.parse(body) as { form_id?: string }).form_id))
      } catch {
        unexpected(`a webhook whose body is not JSON: ${body.slice(0, 200)}`)
      }
      return new Response(null, { status: 204 })
    },
  })
  const hookUrl = `http://127.0.0.1:${receiver.port}/hooks/soak`

  const dir = makeTempDir(state, 'soak')
  const child = startIntake(state, dir, { SERVICE_WEBHOOK_BLOCK_PRIVATE: 'false' }, { logToFile: true })
  const pid = child.proc.pid
  const { url, key, version } = await whenReady(child)
  log(`intake ${version} (pid ${pid}) on ${url}, database in ${dir}; receiver on ${hookUrl}`)
  log(
    `soak: ${fmt(SECONDS)} s, ${WORKERS} workers (think 0..${THINK_MAX_MS} ms) and ${POLLERS} long-poll loops, a line every ${INTERVAL_SECONDS} s`,
  )

  // Counters of the current interval.
  let done: Record<Kind, number> = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>
  let fourXX = 0
  let unexpectedNow = 0
  const unexpectedMessages: string[] = []
  let unexpectedTotal = 0
  let fourXXTotal = 0
  const fourXXByStatus = new Map<string, number>()
  function count(kind: Kind) {
    done[kind]++
  }
  function unexpected(message: string) {
    unexpectedNow++
    unexpectedTotal++
    if (unexpectedMessages.length < 50)
      unexpectedMessages.push(`t=${fmt((performance.now() - loadStart) / 1000, 1)} s: ${message}`)
  }

  const auth = { authorization: `Bearer ${key}` }
  let stopping = false

  /** One request; its reply (4xx counted as expected), or undefined after a socket error or 5xx (counted as unexpected). */
  async function call(
    kind: Kind,
    what: string,
    path: string,
    init: RequestInit = {},
  ): Promise<{ status: number; json: any; headers: Headers } | undefined> {
    let res: Response
    let text: string
    try {
      res = await fetch(`${url}${path}`, { redirect: 'manual', ...init, signal })
      text = await res.text()
    } catch (error) {
      if (signal.aborted) return undefined
      unexpected(`${what}: ${error instanceof Error ? error.message : String(error)}`)
      return undefined
    }
    if (res.status >= 500) {
      unexpected(`${what}: ${res.status} ${text.slice(0, 200)}`)
      return undefined
    }
    count(kind)
    if (res.status >= 400) {
      fourXX++
      fourXXTotal++
      const label = `${what.split(' ')[0]} ${res.status}`
      fourXXByStatus.set(label, (fourXXByStatus.get(label) ?? 0) + 1)
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: res.status, json, headers: res.headers }
  }

  // Forms: the newest, for reads; unanswered ones, for answers; answered ones with a callback, for the delivery check.
  const recent: string[] = []
  const unanswered: string[] = []
  const callbackForms = new Set<string>()
  const expectDelivery = new Set<string>()
  let seq = 0
  const pickFrom = (xs: string[]) => xs[Math.floor(Math.random() * xs.length)]

  async function create(kind: Kind = 'create'): Promise<string | undefined> {
    const n = ++seq
    const withCallback = n % 2 === 0
    const body = {
      title: `Soak form ${n}`,
      description: n % 3 === 0 ? 'Pick what suits you.' : null,
      fields: FIELDS,
      context: { n },
      ...(withCallback ? { callback_url: hookUrl, callback_metadata: { n } } : {}),
      expires_in: '1h',
    }
    const reply = await call(kind, 'create', '/api/v1/forms', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    if (!reply) return undefined
    if (reply.status !== 201 || typeof reply.json?.id !== 'string') {
      unexpected(`create: ${reply.status} ${JSON.stringify(reply.json).slice(0, 200)}`)
      return undefined
    }
    const id = reply.json.id as string
    if (withCallback) callbackForms.add(id)
    return id
  }

  async function answer(id: string, asJson: boolean, kind: Kind = 'answer'): Promise<boolean> {
    const guests = 1 + (seq % 8)
    const reply = asJson
      ? await call(kind, 'answer', `/f/${id}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Guest ${id.slice(-6)}`, guests, menu: 'veg', agree: true }),
        })
      : await call(kind, 'answer', `/f/${id}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            name: `Guest ${id.slice(-6)}`,
            guests: String(guests),
            menu: 'fish',
            agree: 'on',
          }).toString(),
        })
    if (!reply) return false
    const ok = asJson ? reply.status === 201 : reply.status === 303
    if (ok && callbackForms.has(id)) expectDelivery.add(id)
    if (!ok && reply.status < 400) unexpected(`answer to ${id}: ${reply.status}`)
    return ok
  }

  async function worker() {
    while (!stopping) {
      const r = Math.random()
      if (r < 0.2 || unanswered.length === 0) {
        const id = await create()
        if (id) {
          recent.push(id)
          unanswered.push(id)
          if (recent.length > KEEP_FORMS) recent.shift()
          if (unanswered.length > KEEP_FORMS) unanswered.shift()
        }
      } else if (r < 0.45) {
        const i = Math.floor(Math.random() * unanswered.length)
        const id = unanswered[i]!
        unanswered[i] = unanswered[unanswered.length - 1]!
        unanswered.pop()
        await answer(id, Math.random() < 0.6)
      } else if (r < 0.47) {
        // Expected 4xx, counted apart from errors: an answer to a form that has most likely been answered (409),
        // a form that does not exist (404).
        if (Math.random() < 0.5) await answer(pickFrom(recent)!, true)
        else await call('read', 'get-form', `/api/v1/forms/01ARZ3NDEKTSV4RRFFQ69G5FAV`, { headers: auth })
      } else if (r < 0.8) {
        const id = pickFrom(recent)!
        const which = Math.random()
        if (which < 0.4) await call('read', 'get-form', `/api/v1/forms/${id}`, { headers: auth })
        else if (which < 0.7) await call('read', 'page', `/f/${id}`)
        else await call('read', 'responses', `/api/v1/forms/${id}/responses`, { headers: auth })
      } else {
        // A list walk: up to three pages, following Link rel="next".
        let query = `limit=${10 + Math.floor(Math.random() * 41)}${Math.random() < 0.3 ? '&status=completed' : ''}`
        for (let page = 0; page < 3 && !stopping; page++) {
          const reply = await call('list', 'list', `/api/v1/forms?${query}`, { headers: auth })
          const next = /<[^>]*\?([^>]*)>;\s*rel="next"/.exec(reply?.headers.get('link') ?? '')
          if (!next) break
          query = next[1]!
        }
      }
      await sleep(Math.random() * THINK_MAX_MS)
    }
  }

  async function poller() {
    while (!stopping) {
      const id = await create('create')
      if (!id) {
        await sleep(100)
        continue
      }
      const wait = 1 + Math.floor(Math.random() * 5)
      const answerIt = Math.random() < 0.5
      const started = performance.now()
      const poll = call('long-poll', 'long-poll', `/api/v1/forms/${id}/responses?wait=${wait}`, { headers: auth })
      let answeredAt: number | undefined
      if (answerIt) {
        await sleep(100 + Math.random() * Math.max(0, wait * 1000 - 600))
        if (await answer(id, Math.random() < 0.5)) answeredAt = performance.now()
      }
      const reply = await poll
      if (!reply) continue
      const got = reply.json as unknown[]
      if (reply.status !== 200 || !Array.isArray(got)) {
        unexpected(`long-poll on ${id}: ${reply.status} ${JSON.stringify(reply.json).slice(0, 200)}`)
      } else if (got.length === 0 && answeredAt !== undefined && answeredAt < started + wait * 1000 - 300) {
        unexpected(
          `long-poll wait=${wait} on ${id} came back empty, although its answer was acknowledged ${fmt((answeredAt - started) / 1000, 2)} s into the wait`,
        )
      } else if (got.length === 1 && answeredAt === undefined && !answerIt) {
        unexpected(`long-poll on ${id} returned a response nobody sent`)
      }
      recent.push(id)
      if (recent.length > KEEP_FORMS) recent.shift()
    }
  }

  // Samples for the verdict, every 5 s; a line every interval.
  const samples: Array<{ t: number; rssKiB: number; fds: number }> = []
  const intervals: Interval[] = []
  const loadStart = performance.now()
  const take = () => samples.push({ t: (performance.now() - loadStart) / 1000, rssKiB: rssKiB(pid), fds: openFds(pid) })
  // Before any load: printed, kept out of the verdict (the first third is the load's, warm-up included).
  log(`before the load: RSS ${fmt(rssKiB(pid) / 1024, 1)} MiB, ${openFds(pid)} open fds`)
  log('')
  log(`| t (s) | RSS (MiB) | fds | ${KINDS.map((k) => `${k}/s`).join(' | ')} | total/s | 4xx | unexpected |`)
  log(`|---:|---:|---:|${KINDS.map(() => '---:').join('|')}|---:|---:|---:|`)

  const loops = [...Array.from({ length: WORKERS }, worker), ...Array.from({ length: POLLERS }, poller)]
  const sampler = setInterval(take, SAMPLE_MS)
  let intervalStart = performance.now()
  const row = (i: Interval) =>
    `| ${fmt(i.t)} | ${fmt(i.rssKiB / 1024, 1)} | ${i.fds} | ${KINDS.map((k) => fmt(i.perSecond[k], 1)).join(' | ')} | ${fmt(i.total, 1)} | ${i.fourXX} | ${i.unexpected} |`
  while (!signal.aborted) {
    const elapsed = (performance.now() - loadStart) / 1000
    if (elapsed >= SECONDS - 0.01) break
    await sleep(Math.min(INTERVAL_SECONDS, SECONDS - elapsed) * 1000)
    const now = performance.now()
    const seconds = (now - intervalStart) / 1000
    const perSecond = Object.fromEntries(KINDS.map((k) => [k, done[k] / seconds])) as Record<Kind, number>
    const interval: Interval = {
      t: (now - loadStart) / 1000,
      rssKiB: rssKiB(pid),
      fds: openFds(pid),
      perSecond,
      total: KINDS.filter((k) => k !== 'webhook').reduce((sum, k) => sum + perSecond[k], 0),
      fourXX,
      unexpected: unexpectedNow,
    }
    intervals.push(interval)
    log(row(interval))
    done = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>
    fourXX = 0
    unexpectedNow = 0
    intervalStart = now
  }
  clearInterval(sampler)
  take()
  stopping = true
  await Promise.all(loops)

  // Every answered form with a callback delivered.
  const deadline = performance.now() + DELIVERY_GRACE_MS
  while ([...expectDelivery].some((id) => !deliveredForms.has(id)) && performance.now() < deadline) await sleep(200)
  const undelivered = [...expectDelivery].filter((id) => !deliveredForms.has(id))
  for (const id of undelivered.slice(0, 20))
    unexpected(
      `form ${id} was answered (it has a callback) but no webhook arrived within ${DELIVERY_GRACE_MS / 1000} s of the load's end`,
    )
  if (undelivered.length > 20) unexpected(`... and ${undelivered.length - 20} more forms without their webhook`)

  const end = { rssKiB: rssKiB(pid), fds: openFds(pid) }
  const stopped = await stopIntake(child, 20_000)
  receiver.stop(true)
  if (stopped.code !== 0) unexpected(`intake stopped with SIGTERM exited with code ${stopped.code}`)

  // The series again, whole, then the verdict.
  log('')
  log(`## Soak: ${fmt(SECONDS)} s against intake ${version}`)
  log('')
  log(`| t (s) | RSS (MiB) | fds | ${KINDS.map((k) => `${k}/s`).join(' | ')} | total/s | 4xx | unexpected |`)
  log(`|---:|---:|---:|${KINDS.map(() => '---:').join('|')}|---:|---:|---:|`)
  for (const interval of intervals) log(row(interval))
  log('')

  const duration = samples.at(-1)!.t
  const firstThird = samples.filter((s) => s.t <= duration / 3)
  const lastThird = samples.filter((s) => s.t >= (2 * duration) / 3)
  const rssFirst = mean(firstThird.map((s) => s.rssKiB)) / 1024
  const rssLast = mean(lastThird.map((s) => s.rssKiB)) / 1024
  const fdsFirst = mean(firstThird.map((s) => s.fds))
  const fdsLast = mean(lastThird.map((s) => s.fds))
  const rssGrowth = rssLast - rssFirst
  const rssPct = (rssGrowth / rssFirst) * 100
  const rssFlat = rssGrowth <= Math.max(RSS_FLAT_MIB, (rssFirst * RSS_FLAT_PCT) / 100)
  const fdsFlat = fdsLast - fdsFirst <= FDS_FLAT

  const n = intervals.length
  const thirdOf = (from: number, to: number) =>
    intervals.slice(Math.floor(from), Math.max(Math.floor(from) + 1, Math.ceil(to)))
  const tpFirst = mean(thirdOf(0, n / 3).map((i) => i.total))
  const tpLast = mean(thirdOf((2 * n) / 3, n).map((i) => i.total))
  const tpChange = ((tpLast - tpFirst) / tpFirst) * 100
  const median = [...intervals.map((i) => i.total)].sort((a, b) => a - b)[Math.floor(n / 2)] ?? 0
  const worst = Math.max(...intervals.map((i) => Math.abs(i.total - median) / median)) * 100
  const steady = Math.abs(tpChange) <= THROUGHPUT_STEADY_PCT && worst <= 2 * THROUGHPUT_STEADY_PCT

  log(
    `Totals: ${fmt(seq)} forms created, ${fmt(expectDelivery.size)} answered with a callback, ${fmt(delivered.size)} webhooks delivered ` +
      `(${fmt(undelivered.length)} missing); 4xx (expected) ${fmt(fourXXTotal)}${fourXXByStatus.size ? ` (${[...fourXXByStatus].map(([k, v]) => `${k}: ${v}`).join(', ')})` : ''}; ` +
      `unexpected errors ${fmt(unexpectedTotal)}. At the end: RSS ${fmt(end.rssKiB / 1024, 1)} MiB, ${end.fds} fds; SIGTERM: exit ${stopped.code} in ${fmt(stopped.ms)} ms.`,
  )
  log(
    `Verdict: RSS ${fmt(rssFirst, 1)} MiB (first third) → ${fmt(rssLast, 1)} MiB (last third), ${rssGrowth >= 0 ? '+' : ''}${fmt(rssGrowth, 1)} MiB (${rssPct >= 0 ? '+' : ''}${fmt(rssPct, 1)} %): ` +
      `${rssFlat ? 'flat' : 'GROWING'}; fds ${fmt(fdsFirst, 1)} → ${fmt(fdsLast, 1)}: ${fdsFlat ? 'flat' : 'GROWING'}; ` +
      `throughput ${fmt(tpFirst)} → ${fmt(tpLast)} req/s (${tpChange >= 0 ? '+' : ''}${fmt(tpChange, 1)} %), every interval within ${fmt(worst, 1)} % of the median: ` +
      `${steady ? 'steady' : 'NOT STEADY'}; ${unexpectedTotal === 0 ? 'no unexpected error' : `${unexpectedTotal} UNEXPECTED ERROR(S)`}.`,
  )
  log(
    `(flat: RSS growth at most ${RSS_FLAT_MIB} MiB or ${RSS_FLAT_PCT} %, fds at most +${FDS_FLAT}, from samples every ${SAMPLE_MS / 1000} s; ` +
      `steady: last third within ${THROUGHPUT_STEADY_PCT} % of the first, every interval within ${2 * THROUGHPUT_STEADY_PCT} % of the median. ` +
      `The load generator shares the machine with intake.)`,
  )
  log(`Machine: ${machineLine()}`)
  if (unexpectedMessages.length > 0) {
    console.error('\nUnexpected errors:')
    for (const message of unexpectedMessages) console.error(`- ${message}`)
    if (unexpectedTotal > unexpectedMessages.length)
      console.error(`- ... and ${unexpectedTotal - unexpectedMessages.length} more`)
    return 1
  }
  return 0
}

if (import.meta.main) await runBench(run)
