/**
 * Files kept across a 422 (CONTRACT 11): an upload that passed its own
 * field's checks in a post refused for another field is held for that form,
 * at most an hour, and the next post uses it unless the person removes or
 * replaces it. Held files count against the form's file limit, and go when the
 * form is answered, cancelled or deleted, or when their hour is up.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { FORM_FILES_MAX_SIZE } from '../src/fields/file.ts'
import { translator } from '../src/i18n/index.ts'
import { inputsOf, pageText } from './html.ts'
import { BASE_URL, createTestContext, postForm, type TestContext, until } from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())

const HOUR = 3_600_000

const NAME = { key: 'name', type: 'text', label: 'Your name', required: true }
const DOC = { key: 'doc', type: 'file', label: 'Document', config: { max_size: 4096, accept: '.pdf' } }

const pdf = (text: string, name = 'report.pdf') =>
  new File([new TextEncoder().encode(`%PDF ${text}`)], name, { type: 'application/pdf' })

/** A browser's post: `fields` as text, files as given; a file control left empty sends an empty, nameless part. */
function post(fields: Record<string, string | File | undefined>) {
  const body = new FormData()
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) body.append(key, new File([], '', { type: 'application/octet-stream' }))
    else body.append(key, value)
  }
  return body
}

/** The hold id the 422 page gives a file field, or undefined when it keeps none. */
const heldId = (html: string, key: string) => inputsOf(html).find((input) => input.name === `_held_${key}`)?.value

async function heldRows(formId?: string) {
  return formId === undefined
    ? await t.sql('SELECT id, form_id, field_key, file_id FROM held_files')
    : await t.sql('SELECT id, form_id, field_key, file_id FROM held_files WHERE form_id = ?', formId)
}

/** The bytes of the file a form's answer holds for `key` (downloaded with the key, as an agent would). */
async function downloaded(formId: string, key: string): Promise<string | undefined> {
  const [response] = (await t.api.get(`/forms/${formId}/responses`)).body as Array<{ data: Record<string, string> }>
  const url = response?.data[key]
  if (url === undefined) return undefined
  const res = await t.app.handle(new Request(url, { headers: { authorization: `Bearer ${t.key}` } }))
  expect(res.status).toBe(200)
  return await res.text()
}

/** Whether a file's chunks are marked for removal (unclaimed at once) or gone already. */
async function isLetGo(fileId: string) {
  const [unclaimed] = await t.sql('SELECT since FROM unclaimed_files WHERE file_id = ?', fileId)
  const [chunks] = await t.sql('SELECT CAST(count(*) AS INTEGER) AS n FROM file_chunks WHERE file_id = ?', fileId)
  return (unclaimed !== undefined && Number(unclaimed.since) === 0) || Number(chunks!.n) === 0
}

/** A form whose first post is refused (the name left empty) with a valid file: the 422 page and the hold. */
async function refusedWithFile(fields: object[] = [NAME, DOC], file = pdf('first')) {
  const form = await t.api.createForm({ fields })
  const res = await postForm(t.app, form.id, post({ name: '', doc: file }))
  expect(res.status).toBe(422)
  return { form, res, id: heldId(res.text, 'doc') }
}

