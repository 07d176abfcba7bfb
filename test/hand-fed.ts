/**
 * Request bodies a test sends by hand, a piece when it says: for uploads that
 * arrive slowly, or stop, while the test looks at what the server did.
 */
import type { TestContext } from './utils.ts'

/** A request body the test feeds: bytes when it says, an end when it says. `pulls` counts the server's reads. */
export function handFedBody() {
  let controller!: ReadableStreamDefaultController<Uint8Array>
  let pulls = 0
  const stream = new ReadableStream<Uint8Array>(
    {
      start: (c) => void (controller = c),
      pull: () => void pulls++,
      cancel: () => void (cancelled = true),
    },
    // Nothing is read ahead: a pull is the server asking for bytes.
    { highWaterMark: 0 },
  )
  let cancelled = false
  return {
    stream,
    send: (bytes: Uint8Array | string) => controller.enqueue(typeof bytes === 'string' ? Buffer.from(bytes) : bytes),
    end: () => controller.close(),
    get pulls() {
      return pulls
    },
    get cancelled() {
      return cancelled
    },
  }
}

export const BOUNDARY = 'intake-test-boundary'
export const multipartType = `multipart/form-data; boundary=${BOUNDARY}`

/** The head of a file part: what comes before its bytes. */
export const filePartHead = (key: string, name = 'upload.bin', type = 'application/octet-stream') =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${key}"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`

/** A whole text part, ending where the next part's delimiter begins. */
export const textPart = (key: string, value: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${key}"\r\n\r\n${value}\r\n`

/** What ends the last part and the body. */
export const closing = `\r\n--${BOUNDARY}--\r\n`

/** Starts a form post of `declared` bytes whose body the test feeds by hand; the response comes when the server answers. */
export function startPost(t: Pick<TestContext, 'app'>, formId: string, declared: number, contentType = multipartType) {
  const body = handFedBody()
  const response = t.app.handle(
    new Request(`http://intake.test/f/${formId}`, {
      method: 'POST',
      headers: { 'content-type': contentType, 'content-length': String(declared) },
      body: body.stream,
    }),
  )
  return { body, response }
}
