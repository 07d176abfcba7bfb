/**
 * Time-zone memory (issue 25, finding 2): what forms whose `page.time_zone`
 * differ only in case cost the server once their pages are read.
 *
 *   bun run build && bun bench/time-zones.ts
 *   BENCH_BASELINE=$(bench/baseline.sh REV) bun bench/time-zones.ts   # the same against another build
 *
 * It runs dist/intake as built (it never builds), on a fresh database in a
 * temp dir, on 127.0.0.1 only, with rate limits off:
 *   1. start intake, read its RSS once it is idle;
 *   2. create BENCH_FORMS forms (default 10,000), each with its own spelling
 *      of a long zone name (`aMerica/aRgentina/comodRivadavia`...), the attack
 *      that took a server from 60 to 885 MB with 800 forms;
 *   3. open each form's page in BENCH_LANGUAGES languages (default 3, taking
 *      turns through all 29), as people in as many countries would;
 *   4. then every zone Intl knows in every language, once: the most formats
 *      honest forms can ask for;
 *   5. print RSS (VmRSS, and VmHWM for the peak) after each step, then stop
 *      intake with SIGTERM.
 *
 * With BENCH_BASELINE it measures that binary the same way, after this build.
 * It prints figures and asserts no timing or memory; it exits 1 only when a
 * request fails.
 */
import { SUPPORTED_LOCALES } from '../src/i18n/locales.ts'
import {
  type BenchState,
  BINARY,
  fmt,
  makeTempDir,
  pool,
  startIntake,
  stopIntake,
  whenReady,
} from '../test/e2e/intake-child.ts'
import {
  BenchError,
  binaryPresent,
  createForms,
  exitCodeFor,
  logFigures,
  peakRssKiB,
  rssKiB,
  runBench,
  sleep,
} from './lib.ts'

const FORMS = Number(process.env.BENCH_FORMS ?? 10_000)
const LANGUAGES_PER_FORM = Number(process.env.BENCH_LANGUAGES ?? 3)
const CONCURRENCY = 16
/** Long names give many spellings; a link among them, as in the attack. */
const ZONES = [
  'America/Argentina/ComodRivadavia',
  'America/North_Dakota/New_Salem',
  'America/Indiana/Indianapolis',
  'Antarctica/DumontDUrville',
]

/** `zone` with each letter's case chosen by the bits of `n`: a spelling of its own for every n below 2^(letters). */
const spelling = (zone: string, n: number) => {
  let bit = 0
  return [...zone]
    .map((c) => (/[a-z]/i.test(c) ? ((n >> (bit++ % 30)) & 1 ? c.toUpperCase() : c.toLowerCase()) : c))
    .join('')
}

interface Figures {
  binary: string
  version: string
  idleKiB: number
  createdKiB: number
  renderedKiB: number
  everyZoneKiB: number
  settledKiB: number
  peakKiB: number
  createMs: number
  renderMs: number
  pages: number
  everyZonePages: number
}

