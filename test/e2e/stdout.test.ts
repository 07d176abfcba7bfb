/**
 * A stdout that cannot keep up (CONTRACT 13), against the real executable:
 * with stdout a pipe nobody reads, memory stays bounded, every request is
 * answered, lines that could not be written are counted and the count is
 * logged once stdout is read again, and SIGTERM still exits 0. The first
 * start is the exception: it makes no key it could not show.
 *
 * The unread pipe is a FIFO whose read end the test holds without reading
 * (a 'pipe' from Bun.spawn is read eagerly by the test process and never fills).
 */

import { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { closeSync, constants, openSync, readFileSync, readSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { reportFigure } from '../figures.ts'
import { keysIn, LISTENING_LINE, request, spawnWithStdout, startIntake, useBuiltBinary } from './binary.ts'

const STEP_TIMEOUT = 60_000
/** Requests sent while nobody reads stdout: their lines are many times what the pipe and intake's backlog hold. */
const FLOOD_ROUNDS = 6
const REQUESTS_PER_ROUND = 2_500
const CONCURRENCY = 32

const LONG_PATH = 'x'.repeat(4000)

const intake = useBuiltBinary('intake-stdout-')

/** A pipe whose read end the test holds and reads only when told; the write end goes to the child as its stdout. */
function unreadPipe(dir: string) {
  const path = join(dir, 'stdout.fifo')
  const made = Bun.spawnSync(['mkfifo', path])
  if (made.exitCode !== 0) throw new Error(`mkfifo failed: ${made.stderr.toString()}`)
  const readFd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  const writeFd = openSync(path, constants.O_WRONLY)
  const buffer = Buffer.alloc(64 * 1024)
  let text = ''
  return {
    writeFd,
    /** Everything read so far. */
    get text() {
      return text
    },
    /** Reads what the pipe holds now, without waiting; false once the writer has closed it. */
    readAvailable(): boolean {
      for (;;) {
        let count: number
        try {
          count = readSync(readFd, buffer)
        } catch (error) {
          if ((error as { code?: string }).code === 'EAGAIN') return true
          throw error
        }
        if (count === 0) return false
        text += buffer.toString('utf8', 0, count)
      }
    },
    /** Reads until `pattern` matches what was read (or `ms` pass). */
    async readUntil(pattern: RegExp, ms: number): Promise<RegExpMatchArray | null> {
      const deadline = Date.now() + ms
      for (;;) {
        const open = this.readAvailable()
        const match = pattern.exec(text)
        if (match || !open || Date.now() > deadline) return match
        await Bun.sleep(10)
      }
    },
    closeWriteEnd: () => closeSync(writeFd),
    close: () => closeSync(readFd),
  }
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024

/** `count` requests, `CONCURRENCY` at a time; the statuses seen, with how many of each. */
async function flood(url: string, count: number, key: string): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {}
  let next = 0
  const worker = async () => {
    while (next < count) {
      const i = next++
      // Health checks and API reads; every fiftieth refused (401); every other one to a long
      // unknown path (404), whose line, with its path, is some 4 KiB.
      const res =
        i % 50 === 0
          ? await fetch(`${url}/api/v1/forms`, { headers: { authorization: 'Bearer svc_live_not-a-key' } })
          : i % 10 === 0
            ? await fetch(`${url}/api/v1/forms?limit=1`, { headers: { authorization: `Bearer ${key}` } })
            : i % 2 === 0
              ? await fetch(`${url}/${LONG_PATH}`)
              : await fetch(`${url}/healthz`)
      await res.arrayBuffer()
      statuses[res.status] = (statuses[res.status] ?? 0) + 1
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  return statuses
}

/** Starts `intake serve` with its stdout on an unread pipe and a key of the test's own (so no key is printed). */
async function serveOnUnreadPipe() {
  const cwd = intake.tempDir()
  const key = `svc_live_${randomBytes(24).toString('hex')}`
  const pipe = unreadPipe(cwd)
  const proc = spawnWithStdout(intake.path, ['serve', '--port', '0'], {
    cwd,
    env: { SERVICE_API_KEY: key, SERVICE_RATE_LIMIT: '0' },
    stdout: pipe.writeFd,
  })
  pipe.closeWriteEnd()
  const stderr = new Response(proc.stderr).text()
  // The listening line is read; after it, nothing is until the test says so.
  const listening = await pipe.readUntil(LISTENING_LINE, 15_000)
  if (!listening) throw new Error(`no listening line; stdout so far: ${pipe.text}; stderr: ${await stderr}`)
  return { proc, pipe, key, url: listening[2]!, stderr }
}

type UnreadServer = Awaited<ReturnType<typeof serveOnUnreadPipe>>

/**
 * Runs `use` against a server whose stdout nobody reads; then SIGTERM must
 * still end it cleanly, whatever stdout holds: exit 0, nothing on stderr.
 */
async function withUnreadStdout(use: (server: UnreadServer) => Promise<void>) {
  const server = await serveOnUnreadPipe()
  try {
    await use(server)
    server.proc.kill('SIGTERM')
    expect(await server.proc.exited).toBe(0)
    expect(await server.stderr).toBe('')
  } finally {
    server.pipe.close()
  }
}

const requestLinesIn = (text: string) => (text.match(/"msg":"request"/g) ?? []).length
const droppedCountsIn = (text: string) =>
  [...text.matchAll(/^\{.*"msg":"log lines dropped[^"]*".*"dropped":(\d+).*\}$/gm)].map((match) => Number(match[1]))

describe('stdout nobody reads', () => {
  test(
    'every request is answered (memory growth reported), and SIGTERM exits 0 with nothing on stderr',
    () =>
      withUnreadStdout(async ({ proc, key, url }) => {
        // Warm up (code loaded, caches made) before the first figure.
        await flood(url, 500, key)
        const before = rssMb(proc.pid)
        const samples: number[] = []
        const answered: Record<number, number> = {}
        for (let round = 0; round < FLOOD_ROUNDS; round++) {
          for (const [status, count] of Object.entries(await flood(url, REQUESTS_PER_ROUND, key)))
            answered[Number(status)] = (answered[Number(status)] ?? 0) + count
          samples.push(rssMb(proc.pid))
        }
        const requests = FLOOD_ROUNDS * REQUESTS_PER_ROUND
        console.log(
          `stdout unread: ${requests.toLocaleString('en')} requests (about ${Math.round((requests * 2100) / 1048576)} MiB of log lines); ` +
            `RSS ${before.toFixed(1)} MB before, then ${samples.map((mb) => mb.toFixed(1)).join(', ')} MB after each ${REQUESTS_PER_ROUND.toLocaleString('en')}`,
        )
        expect(answered).toEqual({
          200: requests / 2 - requests / 50 + requests / 10,
          401: requests / 50,
          404: requests / 2 - requests / 10,
        })
        // Lines kept whole would grow it by some 30 MiB: check:bounds holds it to 32 (a 1 MiB backlog, a settling runtime).
        reportFigure('RSS growth while stdout is blocked (MiB)', `${requests} requests`, Math.max(...samples) - before)
      }),
    STEP_TIMEOUT,
  )

  test(
    'once stdout is read again, a line says how many lines were dropped, and every request is either logged or counted',
    () =>
      withUnreadStdout(async ({ pipe, key, url }) => {
        const statuses = await flood(url, REQUESTS_PER_ROUND * 2, key)
        const requests = Object.values(statuses).reduce((sum, count) => sum + count, 0)
        const counted = await pipe.readUntil(/"msg":"log lines dropped/, 10_000)
        expect(counted).not.toBeNull()
        const dropped = droppedCountsIn(pipe.text).reduce((sum, count) => sum + count, 0)
        console.log(
          `stdout read again: ${requestLinesIn(pipe.text).toLocaleString('en')} request lines written, ${dropped.toLocaleString('en')} dropped and counted, of ${requests.toLocaleString('en')} requests`,
        )
        expect(dropped).toBeGreaterThan(0)
        expect(requestLinesIn(pipe.text) + dropped).toBe(requests)
        // Later lines are written again.
        await (await fetch(`${url}/written-again`)).arrayBuffer()
        expect(await pipe.readUntil(/"path":"\/written-again"/, 5_000)).not.toBeNull()
      }),
    STEP_TIMEOUT,
  )
})

describe('the first start makes no key it could not show', () => {
  const noKeyYet = async (cwd: string) => {
    const db = new Database(join(cwd, 'data', 'intake.db'), { readonly: true })
    try {
      return (db.query('SELECT count(*) AS n FROM api_keys').get() as { n: number }).n === 0
    } finally {
      db.close()
    }
  }

  /** The start that follows, with stdout read, prints a key, and that key works. */
  const nextStartPrintsAWorkingKey = async (cwd: string) => {
    const server = await startIntake(intake.path, { cwd })
    expect(new Set(keysIn(server.stdout())).size).toBe(1)
    expect((await request(`${server.url}/api/v1/forms`, { key: server.apiKey })).status).toBe(200)
    expect(await server.stop()).toBe(0)
  }

  /** A stdout of each kind that cannot show anything: its descriptor, once intake has it. */
  const unusableStdouts: Array<[string, (cwd: string) => number]> = [
    ['stdout is /dev/null (as a closed stdout becomes)', () => openSync('/dev/null', 'w')],
    [
      'the reader of stdout has closed it',
      (cwd) => {
        const pipe = unreadPipe(cwd)
        pipe.close()
        return pipe.writeFd
      },
    ],
  ]
  for (const [what, stdoutOf] of unusableStdouts) {
    test(
      `${what}: exit 1, one line on stderr, no key; the next start prints one`,
      async () => {
        const cwd = intake.tempDir()
        const stdout = stdoutOf(cwd)
        const proc = spawnWithStdout(intake.path, ['serve', '--port', '0'], { cwd, stdout })
        closeSync(stdout)
        const result = { code: await proc.exited, stderr: await new Response(proc.stderr).text() }
        expect(result.code).toBe(1)
        expect(result.stderr.trim().split('\n')).toHaveLength(1)
        expect(result.stderr).toContain('no key was made')
        expect(keysIn(result.stderr)).toEqual([])
        expect(await noKeyYet(cwd)).toBe(true)
        await nextStartPrintsAWorkingKey(cwd)
      },
      STEP_TIMEOUT,
    )
  }

  test(
    'stdout is a full pipe nobody reads: after the 10 s it waits, exit 1, one line on stderr, no key; the next start prints one',
    async () => {
      const cwd = intake.tempDir()
      const pipe = unreadPipe(cwd)
      try {
        // Fill the pipe before intake starts: its first write finds no room.
        const filler = openSync(join(cwd, 'stdout.fifo'), constants.O_WRONLY | constants.O_NONBLOCK)
        try {
          for (;;) writeSync(filler, Buffer.alloc(4096))
        } catch (error) {
          if ((error as { code?: string }).code !== 'EAGAIN') throw error
        } finally {
          closeSync(filler)
        }
        const startedAt = performance.now()
        const proc = spawnWithStdout(intake.path, ['serve', '--port', '0'], { cwd, stdout: pipe.writeFd })
        pipe.closeWriteEnd()
        const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
        console.log(
          `first start on a full stdout: exit ${code} after ${((performance.now() - startedAt) / 1000).toFixed(1)} s`,
        )
        expect(code).toBe(1)
        expect(stderr.trim().split('\n')).toHaveLength(1)
        expect(stderr).toContain('nothing read stdout for 10 s')
        pipe.readAvailable()
        expect(keysIn(pipe.text)).toEqual([])
        expect(await noKeyYet(cwd)).toBe(true)
      } finally {
        pipe.close()
      }
      await nextStartPrintsAWorkingKey(cwd)
    },
    STEP_TIMEOUT,
  )
})
