/**
 * The fuzz tests' settings (FUZZ_SEED, FUZZ_RUNS), JSON written as text (odd
 * numbers, duplicate and prototype keys, deep nesting) and the generators of
 * hostile text, numbers and nesting.
 */
import fc from 'fast-check'

// ---------------------------------------------------------------- settings

const envInt = (name: string, fallback: number) => {
  const value = Number(process.env[name])
  return Number.isSafeInteger(value) && value > 0 ? value : fallback
}
const SEED =
  Number.isSafeInteger(Number(process.env.FUZZ_SEED)) && process.env.FUZZ_SEED !== ''
    ? Number(process.env.FUZZ_SEED)
    : 20261125
/** Base runs per property (each property takes a multiple): the default keeps the file near 10 s on 2 cores. */
const RUNS = envInt('FUZZ_RUNS', 250)
/** fast-check settings for a property worth `factor` times the base number of runs. */
export const settings = (factor: number) => ({ seed: SEED, numRuns: Math.max(1, Math.round(RUNS * factor)) })
/** Per-test time limit: generous, the properties scale with FUZZ_RUNS. */
export const TIMEOUT = 60_000 + RUNS * 2_000
export const named = (what: string) => `${what} [FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}]`

export const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
export const STATUSES = ['active', 'completed', 'cancelled', 'expired'] as const
export type Status = (typeof STATUSES)[number]
export const CANONICAL_ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/
export const API_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/

/** Throws with the request in the message, so fast-check's report says what was sent. */
export function must(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message)
}
export const show = (value: unknown, max = 300) => {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value))
  return text.length > max ? `${text.slice(0, max)}...(${text.length} chars)` : text
}

// ---------------------------------------------------------------- JSON as text

/** JSON text inserted verbatim: 1e400, -0, deep nesting built as text. */
export class Raw {
  constructor(readonly text: string) {}
  toJSON() {
    return `<raw ${this.text.length > 60 ? `${this.text.slice(0, 60)}...` : this.text}>`
  }
}
/** An object as its list of entries, so "__proto__" is an ordinary key at every level. */
export class Obj {
  constructor(readonly entries: Array<[string, J]>) {}
  get(key: string): J | undefined {
    return this.entries.findLast(([k]) => k === key)?.[1]
  }
  with(key: string, value: J): Obj {
    return this.entries.some(([k]) => k === key)
      ? new Obj(this.entries.map(([k, v]) => [k, k === key ? value : v]))
      : new Obj([...this.entries, [key, value]])
  }
  without(key: string): Obj {
    return new Obj(this.entries.filter(([k]) => k !== key))
  }
  toJSON() {
    return Object.fromEntries(this.entries.map(([k, v]) => [k === '__proto__' ? '["__proto__"]' : k, v]))
  }
}
export type J = null | boolean | number | string | Raw | Obj | J[]