describe('a valid file survives a 422', () => {
  test('the page names it, with its size, a box to remove it and the control to replace it; the next post with no file chosen records it', async () => {
    const { form, res, id } = await refusedWithFile()
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/)
    const text = pageText(res.text)
    const { t: words } = translator('en')
    // pageText makes every space a plain one; the size's is a no-break one.
    expect(text).toContain(
      words('file.kept', { name: 'report.pdf', size: { bytes: '%PDF first'.length } }).replace(/\u00a0/g, ' '),
    )
    expect(text).toContain(words('file.remove'))
    expect(text).toContain(words('file.replace'))
    const inputs = inputsOf(res.text)
    expect(inputs.find((input) => input.name === '_remove_doc')).toMatchObject({ type: 'checkbox' })
    // The control is still there, to replace the file, and no longer required (the kept file answers).
    expect(inputs.find((input) => input.name === 'doc')).toMatchObject({ type: 'file' })
    // The hold id is not the file's internal id.
    const [row] = await heldRows(form.id)
    expect(row).toMatchObject({ id, field_key: 'doc' })
    expect(row!.file_id).not.toBe(id)

    const again = await postForm(t.app, form.id, post({ name: 'Ada', _held_doc: id!, doc: undefined }))
    expect(again.status).toBe(303)
    expect(await downloaded(form.id, 'doc')).toBe('%PDF first')
    // Answered: the hold is gone, and the file is the answer's (not let go).
    expect(await heldRows(form.id)).toEqual([])
    expect(await isLetGo(row!.file_id)).toBe(false)
  })

  test('without the empty file part at all (a client that leaves it out), the held file is used too', async () => {
    const { form, id } = await refusedWithFile()
    expect((await postForm(t.app, form.id, post({ name: 'Ada', _held_doc: id! }))).status).toBe(303)
    expect(await downloaded(form.id, 'doc')).toBe('%PDF first')
  })

  test('a post without multipart (the file field as empty text) uses the held file too', async () => {
    const { form, id } = await refusedWithFile()
    expect((await postForm(t.app, form.id, { name: 'Ada', _held_doc: id!, doc: '' })).status).toBe(303)
    expect(await downloaded(form.id, 'doc')).toBe('%PDF first')
  })

  test('a file name with control characters or a path is kept under the name the answer stores', async () => {
    const { form, res, id } = await refusedWithFile([NAME, DOC], pdf('odd', 'C:\\scans\\odd\u0000\u0007name.pdf'))
    expect(pageText(res.text)).toContain('oddname.pdf')
    expect((await postForm(t.app, form.id, post({ name: 'Ada', _held_doc: id!, doc: undefined }))).status).toBe(303)
    expect(await downloaded(form.id, 'doc')).toBe('%PDF odd')
  })

  test('refused again for another reason, the same file stays held under the same id', async () => {
    const { form, id } = await refusedWithFile()
    const second = await postForm(t.app, form.id, post({ name: '', _held_doc: id!, doc: undefined }))
    expect(second.status).toBe(422)
    expect(heldId(second.text, 'doc')).toBe(id)
    expect(await heldRows(form.id)).toHaveLength(1)
  })

  test('a file that fails its own checks is not held; a valid one beside it is', async () => {
    const photo = { key: 'photo', type: 'file', label: 'Photo', config: { max_size: 10 } }
    const form = await t.api.createForm({ fields: [NAME, DOC, photo] })
    const res = await postForm(
      t.app,
      form.id,
      post({ name: '', doc: pdf('ok'), photo: pdf('far too large for ten bytes', 'big.pdf') }),
    )
    expect(res.status).toBe(422)
    expect(heldId(res.text, 'doc')).toBeDefined()
    expect(heldId(res.text, 'photo')).toBeUndefined()
    expect((await heldRows(form.id)).map((row) => row.field_key)).toEqual(['doc'])
  })

  test('ticking "Remove this file": the hold is let go and the field is empty', async () => {
    const { form, id } = await refusedWithFile()
    const [row] = await heldRows(form.id)
    const res = await postForm(
      t.app,
      form.id,
      post({ name: 'Ada', _held_doc: id!, _remove_doc: 'true', doc: undefined }),
    )
    expect(res.status).toBe(303)
    expect(await downloaded(form.id, 'doc')).toBeUndefined()
    expect(await heldRows(form.id)).toEqual([])
    expect(await isLetGo(row!.file_id)).toBe(true)
  })

  test('removed while the form is still refused: the page keeps nothing and a required file is asked for again', async () => {
    const { form, id } = await refusedWithFile([NAME, { ...DOC, required: true }])
    const res = await postForm(
      t.app,
      form.id,
      post({ name: 'Ada', _held_doc: id!, _remove_doc: 'true', doc: undefined }),
    )
    expect(res.status).toBe(422)
    expect(heldId(res.text, 'doc')).toBeUndefined()
    expect(await heldRows(form.id)).toEqual([])
  })

  test('choosing another file replaces it: the new one is recorded, the old one let go', async () => {
    const { form, id } = await refusedWithFile()
    const [old] = await heldRows(form.id)
    const res = await postForm(t.app, form.id, post({ name: 'Ada', _held_doc: id!, doc: pdf('second', 'new.pdf') }))
    expect(res.status).toBe(303)
    expect(await downloaded(form.id, 'doc')).toBe('%PDF second')
    expect(await isLetGo(old!.file_id)).toBe(true)
  })

  test('a hold id of another form, or of another field, is ignored: no file, no error page', async () => {
    const { id } = await refusedWithFile()
    const other = await t.api.createForm({ fields: [NAME, DOC] })
    expect((await postForm(t.app, other.id, post({ name: 'Ada', _held_doc: id!, doc: undefined }))).status).toBe(303)
    expect(await downloaded(other.id, 'doc')).toBeUndefined()

    const twoFiles = await t.api.createForm({ fields: [NAME, DOC, { ...DOC, key: 'other', required: true }] })
    const first = await postForm(t.app, twoFiles.id, post({ name: '', doc: pdf('doc'), other: undefined }))
    const docHold = heldId(first.text, 'doc')!
    const res = await postForm(
      t.app,
      twoFiles.id,
      post({ name: 'Ada', _held_other: docHold, other: undefined, doc: undefined }),
    )
    expect(res.status).toBe(422)
    expect(pageText(res.text)).toContain('Document')
    expect(heldId(res.text, 'other')).toBeUndefined()
  })

  test('malformed hold ids are ignored', async () => {
    const form = await t.api.createForm({ fields: [NAME, DOC] })
    for (const id of ['', 'x', "'; DROP TABLE held_files; --", 'a'.repeat(5000)]) {
      expect((await postForm(t.app, form.id, post({ name: '', _held_doc: id, doc: undefined }))).status).toBe(422)
    }
  })

  test('after an hour the hold has lapsed: ignored, and a required file is asked for again', async () => {
    const { form, id } = await refusedWithFile([NAME, { ...DOC, required: true }])
    t.clock.advance(HOUR)
    const res = await postForm(t.app, form.id, post({ name: 'Ada', _held_doc: id!, doc: undefined }))
    expect(res.status).toBe(422)
    expect(heldId(res.text, 'doc')).toBeUndefined()
  })
})

