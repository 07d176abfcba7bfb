/**
 * What a stop does, on the real server (from source, on SQLite) told to stop
 * with SIGTERM as systemd and Docker do (CONTRACT 15, "Draining"), and
 * `intake healthcheck` against a live, a draining, an absent and a silent
 * server. Everything listens on 127.0.0.1.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { killAllChildren, PROJECT_ROOT, type RunningIntake, runIntake, startIntake } from './binary.ts'

const MAIN = join(PROJECT_ROOT, 'src', 'main.ts')
const dirs: string[] = []

afterAll(async () => {
  await killAllChildren()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

function start(drainSeconds: string) {
  const cwd = mkdtempSync(join(tmpdir(), 'intake-drain-'))
  dirs.push(cwd)
  return startIntake(process.execPath, {
    cwd,
    args: [MAIN, 'serve', '--port', '0', '--db', join(cwd, 'intake.db')],
    env: { SERVICE_DRAIN_SECONDS: drainSeconds },
  })
}

const healthcheck = (...args: string[]) =>
  runIntake(process.execPath, [MAIN, 'healthcheck', ...args], { cwd: tmpdir(), timeoutMs: 20_000 })

/** Resolves with the exit code once the child exits (a stop already under way: no signal sent). */
async function exitOf(server: RunningIntake, timeoutMs: number): Promise<number | null> {
  const exited = await Promise.race([server.proc.exited, Bun.sleep(timeoutMs).then(() => 'still running' as const)])
  if (exited === 'still running') throw new Error(`intake still ran ${timeoutMs} ms into its stop\n${server.stdout()}`)
  return exited
}

/** One GET on a connection of its own, as raw HTTP/1.1: the status, headers and body, and whether the server then closed the connection. */
function rawGet(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, string>; body: string; closedByServer: boolean }>(
    (resolve, reject) => {
      let text = ''
      const socket = connect(port, '127.0.0.1', () => {
        const lines = Object.entries({ host: `127.0.0.1:${port}`, ...headers }).map(([n, v]) => `${n}: ${v}`)
        socket.write(`GET ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`)
      })
      const answer = (closedByServer: boolean) => {
        const [head = '', body = ''] = text.split('\r\n\r\n')
        const [statusLine = '', ...fields] = head.split('\r\n')
        resolve({
          status: Number(statusLine.split(' ')[1]),
          headers: Object.fromEntries(
            fields.map((f) => [f.slice(0, f.indexOf(':')).toLowerCase(), f.slice(f.indexOf(':') + 1).trim()]),
          ),
          body: body.slice(0, Number(/content-length: (\d+)/i.exec(head)?.[1] ?? body.length)),
          closedByServer,
        })
      }
      socket.on('data', (chunk) => {
        text += chunk
        const length = /content-length: (\d+)/i.exec(text)?.[1]
        // A connection kept open: the answer is whole once its body is; wait a moment for a close all the same.
        if (length !== undefined && text.includes('\r\n\r\n') && text.split('\r\n\r\n')[1]!.length >= Number(length))
          setTimeout(() => {
            if (!socket.destroyed) {
              socket.destroy()
              answer(false)
            }
          }, 300)
      })
      socket.on('close', () => answer(true))
      socket.on('error', reject)
    },
  )
}

describe('SIGTERM drains, then stops', () => {
  test('/healthz answers 503 draining at once, every answer closes its connection, a long-poll ends with its normal empty answer, exit 0', async () => {
    const server = await start('3')
    const auth = { authorization: `Bearer ${server.apiKey}` }
    const created = await fetch(`${server.url}/api/v1/forms`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Drain', fields: [{ key: 'name', type: 'text', label: 'Name' }] }),
    })
    expect(created.status).toBe(201)
    const formId: string = ((await created.json()) as { id: string }).id

    // Before: healthy, and connections are kept.
    const live = await rawGet(server.port, '/healthz')
    expect(live).toMatchObject({ status: 200, body: '{"status":"ok"}', closedByServer: false })
    expect((await healthcheck('--port', String(server.port))).code).toBe(0)

    const waiting = fetch(`${server.url}/api/v1/forms/${formId}/responses?wait=30`, { headers: auth })
    await Bun.sleep(200)
    server.proc.kill('SIGTERM')
    await server.waitForStdout(/"msg":"shutting down"/)

    // The drain: /healthz says so, everything else is answered as usual, and every connection closes after its answer.
    const draining = await rawGet(server.port, '/healthz')
    expect(draining).toMatchObject({ status: 503, body: '{"status":"draining"}', closedByServer: true })
    expect(draining.headers.connection).toBe('close')
    const form = await rawGet(server.port, `/api/v1/forms/${formId}`, auth)
    expect(form).toMatchObject({ status: 200, closedByServer: true })
    expect(form.headers.connection).toBe('close')
    const check = await healthcheck('--port', String(server.port))
    expect(check.code).toBe(1)
    expect(check.stderr).toContain('503 {"status":"draining"}')

    // Then the listener closes: the long-poll answers with what it has, and intake exits 0.
    const waited = await waiting
    expect(waited.status).toBe(200)
    expect(await waited.json()).toEqual([])
    expect(await exitOf(server, 20_000)).toBe(0)

    const absent = await healthcheck('--port', String(server.port))
    expect(absent.code).toBe(1)
    expect(absent.stderr).toContain('connection refused')
  }, 60_000)

  test('a second SIGTERM during the drain cuts it short; the stop goes on and exits 0', async () => {
    const server = await start('600')
    server.proc.kill('SIGTERM')
    await server.waitForStdout(/"msg":"shutting down"/)
    expect((await rawGet(server.port, '/healthz')).status).toBe(503)
    server.proc.kill('SIGTERM')
    expect(await exitOf(server, 20_000)).toBe(0)
    expect(server.stdout()).toContain('"msg":"drain cut short"')
  }, 60_000)
})

describe('intake healthcheck', () => {
  test('finds the server where serve listens: SERVICE_HOST and SERVICE_PORT, 0.0.0.0 asked on loopback, or --url', async () => {
    const server = await start('0')
    try {
      const port = String(server.port)
      for (const args of [
        ['--port', port],
        ['--host', '0.0.0.0', '--port', port],
        ['--url', server.url],
        ['--url', `${server.url}/any/path`],
      ]) {
        const result = await healthcheck(...args)
        expect({ args, code: result.code, stdout: result.stdout }).toEqual({
          args,
          code: 0,
          stdout: `http://127.0.0.1:${port}/healthz: 200 {"status":"ok"}\n`,
        })
      }
      const fromEnvironment = await runIntake(process.execPath, [MAIN, 'healthcheck'], {
        cwd: tmpdir(),
        env: { SERVICE_PORT: port },
      })
      expect(fromEnvironment.code).toBe(0)
    } finally {
      await server.stop()
    }
  }, 60_000)

  test('a server that never answers: 1 after its bounded wait; a bad --url or port 0: 2, a mistake to fix', async () => {
    const silent = createServer(() => {})
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    try {
      const port = (silent.address() as { port: number }).port
      const result = await healthcheck('--url', `http://127.0.0.1:${port}`)
      expect(result.code).toBe(1)
      expect(result.stderr).toContain('no answer within 5 s')
    } finally {
      silent.close()
    }
    expect((await healthcheck('--url', 'not a url')).code).toBe(2)
    expect((await healthcheck('--port', '0')).code).toBe(2)
  }, 60_000)
})