/** Compact JSON text; lone surrogates and NUL come out as \ud800 and \u0000 escapes. */
export function jsonText(value: J): string {
  if (value instanceof Raw) return value.text
  if (value instanceof Obj) return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`).join(',')}}`
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`
  return JSON.stringify(value)
}

/** The parsed value of a tree as the server sees it (own "__proto__" keys included). */
export const parsed = (value: J): unknown => JSON.parse(jsonText(value))
/** The compact JSON the service stores for a free-form object. */
export const compact = (value: J) => JSON.stringify(parsed(value))

/** Containers on the deepest path, counted without recursion. */
export function nesting(value: unknown): number {
  let max = 0
  const stack: Array<[unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (typeof node !== 'object' || node === null) continue
    max = Math.max(max, depth + 1)
    for (const child of Object.values(node)) stack.push([child, depth + 1])
  }
  return max
}

export function deepText(depth: number, kind: 'array' | 'object' | 'proto' | 'mixed'): string {
  const open: string[] = []
  for (let i = 0; i < depth; i++) {
    if (kind === 'array' || (kind === 'mixed' && i % 3 === 0)) open.push('[')
    else if (kind === 'proto' || (kind === 'mixed' && i % 3 === 1)) open.push('{"__proto__":')
    else open.push(kind === 'mixed' ? '{"constructor":' : '{"a":')
  }
  const close = open.map((token) => (token === '[' ? ']' : '}')).reverse()
  // The innermost array is empty; the innermost key holds 1.
  return open.join('') + (open.at(-1) === '[' ? '' : '1') + close.join('')
}

export const pointer = (...segments: Array<string | number>) =>
  segments.map((s) => `/${String(s).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')

// ---------------------------------------------------------------- generators: text, numbers, nesting

export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype']
const HOSTILE_PIECES = [
  '\u0000',
  '\ud800',
  '\udfff',
  '\udbff',
  '\u200d',
  '\u200b',
  '\u200c',
  '\u200e',
  '\u200f',
  '\u202e',
  '\u202d',
  '\u2066',
  '\u2069',
  '\ufeff',
  '\u0301',
  '\u0336',
  '\u20dd',
  'e\u0301',
  '👍',
  '👨‍👩‍👧‍👦',
  '🏳️‍🌈',
  '🇫🇷',
  '𝕏',
  'ﷺ',
  'العربية',
  'עברית',
  '中文',
  'Ω',
  'ß',
  '\u2028',
  '\u2029',
  '\uffff',
  '\ufffd',
  '\t',
  '\n',
  '\r\n',
  '\r',
  '"',
  "'",
  '<',
  '>',
  '&',
  '&amp;',
  '&lt;',
  '\\',
  '/',
  '%00',
  '%',
  '<script>alert(1)</script>',
  '" onmouseover="alert(1)',
  "' onfocus='x",
  '<img src=x onerror=alert(1)>',
  'javascript:alert(1)',
  '__proto__',
  'constructor',
  '{{7*7}}',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, sent as typed
  '${7*7}',
  '../../etc/passwd',
  ' ',
  '\u00a0',
  '\u3000',
]
const hostilePiece = fc.constantFrom(...HOSTILE_PIECES)

/**
 * Text a hostile API client or person might send: any code point, graphemes,
 * NUL, bidi marks, markup. Well-formed: lone surrogates are refused outright
 * (422), and have a property of their own below.
 */
export const hostile = (maxLength = 24): fc.Arbitrary<string> =>
  hostileWithSurrogates(maxLength).map((s) => s.toWellFormed())
const hostileWithSurrogates = (maxLength = 24): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ maxLength }),
    fc.string({ unit: 'grapheme', maxLength }),
    fc.string({ unit: 'binary', maxLength }),
    fc.array(hostilePiece, { maxLength: Math.max(1, Math.ceil(maxLength / 4)) }).map((parts) => parts.join('')),
    fc
      .array(fc.oneof(hostilePiece, fc.string({ maxLength: 3 })), { maxLength: Math.max(1, Math.ceil(maxLength / 3)) })
      .map((parts) => parts.join('')),
  )
/**
 * Hostile text of min..max UTF-16 units (a pair split by the cut is mended),
 * as intake shows or matches it: without the C0 control characters it
 * refuses there (all but tab, LF and CR; CONTRACT 13).
 */
export const bounded = (min: number, max: number, graphemes = 24) =>
  hostile(graphemes).map((s) => {
    const cut = s
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '·')
      .slice(0, max)
      .replace(/[\ud800-\udbff]$/, 'x')
    return cut.length >= min ? cut : cut + 'x'.repeat(min - cut.length)
  })

/**
 * Whether a JSON text holds a string or key that is not valid Unicode (a lone
 * surrogate, written "\\ud800"): the server refuses such a body whole (422).
 */
export function holdsLoneSurrogate(text: string): boolean {
  let root: unknown
  try {
    root = JSON.parse(text)
  } catch {
    return false
  }
  const stack: unknown[] = [root]
  while (stack.length > 0) {
    const node = stack.pop()
    if (typeof node === 'string') {
      if (!node.isWellFormed()) return true
    } else if (typeof node === 'object' && node !== null) {
      for (const [key, value] of Object.entries(node)) {
        if (!key.isWellFormed()) return true
        stack.push(value)
      }
    }
  }
  return false
}

/** Answers are counted in characters (code points), as JSON Schema counts them. */
export const chars = (s: string) => [...s].length
export const singleLine = (min: number, max: number) => bounded(min, max).map((s) => s.replace(/[\r\n]/g, ' '))

