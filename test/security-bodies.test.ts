/**
 * Security, in process: request bodies and uploads bounded on every route that
 * reads one (CONTRACT 13).
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import {
  BOUNDARY,
  CHUNK,
  expectHtmlPage,
  expectJsonError,
  expectSecurityHeaders,
  FILE_FIELDS,
  FILE_MAX,
  type Fixture,
  fileFormLimit,
  fill,
  fixture,
  MCP_HEADERS,
  multipart,
  ONE_MIB,
  paddedJson,
  paddedMultipart,
  paddedUrlencoded,
  ROUTES,
  realIds,
  sendRaw,
  streamed,
  TOOLS_LIST,
  textFormLimit,
} from './security-fixtures.ts'
import { contextsPerTest, type Resolver, send, type TestContext, type TestResponse, validForm } from './utils.ts'

setDefaultTimeout(20_000)

let t: TestContext
const { create } = contextsPerTest()

async function setup(env: Record<string, string> = {}, resolver?: Resolver): Promise<TestContext> {
  return (t = await create(env, { resolver }))
}

// ================================================================= bodies bounded

interface BodyRoute {
  name: string
  method: string
  /** Where to send it, given a fresh fixture. */
  path: (fx: Fixture) => string
  headers: Record<string, string>
  withKey: boolean
  /** The most it may carry. */
  limit: number
  /** A body of exactly `size` bytes that the route accepts. */
  bodyOfSize: (size: number) => Uint8Array
  /** The answer to a body at the limit. */
  accepted: number
  /** Refusals are pages (form posts), else JSON. */
  page: boolean
}

