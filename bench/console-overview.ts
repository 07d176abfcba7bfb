/**
 * The console overview's reads on an account of a million forms (CONTRACT
 * 15, issue 28): forms by status, answers per day and the median time to
 * answer over 30 days, failing deliveries, the recent events.
 *
 *   bun bench/console-overview.ts            # SQLite, 1,000,000 forms
 *   FORMS=200000 bun bench/console-overview.ts
 *   INTAKE_BENCH_DATABASE_URL=postgres://... bun bench/console-overview.ts
 *
 * It fills a fresh database through the store (the API would take an hour
 * for a million forms): FORMS forms in one account, of which ANSWERED were
 * answered over the last 30 days, FAILING of those with a failing delivery,
 * and as many again in a second account (what the account's reads must not
 * walk). Then it times each read ROUNDS times and prints the median and the
 * slowest, as the overview page makes them (in parallel, one request).
 * Nothing is asserted: the figures are for bench/results.md.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { newId } from '../src/lib/ids.ts'
import { DAY_MS } from '../src/modules/responses/store/index.ts'
import { openStore, type Store } from '../src/stores.ts'
import { log, logFigures, percentile } from './lib.ts'

const FORMS = Number(process.env.FORMS ?? 1_000_000)
const ANSWERED = Number(process.env.ANSWERED ?? 30_000)
const FAILING = Number(process.env.FAILING ?? 500)
const ROUNDS = 20
const BATCH = 10_000
const HOOK = 'https://example.com/hook'

const now = Date.now()
const since = Math.floor(now / DAY_MS) * DAY_MS - 29 * DAY_MS

function newForm(accountId: string, i: number, answered: boolean) {
  return {
    id: newId(),
    accountId,
    title: `Form ${i}`,
    description: null,
    fields: [{ key: 'name', type: 'text' as const, label: 'Name' }],
    fieldsCount: 1,
    callbackUrl: answered ? HOOK : null,
    callbackEvents: ['form.completed' as const],
    callbackMetadata: '{}',
    webhookSecret: answered ? 'b'.repeat(64) : null,
    context: null,
    settings: '{}',
    page: {},
    expiresAt: i % 7 === 0 ? now + DAY_MS : null,
    createdAt: now - 60 * DAY_MS,
  }
}

/** `count` forms of the account, the first `answered` answered over the last 30 days, the first `failing` with a failed delivery. */
async function fill(store: Store, accountId: string, count: number, answered: number, failing: number) {
  for (let start = 0; start < count; start += BATCH) {
    await store.transaction(async (tx) => {
      for (let i = start; i < Math.min(count, start + BATCH); i++) {
        const isAnswered = i < answered
        const form = newForm(accountId, i, isAnswered)
        await tx.forms.insert(form)
        if (i % 11 === 5) await tx.forms.setStatus(form.id, 'cancelled', now)
        if (!isAnswered) continue
        const submittedAt = since + Math.floor((i / answered) * 30 * DAY_MS) - (i % 5) * 1000
        form.createdAt = submittedAt - ((i * 7919) % (3 * DAY_MS))
        await tx.forms.complete(form.id, submittedAt)
        const responseId = newId()
        await tx.responses.insert(
          { id: responseId, formId: form.id, data: {}, ip: null, userAgent: null, submittedAt },
          [],
        )
        if (i >= failing) continue
        const id = newId()
        await tx.deliveries.enqueue({
          id,
          formId: form.id,
          responseId,
          event: 'form.completed',
          url: HOOK,
          payload: '{}',
          createdAt: submittedAt,
        })
        const [leased] = await tx.deliveries.lease([id], 60_000, submittedAt)
        await tx.deliveries.recordAttempts([
          {
            id,
            lease: leased!.leaseUntil,
            roundAttempt: 1,
            now: submittedAt,
            delivered: false,
            statusCode: 500,
            error: 'HTTP 500',
            attemptsPerRound: 1,
            retryDelayMs: 1000,
          },
        ])
      }
    })
  }
}

async function timed(what: () => Promise<unknown>): Promise<{ median: number; worst: number }> {
  const times: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now()
    await what()
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  return { median: percentile(times, 50), worst: times.at(-1)! }
}

const url = process.env.INTAKE_BENCH_DATABASE_URL
const dir = mkdtempSync(join(tmpdir(), 'intake-bench-console-'))
try {
  const store = await openStore({ dbPath: join(dir, 'intake.db'), databaseUrl: url })
  try {
    const [account, other] = await store.transaction(async (tx) => [
      await tx.keys.ensureAccount(newId(), 'big', now),
      await tx.keys.ensureAccount(newId(), 'neighbour', now),
    ])
    const filling = performance.now()
    await fill(store, account, FORMS, ANSWERED, FAILING)
    await fill(store, other, FORMS / 10, ANSWERED / 10, FAILING / 10)
    log(
      `filled ${FORMS.toLocaleString('en')} + ${(FORMS / 10).toLocaleString('en')} forms in ${((performance.now() - filling) / 1000).toFixed(0)} s`,
    )

    const reads: Array<[string, () => Promise<unknown>]> = [
      ['forms by status', () => store.forms.countByStatus(account, now)],
      ['answers per day (30 days)', () => store.responses.answersPerDay(account, since)],
      ['median time to answer (30 days)', () => store.responses.medianTimeToAnswer(account, since)],
      ['failing deliveries: count', () => store.deliveries.countFailing(account)],
      ['failing deliveries: newest 100', () => store.deliveries.listFailing(account, 100)],
      [
        'the overview: all of them at once',
        () =>
          Promise.all([
            store.forms.countByStatus(account, now),
            store.responses.answersPerDay(account, since),
            store.responses.medianTimeToAnswer(account, since),
            store.deliveries.countFailing(account),
            store.events.head(account),
          ]),
      ],
    ]
    const rows: [string, string][] = []
    for (const [name, read] of reads) {
      const { median, worst } = await timed(read)
      rows.push([`${name}: median / slowest of ${ROUNDS}`, `${median.toFixed(1)} ms / ${worst.toFixed(1)} ms`])
    }
    logFigures(
      `Console overview reads, ${url ? 'PostgreSQL' : 'SQLite'}: ${FORMS.toLocaleString('en')} forms, ${ANSWERED.toLocaleString('en')} answers in 30 days, ${FAILING} failing deliveries`,
      rows,
    )
  } finally {
    await store.close()
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
