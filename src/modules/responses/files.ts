import type { FileSink } from '../../lib/form-data.ts'
import { newId } from '../../lib/ids.ts'
import type { Logger } from '../../lib/log.ts'
import type { Clock } from '../../lib/time.ts'
import type { Store, Transaction } from '../../stores.ts'
import { FILE_CHUNK_BYTES } from './store/index.ts'

/**
 * Uploaded files' bytes, kept as chunks of at most FILE_CHUNK_BYTES: written
 * a chunk at a time while they arrive (one write per turn of the event loop on
 * SQLite: see db/sqlite/writer.ts) and read a chunk at a time, so that no
 * file, however large, holds the event loop or sits whole in memory while it
 * moves (CONTRACT 13).
 */

/**
 * An upload nothing has written to, and no answer has claimed, for this long
 * (a crash mid-way) is removed. Its stamp moves with every chunk, and every
 * STAMP_INTERVAL_MS while its post still arrives: at the slowest pace a body
 * may keep (1 KiB/s) a chunk takes under 9 minutes, so a file still arriving
 * never looks idle for an hour.
 */
const UNCLAIMED_UPLOAD_GRACE_MS = 3_600_000

/**
 * How often the files of a post still arriving are stamped together: a file
 * that has arrived waits for the rest of its post (another file, or bytes
 * beyond a field's max_size that are counted, not kept).
 */
const STAMP_INTERVAL_MS = 300_000

/** Chunks removed per unit of work: each is up to FILE_CHUNK_BYTES of pages to free. */
const CHUNKS_REMOVED_PER_UNIT = 4

/** How often the sweeper looks when nobody wakes it. */
const SWEEP_INTERVAL_MS = 60_000

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
 * (uploads left by a crash, files held across a 422 whose hour is up).
 */
export function createFileStorage(options: {
  store: Store
  clock: Clock
  logger: Logger
  /** Lets go of what has lapsed and may hold files (files kept across a 422), before each sweep. */
  forgetLapsed?: () => Promise<unknown>
}) {
  const { store, clock, logger } = options
  let running = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let sweeping: Promise<void> | undefined
  let sweepAgain = false

  async function sweep() {
    // A lapsed hold's file is unclaimed as the hold goes: this sweep then removes it.
    await options.forgetLapsed?.()
    // Staged: a removal lost in a crash is simply made again. Each unit chooses its file itself, so a
    // file written to or claimed since the last unit is not touched.
    const removeSome = () =>
      store.stagedTransaction((tx) =>
        tx.responses.removeIdleChunks(clock() - UNCLAIMED_UPLOAD_GRACE_MS, CHUNKS_REMOVED_PER_UNIT),
      )
    while (running && (await removeSome())) {}
  }

  function startSweep() {
    if (!running) return
    if (sweeping) {
      sweepAgain = true
      return
    }
    clearTimeout(timer)
    sweeping = sweep()
      .catch((error) =>
        logger.error('removing unclaimed files failed', {
          error: error instanceof Error ? error.message : String(error),
        }),
      )
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
      let stampedAt = clock()
      const staged = (work: (tx: Transaction) => Promise<void>) => {
        const written = store.stagedTransaction(work)
        // Awaited by settled(); until then a failure must not count as unhandled.
        written.catch(() => {})
        writing.push(written)
      }
      /** Bytes arrived: every STAMP_INTERVAL_MS the post's files are stamped together. */
      const arrived = () => {
        const now = clock()
        if (now - stampedAt < STAMP_INTERVAL_MS) return
        stampedAt = now
        if (fileIds.length > 0) {
          const stamped = [...fileIds]
          staged((tx) => tx.responses.stampFiles(stamped, now))
        }
      }
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
            const now = clock()
            staged((tx) => tx.responses.writeChunk(fileId, chunkSeq, bytes, now))
          }
          return {
            write(bytes) {
              arrived()
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
      await store.transaction((tx) => tx.responses.unclaimFiles(fileIds))
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

/** Of these uploads, those missing bytes (lost chunks): in the caller's transaction, which claims the rest. */
export const incompleteUploads = (tx: Transaction, files: Array<{ fileId: string; size: number }>) =>
  tx.responses.incompleteFiles(files)

/** Marks uploads as taken by a held file, so the sweep of unclaimed uploads leaves them be. */
export const claimUploads = (tx: Transaction, fileIds: string[]) => tx.responses.claimFiles(fileIds)
