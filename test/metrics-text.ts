/**
 * Reading a /metrics scrape in tests: Prometheus's own parser (promtool,
 * Debian's prometheus package) judges the text; the samples it accepted are
 * then read as `name{labels} value` lines to check their values.
 */
import { PROMTOOL_PATH } from './prerequisites.ts'

export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** What `promtool check metrics` finds wrong with `text`: empty when Prometheus takes it as it is. */
export async function promtoolProblems(text: string): Promise<string> {
  const check = Bun.spawn([PROMTOOL_PATH, 'check', 'metrics'], { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
  check.stdin.write(text)
  await check.stdin.end()
  const [out, err, code] = await Promise.all([
    new Response(check.stdout).text(),
    new Response(check.stderr).text(),
    check.exited,
  ])
  return code === 0 ? '' : `${out}${err}`.trim() || `promtool exited with ${code}`
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g

/** Every sample of a scrape (comments and blank lines left out). */
export function samplesOf(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = SAMPLE.exec(line)
      if (!match) throw new Error(`not a sample line: ${line}`)
      const labels: Record<string, string> = {}
      for (const [, name, value] of (match[2] ?? '').matchAll(LABEL)) labels[name!] = JSON.parse(`"${value}"`)
      return { name: match[1]!, labels, value: Number(match[3]) }
    })
}

/** The value of the one sample named `name` whose labels include `labels`; undefined when there is none. */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  )
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`)
  return found[0]?.value
}
