/**
 * The form-post parsers (src/lib/form-data.ts): whatever a browser or another
 * client sends, and however its bytes are split as they arrive, every entry is
 * read exactly; what cannot be read exactly is refused, never changed or dropped.
 */
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { HttpError } from '../src/lib/errors.ts'
import {
  type FileSink,
  type FormEntry,
  type FormPostHandling,
  multipartBoundary,
  multipartParser,
  urlencodedParser,
} from '../src/lib/form-data.ts'

/** A file part as these tests keep it: in memory, every byte in the pieces it came in. */
interface KeptFile {
  filename: string
  type: string
  size: number
  pieces: Uint8Array[]
}

function keptInMemory(_name: string, filename: string, type: string): FileSink<KeptFile> {
  const pieces: Uint8Array[] = []
  return {
    write: (bytes) => void pieces.push(bytes),
    end: (size) => ({ filename, type, size, pieces }),
  }
}

const GENEROUS: FormPostHandling<KeptFile> = { textBytes: 1024 * 1024, openFile: keptInMemory }

/** Feeds `bytes` to a parser in pieces cut at `cuts` (positions), as a slow network would deliver them. */
function parse(
  bytes: Uint8Array,
  contentType: string,
  cuts: number[] = [],
  limits = GENEROUS,
): Array<FormEntry<KeptFile>> {
  const parser = /^multipart/.test(contentType)
    ? multipartParser(multipartBoundary(contentType), limits)
    : urlencodedParser(limits)
  let from = 0
  for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
    if (cut <= from || cut >= bytes.length) continue
    parser.write(bytes.subarray(from, cut))
    from = cut
  }
  parser.write(bytes.subarray(from))
  return parser.end()
}

/** What a parse refused with: its status and detail. */
function refusal(work: () => unknown): { status: number; detail: string } {
  try {
    work()
  } catch (error) {
    if (error instanceof HttpError) return { status: error.status, detail: error.detail }
    throw error
  }
  throw new Error('expected the form post to be refused')
}

/** Entries with each file's pieces joined, to compare with what was sent. */
const readable = (entries: Array<FormEntry<KeptFile>>) =>
  entries.map(([name, value]) =>
    typeof value === 'string'
      ? [name, value]
      : [name, { filename: value.filename, type: value.type, size: value.size, bytes: Buffer.concat(value.pieces) }],
  )

async function serialized(body: FormData | URLSearchParams) {
  const request = new Request('http://intake.test/', { method: 'POST', body })
  // Before the body is read: Bun forgets a FormData body's Content-Type once it has been.
  const contentType = request.headers.get('content-type')!
  return { bytes: new Uint8Array(await request.arrayBuffer()), contentType }
}

/**
 * A name or file name as a browser writes it into a part's header: `"`, CR and
 * LF percent-encoded (the HTML standard). Like every server, intake reads it as
 * written: the encoding cannot be undone without guessing.
 */
const asSent = (name: string) => name.replaceAll('"', '%22').replaceAll('\r', '%0D').replaceAll('\n', '%0A')

/** A browser sends every line break in a text value (and a name) as CRLF. */
const withCrlf = (text: string) => text.replace(/\r\n|\r|\n/g, '\r\n')

/** A multipart body written by hand, for what no browser sends. */
function multipart(parts: string[], boundary = 'XyZ'): { bytes: Uint8Array; contentType: string } {
  const body = `${parts.map((part) => `--${boundary}\r\n${part}\r\n`).join('')}--${boundary}--\r\n`
  return { bytes: Buffer.from(body, 'latin1'), contentType: `multipart/form-data; boundary=${boundary}` }
}

// Any one Unicode scalar value (never a lone surrogate).
const anyCharacter = fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })
// Text a person could type: any Unicode scalar values (no lone surrogates), line breaks and delimiters included.
const typedText = fc.string({
  unit: fc.oneof(fc.constantFrom('\r\n', '--', '-', '&', '=', '%', '+', ' ', '"', 'é', '😀', '\u0000'), anyCharacter),
  maxLength: 40,
})
const fieldName = fc.string({
  unit: fc.oneof(fc.constantFrom('a', 'b', '_', 'é', '&', '=', '"'), anyCharacter),
  minLength: 1,
  maxLength: 12,
})
const splits = fc.array(fc.nat({ max: 4000 }), { maxLength: 30 })

