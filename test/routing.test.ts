/**
 * Routing never depends on the Host header (CONTRACT 13): every path means the
 * same whatever Host says, unknown paths are 404 (never a 500), and the API
 * needs a key whatever tricks the path plays. Sent over raw TCP to a real
 * Bun.serve running the app, because a Request built in the test cannot carry
 * a Host of one character, an empty one, none at all, or an absolute-form target.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { createTestContext, readResponse, type TestContext, type TestResponse } from './utils.ts'

const MCP_TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })

let t: TestContext
let server: ReturnType<typeof Bun.serve>
let formId: string

beforeAll(async () => {
  t = await createTestContext()
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: t.app.handle })
  formId = (await t.api.createForm()).id
})

afterAll(async () => {
  server.stop(true)
  await t.close()
})

interface RawRequest {
  method: string
  /** The request target exactly as sent: a path, or an absolute URL. */
  target: string
  /** The Host header line as sent (`Host: x`), or null for none. */
  hostLine: string | null
  version?: 'HTTP/1.1' | 'HTTP/1.0'
  key?: string
  body?: string
  /** The body's type: JSON unless said. */
  contentType?: string
}

/** One request over its own connection, written byte for byte; the answer read until the server closes. */
function sendRaw(request: RawRequest): Promise<TestResponse> {
  const lines = [`${request.method} ${request.target} ${request.version ?? 'HTTP/1.1'}`]
  if (request.hostLine !== null) lines.push(request.hostLine)
  if (request.key) lines.push(`Authorization: Bearer ${request.key}`)
  if (request.body !== undefined) {
    lines.push(
      `Content-Type: ${request.contentType ?? 'application/json'}`,
      'Accept: application/json, text/event-stream',
      `Content-Length: ${Buffer.byteLength(request.body)}`,
    )
  }
  lines.push('Connection: close', '', request.body ?? '')
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket = connect(server.port!, '127.0.0.1', () => socket.write(lines.join('\r\n')))
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${lines[0]}`)))
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => {
      try {
        resolve(readResponse(parseHttpResponse(Buffer.concat(chunks)), request.key && `Bearer ${request.key}`))
      } catch (error) {
        reject(error)
      }
    })
  })
}

/** An HTTP/1.1 answer as bytes, as a Response (chunked bodies decoded). */
function parseHttpResponse(bytes: Buffer): Response {
  const headEnd = bytes.indexOf('\r\n\r\n')
  if (headEnd === -1) throw new Error(`not an HTTP answer: ${JSON.stringify(bytes.toString('latin1').slice(0, 200))}`)
  const [statusLine, ...headerLines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n')
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine!)?.[1])
  const headers = new Headers(
    headerLines.map(
      (line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()] as [string, string],
    ),
  )
  let body = bytes.subarray(headEnd + 4)
  if (headers.get('transfer-encoding') === 'chunked') {
    const parts: Buffer[] = []
    for (let at = 0; ; ) {
      const sizeEnd = body.indexOf('\r\n', at)
      const size = parseInt(body.subarray(at, sizeEnd).toString('latin1'), 16)
      if (!size) break
      parts.push(body.subarray(sizeEnd + 2, sizeEnd + 2 + size))
      at = sizeEnd + 2 + size + 2
    }
    body = Buffer.concat(parts)
  }
  headers.delete('transfer-encoding')
  return new Response(status === 204 || status === 304 ? null : body, { status, headers })
}

/** What a client compares: status and body (request ids and dates aside). */
const answerOf = (res: TestResponse) => ({ status: res.status, body: res.text })

const normalHost = () => `Host: 127.0.0.1:${server.port}`

/**
 * Host headers a client may send: each must leave the meaning of every path
 * alone. Short ones fooled the router; ones the URL parser refuses left "/../"
 * unresolved. (HTTP/1.1 without Host is Bun's own 400; HTTP/1.0 is tried below.)
 */
const HOST_LINES = [
  'Host: x',
  'Host: a:1',
  'Host: abc',
  'Host: :8080',
  'Host: ',
  'Host: [::1]',
  'Host: [::1]:8080',
  'Host: [zz]',
  'Host: a:b',
  'Host: 1.2.3.4.5',
  'Host: a/b',
  'Host: a@b',
  'Host: forms.example.com',
]

/**
 * Paths, with whether they need a key and what they answer with it. The
 * tricks (dot segments, doubled and encoded slashes, a prefix before /api)
 * mean what they mean under the server's own Host, and the same under any other.
 */
const paths = () => [
  { path: '/api/v1/forms', needsKey: true, withKey: 200 },
  { path: `/api/v1/forms/${formId}`, needsKey: true, withKey: 200 },
  { path: `/api/v1/forms/${formId}/responses`, needsKey: true, withKey: 200 },
  { path: '/api/v1/forms?status=active&limit=5', needsKey: true, withKey: 200 },
  { path: '/api/v1/../v1/forms', needsKey: true, withKey: 200 },
  { path: '/zzz/../api/v1/forms', needsKey: true, withKey: 200 },
  { path: '/%2e%2e/api/v1/./forms', needsKey: true, withKey: 200 },
  { path: '/api\\v1\\forms', needsKey: true, withKey: 200 },
  { path: `/api/v1/forms%2F${formId}`, needsKey: true, withKey: 404 },
  { path: '/api/v1/openapi.json', needsKey: false, withKey: 200 },
  { path: '/healthz', needsKey: false, withKey: 200 },
  { path: '/', needsKey: false, withKey: 200 },
  { path: `/f/${formId}`, needsKey: false, withKey: 200 },
  { path: '/zzz/api/v1/forms', needsKey: false, withKey: 404 },
  { path: '/zzzz/healthz', needsKey: false, withKey: 404 },
  { path: '//api/v1/forms', needsKey: false, withKey: 404 },
  { path: '/api//v1/forms', needsKey: false, withKey: 404 },
  { path: '/api%2Fv1/forms', needsKey: false, withKey: 404 },
  { path: '/%61pi/v1/forms', needsKey: false, withKey: 404 },
  { path: '/API/v1/forms', needsKey: false, withKey: 404 },
  { path: '//mcp', needsKey: false, withKey: 404 },
  { path: '/zz/mcp', needsKey: false, withKey: 404 },
]

describe('every path means the same whatever Host says', () => {
  test("GET with and without a key: the same status and body as with the server's own Host; never a 5xx", async () => {
    const mismatches: unknown[] = []
    let compared = 0
    for (const { path, needsKey, withKey } of paths()) {
      for (const key of [undefined, t.key]) {
        const expected = answerOf(await sendRaw({ method: 'GET', target: path, hostLine: normalHost(), key }))
        expect({ path, key: !!key, status: expected.status }).toEqual({
          path,
          key: !!key,
          status: !key && needsKey ? 403 : withKey,
        })
        for (const hostLine of HOST_LINES) {
          const got = answerOf(await sendRaw({ method: 'GET', target: path, hostLine, key }))
          compared++
          if (got.status !== expected.status || got.body !== expected.body)
            mismatches.push({
              path,
              hostLine,
              key: !!key,
              expected: expected.status,
              got: got.status,
              body: got.body.slice(0, 120),
            })
        }
      }
    }
    console.log(
      `routing: ${compared} requests under ${HOST_LINES.length} Host headers compared with the server's own Host`,
    )
    expect(mismatches).toEqual([])
  })

  test('HTTP/1.0 without Host, and absolute-form targets naming another host, are routed by their path alone', async () => {
    const mismatches: unknown[] = []
    for (const { path } of paths()) {
      for (const key of [undefined, t.key]) {
        const expected = answerOf(await sendRaw({ method: 'GET', target: path, hostLine: normalHost(), key }))
        const variants: RawRequest[] = [
          { method: 'GET', target: path, hostLine: null, version: 'HTTP/1.0', key },
          { method: 'GET', target: `http://other${path}`, hostLine: 'Host: y', key },
          { method: 'GET', target: `http://other.example.com:99${path}`, hostLine: normalHost(), key },
          { method: 'GET', target: `http://x${path}`, hostLine: 'Host: x', key },
        ]
        for (const variant of variants) {
          const got = answerOf(await sendRaw(variant))
          if (got.status !== expected.status || got.body !== expected.body) {
            mismatches.push({
              target: variant.target,
              hostLine: variant.hostLine,
              key: !!key,
              expected: expected.status,
              got: got.status,
              body: got.body.slice(0, 120),
            })
          }
        }
      }
    }
    expect(mismatches).toEqual([])
  })

  test('POST /mcp and POST to paths that only look like it: the same answer under every Host', async () => {
    const mismatches: unknown[] = []
    for (const path of ['/mcp', '/mcp/', '//mcp', '/zz/mcp', '/zzz/mcp', '/zzz/api/v1/forms']) {
      const isMcp = path === '/mcp' || path === '/mcp/'
      for (const key of [undefined, t.key]) {
        const expected = answerOf(
          await sendRaw({ method: 'POST', target: path, hostLine: normalHost(), key, body: MCP_TOOLS_LIST }),
        )
        expect({ path, key: !!key, status: expected.status }).toEqual({
          path,
          key: !!key,
          status: isMcp ? (key ? 200 : 403) : 404,
        })
        for (const hostLine of HOST_LINES) {
          const got = answerOf(await sendRaw({ method: 'POST', target: path, hostLine, key, body: MCP_TOOLS_LIST }))
          if (got.status !== expected.status || got.body !== expected.body)
            mismatches.push({
              path,
              hostLine,
              key: !!key,
              expected: expected.status,
              got: got.status,
              body: got.body.slice(0, 120),
            })
        }
      }
    }
    expect(mismatches).toEqual([])
  })

  test('an answer posted to the page (form post and JSON) is judged the same under every Host', async () => {
    const mismatches: unknown[] = []
    const posts: Array<Pick<RawRequest, 'body' | 'contentType'>> = [
      { body: 'name=', contentType: 'application/x-www-form-urlencoded' },
      { body: '{}', contentType: 'application/json' },
    ]
    for (const post of posts) {
      for (const target of [`/f/${formId}`, `/zzz/../f/${formId}`]) {
        const expected = answerOf(
          await sendRaw({ method: 'POST', target: `/f/${formId}`, hostLine: normalHost(), ...post }),
        )
        expect({ contentType: post.contentType, status: expected.status }).toEqual({
          contentType: post.contentType,
          status: 422,
        })
        for (const hostLine of HOST_LINES) {
          const got = answerOf(await sendRaw({ method: 'POST', target, hostLine, ...post }))
          if (got.status !== expected.status || got.body !== expected.body)
            mismatches.push({
              target,
              hostLine,
              contentType: post.contentType,
              expected: expected.status,
              got: got.status,
              body: got.body.slice(0, 120),
            })
        }
      }
    }
    expect(mismatches).toEqual([])
  })
})

describe('the API needs a key whatever the path and Host say', () => {
  test('without a key, every path that reaches the API is 403 Not authenticated and no other is, under every Host', async () => {
    const wrong: unknown[] = []
    for (const { path, needsKey } of paths()) {
      for (const hostLine of [normalHost(), ...HOST_LINES]) {
        const res = await sendRaw({ method: 'GET', target: path, hostLine })
        const refused = res.status === 403 && res.body?.detail === 'Not authenticated'
        if (refused !== needsKey || res.status >= 500)
          wrong.push({ path, hostLine, status: res.status, body: res.text.slice(0, 120) })
      }
    }
    expect(wrong).toEqual([])
  })

  test('with the key, the API answers the same paths under every Host: the key check and the router agree', async () => {
    const wrong: unknown[] = []
    for (const { path, withKey } of paths()) {
      for (const hostLine of [normalHost(), ...HOST_LINES]) {
        const res = await sendRaw({ method: 'GET', target: path, hostLine, key: t.key })
        if (res.status !== withKey) wrong.push({ path, hostLine, status: res.status, body: res.text.slice(0, 120) })
      }
    }
    expect(wrong).toEqual([])
  })
})
