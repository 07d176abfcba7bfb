/**
 * The event feed under big events (CONTRACT 12a, issue #25 finding 1): what
 * many concurrent reads of a feed of 1 MB events cost intake in memory, and
 * whether /healthz is still answered meanwhile.
 *
 *   bun run build && bun run bench:events-pages
 *
 * It runs dist/intake as built (it never builds), on a fresh SQLite database
 * in a temp dir, on 127.0.0.1 only, with rate limits off and the default
 * memory budget (SERVICE_UPLOAD_BUDGET, 256 MiB). Steps:
 *   1. start intake and fill one account's feed with EVENTS answers of about
 *      1 MB each (a form post of ten 100,000-character textareas);
 *   2. for LOAD_S seconds, at once:
 *      - FAST_READERS clients each following the whole feed with
 *        `GET /api/v1/events?limit=100`, `after` = the last `next`, over and
 *        over;
 *      - STALLED_READERS clients that send `GET /api/v1/events?limit=100`
 *        and read nothing (the socket paused), each holding its read open,
 *        then a new one every STALL_S seconds;
 *      - MCP_WAITERS clients each calling `wait_for_events` (limit 100,
 *        wait 5) over and over, following `next`;
 *      - a probe sending `GET /healthz` every PROBE_MS, timing each;
 *      and intake's RSS read every SAMPLE_MS (and VmHWM, its peak, at the end);
 *   3. stop intake with SIGTERM and print a Markdown table.
 *
 * What must hold (CONTRACT 12a and 13, not asserted here): RSS under 768 MiB,
 * no request holding the event loop 50 ms (the worst /healthz). It exits 1
 * only when something is wrong: a read that is neither a page nor a 503 with
 * Retry-After, a page over 1 MiB holding more than one event, an event seen
 * out of order by a reader.
 */
import { connect } from 'node:net'
import {
  type BenchState,
  fmt,
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
  exitCodeFor,
  log,
  logFigures,
  peakRssKiB,
  percentile,
  rssKiB,
  runBench,
  sleep,
} from './lib.ts'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 100)
const FAST_READERS = Number(process.env.BENCH_FAST_READERS ?? 8)
const STALLED_READERS = Number(process.env.BENCH_STALLED_READERS ?? 64)
const MCP_WAITERS = Number(process.env.BENCH_MCP_WAITERS ?? 8)
const LOAD_S = Number(process.env.BENCH_LOAD_S ?? 30)
const STALL_S = 10
const STALL_APART_MS = Number(process.env.BENCH_STALL_APART_MS ?? 5)
const PROBE_MS = 20
const SAMPLE_MS = 50
/** Reads made one at a time (an HTTP page, then a wait_for_events page) while /healthz is probed every 2 ms. */
const ALONE_READS = 20
const MiB = 1024 * 1024
const FIELDS = 10
const FIELD_CHARS = 100_000

const FORM = {
  title: 'A big answer',
  fields: Array.from({ length: FIELDS }, (_, i) => ({
    key: `t${i}`,
    type: 'textarea',
    label: `Part ${i}`,
    config: { max_length: FIELD_CHARS },
  })),
  expires_in: '1h',
}

interface Counts {
  pages: number
  bytes: number
  busy: number
  largestPage: number
}

/** Fills the feed: EVENTS forms, each answered with about 1 MB. */
async function fill(url: string, key: string, signal: AbortSignal): Promise<number> {
  let bytes = 0
  await pool(EVENTS, 4, async (i) => {
    const created = await fetch(`${url}/api/v1/forms`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(FORM),
      signal,
    })
    const form = (await created.json()) as { id?: string }
    if (created.status !== 201 || !form.id) throw new BenchError(`creating form ${i + 1}: ${created.status}`)
    const body = new FormData()
    for (let f = 0; f < FIELDS; f++) body.append(`t${f}`, String.fromCharCode(97 + ((i + f) % 26)).repeat(FIELD_CHARS))
    const res = await fetch(`${url}/f/${form.id}`, { method: 'POST', body, redirect: 'manual', signal })
    await res.arrayBuffer()
    if (res.status !== 303) throw new BenchError(`answering form ${i + 1}: ${res.status}`)
    bytes += FIELDS * FIELD_CHARS
  })
  return bytes
}

/** One page over HTTP; undefined when refused with 503 and Retry-After (counted). */
async function readPage(
  url: string,
  key: string,
  after: string | undefined,
  counts: Counts,
  problems: string[],
  signal: AbortSignal,
) {
  const res = await fetch(`${url}/api/v1/events?limit=100${after ? `&after=${after}` : ''}`, {
    headers: { authorization: `Bearer ${key}` },
    signal,
  })
  const text = await res.text()
  if (res.status === 503 && res.headers.get('retry-after')) {
    counts.busy++
    return undefined
  }
  if (res.status !== 200) {
    problems.push(`a feed read answered ${res.status} ${text.slice(0, 200)}`)
    return undefined
  }
  const page = JSON.parse(text) as { events: Array<{ id: string }>; next: string }
  const bytes = Buffer.byteLength(text)
  if (bytes > MiB && page.events.length > 1)
    problems.push(`a page of ${page.events.length} events holds ${bytes} bytes of JSON`)
  counts.pages++
  counts.bytes += bytes
  counts.largestPage = Math.max(counts.largestPage, bytes)
  return page
}