describe('what is sent is read exactly, however it arrives', () => {
  test('multipart/form-data from FormData: text and files, split anywhere', async () => {
    const file = fc.record({
      filename: fc.string({
        unit: fc.oneof(fc.constantFrom('a', '.', ' ', 'é', '😀', '%', ';'), anyCharacter),
        minLength: 1,
        maxLength: 16,
      }),
      type: fc.constantFrom('application/octet-stream', 'image/png', 'application/pdf'),
      // Bytes that look like the framing around them, and random ones.
      bytes: fc.oneof(
        fc.uint8Array({ maxLength: 3000 }),
        fc.constantFrom(Buffer.from('\r\n--'), Buffer.from('\r\n\r\n'), new Uint8Array()),
      ),
    })
    const entry = fc.tuple(fieldName, fc.oneof(typedText, file))
    await fc.assert(
      fc.asyncProperty(fc.array(entry, { maxLength: 8 }), splits, async (entries, cuts) => {
        const form = new FormData()
        for (const [name, value] of entries) {
          if (typeof value === 'string') form.append(name, value)
          else form.append(name, new File([value.bytes], value.filename, { type: value.type }))
        }
        const { bytes, contentType } = await serialized(form)
        const expected = entries.map(([name, value]) =>
          typeof value === 'string'
            ? [asSent(withCrlf(name)), withCrlf(value)]
            : [
                asSent(withCrlf(name)),
                {
                  filename: asSent(value.filename),
                  type: value.type,
                  size: value.bytes.length,
                  bytes: Buffer.from(value.bytes),
                },
              ],
        )
        expect(readable(parse(bytes, contentType, cuts))).toEqual(expected)
      }),
      { seed: 1126, numRuns: 300 },
    )
  })

  test('application/x-www-form-urlencoded from URLSearchParams, split anywhere', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fieldName, typedText), { maxLength: 8 }), splits, async (entries, cuts) => {
        const { bytes, contentType } = await serialized(new URLSearchParams(entries))
        expect(parse(bytes, contentType, cuts)).toEqual(entries)
      }),
      { seed: 1126, numRuns: 300 },
    )
  })

  test("a file part's bytes reach its sink whole and in order, however they are split, and its size counts each one", () => {
    const content = Buffer.from(crypto.getRandomValues(new Uint8Array(5000)))
    const { bytes, contentType } = multipart([
      `Content-Disposition: form-data; name="f"; filename="a.bin"\r\n\r\n${content.toString('latin1')}`,
    ])
    const [entry] = readable(
      parse(
        bytes,
        contentType,
        Array.from({ length: bytes.length }, (_, i) => i),
      ),
    )
    expect(entry).toEqual(['f', { filename: 'a.bin', type: '', size: 5000, bytes: content }])
  })
})

describe('browser encodings read as a browser meant them', () => {
  test('urlencoded: + is a space, %XX a byte, a stray % stays, a leading BOM is kept', () => {
    const bytes = Buffer.from('a=1+2&b=100%&c=%zz&d=%C3%A9t%C3%A9&e=%EF%BB%BFbom&f&=g')
    expect(parse(bytes, 'application/x-www-form-urlencoded')).toEqual([
      ['a', '1 2'],
      ['b', '100%'],
      ['c', '%zz'],
      ['d', 'été'],
      ['e', '\ufeffbom'],
      ['f', ''],
      ['', 'g'],
    ])
  })

  test('multipart: a filename* (RFC 5987) wins over filename; quoted names may hold escaped quotes', () => {
    const { bytes, contentType } = multipart([
      `Content-Disposition: form-data; name="f"; filename="fallback.txt"; filename*=UTF-8''%E2%82%AC%20rates.txt\r\nContent-Type: text/plain\r\n\r\nhi`,
      'Content-Disposition: form-data; name="say \\"hi\\""\r\n\r\nhello',
    ])
    expect(readable(parse(bytes, contentType))).toEqual([
      ['f', { filename: '€ rates.txt', type: 'text/plain', size: 2, bytes: Buffer.from('hi') }],
      ['say "hi"', 'hello'],
    ])
  })

  test('multipart: the boundary may be quoted, and a preamble and epilogue are ignored', () => {
    const body = Buffer.from(
      'preamble\r\n--a b\r\nContent-Disposition: form-data; name="x"\r\n\r\n1\r\n--a b--\r\nepilogue',
    )
    expect(parse(body, 'multipart/form-data; boundary="a b"')).toEqual([['x', '1']])
  })
})

