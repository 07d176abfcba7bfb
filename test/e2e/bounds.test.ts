/**
 * The attacks of the bounds issue, against the built executable, while
 * /healthz latency, memory and open files are watched (CONTRACT 13). What is
 * asserted is what the clients are told, that /healthz always answers and
 * that what was held is given back; how fast /healthz answered, the memory
 * and how soon slow bodies were cut are reported for bench/check-bounds.ts,
 * which holds them to the contract's bounds.
 */
import { describe, expect, test } from 'bun:test'
import { reportFigure } from '../figures.ts'
import {
  LARGEST_UPLOAD_FORM,
  largestUploadFile,
  openFiles,
  type RawConnection,
  rawConnection,
  residentMiB,
  runAttacker,
  type ServerFigures,
  watchServer,
} from './attack.ts'
import { type RunningIntake, startIntake, useBuiltBinary } from './binary.ts'

const binary = useBuiltBinary('intake-bounds-')
const MiB = 1024 * 1024

async function started(env: Record<string, string> = {}): Promise<RunningIntake & { key: string }> {
  const server = await startIntake(binary.path, { cwd: binary.tempDir(), env })
  return Object.assign(server, { key: server.apiKey! })
}

async function createForm(server: RunningIntake & { key: string }, body: unknown): Promise<{ id: string }> {
  const res = await fetch(`${server.url}/api/v1/forms`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(res.status).toBe(201)
  return (await res.json()) as { id: string }
}

const BOUNDARY = 'bounds-boundary'

/** /healthz always answered (a probe waits 10 s); how fast, and the memory, go to check:bounds. */
function judged(what: string, figures: ServerFigures) {
  expect(figures.failed).toBe(0)
  reportFigure('/healthz under attack, slowest (ms)', what, figures.maxMs)
  reportFigure('RSS under attack, peak (MiB)', what, figures.peakMiB)
}

describe('memory: uploads', () => {
  test('twelve uploads that stop after 98 MiB: two are received, ten refused at once with 503; /healthz answers', async () => {
    const server = await started()
    const form = await createForm(server, LARGEST_UPLOAD_FORM)
    const idle = residentMiB(server.proc.pid)
    const watch = watchServer(server.url, server.proc.pid)
    const head = `POST /f/${form.id} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${100 * MiB}\r\n\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="f0"; filename="scan.bin"\r\n\r\n`
    const filler = new Uint8Array(MiB).fill(0x61)
    const connections: RawConnection[] = await Promise.all(
      Array.from({ length: 12 }, () => rawConnection(server.port, head)),
    )
    // 98 MiB each, as fast as the server takes it; then nothing more.
    await Promise.all(
      connections.map(async (connection) => {
        for (let sent = 0; sent < 98 && !connection.isClosed(); sent++) {
          if (!connection.socket.write(filler))
            await Promise.race([new Promise((r) => connection.socket.once('drain', r)), connection.closed])
        }
      }),
    )
    await Bun.sleep(500)
    const holding = residentMiB(server.proc.pid)
    const figures = await watch.stop()
    const receiving = connections.filter((connection) => connection.status() === undefined && !connection.isClosed())
    const refused = connections.filter((connection) => connection.isClosed())
    // The 503 is sent before a byte of the body is read, then the connection closed; a client still
    // pushing its body may see the reset before the answer (the kernel discards what it had not read).
    const answered = refused.filter((connection) => connection.status() === 503)
    console.log(
      `12 stalled 100 MiB uploads: ${receiving.length} received, ${refused.length} refused (${answered.length} read the 503 before the reset); RSS idle ${idle.toFixed(0)} MiB, holding ${holding.toFixed(0)} MiB, peak ${figures.peakMiB} MiB; /healthz ${JSON.stringify(figures)}`,
    )
    expect(receiving).toHaveLength(2)
    expect(refused).toHaveLength(10)
    expect(answered.length).toBeGreaterThan(0)
    for (const connection of answered) expect(connection.received()).toMatch(/\r\nretry-after: 5\r\n/i)
    for (const connection of refused) expect([503, undefined]).toContain(connection.status())
    judged('12 stalled 100 MiB uploads', figures)

    // The two give up: what they held is given back, and an upload is taken again.
    for (const connection of receiving) connection.socket.destroy()
    const upload = new FormData()
    upload.append('f0', new File([new Uint8Array(MiB)], 'after.bin'))
    let status = 0
    for (let tries = 0; tries < 50 && status !== 303; tries++) {
      status = (await fetch(`${server.url}/f/${form.id}`, { method: 'POST', body: upload, redirect: 'manual' })).status
      if (status === 503) await Bun.sleep(100)
    }
    expect(status).toBe(303)
    expect(await server.stop()).toBe(0)
  }, 60_000)

  test('six valid 100 MiB posts at once: taken two at a time (the others asked to retry), each stored whole', async () => {
    const server = await started()
    const forms = await Promise.all(Array.from({ length: 6 }, () => createForm(server, LARGEST_UPLOAD_FORM)))
    const watch = watchServer(server.url, server.proc.pid)
    const sent = await runAttacker<{ statuses: number[]; retried: number; retryAfter: string[]; seconds: number }>(
      'uploader.ts',
      [server.url, ...forms.map((form) => form.id)],
    )
    const figures = await watch.stop()
    console.log(
      `6 x 100 MiB posts: stored in ${sent.seconds.toFixed(1)} s, ${sent.retried} refusals (503) retried; RSS peak ${figures.peakMiB} MiB, after ${residentMiB(server.proc.pid).toFixed(0)} MiB; /healthz ${JSON.stringify(figures)}`,
    )
    expect(sent.statuses).toEqual([303, 303, 303, 303, 303, 303])
    expect(sent.retried).toBeGreaterThan(0)
    expect(sent.retryAfter).toEqual(['5'])
    judged('6 x 100 MiB posts at once', figures)

    // Every file downloads whole: the last of the first post and the first of the last.
    for (const [n, i] of [
      [0, 3],
      [5, 0],
    ] as const) {
      const [response] = (await (
        await fetch(`${server.url}/api/v1/forms/${forms[n]!.id}/responses`, {
          headers: { authorization: `Bearer ${server.key}` },
        })
      ).json()) as Array<{
        data: Record<string, string>
      }>
      const url = response!.data[`f${i}`]!.replace(/^http:\/\/localhost:\d+/, server.url)
      const downloaded = new Uint8Array(
        await (await fetch(url, { headers: { authorization: `Bearer ${server.key}` } })).arrayBuffer(),
      )
      expect(Buffer.compare(downloaded, largestUploadFile(n, i))).toBe(0)
    }
    expect(await server.stop()).toBe(0)
  }, 120_000)
})

describe('memory: kept pages', () => {
  test('100 forms of 20,000 "&"-heavy options, each page opened twice: every page served (memory reported: kept pages are bounded in bytes)', async () => {
    const server = await started()
    // 100 selects of 200 options, just under the 1 MiB body limit: each page is about 8 MB of HTML.
    const optionLength = 40
    const fields = Array.from({ length: 100 }, (_, i) => ({
      key: `s${i}`,
      type: 'select',
      label: `Choice ${i}`,
      config: { options: Array.from({ length: 200 }, (_, j) => `${j}`.padEnd(optionLength, '&')) },
    }))
    const idle = residentMiB(server.proc.pid)
    const watch = watchServer(server.url, server.proc.pid)
    let pageBytes = 0
    for (let n = 0; n < 100; n++) {
      const form = await createForm(server, { title: `Form ${n}`, fields })
      for (let view = 0; view < 2; view++) {
        const page = await fetch(`${server.url}/f/${form.id}`)
        expect(page.status).toBe(200)
        pageBytes = (await page.arrayBuffer()).byteLength
      }
    }
    const figures = await watch.stop()
    const after = residentMiB(server.proc.pid)
    console.log(
      `100 forms with ${(pageBytes / MiB).toFixed(1)} MiB pages (${((100 * pageBytes) / MiB).toFixed(0)} MiB in all): RSS idle ${idle.toFixed(0)} MiB, peak ${figures.peakMiB} MiB, after ${after.toFixed(0)} MiB; /healthz ${JSON.stringify(figures)}`,
    )
    expect(pageBytes).toBeGreaterThan(7 * MiB)
    // Kept unbounded, the pages alone pass the bound (the attack found 1.87 GB with 160 such forms); kept ones take at most 64 MiB.
    judged('100 forms with 8 MiB pages', figures)
    expect(await server.stop()).toBe(0)
  }, 120_000)
})

describe('slow bodies: connections and file descriptors', () => {
  test('2,000 bodies sent a byte every 2 s are cut with 408 after 30 s and their descriptors freed; /healthz answers all the while', async () => {
    // As from many addresses: the per-address limit on public posts would otherwise refuse most of them first.
    const server = await started({ SERVICE_PUBLIC_RATE_LIMIT: '0' })
    const form = await createForm(server, { title: 'Slow', fields: [{ key: 'name', type: 'text', label: 'Name' }] })
    const baseline = openFiles(server.proc.pid)
    const head = `POST /f/${form.id} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nname=`
    const connections: RawConnection[] = []
    for (let batch = 0; batch < 20; batch++) {
      connections.push(...(await Promise.all(Array.from({ length: 100 }, () => rawConnection(server.port, head)))))
    }
    const watch = watchServer(server.url, server.proc.pid, 50)
    const dribble = setInterval(() => {
      for (const connection of connections) if (!connection.isClosed()) connection.socket.write('a')
    }, 2000)
    const startedAt = performance.now()
    await Bun.sleep(5000)
    const held = openFiles(server.proc.pid)
    await Promise.race([Promise.all(connections.map((connection) => connection.closed)), Bun.sleep(90_000)])
    const cutAfter = (performance.now() - startedAt) / 1000
    clearInterval(dribble)
    const figures = await watch.stop()
    const statuses = new Map<string, number>()
    for (const connection of connections) {
      const key = String(connection.status() ?? (connection.isClosed() ? 'closed without answer' : 'still open'))
      statuses.set(key, (statuses.get(key) ?? 0) + 1)
    }
    await Bun.sleep(200)
    const afterwards = openFiles(server.proc.pid)
    console.log(
      `2,000 slow bodies: open files ${baseline} before, ${held} while held, ${afterwards} after; all cut within ${cutAfter.toFixed(1)} s; answers ${JSON.stringify(Object.fromEntries(statuses))}; /healthz ${JSON.stringify(figures)}`,
    )
    expect(held).toBeGreaterThanOrEqual(baseline + 2000)
    expect(Object.fromEntries(statuses)).toEqual({ 408: 2000 })
    reportFigure('slow bodies all cut after (s)', '2,000 bodies, a byte every 2 s', cutAfter)
    // Every descriptor is given back (closing them may take a moment on a busy machine).
    for (let tries = 0; tries < 300 && openFiles(server.proc.pid) >= baseline + 20; tries++) await Bun.sleep(100)
    expect(openFiles(server.proc.pid)).toBeLessThan(baseline + 20)
    judged('2,000 slow bodies', figures)
    expect(await server.stop()).toBe(0)
  }, 180_000)

  test('a slow body sent where nothing reads it (no key, no such route) is answered and its connection closed at once', async () => {
    const server = await started()
    const targets = ['POST /api/v1/forms', 'POST /no/such/route', 'PUT /healthz', 'GET /healthz']
    for (const target of targets) {
      const connection = await rawConnection(
        server.port,
        `${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
      )
      const dribble = setInterval(() => connection.socket.write(' '), 100)
      await Promise.race([connection.closed, Bun.sleep(3000)])
      clearInterval(dribble)
      console.log(`${target} with a slow body: ${connection.status()}, closed: ${connection.isClosed()}`)
      expect(connection.status()).toBeDefined()
      expect(connection.isClosed()).toBe(true)
    }
    expect(await server.stop()).toBe(0)
  }, 30_000)
})
