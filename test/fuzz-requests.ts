/**
 * The fuzz tests' generators of headers, authorizations and ids in paths, and the
 * HTML reader that checks a page is safe.
 */
import fc from 'fast-check'
import { nth } from './fuzz-forms.ts'
import { hostile, must, show } from './fuzz-json.ts'

// ---------------------------------------------------------------- generators: headers

const latin1 = (maxLength = 40) =>
  fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((c) => c !== 0x7f)
      .map((c) => String.fromCharCode(c)),
    maxLength,
  })
/** A header value made of the UTF-8 bytes of hostile text, as a server reads them (latin1). */
export const hostileHeader = fc.oneof(
  latin1(),
  hostile(20).map((s) =>
    Buffer.from(s.toWellFormed(), 'utf8')
      .toString('latin1')
      .replace(/[\u0000-\u001f\u007f]/g, ''),
  ),
)

export const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/vnd.custom+json',
  'application/json;foo=bar',
  'application/problem+json',
  'text/plain',
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'multipart/form-data; boundary=zzz',
  'application/xml',
  '*/*',
  '',
  'json',
  'application/jsonx',
  'application/x-www-form-urlencoded; charset=utf-16',
  'application/x-www-form-urlencoded; charset=nope',
]
export const ACCEPTS = [
  'text/html',
  'application/json',
  '*/*',
  'text/html,application/xhtml+xml;q=0.9',
  '',
  'image/png',
]

export type Auth = { header?: string; expect: 'owner' | 'other' | '401' | '403' | 'any' | 'none' }
/** Authorization values, each with what it must lead to on /api/v1. */
export function authArb(keys: { owner: string; other: string; revoked: string }): fc.Arbitrary<Auth> {
  const k = keys.owner
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .constantFrom(`Bearer ${k}`, `bearer ${k}`, `BEARER ${k}`, `Bearer\t${k}`, `Bearer    ${k}   `)
        .map((header) => ({ header, expect: 'owner' as const })),
    },
    { weight: 2, arbitrary: fc.constant({ header: `Bearer ${keys.other}`, expect: 'other' as const }) },
    { weight: 1, arbitrary: fc.constant({ expect: 'none' as const }) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('', '   ', 'Bearer', 'Bearer ', 'bearer\t', 'BEARER')
        .map((header) => ({ header, expect: '403' as const })),
    },
    {
      weight: 3,
      arbitrary: fc
        .constantFrom(
          `Basic ${btoa('user:pass')}`,
          `Token ${k}`,
          `Bearer ${k}x`,
          `Bearer ${k.slice(0, -1)}`,
          `Bearer ${k.toUpperCase()}`,
          `Bearer svc_live_${'0'.repeat(48)}`,
          `Bearer ${k} ${k}`,
          `Bearer ${k},Bearer ${k}`,
          `Bearer "${k}"`,
          `Bearer${k}`,
          `Bearer ${keys.revoked}`,
          `Bearer ${k.replace('svc_live_', 'svc_test_')}`,
          'Bearer null',
          'Bearer undefined',
          `Bearer svc_live_${'g'.repeat(48)}`,
        )
        .map((header) => ({ header, expect: '401' as const })),
    },
    { weight: 1, arbitrary: latin1(30).map((s) => ({ header: `X${s}`, expect: '401' as const })) },
    { weight: 1, arbitrary: hostileHeader.map((header) => ({ header, expect: 'any' as const })) },
  )
}

/** Random request headers (no Authorization): content types, proxies, idempotency keys, garbage. */
export const extraHeaders = fc.record(
  {
    'content-type': fc.oneof(fc.constantFrom(...CONTENT_TYPES), hostileHeader),
    accept: fc.oneof(fc.constantFrom(...ACCEPTS), hostileHeader),
    'x-forwarded-for': fc.oneof(
      fc.constantFrom(
        '203.0.113.7',
        '::ffff:192.0.2.1',
        '1.1.1.1, 2.2.2.2',
        ',,,',
        ' , ',
        'unknown',
        '::1',
        '999.999.999.999',
        'x'.repeat(100),
      ),
      hostileHeader,
    ),
    'idempotency-key': fc.oneof(
      fc.constantFrom('', ' ', 'k', 'k'.repeat(255), 'k'.repeat(256), 'has space', 'é'),
      hostileHeader,
    ),
    'user-agent': hostileHeader,
    'x-request-id': fc.oneof(fc.constantFrom('abc', 'x'.repeat(65), 'a b', '../../'), hostileHeader),
    'sec-fetch-site': fc.constantFrom('same-origin', 'same-site', 'none', 'cross-site', 'garbage'),
    'content-length': fc.constantFrom('0', '-1', 'abc', '99999999999', '1e3', ''),
    cookie: hostileHeader,
    origin: fc.constantFrom('https://evil.example', 'null', 'http://intake.test'),
  },
  { requiredKeys: [] },
)

// ---------------------------------------------------------------- generators: ids in paths

