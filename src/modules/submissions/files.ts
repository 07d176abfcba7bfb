import { randomBytes } from 'node:crypto'
import { FORM_FILES_MAX_SIZE } from '../../fields/file.ts'
import { fieldTypes } from '../../fields/index.ts'
import { Upload } from '../../fields/types.ts'
import { type Problem, pointerSegment } from '../../lib/errors.ts'
import type { Clock } from '../../lib/time.ts'
import type { Store } from '../../stores.ts'
import type { StoredForm } from '../forms/store/index.ts'
import { claimUploads, incompleteUploads } from '../responses/files.ts'
import type { HeldFile } from './store/index.ts'

/**
 * The files of a form post: the names they are stored under, and the holds
 * that keep those a 422 refused for the next try (CONTRACT 11).
 */

/** How long a file accepted in a post refused with 422 is kept for the next post (CONTRACT 11). */
export const HOLD_MS = 3_600_000

/** 16 random bytes, base64url: a hold id or a draft id is as hard to guess as a key. */
export const HOLD_ID = /^[A-Za-z0-9_-]{22}$/

/** A file kept from a refused post, as the page shows it. */
export interface HeldFileView {
  /** The hold id the page posts back (`_held_<key>`). */
  id: string
  name: string
  size: number
}

/** What a form post says about the files kept from its last try, by field key. */
export interface PostedHolds {
  /** `_held_<key>`: the hold id the page showed. */
  ids: Map<string, string>
  /** `_remove_<key>` ticked. */
  removed: Set<string>
}

/** No file chosen: nothing sent, a browser's empty nameless part, or (from a client that posts without multipart) empty text. */
const isNoFile = (value: unknown) =>
  value === undefined ||
  (typeof value === 'string' && value.trim() === '') ||
  (value instanceof Upload && value.name === '' && value.size === 0)

