/**
 * CONTRACT 13: CPU work that input decides never holds the event loop for
 * more than 50 ms per request. One test per kind of costly input, in-process:
 * each checks what the client is told, and reports the longest stall of the
 * event loop while the request ran (test/utils.ts longestStall), which
 * bench/check-bounds.ts holds to the contract's 50 ms.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { reportFigure } from './figures.ts'
import {
  BASE_URL,
  createTestContext,
  longestStall,
  readResponse,
  send,
  type TestContext,
  type TestResponse,
} from './utils.ts'

/** A 422 lists at most this many problems (docs/agents.md "Errors"). */
const PROBLEMS_LISTED = 100
const MCP_HEADERS = { accept: 'application/json, text/event-stream' }

let t: TestContext
beforeAll(async () => {
  t = await createTestContext()
  // The MCP SDK loads on the first call to /mcp (about 100 ms, once): not what these tests measure.
  await send(t.app, 'POST', '/mcp', {
    key: t.key,
    headers: MCP_HEADERS,
    body: { jsonrpc: '2.0', id: 0, method: 'tools/list' },
  })
})
afterAll(() => t.close())

/**
 * Sends the request five times and reports the median of the longest stalls:
 * the work a request does stalls the loop every time, while a stall of the
 * machine (another process on the same cores, the first compile of a code
 * path) comes once. Only the server's part is timed: the body is written
 * before, and the answer read after. Every figure is printed.
 */
async function typicalStall(name: string, makeRequest: () => Request): Promise<TestResponse> {
  const stalls: number[] = []
  let last: TestResponse | undefined
  for (let round = 0; round < 5; round++) {
    const sent = makeRequest()
    const { result, stallMs } = await longestStall(async () => {
      const response = await t.app.handle(sent)
      return { response, body: await response.arrayBuffer() }
    })
    stalls.push(stallMs)
    last = await readResponse(
      new Response(result.body, result.response),
      sent.headers.get('authorization') ?? undefined,
    )
  }
  const median = stalls.toSorted((a, b) => a - b)[2]!
  console.log(
    `${name}: ${last!.status}, ${last!.text.length} bytes; longest stall per request ${stalls.map((ms) => ms.toFixed(1)).join(', ')} ms (median ${median.toFixed(1)})`,
  )
  reportFigure('event-loop stall, median of 5 (ms)', name, median)
  return last!
}

/** A request as a client sends it, its body (JSON text, or an object to write as JSON) written once. */
function request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): () => Request {
  const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
  const auth: Record<string, string> =
    path.startsWith('/api/') || path === '/mcp' ? { authorization: `Bearer ${t.key}` } : {}
  return () =>
    new Request(`${BASE_URL}${path}`, {
      method,
      body: text,
      headers: { 'content-type': 'application/json', ...auth, ...headers },
    })
}

/** A create body of 100 select fields of 200 options each. */
const selectFields = (option: (field: number, index: number) => unknown) => ({
  title: 'Every option',
  fields: Array.from({ length: 100 }, (_, f) => ({
    key: `f${f}`,
    type: 'select',
    label: `Field ${f}`,
    config: { options: Array.from({ length: 200 }, (_, o) => option(f, o)) },
  })),
})
/** The largest form: 100 selects of 200 options of 42 characters, about 900 KB of JSON (the API takes 1 MiB). */
const LARGEST_FORM = selectFields((f, o) => `option ${o} of field ${f} `.padEnd(42, '.'))

const manyKeys = (count: number) => `{${Array.from({ length: count }, (_, i) => `"key${i}":${i}`).join(',')}}`
const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)

/** A 422 that lists the first PROBLEMS_LISTED problems and says there are more. */
function expectListCapped(res: TestResponse, path: RegExp) {
  expect(res.status).toBe(422)
  expect(res.body.errors).toHaveLength(PROBLEMS_LISTED)
  for (const problem of res.body.errors) expect(problem.path).toMatch(path)
  expect(res.body.detail).toContain(`stops at the first ${PROBLEMS_LISTED}`)
}

