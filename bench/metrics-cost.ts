/**
 * What SERVICE_METRICS_LISTEN costs a request: two intakes in this process,
 * metrics off and on, each sent the same requests through `handle` (access
 * log, routing, the app) in alternating rounds, and the CPU time
 * (process.cpuUsage, user + system) each round took per request. CPU time
 * rather than throughput: on a shared machine another process's load moves
 * throughput far more than it moves the CPU a request itself uses. Prints the
 * medians and every round.
 *
 *   bun bench/metrics-cost.ts [rounds=12] [requests=3000]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createIntake } from '../src/app.tsx'
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/lib/log.ts'
import { systemClock } from '../src/lib/time.ts'
import { createAuthService } from '../src/modules/auth/service.ts'
import { openStore } from '../src/stores.ts'

const [roundsArg = '12', requestsArg = '3000'] = process.argv.slice(2)
const ROUNDS = Number(roundsArg)
const REQUESTS = Number(requestsArg)
const KEY = `svc_live_${'ab'.repeat(24)}`
const dirs: string[] = []

async function intake(metrics: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'intake-metrics-cost-'))
  dirs.push(dir)
  const config = loadConfig({
    SERVICE_DB_PATH: join(dir, 'intake.db'),
    SERVICE_API_KEY: KEY,
    SERVICE_RATE_LIMIT: '0',
    SERVICE_PUBLIC_RATE_LIMIT: '0',
    ...(metrics ? { SERVICE_METRICS_LISTEN: '127.0.0.1:0' } : {}),
  })
  const store = await openStore(config)
  await (await createAuthService(store, systemClock).prepareStartupKey(config.apiKey))?.commit()
  const { handle } = createIntake({ config, store, logger: createLogger(() => {}), baseUrl: 'http://localhost' })
  const created = await handle(
    new Request('http://localhost/api/v1/forms', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Dinner', fields: [{ key: 'name', type: 'text', label: 'Your name' }] }),
    }),
  )
  const { id } = (await created.json()) as { id: string }
  return { handle, id, close: () => store.close() }
}

type Side = Awaited<ReturnType<typeof intake>>

/** CPU microseconds per request for REQUESTS requests of `path` (with the key when `keyed`). */
async function cpuPerRequest(side: Side, path: string, keyed: boolean): Promise<number> {
  const started = process.cpuUsage()
  for (let i = 0; i < REQUESTS; i++) {
    const headers: Record<string, string> = keyed ? { authorization: `Bearer ${KEY}` } : {}
    await (
      await side.handle(new Request(`http://localhost${path.replace('{id}', side.id)}`, { headers }))
    ).arrayBuffer()
  }
  const used = process.cpuUsage(started)
  return (used.user + used.system) / REQUESTS
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!
const off = await intake(false)
const on = await intake(true)
console.log(`CPU µs per request, ${ROUNDS} rounds of ${REQUESTS}, metrics off and on in turn`)
console.log('| request | off | on | on - off | rounds off | rounds on |\n| --- | --- | --- | --- | --- | --- |')
for (const [path, keyed] of [
  ['/api/v1/forms/{id}', true],
  ['/f/{id}', false],
  ['/healthz', false],
] as const) {
  const offs: number[] = []
  const ons: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating which goes first, so a slower stretch weighs on both.
    for (const side of round % 2 ? [off, on] : [on, off])
      (side === off ? offs : ons).push(await cpuPerRequest(side, path, keyed))
  }
  const rounds = (values: number[]) => values.map((v) => v.toFixed(0)).join(' ')
  console.log(
    `| GET ${path} | ${median(offs).toFixed(1)} | ${median(ons).toFixed(1)} | ${(median(ons) - median(offs)).toFixed(1)} | ${rounds(offs)} | ${rounds(ons)} |`,
  )
}
await Promise.all([off.close(), on.close()])
for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
