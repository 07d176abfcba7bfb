/**
 * The HTTP limit of this machine for intake's answers: a bare Bun.serve that
 * answers each benchmarked route with the very status, headers and body that
 * intake answered (captured by bench/run.ts from one real request per route),
 * doing no work at all: no auth, no database, no validation, no rendering.
 *
 *   bun bench/bare-server.ts <responses.json>
 *
 * Listens on 127.0.0.1, a free port; prints `bare listening on http://127.0.0.1:<port>`.
 * Date and Content-Length are written by Bun itself, as for intake.
 */
import { readFileSync } from 'node:fs'

/** One response as intake gave it. */
export interface CapturedResponse {
  status: number
  headers: [string, string][]
  body: string
}

/** The captured answer of every route the bench drives. */
export interface CapturedResponses {
  /** GET /api/v1/forms/<id> */
  apiForm: CapturedResponse
  /** GET /f/<id> */
  page: CapturedResponse
  /** POST /api/v1/forms */
  create: CapturedResponse
  /** POST /f/<id>, application/json */
  submitJson: CapturedResponse
  /** POST /f/<id>, application/x-www-form-urlencoded */
  submitForm: CapturedResponse
}

/** Headers the server writes itself on every response. */
const WRITTEN_BY_BUN = new Set(['date', 'content-length', 'transfer-encoding', 'connection', 'keep-alive'])

if (import.meta.main) {
  const file = process.argv[2]
  if (!file) {
    console.error('usage: bun bench/bare-server.ts <responses.json>')
    process.exit(2)
  }
  const captured = JSON.parse(readFileSync(file, 'utf8')) as CapturedResponses

  const responder = (c: CapturedResponse) => {
    const headers = c.headers.filter(([name]) => !WRITTEN_BY_BUN.has(name.toLowerCase()))
    const body = c.body === '' ? null : c.body
    return () => new Response(body, { status: c.status, headers })
  }
  const apiForm = responder(captured.apiForm)
  const page = responder(captured.page)
  const create = responder(captured.create)
  const submitJson = responder(captured.submitJson)
  const submitForm = responder(captured.submitForm)

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    development: false,
    routes: {
      '/api/v1/forms': { POST: create },
      '/api/v1/forms/:id': { GET: apiForm },
      '/f/:id': {
        GET: page,
        POST: (request) =>
          request.headers.get('content-type')?.startsWith('application/json') ? submitJson() : submitForm(),
      },
    },
    fetch: () =>
      new Response('{"detail":"Not found"}', { status: 404, headers: { 'content-type': 'application/json' } }),
  })
  console.log(`bare listening on http://127.0.0.1:${server.port}`)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      void server.stop(true)
      process.exit(0)
    })
  }
}
