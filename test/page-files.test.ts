/**
 * The human's page (CONTRACT 6, 7): file uploads as a browser sends them, stored
 * byte for byte and downloaded with a key. The database is read directly only for
 * the count of stored files.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import {
  binaryBytes,
  expectFieldError,
  expectFormPage,
  expectPage,
  expectSeeOther,
  type FieldDef,
  HOOK,
  pageRequests,
} from './page-fixtures.ts'
import { BASE_URL, createTestContext, postForm, type TestContext } from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())
const { postParts, download, responsesOf, onlyResponse, storedFileCount } = pageRequests(() => t)

// ================================================================ files

describe('file uploads', () => {
  const NAME = "Zoë's résumé 日本 (1).png"

  test('a valid upload is stored; its value is the API URL, which returns identical bytes as an attachment with the declared type', async () => {
    const fields = [
      { key: 'name', type: 'text', label: 'Name', required: true },
      { key: 'photo', type: 'file', label: 'Photo', required: true, config: { accept: 'image/*', max_size: 4096 } },
    ]
    const form = await t.api.createForm({ fields })
    const bytes = binaryBytes(3000)
    const res = await postParts(form.id, [
      { name: 'name', value: 'Ada' },
      { name: 'photo', filename: NAME, type: 'image/png', bytes },
    ])
    expectSeeOther(res, form.id)
    const response = await onlyResponse(form.id)
    expect(response.data).toEqual({
      name: 'Ada',
      photo: `${BASE_URL}/api/v1/forms/${form.id}/responses/${response.id}/files/photo`,
    })
    expect(await storedFileCount()).toBe(1)

    const file = await download(response.data.photo, t.key)
    expect(file.status).toBe(200)
    expect(file.bytes.byteLength).toBe(bytes.byteLength)
    expect(Buffer.from(file.bytes).equals(Buffer.from(bytes))).toBe(true)
    expect(file.headers.get('content-type')).toBe('image/png')
    expect(file.headers.get('x-content-type-options')).toBe('nosniff')
    const disposition = file.headers.get('content-disposition') ?? ''
    expect(disposition).toMatch(/^attachment\s*;/i)
    expect(disposition.toLowerCase()).not.toContain('inline')
    const exact = /filename\*\s*=\s*UTF-8''([^;\s]+)/i.exec(disposition)
    expect(exact).not.toBeNull()
    expect(decodeURIComponent(exact![1]!)).toBe(NAME)
    const plain = /filename\s*=\s*"([^"]*)"/i.exec(disposition)
    if (plain) expect(plain[1]).toMatch(/^[\x20-\x7e]*$/)
  })

  test('an upload sent with FormData as a browser does is stored too', async () => {
    const form = await t.api.createForm({
      fields: [{ key: 'doc', type: 'file', label: 'Doc', required: true, config: { accept: '.pdf', max_size: 1024 } }],
    })
    const bytes = binaryBytes(700)
    const data = new FormData()
    data.append('doc', new File([bytes], 'report.PDF', { type: 'application/pdf' }))
    expectSeeOther(await postForm(t.app, form.id, data), form.id)
    const response = await onlyResponse(form.id)
    const file = await download(response.data.doc, t.key)
    expect(file.status).toBe(200)
    expect(Buffer.from(file.bytes).equals(Buffer.from(bytes))).toBe(true)
    expect(file.headers.get('content-type')).toBe('application/pdf')
  })

  test.each([
    ['a name without extension', 'scan', 'image/png'],
    ['a name whose extension suggests another type', 'notes.txt', 'text/markdown'],
    ['a vendor type', 'data.json', 'application/vnd.api+json'],
  ])('the download has the type the browser declared (%s)', async (_name, filename, type) => {
    const form = await t.api.createForm({ fields: [{ key: 'doc', type: 'file', label: 'Doc', required: true }] })
    const bytes = binaryBytes(100)
    expectSeeOther(await postParts(form.id, [{ name: 'doc', filename, type, bytes }]), form.id)
    const file = await download((await onlyResponse(form.id)).data.doc, t.key)
    expect(file.status).toBe(200)
    expect(file.headers.get('content-type')).toBe(type)
    expect(Buffer.from(file.bytes).equals(Buffer.from(bytes))).toBe(true)
  })

  test('a declared type that is not a media type is served as application/octet-stream', async () => {
    const form = await t.api.createForm({ fields: [{ key: 'doc', type: 'file', label: 'Doc', required: true }] })
    const bytes = binaryBytes(100)
    expectSeeOther(await postParts(form.id, [{ name: 'doc', filename: 'odd.png', type: 'nonsense', bytes }]), form.id)
    const file = await download((await onlyResponse(form.id)).data.doc, t.key)
    expect(file.status).toBe(200)
    expect(file.headers.get('content-type')).toBe('application/octet-stream')
    expect(Buffer.from(file.bytes).equals(Buffer.from(bytes))).toBe(true)
    expect(file.headers.get('content-disposition') ?? '').toMatch(/^attachment\s*;/i)
  })

  test('an HTML upload is still served as an attachment, never inline', async () => {
    const form = await t.api.createForm({ fields: [{ key: 'doc', type: 'file', label: 'Doc', required: true }] })
    const bytes = new TextEncoder().encode('<script>alert(1)</script>')
    expectSeeOther(
      await postParts(form.id, [{ name: 'doc', filename: 'page.html', type: 'text/html', bytes }]),
      form.id,
    )
    const file = await download((await onlyResponse(form.id)).data.doc, t.key)
    expect(file.status).toBe(200)
    expect(file.headers.get('content-disposition') ?? '').toMatch(/^attachment\s*;/i)
    expect(file.headers.get('x-content-type-options')).toBe('nosniff')
    expect(Buffer.from(file.bytes).equals(Buffer.from(bytes))).toBe(true)
  })

  test("the download needs the owner's key: no key is 403, another account's key is 404", async () => {
    const form = await t.api.createForm({ fields: [{ key: 'doc', type: 'file', label: 'Doc', required: true }] })
    expectSeeOther(
      await postParts(form.id, [{ name: 'doc', filename: 'a.txt', type: 'text/plain', bytes: binaryBytes(50) }]),
      form.id,
    )
    const url = (await onlyResponse(form.id)).data.doc
    const none = await download(url, null)
    expect(none.status).toBe(403)
    expect(Buffer.from(none.bytes).includes(Buffer.from(binaryBytes(50)))).toBe(false)
    const other = await download(url, (await t.createKey('someone-else')).key)
    expect(other.status).toBe(404)
    expect(Buffer.from(other.bytes).includes(Buffer.from(binaryBytes(50)))).toBe(false)
    expect((await download(url, t.key)).status).toBe(200)
  })

  test('deleting the form deletes its files: the download is 404 and no file is left stored', async () => {
    const form = await t.api.createForm({ fields: [{ key: 'doc', type: 'file', label: 'Doc', required: true }] })
    expectSeeOther(
      await postParts(form.id, [
        { name: 'doc', filename: 'a.bin', type: 'application/octet-stream', bytes: binaryBytes(500) },
      ]),
      form.id,
    )
    const url = (await onlyResponse(form.id)).data.doc
    expect(await storedFileCount()).toBe(1)
    expect((await t.api.delete(`/forms/${form.id}`)).status).toBe(204)
    expect((await download(url, t.key)).status).toBe(404)
    expect(await storedFileCount()).toBe(0)
  })

  test('a file larger than max_size is a 422 page with the error next to the file field; nothing is stored', async () => {
    const fields: FieldDef[] = [
      { key: 'name', type: 'text', label: 'Name' },
      { key: 'photo', type: 'file', label: 'Photo', config: { max_size: 1024 } },
      { key: 'notes', type: 'textarea', label: 'Notes' },
    ]
    const form = await t.api.createForm({ fields })
    const res = await postParts(form.id, [
      { name: 'name', value: 'Ada' },
      { name: 'photo', filename: 'big.png', type: 'image/png', bytes: binaryBytes(1025) },
      { name: 'notes', value: 'kept' },
    ])
    const page = await expectFormPage(res, 422)
    expect([...page.summaryLinks().keys()]).toEqual(['photo'])
    expectFieldError(page, fields, 'photo')
    expect(page.control('name').attrs.value).toBe('Ada')
    expect(page.control('notes').text).toBe('kept')
    expect(page.control('photo').attrs.value).toBeUndefined()
    expect(await responsesOf(form.id)).toEqual([])
    expect(await storedFileCount()).toBe(0)
  })

  test('a file of exactly max_size is accepted', async () => {
    const form = await t.api.createForm({
      fields: [{ key: 'photo', type: 'file', label: 'Photo', required: true, config: { max_size: 1024 } }],
    })
    const bytes = binaryBytes(1024)
    expectSeeOther(
      await postParts(form.id, [{ name: 'photo', filename: 'exact.png', type: 'image/png', bytes }]),
      form.id,
    )
    const file = await download((await onlyResponse(form.id)).data.photo, t.key)
    expect(Buffer.from(file.bytes).equals(Buffer.from(bytes))).toBe(true)
  })

  test.each([
    ['a wrong extension (accept .pdf, file.txt declared application/pdf)', '.pdf', 'notes.txt', 'application/pdf'],
    ['a wrong declared type (accept image/*, photo.png declared text/plain)', 'image/*', 'photo.png', 'text/plain'],
    [
      'a wrong exact type (accept application/pdf, declared application/zip)',
      'application/pdf',
      'doc.pdf',
      'application/zip',
    ],
  ])('%s is a 422 page next to the file field', async (_name, accept, filename, type) => {
    const fields: FieldDef[] = [
      { key: 'doc', type: 'file', label: 'Document', required: true, config: { accept } },
      { key: 'name', type: 'text', label: 'Name' },
    ]
    const form = await t.api.createForm({ fields })
    const res = await postParts(form.id, [
      { name: 'doc', filename, type, bytes: binaryBytes(64) },
      { name: 'name', value: 'Ada' },
    ])
    const page = await expectFormPage(res, 422)
    expectFieldError(page, fields, 'doc')
    expect(page.control('name').attrs.value).toBe('Ada')
    expect(await storedFileCount()).toBe(0)
    expect(await responsesOf(form.id)).toEqual([])
  })

  test.each([
    ['by extension, case-insensitively (accept .pdf, REPORT.PDF)', '.pdf', 'REPORT.PDF', 'application/octet-stream'],
    ['by wildcard type (accept image/*, image/jpeg)', 'image/*', 'cat.jpg', 'image/jpeg'],
    ['by one of several tokens (accept .doc,application/pdf)', '.doc,application/pdf', 'x.pdf', 'application/pdf'],
    [
      'by declared type when the name has no extension (accept image/*, "scan" declared image/jpeg)',
      'image/*',
      'scan',
      'image/jpeg',
    ],
  ])('a file matching accept %s is stored', async (_name, accept, filename, type) => {
    const form = await t.api.createForm({
      fields: [{ key: 'doc', type: 'file', label: 'Document', required: true, config: { accept } }],
    })
    expectSeeOther(await postParts(form.id, [{ name: 'doc', filename, type, bytes: binaryBytes(64) }]), form.id)
    expect(await storedFileCount()).toBe(1)
  })

  test('an empty file input (filename="" and no bytes) is no answer: 422 when required, left out of data when optional', async () => {
    const requiredFields: FieldDef[] = [
      { key: 'name', type: 'text', label: 'Name' },
      { key: 'doc', type: 'file', label: 'Document', required: true },
    ]
    const required = await t.api.createForm({ fields: requiredFields })
    const refused = await postParts(required.id, [
      { name: 'name', value: 'Ada' },
      { name: 'doc', filename: '', type: 'application/octet-stream', bytes: new Uint8Array() },
    ])
    const page = await expectFormPage(refused, 422)
    expect([...page.summaryLinks().keys()]).toEqual(['doc'])
    expectFieldError(page, requiredFields, 'doc')
    expect(page.control('name').attrs.value).toBe('Ada')
    expect(await responsesOf(required.id)).toEqual([])

    const optional = await t.api.createForm({
      fields: [
        { key: 'name', type: 'text', label: 'Name' },
        { key: 'doc', type: 'file', label: 'Document' },
      ],
    })
    expectSeeOther(
      await postParts(optional.id, [
        { name: 'name', value: 'Ada' },
        { name: 'doc', filename: '', type: 'application/octet-stream', bytes: new Uint8Array() },
      ]),
      optional.id,
    )
    expect((await onlyResponse(optional.id)).data).toEqual({ name: 'Ada' })
    expect(await storedFileCount()).toBe(0)
  })

  test('a file field posted urlencoded (no file at all) is no answer when left empty', async () => {
    const form = await t.api.createForm({
      fields: [
        { key: 'name', type: 'text', label: 'Name' },
        { key: 'doc', type: 'file', label: 'Document' },
      ],
    })
    expectSeeOther(await postForm(t.app, form.id, { name: 'Ada' }), form.id)
    expect((await onlyResponse(form.id)).data).toEqual({ name: 'Ada' })
  })

  test('file fields whose max_size add up to more than 100 MiB are refused at creation (422); exactly 100 MiB is fine', async () => {
    const MiB = 1024 * 1024
    const files = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        key: `f${i}`,
        type: 'file',
        label: `File ${i}`,
        config: { max_size: 25 * MiB },
      }))
    const tooMuch = await t.api.post('/forms', {
      title: 'Many files',
      fields: [...files(4), { key: 'extra', type: 'file', label: 'Extra', config: { max_size: 1 } }],
    })
    expect(tooMuch.status).toBe(422)
    expect(Array.isArray(tooMuch.body.errors)).toBe(true)
    const exactly = await t.api.post('/forms', { title: 'Many files', fields: files(4) })
    expect(exactly.status).toBe(201)
  })

  test('a post larger than the form allows is a 413 page, and nothing is stored', async () => {
    const form = await t.api.createForm({
      fields: [{ key: 'doc', type: 'file', label: 'Doc', config: { max_size: 1024 } }],
    })
    // More past max_size than is read to refuse the file next to its field (FILE_OVERSIZE_READ).
    const res = await postParts(form.id, [
      { name: 'doc', filename: 'huge.bin', type: 'application/octet-stream', bytes: new Uint8Array(27 * 1024 * 1024) },
    ])
    const page = await expectPage(res, 413)
    expect(page.all('form')).toEqual([])
    expect(await responsesOf(form.id)).toEqual([])
    expect(await storedFileCount()).toBe(0)
    expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('active')
  })

  test('a text-only form refuses a huge post with a 413 page', async () => {
    const form = await t.api.createForm()
    const page = await expectPage(await postForm(t.app, form.id, { name: 'x'.repeat(3 * 1024 * 1024) }), 413)
    expect(page.all('form')).toEqual([])
    expect(await responsesOf(form.id)).toEqual([])
  })

  test("the limit is the form's own: a form whose file field allows 3 MiB takes a 2 MB upload", async () => {
    const form = await t.api.createForm({
      fields: [{ key: 'doc', type: 'file', label: 'Doc', required: true, config: { max_size: 3 * 1024 * 1024 } }],
    })
    const bytes = binaryBytes(2 * 1000 * 1000)
    expectSeeOther(
      await postParts(form.id, [{ name: 'doc', filename: 'big.bin', type: 'application/octet-stream', bytes }]),
      form.id,
    )
    const file = await download((await onlyResponse(form.id)).data.doc, t.key)
    expect(file.status).toBe(200)
    expect(Buffer.from(file.bytes).equals(Buffer.from(bytes))).toBe(true)
  })

  test('the webhook payload holds the file URL, the same data the API returns', async () => {
    const form = await t.api.createForm({
      callback_url: HOOK,
      fields: [
        { key: 'name', type: 'text', label: 'Name', required: true },
        { key: 'photo', type: 'file', label: 'Photo', required: true, config: { accept: 'image/*' } },
      ],
    })
    expectSeeOther(
      await postParts(form.id, [
        { name: 'name', value: 'Ada' },
        { name: 'photo', filename: 'me.png', type: 'image/png', bytes: binaryBytes(200) },
      ]),
      form.id,
    )
    const response = await onlyResponse(form.id)
    const [row] = (await t.sql('select payload from deliveries')) as Array<{ payload: string }>
    expect(row).not.toBeNull()
    const payload = JSON.parse(row!.payload)
    expect(payload.data).toEqual({
      name: 'Ada',
      photo: `${BASE_URL}/api/v1/forms/${form.id}/responses/${response.id}/files/photo`,
    })
    expect(payload.data).toEqual(response.data)
  })
})
