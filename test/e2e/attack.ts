/**
 * What the bounds tests watch while they attack the running executable: how
 * fast /healthz answers (a server whose event loop is held answers late), how
 * much memory the process holds, how many files it has open. And raw
 * connections, for what fetch will not send (a body that stops half-way).
 */
import { readdirSync, readFileSync } from 'node:fs'
import net from 'node:net'
import { join } from 'node:path'

/** The resident memory of a process, in MiB (Linux). */
export const residentMiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024

/** File descriptors a process has open (Linux): its sockets among them. */
export const openFiles = (pid: number) => readdirSync(`/proc/${pid}/fd`).length

export interface ServerFigures {
  probes: number
  maxMs: number
  p99Ms: number
  medianMs: number
  /** Probes that got no 200. */
  failed: number
  /** The most resident memory seen, in MiB. */
  peakMiB: number
}

/**
 * Asks `${url}/healthz` every `everyMs` until stopped, timing each answer,
 * and samples `pid`'s resident memory. It runs as a process of its own
 * (health-prober.ts), so the test's own work (building a 100 MiB upload, say)
 * never delays a probe and shows up as the server's latency.
 */
export function watchServer(url: string, pid: number, everyMs = 10) {
  const prober = Bun.spawn(
    [process.execPath, join(import.meta.dir, 'health-prober.ts'), url, String(pid), String(everyMs)],
    {
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'inherit',
    },
  )
  return {
    async stop(): Promise<ServerFigures> {
      prober.stdin.end()
      const [out] = await Promise.all([new Response(prober.stdout).text(), prober.exited])
      return JSON.parse(out) as ServerFigures
    },
  }
}

const MiB = 1024 * 1024

/** The form that takes the largest post there is: four files of up to 25 MiB. */
export const LARGEST_UPLOAD_FORM = {
  title: 'Scans',
  fields: [0, 1, 2, 3].map((i) => ({ key: `f${i}`, type: 'file', label: `Scan ${i}`, config: { max_size: 25 * MiB } })),
}

let uploadContent: Uint8Array | undefined

/** File `i` of upload `n`: 25 MiB less 4 KiB, the same bytes each time (so a download can be checked) but for its first two. */
export function largestUploadFile(n: number, i: number): Uint8Array {
  if (!uploadContent) {
    uploadContent = new Uint8Array(25 * MiB - 4096)
    const words = new Uint32Array(uploadContent.buffer, 0, uploadContent.length / 4)
    let state = 0x2545f491
    for (let at = 0; at < words.length; at++) {
      // xorshift32: cheap bytes that do not compress
      state ^= state << 13
      state ^= state >>> 17
      state ^= state << 5
      words[at] = state
    }
  }
  const file = uploadContent.slice()
  file[0] = n
  file[1] = i
  return file
}

/** Upload `n` to LARGEST_UPLOAD_FORM: its four files, 100 MiB less 16 KiB in all. */
export function largestUpload(n: number): FormData {
  const body = new FormData()
  for (let i = 0; i < 4; i++) body.append(`f${i}`, new File([largestUploadFile(n, i)], `scan-${n}-${i}.bin`))
  return body
}

/**
 * Runs an attacker script of this folder as a process of its own at the
 * lowest priority, so that the load it makes does not take the cores from
 * the server being measured; resolves with the JSON it prints last.
 */
export async function runAttacker<T>(script: string, args: string[]): Promise<T> {
  const attacker = Bun.spawn(['nice', '-n', '19', process.execPath, join(import.meta.dir, script), ...args], {
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const [out, code] = await Promise.all([new Response(attacker.stdout).text(), attacker.exited])
  if (code !== 0) throw new Error(`${script} exited with ${code}: ${out}`)
  return JSON.parse(out.trim().split('\n').at(-1)!) as T
}

/** A raw HTTP/1.1 connection: the test writes what it likes and reads whatever comes back. */
export interface RawConnection {
  socket: net.Socket
  /** Everything received so far. */
  received(): string
  /** The status code of the response, once its status line arrived. */
  status(): number | undefined
  closed: Promise<void>
  isClosed(): boolean
}

export function rawConnection(port: number, head: string): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    let received = ''
    let isClosed = false
    let closedResolve!: () => void
    const closed = new Promise<void>((r) => (closedResolve = r))
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(head)
      resolve({
        socket,
        received: () => received,
        status: () => {
          const match = /^HTTP\/1\.1 (\d{3})/.exec(received)
          return match ? Number(match[1]) : undefined
        },
        closed,
        isClosed: () => isClosed,
      })
    })
    socket.setNoDelay(true)
    socket.on('data', (chunk) => (received += chunk.toString('latin1')))
    socket.on('error', () => {})
    socket.on('close', () => {
      isClosed = true
      closedResolve()
    })
    socket.once('error', reject)
  })
}
