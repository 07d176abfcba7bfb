import { type ConfigFlags, loadConfig } from '../config.ts'
import { printError } from '../lib/log.ts'
import { type Command, expectArguments, UsageError } from './command.ts'

/** Longest the check waits for the whole answer: a server that hangs is not healthy. */
const HEALTHCHECK_TIMEOUT_MS = 5_000

export const healthcheckCommand: Command = {
  name: 'healthcheck',
  about: `ask a running intake's /healthz; exit 0 when it answers 200,
else 1: the database unreachable, the server stopping (draining), nothing
listening, or no answer within 5 s. Made for a container's HEALTHCHECK.`,
  usage: [{ line: 'healthcheck [--url URL] [--host HOST] [--port PORT]' }],
  summary: 'Exit 0 when the server answers /healthz with 200, else 1 (for container health checks).',
  details: `  --url   the server's address, e.g. http://127.0.0.1:8080 (its /healthz is
          asked, whatever path the URL has). Without it, the address serve
          listens on from the same settings (SERVICE_HOST, SERVICE_PORT), with
          0.0.0.0 and :: asked on loopback.
One line says what /healthz answered (stdout when 200, else stderr).`,
  examplesHeading: 'Example (a Dockerfile line: the container is healthy while intake answers 200):',
  examples: ['HEALTHCHECK --interval=10s --timeout=6s --start-period=5s CMD ["intake", "healthcheck"]'],
  async run({ args, flags, options }) {
    expectArguments(args, 0, 'healthcheck [--url URL]')
    const url = healthzUrl(options.url, flags)
    const answer = await askHealthz(url)
    if (answer.healthy) return void console.log(`${url}: ${answer.said}`)
    printError(`intake healthcheck: ${url}: ${answer.said}`)
    process.exitCode = 1
  },
}

/** /healthz of --url, else of where `serve` listens with these settings (a wildcard address asked on loopback). */
function healthzUrl(url: string | undefined, flags: ConfigFlags): string {
  if (url !== undefined) {
    if (!/^https?:\/\/[^\s]+$/.test(url) || !URL.canParse(url))
      throw new UsageError(`--url must be the http(s) address of a running intake, got "${url}"`)
    return new URL('/healthz', url).href
  }
  const config = loadConfig(process.env, flags)
  if (config.port === 0)
    throw new UsageError(
      'SERVICE_PORT is 0 (any free port): give the address with --url (see intake healthcheck --help)',
    )
  const host = config.host === '0.0.0.0' ? '127.0.0.1' : config.host === '::' ? '::1' : config.host
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}/healthz`
}

async function askHealthz(url: string): Promise<{ healthy: boolean; said: string }> {
  try {
    const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(HEALTHCHECK_TIMEOUT_MS) })
    const body = (await response.text()).trim().slice(0, 200)
    return { healthy: response.status === 200, said: `${response.status} ${body}`.trim() }
  } catch (error) {
    if (error instanceof DOMException && error.name === 'TimeoutError')
      return { healthy: false, said: `no answer within ${HEALTHCHECK_TIMEOUT_MS / 1000} s` }
    const code = (error as { code?: string }).code
    return {
      healthy: false,
      said:
        code === 'ECONNREFUSED' || code === 'ConnectionRefused'
          ? 'connection refused (nothing listening)'
          : String(error),
    }
  }
}