async function measure(state: BenchState, binary: string): Promise<Figures> {
  const dir = makeTempDir(state, 'time-zones')
  const child = startIntake(state, dir, {}, { binary, logToFile: true })
  const ready = await whenReady(child)
  const pid = child.proc.pid
  await sleep(500)
  const idleKiB = rssKiB(pid)
  const api = { url: ready.url, key: ready.key, signal: state.abort.signal }

  const created = await createForms(api, FORMS, CONCURRENCY, (i) => ({
    title: `Form ${i}`,
    fields: [{ key: 'name', type: 'text', label: 'Name' }],
    page: { time_zone: spelling(ZONES[i % ZONES.length]!, Math.floor(i / ZONES.length) + 1) },
  }))
  const createdKiB = rssKiB(pid)

  const open = async (id: string, language: string) => {
    const res = await fetch(`${ready.url}/f/${id}`, {
      headers: { 'accept-language': language },
      signal: state.abort.signal,
    })
    await res.arrayBuffer()
    if (res.status !== 200) throw new BenchError(`GET /f/${id} (${language}): ${res.status}`)
  }
  const renderStarted = performance.now()
  await pool(FORMS * LANGUAGES_PER_FORM, CONCURRENCY, (n) => {
    const form = Math.floor(n / LANGUAGES_PER_FORM)
    return open(
      created.ids[form]!,
      SUPPORTED_LOCALES[(form * LANGUAGES_PER_FORM + (n % LANGUAGES_PER_FORM)) % SUPPORTED_LOCALES.length]!,
    )
  })
  const renderMs = performance.now() - renderStarted
  const renderedKiB = rssKiB(pid)

  // Every zone in every language: one form per zone, its page in each language.
  const zones = Intl.supportedValuesOf('timeZone')
  const perZone = await createForms(api, zones.length, CONCURRENCY, (i) => ({
    title: `Zone ${i}`,
    fields: [{ key: 'name', type: 'text', label: 'Name' }],
    page: { time_zone: zones[i]! },
  }))
  await pool(zones.length * SUPPORTED_LOCALES.length, CONCURRENCY, (n) =>
    open(perZone.ids[Math.floor(n / SUPPORTED_LOCALES.length)]!, SUPPORTED_LOCALES[n % SUPPORTED_LOCALES.length]!),
  )
  const everyZoneKiB = rssKiB(pid)
  // What stays once the garbage collector has had its turn.
  await sleep(5000)
  const settledKiB = rssKiB(pid)
  const peakKiB = peakRssKiB(pid)
  const stopped = await stopIntake(child)
  if (stopped.code !== 0) throw new BenchError(`intake exited with code ${stopped.code} on SIGTERM`)
  return {
    binary,
    version: ready.version,
    idleKiB,
    createdKiB,
    renderedKiB,
    everyZoneKiB,
    settledKiB,
    peakKiB,
    createMs: created.ms,
    renderMs,
    pages: FORMS * LANGUAGES_PER_FORM,
    everyZonePages: zones.length * SUPPORTED_LOCALES.length,
  }
}

async function run(state: BenchState): Promise<number> {
  if (!binaryPresent()) return 1
  if (!Number.isInteger(FORMS) || FORMS < 1)
    throw new BenchError(`BENCH_FORMS must be a whole number from 1, got "${process.env.BENCH_FORMS}"`)
  if (
    !Number.isInteger(LANGUAGES_PER_FORM) ||
    LANGUAGES_PER_FORM < 1 ||
    LANGUAGES_PER_FORM > SUPPORTED_LOCALES.length
  ) {
    throw new BenchError(
      `BENCH_LANGUAGES must be a whole number from 1 to ${SUPPORTED_LOCALES.length}, got "${process.env.BENCH_LANGUAGES}"`,
    )
  }
  const binaries = [BINARY, process.env.BENCH_BASELINE?.trim()].filter((path): path is string => Boolean(path))
  for (const binary of binaries) {
    const f = await measure(state, binary)
    const mib = (kib: number) => `${fmt(kib / 1024, 1)} MiB`
    logFigures(`Time zones: ${fmt(FORMS)} forms, each its own spelling of a zone, intake ${f.version} (${f.binary})`, [
      ['RSS idle', mib(f.idleKiB)],
      [`RSS after ${fmt(FORMS)} forms created (${fmt(f.createMs)} ms)`, mib(f.createdKiB)],
      [
        `RSS after their pages were read, ${fmt(LANGUAGES_PER_FORM)} languages each (${fmt(f.pages)} pages, ${fmt(f.renderMs)} ms)`,
        mib(f.renderedKiB),
      ],
      [`RSS after every zone in every language (${fmt(f.everyZonePages)} more pages)`, mib(f.everyZoneKiB)],
      ['RSS 5 s later', mib(f.settledKiB)],
      ['peak RSS (VmHWM)', mib(f.peakKiB)],
    ])
  }
  return exitCodeFor([])
}

if (import.meta.main) await runBench(run)
