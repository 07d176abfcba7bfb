import { HttpError } from './errors.ts'

/**
 * Streaming parsers for form posts (application/x-www-form-urlencoded and
 * multipart/form-data). They take the body a chunk at a time as it arrives,
 * hold only what the limits allow, and refuse (400) anything they cannot read
 * exactly: bytes that are not UTF-8, a part header with a stray CR or LF, a
 * body that ends before its closing boundary. Nothing is dropped or replaced.
 *
 * Our own rather than busboy: busboy replaces invalid UTF-8 with U+FFFD and
 * silently drops a part whose header it cannot read (a raw CR in a file name),
 * and Bun's Request.formData() reads the whole body first and drops the
 * Content-Type a part declares (oven-sh/bun#39884).
 */

/** Where one file part's bytes go as they arrive (to the database, in intake), and what the part becomes. */
export interface FileSink<F> {
  write(bytes: Uint8Array): void
  /** The part has ended, having carried `size` bytes. */
  end(size: number): F
}

/** What a form post may hold, and where its files go. */
export interface FormPostHandling<F> {
  /** Decoded bytes of every name and text value together. */
  textBytes: number
  /** A sink for a file part; `type` is the Content-Type it declared ('' when none). */
  openFile(name: string, filename: string, type: string): FileSink<F>
}

export type FormEntry<F> = [name: string, value: string | F]

export interface FormDataParser<F> {
  write(chunk: Uint8Array): void
  /** The entries, once the whole body has arrived; throws 400 when it ended early. */
  end(): Array<FormEntry<F>>
}

/** Most parts (or pairs) one form post may have: 100 fields and the page's own, with room. */
const MAX_PARTS = 1000
/** Most bytes of one part's headers. */
const MAX_PART_HEADER_BYTES = 16 * 1024
const MAX_PART_HEADERS = 20

const unreadableForm = (why: string) => new HttpError(400, `The form data could not be read: ${why}`)

const tooMuchText = (limit: number) =>
  new HttpError(
    413,
    `The answers apart from files are larger than ${limit === 1024 * 1024 ? '1 MiB' : `${limit} bytes`}`,
  )

const tooManyParts = () => new HttpError(413, `A form post may have at most ${MAX_PARTS} fields`)

// ignoreBOM keeps a leading U+FEFF as the person typed it.
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** UTF-8 bytes as text, or a 400: text that is not UTF-8 is refused, never stored changed. */
function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return strictUtf8.decode(bytes)
  } catch {
    throw unreadableForm(`${what} is not valid UTF-8`)
  }
}

/** The boundary a multipart/form-data Content-Type names, or a 400. */
export function multipartBoundary(contentType: string): string {
  const match = /^multipart\/form-data\s*;(?:.*;)?\s*boundary\s*=\s*(?:"([^"]{1,70})"|([^\s;"]{1,70}))\s*(?:;|$)/i.exec(
    contentType,
  )
  const boundary = match?.[1] ?? match?.[2]
  if (!boundary) throw unreadableForm('the multipart boundary is missing or malformed')
  return boundary
}

const isHex = (byte: number) => (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x66)
const hexValue = (byte: number) => (byte <= 0x39 ? byte - 0x30 : (byte | 0x20) - 0x57)

/**
 * %XX sequences to bytes (and `+` to a space in urlencoded bodies). A `%` not
 * followed by two hex digits stays as it is, as the URL standard says.
 */
function percentDecode(bytes: Uint8Array, plusIsSpace: boolean): Uint8Array {
  if (bytes.indexOf(0x25) === -1 && (!plusIsSpace || bytes.indexOf(0x2b) === -1)) return bytes
  const out = new Uint8Array(bytes.length)
  let length = 0
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!
    if (byte === 0x2b && plusIsSpace) out[length++] = 0x20
    else if (byte === 0x25 && i + 2 < bytes.length && isHex(bytes[i + 1]!) && isHex(bytes[i + 2]!)) {
      out[length++] = (hexValue(bytes[i + 1]!) << 4) | hexValue(bytes[i + 2]!)
      i += 2
    } else out[length++] = byte
  }
  return out.subarray(0, length)
}

