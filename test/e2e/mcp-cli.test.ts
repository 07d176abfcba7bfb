/**
 * `intake mcp --url URL --key KEY`, end to end on the real executable: how it
 * refuses to start (exit 2, one line on stderr, the key never echoed), the key
 * from INTAKE_API_KEY kept out of its command line, and the end of stdin
 * ending it.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { childEnv, runIntake } from './binary.ts'
import { ok, STEP_TIMEOUT, useMcpServer } from './mcp-server.ts'

const mcp = useMcpServer()
const { connectStdio, restFormIds } = mcp

describe('intake mcp: usage errors exit 2 with one line on stderr', () => {
  const expectOneLineUsageError = (
    result: { code: number | null; stdout: string; stderr: string },
    mentions: string,
  ) => {
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    const lines = result.stderr.trimEnd().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toStartWith('intake: ')
    expect(lines[0]).toContain(mentions)
  }

  test(
    'a missing --url',
    async () => {
      const result = await runIntake(mcp.binary, ['mcp', '--key', mcp.key], { cwd: mcp.cwd })
      expectOneLineUsageError(result, '--url')
      expect(result.stderr).not.toContain(mcp.key)
    },
    STEP_TIMEOUT,
  )

  test(
    'a --url that is not an http(s) URL',
    async () => {
      const result = await runIntake(mcp.binary, ['mcp', '--url', 'ftp://127.0.0.1/', '--key', mcp.key], {
        cwd: mcp.cwd,
      })
      expectOneLineUsageError(result, '--url')
      expect(result.stderr).not.toContain(mcp.key)
    },
    STEP_TIMEOUT,
  )

  test(
    'a malformed --key (not echoed)',
    async () => {
      const secret = 'svc_live_TopSecretButMalformed42'
      const result = await runIntake(mcp.binary, ['mcp', '--url', mcp.server.url, '--key', secret], { cwd: mcp.cwd })
      expectOneLineUsageError(result, '--key')
      expect(result.stderr).not.toContain(secret)
      expect(result.stderr).not.toContain('TopSecretButMalformed42')
    },
    STEP_TIMEOUT,
  )

  test(
    'no key at all: neither --key nor INTAKE_API_KEY',
    async () => {
      for (const empty of [undefined, '', '  ']) {
        const result = await runIntake(mcp.binary, ['mcp', '--url', mcp.server.url], {
          cwd: mcp.cwd,
          env: { INTAKE_API_KEY: empty },
        })
        expectOneLineUsageError(result, 'set INTAKE_API_KEY (or give --key)')
      }
    },
    STEP_TIMEOUT,
  )

  test(
    'a malformed INTAKE_API_KEY (not echoed)',
    async () => {
      const secret = 'svc_live_TopSecretButMalformed42'
      const result = await runIntake(mcp.binary, ['mcp', '--url', mcp.server.url], {
        cwd: mcp.cwd,
        env: { INTAKE_API_KEY: secret },
      })
      expectOneLineUsageError(result, 'INTAKE_API_KEY is not one')
      expect(result.stderr).not.toContain('TopSecretButMalformed42')
    },
    STEP_TIMEOUT,
  )

  test(
    'a URL where nothing listens: exit 2 with a "cannot reach" line, the key not echoed',
    async () => {
      // A port that was free a moment ago and is closed again.
      const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
      const port = probe.port
      await probe.stop(true)
      const url = `http://127.0.0.1:${port}`
      const result = await runIntake(mcp.binary, ['mcp', '--url', url, '--key', mcp.key], { cwd: mcp.cwd })
      expect(result.code).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr).toMatch(new RegExp(`^intake: cannot reach ${url.replaceAll('.', '\\.')}/mcp\\b`, 'm'))
      expect(result.stderr).not.toContain(mcp.key)
      expect(result.stderr).not.toContain(mcp.key.slice('svc_live_'.length))
    },
    STEP_TIMEOUT,
  )
})

describe('intake mcp: the key from the environment (INTAKE_API_KEY), out of argv', () => {
  /** What `ps` shows of a process: its command line. */
  const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')

  test(
    'with the key only in INTAKE_API_KEY it serves the tools as that key, and its command line holds no key',
    async () => {
      const client = await connectStdio(mcp.key, { keyIn: 'environment' })
      const pid = mcp.stdioPids.at(-1)!
      if (process.platform === 'linux') {
        expect(commandLine(pid)).toContain(' mcp --url ')
        expect(commandLine(pid)).not.toContain('svc_live_')
      }
      const form = await ok(client, 'create_form', {
        title: 'Key from the environment',
        fields: [{ key: 'ok', type: 'checkbox', label: 'OK?' }],
      })
      expect(await restFormIds(mcp.key)).toContain(form.id)
      expect(await restFormIds(mcp.otherKey)).not.toContain(form.id)
    },
    STEP_TIMEOUT,
  )

  test(
    '--key, when given, wins over INTAKE_API_KEY',
    async () => {
      const client = await connectStdio(mcp.otherKey, { env: { INTAKE_API_KEY: mcp.key } })
      const form = await ok(client, 'create_form', {
        title: 'The flag wins',
        fields: [{ key: 'ok', type: 'checkbox', label: 'OK?' }],
      })
      expect(await restFormIds(mcp.otherKey)).toContain(form.id)
      expect(await restFormIds(mcp.key)).not.toContain(form.id)
    },
    STEP_TIMEOUT,
  )
})

describe('intake mcp: the end of stdin ends it', () => {
  test(
    'when the client closes stdin, it exits 0 on its own',
    async () => {
      const child = Bun.spawn([mcp.binary, 'mcp', '--url', mcp.server.url, '--key', mcp.key], {
        cwd: mcp.cwd,
        env: childEnv(),
        stdin: 'pipe',
        stdout: 'pipe',
        stderr: 'pipe',
      })
      try {
        // A complete exchange first, so it is surely connected and serving.
        child.stdin.write(
          `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`,
        )
        child.stdin.flush()
        const reader = child.stdout.getReader()
        const { value } = await reader.read()
        expect(new TextDecoder().decode(value)).toContain('"serverInfo"')
        reader.releaseLock()
        child.stdin.end()
        // Never killed here: only the end of stdin can make it exit.
        expect(await child.exited).toBe(0)
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL')
      }
    },
    STEP_TIMEOUT,
  )
})