/** Follows the whole feed, again and again, until `until`; checks each pass saw every event once, in order. */
async function fastReader(
  url: string,
  key: string,
  until: number,
  counts: Counts,
  problems: string[],
  signal: AbortSignal,
) {
  while (performance.now() < until && !signal.aborted) {
    const ids: string[] = []
    let after: string | undefined
    for (;;) {
      if (performance.now() >= until) return
      const page = await readPage(url, key, after, counts, problems, signal)
      if (!page) {
        await sleep(1000)
        continue
      }
      if (page.events.length === 0) break
      ids.push(...page.events.map((event) => event.id))
      after = page.next
    }
    if (ids.length !== EVENTS || new Set(ids).size !== EVENTS)
      problems.push(`a reader following next saw ${ids.length} events (${new Set(ids).size} distinct) of ${EVENTS}`)
  }
}

/** Sends a feed read and reads nothing: the socket paused, so intake can send only what the kernel buffers take. */
function stalledRead(port: number, key: string): () => void {
  const socket = connect({ host: '127.0.0.1', port })
  socket.on('error', () => {})
  socket.on('connect', () => {
    socket.write(`GET /api/v1/events?limit=100 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n\r\n`)
    socket.pause()
  })
  return () => socket.destroy()
}

async function stalledReaders(port: number, key: string, until: number, signal: AbortSignal) {
  let held: Array<() => void> = []
  while (performance.now() < until && !signal.aborted) {
    for (const close of held) close()
    held = []
    for (let i = 0; i < STALLED_READERS; i++) {
      held.push(stalledRead(port, key))
      // Apart, each read reads its own page (reads begun in one turn share theirs).
      if (STALL_APART_MS > 0) await sleep(STALL_APART_MS)
    }
    await sleep(Math.min(STALL_S * 1000, Math.max(0, until - performance.now())))
  }
  for (const close of held) close()
}

/** One wait_for_events call (limit 100, wait 5): its page, 'busy' when refused for memory (counted), undefined when it failed. */
async function mcpCall(
  url: string,
  key: string,
  after: string | undefined,
  counts: Counts,
  problems: string[],
  signal: AbortSignal,
) {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'wait_for_events', arguments: { limit: 100, wait: 5, ...(after ? { after } : {}) } },
    }),
    signal,
  })
  const text = await res.text()
  if (res.status !== 200) {
    problems.push(`wait_for_events answered HTTP ${res.status} ${text.slice(0, 200)}`)
    return undefined
  }
  const result = (
    JSON.parse(text) as {
      result?: {
        isError?: boolean
        structuredContent?: { events: unknown[]; next: string }
        content?: Array<{ text: string }>
      }
    }
  ).result
  if (result?.isError) {
    if (!result.content?.[0]?.text.includes('try again'))
      problems.push(`wait_for_events failed: ${result.content?.[0]?.text}`)
    counts.busy++
    return 'busy' as const
  }
  const page = result?.structuredContent
  if (!page) {
    problems.push(`wait_for_events answered ${text.slice(0, 200)}`)
    return undefined
  }
  const bytes = Buffer.byteLength(JSON.stringify(page))
  if (bytes > MiB && page.events.length > 1)
    problems.push(`a wait_for_events page of ${page.events.length} events holds ${bytes} bytes of JSON`)
  counts.pages++
  counts.bytes += bytes
  counts.largestPage = Math.max(counts.largestPage, bytes)
  return page
}

async function mcpWaiter(
  url: string,
  key: string,
  until: number,
  counts: Counts,
  problems: string[],
  signal: AbortSignal,
) {
  let after: string | undefined
  while (performance.now() < until && !signal.aborted) {
    const page = await mcpCall(url, key, after, counts, problems, signal)
    if (page === undefined) return
    if (page === 'busy') {
      await sleep(1000)
      continue
    }
    // Round and round: from the start again once at the end.
    after = page.events.length === 0 ? undefined : page.next
  }
}

async function probe(url: string, until: () => boolean, latencies: number[], signal: AbortSignal, everyMs = PROBE_MS) {
  while (!until() && !signal.aborted) {
    const sent = performance.now()
    try {
      const res = await fetch(`${url}/healthz`, { signal })
      await res.arrayBuffer()
      latencies.push(performance.now() - sent)
    } catch {
      latencies.push(Infinity)
    }
    await sleep(Math.max(0, everyMs - (performance.now() - sent)))
  }
}