/** Pieces smaller than this are copied together: a body sent a byte at a time must not become millions of objects. */
const SMALL_PIECE_BYTES = 16 * 1024

/** Bytes as they arrive, kept as few pieces: large ones as they are (no copy), small ones copied together. */
function byteCollector() {
  const pieces: Uint8Array[] = []
  let small: Uint8Array | undefined
  let smallLength = 0
  let size = 0
  const flushSmall = () => {
    if (small && smallLength > 0) pieces.push(small.subarray(0, smallLength))
    small = undefined
    smallLength = 0
  }
  return {
    push(bytes: Uint8Array) {
      size += bytes.length
      if (bytes.length >= SMALL_PIECE_BYTES) {
        flushSmall()
        pieces.push(bytes)
        return
      }
      const needed = smallLength + bytes.length
      if (small === undefined || needed > small.length) {
        // Grown by doubling, so a short field does not cost a large buffer.
        const grown = new Uint8Array(Math.min(Math.max(256, needed * 2), SMALL_PIECE_BYTES * 4))
        if (small && needed <= grown.length) grown.set(small.subarray(0, smallLength))
        else flushSmall()
        small = grown
      }
      small.set(bytes, smallLength)
      smallLength += bytes.length
    },
    get size() {
      return size
    },
    /** Every byte pushed, in order. */
    pieces(): Uint8Array[] {
      flushSmall()
      return pieces
    },
  }
}

/** Text entries and their total, bounded as they are added. */
function textEntries<F>(limits: FormPostHandling<F>) {
  const entries: Array<FormEntry<F>> = []
  let textBytes = 0
  return {
    entries,
    countText(bytes: number) {
      textBytes += bytes
      if (textBytes > limits.textBytes) throw tooMuchText(limits.textBytes)
    },
    add(entry: FormEntry<F>) {
      if (entries.push(entry) > MAX_PARTS) throw tooManyParts()
    },
  }
}

/** application/x-www-form-urlencoded: `name=value` pairs joined by `&`, percent-encoded. */
export function urlencodedParser<F>(limits: FormPostHandling<F>): FormDataParser<F> {
  const text = textEntries(limits)
  // The pair still arriving: every byte after the last `&`.
  let pending = byteCollector()
  // Percent-encoding takes at most 3 bytes per decoded byte.
  const maxPairBytes = limits.textBytes * 3 + 3

  function pair(bytes: Uint8Array) {
    if (bytes.length === 0) return
    const equals = bytes.indexOf(0x3d)
    const nameBytes = percentDecode(equals === -1 ? bytes : bytes.subarray(0, equals), true)
    const valueBytes = equals === -1 ? new Uint8Array() : percentDecode(bytes.subarray(equals + 1), true)
    text.countText(nameBytes.length + valueBytes.length)
    text.add([decodeUtf8(nameBytes, 'a field name'), decodeUtf8(valueBytes, 'a field value')])
  }

  return {
    write(chunk) {
      let from = 0
      for (let amp = chunk.indexOf(0x26); amp !== -1; amp = chunk.indexOf(0x26, from)) {
        const piece = chunk.subarray(from, amp)
        pair(pending.size === 0 ? piece : Buffer.concat([...pending.pieces(), piece]))
        pending = byteCollector()
        from = amp + 1
      }
      if (from < chunk.length) {
        pending.push(chunk.subarray(from))
        if (pending.size > maxPairBytes) throw tooMuchText(limits.textBytes)
      }
    },
    end() {
      pair(Buffer.concat(pending.pieces()))
      return text.entries
    },
  }
}

const CRLF = Buffer.from('\r\n')
const HEADERS_END = Buffer.from('\r\n\r\n')

type MultipartState = 'preamble' | 'after-delimiter' | 'headers' | 'body' | 'done'

/** What a part's headers say it is. */
interface PartHeaders {
  name: string
  /** Present (maybe empty) for a file part; undefined for a text field. */
  filename: string | undefined
  type: string
}

/**
 * multipart/form-data (RFC 7578). Parts are found by searching for
 * CRLF "--" boundary in the bytes as they arrive; a file part's bytes go to
 * its sink as they come, so the parser never holds a file.
 */
