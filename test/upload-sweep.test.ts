/**
 * A file still arriving is never swept, and an answer is acknowledged only
 * with every byte of every file it holds in the database (CONTRACT 13a).
 * Uploads left by a crash go an hour after their last byte was written; here
 * the test's clock moves that hour while a post arrives slowly (as the pace
 * rule allows: a 512 KiB chunk may take over 8 minutes at 1 KiB/s).
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { translator } from '../src/i18n/index.ts'
import { closing, filePartHead, startPost, textPart } from './hand-fed.ts'
import { inputsOf, pageText, parsePage } from './html.ts'
import { createTestContext, postForm, type TestContext, until } from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())

const KiB = 1024
const MINUTE = 60_000
const { t: words } = translator('en')

const NAME = { key: 'name', type: 'text', label: 'Your name', required: true }
const NOTES = { key: 'notes', type: 'textarea', label: 'Notes' }
const DOC = { key: 'doc', type: 'file', label: 'Document', config: { max_size: 2 * 1024 * KiB } }

const chunkCount = async (fileId?: string) => {
  const [row] =
    fileId === undefined
      ? await t.sql('SELECT CAST(count(*) AS INTEGER) AS n FROM file_chunks')
      : await t.sql('SELECT CAST(count(*) AS INTEGER) AS n FROM file_chunks WHERE file_id = ?', fileId)
  return Number(row!.n)
}

/** The ids of files that have chunks, but for `except`. */
const fileIds = async (except: string[] = []) =>
  (await t.sql('SELECT DISTINCT file_id FROM file_chunks'))
    .map((row) => row.file_id as string)
    .filter((id) => !except.includes(id))

/**
 * An upload a crash left behind, an hour and more old (unclaimed since `since`):
 * the sweep removes it. Once it is gone, the sweep has looked at every file unclaimed before it.
 */
async function abandonedUpload(since: number) {
  await t.sql('INSERT INTO file_chunks (file_id, seq, bytes) VALUES (?, 0, ?)', 'abandoned', new Uint8Array([1, 2, 3]))
  await t.sql('INSERT INTO unclaimed_files (file_id, since) VALUES (?, ?)', 'abandoned', since)
}

/** Runs the file sweep once, as the server does every minute, and waits until it has gone past `abandonedUpload`. */
async function sweepOnce() {
  t.background.start()
  await until(async () => (await chunkCount('abandoned')) === 0, 5000, 'the sweep removing the abandoned upload')
  await t.background.stop()
}

/** The bytes of the file the form's answer holds for `key`. */
async function downloaded(formId: string, key: string): Promise<Buffer> {
  const [response] = (await t.api.get(`/forms/${formId}/responses`)).body as Array<{ data: Record<string, string> }>
  const res = await t.app.handle(new Request(response!.data[key]!, { headers: { authorization: `Bearer ${t.key}` } }))
  expect(res.status).toBe(200)
  return Buffer.from(await res.arrayBuffer())
}

/** The 422 page marks `key` (and only it) as needing a fix, with `message` beside the field. */
async function expectOnlyFieldError(html: string, key: string, message: string) {
  const page = await parsePage(html)
  expect([...page.summaryLinks().keys()]).toEqual([key])
  const control = page.control(key)
  expect(control.attrs['aria-invalid']).toBe('true')
  expect(page.describedBy(control).map((id) => page.byId(id).text)).toContainEqual(expect.stringContaining(message))
}