describe('what cannot be read exactly is refused (400), never changed or dropped', () => {
  test.each([
    ['a value that is not UTF-8', 'name=%FF'],
    ['a truncated UTF-8 sequence', 'name=%C3'],
    ['an overlong encoding', 'name=%C0%AF'],
    ['an encoded surrogate', 'name=%ED%A0%80'],
    ['a name that is not UTF-8', '%FE=1'],
  ])('urlencoded: %s', (_, body) => {
    const refused = refusal(() => parse(Buffer.from(body), 'application/x-www-form-urlencoded'))
    expect(refused.status).toBe(400)
    expect(refused.detail).toContain('not valid UTF-8')
  })

  test.each([
    ['a field value that is not UTF-8', ['Content-Disposition: form-data; name="n"\r\n\r\n\xff\xfe']],
    ['a file name that is not UTF-8', ['Content-Disposition: form-data; name="f"; filename="\xff.txt"\r\n\r\nx']],
    [
      'a raw CR in a file name',
      ['Content-Disposition: form-data; name="f"; filename="a\rb.txt"\r\nContent-Type: text/plain\r\n\r\nx'],
    ],
    ['a raw LF in a file name', ['Content-Disposition: form-data; name="f"; filename="a\nb.txt"\r\n\r\nx']],
    ['a header line without a colon', ['Content-Disposition: form-data; name="n"\r\nnonsense\r\n\r\nx']],
    ['a part without Content-Disposition', ['Content-Type: text/plain\r\n\r\nx']],
    ['a part with no headers at all', ['\r\nx']],
    ['a Content-Disposition that is not form-data', ['Content-Disposition: attachment; name="n"\r\n\r\nx']],
    ['an unclosed quote', ['Content-Disposition: form-data; name="n\r\n\r\nx']],
    ['a name given twice', ['Content-Disposition: form-data; name="a"; name="b"\r\n\r\nx']],
    [
      'a filename* in another character set',
      ['Content-Disposition: form-data; name="f"; filename*=ISO-8859-1\'\'caf%E9.txt\r\n\r\nx'],
    ],
  ])('multipart: %s', (_, parts) => {
    const { bytes, contentType } = multipart(parts as string[])
    expect(refusal(() => parse(bytes, contentType)).status).toBe(400)
  })

  test('multipart: a body that ends before its closing boundary', () => {
    const body = Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="f"; filename="a.bin"\r\n\r\npartial file')
    const refused = refusal(() => parse(body, 'multipart/form-data; boundary=XyZ'))
    expect(refused).toEqual({
      status: 400,
      detail: 'The form data could not be read: the body ended before its closing boundary',
    })
  })

  test('multipart: a Content-Type without a usable boundary', () => {
    for (const contentType of [
      'multipart/form-data',
      'multipart/form-data; boundary=',
      `multipart/form-data; boundary=${'b'.repeat(71)}`,
    ]) {
      expect(refusal(() => parse(Buffer.from('--b--'), contentType)).status).toBe(400)
    }
  })
})

describe('a form post holds no more than its limits', () => {
  test('text beyond the limit is 413, as urlencoded and as multipart, also as one unfinished pair', () => {
    const limits = { textBytes: 100, openFile: keptInMemory }
    expect(
      refusal(() =>
        parse(Buffer.from(`a=${'x'.repeat(60)}&b=${'y'.repeat(60)}`), 'application/x-www-form-urlencoded', [], limits),
      ).status,
    ).toBe(413)
    expect(
      refusal(() =>
        parse(Buffer.from(`a=${'%41'.repeat(200)}`), 'application/x-www-form-urlencoded', [10, 20, 30], limits),
      ).status,
    ).toBe(413)
    const { bytes, contentType } = multipart([`Content-Disposition: form-data; name="a"\r\n\r\n${'x'.repeat(101)}`])
    expect(refusal(() => parse(bytes, contentType, [], limits)).status).toBe(413)
  })

  test('more than 1000 fields is 413', () => {
    const body = Buffer.from(Array.from({ length: 1001 }, (_, i) => `f${i}=1`).join('&'))
    expect(refusal(() => parse(body, 'application/x-www-form-urlencoded')).status).toBe(413)
    expect(
      parse(
        Buffer.from(Array.from({ length: 1000 }, (_, i) => `f${i}=1`).join('&')),
        'application/x-www-form-urlencoded',
      ),
    ).toHaveLength(1000)
  })
})
