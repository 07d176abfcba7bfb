/**
 * How long a large upload or download holds the event loop (CONTRACT 13:
 * bodies are parsed and files moved a piece at a time), in-process on the
 * store the tests use (SQLite; INTAKE_TEST_STORE=postgres for PostgreSQL):
 *
 *   bun bench/upload-stalls.ts
 *
 * 1. a 3.5 MiB file posted as a browser sends it, then downloaded;
 * 2. a 24 MiB file handed over as one 24 MiB chunk, as a client on a fast
 *    link can leave it in the server's buffer at once.
 * Prints the longest stall of each (the aim: well under 50 ms). It asserts
 * nothing about time; it exits 1 only when a request fails.
 */
import { BASE_URL, createTestContext, longestStall, readResponse, type TestContext } from '../test/utils.ts'

const MiB = 1024 * 1024

async function fileForm(t: TestContext, size: number, maxSize: number) {
  const form = await t.api.createForm({
    fields: [{ key: 'doc', type: 'file', label: 'Document', config: { max_size: maxSize } }],
  })
  const upload = new FormData()
  upload.append(
    'doc',
    new File([crypto.getRandomValues(new Uint8Array(size))], 'big.bin', { type: 'application/octet-stream' }),
  )
  return { form, upload }
}

function expectStatus(what: string, status: number, wanted: number) {
  if (status !== wanted) throw new Error(`${what}: ${status}, expected ${wanted}`)
}

async function posted(t: TestContext, request: Request) {
  return longestStall(async () => readResponse(await t.app.handle(request), undefined))
}

const t = await createTestContext()
try {
  // 1. A browser's post of 3.5 MiB, then its download. The request is made first: only intake's handling is timed.
  const small = await fileForm(t, 3.5 * MiB, 5 * MiB)
  const upload = await posted(t, new Request(`${BASE_URL}/f/${small.form.id}`, { method: 'POST', body: small.upload }))
  expectStatus('3.5 MiB post', upload.result.status, 303)
  const [response] = (await t.api.get(`/forms/${small.form.id}/responses`)).body as Array<{ data: { doc: string } }>
  const downloadRequest = new Request(response!.data.doc, { headers: { authorization: `Bearer ${t.key}` } })
  const download = await longestStall(async () => {
    const res = await t.app.handle(downloadRequest)
    for await (const _piece of res.body!);
    return res
  })
  expectStatus('3.5 MiB download', download.result.status, 200)
  console.log(
    `3.5 MiB file: longest event-loop stall ${upload.stallMs.toFixed(1)} ms uploading, ${download.stallMs.toFixed(1)} ms downloading`,
  )

  // 2. 24 MiB in one chunk.
  const large = await fileForm(t, 24 * MiB, 25 * MiB)
  const encoded = new Response(large.upload)
  const type = encoded.headers.get('content-type')!
  const body = new Uint8Array(await encoded.arrayBuffer())
  const stream = new ReadableStream<Uint8Array>({
    start: (controller) => {
      controller.enqueue(body)
      controller.close()
    },
  })
  const headers = { 'content-type': type, 'content-length': String(body.length) }
  const oneChunk = await posted(
    t,
    new Request(`${BASE_URL}/f/${large.form.id}`, { method: 'POST', body: stream, headers }),
  )
  expectStatus('24 MiB post in one chunk', oneChunk.result.status, 303)
  console.log(`24 MiB file in one chunk: longest event-loop stall ${oneChunk.stallMs.toFixed(1)} ms`)
} finally {
  await t.close()
}