describe('a file still arriving is never swept', () => {
  test("an upload that takes longer than the sweep's hour, a sweep running mid-way, keeps every chunk: 303, and the download is the bytes sent", async () => {
    const form = await t.api.createForm({ fields: [NAME, DOC] })
    const bytes = randomBytes(1536 * KiB + 1000)
    const head = textPart('name', 'Ada') + filePartHead('doc', 'slow.bin')
    const post = startPost(t, form.id, head.length + bytes.length + closing.length)
    const startedAt = t.clock()
    post.body.send(head)
    post.body.send(bytes.subarray(0, 600 * KiB))
    await until(async () => (await chunkCount()) === 1, 5000, 'the first chunk written')
    const [fileId] = await fileIds()
    // 40 minutes a chunk: slower than anything the pace rule lets through, and the post now spans 80.
    t.clock.advance(40 * MINUTE)
    post.body.send(bytes.subarray(600 * KiB, 1200 * KiB))
    await until(async () => (await chunkCount(fileId)) === 2, 5000, 'the second chunk written')
    t.clock.advance(40 * MINUTE)

    // An hour and more after the upload began (but not after its last chunk), the sweep runs.
    await abandonedUpload(startedAt + MINUTE)
    await sweepOnce()
    expect(await chunkCount(fileId)).toBe(2)

    post.body.send(bytes.subarray(1200 * KiB))
    post.body.send(closing)
    post.body.end()
    expect((await post.response).status).toBe(303)
    expect((await downloaded(form.id, 'doc')).equals(bytes)).toBe(true)
  })

  test('a file of the post that arrived early is kept while a later one still arrives, however long that takes', async () => {
    const form = await t.api.createForm({ fields: [NAME, { ...DOC, key: 'first' }, { ...DOC, key: 'second' }] })
    const early = randomBytes(700 * KiB)
    const late = randomBytes(1300 * KiB)
    const head = textPart('name', 'Ada') + filePartHead('first', 'early.bin')
    const middle = `\r\n${filePartHead('second', 'late.bin')}`
    const post = startPost(t, form.id, head.length + early.length + middle.length + late.length + closing.length)
    const startedAt = t.clock()
    post.body.send(head)
    post.body.send(early)
    post.body.send(middle)
    post.body.send(late.subarray(0, 600 * KiB))
    // The early file's two chunks and the late one's first.
    await until(async () => (await chunkCount()) === 3, 5000, 'both files begun')
    t.clock.advance(40 * MINUTE)
    post.body.send(late.subarray(600 * KiB, 1200 * KiB))
    await until(async () => (await chunkCount()) === 4, 5000, "the late file's second chunk written")
    t.clock.advance(40 * MINUTE)

    await abandonedUpload(startedAt + MINUTE)
    await sweepOnce()

    post.body.send(late.subarray(1200 * KiB))
    post.body.send(closing)
    post.body.end()
    expect((await post.response).status).toBe(303)
    expect((await downloaded(form.id, 'first')).equals(early)).toBe(true)
    expect((await downloaded(form.id, 'second')).equals(late)).toBe(true)
  })

  test('an upload left without its answer still goes: an hour after its last chunk', async () => {
    const form = await t.api.createForm({ fields: [NAME, DOC] })
    const head = textPart('name', 'Ada') + filePartHead('doc', 'left.bin')
    const post = startPost(t, form.id, head.length + 2000 * KiB)
    post.body.send(head)
    post.body.send(randomBytes(600 * KiB))
    await until(async () => (await chunkCount()) === 1, 5000, 'the first chunk written')
    const [fileId] = await fileIds()
    t.clock.advance(61 * MINUTE)
    await abandonedUpload(t.clock() - 60 * MINUTE)
    await sweepOnce()
    expect(await chunkCount(fileId)).toBe(0)
    post.body.end()
    expect((await post.response).status).toBe(400)
  })
})

