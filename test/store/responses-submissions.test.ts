/** Every method of the responses store (answers, files, chunks) and of the submissions store (holds, receipts, drafts), on every driver. */
import { expect } from 'bun:test'
import { newId } from '../../src/lib/ids.ts'
import { FILE_CHUNK_BYTES } from '../../src/modules/responses/store/index.ts'
import type { Draft, HeldFile } from '../../src/modules/submissions/store/index.ts'
import { formRecord, runOnEveryDriver, type StoreCase, T0 } from './drivers.ts'

type World = Parameters<StoreCase['run']>[0]

async function activeForm({ store, account }: World): Promise<string> {
  const form = formRecord(await account())
  await store.transaction((tx) => tx.forms.insert(form))
  return form.id
}

/** Bytes that tell their place: byte i is (i * 7 + salt) mod 256. */
const bytes = (length: number, salt = 0) => Uint8Array.from({ length }, (_, i) => (i * 7 + salt) % 256)

const responseCases: StoreCase[] = [
  {
    name: 'insert claims its files; find, listForForm, file and files read the answer; chunks come back byte for byte',
    async run(world) {
      const { store } = world
      const formId = await activeForm(world)
      const fileId = newId()
      const [first, second] = [bytes(FILE_CHUNK_BYTES), bytes(1000, 3)]
      await store.transaction(async (tx) => {
        await tx.responses.writeChunk(fileId, 0, first, T0)
        await tx.responses.writeChunk(fileId, 1, second, T0)
      })
      const response = {
        id: newId(),
        formId,
        data: { name: 'Ada \u{1F600}', count: 3, yes: true, tags: ['a', 'b'] },
        ip: '192.0.2.1',
        userAgent: 'test',
        submittedAt: T0 + 1,
      }
      const file = {
        fieldKey: 'file',
        name: 'a.bin',
        contentType: 'application/pdf',
        size: first.length + 1000,
        fileId,
      }
      await store.transaction((tx) => tx.responses.insert(response, [file]))
      expect(await store.responses.find(formId, response.id)).toEqual(response)
      // In the form's field order, as given (not sorted, as jsonb would).
      expect(Object.keys((await store.responses.find(formId, response.id))!.data)).toEqual([
        'name',
        'count',
        'yes',
        'tags',
      ])
      expect(await store.responses.find(newId(), response.id)).toBeUndefined()
      expect(await store.responses.listForForm(formId)).toEqual([response])
      expect(await store.responses.listForForm(newId())).toEqual([])
      expect(await store.responses.file(formId, response.id, 'file')).toEqual({
        name: 'a.bin',
        contentType: 'application/pdf',
        size: file.size,
        fileId,
      })
      expect(await store.responses.file(formId, response.id, 'other')).toBeUndefined()
      expect(await store.responses.files(formId, response.id)).toEqual([file])
      expect(await store.responses.chunk(fileId, 0)).toEqual(first)
      expect(await store.responses.chunk(fileId, 1)).toEqual(second)
      expect(await store.responses.chunk(fileId, 2)).toBeUndefined()
      // Claimed by the answer: the sweep leaves it, however old.
      expect(await store.transaction((tx) => tx.responses.removeIdleChunks(T0 + 3_600_000, 10))).toBe(false)
    },
  },
  {
    name: 'incompleteFiles: a gap in the chunks, or bytes adding up to other than the size',
    async run({ store }) {
      const [whole, gap, short, none] = [newId(), newId(), newId(), newId()]
      await store.transaction(async (tx) => {
        await tx.responses.writeChunk(whole, 0, bytes(10), T0)
        await tx.responses.writeChunk(whole, 1, bytes(5), T0)
        await tx.responses.writeChunk(gap, 0, bytes(10), T0)
        await tx.responses.writeChunk(gap, 2, bytes(10), T0)
        await tx.responses.writeChunk(short, 0, bytes(10), T0)
      })
      const incomplete = await store.responses.incompleteFiles([
        { fileId: whole, size: 15 },
        { fileId: gap, size: 20 },
        { fileId: short, size: 11 },
        { fileId: none, size: 1 },
      ])
      expect(incomplete.toSorted()).toEqual([gap, short, none].toSorted())
      expect(await store.responses.incompleteFiles([{ fileId: newId(), size: 0 }])).toEqual([])
      expect(await store.responses.incompleteFiles([])).toEqual([])
    },
  },
  {
    name: 'the sweep: removeIdleChunks takes the file stamped longest ago, a few chunks at a time; stamps and claims keep files',
    async run({ store }) {
      const [older, newer, claimed, dropped] = [newId(), newId(), newId(), newId()]
      await store.transaction(async (tx) => {
        for (let seq = 0; seq < 3; seq++) await tx.responses.writeChunk(older, seq, bytes(4, seq), T0)
        await tx.responses.writeChunk(newer, 0, bytes(4), T0 + 10)
        await tx.responses.writeChunk(claimed, 0, bytes(4), T0)
        await tx.responses.writeChunk(dropped, 0, bytes(4), T0 + 50)
        await tx.responses.claimFiles([claimed])
      })
      // Nothing stamped at or before the limit: nothing removed.
      expect(await store.transaction((tx) => tx.responses.removeIdleChunks(T0 - 1, 10))).toBe(false)
      expect(await store.transaction((tx) => tx.responses.removeIdleChunks(T0, 2))).toBe(true)
      expect(await store.responses.chunk(older, 0)).toBeUndefined()
      expect(await store.responses.chunk(older, 2)).toEqual(bytes(4, 2))
      // The stamp moves with stampFiles: the newer file is still arriving.
      await store.transaction((tx) => tx.responses.stampFiles([newer], T0 + 100))
      expect(await store.transaction((tx) => tx.responses.removeIdleChunks(T0 + 20, 10))).toBe(true)
      expect(await store.responses.chunk(older, 2)).toBeUndefined()
      expect(await store.transaction((tx) => tx.responses.removeIdleChunks(T0 + 20, 10))).toBe(false)
      expect(await store.responses.chunk(newer, 0)).toEqual(bytes(4))
      // unclaimFiles: gone at the next sweep, whatever its stamp said; a chunk landing later keeps it so.
      await store.transaction(async (tx) => {
        await tx.responses.unclaimFiles([dropped])
        await tx.responses.writeChunk(dropped, 1, bytes(4), T0 + 500)
      })
      expect(await store.transaction((tx) => tx.responses.removeIdleChunks(T0 + 20, 10))).toBe(true)
      expect(await store.responses.chunk(dropped, 0)).toBeUndefined()
      expect(await store.responses.chunk(dropped, 1)).toBeUndefined()
      expect(await store.responses.chunk(claimed, 0)).toEqual(bytes(4))
      expect(await store.responses.chunk(newer, 0)).toEqual(bytes(4))
    },
  },
]

