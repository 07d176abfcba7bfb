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

/** Up to this size a page's pieces are joined once; beyond, joining would hold the event loop (Bun takes 30 ms for 8 MB). */
const PAGE_JOINED_MAX_BYTES = 1024 * 1024

/**
 * A page's bytes, ready to be sent again and again without a copy: one Blob,
 * or, for a page of megabytes, the pieces it was rendered in, streamed.
 */
export type PageBytes = { size: number } & ({ blob: Blob } | { pieces: readonly Uint8Array[] })

export function pageBytes(pieces: Uint8Array[]): PageBytes {
  const size = pieces.reduce((total, piece) => total + piece.byteLength, 0)
  return size <= PAGE_JOINED_MAX_BYTES ? { size, blob: new Blob(pieces) } : { size, pieces }
}

/**
 * `page` with `bytes` inserted at byte `at` of its first piece, sharing the
 * rest: a kept page that differs per visit in a few bytes (how long is left
 * to answer) is not rendered again.
 */
export function insertIntoPage(page: PageBytes, at: number, bytes: Uint8Array): PageBytes {
  const size = page.size + bytes.byteLength
  if ('blob' in page) return { size, blob: new Blob([page.blob.slice(0, at), bytes, page.blob.slice(at)]) }
  const [first, ...rest] = page.pieces
  return { size, pieces: [first!.subarray(0, at), bytes, first!.subarray(at), ...rest] }
}

/**
 * Sends a rendered page: status and type go on `set`, the HTML is returned as
 * a string, or as the page's kept bytes. (A Response built here would be
 * copied again to merge the headers every request carries.)
 */
export function htmlPage(set: ResponseSet, html: JSX.Element, status?: number): string
export function htmlPage(set: ResponseSet, html: PageBytes, status?: number): Blob | ReadableStream<Uint8Array>
export function htmlPage(
  set: ResponseSet,
  html: JSX.Element | PageBytes,
  status = 200,
): string | Blob | ReadableStream<Uint8Array> {
  set.status = status
  set.headers['content-type'] = 'text/html; charset=utf-8'
  if (typeof html === 'string' || html instanceof Promise) return html as string
  if ('blob' in html) return html.blob
  let next = 0
  const { pieces } = html
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(pieces[next++]!)
      if (next === pieces.length) controller.close()
    },
  })
}