describe('creating a form (POST /api/v1/forms)', () => {
  test('20,000 invalid options: the first 100 problems, and a note that there are more', async () => {
    const body = selectFields((_f, o) => o)
    const res = await typicalStall('create, 100 x 200 numeric options', request('POST', '/api/v1/forms', body))
    expectListCapped(res, /^\/fields\/\d+\/config\/options\/\d+$/)
    expect(res.body.errors[0]).toEqual({
      path: '/fields/0/config/options/0',
      message: 'Expected a string or an object {"value", "label"}',
      code: 'invalid_type',
    })
  })

  test('20,000 options with an unknown key each: the first 100 unknown keys', async () => {
    const body = selectFields((_f, o) => ({ value: `v${o}`, label: `Option ${o}`, colour: 'red' }))
    const res = await typicalStall(
      'create, 100 x 200 options with an unknown key',
      request('POST', '/api/v1/forms', body),
    )
    expectListCapped(res, /^\/fields\/\d+\/config\/options\/\d+\/colour$/)
    expect(res.body.errors[0].message).toBe('Unknown key')
  })

  test('60,000 unknown top-level keys: the first 100', async () => {
    const res = await typicalStall('create, 60,000 unknown keys', request('POST', '/api/v1/forms', manyKeys(60_000)))
    expectListCapped(res, /^\/(key\d+|title|fields)$/)
  })

  test('a context nested 500,000 levels deep: refused before it is parsed, at /context', async () => {
    const body = `{"title":"Deep","fields":[{"key":"a","type":"text","label":"A"}],"context":{"a":${nestedArrays(500_000)}}}`
    const res = await typicalStall('create, context 500,000 levels deep', request('POST', '/api/v1/forms', body))
    expect(res.status).toBe(422)
    expect(res.body.errors).toEqual([
      { path: '/context', message: 'Must not nest deeper than 100 levels', code: 'invalid_value' },
    ])
  })

  test('the largest valid form (100 selects of 200 options) is created, with an Idempotency-Key', async () => {
    expect(JSON.stringify(LARGEST_FORM).length).toBeGreaterThan(850_000)
    const create = request('POST', '/api/v1/forms', LARGEST_FORM)
    // With an Idempotency-Key the body is also read in canonical form, to compare it with a retry's.
    const res = await typicalStall('create, 100 x 200 options, valid, with an Idempotency-Key', () => {
      const sent = create()
      sent.headers.set('idempotency-key', crypto.randomUUID())
      return sent
    })
    expect(res.status).toBe(201)
    expect(res.body.fields_count).toBe(100)
  })

  test('patterns that backtrack for seconds in JavaScript, checked against long defaults', async () => {
    const hostile = ['(a+)+$', '(a|a)*b', '(\\w+\\s?)*$', '(.*a){20}']
    const body = {
      title: 'Catastrophic backtracking',
      fields: hostile.map((pattern, i) => ({
        key: `f${i}`,
        type: 'text',
        label: pattern,
        config: { pattern, default: `${'a'.repeat(40)}!` },
      })),
    }
    const res = await typicalStall('create, 4 backtracking patterns', request('POST', '/api/v1/forms', body))
    // The defaults do not match: each is refused, at once.
    expect(res.status).toBe(422)
    expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(
      hostile.map((_, i) => `/fields/${i}/config/default`),
    )
  })

  test('MCP: a body nested 500,000 levels deep is a JSON-RPC parse error, refused before it is parsed', async () => {
    const res = await typicalStall('MCP, 500,000 levels', request('POST', '/mcp', nestedArrays(500_000), MCP_HEADERS))
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe(-32700)
    expect(res.body.detail).toContain('deeper than')
  })

  test('MCP: a tool call whose arguments hold 60,000 keys is refused without holding the loop', async () => {
    const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_form","arguments":${manyKeys(60_000)}}}`
    const res = await typicalStall('MCP create_form, 60,000 unknown keys', request('POST', '/mcp', call, MCP_HEADERS))
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe(-32602)
    expect(res.body.detail).toContain('no tool takes more than 64 arguments')
  })

  test('MCP create_form with 20,000 invalid options: a tool error naming the first problems', async () => {
    const call = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'create_form', arguments: selectFields((_f, o) => o) },
    }
    const res = await typicalStall(
      'MCP create_form, 100 x 200 numeric options',
      request('POST', '/mcp', call, MCP_HEADERS),
    )
    expect(res.status).toBe(200)
    expect(res.body.result.isError).toBe(true)
    expect(res.body.result.content[0].text).toContain(`stops at the first ${PROBLEMS_LISTED}`)
  })
})

