/**
 * CONTRACT 13 against the built executable: while clients send the inputs
 * that cost the most CPU (patterns that backtrack for seconds in JavaScript,
 * at create and through a public link; bodies of 60,000 keys, 20,000 wrong
 * options, 500,000 levels of nesting; the schema of the largest form; MCP),
 * /healthz keeps answering. A prober in a process of its own times it every
 * 10 ms; how fast it answered is reported for bench/check-bounds.ts, which
 * holds it to the contract's bound.
 */
import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { reportFigure } from '../figures.ts'
import { watchServer } from './attack.ts'
import { startIntake, useBuiltBinary } from './binary.ts'

const binary = useBuiltBinary('intake-bounds-cpu-')

/** How long the attack runs. */
const ATTACK_MS = 4000
/** Requests the attacker keeps in flight. */
const IN_FLIGHT = 3

/** Older versions stored any pattern the browser compiles; this one backtracks, and RE2 cannot run its lookahead. */
const LEGACY_PATTERN = '(?=a)(a+)+$'
const HOSTILE_ANSWER = `${'a'.repeat(40)}!`

const manyKeys = (count: number) => `{${Array.from({ length: count }, (_, i) => `"key${i}":${i}`).join(',')}}`
const selects = (option: (index: number) => unknown) =>
  JSON.stringify({
    title: 'Options',
    fields: Array.from({ length: 100 }, (_, f) => ({
      key: `f${f}`,
      type: 'select',
      label: `F${f}`,
      config: { options: Array.from({ length: 200 }, (_, o) => option(o)) },
    })),
  })

test('while the costliest inputs arrive, each is answered as it should be and /healthz answers', async () => {
  const dataDir = binary.tempDir()
  const env = { SERVICE_RATE_LIMIT: '0', SERVICE_PUBLIC_RATE_LIMIT: '0' }

  // An older version's form: made through the API, then its pattern written as that version stored it.
  const first = await startIntake(binary.path, { cwd: dataDir, env })
  const key = first.apiKey!
  const api =
    (url: string) =>
    async (method: string, path: string, body?: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${url}${path}`, {
        method,
        body,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      })
      return { status: res.status, text: await res.text() }
    }
  const created = await api(first.url)(
    'POST',
    '/api/v1/forms',
    JSON.stringify({
      title: 'Legacy',
      fields: [{ key: 'code', type: 'text', label: 'Code', config: { pattern: 'a+' } }],
    }),
  )
  const legacyId = JSON.parse(created.text).id as string
  expect(await first.stop()).toBe(0)
  const db = new Database(join(dataDir, 'data', 'intake.db'))
  db.query('UPDATE forms SET fields = ? WHERE id = ?').run(
    JSON.stringify([{ key: 'code', type: 'text', label: 'Code', config: { pattern: LEGACY_PATTERN } }]),
    legacyId,
  )
  db.close()

  const server = await startIntake(binary.path, { cwd: dataDir, env })
  const call = api(server.url)
  const largest = await call(
    'POST',
    '/api/v1/forms',
    selects((o) => `option ${o} `.padEnd(40, '.')),
  )
  expect(largest.status).toBe(201)
  const largestId = JSON.parse(largest.text).id as string
  const answered = await call(
    'POST',
    '/api/v1/forms',
    JSON.stringify({
      title: 'Answers',
      fields: [{ key: 'name', type: 'text', label: 'Name', config: { pattern: '(a+)+$', max_length: 10_000 } }],
    }),
  )
  const answersId = JSON.parse(answered.text).id as string

  const deep = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)
  const redosCreate = JSON.stringify({
    title: 'Backtracking',
    // Five: enough to hold the loop for seconds where JavaScript matches them.
    fields: Array.from({ length: 5 }, (_, i) => ({
      key: `f${i}`,
      type: 'text',
      label: 'F',
      config: { pattern: '(a+)+$', default: HOSTILE_ANSWER },
    })),
  })
  const numericOptions = selects((o) => o)
  const sixtyThousandKeys = manyKeys(60_000)
  const mcpCall = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'create_form', arguments: JSON.parse(numericOptions) },
  })
  const mcpHeaders = { accept: 'application/json, text/event-stream' }
  const ATTACKS: Array<[string, () => Promise<{ status: number; text: string }>, number]> = [
    ['create with 5 backtracking patterns', () => call('POST', '/api/v1/forms', redosCreate), 422],
    [
      'hostile answer to the old pattern, JSON',
      () => call('POST', `/f/${legacyId}`, JSON.stringify({ code: HOSTILE_ANSWER })),
      422,
    ],
    [
      'hostile answer to the old pattern, form post',
      () =>
        call('POST', `/f/${legacyId}`, `code=${HOSTILE_ANSWER}`, {
          'content-type': 'application/x-www-form-urlencoded',
        }),
      422,
    ],
    [
      '10,000 characters against (a+)+$',
      () => call('POST', `/f/${answersId}`, JSON.stringify({ name: `${'a'.repeat(9_999)}!` })),
      422,
    ],
    ['create with 60,000 unknown keys', () => call('POST', '/api/v1/forms', sixtyThousandKeys), 422],
    ['create with 20,000 wrong options', () => call('POST', '/api/v1/forms', numericOptions), 422],
    [
      'create with a context 500,000 deep',
      () =>
        call(
          'POST',
          '/api/v1/forms',
          `{"title":"D","fields":[{"key":"a","type":"text","label":"A"}],"context":{"a":${deep(500_000)}}}`,
        ),
      422,
    ],
    ['patch with 60,000 unknown keys', () => call('PATCH', `/api/v1/forms/${answersId}`, sixtyThousandKeys), 422],
    ['answer with 60,000 unknown keys', () => call('POST', `/f/${answersId}`, sixtyThousandKeys), 422],
    ['answer nested 500,000 deep', () => call('POST', `/f/${answersId}`, `{"name":${deep(500_000)}}`), 422],
    ['schema of the largest form', () => call('GET', `/api/v1/forms/${largestId}/schema`), 200],
    ['MCP create_form with 20,000 wrong options', () => call('POST', '/mcp', mcpCall, mcpHeaders), 200],
  ]
  // Once each before watching: the first /mcp call loads the MCP SDK.
  for (const [name, attack, status] of ATTACKS)
    expect({ name, status: (await attack()).status }).toEqual({ name, status })

  const watch = watchServer(server.url, server.proc.pid)
  const sent = new Map<string, number>()
  const deadline = Date.now() + ATTACK_MS
  let next = 0
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (Date.now() < deadline) {
        const [name, attack, status] = ATTACKS[next++ % ATTACKS.length]!
        expect({ name, status: (await attack()).status }).toEqual({ name, status })
        sent.set(name, (sent.get(name) ?? 0) + 1)
      }
    }),
  )
  const figures = await watch.stop()
  console.log(`requests sent: ${[...sent].map(([name, count]) => `${name} ${count}`).join(', ')}`)
  console.log(
    `/healthz every 10 ms during the attack: ${figures.probes} probes, max ${figures.maxMs} ms, p99 ${figures.p99Ms} ms, median ${figures.medianMs} ms, failed ${figures.failed}`,
  )
  expect(figures.failed).toBe(0)
  reportFigure('/healthz under attack, slowest (ms)', 'the costliest inputs, 3 in flight', figures.maxMs)

  // An honest answer to the old pattern is still taken (the checking thread recovers from the attack).
  await Bun.sleep(600)
  const honest = await call('POST', `/f/${legacyId}`, JSON.stringify({ code: 'aaa' }))
  expect(honest.status).toBe(201)
  expect(await server.stop()).toBe(0)
}, 60_000)