export function multipartParser<F>(boundary: string, limits: FormPostHandling<F>): FormDataParser<F> {
  const text = textEntries(limits)
  // The body is read as if it began with CRLF, so the first delimiter looks like every other.
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  let state: MultipartState = 'preamble'
  // Bytes that may be the start of a delimiter, not yet known to be data.
  let tail: Uint8Array = CRLF
  // Bytes of a part's head (what follows a delimiter, up to its blank line).
  let head: Buffer = Buffer.alloc(0)
  let part: PartHeaders | undefined
  // A file part's sink, or a text part's bytes; and every byte the part carried.
  let file: FileSink<F> | undefined
  let fieldText = byteCollector()
  let partSize = 0

  function data(bytes: Uint8Array) {
    if (bytes.length === 0 || state !== 'body' || !part) return
    if (file) file.write(bytes)
    else {
      text.countText(bytes.length)
      fieldText.push(bytes)
    }
    partSize += bytes.length
  }

  function endPart() {
    if (state !== 'body' || !part) return
    if (file) text.add([part.name, file.end(partSize)])
    else text.add([part.name, decodeUtf8(Buffer.concat(fieldText.pieces()), `the field "${part.name}"`)])
    part = undefined
    file = undefined
  }

  function startPart(block: Buffer) {
    part = partHeaders(block)
    text.countText(Buffer.byteLength(part.name))
    partSize = 0
    fieldText = byteCollector()
    file = part.filename === undefined ? undefined : limits.openFile(part.name, part.filename, part.type)
  }

  /** Data and delimiters: returns what follows a delimiter when one is found in `bytes`. */
  function scanData(bytes: Uint8Array): Uint8Array {
    if (tail.length > 0) {
      // A delimiter may begin in the tail and end in these bytes.
      const window = Buffer.concat([tail, bytes.subarray(0, delimiter.length - 1)])
      const at = window.indexOf(delimiter)
      if (at !== -1 && at < tail.length) {
        const consumed = at + delimiter.length - tail.length
        data(tail.subarray(0, at))
        tail = new Uint8Array()
        return delimiterFound(bytes.subarray(consumed))
      }
      if (bytes.length < delimiter.length - 1) {
        // Too few bytes yet to tell whether the window's last bytes begin a delimiter: keep those.
        const decided = Math.max(0, window.length - (delimiter.length - 1))
        data(window.subarray(0, decided))
        tail = window.subarray(decided)
        return new Uint8Array()
      }
      data(tail)
      tail = new Uint8Array()
    }
    const at = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(delimiter)
    if (at !== -1) {
      data(bytes.subarray(0, at))
      return delimiterFound(bytes.subarray(at + delimiter.length))
    }
    const undecided = Math.max(0, bytes.length - (delimiter.length - 1))
    data(bytes.subarray(0, undecided))
    // A copy: the tail is small, and must not keep the whole chunk alive.
    tail = bytes.slice(undecided)
    return new Uint8Array()
  }

  function delimiterFound(rest: Uint8Array): Uint8Array {
    endPart()
    state = 'after-delimiter'
    head = Buffer.alloc(0)
    return rest
  }

  /** What follows a delimiter: "--" (the end), or CRLF and a part's headers. */
  function scanHead(bytes: Uint8Array): Uint8Array {
    head =
      head.length === 0 ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : Buffer.concat([head, bytes])
    if (state === 'after-delimiter') {
      // Transport padding (spaces, tabs) may follow a delimiter.
      let at = 0
      while (at < head.length && (head[at] === 0x20 || head[at] === 0x09)) at++
      if (head.length - at < 2) return new Uint8Array()
      if (head[at] === 0x2d && head[at + 1] === 0x2d) {
        state = 'done'
        return new Uint8Array()
      }
      if (head[at] !== 0x0d || head[at + 1] !== 0x0a)
        throw unreadableForm('a boundary is followed by something other than a line break')
      state = 'headers'
      // Kept with its CRLF, so a part without headers still ends in CRLF CRLF.
      head = head.subarray(at)
    }
    const end = head.indexOf(HEADERS_END)
    if (end === -1) {
      if (head.length > MAX_PART_HEADER_BYTES) throw unreadableForm("a part's headers are too long")
      return new Uint8Array()
    }
    startPart(head.subarray(2, end))
    state = 'body'
    const rest = head.subarray(end + HEADERS_END.length)
    head = Buffer.alloc(0)
    return rest
  }

  return {
    write(chunk) {
      let bytes = chunk
      while (bytes.length > 0 && state !== 'done') {
        bytes = state === 'preamble' || state === 'body' ? scanData(bytes) : scanHead(bytes)
      }
    },
    end() {
      if (state !== 'done') throw unreadableForm('the body ended before its closing boundary')
      return text.entries
    },
  }
}

