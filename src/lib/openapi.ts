import type { TSchema } from '@sinclair/typebox'
import type { DocumentDecoration } from 'elysia'
import { ErrorBody } from './schemas.ts'

/**
 * The OpenAPI 3.1 document, generated from the routes themselves: each route
 * declares `detail: apiDoc({...})` with the TypeBox schemas its service
 * validates with, and `buildOpenApi` walks the app's routes.
 */

export interface ApiDoc {
  summary: string
  description?: string
  tag: string
  /** False for routes that need no bearer key. */
  auth?: boolean
  body?: TSchema
  /** Schema of the query string (an object schema). */
  query?: TSchema
  /** Description of each path parameter. */
  params?: Record<string, string>
  /** Success responses: a schema for JSON bodies, or a description alone for empty bodies. */
  responses: Record<number, TSchema | string>
  /** Error statuses this route can answer, beyond those every authenticated route can. */
  errors?: number[]
  /** Response headers worth naming, by status. */
  headers?: Record<number, Record<string, string>>
}

const DOC_KEY = 'x-intake-doc'

export const apiDoc = (doc: ApiDoc) => ({ [DOC_KEY]: doc }) as DocumentDecoration

const ERROR_MEANINGS: Record<number, string> = {
  401: 'Invalid, unknown or revoked API key',
  403: 'No credentials provided',
  404: "Not found (also for another account's form)",
  409: 'The form is not in a state that allows this',
  410: 'The form was cancelled or has expired',
  413: 'Request body over 1 MiB',
  415: 'Unsupported content type',
  422: 'Invalid request; `errors` lists every problem by JSON Pointer',
  429: 'Rate limit exceeded; retry after the Retry-After seconds',
  500: 'Internal server error (logged with the request id)',
}

interface RouteLike {
  method: string
  path: string
  hooks?: { detail?: Record<string, unknown> }
}

// Annotations that drive our validation messages, not part of the published schema.
const internalKeys = new Set(['errorMessage'])
/** A TypeBox schema as plain JSON Schema, without the annotations only our validation reads. */
export const publish = (schema: TSchema) =>
  JSON.parse(JSON.stringify(schema, (key, value) => (internalKeys.has(key) ? undefined : value)))

function documentedRoutes(routes: RouteLike[]): Array<{ method: string; path: string; doc: ApiDoc }> {
  return routes.flatMap((route) => {
    const doc = route.hooks?.detail?.[DOC_KEY] as ApiDoc | undefined
    return doc ? [{ method: route.method.toLowerCase(), path: route.path, doc }] : []
  })
}

export function buildOpenApi(routes: RouteLike[], info: { title: string; version: string; description: string }) {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const { method, path, doc } of documentedRoutes(routes)) {
    const auth = doc.auth ?? true
    const parameters: unknown[] = []
    for (const match of path.matchAll(/:(\w+)/g)) {
      const name = match[1]!
      parameters.push({ name, in: 'path', required: true, description: doc.params?.[name], schema: { type: 'string' } })
    }
    if (doc.query) {
      const query = publish(doc.query)
      for (const [name, schema] of Object.entries(query.properties ?? {})) {
        const { description, ...rest } = schema as Record<string, unknown>
        parameters.push({
          name,
          in: 'query',
          required: (query.required ?? []).includes(name),
          description,
          schema: rest,
        })
      }
    }
    const responses: Record<string, unknown> = {}
    for (const [status, response] of Object.entries(doc.responses)) {
      const headers = Object.fromEntries(
        Object.entries(doc.headers?.[Number(status)] ?? {}).map(([name, description]) => [
          name,
          { description, schema: { type: 'string' } },
        ]),
      )
      responses[status] =
        typeof response === 'string'
          ? { description: response, headers }
          : {
              description: response.title ?? 'OK',
              headers,
              content: { 'application/json': { schema: publish(response) } },
            }
    }
    const errors = new Set([...(auth ? [401, 403, 429] : []), ...(doc.errors ?? []), 500])
    for (const status of [...errors].sort()) {
      responses[status] = {
        description: ERROR_MEANINGS[status] ?? 'Error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        ...(status === 429
          ? { headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } } }
          : {}),
      }
    }
    const openApiPath = path.replace(/:(\w+)/g, '{$1}')
    paths[openApiPath] ??= {}
    paths[openApiPath][method] = {
      operationId: operationId(method, path),
      summary: doc.summary,
      ...(doc.description ? { description: doc.description } : {}),
      tags: [doc.tag],
      security: auth ? [{ bearerAuth: [] }] : [],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(doc.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: publish(doc.body) } } } }
        : {}),
      responses,
    }
  }
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key: svc_live_ followed by 48 hex characters. No header: 403; a bad key: 401.',
        },
      },
      schemas: { Error: publish(ErrorBody) },
    },
  }
}

function operationId(method: string, path: string): string {
  const words = path
    .replace(/^\/api\/v1/, '')
    .split('/')
    .filter(Boolean)
    .map((part) => (part.startsWith(':') ? `By${capitalise(part.slice(1))}` : capitalise(part)))
  return method + words.join('')
}

const capitalise = (word: string) =>
  word.charAt(0).toUpperCase() + word.slice(1).replace(/[-_](\w)/g, (_, c) => c.toUpperCase())