describe('changing a form (PATCH /api/v1/forms/{id})', () => {
  test('60,000 unknown keys: the first 100', async () => {
    const form = await t.api.createForm()
    const res = await typicalStall(
      'patch, 60,000 unknown keys',
      request('PATCH', `/api/v1/forms/${form.id}`, manyKeys(60_000)),
    )
    expectListCapped(res, /^\/key\d+$/)
  })
})

describe('reading a form', () => {
  test('GET /api/v1/forms/{id}/schema of the largest form', async () => {
    const form = await t.api.createForm(LARGEST_FORM)
    const res = await typicalStall('schema of the largest form', request('GET', `/api/v1/forms/${form.id}/schema`))
    expect(res.status).toBe(200)
    expect(Object.keys(res.body.properties)).toHaveLength(100)
    expect(res.body.properties.f99.enum).toHaveLength(200)
  })
})

describe('answering a form with JSON (POST /f/{id})', () => {
  let formId: string
  beforeAll(async () => {
    formId = (await t.api.createForm({ fields: [{ key: 'name', type: 'text', label: 'Name', required: true }] })).id
  })

  test('60,000 unknown keys: the first 100', async () => {
    const res = await typicalStall('answer, 60,000 unknown keys', request('POST', `/f/${formId}`, manyKeys(60_000)))
    expectListCapped(res, /^\/(key\d+|name)$/)
  })

  test('an array of 250,000 numbers as a value', async () => {
    const body = `{"name":[${Array.from({ length: 250_000 }, () => '7').join(',')}]}`
    const res = await typicalStall('answer, 250,000-element array', request('POST', `/f/${formId}`, body))
    expect(res.status).toBe(422)
    expect(res.body.errors).toEqual([{ path: '/name', message: 'Expected text', code: 'invalid_type' }])
  })

  test('a value nested 500,000 levels deep: refused before it is parsed', async () => {
    const res = await typicalStall(
      'answer, 500,000 levels deep',
      request('POST', `/f/${formId}`, `{"name":${nestedArrays(500_000)}}`),
    )
    expect(res.status).toBe(422)
    expect(res.body.errors).toEqual([
      { path: '/name', message: 'Must not nest deeper than 100 levels', code: 'invalid_value' },
    ])
  })

  test('a 10,000-character answer to a pattern that backtracks for seconds in JavaScript', async () => {
    const form = await t.api.createForm({
      fields: [{ key: 'code', type: 'text', label: 'Code', config: { pattern: '(a+)+$', max_length: 10_000 } }],
    })
    const res = await typicalStall(
      'answer, (a+)+$ against 10,000 characters',
      request('POST', `/f/${form.id}`, { code: `${'a'.repeat(9_999)}!` }),
    )
    expect(res.status).toBe(422)
    expect(res.body.errors).toEqual([{ path: '/code', message: 'Does not match the required format', code: 'pattern' }])
  })
})