/** A part's headers: every line must be `Name: value`; a stray CR or LF anywhere makes the part unreadable. */
function partHeaders(block: Buffer): PartHeaders {
  const lines = block.length === 0 ? [] : splitLines(block)
  if (lines.length > MAX_PART_HEADERS) throw unreadableForm('a part has too many headers')
  let disposition: string | undefined
  let type = ''
  for (const line of lines) {
    const text = decodeUtf8(line, "a part's header")
    const colon = text.indexOf(':')
    if (colon <= 0 || /[\r\n]/.test(text)) throw unreadableForm('a part has a malformed header')
    const name = text.slice(0, colon).trim().toLowerCase()
    const value = text.slice(colon + 1).trim()
    if (name === 'content-disposition') disposition = value
    else if (name === 'content-type') type = value
  }
  if (disposition === undefined) throw unreadableForm('a part has no Content-Disposition')
  const { kind, params } = parseParameters(disposition)
  if (kind.toLowerCase() !== 'form-data' || params.name === undefined)
    throw unreadableForm('a part is not named form-data')
  const filename = params['filename*'] !== undefined ? extendedValue(params['filename*']) : params.filename
  return { name: params.name, filename, type }
}

function splitLines(block: Buffer): Buffer[] {
  const lines: Buffer[] = []
  let from = 0
  for (let at = block.indexOf(CRLF); at !== -1; at = block.indexOf(CRLF, from)) {
    lines.push(block.subarray(from, at))
    from = at + 2
  }
  lines.push(block.subarray(from))
  return lines
}

/** `form-data; name="a"; filename="b"`: the value and its parameters (quoted strings unescaped). */
function parseParameters(header: string): { kind: string; params: Record<string, string> } {
  const params: Record<string, string> = Object.create(null)
  const semicolon = header.indexOf(';')
  const kind = (semicolon === -1 ? header : header.slice(0, semicolon)).trim()
  let at = semicolon === -1 ? header.length : semicolon + 1
  while (at < header.length) {
    const match = /^\s*([^\s=;]+)\s*=\s*/.exec(header.slice(at))
    if (!match) throw unreadableForm("a part's Content-Disposition is malformed")
    const key = match[1]!.toLowerCase()
    at += match[0].length
    let value = ''
    if (header[at] === '"') {
      at++
      for (;;) {
        if (at >= header.length) throw unreadableForm("a part's Content-Disposition has an unclosed quote")
        const char = header[at++]!
        if (char === '"') break
        value += char === '\\' && at < header.length ? header[at++]! : char
      }
    } else {
      const end = header.indexOf(';', at)
      value = header.slice(at, end === -1 ? undefined : end).trim()
      at = end === -1 ? header.length : end
    }
    if (key in params) throw unreadableForm(`a part's Content-Disposition names ${key} twice`)
    params[key] = value
    const next = /^\s*(;|$)/.exec(header.slice(at))
    if (!next) throw unreadableForm("a part's Content-Disposition is malformed")
    at += next[0].length
  }
  return { kind, params }
}

/** RFC 5987 `UTF-8''percent%20encoded`; other charsets are refused. */
function extendedValue(value: string): string {
  const match = /^utf-8'[^']*'(.*)$/i.exec(value)
  if (!match) throw unreadableForm('a file name is in a character set other than UTF-8')
  return decodeUtf8(percentDecode(Buffer.from(match[1]!, 'latin1'), false), 'a file name')
}
