/**
 * What a form post's values become (CONTRACT 13a): a file name loses the
 * characters that would make it read as something else (bidi controls, C0
 * controls) before it is stored, and a field that takes one value sent twice
 * is a 422 on that field, never "the last one wins".
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { translator } from '../src/i18n/index.ts'
import { BOUNDARY, multipartType, textPart } from './hand-fed.ts'
import { inputsOf, pageText, parsePage } from './html.ts'
import { createTestContext, openPage, postForm, send, type TestContext } from './utils.ts'

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
  return send(t.app, 'POST', `/f/${formId}`, {
    body: Buffer.from(body, 'utf8'),
    headers: { 'content-type': multipartType },
  })
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
      const download = await t.app.handle(
        new Request(responses.body[0].data.doc, { headers: { authorization: `Bearer ${t.key}` } }),
      )
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

/** One field of each type that takes one value, and two different values a post sends for it. */
const SINGLE_VALUE_FIELDS: Array<{ field: Record<string, unknown>; values: [string, string] }> = [
  { field: { key: 'text', type: 'text', label: 'Text' }, values: ['Ada', 'Eve'] },
  { field: { key: 'notes', type: 'textarea', label: 'Notes' }, values: ['one', 'two'] },
  { field: { key: 'email', type: 'email', label: 'Email' }, values: ['ada@example.com', 'eve@example.com'] },
  { field: { key: 'guests', type: 'number', label: 'Guests' }, values: ['1', '2'] },
  { field: { key: 'day', type: 'date', label: 'Day' }, values: ['2026-06-01', '2026-06-02'] },
  {
    field: { key: 'meal', type: 'select', label: 'Meal', config: { options: ['fish', 'veg'] } },
    values: ['fish', 'veg'],
  },
  {
    field: {
      key: 'city',
      type: 'select',
      label: 'City',
      config: { options: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'] },
    },
    values: ['a', 'b'],
  },
  { field: { key: 'agree', type: 'checkbox', label: 'I agree' }, values: ['true', 'true'] },
]
const OTHER = { key: 'other', type: 'text', label: 'Something else' }

/** The 422 page marks `key` alone, with the "valid answer" message. */
async function expectRepeatedRefused(res: { status: number; text: string }, key: string) {
  expect(res.status).toBe(422)
  const page = await parsePage(res.text)
  expect([...page.summaryLinks().keys()]).toEqual([key])
  expect(pageText(res.text)).toContain(words('error.invalid_value'))
}

describe('a field that takes one value, sent twice, is a 422 on that field', () => {
  for (const { field, values } of SINGLE_VALUE_FIELDS) {
    test(`${field.type}${field.key === 'city' ? ' (drop-down)' : ''}: urlencoded and multipart; other values kept; nothing recorded`, async () => {
      const form = await t.api.createForm({ fields: [OTHER, field] })
      const entries: Array<[string, string]> = [
        ['other', 'kept'],
        [field.key as string, values[0]],
        [field.key as string, values[1]],
      ]
      const urlencoded = await postForm(t.app, form.id, entries)
      await expectRepeatedRefused(urlencoded, field.key as string)
      expect(inputsOf(urlencoded.text).find((input) => input.name === 'other')?.value).toBe('kept')
      // The page shows the first value sent.
      if (field.type === 'text')
        expect(inputsOf(urlencoded.text).find((input) => input.name === 'text')?.value).toBe(values[0])

      const multipart = new FormData()
      for (const [key, value] of entries) multipart.append(key, value)
      const res = await postForm(t.app, form.id, multipart)
      await expectRepeatedRefused(res, field.key as string)
      expect(inputsOf(res.text).find((input) => input.name === 'other')?.value).toBe('kept')
      expect((await t.api.get(`/forms/${form.id}/responses`)).body).toEqual([])

      // Sent once, it is taken.
      expect((await postForm(t.app, form.id, entries.slice(0, 2))).status).toBe(303)
    })
  }

  test('file: two file parts for one field are a 422 on it; neither is kept', async () => {
    const form = await t.api.createForm({ fields: [OTHER, DOC] })
    const body = new FormData()
    body.append('other', 'kept')
    body.append('doc', new File(['first'], 'a.txt'))
    body.append('doc', new File(['second'], 'b.txt'))
    const res = await postForm(t.app, form.id, body)
    await expectRepeatedRefused(res, 'doc')
    expect(inputsOf(res.text).find((input) => input.name === 'other')?.value).toBe('kept')
    expect(await t.sql('SELECT id FROM held_files')).toEqual([])
    expect((await t.api.get(`/forms/${form.id}/responses`)).body).toEqual([])
  })

  test('a file and a text value under one file field: a 422 too', async () => {
    const form = await t.api.createForm({ fields: [OTHER, DOC] })
    const body = new FormData()
    body.append('doc', '')
    body.append('doc', new File(['bytes'], 'a.txt'))
    await expectRepeatedRefused(await postForm(t.app, form.id, body), 'doc')
  })

  test('a multiple select still takes many values, urlencoded and multipart', async () => {
    const tags = { key: 'tags', type: 'select', label: 'Tags', config: { multiple: true, options: ['a', 'b', 'c'] } }
    for (const multipart of [false, true]) {
      const form = await t.api.createForm({ fields: [tags] })
      const entries: Array<[string, string]> = [
        ['tags', 'a'],
        ['tags', 'c'],
      ]
      const body = multipart ? new FormData() : entries
      if (body instanceof FormData) for (const [key, value] of entries) body.append(key, value)
      expect((await postForm(t.app, form.id, body)).status).toBe(303)
      expect((await t.api.get(`/forms/${form.id}/responses`)).body[0].data).toEqual({ tags: ['a', 'c'] })
    }
  })
})