const hold = (formId: string, size: number, overrides: Partial<HeldFile> = {}): HeldFile => ({
  id: newId(),
  formId,
  fieldKey: 'file',
  name: 'a.txt',
  contentType: 'text/plain',
  size,
  fileId: newId(),
  heldUntil: T0 + 100,
  ...overrides,
})

const submissionCases: StoreCase[] = [
  {
    name: 'hold keeps a file while the form is active and within the bytes; heldFile reads it until it lapses; release lets go',
    async run(world) {
      const { store } = world
      const formId = await activeForm(world)
      const first = hold(formId, 60)
      await store.transaction((tx) => tx.responses.writeChunk(first.fileId, 0, bytes(60), T0))
      expect(await store.transaction((tx) => tx.submissions.hold(first, T0, 100))).toBe(true)
      expect(await store.transaction((tx) => tx.submissions.hold(hold(formId, 41), T0, 100))).toBe(false)
      expect(await store.transaction((tx) => tx.submissions.hold(hold(formId, 40), T0, 100))).toBe(true)
      // A lapsed hold counts no more.
      expect(await store.transaction((tx) => tx.submissions.hold(hold(formId, 60), T0 + 100, 100))).toBe(true)
      expect(await store.submissions.heldFile(formId, 'file', first.id, T0 + 99)).toEqual(first)
      expect(await store.submissions.heldFile(formId, 'file', first.id, T0 + 100)).toBeUndefined()
      expect(await store.submissions.heldFile(formId, 'other', first.id, T0)).toBeUndefined()
      // Held (the page claims its chunks beside the hold), the sweep leaves them.
      await store.transaction((tx) => tx.responses.claimFiles([first.fileId]))
      expect(await store.transaction((tx) => tx.responses.removeIdleChunks(T0 + 1000, 10))).toBe(false)
      await store.transaction((tx) => tx.submissions.release(formId, 'file', first.id))
      expect(await store.submissions.heldFile(formId, 'file', first.id, T0)).toBeUndefined()
      // Released, a trigger unclaims them: the sweep takes them.
      expect(await store.transaction((tx) => tx.responses.removeIdleChunks(T0 + 1000, 10))).toBe(true)
      expect(await store.responses.chunk(first.fileId, 0)).toBeUndefined()
      // Not on a form that no longer takes answers.
      await store.transaction((tx) => tx.forms.setStatus(formId, 'cancelled', T0))
      expect(await store.transaction((tx) => tx.submissions.hold(hold(formId, 1), T0, 100))).toBe(false)
    },
  },
  {
    name: 'releaseAll lets go of every hold of the form, and only of that form',
    async run(world) {
      const { store } = world
      const [formId, otherForm] = [await activeForm(world), await activeForm(world)]
      const holds = [hold(formId, 1), hold(formId, 1, { fieldKey: 'b' }), hold(otherForm, 1)]
      await store.transaction(async (tx) => {
        for (const h of holds) expect(await tx.submissions.hold(h, T0, 100)).toBe(true)
        await tx.submissions.releaseAll(formId)
      })
      expect(await store.submissions.heldFile(formId, 'file', holds[0]!.id, T0)).toBeUndefined()
      expect(await store.submissions.heldFile(formId, 'b', holds[1]!.id, T0)).toBeUndefined()
      expect(await store.submissions.heldFile(otherForm, 'file', holds[2]!.id, T0)).toEqual(holds[2])
    },
  },
  {
    name: "receipts: spent once, only by the form's token, only before they expire",
    async run(world) {
      const { store } = world
      const formId = await activeForm(world)
      await store.transaction(async (tx) => {
        await tx.submissions.rememberReceipt({ tokenHash: 'r1', formId, expiresAt: T0 + 10 })
        await tx.submissions.rememberReceipt({ tokenHash: 'r2', formId, expiresAt: T0 + 10 })
      })
      expect(await store.transaction((tx) => tx.submissions.spendReceipt(newId(), 'r1', T0))).toBe(false)
      expect(await store.transaction((tx) => tx.submissions.spendReceipt(formId, 'r1', T0))).toBe(true)
      expect(await store.transaction((tx) => tx.submissions.spendReceipt(formId, 'r1', T0))).toBe(false)
      expect(await store.transaction((tx) => tx.submissions.spendReceipt(formId, 'r2', T0 + 10))).toBe(false)
    },
  },
  {
    name: "drafts: saved with their answers and files, read until they lapse; only the form's newest are kept",
    async run(world) {
      const { store } = world
      const formId = await activeForm(world)
      const draft = (createdAt: number): Draft => ({
        id: newId(),
        formId,
        answers: [
          ['name', 'Ada'],
          ['name', 'é\n2'],
        ],
        files: { file: { hold: newId(), name: 'a.txt', size: 3 } },
        createdAt,
        heldUntil: T0 + 100,
      })
      const drafts = [draft(T0), draft(T0 + 1), draft(T0 + 2)]
      for (const d of drafts) await store.transaction((tx) => tx.submissions.saveDraft(d, 2))
      expect(await store.submissions.draft(formId, drafts[0]!.id, T0)).toBeUndefined()
      expect(await store.submissions.draft(formId, drafts[1]!.id, T0)).toEqual(drafts[1])
      expect(await store.submissions.draft(formId, drafts[2]!.id, T0 + 99)).toEqual(drafts[2])
      expect(await store.submissions.draft(formId, drafts[2]!.id, T0 + 100)).toBeUndefined()
      expect(await store.submissions.draft(newId(), drafts[2]!.id, T0)).toBeUndefined()
    },
  },
  {
    name: 'anyLapsed and forgetLapsed: holds, receipts and drafts lapsed by a time, and those alone',
    async run(world) {
      const { store } = world
      const formId = await activeForm(world)
      expect(await store.submissions.anyLapsed(T0 + 1000)).toBe(false)
      const live = hold(formId, 1, { heldUntil: T0 + 200 })
      await store.transaction(async (tx) => {
        await tx.submissions.hold(hold(formId, 1, { heldUntil: T0 + 10 }), T0, 100)
        await tx.submissions.hold(live, T0, 100)
        await tx.submissions.rememberReceipt({ tokenHash: 'r', formId, expiresAt: T0 + 20 })
        await tx.submissions.saveDraft(
          { id: newId(), formId, answers: [], files: {}, createdAt: T0, heldUntil: T0 + 30 },
          5,
        )
      })
      expect(await store.submissions.anyLapsed(T0 + 9)).toBe(false)
      expect(await store.submissions.anyLapsed(T0 + 10)).toBe(true)
      expect(await store.transaction((tx) => tx.submissions.forgetLapsed(T0 + 30))).toBe(3)
      expect(await store.submissions.anyLapsed(T0 + 30)).toBe(false)
      expect(await store.submissions.heldFile(formId, 'file', live.id, T0)).toEqual(live)
      expect(await store.transaction((tx) => tx.submissions.forgetLapsed(T0 + 30))).toBe(0)
    },
  },
]

runOnEveryDriver('the responses store', responseCases)
runOnEveryDriver('the submissions store', submissionCases)