describe('a pattern stored by an older version that RE2 cannot run', () => {
  /**
   * An older version accepted any pattern the browser compiles; this one is
   * written into the database as such a version would have stored it. The
   * lookahead makes RE2 refuse it; `(a+)+$` backtracks for seconds.
   */
  async function legacyForm(pattern: string) {
    const form = await t.api.createForm({
      fields: [{ key: 'code', type: 'text', label: 'Code', required: true, config: { pattern: 'a+' } }],
    })
    const fields = [{ key: 'code', type: 'text', label: 'Code', required: true, config: { pattern } }]
    await t.sql('UPDATE forms SET fields = ? WHERE id = ?', JSON.stringify(fields), form.id)
    return form.id
  }
  const BACKTRACKING = '(?=a)(a+)+$'

  test('an answer that matches is recorded; a hostile one is refused, with a message, and no request waits for it', async () => {
    // The honest answer first: a hostile one holds the checking thread for up to half a second after it is refused.
    const honest = await legacyForm(BACKTRACKING)
    expect((await send(t.app, 'POST', `/f/${honest}`, { body: { code: 'aaa' } })).status).toBe(201)
    expect((await t.api.get(`/forms/${honest}/responses`)).body[0].data).toEqual({ code: 'aaa' })

    const id = await legacyForm(BACKTRACKING)
    const res = await typicalStall(
      'answer to an old pattern, JSON',
      request('POST', `/f/${id}`, { code: `${'a'.repeat(40)}!` }),
    )
    expect(res.status).toBe(422)
    expect(res.body.errors).toEqual([
      {
        path: '/code',
        message: expect.stringMatching(
          /^(Could not be checked against the required format in time|Does not match the required format)/,
        ),
        code: 'pattern',
      },
    ])
  })

  test('the same through the page (a form post)', async () => {
    const id = await legacyForm(BACKTRACKING)
    const post = request('POST', `/f/${id}`, new URLSearchParams({ code: `${'a'.repeat(40)}!` }).toString(), {
      'content-type': 'application/x-www-form-urlencoded',
    })
    const res = await typicalStall('answer to an old pattern, form post', post)
    expect(res.status).toBe(422)
    // The page words it in its language: the format asked for was not met (or could not be checked in time).
    expect(res.text).toContain('Enter the answer in the format asked for')
  })
})

describe('a large body is read as JSON.parse reads it, a piece at a time', () => {
  const json = fc.jsonValue({ maxDepth: 3 })
  const key = fc.oneof(fc.constantFrom('__proto__', 'constructor', '0', '10', 'a', 'a'), fc.string({ maxLength: 6 }))
  /** Settings are kept and returned as given: members repeated (keys odd and repeated) up to 70 to 900 KB. */
  const settingsText = fc
    .tuple(
      fc.array(fc.tuple(key, json), { minLength: 1, maxLength: 30 }),
      fc.integer({ min: 80_000, max: 900_000 }),
      fc.boolean(),
    )
    .map(([members, size, spaced]) => {
      const texts: string[] = []
      let length = 0
      for (let i = 0; length < size; i++) {
        const [k, v] = members[i % members.length]!
        // Integers past 2^53 would lose digits: intake refuses them in settings.
        const value = JSON.stringify(
          v,
          (_k, x) => (Number.isInteger(x) && !Number.isSafeInteger(x) ? 0 : x),
          spaced ? 1 : 0,
        )
        const text = `${JSON.stringify(i % 3 === 0 ? k : `${k}${i}`)}:${value.length > 20_000 ? 'null' : value}`
        texts.push(text)
        length += text.length + 1
      }
      return `{${texts.join(spaced ? ',\n ' : ',')}}`
    })
  const body = (settings: string) =>
    `{"title":"Settings","fields":[{"key":"a","type":"text","label":"A"}],"settings":${settings}}`

  test('what is stored is what JSON.parse reads; a body it refuses is a 422', async () => {
    await fc.assert(
      fc.asyncProperty(
        settingsText,
        fc.nat(),
        fc.constantFrom('', ',', '}', ' x', '"', ':1'),
        async (settings, cut, junk) => {
          const text = body(settings)
          expect(text.length).toBeGreaterThan(64 * 1024)
          const created = await send(t.app, 'POST', '/api/v1/forms', { key: t.key, body: text })
          expect({ status: created.status, errors: created.body.errors }).toEqual({ status: 201, errors: undefined })
          const stored = await t.api.get(`/forms/${created.body.id}`)
          expect(JSON.stringify(stored.body.settings)).toBe(JSON.stringify(JSON.parse(text).settings))

          const broken = text.slice(0, text.length - 1 - (cut % 40)) + junk
          let parses = true
          try {
            JSON.parse(broken)
          } catch {
            parses = false
          }
          const refused = await send(t.app, 'POST', '/api/v1/forms', { key: t.key, body: broken })
          if (!parses)
            expect(refused.body.errors).toEqual([
              { path: '', message: 'Request body is not valid JSON', code: 'invalid_format' },
            ])
        },
      ),
      { numRuns: 25, seed: 20261125 },
    )
  }, 60_000)
})