export type IdShape = 'canonical' | 'lower' | 'mixed' | 'percent' | 'suffix' | 'prefix' | 'slash' | 'long' | 'space'
export const ID_SHAPES: IdShape[] = [
  'canonical',
  'canonical',
  'lower',
  'mixed',
  'percent',
  'suffix',
  'prefix',
  'slash',
  'long',
  'space',
]
/** Shapes under which a path still names the form (letters' case and percent-encoding do not change a ULID). */
export const resolvesAs = (shape: IdShape) =>
  shape === 'canonical' || shape === 'lower' || shape === 'mixed' || shape === 'percent'

export function shapeId(id: string, shape: IdShape, salt: number): string {
  switch (shape) {
    case 'canonical':
      return id
    case 'lower':
      return id.toLowerCase()
    case 'mixed':
      return [...id].map((c, i) => ((i + salt) % 2 ? c.toLowerCase() : c)).join('')
    case 'percent':
      return [...id]
        .map((c, i) => ((i + salt) % 3 === 0 ? `%${c.charCodeAt(0).toString(16).toUpperCase()}` : c))
        .join('')
    case 'suffix':
      return `${id}${nth(['A', '0', '%00', '%E2%80%8B', '.json', '%2F', '~'], salt)}`
    case 'prefix':
      return `${nth(['%E2%80%8B', '%EF%BB%BF', '+', '%20', '0'], salt)}${id}`
    case 'slash':
      return `${id.slice(0, 10)}%2F${id.slice(10)}`
    case 'long':
      return id.repeat(2 + (salt % 3))
    case 'space':
      return `%20${id}%20`
  }
}

/** Ids that name nothing: random ULIDs, malformed and hostile text (percent-encoded into the path). */
export const anyStrangeId = fc.oneof(
  fc.ulid(),
  fc.ulid().map((id) => id.toLowerCase()),
  fc.constantFrom(
    '01ARZ3NDEKTSV4RRFFQ69G5FAV',
    '00000000000000000000000000',
    '7ZZZZZZZZZZZZZZZZZZZZZZZZZ',
    '8ZZZZZZZZZZZZZZZZZZZZZZZZZ',
    'OOOOOOOOOOOOOOOOOOOOOOOOOO',
    'ILUILUILUILUILUILUILUILUIL',
    '..',
    '.',
    'null',
    'undefined',
    '0',
    '-1',
    '__proto__',
    'constructor',
    '%2F',
    '%2e%2e',
    '%252F',
    '%',
    '%zz',
    '%ED%A0%80',
    '%00',
  ),
  hostile(30)
    .filter((s) => s.length > 0)
    .map((s) => encodeURIComponent(s.toWellFormed())),
)
/** The same without dot segments, which the URL parser removes (the path would name another route). */
export const strangeId = anyStrangeId.filter((s) => !/^(?:\.|%2e)+$/i.test(s))

// ---------------------------------------------------------------- HTML

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
export const decodeHtml = (raw: string) =>
  raw.replace(/&(?:(amp|lt|gt|quot|apos)|#(\d+)|#[xX]([0-9a-fA-F]+));/g, (_, name, dec, hex) =>
    name ? ENTITIES[name]! : String.fromCodePoint(Number.parseInt(dec ?? hex, dec ? 10 : 16)),
  )
export interface Tag {
  name: string
  attrs: Map<string, string>
  end: number
}
const TAG_RE = /<([A-Za-z][A-Za-z0-9-]*)((?:\s+[^\s"'<>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*\/?>/g
const ATTR_RE = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g
export function tagsOf(html: string): Tag[] {
  const tags: Tag[] = []
  for (const match of html.matchAll(TAG_RE)) {
    const attrs = new Map<string, string>()
    for (const a of (match[2] ?? '').matchAll(ATTR_RE))
      attrs.set(a[1]!.toLowerCase(), decodeHtml(a[2] ?? a[3] ?? a[4] ?? ''))
    tags.push({ name: match[1]!.toLowerCase(), attrs, end: match.index! + match[0].length })
  }
  return tags
}
/** No script, no event handler attribute, no javascript: URL: whatever the API client or the person wrote. */
export function checkPageSafety(html: string, where: string) {
  must(!/<script/i.test(html), `${where}: the page holds <script`)
  for (const tag of tagsOf(html)) {
    must(
      !['script', 'iframe', 'frame', 'object', 'embed', 'applet', 'base'].includes(tag.name),
      `${where}: the page holds a <${tag.name}> tag`,
    )
    for (const [name, value] of tag.attrs) {
      must(!/^on/i.test(name), `${where}: an event handler attribute ${name}=${show(value)} in <${tag.name}>`)
      if (['href', 'src', 'action', 'formaction'].includes(name))
        must(!/^\s*javascript:/i.test(value), `${where}: a javascript: URL in ${name}`)
    }
  }
}
export const normalText = (s: string) => s.toWellFormed().replace(/\r\n?/g, '\n')