describe('held files are bounded, and go', () => {
  test("a form's held files never come to more than its file limit: beyond it a new file is not kept", async () => {
    const form = await t.api.createForm({ fields: [NAME, DOC] })
    // Other people's files already held for the form, all but 20 bytes of the limit.
    await t.sql(
      `INSERT INTO held_files (id, form_id, field_key, name, content_type, size, file_id, held_until) VALUES ('others', ?, 'doc', 'x.pdf', 'application/pdf', ?, 'others-file', ?)`,
      form.id,
      FORM_FILES_MAX_SIZE - 20,
      t.clock() + HOUR,
    )
    const tooMany = await postForm(t.app, form.id, post({ name: '', doc: pdf('more than twenty bytes') }))
    expect(tooMany.status).toBe(422)
    expect(heldId(tooMany.text, 'doc')).toBeUndefined()
    const fits = await postForm(t.app, form.id, post({ name: '', doc: pdf('small') }))
    expect(heldId(fits.text, 'doc')).toBeDefined()
    // A lapsed hold no longer counts.
    t.clock.advance(HOUR)
    const later = await postForm(t.app, form.id, post({ name: '', doc: pdf('more than twenty bytes') }))
    expect(heldId(later.text, 'doc')).toBeDefined()
  })

  test("answered: the file used is the answer's; every other hold of the form is let go", async () => {
    const photo = { key: 'photo', type: 'file', label: 'Photo' }
    const form = await t.api.createForm({ fields: [NAME, DOC, photo] })
    const first = await postForm(t.app, form.id, post({ name: '', doc: pdf('doc'), photo: pdf('photo', 'p.pdf') }))
    const rows = await heldRows(form.id)
    expect(rows).toHaveLength(2)
    // The answer names only the document's hold.
    const res = await postForm(
      t.app,
      form.id,
      post({ name: 'Ada', _held_doc: heldId(first.text, 'doc')!, doc: undefined, photo: undefined }),
    )
    expect(res.status).toBe(303)
    expect(await heldRows(form.id)).toEqual([])
    expect(await isLetGo(rows.find((row) => row.field_key === 'doc')!.file_id)).toBe(false)
    expect(await isLetGo(rows.find((row) => row.field_key === 'photo')!.file_id)).toBe(true)
  })

  test('answered over JSON meanwhile: the holds are let go too', async () => {
    const { form } = await refusedWithFile()
    const [row] = await heldRows(form.id)
    expect(
      (
        await t.app.handle(
          new Request(`${BASE_URL}/f/${form.id}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"name":"Ada"}',
          }),
        )
      ).status,
    ).toBe(201)
    expect(await heldRows(form.id)).toEqual([])
    expect(await isLetGo(row!.file_id)).toBe(true)
  })

  test('cancelled: let go', async () => {
    const { form } = await refusedWithFile()
    const [row] = await heldRows(form.id)
    expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
    expect(await heldRows(form.id)).toEqual([])
    expect(await isLetGo(row!.file_id)).toBe(true)
  })

  test('deleted: let go', async () => {
    const { form } = await refusedWithFile()
    const [row] = await heldRows(form.id)
    expect((await t.api.delete(`/forms/${form.id}`)).status).toBe(204)
    expect(await heldRows()).toEqual([])
    expect(await isLetGo(row!.file_id)).toBe(true)
  })

  test('the sweep forgets holds whose hour is up, and removes their bytes; live ones stay', async () => {
    const { form } = await refusedWithFile()
    const [lapsing] = await heldRows(form.id)
    t.clock.advance(HOUR / 2)
    const { form: newer } = await refusedWithFile()
    t.clock.advance(HOUR / 2)
    t.background.start()
    await until(async () => (await heldRows(form.id)).length === 0, 5000, 'the lapsed hold forgotten')
    await until(
      async () => {
        const [chunks] = await t.sql(
          'SELECT CAST(count(*) AS INTEGER) AS n FROM file_chunks WHERE file_id = ?',
          lapsing!.file_id,
        )
        return Number(chunks!.n) === 0
      },
      5000,
      "the lapsed hold's bytes removed",
    )
    expect(await heldRows(newer.id)).toHaveLength(1)
  })
})