/** Numbers as they can only be written in JSON text. */
const ODD_NUMBER_TEXTS = [
  '1e308',
  '-1e308',
  '-0',
  '-0.0',
  '0e0',
  '1e400',
  '-1e400',
  '1e-400',
  '12345678901234567890',
  '-12345678901234567890',
  '9007199254740991',
  '9007199254740992',
  '9007199254740993',
  '5e-324',
  '1.7976931348623157e308',
  '1E+2',
  '0.1',
  '3.0',
]
const UNSTORABLE_NUMBER_TEXTS = [
  '1e308',
  '-1e308',
  '1e400',
  '-1e400',
  '12345678901234567890',
  '9007199254740992',
  '1.7976931348623157e308',
]
const STORABLE_NUMBER_TEXTS = ODD_NUMBER_TEXTS.filter(
  (t) => !UNSTORABLE_NUMBER_TEXTS.includes(t) && t !== '-12345678901234567890' && t !== '9007199254740993',
)
const NUMBERS_AS_STRINGS = [
  'NaN',
  'Infinity',
  '-Infinity',
  '1e400',
  '-0',
  '0x10',
  '１２',
  '١٢',
  ' 5 ',
  '5\u0000',
  '1_000',
  '',
]
const oddNumber: fc.Arbitrary<J> = fc.oneof(
  fc.constantFrom(...ODD_NUMBER_TEXTS).map((t) => new Raw(t)),
  fc.constantFrom(...NUMBERS_AS_STRINGS),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
)
/** Nesting 50..5000 levels deep (containers on the deepest path), built as text. */
export const deepRaw = (min = 50, max = 5000) =>
  fc
    .tuple(
      fc.integer({ min, max }),
      fc.constantFrom('array', 'object', 'proto', 'mixed') as fc.Arbitrary<'array' | 'object' | 'proto' | 'mixed'>,
    )
    .map(([depth, kind]) => new Raw(deepText(depth, kind)))

const anyKey = fc.oneof(
  { arbitrary: fc.constantFrom(...PROTO_KEYS), weight: 3 },
  { arbitrary: hostile(12), weight: 2 },
  { arbitrary: fc.constantFrom('a', 'title', 'fields', 'key', 'type', 'status', 'limit', '', ' ', '0'), weight: 1 },
)

/** Any JSON value, with odd numbers, hostile strings and prototype keys at every level. */
export const anyJson: fc.Arbitrary<J> = fc.letrec<{ tree: J; leaf: J; arr: J; obj: J }>((tie) => ({
  tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tie('leaf'), tie('arr'), tie('obj')),
  // Junk may hold lone surrogates too: they must be refused like any other bad input, never a 5xx.
  leaf: fc.oneof(
    fc.constant(null),
    fc.boolean(),
    oddNumber,
    hostileWithSurrogates(),
    fc.constant(new Raw('{}')),
    fc.constant(new Raw('[]')),
  ),
  arr: fc.array(tie('tree'), { maxLength: 4 }),
  obj: fc
    .array(fc.tuple(fc.oneof(anyKey, hostileWithSurrogates(8)), tie('tree')), { maxLength: 4 })
    .map((entries) => new Obj(entries)),
})).tree

/** A free-form object the service must keep exactly: nothing unstorable in it, nesting up to 98 below it. */
export const storableObject: fc.Arbitrary<Obj> = fc
  .letrec<{ tree: J; leaf: J; arr: J; obj: Obj }>((tie) => ({
    tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tie('leaf'), tie('arr'), tie('obj')),
    leaf: fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc
        .double({ noNaN: true, noDefaultInfinity: true })
        .filter((n) => !Number.isInteger(n) || Number.isSafeInteger(n)),
      fc.constantFrom(...STORABLE_NUMBER_TEXTS).map((t) => new Raw(t)),
      fc.constantFrom(...NUMBERS_AS_STRINGS),
      hostile(),
    ),
    arr: fc.array(tie('tree'), { maxLength: 4 }),
    obj: fc.array(fc.tuple(anyKey, tie('tree')), { maxLength: 5 }).map((entries) => new Obj(entries)),
  }))
  .obj.chain((obj) =>
    fc.option(deepRaw(50, 97), { nil: undefined, freq: 4 }).map((deep) => (deep ? obj.with('deep', deep) : obj)),
  )