describe('an answer is acknowledged only with every byte of its files', () => {
  test('a file that lost chunks while it arrived: 422 asking for the file again, every other value kept; nothing recorded', async () => {
    const form = await t.api.createForm({ fields: [NAME, NOTES, DOC] })
    const bytes = randomBytes(1200 * KiB)
    const head = textPart('name', 'Ada') + textPart('notes', 'Two\r\nlines') + filePartHead('doc', 'broken.bin')
    const post = startPost(t, form.id, head.length + bytes.length + closing.length)
    post.body.send(head)
    post.body.send(bytes.subarray(0, 600 * KiB))
    await until(async () => (await chunkCount()) === 1, 5000, 'the first chunk written')
    const [fileId] = await fileIds()
    // What a sweep that took it for abandoned would have done.
    await t.sql('DELETE FROM file_chunks WHERE file_id = ? AND seq = 0', fileId)
    post.body.send(bytes.subarray(600 * KiB))
    post.body.send(closing)
    post.body.end()

    const res = await post.response
    expect(res.status).toBe(422)
    const html = await res.text()
    await expectOnlyFieldError(html, 'doc', words('error.required.file'))
    expect(inputsOf(html).find((input) => input.name === 'name')?.value).toBe('Ada')
    expect(pageText(html)).toContain('Two lines')
    // The broken file is not kept for the next try.
    expect(inputsOf(html).some((input) => input.name === '_held_doc')).toBe(false)
    expect((await t.api.get(`/forms/${form.id}/responses`)).body).toEqual([])
    expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('active')

    // Chosen again, it is taken.
    const again = new FormData()
    again.set('name', 'Ada')
    again.set('doc', new File([bytes], 'whole.bin'))
    expect((await postForm(t.app, form.id, again)).status).toBe(303)
    expect((await downloaded(form.id, 'doc')).equals(bytes)).toBe(true)
  })

  test('a file held across a 422 whose chunks went: the next post is 422 asking for it again, the name kept', async () => {
    const form = await t.api.createForm({ fields: [NAME, DOC] })
    const first = new FormData()
    first.set('name', '')
    first.set('doc', new File([randomBytes(1000 * KiB)], 'held.bin'))
    const refused = await postForm(t.app, form.id, first)
    expect(refused.status).toBe(422)
    const heldId = inputsOf(refused.text).find((input) => input.name === '_held_doc')?.value
    expect(heldId).toBeDefined()
    const [held] = await t.sql('SELECT file_id FROM held_files')
    await t.sql('DELETE FROM file_chunks WHERE file_id = ? AND seq = 1', held!.file_id)

    const res = await postForm(t.app, form.id, { name: 'Ada', _held_doc: heldId!, doc: '' })
    expect(res.status).toBe(422)
    await expectOnlyFieldError(res.text, 'doc', words('error.required.file'))
    expect(inputsOf(res.text).find((input) => input.name === 'name')?.value).toBe('Ada')
    expect(inputsOf(res.text).some((input) => input.name === '_held_doc')).toBe(false)
    expect(await t.sql('SELECT id FROM held_files')).toEqual([])
    expect((await t.api.get(`/forms/${form.id}/responses`)).body).toEqual([])
  })

  test('refused for another field too, a held file that lost chunks is let go and asked for as well', async () => {
    const form = await t.api.createForm({ fields: [NAME, NOTES, DOC] })
    const first = new FormData()
    first.set('name', '')
    first.set('doc', new File([randomBytes(1000 * KiB)], 'held.bin'))
    const heldId = inputsOf((await postForm(t.app, form.id, first)).text).find(
      (input) => input.name === '_held_doc',
    )?.value
    const [held] = await t.sql('SELECT file_id FROM held_files')
    await t.sql('DELETE FROM file_chunks WHERE file_id = ? AND seq = 0', held!.file_id)

    const res = await postForm(t.app, form.id, { name: '', notes: 'kept', _held_doc: heldId!, doc: '' })
    expect(res.status).toBe(422)
    const page = await parsePage(res.text)
    expect([...page.summaryLinks().keys()].sort()).toEqual(['doc', 'name'])
    expect(pageText(res.text)).toContain(words('error.required.file'))
    expect(pageText(res.text)).toContain('kept')
    expect(inputsOf(res.text).some((input) => input.name === '_held_doc')).toBe(false)
    expect(await t.sql('SELECT id FROM held_files')).toEqual([])
  })
})
