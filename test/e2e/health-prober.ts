/**
 * Run by attack.ts's watchServer as a process of its own:
 * `bun health-prober.ts URL PID EVERY_MS`. Times GET URL/healthz every
 * EVERY_MS and samples PID's resident memory until its stdin closes, then
 * prints the figures as one line of JSON.
 */
import { residentMiB } from './attack.ts'

const [url, pidText, everyText] = process.argv.slice(2)
const pid = Number(pidText)
const everyMs = Number(everyText)
const latencies: number[] = []
let failed = 0
let peakMiB = residentMiB(pid)
let running = true
void (async () => {
  for await (const _ of Bun.stdin.stream()) {
    // Nothing is sent: the end of stdin is the signal to stop.
  }
  running = false
})()

while (running) {
  const started = performance.now()
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) })
    await res.arrayBuffer()
    if (res.status !== 200) failed++
  } catch {
    failed++
  }
  latencies.push(performance.now() - started)
  try {
    peakMiB = Math.max(peakMiB, residentMiB(pid))
  } catch {
    // The server has exited.
  }
  await Bun.sleep(everyMs)
}

const sorted = latencies.toSorted((a, b) => a - b)
const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]! * 10) / 10
console.log(
  JSON.stringify({
    probes: sorted.length,
    maxMs: at(1),
    p99Ms: at(0.99),
    medianMs: at(0.5),
    failed,
    peakMiB: Math.round(peakMiB),
  }),
)