async function run(state: BenchState): Promise<number> {
  if (!binaryPresent()) return 1
  const problems: string[] = []
  const dir = makeTempDir(state, 'events-pages')
  const child = startIntake(state, dir)
  const pid = child.proc.pid
  const { url, port, key, version } = await whenReady(child)
  const signal = state.abort.signal
  log(
    `intake ${version} (pid ${pid}) on ${url}; filling the feed with ${EVENTS} events of about ${fmt((FIELDS * FIELD_CHARS) / 1e6, 1)} MB...`,
  )
  const filled = await fill(url, key, signal)
  await sleep(1000)
  const idleRss = rssKiB(pid)
  log(
    `filled (${fmt(filled / MiB, 1)} MiB of answers); RSS ${fmt(idleRss / 1024, 1)} MiB. ${LOAD_S} s of ${FAST_READERS} readers following the feed, ${STALLED_READERS} reads left unread, ${MCP_WAITERS} MCP waiters...`,
  )

  // Each read alone, /healthz probed meanwhile: how long one read holds the event loop.
  const alone: number[] = []
  let aloneDone = false
  const aloneProbe = probe(url, () => aloneDone, alone, signal, 2)
  const aloneCounts: Counts = { pages: 0, bytes: 0, busy: 0, largestPage: 0 }
  for (let i = 0; i < ALONE_READS; i++) {
    await readPage(url, key, undefined, aloneCounts, problems, signal)
    await sleep(20)
    await mcpCall(url, key, undefined, aloneCounts, problems, signal)
    await sleep(20)
  }
  aloneDone = true
  await aloneProbe
  alone.sort((a, b) => a - b)

  const http: Counts = { pages: 0, bytes: 0, busy: 0, largestPage: 0 }
  const mcp: Counts = { pages: 0, bytes: 0, busy: 0, largestPage: 0 }
  const healthz: number[] = []
  let rssMax = 0
  const until = performance.now() + LOAD_S * 1000
  const sampler = setInterval(() => (rssMax = Math.max(rssMax, rssKiB(pid))), SAMPLE_MS)
  await Promise.all([
    ...Array.from({ length: FAST_READERS }, () => fastReader(url, key, until, http, problems, signal)),
    ...Array.from({ length: MCP_WAITERS }, () => mcpWaiter(url, key, until, mcp, problems, signal)),
    stalledReaders(port, key, until, signal),
    probe(url, () => performance.now() >= until, healthz, signal),
  ])
  clearInterval(sampler)
  const peak = peakRssKiB(pid)
  const after = rssKiB(pid)
  const stopped = await stopIntake(child)
  removeTempDir(state, dir)
  if (stopped.code !== 0) problems.push(`intake exited with code ${stopped.code} on SIGTERM`)

  healthz.sort((a, b) => a - b)
  const mib = (kib: number) => `${fmt(kib / 1024, 1)} MiB`
  logFigures(`Event feed of ${EVENTS} events of about 1 MB under concurrent reads, intake ${version}`, [
    [
      '/healthz latency while one read at a time is answered (HTTP, then MCP), p50 / worst',
      `${fmt(percentile(alone, 50), 1)} / ${fmt(alone.at(-1) ?? NaN, 1)} ms (${fmt(alone.length)} probes)`,
    ],
    ['RSS, filled and idle', mib(idleRss)],
    ['RSS, highest sampled under load / VmHWM (peak since start)', `${mib(rssMax)} / ${mib(peak)}`],
    ['RSS after the load', mib(after)],
    [
      '/healthz latency under load, p50 / p99 / worst',
      `${fmt(percentile(healthz, 50), 1)} / ${fmt(percentile(healthz, 99), 1)} / ${fmt(healthz.at(-1) ?? NaN, 1)} ms (${fmt(healthz.length)} probes)`,
    ],
    [
      'HTTP pages read (fast readers) / MiB / largest page',
      `${fmt(http.pages)} / ${fmt(http.bytes / MiB)} / ${fmt(http.largestPage)} bytes`,
    ],
    ['HTTP reads refused (503, Retry-After)', fmt(http.busy)],
    [
      'MCP wait_for_events answered / MiB / refused (busy)',
      `${fmt(mcp.pages)} / ${fmt(mcp.bytes / MiB)} / ${fmt(mcp.busy)}`,
    ],
  ])
  log('')
  log(
    `First ${ALONE_READS} pages of ${EVENTS === 0 ? 0 : 'up to 1 MiB'} over HTTP and as many by wait_for_events, one at a time, /healthz every 2 ms meanwhile: the longest one read holds the event loop. ` +
      `Then ${LOAD_S} s of load: ${FAST_READERS} clients followed the whole feed with GET /api/v1/events?limit=100 over and over; ${STALLED_READERS} more sent that read and read nothing (a paused socket), ` +
      `replaced every ${STALL_S} s; ${MCP_WAITERS} called wait_for_events (limit 100, wait 5) over and over; /healthz every ${PROBE_MS} ms. ` +
      `RSS is VmRSS sampled every ${SAMPLE_MS} ms, and VmHWM at the end. Default SERVICE_UPLOAD_BUDGET (256 MiB).`,
  )
  return exitCodeFor(problems)
}

if (import.meta.main) await runBench(run)
