import type { Database } from '../../db/index.ts'
import type { Writer } from '../../db/writer.ts'
import type { Logger } from '../../lib/log.ts'
import type { FileSink } from '../../lib/form-data.ts'
import { newId } from '../../lib/ids.ts'
import type { Clock } from '../../lib/time.ts'

/**
 * Uploaded files' bytes, kept as chunks of at most FILE_CHUNK_BYTES: written
 * a chunk per turn of the event loop and read a chunk at a time, so that no file, however large,
 * holds the event loop or sits whole in memory while it moves (CONTRACT 13).
 *
 * A file's chunks are written while it arrives, before the answer that holds
 * them is recorded; until then (and again once that answer is deleted) they
 * are "unclaimed", and the sweep removes unclaimed chunks a few at a time.
 */

/** The most bytes one chunk holds: about 3 ms of the event loop to write here. */
const FILE_CHUNK_BYTES = 512 * 1024

/** An upload whose answer was not recorded within this long (a crash mid-way) is removed. */
const UNCLAIMED_UPLOAD_GRACE_MS = 3_600_000

/** Chunks removed per unit of work: each is up to FILE_CHUNK_BYTES of pages to free. */
const CHUNKS_REMOVED_PER_UNIT = 4

/** How often the sweeper looks when nobody wakes it. */
const SWEEP_INTERVAL_MS = 60_000

export function createFileStore(db: Database) {
  const markUnclaimed = db.query<never, [string, number]>('INSERT OR REPLACE INTO unclaimed_files (file_id, since) VALUES (?, ?)')
  const insertChunk = db.query<never, [string, number, Uint8Array]>('INSERT INTO file_chunks (file_id, seq, bytes) VALUES (?, ?, ?)')
  const claimQuery = db.query<never, [string]>('DELETE FROM unclaimed_files WHERE file_id = ?')
  const chunkQuery = db.query<{ bytes: Uint8Array }, [string, number]>('SELECT bytes FROM file_chunks WHERE file_id = ? AND seq = ?')
  const nextUnclaimedQuery = db.query<{ file_id: string }, [number]>(
    'SELECT file_id FROM unclaimed_files WHERE since <= ? ORDER BY since LIMIT 1',
  )
  const removeChunks = db.query<never, [string, string, number]>(
    'DELETE FROM file_chunks WHERE file_id = ? AND seq IN (SELECT seq FROM file_chunks WHERE file_id = ? ORDER BY seq LIMIT ?)',
  )
  return {
    /** Writes one chunk of an upload; the first one marks the file unclaimed (since `now`). One unit of work. */
    writeChunk(fileId: string, seq: number, bytes: Uint8Array, now: number): void {
      if (seq === 0) markUnclaimed.run(fileId, now)
      insertChunk.run(fileId, seq, bytes)
    },
    /** The recorded answer holds the file now (in the unit of work that records it). */
    claim(fileId: string): void {
      claimQuery.run(fileId)
    },
    /** No answer will hold the file: remove it at once. */
    unclaim(fileId: string): void {
      markUnclaimed.run(fileId, 0)
    },
    chunk(fileId: string, seq: number): Uint8Array | undefined {
      return chunkQuery.get(fileId, seq)?.bytes
    },
    /** An unclaimed file to remove: unclaimed since `before` or earlier. */
    nextUnclaimed(before: number): string | undefined {
      return nextUnclaimedQuery.get(before)?.file_id
    },
    /** Removes a few of the file's chunks; true when none is left (the file is then forgotten). One unit of work. */
    removeSome(fileId: string): boolean {
      if (removeChunks.run(fileId, fileId, CHUNKS_REMOVED_PER_UNIT).changes === CHUNKS_REMOVED_PER_UNIT) return false
      claimQuery.run(fileId)
      return true
    },
  }
}

export type FileStore = ReturnType<typeof createFileStore>

/**
 * Runs short pieces of synchronous work one per turn of the event loop, in
 * the order they come: however many uploads are being stored (and files
 * removed) at once, a turn writes one chunk, never one for each of them.
 */
function oneTaskPerTurn() {
  const waiting: Array<() => void> = []
  let scheduled = false
  const runNext = () => {
    waiting.shift()?.()
    scheduled = waiting.length > 0
    if (scheduled) setImmediate(runNext)
  }
  return function inTurn<T>(task: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      waiting.push(() => {
        try {
          resolve(task())
        } catch (error) {
          reject(error)
        }
      })
      if (!scheduled) {
        scheduled = true
        setImmediate(runNext)
      }
    })
  }
}

