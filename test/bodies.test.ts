/**
 * Request bodies within bounds (CONTRACT 13): the upload budget, the pace a
 * body must keep, form posts that cannot be read exactly, and files moved to
 * and from the database a chunk at a time.
 */
import { describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../src/config.ts'
import { BOUNDARY, closing, filePartHead, handFedBody, multipartType, startPost } from './hand-fed.ts'
import { BASE_URL, contextsPerTest, postForm, readResponse, send, submit, type TestContext, until } from './utils.ts'

const MiB = 1024 * 1024
const { create } = contextsPerTest()

/** A form taking up to four 25 MiB files: the largest form post there is. */
async function largestUploadForm(t: TestContext) {
  const fields = [0, 1, 2, 3].map((i) => ({
    key: `f${i}`,
    type: 'file',
    label: `File ${i}`,
    config: { max_size: 25 * MiB },
  }))
  return t.api.createForm({ fields })
}

const responsesOf = async (t: TestContext, formId: string) =>
  (await t.api.get(`/forms/${formId}/responses`)).body as unknown[]
const chunkCount = async (t: TestContext) =>
  (await t.sql('SELECT CAST(count(*) AS INTEGER) AS n FROM file_chunks'))[0]!.n as number

describe('the upload budget (SERVICE_UPLOAD_BUDGET)', () => {
  test('uploads being received hold it; one more is refused with 503 and Retry-After before a byte of its body is read; the API still answers', async () => {
    const t = await create()
    const form = await largestUploadForm(t)
    // Two of the largest posts are as much as the default 256 MiB lets uploads hold (32 MiB stay for API-sized bodies).
    const first = startPost(t, form.id, 100 * MiB)
    const second = startPost(t, form.id, 100 * MiB)
    first.body.send(filePartHead('f0'))
    second.body.send(filePartHead('f1'))
    await until(() => first.body.pulls > 0 && second.body.pulls > 0, 2000, 'both uploads being read')

    const third = startPost(t, form.id, 50 * MiB)
    const refused = await third.response
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('5')
    expect(refused.headers.get('connection')).toBe('close')
    expect(refused.headers.get('content-type')).toStartWith('text/html')
    expect(third.body.pulls).toBe(0)

    // API calls do not wait for uploads.
    expect(
      (await t.api.post('/forms', { title: 'Still open', fields: [{ key: 'a', type: 'text', label: 'A' }] })).status,
    ).toBe(201)

    // The uploads end (cut short): what they held is given back, and the next upload is taken.
    first.body.end()
    second.body.end()
    expect((await first.response).status).toBe(400)
    expect((await second.response).status).toBe(400)
    const form2 = new FormData()
    form2.append('f0', new File([new Uint8Array(1000)], 'ok.bin'))
    expect((await postForm(t.app, form.id, form2)).status).toBe(303)
  })

  test('a JSON body counts too: with the budget full of uploads and API bodies, the next is 503', async () => {
    const t = await create({ SERVICE_UPLOAD_BUDGET: String(100 * MiB) })
    const form = await largestUploadForm(t)
    // On the smallest budget one largest upload may take all of it.
    const upload = startPost(t, form.id, 100 * MiB)
    upload.body.send(filePartHead('f0'))
    await until(() => upload.body.pulls > 0, 2000, 'the upload being read')
    const res = await submit(t.app, form.id, { f0: 'x' })
    expect(res.status).toBe(503)
    expect(res.body.detail).toContain('try again')
    upload.body.end()
    await upload.response
  })

  test('a budget below the largest form post (100 MiB) is a bad setting', () => {
    expect(() => loadConfig({ SERVICE_UPLOAD_BUDGET: String(100 * MiB - 1) })).toThrow(ConfigError)
    expect(() => loadConfig({ SERVICE_UPLOAD_BUDGET: 'lots' })).toThrow('SERVICE_UPLOAD_BUDGET')
    expect(loadConfig({}).uploadBudgetBytes).toBe(256 * MiB)
  })
})

describe('a body must keep a pace (1 KiB/s over 30 s; here 1 byte/ms over 400 ms)', () => {
  const pace = { windowMs: 400, minBytes: 400, tickMs: 50 }

  /** A form post of `declared` bytes that sends seven and stops: its response, and how long that took. */
  async function stalledPost(declared: number) {
    const slow = await createPaced(pace)
    const form = await slow.api.createForm()
    const post = startPost(slow, form.id, declared, 'application/x-www-form-urlencoded')
    post.body.send('name=Ad')
    const started = performance.now()
    const res = await post.response
    return { slow, form, post, res, waited: performance.now() - started }
  }

  test('a body that stops sending is cut: 408, Connection: close, nothing recorded', async () => {
    const { slow, form, post, res, waited } = await stalledPost(1000)
    expect(res.status).toBe(408)
    expect(res.headers.get('connection')).toBe('close')
    expect(await res.text()).toContain('<!doctype html>')
    expect(post.body.cancelled).toBe(true)
    // Cut on the first check after a whole window without bytes.
    expect(waited).toBeGreaterThanOrEqual(pace.windowMs - pace.tickMs)
    expect(await responsesOf(slow, form.id)).toEqual([])
  })

  test("a small body (its declared length under one window's minimum) that stops sending is cut the same way, and one that comes in time is read", async () => {
    const { slow, form, res, waited } = await stalledPost(100)
    expect(res.status).toBe(408)
    expect(res.headers.get('connection')).toBe('close')
    expect(waited).toBeGreaterThanOrEqual(pace.windowMs - pace.tickMs)
    expect(await responsesOf(slow, form.id)).toEqual([])

    const apiBody = handFedBody()
    const created = slow.app.handle(
      new Request('http://intake.test/api/v1/forms', {
        method: 'POST',
        headers: { authorization: `Bearer ${slow.key}`, 'content-length': '200' },
        body: apiBody.stream,
      }),
    )
    apiBody.send('{"title":')
    const refused = await created
    expect(refused.status).toBe(408)
    expect(((await refused.json()) as { detail: string }).detail).toContain('too slowly')

    const inTime = startPost(slow, form.id, 'name=Ada'.length, 'application/x-www-form-urlencoded')
    inTime.body.send('name=')
    await Bun.sleep(pace.windowMs / 2)
    inTime.body.send('Ada')
    inTime.body.end()
    expect((await inTime.response).status).toBe(303)
    expect(((await responsesOf(slow, form.id))[0] as { data: { name: string } }).data.name).toBe('Ada')
  })

  test('a body that keeps trickling, but too slowly, is cut as well', async () => {
    const slow = await createPaced(pace)
    const form = await slow.api.createForm()
    const post = startPost(slow, form.id, 10_000, 'application/x-www-form-urlencoded')
    post.body.send('name=')
    const trickle = setInterval(() => post.body.send('a'.repeat(10)), 50)
    const res = await post.response
    clearInterval(trickle)
    expect(res.status).toBe(408)
    expect(await responsesOf(slow, form.id)).toEqual([])
  })

  test('a body that keeps the pace arrives whole, however long it takes', async () => {
    const slow = await createPaced(pace)
    const form = await slow.api.createForm({
      fields: [{ key: 'notes', type: 'textarea', label: 'Notes', config: { max_length: 100_000 } }],
    })
    const post = startPost(slow, form.id, 5 + 20 * 100, 'application/x-www-form-urlencoded')
    post.body.send('notes=')
    for (let i = 0; i < 20; i++) {
      await Bun.sleep(50)
      post.body.send('b'.repeat(i === 19 ? 99 : 100))
    }
    post.body.end()
    expect((await post.response).status).toBe(303)
    expect(((await responsesOf(slow, form.id))[0] as { data: { notes: string } }).data.notes).toHaveLength(1999)
  })

  test('an API body is held to the same pace (408 as JSON)', async () => {
    const slow = await createPaced(pace)
    const body = handFedBody()
    const res = await slow.app.handle(
      new Request('http://intake.test/api/v1/forms', {
        method: 'POST',
        headers: { authorization: `Bearer ${slow.key}` },
        body: body.stream,
      }),
    )
    expect(res.status).toBe(408)
    expect(((await res.json()) as { detail: string }).detail).toContain('too slowly')
  })

  test('a long-poll, which has no body, is not cut by it', async () => {
    const slow = await createPaced(pace)
    const form = await slow.api.createForm()
    const started = performance.now()
    const res = await slow.api.get(`/forms/${form.id}/responses?wait=1`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual([])
    expect(performance.now() - started).toBeGreaterThanOrEqual(900)
  })

  const createPaced = (bodyPace: typeof pace) => create({}, { bodyPace })
})

describe('a form post that cannot be read exactly is refused, never stored changed or in part', () => {
  test('urlencoded text that is not UTF-8: the 400 page, nothing recorded', async () => {
    const t = await create()
    const form = await t.api.createForm()
    const res = await send(t.app, 'POST', `/f/${form.id}`, {
      body: 'name=Ad%FFa',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(res.status).toBe(400)
    expect(res.text).toContain('Answer not understood')
    expect(await responsesOf(t, form.id)).toEqual([])
  })

  test('a multipart file part whose file name holds a raw CR: 400, and the answer is not recorded without the file', async () => {
    const t = await create()
    const form = await t.api.createForm({
      fields: [
        { key: 'name', type: 'text', label: 'Name' },
        { key: 'doc', type: 'file', label: 'Document' },
      ],
    })
    const body = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\nAda\r\n${filePartHead('doc', 'scan\r.pdf', 'application/pdf')}%PDF-1.4${closing}`
    const res = await send(t.app, 'POST', `/f/${form.id}`, { body, headers: { 'content-type': multipartType } })
    expect(res.status).toBe(400)
    expect(await responsesOf(t, form.id)).toEqual([])
  })

  test('a JSON body that is not UTF-8 is 422 invalid_encoding', async () => {
    const t = await create()
    const form = await t.api.createForm()
    const res = await send(t.app, 'POST', `/f/${form.id}`, {
      body: new Uint8Array([...Buffer.from('{"name":"Ad'), 0xff, ...Buffer.from('a"}')]),
      headers: { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(422)
    expect(res.body.errors).toEqual([
      { path: '', message: 'Request body is not valid UTF-8', code: 'invalid_encoding' },
    ])
  })

  test('more than 1 MiB of text in a form post is 413 (a JSON answer may not be larger either)', async () => {
    const t = await create()
    const fields = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((i) => ({
      key: `t${i}`,
      type: 'textarea',
      label: `T${i}`,
      config: { max_length: 100_000 },
    }))
    const form = await t.api.createForm({ fields })
    const full = Object.fromEntries(fields.map((field) => [field.key, 'é'.repeat(60_000)]))
    const res = await postForm(t.app, form.id, full)
    expect(res.status).toBe(413)
    expect(res.text).toContain('Too large to send')
    expect(await responsesOf(t, form.id)).toEqual([])
  })
})

describe('a form that stops taking answers while a form post to it is still arriving', () => {
  /** A form post started before `meanwhile` and finished after it: the page the person then sees, and what was recorded. */
  async function postAround(t: TestContext, formId: string, meanwhile: () => Promise<void>, body = 'name=Ada') {
    const post = startPost(t, formId, body.length, 'application/x-www-form-urlencoded')
    post.body.send(body.slice(0, 5))
    await until(() => post.body.pulls > 0, 5000, 'intake to start reading the body')
    await meanwhile()
    post.body.send(body.slice(5))
    post.body.end()
    const res = await post.response
    return { status: res.status, text: await res.text(), responses: await responsesOf(t, formId) }
  }

  test('cancelled meanwhile: the 410 page says it was cancelled, nothing is recorded', async () => {
    const t = await create()
    const form = await t.api.createForm()
    const seen = await postAround(t, form.id, async () => {
      expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
    })
    expect(seen.status).toBe(410)
    expect(seen.text).toMatch(/cancel/i)
    expect(seen.responses).toEqual([])
  })

  test('expired meanwhile: the 410 page says it expired (not what was wrong with the answer), nothing is recorded', async () => {
    const t = await create()
    for (const body of ['name=Ada', 'name=Ada&unknown=1']) {
      const form = await t.api.createForm({ expires_in: '1m' })
      const seen = await postAround(t, form.id, async () => t.clock.advance(61_000), body)
      expect(seen.status).toBe(410)
      expect(seen.text).toMatch(/expired/i)
      expect(seen.responses).toEqual([])
    }
  })

  test('answered meanwhile: the 409 page, and the one response is the first', async () => {
    const t = await create()
    const form = await t.api.createForm()
    const seen = await postAround(t, form.id, async () => {
      expect((await submit(t.app, form.id, { name: 'Grace' })).status).toBe(201)
    })
    expect(seen.status).toBe(409)
    expect(seen.responses).toMatchObject([{ data: { name: 'Grace' } }])
  })
})

describe('files move to and from the database a chunk (at most 512 KiB) at a time', () => {
  /** A form with one file field taking up to `maxSize` bytes, and a form post of a file of `size` random bytes for it. */
  async function oneFileUpload(t: TestContext, size: number, maxSize: number) {
    const form = await t.api.createForm({
      fields: [{ key: 'doc', type: 'file', label: 'Document', config: { max_size: maxSize } }],
    })
    const bytes = crypto.getRandomValues(new Uint8Array(size))
    const upload = new FormData()
    upload.append('doc', new File([bytes], 'big.bin', { type: 'application/octet-stream' }))
    return { form, bytes, upload }
  }

  /** The download of the file the form's one response holds. */
  async function storedFileRequest(t: TestContext, formId: string) {
    const [response] = (await responsesOf(t, formId)) as Array<{ data: { doc: string } }>
    return new Request(response!.data.doc, { headers: { authorization: `Bearer ${t.key}` } })
  }

  // How long these hold the event loop is measured by bench/upload-stalls.ts, not asserted here.
  test('a 3.5 MiB upload is stored as 7 chunks and downloads byte for byte', async () => {
    const t = await create()
    const { form, bytes, upload } = await oneFileUpload(t, 3.5 * MiB, 5 * MiB)
    const posted = await readResponse(
      await t.app.handle(new Request(`${BASE_URL}/f/${form.id}`, { method: 'POST', body: upload })),
      undefined,
    )
    expect(posted.status).toBe(303)
    const chunks = await t.sql('SELECT length(bytes) AS n FROM file_chunks ORDER BY seq')
    expect(chunks.map((chunk) => chunk.n)).toEqual(Array(7).fill(MiB / 2))

    const res = await t.app.handle(await storedFileRequest(t, form.id))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="big.bin"; filename*=UTF-8''big.bin`)
    expect(Buffer.compare(new Uint8Array(await res.arrayBuffer()), bytes)).toBe(0)
  })

  test('a 24 MiB file handed over in one piece is stored whole and downloads byte for byte', async () => {
    const t = await create()
    const { form, bytes, upload } = await oneFileUpload(t, 24 * MiB, 25 * MiB)
    const encoded = new Response(upload)
    const type = encoded.headers.get('content-type')!
    const body = new Uint8Array(await encoded.arrayBuffer())
    // One chunk of 24 MiB: what a client on a fast link can leave in the server's buffer at once.
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        controller.enqueue(body)
        controller.close()
      },
    })
    const request = new Request(`${BASE_URL}/f/${form.id}`, {
      method: 'POST',
      body: stream,
      headers: { 'content-type': type, 'content-length': String(body.length) },
    })
    const posted = await readResponse(await t.app.handle(request), undefined)
    expect(posted.status).toBe(303)
    const stored = await t.app.handle(await storedFileRequest(t, form.id))
    expect(Buffer.compare(new Uint8Array(await stored.arrayBuffer()), bytes)).toBe(0)
  })

  test('a file is written while it arrives, a byte at a time or not, in whole chunks and no more than its field allows', async () => {
    const t = await create()
    const form = await t.api.createForm({
      fields: [{ key: 'doc', type: 'file', label: 'Document', config: { max_size: MiB } }],
    })
    // 20,000 bytes, each in a read of its own: stored as one chunk, not 20,000.
    const post = startPost(t, form.id, 30_000)
    post.body.send(filePartHead('doc'))
    for (let i = 0; i < 20_000; i++) post.body.send(new Uint8Array([i & 0xff]))
    post.body.send(closing)
    post.body.end()
    expect((await post.response).status).toBe(303)
    expect(await t.sql('SELECT length(bytes) AS n FROM file_chunks')).toEqual([{ n: 20_000 }])

    // 2 MiB where 1 MiB is allowed (the notes' allowance lets the post through): refused, and only 1 MiB was ever written.
    const over = await t.api.createForm({
      fields: [
        { key: 'doc', type: 'file', label: 'Document', config: { max_size: MiB } },
        { key: 'notes', type: 'textarea', label: 'Notes', config: { max_length: 100_000 } },
      ],
    })
    const upload = new FormData()
    upload.append('doc', new File([new Uint8Array(2 * MiB)], 'big.bin'))
    const refused = await postForm(t.app, over.id, upload)
    expect(refused.status).toBe(422)
    expect(refused.text).toContain('The selected file must be 1\u00a0MB or smaller')
    const written = await t.sql(
      'SELECT CAST(sum(length(bytes)) AS INTEGER) AS n FROM file_chunks c JOIN unclaimed_files u ON u.file_id = c.file_id',
    )
    expect(written).toEqual([{ n: MiB }])
  })

  test("deleting the form removes its files' chunks", async () => {
    const t = await create()
    t.background.start()
    const form = await t.api.createForm({
      fields: [{ key: 'doc', type: 'file', label: 'Document', config: { max_size: 5 * MiB } }],
    })
    const upload = new FormData()
    upload.append('doc', new File([new Uint8Array(2.5 * MiB)], 'a.bin'))
    expect((await postForm(t.app, form.id, upload)).status).toBe(303)
    expect(await chunkCount(t)).toBe(5)
    expect((await t.api.delete(`/forms/${form.id}`)).status).toBe(204)
    await until(
      async () => (await chunkCount(t)) === 0,
      3000,
      "the deleted form's chunks removed",
      () => chunkCount(t),
    )
  })

  test("of two uploads racing to answer one form, the loser's chunks are removed", async () => {
    const t = await create()
    t.background.start()
    const form = await t.api.createForm({
      fields: [{ key: 'doc', type: 'file', label: 'Document', config: { max_size: 5 * MiB } }],
    })
    const upload = () => {
      const body = new FormData()
      body.append('doc', new File([new Uint8Array(2 * MiB)], 'a.bin'))
      return postForm(t.app, form.id, body)
    }
    const statuses = (await Promise.all([upload(), upload()])).map((res) => res.status).sort()
    expect(statuses).toEqual([303, 409])
    await until(
      async () => (await chunkCount(t)) === 4,
      3000,
      "only the recorded answer's chunks left",
      () => chunkCount(t),
    )
  })

  test('chunks of an upload no answer ever held (a crash between them) are removed an hour later', async () => {
    const t = await create()
    const staged = async (since: number) => {
      const fileId = crypto.randomUUID()
      await t.sql('INSERT INTO unclaimed_files (file_id, since) VALUES (?, ?)', fileId, since)
      await t.sql('INSERT INTO file_chunks (file_id, seq, bytes) VALUES (?, 0, ?)', fileId, new Uint8Array(10))
    }
    await staged(t.clock() - 61 * 60_000)
    await staged(t.clock() - 30 * 60_000)
    t.background.start()
    await until(
      async () => (await chunkCount(t)) === 1,
      3000,
      'the hour-old upload removed, the recent one kept',
      () => chunkCount(t),
    )
  })
})
