import { createHash } from 'node:crypto'
import { CHUNKS_PER_BATCH, COPIED_TABLES, CopyFailed, type CopyProgress, type RowCounts, type Side } from './sides.ts'

/**
 * Before TO is committed: its row counts are FROM's, and every file's bytes
 * (its chunks in order, hashed) are FROM's. Both sides are read in file id
 * order (byte order on both stores), a batch at a time.
 */
export async function check(
  reader: Side,
  writer: Side,
  expected: RowCounts,
  context: {
    totalRows: number
    totalBytes: number
    progress?: (progress: CopyProgress) => void
    from: string
    to: string
  },
): Promise<void> {
  for (const table of COPIED_TABLES) {
    const found = await writer.count(table)
    if (found !== expected[table]) {
      throw new CopyFailed(
        `${context.to} would hold ${found} rows of ${table} where ${context.from} holds ${expected[table]}; nothing was committed`,
      )
    }
  }
  const fromFiles = fileDigests(reader)
  const toFiles = fileDigests(writer)
  let bytes = 0
  const report = () =>
    context.progress?.({
      phase: 'check',
      rows: context.totalRows,
      totalRows: context.totalRows,
      bytes,
      totalBytes: context.totalBytes,
    })
  report()
  for (;;) {
    const [a, b] = await Promise.all([fromFiles.next(), toFiles.next()])
    if (a.done && b.done) break
    const fileId = a.done ? b.value!.fileId : a.value.fileId
    if (a.done || b.done || a.value.fileId !== b.value.fileId || a.value.digest !== b.value.digest) {
      throw new CopyFailed(
        `The bytes of file ${fileId} differ between ${context.from} and ${context.to}; nothing was committed`,
      )
    }
    bytes += a.value.bytes
    report()
  }
}

/** Each file's id, SHA-256 of its chunks in order, and size: in file id order. */
async function* fileDigests(side: Side): AsyncGenerator<{ fileId: string; digest: string; bytes: number }> {
  let current: { fileId: string; hash: ReturnType<typeof createHash>; bytes: number } | undefined
  for await (const batch of side.batches('file_chunks', ['file_id', 'bytes'], {
    size: CHUNKS_PER_BATCH,
    orderBy: 'file_id, seq',
  })) {
    for (const [fileId, bytes] of batch as Array<[string, Uint8Array]>) {
      if (current && current.fileId !== fileId) {
        yield { fileId: current.fileId, digest: current.hash.digest('hex'), bytes: current.bytes }
        current = undefined
      }
      current ??= { fileId, hash: createHash('sha256'), bytes: 0 }
      current.hash.update(bytes)
      current.bytes += bytes.byteLength
    }
  }
  if (current) yield { fileId: current.fileId, digest: current.hash.digest('hex'), bytes: current.bytes }
}