/** A file part of a form post, its bytes already written (unclaimed until an answer holds them). */
export interface IncomingFile {
  fileId: string
  filename: string
  /** The Content-Type the part declared; '' when none. */
  type: string
  /** Every byte the part carried; only the first `keep` of them (its field's max_size) were written. */
  size: number
}

/**
 * Where uploaded files' bytes go: written while they arrive, a chunk per turn
 * of the event loop (each a staged transaction, durable with the answer that
 * will hold them), and removed a few chunks per turn once no answer holds
 * them. The sweep runs when woken (a file was unclaimed) and once a minute
 * (uploads left by a crash).
 */
export function createFileStorage(options: { files: FileStore; writer: Writer; clock: Clock; logger: Logger }) {
  const { files, writer, clock, logger } = options
  const inTurn = oneTaskPerTurn()
  let running = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let sweeping: Promise<void> | undefined
  let sweepAgain = false

  async function sweep() {
    for (;;) {
      const fileId = files.nextUnclaimed(clock() - UNCLAIMED_UPLOAD_GRACE_MS)
      if (fileId === undefined || !running) return
      // Staged: a removal lost in a crash is simply made again.
      while (running && !(await inTurn(() => writer.stage(() => files.removeSome(fileId))))) {}
    }
  }

  function startSweep() {
    if (!running) return
    if (sweeping) {
      sweepAgain = true
      return
    }
    clearTimeout(timer)
    sweeping = sweep()
      .catch((error) => logger.error('removing unclaimed files failed', { error: error instanceof Error ? error.message : String(error) }))
      .finally(() => {
        sweeping = undefined
        if (!running) return
        if (sweepAgain) {
          sweepAgain = false
          startSweep()
        } else timer = setTimeout(startSweep, SWEEP_INTERVAL_MS)
      })
  }

  return {
    /**
     * The files of one form post as they arrive: `open` gives a part's sink,
     * which writes its first `keep` bytes (more are counted, not kept) a chunk
     * at a time; `settled` resolves once every chunk handed over so far is
     * written; `fileIds` names every file that has chunks (and so needs
     * claiming, or removing).
     */
    receive() {
      const fileIds: string[] = []
      const writing: Array<Promise<void>> = []
      const now = clock()
      return {
        fileIds,
        open(keep: number, filename: string, type: string): FileSink<IncomingFile> {
          const fileId = newId()
          let chunk = new Uint8Array(Math.min(keep, FILE_CHUNK_BYTES))
          let filled = 0
          let kept = 0
          let seq = 0
          const writeChunk = (bytes: Uint8Array) => {
            const chunkSeq = seq++
            if (chunkSeq === 0) fileIds.push(fileId)
            const written = inTurn(() => writer.stage(() => files.writeChunk(fileId, chunkSeq, bytes, now)))
            // Awaited by settled(); until then a failure must not count as unhandled.
            written.catch(() => {})
            writing.push(written)
          }
          return {
            write(bytes) {
              // Copied into whole chunks: a file sent a byte at a time never becomes a million small pieces.
              for (let offset = 0; offset < bytes.length && kept < keep; ) {
                const take = Math.min(bytes.length - offset, chunk.length - filled, keep - kept)
                chunk.set(bytes.subarray(offset, offset + take), filled)
                filled += take
                kept += take
                offset += take
                if (filled === chunk.length) {
                  writeChunk(chunk)
                  chunk = new Uint8Array(Math.min(keep - kept, FILE_CHUNK_BYTES))
                  filled = 0
                }
              }
            },
            end(size) {
              if (filled > 0) writeChunk(chunk.subarray(0, filled))
              return { fileId, filename, type, size }
            },
          }
        },
        async settled(): Promise<void> {
          while (writing.length > 0) await writing.shift()
        },
      }
    },
    /** No answer will hold these files: they are removed now. */
    async unclaim(fileIds: string[]): Promise<void> {
      if (fileIds.length === 0) return
      await writer.run(() => fileIds.forEach((fileId) => files.unclaim(fileId)))
      startSweep()
    },
    start() {
      running = true
      startSweep()
    },
    /** Files were unclaimed (their form deleted, say): remove them now. */
    wake: startSweep,
    async stop() {
      running = false
      clearTimeout(timer)
      await sweeping
    },
  }
}

export type FileStorage = ReturnType<typeof createFileStorage>
