/**
 * Security, in process: rate limits hold under parallel load, and no secret is
 * compared with === anywhere in src/. (That no key or webhook secret reaches a log
 * line or a response body is checked for the whole suite by test/leak-sweep.ts,
 * preloaded by bunfig.toml.)
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { expectSecurityHeaders, MCP_HEADERS, TEXT_FIELDS, TOOLS_LIST } from './security-fixtures.ts'
import { contextsPerTest, postForm, type Resolver, send, submit, type TestContext, type TestResponse } from './utils.ts'

setDefaultTimeout(20_000)

let t: TestContext
const { create } = contextsPerTest()

async function setup(env: Record<string, string> = {}, resolver?: Resolver): Promise<TestContext> {
  return (t = await create(env, { resolver }))
}

// ================================================================= rate limits under parallel load

describe('rate limits hold under parallel load', () => {
  const tally = (responses: TestResponse[]) =>
    responses.reduce<Record<number, number>>((counts, res) => {
      counts[res.status] = (counts[res.status] ?? 0) + 1
      return counts
    }, {})

  test('SERVICE_RATE_LIMIT=50: 200 requests at once with one key give exactly 50 answers and 150 429s with Retry-After; another key is unaffected', async () => {
    await setup({ SERVICE_RATE_LIMIT: '50' })
    const other = await t.createKey()
    const [burst, others] = await Promise.all([
      Promise.all(Array.from({ length: 200 }, () => t.api.get('/forms'))),
      Promise.all(Array.from({ length: 50 }, () => send(t.app, 'GET', '/api/v1/forms', { key: other.key }))),
    ])
    expect(tally(burst)).toEqual({ 200: 50, 429: 150 })
    for (const res of burst.filter((r) => r.status === 429)) {
      expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/)
      expect(typeof res.body.detail).toBe('string')
      expectSecurityHeaders(res, '429')
    }
    expect(tally(others)).toEqual({ 200: 50 })
    // The same bucket covers /mcp.
    const mcp = await send(t.app, 'POST', '/mcp', { key: t.key, body: TOOLS_LIST, headers: MCP_HEADERS })
    expect(mcp.status).toBe(429)
    expect(mcp.headers.get('retry-after')).toMatch(/^[1-9]\d*$/)
  })

  test('SERVICE_PUBLIC_RATE_LIMIT=20 behind a trusted proxy: 100 submissions at once from one address give at most 20 answers that are not 429', async () => {
    await setup({ SERVICE_PUBLIC_RATE_LIMIT: '20', SERVICE_TRUST_PROXY: 'true' })
    const form = await t.api.createForm({ fields: TEXT_FIELDS })
    // Whatever the client claims before it, the proxy appended 203.0.113.7: that is the address limited.
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        i % 2 === 0
          ? submit(t.app, form.id, { name: `Ada ${i}` }, { 'x-forwarded-for': `198.51.100.${i}, 203.0.113.7` })
          : postForm(t.app, form.id, { name: `Ada ${i}` }, { 'x-forwarded-for': `10.0.${i}.1, 203.0.113.7` }),
      ),
    )
    const notLimited = results.filter((res) => res.status !== 429)
    expect(notLimited.length).toBeLessThanOrEqual(20)
    expect(notLimited.length).toBeGreaterThanOrEqual(1)
    expect(results.filter((res) => res.status === 201 || res.status === 303)).toHaveLength(1)
    for (const res of results.filter((r) => r.status === 429))
      expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/)
    // Another address is not held back by that one.
    const elsewhere = await submit(t.app, form.id, { name: 'Bob' }, { 'x-forwarded-for': '203.0.113.8' })
    expect(elsewhere.status).toBe(409)
  })
})

// ================================================================= timing-safe comparisons

/*
 * Timing-safe comparisons are asserted by design, not measured. A timing test
 * would compare response times of keys that share a longer or shorter prefix
 * with a real one; the difference an early-exit `===` makes on a 57-character
 * string is a few nanoseconds, while one in-process request costs microseconds
 * and varies by far more with JIT tiers, garbage collection, other processes
 * on a shared CI machine and CPU frequency. Telling the two apart needs
 * millions of samples and a statistical test that still fails now and then
 * (or passes when it should not): a flaky test, which is worse than none.
 *
 * So instead: intake never compares secret material itself. A presented key
 * is hashed (SHA-256) and looked up by that hash in an index (the database's,
 * or a Map of keys already seen: a hash-table probe, not a character-by-character
 * comparison against a stored secret); webhook secrets are only ever used as
 * HMAC keys, never compared. The scan below fails on any === / !== / == / !=
 * (or .equals / Buffer.compare) in src/ whose operand names secret material
 * (key, secret, signature, token, hash, digest, hmac, password, credential),
 * except against a literal or a typeof (presence and emptiness checks, which
 * compare nothing secret), and except the listed comparisons, each with why it
 * compares nothing secret.
 */
