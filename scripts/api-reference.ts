/**
 * Writes docs/api.md, the API reference, from the OpenAPI document the app
 * serves at GET /api/v1/openapi.json: `bun run docs:api`. test/docs.test.ts
 * fails when docs/api.md is not what this script would write now.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createIntake } from '../src/app.tsx'
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/lib/log.ts'
import { openStore } from '../src/stores.ts'

export const API_REFERENCE = join(import.meta.dir, '..', 'docs', 'api.md')

/** The parts of a JSON Schema the reference writes out. */
interface Schema {
  const?: unknown
  enum?: unknown[]
  anyOf?: Schema[]
  $ref?: string
  type?: string | string[]
  items?: Schema
  properties?: Record<string, Schema>
  required?: string[]
  description?: string
  format?: string
  default?: unknown
  minLength?: number
  maxLength?: number
  minItems?: number
  maxItems?: number
  minimum?: number
  maximum?: number
}

interface Operation {
  summary: string
  description?: string
  security: unknown[]
  parameters?: Array<{ name: string; in: string; required: boolean; description?: string; schema: Schema }>
  requestBody?: { content: Record<string, { schema: Schema }> }
  responses: Record<string, { description: string; headers?: Record<string, { description: string }> }>
}

/** The document as a client reads it, from an app on a throwaway SQLite file. */
async function openApiDocument(): Promise<{ paths: Record<string, Record<string, Operation>> }> {
  const dir = mkdtempSync(join(tmpdir(), 'intake-api-reference-'))
  try {
    const config = loadConfig({ SERVICE_DB_PATH: join(dir, 'intake.db') })
    const store = await openStore(config)
    try {
      const { handle } = createIntake({
        config,
        store,
        baseUrl: 'http://localhost:8080',
        logger: createLogger(() => {}),
      })
      const response = await handle(new Request('http://localhost:8080/api/v1/openapi.json'))
      return (await response.json()) as { paths: Record<string, Record<string, Operation>> }
    } finally {
      await store.close()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A schema in a few words: `string (1..255)`, `integer (1..100, default 20)`, `"active" \| "completed"`. */
function typeOf(schema: Schema): string {
  if ('const' in schema) return `\`${JSON.stringify(schema.const)}\``
  if (schema.enum) return schema.enum.map((value: unknown) => `\`${JSON.stringify(value)}\``).join(' \\| ')
  if (schema.anyOf) return [...new Set(schema.anyOf.map(typeOf))].join(' \\| ')
  if (schema.$ref) return schema.$ref.split('/').pop() ?? schema.$ref
  const type = Array.isArray(schema.type) ? schema.type.join(' \\| ') : (schema.type ?? 'any')
  if (type === 'array') return `array of ${schema.items ? typeOf(schema.items) : 'any'}${bounds(schema, 'items')}`
  return `${type}${bounds(schema)}`
}

function bounds(schema: Schema, of: 'items' | 'value' = 'value'): string {
  const min = of === 'items' ? schema.minItems : (schema.minLength ?? schema.minimum)
  const max = of === 'items' ? schema.maxItems : (schema.maxLength ?? schema.maximum)
  const notes = [
    min !== undefined || max !== undefined ? `${min ?? ''}..${max ?? ''}` : '',
    schema.format ? `format ${schema.format}` : '',
    schema.default !== undefined ? `default \`${JSON.stringify(schema.default)}\`` : '',
  ].filter(Boolean)
  return notes.length > 0 ? ` (${notes.join(', ')})` : ''
}

const cell = (text: string | undefined) => (text ?? '').replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ')

function operationMarkdown(method: string, path: string, op: Operation): string[] {
  const lines = [`### \`${method.toUpperCase()} ${path}\``, '', op.summary + (op.summary.endsWith('.') ? '' : '.')]
  if (op.description) lines.push('', op.description)
  lines.push('', op.security.length > 0 ? 'Needs `Authorization: Bearer <key>`.' : 'Needs no key.')
  if (op.parameters?.length) {
    lines.push('', '| parameter | in | type | meaning |', '|---|---|---|---|')
    for (const p of op.parameters)
      lines.push(
        `| \`${p.name}\`${p.required ? '' : ' (optional)'} | ${p.in} | ${typeOf(p.schema)} | ${cell(p.description)} |`,
      )
  }
  const body = op.requestBody?.content['application/json']?.schema
  if (body?.properties) {
    const required = new Set<string>(body.required ?? [])
    lines.push('', 'Body (JSON):', '', '| key | type | meaning |', '|---|---|---|')
    for (const [name, schema] of Object.entries<Schema>(body.properties))
      lines.push(
        `| \`${name}\`${required.has(name) ? '' : ' (optional)'} | ${typeOf(schema)} | ${cell(schema.description)} |`,
      )
  }
  lines.push('', '| status | meaning |', '|---|---|')
  for (const [status, response] of Object.entries(op.responses)) {
    const headers = Object.keys(response.headers ?? {})
    const said =
      headers.length > 0
        ? `${cell(response.description)}; headers ${headers.map((h) => `\`${h}\``).join(', ')}`
        : cell(response.description)
    lines.push(`| ${status} | ${said} |`)
  }
  return [...lines, '']
}

/** docs/api.md as the OpenAPI document reads today. */
export async function apiReference(): Promise<string> {
  const doc = await openApiDocument()
  const lines = [
    '# API reference',
    '',
    '<!-- Written by `bun run docs:api` from GET /api/v1/openapi.json; do not edit by hand. -->',
    '',
    'Every route of intake but `GET /` and the document itself, as its OpenAPI 3.1',
    'document describes it. The document, with the full JSON Schema of every',
    'body, is served at `GET /api/v1/openapi.json` (no key needed). What the',
    'fields of a form mean, and the rules behind each status, are in',
    '[agents.md](agents.md) and [page.md](page.md); every error is',
    'JSON with a string `detail` ([agents.md](agents.md#errors)).',
    '',
  ]
  for (const [path, operations] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(operations)) lines.push(...operationMarkdown(method, path, op))
  return `${lines.join('\n').trimEnd()}\n`
}

if (import.meta.main) {
  writeFileSync(API_REFERENCE, await apiReference())
  console.log(`Wrote ${API_REFERENCE}`)
}