/** What the submission service does with held files (it hands these on). */
export function fileHolds(store: Store, clock: Clock) {
  return {
    /**
     * Puts the files the page kept from the last try back into `values`: for
     * each file field with no new file, a live hold of this form and field
     * that the post names and does not remove. A hold the post removes, or
     * replaces with a new file, is let go. Holds of other forms or fields,
     * lapsed ones and malformed ids are ignored (the field is then empty).
     * Returns the holds used, by field key.
     */
    async useHolds(
      form: StoredForm,
      values: Record<string, unknown>,
      posted: PostedHolds,
    ): Promise<Map<string, HeldFile>> {
      const used = new Map<string, HeldFile>()
      const released: Array<{ key: string; id: string }> = []
      const now = clock()
      for (const field of form.fields) {
        if (field.type !== 'file') continue
        const id = posted.ids.get(field.key)
        if (id === undefined || !HOLD_ID.test(id)) continue
        if (posted.removed.has(field.key) || !isNoFile(values[field.key])) {
          released.push({ key: field.key, id })
          continue
        }
        const held = await store.submissions.heldFile(form.id, field.key, id, now)
        if (!held) continue
        used.set(field.key, held)
        values[field.key] = new Upload(held.name, held.contentType, held.size, held.fileId)
      }
      if (released.length > 0) {
        await store.transaction(async (tx) => {
          for (const { key, id } of released) await tx.submissions.release(form.id, key, id)
        })
      }
      return used
    },

    /**
     * After a 422: keeps every new upload that passed its own field's checks
     * for the next try (for HOLD_MS; while the form's held files come to at
     * most FORM_FILES_MAX_SIZE), and the holds this try used, each only with
     * every byte of it in the database. Returns what the page shows, by field
     * key, the new holds' file ids (no longer the post's to remove), and a
     * problem for each file that lost bytes (let go: to be chosen again).
     */
    async holdAccepted(
      form: StoredForm,
      values: Record<string, unknown>,
      used: Map<string, HeldFile>,
    ): Promise<{ held: Record<string, HeldFileView>; fileIds: string[]; lost: Problem[] }> {
      const held: Record<string, HeldFileView> = Object.create(null)
      const fresh: HeldFile[] = []
      const reused: HeldFile[] = []
      const now = clock()
      for (const field of form.fields) {
        if (field.type !== 'file') continue
        const value = values[field.key]
        const hold = used.get(field.key)
        if (hold) {
          reused.push(hold)
          continue
        }
        if (!(value instanceof Upload) || isNoFile(value)) continue
        // Kept under the name the answer would store (PostgreSQL's text holds no NUL), and only when the
        // file, so named, passes its field's checks: the next post checks it again as it is kept.
        if (CONTROL_CHARACTERS.test(value.type)) continue
        const asKept = new Upload(safeFileName(value.name), value.type, value.size, value.fileId)
        const config = field.config ?? {}
        const required = field.required ?? false
        if ((await fieldTypes.file!.parse(value, config, required)).kind !== 'upload') continue
        if ((await fieldTypes.file!.parse(asKept, config, required)).kind !== 'upload') continue
        fresh.push({
          id: randomBytes(16).toString('base64url'),
          formId: form.id,
          fieldKey: field.key,
          name: asKept.name,
          contentType: asKept.type,
          size: asKept.size,
          fileId: value.fileId,
          heldUntil: now + HOLD_MS,
        })
      }
      if (fresh.length === 0 && reused.length === 0) return { held, fileIds: [], lost: [] }
      // Only a file whose every byte is there is kept: one that lost chunks is let go, and asked for again.
      const { kept, taken, lost } = await store.transaction(async (tx) => {
        const incomplete = new Set(await incompleteUploads(tx, [...fresh, ...reused]))
        const accepted: HeldFile[] = []
        for (const file of reused) {
          if (incomplete.has(file.fileId)) await tx.submissions.release(form.id, file.fieldKey, file.id)
          else accepted.push(file)
        }
        const taken: HeldFile[] = []
        for (const file of fresh) {
          if (!incomplete.has(file.fileId) && (await tx.submissions.hold(file, now, FORM_FILES_MAX_SIZE)))
            taken.push(file)
        }
        await claimUploads(
          tx,
          taken.map((file) => file.fileId),
        )
        return {
          kept: [...accepted, ...taken],
          taken,
          lost: [...fresh, ...reused].filter((file) => incomplete.has(file.fileId)),
        }
      })
      for (const file of kept) held[file.fieldKey] = { id: file.id, name: file.name, size: file.size }
      return {
        held,
        fileIds: taken.map((file) => file.fileId),
        lost: lost.map((file) => fileLostProblem(file.fieldKey)),
      }
    },
  }
}

/**
 * A file whose bytes did not all reach the database: the page asks for the
 * file again (its "choose a file" message), keeping everything else.
 */
export const fileLostProblem = (key: string): Problem => ({
  path: `/${pointerSegment(key)}`,
  message: 'The file did not arrive whole; choose it again',
  code: 'required',
})

const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/

/**
 * Characters a file name loses before it is stored: C0 controls and DEL, and
 * Unicode's bidi controls (U+061C, U+200E, U+200F, U+202A-U+202E,
 * U+2066-U+2069), with which `\u202Ecod.exe` shows as "exe.doc" (CONTRACT 13a).
 */
const FILE_NAME_STRIPPED = /[\u0000-\u001f\u007f\p{Bidi_Control}]/gu

/**
 * The name a browser-sent file is stored, shown and downloaded under: its
 * last path segment, without control characters; never empty. Every path
 * that takes a file name goes through here.
 */
export function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).at(-1)!.replace(FILE_NAME_STRIPPED, '').trim()
  return base.slice(0, 255) || 'upload'
}

/** The declared media type when it is one, else the generic binary type. */
export function safeContentType(type: string): string {
  return /^[\w.+-]+\/[\w.+-]+$/.test(type) ? type.toLowerCase() : 'application/octet-stream'
}