describe('timing-safe comparisons (by design)', () => {
  const SRC = join(import.meta.dir, '..', 'src')
  const SECRET_NAME = /key|secret|sign|token|hash|digest|hmac|passw|credential/i

  /** Comparisons whose operands are named like secrets but hold none. */
  const NOT_SECRET: Record<string, string> = {
    'modules/forms/service.ts: earlier.requestHash !== requestHash':
      'the SHA-256 of a create body, to tell an Idempotency-Key replay from a reuse with another body: a fingerprint of what this same account sent, not a credential',
    'db/postgres/changes.ts: payload === KEYS_CHANGED':
      'the payload of a notification on the channel intake_changes, a fixed word saying that some key changed: no credential',
    'db/copy/verify.ts: a.value.digest !== b.value.digest':
      "the SHA-256 of an uploaded file's bytes on both sides of intake copy, to check the copy: a fingerprint of data the operator holds on both sides, not a credential",
    'modules/console/service.ts: password !== again':
      'a new password against its confirmation, both typed by the person in the same request: nothing stored is compared, so its timing tells an attacker nothing',
  }

  function sourceFiles(dir: string): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) return sourceFiles(path)
      return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : []
    })
  }

  const unwrap = (node: ts.Expression): ts.Expression => {
    while (
      ts.isParenthesizedExpression(node) ||
      ts.isAsExpression(node) ||
      ts.isNonNullExpression(node) ||
      ts.isTypeAssertionExpression(node)
    )
      node = node.expression
    return node
  }

  /** The name an operand goes by: `x`, `a.b.x`, `a['x']`, `x(...)`, `a.x(...)` are all "x". */
  function nameOf(node: ts.Expression): string | undefined {
    const e = unwrap(node)
    if (ts.isIdentifier(e)) return e.text
    if (ts.isPropertyAccessExpression(e)) return e.name.text
    if (ts.isElementAccessExpression(e))
      return ts.isStringLiteralLike(e.argumentExpression) ? e.argumentExpression.text : nameOf(e.expression)
    if (ts.isCallExpression(e)) return nameOf(e.expression)
    return undefined
  }

  /** A literal, `undefined` or a typeof: comparing with one of these compares nothing secret. */
  function isConstant(node: ts.Expression): boolean {
    const e = unwrap(node)
    return (
      ts.isStringLiteralLike(e) ||
      ts.isNumericLiteral(e) ||
      ts.isTypeOfExpression(e) ||
      e.kind === ts.SyntaxKind.NullKeyword ||
      e.kind === ts.SyntaxKind.TrueKeyword ||
      e.kind === ts.SyntaxKind.FalseKeyword ||
      (ts.isIdentifier(e) && e.text === 'undefined') ||
      (ts.isPrefixUnaryExpression(e) && ts.isNumericLiteral(e.operand))
    )
  }

  const EQUALITY = new Set([
    ts.SyntaxKind.EqualsEqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsEqualsToken,
    ts.SyntaxKind.EqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsToken,
  ])

  /** Every comparison in src/ of something named like a secret with something that is not a constant. */
  function secretComparisons(): string[] {
    const found: string[] = []
    for (const file of sourceFiles(SRC)) {
      const source = ts.createSourceFile(
        file,
        readFileSync(file, 'utf8'),
        ts.ScriptTarget.Latest,
        true,
        file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
      )
      const where = relative(SRC, file)
      const consider = (node: ts.Node, operands: ts.Expression[]) => {
        const named = operands.some((operand) => SECRET_NAME.test(nameOf(operand) ?? ''))
        if (named && !operands.some(isConstant)) found.push(`${where}: ${node.getText(source).replace(/\s+/g, ' ')}`)
      }
      const visit = (node: ts.Node) => {
        if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind))
          consider(node, [node.left, node.right])
        if (ts.isCallExpression(node)) {
          const callee = unwrap(node.expression)
          // a.equals(b) (Buffer), Buffer.compare(a, b), a.localeCompare(b): all stop at the first difference.
          if (
            ts.isPropertyAccessExpression(callee) &&
            ['equals', 'compare', 'localeCompare'].includes(callee.name.text)
          ) {
            consider(node, [callee.expression, ...node.arguments])
          }
        }
        ts.forEachChild(node, visit)
      }
      visit(source)
    }
    return found
  }

  test('the scan finds a secret compared with === (it can fail)', () => {
    const source = ts.createSourceFile(
      'probe.ts',
      'if (signature === expected) ok(); if (hmac(body).equals(header)) ok(); if (key === "") no(); if (typeof token !== "string") no()',
      ts.ScriptTarget.Latest,
      true,
    )
    const flagged: string[] = []
    const visit = (node: ts.Node) => {
      if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind)) {
        const operands = [node.left, node.right]
        if (operands.some((o) => SECRET_NAME.test(nameOf(o) ?? '')) && !operands.some(isConstant))
          flagged.push(node.getText(source))
      }
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        node.expression.name.text === 'equals'
      ) {
        const operands = [node.expression.expression, ...node.arguments]
        if (operands.some((o) => SECRET_NAME.test(nameOf(o) ?? ''))) flagged.push(node.getText(source))
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
    expect(flagged).toEqual(['signature === expected', 'hmac(body).equals(header)'])
  })

  test('no secret is compared with === (or .equals, or Buffer.compare) anywhere in src/', () => {
    const files = sourceFiles(SRC)
    expect(files.length).toBeGreaterThan(30)
    const unexplained = secretComparisons().filter((comparison) => !(comparison in NOT_SECRET))
    expect(unexplained).toEqual([])
  })

  test('keys are looked up by their SHA-256 in a unique index; no column holds a key', async () => {
    const service = readFileSync(join(SRC, 'modules/auth/service.ts'), 'utf8')
    expect(service).toMatch(/createHash\('sha256'\)\.update\(key\)\.digest\('hex'\)/)
    expect(service).toContain('store.keys.keyByHash(hashKey(key))')
    await setup()
    const second = await t.createKey()
    expect((await send(t.app, 'GET', '/api/v1/forms', { key: second.key })).status).toBe(200)
    const rows = await t.sql('SELECT * FROM api_keys')
    expect(rows).toHaveLength(2)
    for (const key of [t.key, second.key]) {
      const hex = key.slice('svc_live_'.length)
      expect(rows.filter((row) => Object.values(row).some((value) => String(value).includes(hex)))).toEqual([])
      expect(rows.filter((row) => row.key_hash === createHash('sha256').update(key).digest('hex'))).toHaveLength(1)
    }
    // A UNIQUE index on key_hash alone, and the lookup searches it (an index probe, not a scan comparing each stored value).
    if (!t.sqlite) return // PostgreSQL's UNIQUE constraint on key_hash is its index (test/postgres-store.test.ts)
    const indexes = t.sqlite
      .query('SELECT name FROM pragma_index_list(\'api_keys\') WHERE "unique" = 1')
      .all() as Array<{ name: string }>
    const onHash = indexes.filter((index) => {
      const columns = t.sqlite!.query(`SELECT name FROM pragma_index_info('${index.name}')`).all() as Array<{
        name: string
      }>
      return columns.length === 1 && columns[0]!.name === 'key_hash'
    })
    expect(onHash).toHaveLength(1)
    const plan = t.sqlite
      .query('EXPLAIN QUERY PLAN SELECT id, account_id, last_used_at, revoked_at FROM api_keys WHERE key_hash = ?')
      .all('x') as Array<{ detail: string }>
    expect(plan.map((step) => step.detail).join('; ')).toContain(`USING INDEX ${onHash[0]!.name} (key_hash=?)`)
  })

  test('webhook secrets are used only as HMAC keys: never compared, never verified by intake', () => {
    const uses = sourceFiles(SRC).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => /\bsecret\b/.test(line) && !/^\s*(\*|\/\/|\/\*)/.test(line))
        .map((line) => `${relative(SRC, file)}: ${line.trim()}`),
    )
    expect(uses.length).toBeGreaterThan(0)
    for (const use of uses) expect(use).not.toMatch(/secret\s*[!=]==?|[!=]==?\s*\w*secret|timingSafeEqual|\.equals\(/i)
  })
})
