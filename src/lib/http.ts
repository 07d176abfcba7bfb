import Busboy from '@fastify/busboy'
import { HttpError, invalid } from './errors.ts'
import { illFormedTextAt } from './json.ts'

/** The most an API request body (and a JSON submission) may carry. */
export const API_BODY_LIMIT = 1024 * 1024

const tooLarge = (limit: number) =>
  new HttpError(413, `Request body is larger than ${limit === API_BODY_LIMIT ? '1 MiB' : `${limit} bytes`}`)

/**
 * Reads a request body, refusing (413) as soon as it exceeds `limit`: a
 * declared length over the limit is refused before reading anything.
 */
export async function readBody(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit)
  if (!request.body) return new Uint8Array()
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of request.body) {
    size += chunk.byteLength
    if (size > limit) throw tooLarge(limit)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** A JSON body of at most `limit` bytes; malformed JSON is a 422 like any other invalid body. */
export async function readJson(request: Request, limit = API_BODY_LIMIT): Promise<unknown> {
  const bytes = await readBody(request, limit)
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    throw invalid([{ path: '', message: 'Request body is not valid UTF-8' }])
  }
  if (text.trim() === '') throw invalid([{ path: '', message: 'Request body is empty; expected a JSON object' }])
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw invalid([{ path: '', message: 'Request body is not valid JSON' }])
  }
  const illFormed = illFormedTextAt(value)
  if (illFormed !== undefined) throw invalid([{ path: illFormed, message: 'Holds a lone surrogate ("\\ud800"), which is not valid Unicode text' }])
  return value
}

export const isJsonContentType = (contentType: string | null) =>
  contentType !== null && /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType)

/**
 * Headers on every response: nothing may sniff, frame, cache or leak a form URL.
 * Lower-case names, so a route that sets one (the stylesheet's cache-control) replaces it.
 */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
}

/**
 * The submitter's address: the peer, or with a trusted proxy the last
 * X-Forwarded-For entry (the one that proxy appended; earlier ones are
 * whatever the client claimed).
 */
export function clientAddress(request: Request, peer: string | undefined, trustProxy: boolean): string | null {
  if (trustProxy) {
    const forwarded = request.headers.get('x-forwarded-for')?.split(',').at(-1)?.trim()
    if (forwarded) return unmapIpv4(forwarded.slice(0, 64))
  }
  return peer === undefined ? null : unmapIpv4(peer)
}

/** `::ffff:192.0.2.1` is how a dual-stack socket reports an IPv4 peer. */
const unmapIpv4 = (address: string) => address.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, '$1')

export const isFormContentType = (contentType: string | null) =>
  contentType !== null && /^(?:application\/x-www-form-urlencoded|multipart\/form-data)\s*(?:;|$)/i.test(contentType)

/** A file part of a form post, with the type its sender declared for it. */
export interface FilePart {
  filename: string
  type: string
  bytes: Uint8Array
}

const unreadable = () => new HttpError(400, 'The form data could not be read')

/**
 * A form post (urlencoded or multipart) of at most `limit` bytes, as its
 * entries. Anything that does not parse is a 400.
 *
 * Parsed with busboy rather than Request.formData(): Bun's parser drops the
 * Content-Type a multipart part declares and guesses one from the file name
 * (oven-sh/bun#39884), and `accept` must be checked against what was declared.
 */
export async function readFormEntries(request: Request, limit: number): Promise<Array<[string, string | FilePart]>> {
  const bytes = await readBody(request, limit)
  const entries: Array<[string, string | FilePart]> = []
  const files: Array<Promise<void>> = []
  await new Promise<void>((resolve, reject) => {
    let parser: ReturnType<typeof Busboy>
    try {
      parser = Busboy({
        headers: { 'content-type': request.headers.get('content-type') ?? '' },
        // The body is already bounded; these bound the work of parsing it.
        limits: { fieldSize: limit, fieldNameSize: 256, parts: 1000, headerPairs: 20 },
      })
    } catch {
      return reject(unreadable())
    }
    parser.on('field', (name, value) => entries.push([name, value]))
    parser.on('file', (name, stream, filename, _encoding, type) => {
      files.push(
        new Promise((done, fail) => {
          const chunks: Buffer[] = []
          stream.on('data', (chunk: Buffer) => chunks.push(chunk))
          stream.on('error', fail)
          stream.on('end', () => {
            entries.push([name, { filename, type, bytes: Buffer.concat(chunks) }])
            done()
          })
        }),
      )
    })
    parser.on('error', () => reject(unreadable()))
    parser.on('finish', () => resolve())
    parser.end(bytes)
  })
  await Promise.all(files).catch(() => {
    throw unreadable()
  })
  return entries
}

/**
 * Content-Disposition for a download: always an attachment (never shown
 * inline), with an ASCII name for old clients and the exact name (RFC 5987).
 */
export function attachmentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_')
  const exact = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`
}

/** The path of an absolute request URL, without its query: cheaper than parsing a URL on every request. */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start === -1) return '/'
  const query = url.indexOf('?', start)
  return url.slice(start, query === -1 ? undefined : query)
}

/** What a route may set on its response (Elysia's `set`). */
export interface ResponseSet {
  status?: number | string
  headers: Record<string, string | number>
}

/**
 * Sends a rendered page: status and type go on `set`, the HTML is returned as
 * a string. (A Response built here would be copied again to merge the headers
 * every request carries.)
 */
export function htmlPage(set: ResponseSet, html: JSX.Element, status = 200): string {
  set.status = status
  set.headers['content-type'] = 'text/html; charset=utf-8'
  return html as string
}