const BODY_ROUTES: BodyRoute[] = [
  {
    name: 'POST /api/v1/forms',
    method: 'POST',
    path: () => '/api/v1/forms',
    headers: { 'content-type': 'application/json' },
    withKey: true,
    limit: ONE_MIB,
    bodyOfSize: (size) => paddedJson(validForm(), size),
    accepted: 201,
    page: false,
  },
  {
    name: 'PATCH /api/v1/forms/:id',
    method: 'PATCH',
    path: (fx) => `/api/v1/forms/${fx.activeId}`,
    headers: { 'content-type': 'application/json' },
    withKey: true,
    limit: ONE_MIB,
    bodyOfSize: (size) => paddedJson({}, size),
    accepted: 200,
    page: false,
  },
  {
    name: 'POST /mcp',
    method: 'POST',
    path: () => '/mcp',
    headers: { 'content-type': 'application/json', ...MCP_HEADERS },
    withKey: true,
    limit: ONE_MIB,
    bodyOfSize: (size) => paddedJson(TOOLS_LIST, size),
    accepted: 200,
    page: false,
  },
  {
    name: 'POST /f/:id (application/json)',
    method: 'POST',
    path: (fx) => `/f/${fx.activeId}`,
    headers: { 'content-type': 'application/json' },
    withKey: false,
    limit: ONE_MIB,
    bodyOfSize: (size) => paddedJson({ name: 'Ada' }, size),
    accepted: 201,
    page: false,
  },
  {
    name: 'POST /f/:id (application/x-www-form-urlencoded)',
    method: 'POST',
    path: (fx) => `/f/${fx.activeId}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    withKey: false,
    limit: textFormLimit,
    bodyOfSize: (size) => paddedUrlencoded({ name: 'Ada' }, size),
    accepted: 303,
    page: true,
  },
  {
    name: 'POST /f/:id (multipart/form-data)',
    method: 'POST',
    path: (fx) => `/f/${fx.activeId}`,
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    withKey: false,
    limit: textFormLimit,
    bodyOfSize: (size) => paddedMultipart([{ name: 'name', value: 'Ada' }], size),
    accepted: 303,
    page: true,
  },
]

/** The form with a file field (max_size FILE_MAX), for upload bounds. */
async function fileForm() {
  return t.api.createForm({ fields: FILE_FIELDS })
}

/** The answer to an over-limit body: 413, as JSON with a detail, or as a page for form posts. */
function expectTooLarge(res: TestResponse, route: { page: boolean }, what: string) {
  if (route.page) expectHtmlPage(res, 413, what)
  else expectJsonError(res, 413, what)
  expectSecurityHeaders(res, what)
}

describe('request bodies are bounded on every route that reads one', () => {
  for (const route of BODY_ROUTES) {
    describe(route.name, () => {
      test(`a declared Content-Length over ${route.limit} bytes is refused with 413 before the body is read`, async () => {
        await setup()
        const fx = await fixture(t)
        const body = streamed(route.bodyOfSize(route.limit + 1))
        const res = await sendRaw(t, route.method, route.path(fx), {
          body: body.stream,
          headers: { ...route.headers, 'content-length': String(route.limit + 1) },
          key: route.withKey ? t.key : undefined,
        })
        expect({ status: res.status, pulled: body.pulled <= CHUNK }).toEqual({ status: 413, pulled: true })
        expectTooLarge(res, route, `${route.name}, Content-Length ${route.limit + 1}`)
      })

      test('a chunked body (no Content-Length) growing past the limit is refused with 413, and not read to its end', async () => {
        await setup()
        const fx = await fixture(t)
        const total = route.limit * 2 + 8 * CHUNK
        const body = streamed(route.bodyOfSize(total))
        const res = await sendRaw(t, route.method, route.path(fx), {
          body: body.stream,
          headers: route.headers,
          key: route.withKey ? t.key : undefined,
        })
        // The server stops once past the limit: what it pulled is the limit and at most a chunk read ahead.
        expect({ status: res.status, pulled: body.pulled <= route.limit + 2 * CHUNK }).toEqual({
          status: 413,
          pulled: true,
        })
        expect(body.pulled).toBeLessThan(total)
        expectTooLarge(res, route, `${route.name}, chunked ${total} bytes`)
      })

      test(`a body of exactly ${route.limit} bytes (declared) is read and accepted`, async () => {
        await setup()
        const fx = await fixture(t)
        const bytes = route.bodyOfSize(route.limit)
        expect(bytes.byteLength).toBe(route.limit)
        const res = await sendRaw(t, route.method, route.path(fx), {
          body: bytes,
          headers: { ...route.headers, 'content-length': String(route.limit) },
          key: route.withKey ? t.key : undefined,
        })
        expect({ status: res.status, body: res.status === route.accepted ? 'ok' : res.text.slice(0, 300) }).toEqual({
          status: route.accepted,
          body: 'ok',
        })
      })

      test(`a chunked body of exactly ${route.limit} bytes is read and accepted`, async () => {
        await setup()
        const fx = await fixture(t)
        const body = streamed(route.bodyOfSize(route.limit))
        const res = await sendRaw(t, route.method, route.path(fx), {
          body: body.stream,
          headers: route.headers,
          key: route.withKey ? t.key : undefined,
        })
        expect({ status: res.status, body: res.status === route.accepted ? 'ok' : res.text.slice(0, 300) }).toEqual({
          status: route.accepted,
          body: 'ok',
        })
        expect(body.pulled).toBe(route.limit)
      })
    })
  }

  test('the body limit of a form post is what its fields allow (a form with a file field allows its max_size more)', () => {
    expect(fileFormLimit - textFormLimit).toBeGreaterThanOrEqual(FILE_MAX)
    expect(textFormLimit).toBeLessThan(ONE_MIB)
  })

  describe('uploads are bounded by the form', () => {
    const upload = (size: number, filename = 'upload.bin') => ({
      name: 'photo',
      filename,
      type: 'application/octet-stream',
      bytes: new Uint8Array(size).fill(65),
    })
    const postBytes = (formId: string, bytes: Uint8Array | ReadableStream, declared?: number) =>
      sendRaw(t, 'POST', `/f/${formId}`, {
        body: bytes,
        headers: {
          'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
          ...(declared === undefined ? {} : { 'content-length': String(declared) }),
        },
      })

    test(`a file of exactly max_size (${FILE_MAX} bytes) is stored`, async () => {
      await setup()
      const form = await fileForm()
      const bytes = multipart([{ name: 'name', value: 'Ada' }, upload(FILE_MAX)])
      const res = await postBytes(form.id, bytes, bytes.byteLength)
      expect(res.status).toBe(303)
      const [response] = (await t.api.get(`/forms/${form.id}/responses`)).body
      const file = await send(t.app, 'GET', new URL(response.data.photo).pathname, { key: t.key })
      expect(file.status).toBe(200)
      expect(file.text.length).toBe(FILE_MAX)
    })

    test("a post of exactly the form's limit is read: its file, too large, is refused next to its field (422), not 413", async () => {
      await setup()
      const form = await fileForm()
      // Multipart grows byte for byte with the file: this file makes the post exactly the limit.
      const frame = multipart([{ name: 'name', value: 'Ada' }, upload(0)]).byteLength
      const bytes = multipart([{ name: 'name', value: 'Ada' }, upload(fileFormLimit - frame)])
      expect(bytes.byteLength).toBe(fileFormLimit)
      const res = await postBytes(form.id, bytes, bytes.byteLength)
      expectHtmlPage(res, 422, 'a post of exactly the limit')
      expect(res.text).toContain('value="Ada"')
      expect((await t.api.get(`/forms/${form.id}/responses`)).body).toEqual([])
    })

    test('a file one byte over max_size is refused (422, the page with the error at the field), nothing is recorded', async () => {
      await setup()
      const form = await fileForm()
      const res = await postBytes(form.id, multipart([{ name: 'name', value: 'Ada' }, upload(FILE_MAX + 1)]))
      expectHtmlPage(res, 422, 'a file over max_size')
      expect(res.text).toContain('aria-invalid')
      expect((await t.api.get(`/forms/${form.id}/responses`)).body).toEqual([])
    })

    test("a post one byte over the form's limit is 413 (a page), nothing is recorded", async () => {
      await setup()
      const form = await fileForm()
      const bytes = paddedMultipart([{ name: 'name', value: 'Ada' }, upload(FILE_MAX)], fileFormLimit + 1)
      expectTooLarge(await postBytes(form.id, bytes), { page: true }, 'file form, limit + 1 (undeclared)')
      expectTooLarge(
        await postBytes(form.id, bytes, bytes.byteLength),
        { page: true },
        'file form, limit + 1 (declared)',
      )
      expect((await t.api.get(`/forms/${form.id}/responses`)).body).toEqual([])
    })

    test("an upload 4 MiB past the form's limit (its file may hold 1 KiB) is refused with 413 after reading at most the limit, declared or chunked", async () => {
      await setup()
      const form = await fileForm()
      const bytes = multipart([{ name: 'name', value: 'Ada' }, upload(fileFormLimit + 4 * ONE_MIB)])
      const chunked = streamed(bytes)
      expectTooLarge(await postBytes(form.id, chunked.stream), { page: true }, '4 MiB upload, chunked')
      expect(chunked.pulled).toBeLessThanOrEqual(fileFormLimit + 2 * CHUNK)
      const declared = streamed(bytes)
      expectTooLarge(
        await postBytes(form.id, declared.stream, bytes.byteLength),
        { page: true },
        '4 MiB upload, declared',
      )
      expect(declared.pulled).toBeLessThanOrEqual(CHUNK)
      expect((await t.api.get(`/forms/${form.id}/responses`)).body).toEqual([])
    })
  })

  test('routes that take no body do not read one: a 4 MiB chunked body is left (almost) unread', async () => {
    await setup()
    const fx = await fixture(t)
    const readers = new Set(BODY_ROUTES.map((route) => `${route.method} ${route.name.split(' ')[1]}`))
    const others = ROUTES.filter((route) => route.method !== 'GET' && !readers.has(`${route.method} ${route.path}`))
    expect(others.map((route) => `${route.method} ${route.path}`)).toEqual(
      expect.arrayContaining(['DELETE /api/v1/forms/:id', 'POST /api/v1/forms/:id/deliveries/:deliveryId/redeliver']),
    )
    for (const route of [...others, { method: 'POST', path: '/nowhere' }, { method: 'PUT', path: '/api/v1/forms' }]) {
      const body = streamed(new Uint8Array(4 * ONE_MIB).fill(32))
      const path = fill(route.path, realIds(fx))
      const res = await sendRaw(t, route.method, path, {
        body: body.stream,
        headers: { 'content-type': 'application/json', ...MCP_HEADERS },
        key: t.key,
      })
      expect({
        route: `${route.method} ${path} -> ${res.status}`,
        pulledAtMost: body.pulled <= ONE_MIB + 2 * CHUNK,
      }).toEqual({
        route: `${route.method} ${path} -> ${res.status}`,
        pulledAtMost: true,
      })
      expectSecurityHeaders(res, `${route.method} ${path} with an unread body`)
    }
  })
})
