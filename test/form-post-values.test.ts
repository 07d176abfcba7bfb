/**
 * What a form post's values become (CONTRACT 13a): a file name loses the
 * characters that would make it read as something else (bidi controls, C0
 * controls) before it is stored.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { translator } from '../src/i18n/index.ts'
import { BOUNDARY, multipartType, textPart } from './hand-fed.ts'
import { pageText } from './html.ts'
import { createTestContext, openPage, send, type TestContext } from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())

const { t: words } = translator('en')

/** Unicode's bidi controls: embeddings, overrides, isolates and marks. */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/
const BIDI_ENCODED = /%E2%80%8[EF]|%E2%80%A[A-E]|%E2%81%A[6-9]|%D8%9C/i

const NAME = { key: 'name', type: 'text', label: 'Your name' }
const DOC = { key: 'doc', type: 'file', label: 'Document' }

/** A multipart post with the name and one file part whose Content-Disposition ends with `filenameParams`. */
function postWithFileName(formId: string, filenameParams: string, name = 'Ada') {
  const body =
    textPart('name', name) +
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="doc"; ${filenameParams}\r\nContent-Type: application/octet-stream\r\n\r\nMZ payload\r\n--${BOUNDARY}--\r\n`
  return send(t.app, 'POST', `/f/${formId}`, { body: Buffer.from(body, 'utf8'), headers: { 'content-type': multipartType } })
}

describe('file names lose bidi controls and C0 controls before they are stored', () => {
  const names: Array<[string, string]> = [
    ["filename*=UTF-8''%E2%80%AEcod.exe", 'cod.exe'],
    ['filename="\u202Bfile\u2066name\u2069\u200E.p\u200Fdf\u061C"', 'filename.pdf'],
    [`filename*=UTF-8''report%E2%81%A7%E2%80%AA%01%1F.txt`, 'report.txt'],
  ]
  for (const [params, stored] of names) {
    test(`${params}: stored, downloaded and shown as ${stored}`, async () => {
      const form = await t.api.createForm({ fields: [NAME, DOC] })
      const res = await postWithFileName(form.id, params)
      expect(res.status).toBe(303)
      expect((await t.sql('SELECT name FROM response_files')).map((row) => row.name)).toEqual([stored])

      const responses = await t.api.get(`/forms/${form.id}/responses`)
      expect(responses.text).not.toMatch(BIDI)
      const download = await t.app.handle(new Request(responses.body[0].data.doc, { headers: { authorization: `Bearer ${t.key}` } }))
      expect(download.status).toBe(200)
      const disposition = download.headers.get('content-disposition')!
      expect(disposition).toBe(`attachment; filename="${stored}"; filename*=UTF-8''${stored}`)
      expect(disposition).not.toMatch(BIDI_ENCODED)

      const cookie = res.headers.get('set-cookie')!.split(';')[0]!
      const receipt = await openPage(t.app, form.id, { cookie })
      expect(pageText(receipt.text)).toContain(words('receipt.heading'))
      expect(pageText(receipt.text)).toContain(stored)
      expect(receipt.text).not.toMatch(BIDI)
    })
  }

  test('a file kept across a 422 is named without them too', async () => {
    const form = await t.api.createForm({ fields: [{ ...NAME, required: true }, DOC] })
    const res = await postWithFileName(form.id, "filename*=UTF-8''%E2%80%AEcod.exe", '')
    expect(res.status).toBe(422)
    expect(pageText(res.text)).toContain('cod.exe')
    expect(res.text).not.toMatch(BIDI)
    expect((await t.sql('SELECT name FROM held_files')).map((row) => row.name)).toEqual(['cod.exe'])
  })
})
