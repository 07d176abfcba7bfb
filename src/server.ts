import { createIntake } from './app.tsx'
import { INTAKE_COMMAND } from './cli/invocation.ts'
import { type Config, resolveBaseUrl } from './config.ts'
import { describeUpgrade } from './db/driver.ts'
import { createLogger, type Logger, StdoutUnwritable, type StdoutWriter, stdoutWriter } from './lib/log.ts'
import { systemClock } from './lib/time.ts'
import { createAuthService } from './modules/auth/service.ts'
import { createConsoleService } from './modules/console/service.ts'
import { openStore } from './stores.ts'
import { VERSION } from './version.ts'

/** Long-polls hold a request up to 60 s; Bun would cut an idle connection after 10. */
const IDLE_TIMEOUT_SECONDS = 75
/** Bodies are bounded per route as they are read (413 with a JSON body); this only stops absurd uploads. */
const MAX_REQUEST_BODY_BYTES = 512 * 1024 * 1024
/** Longest a graceful stop waits for requests in flight before closing them. */
const SHUTDOWN_GRACE_MS = 10_000
/** Longest the first start waits for stdout to take the new key; then it fails and makes none. */
const FIRST_KEY_OUTPUT_TIMEOUT_MS = 10_000

export interface RunningServer {
  url: string
  stop(): Promise<void>
}

/**
 * Opens the database, makes sure a key exists, listens, and stops cleanly on
 * SIGTERM / SIGINT. Start-up lines for people and the logger's lines share
 * stdout, which never blocks the server (see StdoutWriter); only the first
 * start's key waits for it, and is not made if stdout does not take it.
 */
export async function startServer(
  config: Config,
  stdout: StdoutWriter = stdoutWriter(),
  logger: Logger = createLogger(),
): Promise<RunningServer> {
  const store = await openStore(config, {
    onUpgrade: (upgrade) => stdout.print(describeUpgrade(upgrade)),
    log: (line) => stdout.print(line),
  })

  let port = config.port
  const { app, handle, background, signals } = createIntake({
    config,
    store,
    logger,
    baseUrl: () => resolveBaseUrl(config, port),
  })
  // Nothing is answered until the start's key (when it makes one) is stored: the first request with it must work.
  let ready!: () => void
  const started = new Promise<void>((resolve) => (ready = resolve))
  let server: ReturnType<typeof Bun.serve>
  try {
    server = Bun.serve({
      hostname: config.host,
      port: config.port,
      idleTimeout: IDLE_TIMEOUT_SECONDS,
      maxRequestBodySize: MAX_REQUEST_BODY_BYTES,
      // A second intake on a taken port must fail, not quietly share it.
      reusePort: false,
      development: false,
      fetch: async (request) => {
        await started
        return handle(request)
      },
    })
  } catch (error) {
    await store.close()
    throw new ListenError(
      `Cannot listen on ${config.host}:${config.port}: ${error instanceof Error ? error.message : String(error)}`,
    )
  }
  // Routes read the peer address (server.requestIP) through the app's server.
  app.server = server
  port = server.port!
  const listeningUrl = server.url.href.replace(/\/$/, '')
  // Only once listening: a start that fails (a taken port) must not make a key it never shows.
  // Alone: of several servers starting at once on an empty database, one makes the key and shows it.
  const firstKey = await store.alone(async (): Promise<'shown' | 'none' | StdoutUnwritable> => {
    const startupKey = await createAuthService(store, systemClock).prepareStartupKey(config.apiKey)
    if (!startupKey) return 'none'
    // The console's first operator is set up through a link shown with the key, and stored with it.
    const operatorLink = config.console
      ? await createConsoleService(store, systemClock, () => resolveBaseUrl(config, port)).prepareFirstOperatorLink()
      : undefined
    // One write: whoever sees the listening line sees the key line with it. The key is stored
    // only once stdout has taken it; no request is handled before, so it works from the first one.
    try {
      stdout.writeNow(
        firstStartBanner({
          listeningUrl,
          baseUrl: resolveBaseUrl(config, port),
          dataPath: store.location,
          postgres: store.kind === 'postgres',
          key: startupKey.key,
          operatorLink: operatorLink?.link,
        }),
        FIRST_KEY_OUTPUT_TIMEOUT_MS,
      )
    } catch (error) {
      if (error instanceof StdoutUnwritable) return error
      throw error
    }
    await startupKey.commit()
    await operatorLink?.commit()
    return 'shown'
  })
  if (firstKey instanceof StdoutUnwritable) {
    server.stop(true)
    await store.close()
    throw new FirstKeyNotShown(
      `the first start shows its new API key on stdout, and ${firstKey.message}: no key was made. ` +
        `Start again with stdout read, or first create a key with: ${INTAKE_COMMAND} keys create`,
    )
  }
  if (firstKey === 'none') stdout.print(`intake ${VERSION} listening on ${listeningUrl} (data: ${store.location})`)
  // From here requests go straight to intake.
  server.reload({ fetch: handle })
  ready()

  background.start()

  let stopping: Promise<void> | undefined
  const stop = () =>
    (stopping ??= (async () => {
      // Long-polls answer now with what they have; requests in flight finish; attempts in flight
      // finish (each bounded by the webhook timeout); then the database closes.
      const force = setTimeout(() => server.stop(true), SHUTDOWN_GRACE_MS)
      const serverStopped = server.stop(false)
      signals.close()
      await Promise.all([serverStopped, background.stop()])
      clearTimeout(force)
      await store.close()
    })())

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, async () => {
      logger.info('shutting down', { signal })
      await stop()
      process.exit(0)
    })
  }
  return { url: listeningUrl, stop }
}

export class ListenError extends Error {}
/** The first start could not show its new key: it made none (exit code 1). */
export class FirstKeyNotShown extends Error {}

/**
 * What the very first start says, once: where things are, the key, and the
 * next command to try. Later starts say one line. Commands are named as this
 * process was started (INTAKE_COMMAND), so they run as shown.
 */
function firstStartBanner(at: {
  listeningUrl: string
  baseUrl: string
  dataPath: string
  postgres: boolean
  key: string
  /** The one-time link that sets up the console's first operator. */
  operatorLink: string | undefined
}): string {
  // A server bound to every address is reached locally through loopback.
  const local = at.listeningUrl.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//[::1]:')
  return [
    `intake ${VERSION} listening on ${at.listeningUrl}`,
    '',
    'intake is ready. This is shown once, on the first start.',
    at.postgres
      ? `  Data   ${at.dataPath}  (PostgreSQL; back it up with pg_dump, or: ${INTAKE_COMMAND} backup FILE)`
      : `  Data   ${at.dataPath}  (one file; copy it safely with: ${INTAKE_COMMAND} backup FILE)`,
    `  API    ${at.baseUrl}/api/v1  (OpenAPI at /api/v1/openapi.json, MCP at /mcp)`,
    `  Forms  ${at.baseUrl}/f/<id>  (the link you send to a person)`,
    '',
    `API key: ${at.key}`,
    'This key is shown once and stored only as a hash. Keep it somewhere safe.',
    '',
    ...(at.operatorLink
      ? [`Console: open ${at.operatorLink}`, 'to set up the first operator (works once, for 24 hours).', '']
      : []),
    'Next, create a form:',
    `  curl -s ${local}/api/v1/forms -H 'Authorization: Bearer ${at.key}' \\`,
    `    -d '{"title":"Hello","fields":[{"key":"name","type":"text","label":"Your name"}]}'`,
    'then open the "url" it returns in a browser.',
    '',
  ].join('\n')
}
