/**
 * A file too large (or of the wrong kind) for its field is a problem with that
 * field, never a dead end (CONTRACT 14): the page comes back with the message
 * next to the field and everything else kept. Only a post larger than the
 * form can ever take gets the "too large" page, in the form's language, with
 * the limit and a way back.
 */
import { describe, expect, test } from 'bun:test'
import { fileMaxSize } from '../src/fields/file.ts'
import { submissionBodyLimit } from '../src/fields/index.ts'
import { contextsPerTest, postForm, send } from './utils.ts'

const MiB = 1024 * 1024
const { create } = contextsPerTest()

const photoForm = {
  title: 'Schadensmeldung',
  page: { locale: 'de' },
  fields: [
    { key: 'name', type: 'text', label: 'Name', required: true },
    { key: 'receipt', type: 'file', label: 'Beleg', required: true, config: { max_size: MiB, accept: '.pdf' } },
    { key: 'photo', type: 'file', label: 'Foto', required: true, config: { max_size: 5 * MiB } },
  ],
}

function post(name: string, receipt: File, photo: File) {
  const body = new FormData()
  body.append('name', name)
  body.append('receipt', receipt)
  body.append('photo', photo)
  return body
}

describe('a file larger than its field takes', () => {
  test('6 MB for a 5 MB field is a 422 on that field, the text and the other file kept (not the 413 page)', async () => {
    const t = await create()
    const form = await t.api.createForm(photoForm)
    const refused = await postForm(
      t.app,
      form.id,
      post('Anna Müller', new File(['%PDF-1.7'], 'beleg.pdf'), new File([new Uint8Array(6 * MiB)], 'IMG_2041.jpg')),
    )
    expect(refused.status).toBe(422)
    expect(refused.text).toContain('Die ausgewählte Datei darf höchstens 5')
    // What was typed, and the file that passed its checks, are there for the next try.
    expect(refused.text).toContain('value="Anna Müller"')
    expect(refused.text).toContain('beleg.pdf')
    expect(refused.text).toMatch(/name="_held_receipt" value="[A-Za-z0-9_-]{22}"/)
    expect((await t.api.get(`/forms/${form.id}/responses`)).body).toEqual([])
  })

  test('a file of the wrong kind beside a too-large one: both are problems on their fields, nothing is lost', async () => {
    const t = await create()
    const form = await t.api.createForm(photoForm)
    const refused = await postForm(
      t.app,
      form.id,
      post('Anna', new File(['x'], 'beleg.exe'), new File([new Uint8Array(12 * MiB)], 'IMG.jpg')),
    )
    expect(refused.status).toBe(422)
    expect(refused.text).toContain('href="#field-receipt"')
    expect(refused.text).toContain('href="#field-photo"')
    expect(refused.text).toContain('value="Anna"')
  })

  test("the oversized file is answered from what was kept of it: no more than its field's max_size is written", async () => {
    const t = await create()
    const form = await t.api.createForm(photoForm)
    await postForm(
      t.app,
      form.id,
      post('Anna', new File(['%PDF'], 'a.pdf'), new File([new Uint8Array(20 * MiB)], 'IMG.jpg')),
    )
    const [kept] = await t.sql('SELECT CAST(coalesce(sum(length(bytes)), 0) AS INTEGER) AS n FROM file_chunks')
    expect(kept!.n).toBeLessThanOrEqual(5 * MiB + 4)
  })
})

describe('a post larger than the form can ever take', () => {
  test("is the 413 page in the form's language, naming the form and the limit, with a link back to it", async () => {
    const t = await create()
    const form = await t.api.createForm(photoForm)
    const limit = submissionBodyLimit(photoForm.fields)
    expect(limit).toBeGreaterThan(fileMaxSize(photoForm.fields[2]!.config) + 20 * MiB)
    const body = post('Anna', new File(['%PDF'], 'a.pdf'), new File([new Uint8Array(limit)], 'video.mp4'))
    const res = await send(t.app, 'POST', `/f/${form.id}`, { body })
    expect(res.status).toBe(413)
    expect(res.headers.get('content-type')).toStartWith('text/html')
    expect(res.text).toContain('<html lang="de"')
    expect(res.text).toContain('Schadensmeldung')
    expect(res.text).toContain(`href="/f/${form.id}"`)
    // The limit, as German writes sizes.
    expect(res.text).toMatch(/höchstens \d+(?:,\d)?\s?MB/)
  })

  test('a declared length over the limit is refused before the body is read, with the same page', async () => {
    const t = await create()
    const form = await t.api.createForm(photoForm)
    const limit = submissionBodyLimit(photoForm.fields)
    const res = await send(t.app, 'POST', `/f/${form.id}`, {
      body: new Uint8Array(16),
      headers: {
        'content-type': 'multipart/form-data; boundary=x',
        'content-length': String(limit + 1),
        'accept-language': 'en',
      },
    }).catch((error: unknown) => ({ status: 0, text: String(error), headers: new Headers() }))
    expect(res.status).toBe(413)
    expect(res.text).toContain('Schadensmeldung')
    expect(res.text).toContain(`href="/f/${form.id}"`)
  })
})
