/**
 * Property-based fuzzing (fast-check) of every JSON endpoint and both
 * submission paths, in-process through `app.handle`.
 *
 * Every request any property sends goes through `call`, which checks what must
 * hold for every response (no 5xx, no exception out of app.handle, errors are
 * JSON with a string `detail` or an HTML page with the CONTRACT 6 headers, no
 * CORS, pages without script) and remembers every state change it saw, so that
 * `checkWorld` can compare the service with a model afterwards: statuses and
 * their transitions, one response per completed form and none otherwise, the
 * accounts' isolation, the database holding exactly the forms the API created,
 * and no API key or webhook secret in any body, header or log line.
 *
 * Each property has its own subject; a dimension that finds a bug gets a
 * property of its own (lone surrogates, HEAD, trailing slashes, /mcp errors,
 * JSON Schema lengths), so one bug does not stop the others from being explored.
 *
 * Reproduce a failure: FUZZ_SEED=<seed> FUZZ_RUNS=<runs> bun test test/fuzz.test.ts
 * (the seed is in every test name; fast-check prints the counterexample and its path).
 * FUZZ_STATS=1 prints, after each property, how often each route answered each status.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { webhookSecret } from '../src/modules/forms/service.ts'
import {
  BASE_URL,
  createTestContext,
  EVERY_TYPE_ANSWERS,
  EVERY_TYPE_FIELDS,
  type TestContext,
  ULID_PATTERN,
} from './utils.ts'

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
const settings = (factor: number) => ({ seed: SEED, numRuns: Math.max(1, Math.round(RUNS * factor)) })
/** Per-test time limit: generous, the properties scale with FUZZ_RUNS. */
const TIMEOUT = 60_000 + RUNS * 2_000
const named = (what: string) => `${what} [FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}]`

const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
const STATUSES = ['active', 'completed', 'cancelled', 'expired'] as const
type Status = (typeof STATUSES)[number]
const CANONICAL_ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/
const API_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/

/** Throws with the request in the message, so fast-check's report says what was sent. */
function must(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message)
}
const show = (value: unknown, max = 300) => {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value))
  return text.length > max ? `${text.slice(0, max)}...(${text.length} chars)` : text
}

// ---------------------------------------------------------------- JSON as text

/** JSON text inserted verbatim: 1e400, -0, deep nesting built as text. */
class Raw {
  constructor(readonly text: string) {}
  toJSON() {
    return `<raw ${this.text.length > 60 ? `${this.text.slice(0, 60)}...` : this.text}>`
  }
}
/** An object as its list of entries, so "__proto__" is an ordinary key at every level. */
class Obj {
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
type J = null | boolean | number | string | Raw | Obj | J[]

/** Compact JSON text; lone surrogates and NUL come out as \ud800 and \u0000 escapes. */
function jsonText(value: J): string {
  if (value instanceof Raw) return value.text
  if (value instanceof Obj) return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`).join(',')}}`
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`
  return JSON.stringify(value)
}

/** The parsed value of a tree as the server sees it (own "__proto__" keys included). */
const parsed = (value: J): unknown => JSON.parse(jsonText(value))
/** The compact JSON the service stores for a free-form object. */
const compact = (value: J) => JSON.stringify(parsed(value))

/** Containers on the deepest path, counted without recursion. */
function nesting(value: unknown): number {
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

function deepText(depth: number, kind: 'array' | 'object' | 'proto' | 'mixed'): string {
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

const pointer = (...segments: Array<string | number>) =>
  segments.map((s) => `/${String(s).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')

// ---------------------------------------------------------------- generators: text, numbers, nesting

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype']
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
const hostile = (maxLength = 24): fc.Arbitrary<string> => hostileWithSurrogates(maxLength).map((s) => s.toWellFormed())
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
const bounded = (min: number, max: number, graphemes = 24) =>
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
function holdsLoneSurrogate(text: string): boolean {
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
const chars = (s: string) => [...s].length
const singleLine = (min: number, max: number) => bounded(min, max).map((s) => s.replace(/[\r\n]/g, ' '))

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
const deepRaw = (min = 50, max = 5000) =>
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
const anyJson: fc.Arbitrary<J> = fc.letrec<{ tree: J; leaf: J; arr: J; obj: J }>((tie) => ({
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
const storableObject: fc.Arbitrary<Obj> = fc
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

// ---------------------------------------------------------------- generators: forms

const VALID_PATTERNS = ['[a-z]+', '\\d{3}', '.*', '(a|b)+c?', '\\p{L}+', '[^<>]*', 'x{0,5}']
const VALID_ACCEPTS = ['image/*', '.pdf', 'image/*,.pdf', 'application/pdf', '.tar.gz', 'text/plain, .TXT']
const DAY_MS = 86_400_000
const isoDay = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * DAY_MS).toISOString().slice(0, 10)
const validEmail = fc
  .tuple(
    fc.stringMatching(/^[a-z0-9][a-z0-9.+_-]{0,15}$/),
    fc.stringMatching(/^[a-z0-9]{1,10}$/),
    fc.constantFrom('com', 'org', 'example', 'co.uk'),
  )
  .map(([local, domain, tld]) => `${local}@${domain}.${tld}`)

interface FieldSpec {
  key: string
  type: string
  obj: Obj
}

const fieldKey = fc.oneof(
  fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/),
  fc.constantFrom('constructor', 'toString', 'valueOf', 'hasOwnProperty', 'prototype', 'isPrototypeOf', 'name', 'a'),
)

/** `config` entries, only those defined. */
const configObj = (entries: Record<string, J | undefined>) =>
  new Obj(Object.entries(entries).filter((e): e is [string, J] => e[1] !== undefined))
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined })

const VALID_CONFIGS: Record<string, fc.Arbitrary<Obj | undefined>> = {
  text: opt(
    fc
      .record({
        placeholder: opt(bounded(0, 255)),
        max_length: opt(fc.integer({ min: 1, max: 10_000 })),
        min_length: opt(fc.integer({ min: 0, max: 60 })),
        pattern: opt(fc.constantFrom(...VALID_PATTERNS)),
        def: opt(singleLine(0, 60)),
      })
      .map((c) => {
        const max = c.max_length ?? 1000
        const min = c.min_length !== undefined && c.min_length > max ? max : c.min_length
        const def =
          c.pattern === undefined &&
          c.def !== undefined &&
          (c.def.trim() === '' || (chars(c.def) <= max && chars(c.def) >= (min ?? 0)))
            ? c.def
            : undefined
        return configObj({
          placeholder: c.placeholder,
          max_length: c.max_length,
          min_length: min,
          pattern: c.pattern,
          default: def,
        })
      }),
  ),
  textarea: opt(
    fc
      .record({
        placeholder: opt(bounded(0, 255)),
        rows: opt(fc.integer({ min: 1, max: 50 })),
        max_length: opt(fc.integer({ min: 1, max: 20_000 })),
        min_length: opt(fc.integer({ min: 0, max: 60 })),
        def: opt(bounded(0, 60)),
      })
      .map((c) => {
        const max = c.max_length ?? 10_000
        const min = c.min_length !== undefined && c.min_length > max ? max : c.min_length
        const normal = c.def?.replace(/\r\n?/g, '\n')
        const def =
          normal !== undefined &&
          c.def !== undefined &&
          (c.def.trim() === '' || (chars(normal) <= max && chars(normal) >= (min ?? 0)))
            ? c.def
            : undefined
        return configObj({
          placeholder: c.placeholder,
          rows: c.rows,
          max_length: c.max_length,
          min_length: min,
          default: def,
        })
      }),
  ),
  email: opt(
    fc
      .record({ placeholder: opt(bounded(0, 255)), def: opt(fc.oneof(validEmail, fc.constant(''))) })
      .map((c) => configObj({ placeholder: c.placeholder, default: c.def })),
  ),
  number: opt(
    fc
      .record({
        a: opt(fc.oneof(fc.integer({ min: -1e6, max: 1e6 }), fc.double({ min: -1e6, max: 1e6, noNaN: true }))),
        b: opt(fc.integer({ min: -1e6, max: 1e6 })),
        step: opt(fc.oneof(fc.integer({ min: 1, max: 100 }), fc.double({ min: 0.001, max: 1000, noNaN: true }))),
        withDefault: fc.boolean(),
        placeholder: opt(bounded(0, 255)),
      })
      .map((c) => {
        const [min, max] =
          c.a !== undefined && c.b !== undefined ? [Math.min(c.a, c.b), Math.max(c.a, c.b)] : [c.a, c.b]
        return configObj({
          min,
          max,
          step: c.step,
          placeholder: c.placeholder,
          default: c.withDefault && min !== undefined ? min : undefined,
        })
      }),
  ),
  select: fc
    .record({
      options: fc.uniqueArray(
        fc.oneof(
          bounded(1, 255),
          fc.tuple(bounded(1, 255), bounded(1, 255)).map(([value, label]) => ({ value, label })),
        ),
        {
          minLength: 1,
          maxLength: 6,
          selector: (o) => (typeof o === 'string' ? o : o.value),
        },
      ),
      pick: opt(fc.nat()),
      placeholder: opt(bounded(0, 255)),
    })
    .map((c) => {
      const values = c.options.map((o) => (typeof o === 'string' ? o : o.value))
      return configObj({
        options: c.options.map((o) =>
          typeof o === 'string'
            ? o
            : new Obj([
                ['value', o.value],
                ['label', o.label],
              ]),
        ),
        placeholder: c.placeholder,
        default: c.pick === undefined ? undefined : values[c.pick % values.length],
      })
    }),
  checkbox: opt(fc.record({ def: opt(fc.boolean()) }).map((c) => configObj({ default: c.def }))),
  date: opt(
    fc
      .record({
        a: opt(fc.integer({ min: -400, max: 400 })),
        b: opt(fc.integer({ min: -400, max: 400 })),
        withDefault: fc.boolean(),
        input: opt(fc.constantFrom('calendar', 'memorable')),
      })
      .map((c) => {
        const [lo, hi] = c.a !== undefined && c.b !== undefined ? [Math.min(c.a, c.b), Math.max(c.a, c.b)] : [c.a, c.b]
        return configObj({
          min: lo === undefined ? undefined : isoDay(lo),
          max: hi === undefined ? undefined : isoDay(hi),
          default: c.withDefault ? isoDay(lo ?? hi ?? 0) : undefined,
          input: c.input,
        })
      }),
  ),
  file: opt(
    fc
      .record({
        accept: opt(fc.constantFrom(...VALID_ACCEPTS)),
        max_size: opt(fc.integer({ min: 1, max: 10 * 1024 * 1024 })),
      })
      .map((c) => configObj(c)),
  ),
}
const FIELD_TYPES = Object.keys(VALID_CONFIGS)

const validField: fc.Arbitrary<FieldSpec> = fc
  .record({
    key: fieldKey,
    type: fc.constantFrom(...FIELD_TYPES),
    label: bounded(1, 255),
    description: opt(fc.oneof(bounded(0, 2000), fc.constant(null))),
    required: opt(fc.boolean()),
    configSeed: fc.nat(),
  })
  .chain((f) =>
    VALID_CONFIGS[f.type]!.map((config) => {
      const entries: Array<[string, J]> = [
        ['key', f.key],
        ['type', f.type],
        ['label', f.label],
      ]
      if (f.description !== undefined) entries.push(['description', f.description])
      if (f.required !== undefined) entries.push(['required', f.required])
      if (config !== undefined) entries.push(['config', config])
      return { key: f.key, type: f.type, obj: new Obj(entries) }
    }),
  )

const expiresIn = fc
  .tuple(fc.integer({ min: 1, max: 999_999 }), fc.constantFrom('m', 'h', 'd'))
  .filter(([n, unit]) => n * { m: 60_000, h: 3_600_000, d: DAY_MS }[unit] <= 365 * DAY_MS)
  .map(([n, unit]) => `${n}${unit}`)
const callbackUrl = fc.oneof(
  fc.constant('http://127.0.0.1:9/hook'),
  hostile(20).map((s) => `https://hooks.example.com/in?x=${encodeURIComponent(s.toWellFormed())}`.slice(0, 2048)),
)

interface CreateSpec {
  body: Obj
  fields: FieldSpec[]
}

/** A create body the service must accept (201), hostile in every string it holds. */
const validCreate: fc.Arbitrary<CreateSpec> = fc
  .record({
    title: bounded(1, 255),
    description: opt(fc.oneof(bounded(0, 400), fc.constant(null))),
    fields: fc.uniqueArray(validField, { minLength: 1, maxLength: 6, selector: (f) => f.key }),
    callback_url: opt(fc.oneof(callbackUrl, fc.constant(null))),
    callback_metadata: opt(fc.oneof(storableObject, fc.constant(null))),
    context: opt(fc.oneof(storableObject, fc.constant(null))),
    settings: opt(fc.oneof(storableObject, fc.constant(null))),
    expires_in: opt(fc.oneof(expiresIn, fc.constant(null))),
  })
  .map((b) => {
    const entries: Array<[string, J]> = [
      ['title', b.title],
      ['fields', b.fields.map((f) => f.obj)],
    ]
    for (const key of [
      'description',
      'callback_url',
      'callback_metadata',
      'context',
      'settings',
      'expires_in',
    ] as const) {
      if (b[key] !== undefined) entries.push([key, b[key] as J])
    }
    return { body: new Obj(entries), fields: b.fields }
  })

/** Values of each known key that are certainly wrong (type, range or format). */
const WRONG_TOP: Record<string, J[]> = {
  title: [
    0,
    true,
    null,
    [],
    new Obj([]),
    '',
    'x'.repeat(256),
    'a\u0000b',
    '\u001b[31m',
    new Raw('1e400'),
    new Raw('-0'),
    new Raw(deepText(60, 'array')),
  ],
  description: [0, true, [], new Obj([]), 'd'.repeat(10_001), new Raw('1e400')],
  fields: [null, 0, 'x', new Obj([]), [], [null], [0], ['text'], [new Obj([])], new Raw(deepText(200, 'array'))],
  callback_url: [
    0,
    true,
    [],
    new Obj([]),
    'ftp://x.example/h',
    'javascript:alert(1)',
    'http://',
    '//x.example/h',
    ' http://x.example',
    'http://x .example',
    'https:x.example',
    '',
    '/relative',
    `http://x.example/${'a'.repeat(2048)}`,
    'http://\u0000',
  ],
  callback_metadata: [
    0,
    'x',
    true,
    [],
    [1],
    new Raw('1e400'),
    new Raw(deepText(120, 'object')),
    new Obj([['n', new Raw('1e400')]]),
    new Obj([['n', new Raw('12345678901234567890')]]),
    new Obj([['__proto__', new Obj([['n', new Raw('1e308')]])]]),
  ],
  context: [
    0,
    'x',
    true,
    [],
    [new Obj([])],
    new Raw('-1e400'),
    new Raw(deepText(101, 'proto')),
    new Obj([['deep', new Raw(deepText(100, 'array'))]]),
    new Obj([['n', new Raw('9007199254740992')]]),
    new Obj([['constructor', new Obj([['prototype', new Raw('1e400')]])]]),
  ],
  settings: [0, 'x', false, [], new Raw(deepText(5000, 'mixed')), new Obj([['n', new Raw('-12345678901234567890')]])],
  expires_in: [
    0,
    48,
    true,
    [],
    new Obj([]),
    '',
    '0m',
    '48',
    'h',
    '48H',
    '1w',
    '1.5h',
    ' 48h',
    '48h ',
    '-1h',
    '366d',
    '8761h',
    '525601m',
    '0001h',
    '1000000m',
    '١٢h',
    'NaN',
    '1e400',
  ],
}
const WRONG_FIELD: Record<string, J[]> = {
  key: [0, null, '', '1abc', '_x', '__proto__', 'a b', 'a'.repeat(65), 'é', 'a.b', 'a/b', 'a~b', [], new Obj([])],
  type: [0, null, 'Text', 'unknown', '', 'constructor', '__proto__', 'toString', [], new Obj([])],
  label: [0, null, '', 'l'.repeat(256), [], new Obj([]), true, 'l\u0007'],
  description: [0, true, [], new Obj([]), 'd'.repeat(2001)],
  required: [null, 0, 1, 'true', [], new Obj([])],
  config: [0, 'x', [], true, null, new Raw(deepText(300, 'array'))],
}
const WRONG_CONFIG: Record<string, Record<string, J[]>> = {
  text: {
    max_length: [0, 10_001, 1.5, '10', null, -1, new Raw('1e400')],
    min_length: [-1, 1.5, '1', 10_001],
    pattern: ['', '(', '[', 0, 'p'.repeat(1001), '(?<a>x)(?<a>y)', '\\', '[a-'],
    placeholder: [0, 'p'.repeat(256), null, 'p\u0008'],
    default: [0, 'a\nb', null, [], 'a\u0000'],
  },
  textarea: {
    rows: [0, 51, 1.5, '4', null],
    max_length: [0, 100_001],
    min_length: [-1, 'x'],
    default: [1, true],
    placeholder: [[]],
  },
  email: { default: ['not-an-email', 0, 'a@b', '@x.example'], placeholder: [0, 'p'.repeat(256)] },
  number: {
    min: ['1', null, true, new Raw('1e400'), 'NaN'],
    max: ['Infinity', [], new Raw('-1e400')],
    step: [0, -1, '1', new Raw('-0')],
    default: ['3', true, new Raw('1e400'), new Raw('12345678901234567890')],
  },
  select: {
    options: [
      [],
      'x',
      [''],
      ['a', 'a'],
      [0],
      [new Obj([['value', 'a']])],
      ['o'.repeat(256)],
      Array.from({ length: 201 }, (_, i) => `o${i}`),
      new Obj([]),
      null,
    ],
    default: ['not-an-option-\u0000', 0, 'o'.repeat(256)],
    placeholder: [1],
  },
  checkbox: { default: ['true', 0, null, 'on'] },
  date: {
    min: ['2026-02-30', '2026-1-1', 0, '20260101', '0000-01-01', '2026-13-01'],
    max: ['2026-02-29', '', null],
    default: ['2026-06-31', 20260601],
    input: ['wheel', '', 0, null, 'Calendar'],
  },
  file: {
    accept: ['', ',', 'image', '*/*', 0, 'image/*;q=1', '<svg>'],
    max_size: [0, 25 * 1024 * 1024 + 1, 1.5, '10', -1, null],
  },
}
const KNOWN_TOP = [
  'title',
  'description',
  'fields',
  'callback_url',
  'callback_metadata',
  'context',
  'settings',
  'expires_in',
]
const KNOWN_FIELD = ['key', 'type', 'label', 'description', 'required', 'config']
const KNOWN_CONFIG: Record<string, string[]> = {
  text: ['placeholder', 'default', 'min_length', 'max_length', 'pattern'],
  textarea: ['placeholder', 'default', 'min_length', 'max_length', 'rows'],
  email: ['placeholder', 'default'],
  number: ['placeholder', 'default', 'min', 'max', 'step'],
  select: ['options', 'placeholder', 'default'],
  checkbox: ['default'],
  date: ['default', 'min', 'max', 'input'],
  file: ['accept', 'max_size'],
}
const extraKey = fc.oneof(
  fc.constantFrom(
    ...PROTO_KEYS,
    'expire_in',
    'Title',
    'callbackUrl',
    'toString',
    'hasOwnProperty',
    '',
    'options ',
    'maxLength',
    'a/b',
    'a~b',
  ),
  hostile(10),
)

type Mutation = {
  kind: 'extraTop' | 'extraField' | 'extraConfig' | 'wrongTop' | 'wrongField' | 'wrongConfig' | 'remove'
  a: number
  b: number
  key: string
  value: J
}
const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom('extraTop', 'extraField', 'extraConfig', 'wrongTop', 'wrongField', 'wrongConfig', 'remove'),
  a: fc.nat(),
  b: fc.nat(),
  key: extraKey,
  value: anyJson,
})
const nth = <T>(list: readonly T[], n: number): T => list[n % list.length]!

/** Applies one mutation that makes the body invalid; returns the body and the JSON Pointer the error must name. */
function mutate(spec: CreateSpec, body: Obj, m: Mutation): { body: Obj; path: string } {
  const unknown = (known: string[]) => (known.includes(m.key) ? `${m.key}_x` : m.key)
  if (m.kind === 'extraTop') {
    const key = unknown(KNOWN_TOP)
    return { body: body.with(key, m.value), path: pointer(key) }
  }
  if (m.kind === 'wrongTop') {
    const key = nth(KNOWN_TOP, m.b)
    return { body: body.with(key, nth(WRONG_TOP[key]!, m.a)), path: pointer(key) }
  }
  const fields = body.get('fields') as Obj[]
  // After an earlier mutation broke `fields`, only keys can still be added.
  if (!(Array.isArray(fields) && fields.length === spec.fields.length && fields.every((f) => f instanceof Obj))) {
    return mutate(spec, body, { ...m, kind: 'extraTop' })
  }
  const index = m.a % fields.length
  const field = fields[index]!
  const type = spec.fields[index]!.type
  const withField = (changed: Obj) =>
    body.with(
      'fields',
      fields.map((f, i) => (i === index ? changed : f)),
    )
  switch (m.kind) {
    case 'extraField': {
      const key = unknown(KNOWN_FIELD)
      return { body: withField(field.with(key, m.value)), path: pointer('fields', index, key) }
    }
    case 'extraConfig': {
      const key = unknown(KNOWN_CONFIG[type]!)
      const config = field.get('config')
      const base = config instanceof Obj ? config : type === 'select' ? new Obj([['options', ['a']]]) : new Obj([])
      return {
        body: withField(field.with('config', base.with(key, m.value))),
        path: pointer('fields', index, 'config', key),
      }
    }
    case 'wrongField': {
      const key = nth(KNOWN_FIELD, m.b)
      return { body: withField(field.with(key, nth(WRONG_FIELD[key]!, m.a))), path: pointer('fields', index, key) }
    }
    case 'wrongConfig': {
      const wrong = WRONG_CONFIG[type]!
      const key = nth(Object.keys(wrong), m.b)
      const config = field.get('config')
      let base = config instanceof Obj ? config : type === 'select' ? new Obj([['options', ['a']]]) : new Obj([])
      // A bound that is fine alone but wrong against the other one.
      if (type === 'date' && key === 'max' && m.a % 4 === 3)
        return {
          body: withField(
            field.with('config', base.with('min', '2026-06-02').with('max', '2026-06-01').without('default')),
          ),
          path: pointer('fields', index, 'config'),
        }
      if (type === 'number' && key === 'max' && m.a % 4 === 3)
        return {
          body: withField(field.with('config', base.with('min', 5).with('max', 4).without('default'))),
          path: pointer('fields', index, 'config'),
        }
      if (key !== 'default') base = base.without('default')
      return {
        body: withField(field.with('config', base.with(key, nth(wrong[key]!, m.a)))),
        path: pointer('fields', index, 'config'),
      }
    }
    case 'remove': {
      const choice = m.b % 5
      if (choice === 0) return { body: body.without('title'), path: '/title' }
      if (choice === 1) return { body: body.without('fields'), path: '/fields' }
      const key = ['key', 'type', 'label'][choice - 2]!
      return { body: withField(field.without(key)), path: pointer('fields', index, key) }
    }
  }
}

/** Bodies that are never a create or patch: not JSON, not an object, too deep, empty. */
const garbageBody: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  anyJson.filter((v) => !(v instanceof Obj) && !(v instanceof Raw && v.text === '{}')).map(jsonText),
  deepRaw().map((r) => r.text),
  fc.constantFrom(
    '',
    ' ',
    '\ufeff',
    'null',
    'NaN',
    'Infinity',
    '{',
    '}',
    '{"title":}',
    "{'title':'x'}",
    '{"a":1,}',
    '[1,]',
    '{"a":01}',
    '{"a":+1}',
    '{"a":.5}',
    '{"a":0x10}',
    '{"a":undefined}',
    '{"a":"\\ud800',
    '{"a":"\\x00"}',
    '{"a":"\u0000"}',
    '\u0000{}',
    '{}garbage',
    'true false',
  ),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => Uint8Array.from([0xff, ...bytes])),
  hostile(40),
)

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
const hostileHeader = fc.oneof(
  latin1(),
  hostile(20).map((s) =>
    Buffer.from(s.toWellFormed(), 'utf8')
      .toString('latin1')
      .replace(/[\u0000-\u001f\u007f]/g, ''),
  ),
)

const CONTENT_TYPES = [
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
const ACCEPTS = ['text/html', 'application/json', '*/*', 'text/html,application/xhtml+xml;q=0.9', '', 'image/png']

type Auth = { header?: string; expect: 'owner' | 'other' | '401' | '403' | 'any' | 'none' }
/** Authorization values, each with what it must lead to on /api/v1. */
function authArb(keys: { owner: string; other: string; revoked: string }): fc.Arbitrary<Auth> {
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
const extraHeaders = fc.record(
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

type IdShape = 'canonical' | 'lower' | 'mixed' | 'percent' | 'suffix' | 'prefix' | 'slash' | 'long' | 'space'
const ID_SHAPES: IdShape[] = [
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
const resolvesAs = (shape: IdShape) =>
  shape === 'canonical' || shape === 'lower' || shape === 'mixed' || shape === 'percent'

function shapeId(id: string, shape: IdShape, salt: number): string {
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
const anyStrangeId = fc.oneof(
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
const strangeId = anyStrangeId.filter((s) => !/^(?:\.|%2e)+$/i.test(s))

// ---------------------------------------------------------------- HTML

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
const decodeHtml = (raw: string) =>
  raw.replace(/&(?:(amp|lt|gt|quot|apos)|#(\d+)|#[xX]([0-9a-fA-F]+));/g, (_, name, dec, hex) =>
    name ? ENTITIES[name]! : String.fromCodePoint(Number.parseInt(dec ?? hex, dec ? 10 : 16)),
  )
interface Tag {
  name: string
  attrs: Map<string, string>
  end: number
}
const TAG_RE = /<([A-Za-z][A-Za-z0-9-]*)((?:\s+[^\s"'<>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*\/?>/g
const ATTR_RE = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g
function tagsOf(html: string): Tag[] {
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
function checkPageSafety(html: string, where: string) {
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
const normalText = (s: string) => s.toWellFormed().replace(/\r\n?/g, '\n')

// ---------------------------------------------------------------- the world: a service, its accounts, a model

interface Tracked {
  id: string
  account: 'owner' | 'other'
  status: Status
  expiresAt: number | null
  deleted: boolean
  /** Status last read through the API, for the transition check. */
  seen: Status
  /** The 201 that created it (not a replay) has been seen. */
  original: boolean
}

interface World {
  t: TestContext
  keys: { owner: string; other: string; observer: string; revoked: string }
  forms: Map<string, Tracked>
  /** Fixtures: forms in every state, created before the properties run. */
  fx: {
    active: string[]
    hooked: string
    completed: string
    completedResponse: string
    hookedCompleted: string
    hookedResponse: string
    delivery: string
    cancelled: string
    expired: string
    deleted: string
    otherForm: string
  }
  /** Long hex runs seen in any response body, header or log line: where a key or secret would show. */
  hexRuns: Set<string>
  requests: number
  /**
   * Forms under concurrent requests: their answers arrive in any order, not
   * the order they committed in, so a PATCH heard to leave one "active" may
   * have committed before a cancel heard earlier.
   */
  raced: Set<string>
}

const LEGAL: Record<Status, Status[]> = {
  active: ['active', 'completed', 'cancelled', 'expired'],
  completed: ['completed'],
  cancelled: ['cancelled'],
  expired: ['expired'],
}
const parseApiTime = (text: unknown) => (typeof text === 'string' ? Date.parse(`${text}Z`) : null)
/** The status the model expects now: an active form past its expiry is expired. */
function modelStatus(w: World, form: Tracked): Status {
  if (form.status === 'active' && form.expiresAt !== null && form.expiresAt <= w.t.clock()) return 'expired'
  return form.status
}

function collectHex(w: World, text: string) {
  for (const match of text.toLowerCase().matchAll(/[0-9a-f]{40,}/g)) {
    // Padding ("aaaa...") is split off: a key or secret never repeats one character 12 times in a row.
    for (const piece of match[0].split(/(?:([0-9a-f])\1{11,})+/)) if (piece && piece.length >= 40) w.hexRuns.add(piece)
  }
}

function accountOf(w: World, authorization: string | null): 'owner' | 'other' | undefined {
  if (authorization === null) return undefined
  if (authorization.includes(w.keys.owner)) return 'owner'
  if (authorization.includes(w.keys.other)) return 'other'
  return undefined
}

function canonicalFromPath(segment: string): string | undefined {
  let decoded: string
  try {
    decoded = decodeURIComponent(segment)
  } catch {
    return undefined
  }
  return ULID_PATTERN.test(decoded.toUpperCase()) ? decoded.toUpperCase() : undefined
}

function transition(w: World, id: string, status: unknown, expiresAt: unknown, where: string) {
  const form = w.forms.get(id)
  must(form, `${where}: a state change of a form nobody created through the API: ${id}`)
  must(STATUSES.includes(status as Status), `${where}: status ${show(status)}`)
  const before = modelStatus(w, form)
  if (w.raced.has(id) && status === 'active' && before !== 'active') return
  must(LEGAL[before].includes(status as Status), `${where}: illegal transition ${before} -> ${String(status)} of ${id}`)
  form.status = status as Status
  if (expiresAt !== undefined) form.expiresAt = parseApiTime(expiresAt)
}

interface Call {
  method: string
  path: string
  headers?: Record<string, string>
  /** Shorthand for a valid bearer key. */
  as?: 'owner' | 'other' | 'observer'
  body?: string | Uint8Array | FormData | URLSearchParams
}
interface Answer {
  status: number
  headers: Headers
  text: string
  bytes: Uint8Array
  body: any
  where: string
}

/**
 * Sends one request through app.handle and checks what every response owes:
 * no 5xx, no exception, errors as JSON with `detail` or as a page with the
 * CONTRACT 6 headers. Remembers state changes and every long hex run it saw.
 */
async function call(w: World, c: Call): Promise<Answer> {
  const headers = new Headers()
  for (const [name, value] of Object.entries(c.headers ?? {})) headers.set(name, value)
  if (c.as) headers.set('authorization', `Bearer ${w.keys[c.as]}`)
  // Bun turns methods it does not know into GET: ask it which method this is before adding a body.
  const method = new Request(`${BASE_URL}${c.path}`, { method: c.method }).method
  const hasBody = c.body !== undefined && method !== 'GET' && method !== 'HEAD'
  const request = new Request(`${BASE_URL}${c.path}`, { method: c.method, headers, body: hasBody ? c.body : undefined })
  const where = `${c.method} ${c.path.length > 200 ? `${c.path.slice(0, 200)}...` : c.path} (headers ${show(Object.fromEntries(headers), 400)})`
  let response: Response
  let bytes: Uint8Array
  try {
    response = await w.t.app.handle(request)
    bytes = new Uint8Array(await response.arrayBuffer())
  } catch (error) {
    throw new Error(
      `${where}: an exception escaped app.handle: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    )
  }
  w.requests++
  if (STATS) {
    const route = new URL(request.url).pathname.replace(
      /\/(?:f|forms|responses|deliveries)\/[^/]+/g,
      (m) => `${m.slice(0, m.indexOf('/', 1) + 1)}:id`,
    )
    const key = `${request.method} ${route.length > 60 ? `${route.slice(0, 60)}...` : route} ${response.status}`
    STATS.set(key, (STATS.get(key) ?? 0) + 1)
  }
  const text = new TextDecoder().decode(bytes)
  let body: any
  try {
    body = JSON.parse(text)
  } catch {}
  const answer: Answer = {
    status: response.status,
    headers: response.headers,
    text,
    bytes,
    body,
    where: `${where} -> ${response.status} ${show(text, 300)}`,
  }
  collectHex(w, text)
  for (const [name, value] of response.headers) collectHex(w, `${name}: ${value}`)
  checkResponse(request, answer)
  track(w, request, answer)
  return answer
}

function checkResponse(request: Request, res: Answer) {
  const at = res.where
  const method = request.method
  const path = new URL(request.url).pathname
  const type = res.headers.get('content-type') ?? ''
  const html = /^text\/html/i.test(type)
  must(res.status >= 200 && res.status < 500, `${at}: status ${res.status}`)
  must(!res.headers.has('access-control-allow-origin'), `${at}: a CORS header`)
  if (html) {
    must(type === 'text/html; charset=utf-8', `${at}: page content-type ${type}`)
    must(
      res.headers.get('content-security-policy') === CSP,
      `${at}: page CSP ${show(res.headers.get('content-security-policy'))}`,
    )
    must(res.headers.get('x-content-type-options') === 'nosniff', `${at}: page without nosniff`)
    must(res.headers.get('referrer-policy') === 'no-referrer', `${at}: page without Referrer-Policy: no-referrer`)
    must(res.headers.get('cache-control') === 'no-store', `${at}: page without Cache-Control: no-store`)
    if (method !== 'HEAD') checkPageSafety(res.text, at)
  }
  if (path.startsWith('/api/')) must(!html, `${at}: an HTML answer under /api/`)
  const sentType = request.headers.get('content-type')
  if (path.startsWith('/f/') && method === 'GET' && sentType === null)
    must(html, `${at}: the page path answered without a page`)
  if (
    path.startsWith('/f/') &&
    method === 'POST' &&
    sentType !== null &&
    /^(application\/x-www-form-urlencoded|multipart\/form-data)\s*(;|$)/i.test(sentType)
  ) {
    must(html || res.status === 303, `${at}: a form post answered without a page`)
  }
  if (res.status === 303)
    must(/^\/f\/[0-9A-Z]{26}$/.test(res.headers.get('location') ?? ''), `${at}: 303 to ${res.headers.get('location')}`)
  if (res.status >= 400 && method !== 'HEAD' && !html) {
    must(/^application\/(?:[\w.+-]+\+)?json/i.test(type), `${at}: an error with content-type ${show(type)}`)
    must(
      typeof res.body === 'object' && res.body !== null && !Array.isArray(res.body),
      `${at}: an error body that is not a JSON object`,
    )
    const jsonRpc = path === '/mcp' && res.body.jsonrpc === '2.0'
    if (jsonRpc) must(typeof res.body.error?.message === 'string', `${at}: a JSON-RPC error without message`)
    else
      must(typeof res.body.detail === 'string' && res.body.detail.length > 0, `${at}: an error without a string detail`)
    if (res.status === 422 && !jsonRpc) {
      must(Array.isArray(res.body.errors) && res.body.errors.length > 0, `${at}: a 422 without errors`)
      for (const e of res.body.errors)
        must(
          typeof e?.path === 'string' && (e.path === '' || e.path.startsWith('/')) && typeof e.message === 'string',
          `${at}: a malformed error ${show(e)}`,
        )
    }
    if (res.status === 401)
      must(res.headers.get('www-authenticate') === 'Bearer', `${at}: 401 without WWW-Authenticate: Bearer`)
  }
  if (res.status === 429) must(res.headers.has('retry-after'), `${at}: 429 without Retry-After`)
}

/** Every state change the service reports, applied to the model (and checked to be legal). */
function track(w: World, request: Request, res: Answer) {
  const path = new URL(request.url).pathname
  const account = accountOf(w, request.headers.get('authorization'))
  if (request.method === 'POST' && /^\/api\/v1\/forms\/?$/.test(path) && res.status === 201) {
    const id = res.body?.id
    must(typeof id === 'string' && CANONICAL_ULID.test(id), `${res.where}: created form id ${show(id)}`)
    must(account, `${res.where}: a form created without a valid key`)
    const known = w.forms.get(id)
    const replayed = res.headers.get('idempotent-replayed') === 'true'
    must(
      replayed || res.headers.get('idempotent-replayed') === null,
      `${res.where}: Idempotent-Replayed ${res.headers.get('idempotent-replayed')}`,
    )
    if (known) {
      must(
        known.account === account && (replayed || !known.original),
        `${res.where}: a second 201 for ${id} that is not a replay`,
      )
      if (!replayed) known.original = true
    } else {
      // A replay may be answered before the request that created the form: it waited for that one's commit, not its answer.
      must(replayed || res.body.status === 'active', `${res.where}: a new form that is not active`)
      w.forms.set(id, {
        id,
        account,
        status: 'active',
        expiresAt: parseApiTime(res.body.expires_at),
        deleted: false,
        seen: 'active',
        original: !replayed,
      })
    }
  }
  if (request.method === 'PATCH' && res.status === 200 && /^\/api\/v1\/forms\/[^/]+\/?$/.test(path)) {
    transition(w, res.body?.id, res.body?.status, res.body?.expires_at, res.where)
  }
  const deleted = /^\/api\/v1\/forms\/([^/]+)\/?$/.exec(path)
  if (request.method === 'DELETE' && deleted && res.status === 204) {
    const id = canonicalFromPath(deleted[1]!)
    const form = id && w.forms.get(id)
    must(
      form && !form.deleted && form.account === account,
      `${res.where}: deleted a form that was not the caller's (or already gone)`,
    )
    form.deleted = true
  }
  if (request.method === 'POST' && /^\/f\/[^/]+\/?$/.test(path) && (res.status === 201 || res.status === 303)) {
    const id = res.status === 201 ? res.body?.form_id : res.headers.get('location')?.slice(3)
    const form = typeof id === 'string' ? w.forms.get(id) : undefined
    must(form && !form.deleted, `${res.where}: a submission recorded for an unknown form ${show(id)}`)
    must(
      modelStatus(w, form) === 'active',
      `${res.where}: an answer recorded for a form that was ${modelStatus(w, form)}`,
    )
    transition(w, form.id, 'completed', undefined, res.where)
  }
}

async function createWorld(env: Record<string, string> = {}): Promise<World> {
  const t = await createTestContext({ SERVICE_TRUST_PROXY: 'true', ...env })
  const other = await t.createKey('other')
  const observer = await t.createKey('observer')
  const revoked = await t.createKey('owner-revoked')
  await t.revokeKey(revoked.id)
  const w: World = {
    t,
    keys: { owner: t.key, other: other.key, observer: observer.key, revoked: revoked.key },
    forms: new Map(),
    fx: {} as World['fx'],
    hexRuns: new Set(),
    raced: new Set(),
    requests: 0,
  }
  // The form that expires first: 1 minute, then the clock moves 2.
  const expired = await create(w, {
    title: 'Soon gone',
    fields: EVERY_TYPE_FIELDS,
    expires_in: '1m',
    context: { secret: 'ctx' },
  })
  t.clock.advance(120_000)
  const active = [
    await create(w, {
      title: 'Every type',
      fields: EVERY_TYPE_FIELDS,
      context: { ticket: 'T-1', nested: { a: [1, 2] } },
    }),
    await create(w, { title: 'Every type, no expiry', fields: EVERY_TYPE_FIELDS, expires_in: null }),
    await create(w, {
      title: 'Text only <b>&amp;</b>',
      fields: [{ key: 'name', type: 'text', label: 'Name "quoted"' }],
    }),
  ]
  const hooked = await create(w, {
    title: 'Hooked',
    fields: EVERY_TYPE_FIELDS,
    callback_url: 'http://127.0.0.1:9/hook',
    callback_metadata: { run: 1 },
  })
  const completed = await create(w, { title: 'Answered', fields: EVERY_TYPE_FIELDS, context: { step: 2 } })
  const hookedCompleted = await create(w, {
    title: 'Answered with a hook',
    fields: EVERY_TYPE_FIELDS,
    callback_url: 'http://127.0.0.1:9/hook',
  })
  const cancelled = await create(w, { title: 'Called off', fields: EVERY_TYPE_FIELDS, context: { keep: true } })
  const deleted = await create(w, { title: 'Gone', fields: EVERY_TYPE_FIELDS })
  const otherForm = await create(w, { title: 'Not yours', fields: EVERY_TYPE_FIELDS }, 'other')
  const r1 = await call(w, {
    method: 'POST',
    path: `/f/${completed}`,
    body: JSON.stringify(EVERY_TYPE_ANSWERS),
    headers: { 'content-type': 'application/json' },
  })
  const r2 = await call(w, {
    method: 'POST',
    path: `/f/${hookedCompleted}`,
    body: JSON.stringify(EVERY_TYPE_ANSWERS),
    headers: { 'content-type': 'application/json' },
  })
  const c = await call(w, {
    method: 'PATCH',
    path: `/api/v1/forms/${cancelled}`,
    as: 'owner',
    body: '{"status":"cancelled"}',
  })
  const d = await call(w, { method: 'DELETE', path: `/api/v1/forms/${deleted}`, as: 'owner' })
  const deliveries = await call(w, { method: 'GET', path: `/api/v1/forms/${hookedCompleted}/deliveries`, as: 'owner' })
  expect([r1.status, r2.status, c.status, d.status, deliveries.status]).toEqual([201, 201, 200, 204, 200])
  expect(deliveries.body).toHaveLength(1)
  w.fx = {
    active,
    hooked,
    completed,
    completedResponse: r1.body.id,
    hookedCompleted,
    hookedResponse: r2.body.id,
    delivery: deliveries.body[0].id,
    cancelled,
    expired,
    deleted,
    otherForm,
  }
  await checkWorld(w)
  return w
}

async function create(w: World, body: unknown, as: 'owner' | 'other' = 'owner'): Promise<string> {
  const res = await call(w, { method: 'POST', path: '/api/v1/forms', as, body: JSON.stringify(body) })
  if (res.status !== 201) throw new Error(`fixture not created: ${res.where}`)
  return res.body.id
}

/** A fresh form of every field type, for properties that use one up. */
async function freshForm(w: World, extra: Record<string, unknown> = {}, as: 'owner' | 'other' = 'owner') {
  return create(w, { title: 'Fresh', fields: EVERY_TYPE_FIELDS, ...extra }, as)
}

const snapshotPrototypes = () => ({
  object: Object.getOwnPropertyNames(Object.prototype).sort().join(),
  array: Object.getOwnPropertyNames(Array.prototype).sort().join(),
  func: Object.getOwnPropertyNames(Function.prototype).sort().join(),
})
const PROTOTYPES = snapshotPrototypes()

/**
 * The invariants, through the API (the database read-only where the API cannot
 * show it): statuses and transitions, one response per completed form and
 * none otherwise, isolation of accounts, no form the API did not report, no
 * key or webhook secret anywhere, prototypes untouched.
 */
async function checkWorld(w: World) {
  expect(snapshotPrototypes()).toEqual(PROTOTYPES)
  for (const probe of [{}, [], Object.create(Object.prototype)] as any[]) {
    for (const name of ['polluted', 'isAdmin', 'x', 'a', 'y', 'n', 'status', 'title'])
      must(!(name in probe), `a prototype polluted with ${name}`)
  }

  const responseCounts = new Map<string, number>()
  for (const row of await w.t.sql('SELECT form_id, CAST(count(*) AS INTEGER) AS n FROM responses GROUP BY form_id')) {
    responseCounts.set(row.form_id, row.n)
  }
  const dbForms = (await w.t.sql('SELECT id, status FROM forms')) as Array<{ id: string; status: string }>
  const live = [...w.forms.values()].filter((f) => !f.deleted)
  expect(dbForms.map((f) => f.id).sort()).toEqual(live.map((f) => f.id).sort())
  for (const row of dbForms) must(STATUSES.includes(row.status as Status), `stored status ${row.status}`)
  for (const [formId, n] of responseCounts)
    must(n === 1 && w.forms.has(formId), `${n} responses stored for form ${formId}`)

  for (const form of w.forms.values()) {
    const got = await call(w, { method: 'GET', path: `/api/v1/forms/${form.id}`, as: form.account })
    if (form.deleted) {
      must(got.status === 404, `deleted form still answers: ${got.where}`)
      must(!responseCounts.has(form.id), `a deleted form keeps its response: ${form.id}`)
      continue
    }
    must(got.status === 200, `own form not readable: ${got.where}`)
    const status = got.body.status as Status
    const expected = modelStatus(w, form)
    must(status === expected, `form ${form.id} is ${status}, the model says ${expected}`)
    must(LEGAL[form.seen].includes(status), `form ${form.id} went ${form.seen} -> ${status}`)
    form.seen = status
    if (status === 'expired') must(got.body.context === null, `an expired form shows its context: ${got.where}`)
    const responses = await call(w, { method: 'GET', path: `/api/v1/forms/${form.id}/responses`, as: form.account })
    must(responses.status === 200 && Array.isArray(responses.body), `responses not listed: ${responses.where}`)
    const want = status === 'completed' ? 1 : 0
    must(responses.body.length === want, `form ${form.id} (${status}) lists ${responses.body.length} responses`)
    must(
      (responseCounts.get(form.id) ?? 0) === want,
      `form ${form.id} (${status}) has ${responseCounts.get(form.id) ?? 0} stored responses`,
    )
    // Another account (and one that never created anything) sees nothing of it.
    const stranger = form.account === 'owner' ? 'other' : 'owner'
    for (const [as, suffix] of [
      [stranger, ''],
      [stranger, '/responses'],
      ['observer', ''],
      ['observer', '/schema'],
      ['observer', '/deliveries'],
    ] as const) {
      const peek = await call(w, { method: 'GET', path: `/api/v1/forms/${form.id}${suffix}`, as })
      must(
        peek.status === 404 && peek.body?.detail === 'Form not found',
        `another account reads ${form.id}${suffix}: ${peek.where}`,
      )
    }
  }

  // Lists: each account sees exactly its own live forms; the observer none.
  for (const as of ['owner', 'other', 'observer'] as const) {
    const ids: string[] = []
    let path: string | undefined = '/api/v1/forms?limit=100'
    while (path) {
      const page: Answer = await call(w, { method: 'GET', path, as })
      must(page.status === 200 && Array.isArray(page.body), `list failed: ${page.where}`)
      ids.push(...page.body.map((f: { id: string }) => f.id))
      const link = page.headers.get('link')
      path = link ? /^<[^>]*?(\/api\/v1\/forms\?[^>]*)>; rel="next"$/.exec(link)?.[1] : undefined
      if (link) must(path, `a malformed Link header ${link}`)
    }
    const want = live
      .filter((f) => f.account === as)
      .map((f) => f.id)
      .sort()
      .reverse()
    expect(ids).toEqual(want)
  }

  // Deliveries: only for forms with a callback that ended as the delivery tells, with a payload that is JSON.
  for (const row of (await w.t.sql('SELECT form_id, event, payload FROM deliveries')) as Array<{
    form_id: string
    event: string
    payload: string
  }>) {
    const form = w.forms.get(row.form_id)
    must(
      form && !form.deleted && row.event === `form.${form.seen}`,
      `a ${row.event} delivery for form ${row.form_id}, which is ${form?.seen}`,
    )
    const payload = JSON.parse(row.payload)
    must(payload.form_id === row.form_id && payload.event === row.event, `delivery payload ${show(payload)}`)
  }

  // The event feed (CONTRACT 12): each account's holds the endings of its own forms, each once, and
  // a deleted form's form.deleted alone; an expired form's form.expired once the sweep has written it.
  for (const as of ['owner', 'other', 'observer'] as const) {
    const events: Array<{ id: string; type: string; form_id: string; payload: Record<string, unknown> }> = []
    let after = ''
    for (;;) {
      const page: Answer = await call(w, { method: 'GET', path: `/api/v1/events?limit=100${after}`, as })
      must(page.status === 200 && Array.isArray(page.body?.events), `feed failed: ${page.where}`)
      if (page.body.events.length === 0) break
      events.push(...page.body.events)
      after = `&after=${page.body.next}`
    }
    must(new Set(events.map((event) => event.id)).size === events.length, `${as}'s feed lists an event twice`)
    const ofForm = new Map<string, string[]>()
    for (const event of events) {
      must(w.forms.get(event.form_id)?.account === as, `${as}'s feed holds ${event.type} of form ${event.form_id}`)
      must(event.payload.form_id === event.form_id, `event payload ${show(event.payload)}`)
      ofForm.set(event.form_id, [...(ofForm.get(event.form_id) ?? []), event.type])
    }
    for (const form of w.forms.values()) {
      if (form.account !== as) continue
      const got = (ofForm.get(form.id) ?? []).join(' ')
      const want = form.deleted
        ? ['form.deleted']
        : form.seen === 'active'
          ? ['']
          : form.seen === 'expired'
            ? ['', 'form.expired']
            : [`form.${form.seen}`]
      must(
        want.includes(got),
        `form ${form.id} (${form.deleted ? 'deleted' : form.seen}) has the events "${got}" in ${as}'s feed`,
      )
    }
  }

  // No key and no webhook secret in any body, header or log line.
  collectHex(w, w.t.logText())
  const secrets = new Map<string, string>()
  for (const [name, key] of Object.entries(w.keys)) secrets.set(key.slice('svc_live_'.length), `the ${name} API key`)
  for (const form of w.forms.values()) {
    for (const [name, key] of Object.entries(w.keys))
      secrets.set(webhookSecret(key, form.id), `the webhook secret of ${form.id} (${name})`)
  }
  for (const row of (await w.t.sql('SELECT id, webhook_secret FROM forms WHERE webhook_secret IS NOT NULL')) as Array<{
    id: string
    webhook_secret: string
  }>) {
    secrets.set(row.webhook_secret, `the stored webhook secret of ${row.id}`)
  }
  for (const run of w.hexRuns) {
    for (const [secret, what] of secrets) must(!run.includes(secret), `${what} appeared in a response or log line`)
  }
  must(!/svc_live_[0-9a-f]{48}/.test(w.t.logText()), 'an API key in the logs')
}

/** FUZZ_STATS=1 prints, after each property, how often each route answered each status. */
const STATS = process.env.FUZZ_STATS ? new Map<string, number>() : undefined

/** One fast-check property over a world, then the invariants. */
async function holds<T>(w: World, arb: fc.Arbitrary<T>, factor: number, predicate: (value: T) => Promise<void>) {
  STATS?.clear()
  try {
    await fc.assert(fc.asyncProperty(arb, predicate), settings(factor))
  } finally {
    if (STATS)
      console.log(
        [...STATS]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([k, n]) => `  ${String(n).padStart(5)}  ${k}`)
          .join('\n'),
      )
  }
  await checkWorld(w)
}

const errorPaths = (res: Answer): string[] =>
  Array.isArray(res.body?.errors) ? res.body.errors.map((e: { path: string }) => e.path) : []
const names = (paths: string[], want: string) => paths.some((p) => p === want || p.startsWith(`${want}/`))

// ---------------------------------------------------------------- POST /api/v1/forms

describe(named('POST /api/v1/forms'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  test(
    named('a valid body with hostile content is created and returned exactly'),
    async () => {
      await holds(
        w,
        fc.tuple(validCreate, fc.constantFrom(...CONTENT_TYPES.slice(0, 8), undefined)),
        1,
        async ([spec, contentType]) => {
          const text = jsonText(spec.body)
          const res = await call(w, {
            method: 'POST',
            path: '/api/v1/forms',
            as: 'owner',
            body: text,
            headers: contentType === undefined ? {} : { 'content-type': contentType },
          })
          must(res.status === 201, `a valid body refused: ${res.where} body ${show(text, 2000)}`)
          const sent = parsed(spec.body) as Record<string, any>
          const got = await call(w, { method: 'GET', path: `/api/v1/forms/${res.body.id}`, as: 'owner' })
          must(got.status === 200, got.where)
          const form = got.body
          must(form.title === sent.title.toWellFormed(), `title ${show(sent.title)} came back as ${show(form.title)}`)
          must(
            form.description === (sent.description == null ? null : sent.description.toWellFormed()),
            `description ${show(sent.description)} came back as ${show(form.description)}`,
          )
          must(
            JSON.stringify(res.body.context) === JSON.stringify(sent.context ?? null),
            `context came back as ${show(res.body.context)} for ${show(sent.context)}`,
          )
          must(JSON.stringify(form.context) === JSON.stringify(sent.context ?? null), 'context differs on GET')
          must(
            JSON.stringify(form.settings) === JSON.stringify(sent.settings ?? {}),
            `settings came back as ${show(form.settings)}`,
          )
          must(
            JSON.stringify(form.callback_metadata) === JSON.stringify(sent.callback_metadata ?? {}),
            `callback_metadata came back as ${show(form.callback_metadata)}`,
          )
          must(form.callback_url === (sent.callback_url ?? null), 'callback_url differs')
          must(!('webhook_secret' in form) && !('webhook_secret' in res.body), 'the webhook secret is in a response')
          must(
            form.fields.length === sent.fields.length && form.fields_count === sent.fields.length,
            'fields count differs',
          )
          sent.fields.forEach((f: any, i: number) => {
            const g = form.fields[i]
            must(g.key === f.key && g.type === f.type && g.label === f.label, `field ${i} came back as ${show(g)}`)
            must(
              g.description === (f.description ?? null) && g.required === (f.required ?? false),
              `field ${i} description/required differ`,
            )
            must(
              JSON.stringify(g.config) === JSON.stringify(f.config ?? {}),
              `field ${i} config came back as ${show(g.config)} for ${show(f.config)}`,
            )
          })
          const created = Date.parse(`${form.created_at}Z`)
          const duration = sent.expires_in === null ? null : (sent.expires_in ?? '48h')
          const ms =
            duration === null
              ? null
              : Number(duration.slice(0, -1)) *
                { m: 60_000, h: 3_600_000, d: DAY_MS }[duration.at(-1) as 'm' | 'h' | 'd']
          must(
            form.expires_at === (ms === null ? null : new Date(created + ms).toISOString().slice(0, -1)),
            `expires_at ${form.expires_at} for expires_in ${sent.expires_in}`,
          )
          // The schema of the answers names every field.
          const schema = await call(w, { method: 'GET', path: `/api/v1/forms/${res.body.id}/schema`, as: 'owner' })
          must(
            schema.status === 200 &&
              JSON.stringify(Object.keys(schema.body.properties)) ===
                JSON.stringify(sent.fields.map((f: any) => f.key)),
            `schema: ${schema.where}`,
          )
          // The page shows what the API client wrote, escaped: title, labels, option values.
          const page = await call(w, { method: 'GET', path: `/f/${res.body.id}` })
          must(page.status === 200, page.where)
          const tags = tagsOf(page.text)
          const h1 = /<h1[^>]*>([\s\S]*?)<\/h1>/.exec(page.text)?.[1]
          must(
            h1 !== undefined && decodeHtml(h1) === form.title.toWellFormed(),
            `the page's h1 ${show(h1)} for title ${show(form.title)}`,
          )
          for (const f of sent.fields) {
            // A memorable date is three boxes named after the field (`_day_<key>`, ...).
            const names =
              f.type === 'date' && f.config?.input === 'memorable'
                ? ['day', 'month', 'year'].map((part) => `_${part}_${f.key}`)
                : [f.key]
            for (const name of names)
              must(
                tags.some((tag) => tag.attrs.get('name') === name),
                `no control named ${show(name)} on the page`,
              )
            if (f.type === 'select') {
              // A drop-down's options, or the radios (or checkboxes) named after the field.
              const shown = tags
                .filter((tag) => tag.name === 'option' || (tag.name === 'input' && tag.attrs.get('name') === f.key))
                .map((tag) => tag.attrs.get('value'))
              for (const o of f.config.options) {
                const value = typeof o === 'string' ? o : o.value
                must(shown.includes(value.toWellFormed()), `option ${show(value)} is not on the page`)
              }
            }
          }
        },
      )
    },
    TIMEOUT,
  )

  test(
    named('one wrong, missing or unknown key anywhere is a 422 naming it'),
    async () => {
      await holds(w, fc.tuple(validCreate, mutation), 1.5, async ([spec, m]) => {
        const { body, path } = mutate(spec, spec.body, m)
        const res = await call(w, { method: 'POST', path: '/api/v1/forms', as: 'owner', body: jsonText(body) })
        must(
          res.status === 422,
          `an invalid body (${m.kind} at ${path}) was not refused: ${res.where} body ${show(jsonText(body), 1500)}`,
        )
        must(names(errorPaths(res), path), `${m.kind}: errors ${show(errorPaths(res))} do not name ${path}`)
      })
    },
    TIMEOUT,
  )

  test(
    named('several mutations, garbage bodies and header noise are refused, never a 5xx'),
    async () => {
      const body = fc.oneof(
        fc.tuple(validCreate, fc.array(mutation, { minLength: 2, maxLength: 5 })).map(([spec, ms]) => ({
          text: jsonText(ms.reduce((b, m) => mutate(spec, b, m).body, spec.body)),
          paths: [] as string[],
        })),
        garbageBody.map((text) => ({ text, paths: [] as string[] })),
        fc
          .tuple(validCreate, deepRaw())
          .map(([spec, deep]) => ({ text: jsonText(spec.body.with('fields', deep)), paths: ['/fields'] })),
      )
      await holds(w, fc.tuple(body, extraHeaders), 1.5, async ([b, headers]) => {
        const { 'idempotency-key': _ignored, ...rest } = headers
        const res = await call(w, { method: 'POST', path: '/api/v1/forms', as: 'owner', body: b.text, headers: rest })
        const declared = Number(rest['content-length'])
        if (declared > 1024 * 1024) must(res.status === 413, `a declared length of ${declared} bytes: ${res.where}`)
        else must(res.status === 422, `not refused: ${res.where}`)
        if (res.status === 422)
          for (const p of b.paths) must(names(errorPaths(res), p), `errors do not name ${p}: ${res.where}`)
      })
    },
    TIMEOUT,
  )

  test(
    named('context of exactly 65,536 bytes is accepted, 65,537 refused at /context'),
    async () => {
      const PAD = 'zz-pad\u0000'
      await holds(w, fc.tuple(storableObject, hostile(200), fc.boolean()), 0.3, async ([base, text, over]) => {
        const core = base.without(PAD).with('hostile', text)
        const size = Buffer.byteLength(compact(core))
        const room = 65_536 - size - Buffer.byteLength(`,${JSON.stringify(PAD)}:""`)
        must(room >= 0, `generated context too large: ${size}`)
        const context = core.with(PAD, 'a'.repeat(room + (over ? 1 : 0)))
        must(Buffer.byteLength(compact(context)) === 65_536 + (over ? 1 : 0), 'the test built the wrong size')
        const body = new Obj([
          ['title', 'Sized'],
          [
            'fields',
            [
              new Obj([
                ['key', 'a'],
                ['type', 'text'],
                ['label', 'A'],
              ]),
            ],
          ],
          ['context', context],
        ])
        const res = await call(w, { method: 'POST', path: '/api/v1/forms', as: 'owner', body: jsonText(body) })
        if (over) {
          must(res.status === 422 && JSON.stringify(errorPaths(res)) === '["/context"]', `65,537 bytes: ${res.where}`)
        } else {
          must(res.status === 201, `65,536 bytes refused: ${res.where}`)
          must(JSON.stringify(res.body.context) === compact(context), 'the context came back different')
          const got = await call(w, { method: 'GET', path: `/api/v1/forms/${res.body.id}`, as: 'owner' })
          must(Buffer.byteLength(JSON.stringify(got.body.context)) === 65_536, 'the stored context changed size')
        }
      })
    },
    TIMEOUT,
  )

  test(
    named('nesting: 100 levels of context are kept, 101..5000 refused at /context'),
    async () => {
      await holds(
        w,
        fc.tuple(
          fc.integer({ min: 50, max: 5000 }),
          fc.constantFrom('array', 'object', 'proto', 'mixed') as fc.Arbitrary<'array' | 'object' | 'proto' | 'mixed'>,
        ),
        0.3,
        async ([depth, kind]) => {
          // The context object itself is one level.
          const context = new Obj([['d', new Raw(deepText(depth - 1, kind))]])
          const body = new Obj([
            ['title', 'Deep'],
            [
              'fields',
              [
                new Obj([
                  ['key', 'a'],
                  ['type', 'text'],
                  ['label', 'A'],
                ]),
              ],
            ],
            ['context', context],
          ])
          const levels = nesting(parsed(context))
          const res = await call(w, { method: 'POST', path: '/api/v1/forms', as: 'owner', body: jsonText(body) })
          if (levels <= 100) {
            must(
              res.status === 201 && JSON.stringify(res.body.context) === compact(context),
              `${levels} levels refused or changed: ${res.where}`,
            )
          } else {
            must(res.status === 422 && names(errorPaths(res), '/context'), `${levels} levels: ${res.where}`)
          }
        },
      )
    },
    TIMEOUT,
  )

  test(
    named('Idempotency-Key: replays, conflicts and garbage keys'),
    async () => {
      const IDEM = /^[\x21-\x7e]{1,255}$/
      const remembered = {
        owner: [] as Array<{ key: string; text: string; id: string; canonical: string }>,
        other: [] as Array<{ key: string; text: string; id: string; canonical: string }>,
      }
      const canonical = (v: unknown): string =>
        Array.isArray(v)
          ? `[${v.map(canonical).join(',')}]`
          : typeof v === 'object' && v !== null
            ? `{${Object.keys(v)
                .sort()
                .map((k) => `${JSON.stringify(k)}:${canonical((v as any)[k])}`)
                .join(',')}}`
            : JSON.stringify(v)
      const scenario = fc.record({
        spec: validCreate,
        key: fc.oneof(
          fc.stringMatching(/^[\x21-\x7e]{1,40}$/),
          hostileHeader,
          fc.constantFrom('', ' ', 'k'.repeat(255), 'k'.repeat(256), ' padded '),
        ),
        reuse: fc.constantFrom('fresh', 'same', 'reordered', 'different'),
        pick: fc.nat(),
        as: fc.constantFrom('owner', 'owner', 'other') as fc.Arbitrary<'owner' | 'other'>,
      })
      await holds(w, scenario, 0.8, async (s) => {
        let key = s.key
        let text = jsonText(s.spec.body)
        const mine = remembered[s.as]
        const earlier = mine.length > 0 && s.reuse !== 'fresh' ? nth(mine, s.pick) : undefined
        if (earlier) {
          key = earlier.key
          if (s.reuse === 'same') text = earlier.text
          if (s.reuse === 'reordered')
            text = ` ${JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(earlier.text)).reverse()), null, 2)}\n`
        }
        const normalized = new Headers({ 'idempotency-key': key }).get('idempotency-key')!
        const res = await call(w, {
          method: 'POST',
          path: '/api/v1/forms',
          as: s.as,
          body: text,
          headers: { 'idempotency-key': key },
        })
        if (!IDEM.test(normalized)) {
          must(res.status === 422, `a bad Idempotency-Key ${show(normalized)} accepted: ${res.where}`)
          return
        }
        const match = mine.find((r) => r.key === normalized)
        if (match && match.canonical === canonical(JSON.parse(text))) {
          must(
            res.status === 201 && res.body.id === match.id && res.headers.get('idempotent-replayed') === 'true',
            `no replay: ${res.where}`,
          )
        } else if (match) {
          must(res.status === 422, `the same key with another body: ${res.where}`)
        } else {
          must(res.status === 201 && res.headers.get('idempotent-replayed') === null, `a new key: ${res.where}`)
          mine.push({ key: normalized, text, id: res.body.id, canonical: canonical(JSON.parse(text)) })
        }
      })
    },
    TIMEOUT,
  )

  test(
    named('strings with lone surrogates are refused (they could not be stored as they are)'),
    async () => {
      const withSurrogate = fc
        .tuple(bounded(0, 100), fc.constantFrom('\ud800', '\udfff', '\udbff', 'a\ud83d'), bounded(0, 100))
        .map(([a, s, b]) => `${a}${s}${b}`.slice(0, 255))
      await holds(
        w,
        fc.tuple(withSurrogate, fc.constantFrom('title', 'description', 'label', 'option')),
        0.2,
        async ([text, where]) => {
          const field =
            where === 'option'
              ? { key: 'pick', type: 'select', label: 'Pick', config: { options: [text, 'plain'] } }
              : { key: 'a', type: 'text', label: where === 'label' ? text : 'A' }
          const body = {
            title: where === 'title' ? text : 'T',
            description: where === 'description' ? text : null,
            fields: [field],
          }
          const res = await call(w, { method: 'POST', path: '/api/v1/forms', as: 'owner', body: JSON.stringify(body) })
          must(res.status === 422, `${where} ${show(text)} holds a lone surrogate and was not refused: ${res.where}`)
          must(
            res.body.errors.some((e: { message: string }) => /surrogate/.test(e.message)),
            `the 422 does not say why: ${res.where}`,
          )
        },
      )
    },
    TIMEOUT,
  )
})

// ---------------------------------------------------------------- PATCH /api/v1/forms/<id>

type PatchBody =
  | { kind: 'invalid'; text: string }
  | {
      kind: 'valid'
      text: string
      cancel: boolean
      expires?: { kind: 'future'; ms: number } | { kind: 'null' } | { kind: 'past' } | { kind: 'bad' }
    }

function formatWithOffset(ms: number, offsetMinutes: number, compactOffset: boolean): string {
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, -1)
  const sign = offsetMinutes >= 0 ? '+' : '-'
  const abs = Math.abs(offsetMinutes)
  const hh = String(Math.floor(abs / 60)).padStart(2, '0')
  const mm = String(abs % 60).padStart(2, '0')
  return `${local}${sign}${hh}${compactOffset ? '' : ':'}${mm}`
}

describe(named('PATCH /api/v1/forms/<id>'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  const BAD_EXPIRES = [
    '',
    'tomorrow',
    '2026-02-30T00:00:00',
    '2026-13-01T00:00:00Z',
    '2026-01-01T24:00:00',
    '2026-01-01T00:60:00',
    '2026-01-01T00:00:60',
    '+275760-09-13T00:00:00Z',
    '10000-01-01T00:00:00Z',
    '9999-12-31T23:59:59.999-01:00',
    '2026-01-01',
    '2099-01-01T00:00:00+24:00',
    '2099-01-01T00:00:00+05:60',
    '1e400',
    'NaN',
    '2099-01-01T00:00:00ZZ',
    ' 2099-01-01T00:00:00Z',
    '2099-01-01T00:00:00Z ',
    '2099-W01',
    '2099-001T00:00:00',
    '2099-01-01T00:00:00.Z',
    '२०९९-01-01T00:00:00Z',
    '2099-01-01T00:00:00\u0000',
  ]
  const patchBody = (now: number): fc.Arbitrary<PatchBody> => {
    const future = fc
      .tuple(
        fc.integer({ min: 2 * DAY_MS, max: 50 * 365 * DAY_MS }),
        fc.nat(7),
        fc.constantFrom(0, 330, -480, 60, -720, 840),
      )
      .map(([delta, shape, offset]): [J, number] => {
        let ms = now + delta
        if (shape === 4) ms -= ms % 1000
        if (shape === 5) ms -= ms % 60_000
        const iso = new Date(ms).toISOString()
        const text = [
          iso,
          iso.slice(0, -1),
          iso.replace('T', 't').replace('Z', 'z'),
          iso.replace('T', ' '),
          iso.replace('.000Z', 'Z'),
          iso.slice(0, 16),
          `${iso.slice(0, -1)}123456`,
          formatWithOffset(ms, offset, shape % 2 === 0),
        ][shape]!
        return [text, ms]
      })
    const past = fc
      .tuple(fc.integer({ min: 0, max: 400 * 365 * DAY_MS }), fc.boolean())
      .map(([delta, zone]) => new Date(now - delta).toISOString().slice(0, zone ? undefined : -1))
    const wrongStatus = fc.oneof(
      fc.constantFrom<J>(
        'CANCELLED',
        'Cancelled',
        'completed',
        'active',
        'expired',
        'deleted',
        '',
        ' cancelled',
        'cancelled ',
        null,
        1,
        true,
        [],
        new Obj([]),
        ['cancelled'],
      ),
      hostile(10),
    )
    const wrongExpires = fc.constantFrom<J>(0, true, [], new Obj([]), new Raw('1e400'), 1_800_000_000_000)
    const proto = fc.constantFrom(...PROTO_KEYS)
    return fc.oneof(
      {
        weight: 8,
        arbitrary: fc
          .record({
            cancel: fc.boolean(),
            expires: fc.oneof(
              { weight: 2, arbitrary: fc.constant(undefined) },
              { weight: 3, arbitrary: future.map((f) => ({ kind: 'future' as const, f })) },
              fc.constant({ kind: 'null' as const }),
              past.map((p) => ({ kind: 'past' as const, p })),
              fc.constantFrom(...BAD_EXPIRES).map((b) => ({ kind: 'bad' as const, b })),
            ),
          })
          .map(({ cancel, expires }): PatchBody => {
            const entries: Array<[string, J]> = []
            if (cancel) entries.push(['status', 'cancelled'])
            if (expires?.kind === 'future') entries.push(['expires_at', expires.f[0]])
            if (expires?.kind === 'null') entries.push(['expires_at', null])
            if (expires?.kind === 'past') entries.push(['expires_at', expires.p])
            if (expires?.kind === 'bad') entries.push(['expires_at', expires.b])
            const model =
              expires === undefined
                ? undefined
                : expires.kind === 'future'
                  ? { kind: 'future' as const, ms: expires.f[1] }
                  : { kind: expires.kind }
            return { kind: 'valid', text: jsonText(new Obj(entries)), cancel, expires: model }
          }),
      },
      fc.tuple(wrongStatus, fc.boolean()).map(
        ([status, both]): PatchBody => ({
          kind: 'invalid',
          text: jsonText(
            new Obj([['status', status], ...(both ? ([['expires_at', null]] as Array<[string, J]>) : [])]),
          ),
        }),
      ),
      wrongExpires.map((e): PatchBody => ({ kind: 'invalid', text: jsonText(new Obj([['expires_at', e]])) })),
      fc
        .tuple(
          fc.oneof(
            proto,
            extraKey.filter((k) => k !== 'status' && k !== 'expires_at'),
          ),
          anyJson,
        )
        .map(
          ([k, v]): PatchBody => ({
            kind: 'invalid',
            text: jsonText(
              new Obj([
                ['status', 'cancelled'],
                [k, v],
              ]),
            ),
          }),
        ),
      fc
        .tuple(proto, fc.constant(new Obj([['status', 'cancelled']])))
        .map(([k, v]): PatchBody => ({ kind: 'invalid', text: jsonText(new Obj([[k, v]])) })),
      garbageBody.map(
        (text): PatchBody => ({
          kind: 'invalid',
          text: typeof text === 'string' ? text : new TextDecoder().decode(text),
        }),
      ),
    )
  }

  test(
    named('PATCH follows the state machine exactly'),
    async () => {
      const now = w.t.clock()
      const scenario = fc.record({
        target: fc.constantFrom(
          'active',
          'active',
          'active',
          'cancelled',
          'completed',
          'expired',
          'deleted',
          'other',
          'random',
        ),
        shape: fc.constantFrom(...ID_SHAPES),
        salt: fc.nat(),
        random: strangeId,
        // Expiry values are built against the clock at the start; the clock moves at most a few hours here.
        steps: fc.array(patchBody(now), { minLength: 1, maxLength: 3 }),
        contentType: fc.constantFrom(
          undefined,
          'application/json',
          'text/plain',
          'application/x-www-form-urlencoded',
          'garbage/\u00ff',
        ),
      })
      await holds(w, scenario, 1.5, async (s) => {
        let id: string | undefined
        if (s.target !== 'random') {
          id = await freshForm(
            w,
            s.target === 'expired' ? { expires_in: '1m', context: { c: 1 } } : { context: { c: 1 } },
            s.target === 'other' ? 'other' : 'owner',
          )
          if (s.target === 'cancelled')
            await call(w, { method: 'PATCH', path: `/api/v1/forms/${id}`, as: 'owner', body: '{"status":"cancelled"}' })
          if (s.target === 'completed')
            await call(w, {
              method: 'POST',
              path: `/f/${id}`,
              body: JSON.stringify(EVERY_TYPE_ANSWERS),
              headers: { 'content-type': 'application/json' },
            })
          if (s.target === 'expired') w.t.clock.advance(61_000)
          if (s.target === 'deleted') await call(w, { method: 'DELETE', path: `/api/v1/forms/${id}`, as: 'owner' })
        }
        const path = `/api/v1/forms/${id === undefined ? s.random : shapeId(id, s.shape, s.salt)}`
        const form = id !== undefined && resolvesAs(s.shape) && s.target !== 'other' ? w.forms.get(id) : undefined
        for (const step of s.steps) {
          const before = form && !form.deleted ? modelStatus(w, form) : undefined
          const expiresBefore = form?.expiresAt
          const res = await call(w, {
            method: 'PATCH',
            path,
            as: 'owner',
            body: step.text,
            headers: s.contentType ? { 'content-type': s.contentType } : {},
          })
          let want: number
          if (step.kind === 'invalid' || step.expires?.kind === 'past' || step.expires?.kind === 'bad') want = 422
          else if (before === undefined) want = 404
          else if (step.cancel && (before === 'completed' || before === 'expired')) want = 409
          else if (step.expires !== undefined && before !== 'active') want = 409
          else want = 200
          must(
            res.status === want,
            `PATCH ${show(step.text)} on a ${before ?? 'missing'} form: want ${want}, got ${res.where}`,
          )
          if (want === 404) must(res.body.detail === 'Form not found', res.where)
          if (want !== 200 || step.kind !== 'valid') continue
          const status = step.cancel && before === 'active' ? 'cancelled' : before
          must(res.body.status === status, `status ${res.body.status}, want ${status}`)
          const expiresAt =
            step.expires?.kind === 'future' ? step.expires.ms : step.expires?.kind === 'null' ? null : expiresBefore
          must(
            res.body.expires_at === (expiresAt == null ? null : new Date(expiresAt).toISOString().slice(0, -1)),
            `expires_at ${res.body.expires_at}, want ${expiresAt}`,
          )
          must(
            JSON.stringify(res.body.context) === (status === 'expired' ? 'null' : '{"c":1}'),
            `context ${show(res.body.context)} of a ${status} form`,
          )
        }
      })
    },
    TIMEOUT,
  )
})

// ---------------------------------------------------------------- GET /api/v1/forms (list)

describe(named('GET /api/v1/forms'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
    for (let i = 0; i < 25; i++) await freshForm(w, { expires_in: i % 5 === 0 ? '1m' : '48h' })
    w.t.clock.advance(61_000)
    for (let i = 0; i < 5; i++) await freshForm(w, {}, 'other')
  })
  afterAll(() => w.t.close())

  test(
    named("any query string: 422 for each invalid parameter, else exactly the model's page"),
    async () => {
      const limit = fc.oneof(
        { weight: 1, arbitrary: fc.constant(undefined) },
        {
          weight: 4,
          arbitrary: fc.integer({ min: 1, max: 100 }).map((n) => ({ v: String(n), ok: true as boolean | undefined })),
        },
        fc
          .constantFrom(
            '0',
            '101',
            '-1',
            '1.5',
            'abc',
            '',
            '1e1',
            'NaN',
            'Infinity',
            '12345678901234567890',
            '0x10',
            ' ',
            '-0',
            '١٠',
            '5 5',
            '99999999999999999999999',
          )
          .map((v) => ({ v, ok: false as boolean | undefined })),
        fc.constantFrom('+5', '05', '007', '+100').map((v) => ({ v, ok: undefined as boolean | undefined })),
        hostile(8)
          .filter((s) => !/^[+-]?\d+$/.test(s))
          .map((v) => ({ v, ok: false as boolean | undefined })),
      )
      const status = fc.oneof(
        { weight: 2, arbitrary: fc.constant(undefined) },
        { weight: 4, arbitrary: fc.constantFrom(...STATUSES).map((v) => ({ v, ok: true })) },
        fc
          .constantFrom('ACTIVE', 'Active', '', 'deleted', 'active ', 'active,completed', '__proto__')
          .map((v) => ({ v, ok: false })),
        hostile(8)
          .filter((s) => !(STATUSES as readonly string[]).includes(s))
          .map((v) => ({ v, ok: false })),
      )
      const cursorArb = fc.oneof(
        { weight: 3, arbitrary: fc.constant(undefined) },
        fc.tuple(fc.nat(), fc.boolean()).map(([n, lower]) => ({ pick: n, lower, v: '', ok: true })),
        fc.ulid().map((v) => ({ pick: -1, lower: false, v, ok: true })),
        fc
          .constantFrom('00000000000000000000000000', '7ZZZZZZZZZZZZZZZZZZZZZZZZZ')
          .map((v) => ({ pick: -1, lower: false, v, ok: true })),
        fc
          .constantFrom(
            '8ZZZZZZZZZZZZZZZZZZZZZZZZZ',
            'OOOOOOOOOOOOOOOOOOOOOOOOOO',
            '01ARZ3NDEKTSV4RRFFQ69G5FA',
            '01ARZ3NDEKTSV4RRFFQ69G5FAVV',
            '',
            'null',
          )
          .map((v) => ({ pick: -1, lower: false, v, ok: false })),
        hostile(30)
          .filter((s) => !/^[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{25}$/.test(s))
          .map((v) => ({ pick: -1, lower: false, v, ok: false })),
      )
      const extras = fc.array(
        fc
          .tuple(
            fc.oneof(
              fc.constantFrom(
                '__proto__',
                'constructor',
                'prototype',
                '__proto__[polluted]',
                'constructor[prototype][polluted]',
                'a[b]',
                'wait',
                'LIMIT',
                'Status',
              ),
              hostile(8),
            ),
            hostile(8),
          )
          .filter(([k]) => !/^(limit|status|cursor)/.test(k.toWellFormed())),
        { maxLength: 4 },
      )
      const scenario = fc.record({
        limit,
        status,
        cursor: cursorArb,
        extras,
        as: fc.constantFrom('owner', 'owner', 'other', 'observer') as fc.Arbitrary<'owner' | 'other' | 'observer'>,
        follow: fc.boolean(),
      })
      await holds(w, scenario, 2, async (s) => {
        const mine = [...w.forms.values()]
          .filter((f) => !f.deleted && f.account === s.as)
          .sort((a, b) => (a.id < b.id ? 1 : -1))
        const all = [...w.forms.keys()].sort()
        let cursor = s.cursor?.v
        if (s.cursor && s.cursor.pick >= 0) cursor = nth(all, s.cursor.pick)
        if (s.cursor?.lower && cursor) cursor = cursor.toLowerCase()
        const params: Array<[string, string]> = [...s.extras]
        if (s.limit) params.push(['limit', s.limit.v])
        if (s.status) params.push(['status', s.status.v])
        if (cursor !== undefined) params.push(['cursor', cursor])
        const query = params
          .map(([k, v]) => `${encodeURIComponent(k.toWellFormed())}=${encodeURIComponent(v.toWellFormed())}`)
          .join('&')
        const res = await call(w, { method: 'GET', path: `/api/v1/forms?${query}`, as: s.as })
        const invalid = [
          s.limit?.ok === false && '/limit',
          s.status?.ok === false && '/status',
          s.cursor?.ok === false && '/cursor',
        ].filter((p): p is string => typeof p === 'string')
        if (invalid.length > 0) {
          must(res.status === 422, `invalid ${invalid.join(', ')}: ${res.where}`)
          for (const p of invalid) must(errorPaths(res).includes(p), `errors do not name ${p}: ${res.where}`)
          return
        }
        if (s.limit?.ok === undefined && s.limit !== undefined && res.status === 422) return
        must(res.status === 200 && Array.isArray(res.body), `a valid list query failed: ${res.where}`)
        const size = s.limit ? Number(s.limit.v) : 20
        const filtered = mine.filter(
          (f) =>
            (s.status ? modelStatus(w, f) === s.status.v : true) &&
            (cursor === undefined || f.id < cursor.toUpperCase()),
        )
        const want = filtered.slice(0, size).map((f) => f.id)
        expect(res.body.map((f: { id: string }) => f.id)).toEqual(want)
        for (const item of res.body) {
          must(
            JSON.stringify(Object.keys(item)) ===
              '["id","title","description","url","status","fields_count","expires_at","created_at"]',
            `list item keys ${Object.keys(item)} (context must never be in a list)`,
          )
          must(item.status === modelStatus(w, w.forms.get(item.id)!), `listed status ${item.status}`)
        }
        const link = res.headers.get('link')
        must(
          Boolean(link) === filtered.length > size,
          `Link header ${show(link)} with ${filtered.length} forms and limit ${size}`,
        )
        if (link && s.follow) {
          const next = /^<http:\/\/intake\.test(\/api\/v1\/forms\?[^>]*)>; rel="next"$/.exec(link)?.[1]
          must(next, `Link ${link}`)
          const page = await call(w, { method: 'GET', path: next, as: s.as })
          expect(page.body.map((f: { id: string }) => f.id)).toEqual(filtered.slice(size, size * 2).map((f) => f.id))
        }
      })
    },
    TIMEOUT,
  )
})

// ---------------------------------------------------------------- GET form / responses / schema / deliveries with random ids

describe(named('GET /api/v1/forms/<id>[/schema|/responses|/deliveries] with any id'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  const WAITS_INVALID = [
    '0',
    '61',
    '-1',
    'abc',
    '1.5',
    '',
    '1e1',
    '99999999999999999999',
    ' 1',
    'NaN',
    'Infinity',
    '0x1',
    '１',
  ]
  const WAITS_VALID = ['1', '01', '60']

  test(
    named('the owner reads its own forms under any spelling of the id; nothing else resolves'),
    async () => {
      const scenario = fc.record({
        target: fc.constantFrom(
          'active',
          'hooked',
          'completed',
          'hookedCompleted',
          'cancelled',
          'expired',
          'deleted',
          'otherForm',
          'random',
          'random',
        ),
        shape: fc.constantFrom(...ID_SHAPES),
        salt: fc.nat(),
        random: strangeId,
        endpoint: fc.constantFrom('form', 'schema', 'responses', 'response', 'file', 'deliveries', 'redeliver'),
        sub: fc.oneof(fc.constantFrom('own', 'own', 'lower'), strangeId),
        fileKey: fc.oneof(fc.constantFrom('photo', 'name', '__proto__', 'constructor', '%2F', '%00'), strangeId),
        wait: opt(
          fc.oneof(
            fc.constantFrom(...WAITS_INVALID).map((v) => ({ v, ok: false })),
            fc.constantFrom(...WAITS_VALID).map((v) => ({ v, ok: true })),
          ),
        ),
        extraQuery: fc.array(
          fc.tuple(fc.constantFrom('__proto__', 'constructor', 'x', 'prototype[polluted]'), hostile(6)),
          { maxLength: 2 },
        ),
        as: fc.constantFrom('owner', 'owner', 'other') as fc.Arbitrary<'owner' | 'other'>,
        headers: fc.record(
          { accept: fc.constantFrom(...ACCEPTS), 'content-type': fc.constantFrom(...CONTENT_TYPES) },
          { requiredKeys: [] },
        ),
      })
      await holds(w, scenario, 2.5, async (s) => {
        const fx = w.fx
        const id =
          s.target === 'random'
            ? undefined
            : s.target === 'active'
              ? nth(fx.active, s.salt)
              : (fx[s.target as keyof World['fx']] as string)
        const segment = id === undefined ? s.random : shapeId(id, s.shape, s.salt)
        const form = id !== undefined && resolvesAs(s.shape) ? w.forms.get(id) : undefined
        const resolves = form !== undefined && !form.deleted && form.account === s.as
        const responseId =
          id === fx.completed ? fx.completedResponse : id === fx.hookedCompleted ? fx.hookedResponse : undefined
        const sub =
          s.sub === 'own'
            ? s.endpoint === 'redeliver'
              ? fx.delivery
              : responseId
            : s.sub === 'lower'
              ? (s.endpoint === 'redeliver' ? fx.delivery : responseId)?.toLowerCase()
              : s.sub
        const subResolves =
          (s.sub === 'own' || s.sub === 'lower') &&
          sub !== undefined &&
          (s.endpoint !== 'redeliver' || id === fx.hookedCompleted)
        const query = new URLSearchParams(s.extraQuery.map(([k, v]): [string, string] => [k, v.toWellFormed()]))
        // A valid wait on an active, unanswered form would hold the request: such a wait is left out.
        const blocks = resolves && form !== undefined && modelStatus(w, form) === 'active'
        if (s.endpoint === 'responses' && s.wait && !(s.wait.ok && blocks)) query.set('wait', s.wait.v)
        const base = `/api/v1/forms/${segment}`
        const path = {
          form: base,
          schema: `${base}/schema`,
          responses: `${base}/responses`,
          response: `${base}/responses/${sub ?? s.random}`,
          file: `${base}/responses/${sub ?? s.random}/files/${s.fileKey}`,
          deliveries: `${base}/deliveries`,
          redeliver: `${base}/deliveries/${sub ?? s.random}/redeliver`,
        }[s.endpoint]
        const res = await call(w, {
          method: s.endpoint === 'redeliver' ? 'POST' : 'GET',
          path: `${path}?${query}`,
          as: s.as,
          headers: s.headers,
        })
        if (s.endpoint === 'responses' && query.has('wait') && s.wait?.ok === false) {
          must(res.status === 422 && errorPaths(res).includes('/wait'), `wait=${s.wait.v}: ${res.where}`)
          return
        }
        if (!resolves) {
          must(res.status === 404 && res.body.detail === 'Form not found', `should be Form not found: ${res.where}`)
          return
        }
        const status = modelStatus(w, form)
        switch (s.endpoint) {
          case 'form':
            must(res.status === 200 && res.body.id === id && res.body.status === status, res.where)
            break
          case 'schema':
            must(
              res.status === 200 &&
                res.body.$schema === 'https://json-schema.org/draft/2020-12/schema' &&
                res.body.additionalProperties === false,
              res.where,
            )
            break
          case 'responses':
            must(
              res.status === 200 && Array.isArray(res.body) && res.body.length === (status === 'completed' ? 1 : 0),
              res.where,
            )
            if (res.body.length === 1) must(res.body[0].id === responseId && res.body[0].form_id === id, res.where)
            break
          case 'response':
            if (subResolves && responseId)
              must(
                res.status === 200 &&
                  res.body.id === responseId &&
                  res.body.form_id === id &&
                  API_TIME.test(res.body.submitted_at),
                res.where,
              )
            else must(res.status === 404 && res.body.detail === 'Response not found', res.where)
            break
          case 'file':
            must(res.status === 404, `no file was uploaded: ${res.where}`)
            break
          case 'deliveries':
            must(
              res.status === 200 && Array.isArray(res.body) && res.body.length === (id === fx.hookedCompleted ? 1 : 0),
              res.where,
            )
            for (const d of res.body)
              must(d.status === 'pending' && d.event === 'form.completed' && d.attempts === 0, `delivery ${show(d)}`)
            break
          case 'redeliver':
            // The background loop is not running: the delivery stays pending, and a pending one is 409.
            if (subResolves) must(res.status === 409, res.where)
            else must(res.status === 404 && res.body.detail === 'Delivery not found', res.where)
            break
        }
      })
    },
    TIMEOUT,
  )
})

// ---------------------------------------------------------------- POST /f/<id> with JSON

const NOT_JSON = Symbol('not JSON')
/** Text nested deeper than this is refused before it is parsed (docs/agents.md "Errors"). */
const TEXT_DEPTH_LIMIT = 1000
/**
 * The body as a JSON reader sees it: UTF-8 (a BOM dropped), then JSON;
 * NOT_JSON when it is neither, or nests too deep to be read.
 */
function readsAsJson(body: string | Uint8Array): unknown {
  try {
    const text = typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: true }).decode(body)
    const value = JSON.parse(text.replace(/^\ufeff/, ''))
    return depthOf(value) > TEXT_DEPTH_LIMIT ? NOT_JSON : value
  } catch {
    return NOT_JSON
  }
}

/** Levels of arrays and objects in a parsed value (a scalar has none). */
function depthOf(root: unknown): number {
  let deepest = 0
  const stack: Array<[unknown, number]> = [[root, 0]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (typeof node !== 'object' || node === null) continue
    deepest = Math.max(deepest, depth + 1)
    for (const child of Object.values(node)) stack.push([child, depth + 1])
  }
  return deepest
}

const ABSENT: unique symbol = Symbol('absent')
type Absent = typeof ABSENT
type Answerish = { value: J | Absent; ok: boolean; stored?: unknown }

/** One value per field of EVERY_TYPE_FIELDS: valid (with what must be stored) or certainly invalid. */
const ANSWERS: Record<string, fc.Arbitrary<Answerish>> = {
  name: fc.oneof(
    singleLine(1, 50)
      .filter((s) => s.trim() !== '')
      .map((s) => ({ value: s, ok: true, stored: s })),
    fc
      .constantFrom<J | Absent>(
        ABSENT,
        '',
        '   ',
        null,
        0,
        true,
        [],
        new Obj([]),
        'a\nb',
        'n'.repeat(51),
        '\u00a0\u3000',
        new Raw('1e400'),
      )
      .map((value): Answerish => ({ value, ok: false })),
    fc.tuple(bounded(1, 20), fc.constantFrom('\n', '\r')).map(([s, nl]) => ({ value: `${s}${nl}x`, ok: false })),
  ),
  notes: fc.oneof(
    bounded(0, 300).map((s) => {
      const normal = s.replace(/\r\n?/g, '\n')
      return { value: s, ok: true, stored: s.trim() === '' ? ABSENT : normal }
    }),
    fc.constantFrom<J | Absent>(ABSENT, null).map((value): Answerish => ({ value, ok: true, stored: ABSENT })),
    fc
      .constantFrom<J>(0, false, [], new Obj([]), 'n'.repeat(10_001), new Raw('-0'))
      .map((value): Answerish => ({ value, ok: false })),
  ),
  email: fc.oneof(
    fc
      .tuple(validEmail, fc.constantFrom('', ' ', '\t', '\n'))
      .map(([e, pad]) => ({ value: `${pad}${e}${pad}`, ok: true, stored: e })),
    fc
      .constantFrom<J | Absent>(ABSENT, null, '', '   ')
      .map((value): Answerish => ({ value, ok: true, stored: ABSENT })),
    fc
      .constantFrom<J>(
        'no-at',
        'a@b',
        '@x.example',
        'a@-x.example',
        `${'a'.repeat(250)}@x.example`,
        'a b@x.example',
        1,
        true,
        [],
        'a@x.example\u0000',
        'ä@x.example',
      )
      .map((value): Answerish => ({ value, ok: false })),
  ),
  guests: fc.oneof(
    fc
      .integer({ min: 1, max: 10 })
      .chain((n) =>
        fc
          .constantFrom<J>(n, String(n), ` ${n} `, `${n}.0`, `+${n}`, `${n}e0`, new Raw(`${n}.0`), new Raw(`${n}0e-1`))
          .map((value): Answerish => ({ value, ok: true, stored: n })),
      ),
    fc.constantFrom<J | Absent>(ABSENT, null, '', ' ').map((value): Answerish => ({ value, ok: true, stored: ABSENT })),
    fc
      .constantFrom<J>(
        0,
        11,
        1.5,
        '1.5',
        'abc',
        'NaN',
        'Infinity',
        '-Infinity',
        new Raw('1e400'),
        new Raw('-1e400'),
        new Raw('12345678901234567890'),
        new Raw('1e308'),
        new Raw('-0'),
        '1e400',
        true,
        [],
        new Obj([]),
        [3],
        '0x3',
        '３',
        '3,0',
        '3 4',
        1e-300,
      )
      .map((value): Answerish => ({ value, ok: false })),
  ),
  meal: fc.oneof(
    fc.constantFrom('fish', 'veg').map((v) => ({ value: v, ok: true, stored: v })),
    fc
      .constantFrom<J | Absent>(ABSENT, null, '', '  ')
      .map((value): Answerish => ({ value, ok: true, stored: ABSENT })),
    fc
      .constantFrom<J>(
        'Fish',
        'Vegetarian',
        ' veg',
        'veg ',
        'veg\u0000',
        1,
        true,
        ['veg'],
        new Obj([['value', 'veg']]),
        '__proto__',
        'constructor',
      )
      .map((value): Answerish => ({ value, ok: false })),
  ),
  agree: fc.oneof(
    fc.constantFrom<J>(true, 'true', 'on', 'TRUE', 'On').map((value): Answerish => ({ value, ok: true, stored: true })),
    fc
      .constantFrom<J | Absent>(ABSENT, false, 'false', 'off', null, '', 1, 'yes', [], new Obj([]), 0, 'checked')
      .map((value): Answerish => ({ value, ok: false })),
  ),
  day: fc.oneof(
    fc
      .tuple(fc.integer({ min: 0, max: 364 }), fc.constantFrom('', ' '))
      .map(([n, pad]) => ({ value: `${pad}${isoDay(n)}${pad}`, ok: true, stored: isoDay(n) })),
    fc.constantFrom<J | Absent>(ABSENT, null, '').map((value): Answerish => ({ value, ok: true, stored: ABSENT })),
    fc
      .constantFrom<J>(
        '2026-02-30',
        '2025-12-31',
        '2027-01-01',
        '2026-1-1',
        '20260101',
        20260101,
        '2026-06-01T00:00',
        '2026/06/01',
        '2026-06-01\u0000',
        '０２０２６-06-01',
        true,
      )
      .map((value): Answerish => ({ value, ok: false })),
  ),
  photo: fc.oneof(
    fc
      .constantFrom<J | Absent>(ABSENT, ABSENT, null, '', '  ')
      .map((value): Answerish => ({ value, ok: true, stored: ABSENT })),
    fc
      .constantFrom<J>('x', 'data:image/png;base64,AAAA', 1, true, [], new Obj([['name', 'a.png']]))
      .map((value): Answerish => ({ value, ok: false })),
  ),
}
const FIELD_KEYS = EVERY_TYPE_FIELDS.map((f) => f.key)

/**
 * One value per field, most often all valid or one invalid (a uniform mix
 * would almost never be valid as a whole, and the happy path must be fuzzed too).
 */
function balanced<T extends { ok: boolean }>(fields: Record<string, fc.Arbitrary<T>>): fc.Arbitrary<Record<string, T>> {
  const keys = Object.keys(fields)
  const pick = (ok: boolean) =>
    fc.record(Object.fromEntries(keys.map((k) => [k, fields[k]!.filter((a) => a.ok === ok)]))) as fc.Arbitrary<
      Record<string, T>
    >
  const mask = fc.oneof(
    { weight: 3, arbitrary: fc.constant([] as string[]) },
    { weight: 3, arbitrary: fc.constantFrom(...keys).map((k) => [k]) },
    { weight: 1, arbitrary: fc.subarray(keys) },
  )
  return fc
    .tuple(pick(true), pick(false), mask)
    .map(([valid, invalid, bad]) => Object.fromEntries(keys.map((k) => [k, bad.includes(k) ? invalid[k]! : valid[k]!])))
}
const answersArb = balanced(ANSWERS)
/** Mostly none: a few extra things at a time. */
const few = <T>(arb: fc.Arbitrary<T>, maxLength = 3) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant([] as T[]) },
    { weight: 1, arbitrary: fc.array(arb, { minLength: 1, maxLength }) },
  )

describe(named('POST /f/<id> with JSON'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  test(
    named('a submission is recorded exactly when every value is valid; the form then takes no other'),
    async () => {
      const scenario = fc.record({
        answers: answersArb,
        extras: few(
          fc.tuple(
            fc
              .oneof(fc.constantFrom(...PROTO_KEYS, '_x', '_csrf', '', 'Name', 'name ', 'toString'), hostile(10))
              .filter((k) => !FIELD_KEYS.includes(k)),
            anyJson,
          ),
        ),
        order: fc.nat(),
        hooked: fc.boolean(),
        context: opt(storableObject),
        contentType: fc.constantFrom(
          'application/json',
          'application/json; charset=utf-8',
          'APPLICATION/JSON',
          'application/vnd.intake+json',
          'application/json;foo=bar',
        ),
        xff: opt(hostileHeader),
        ua: opt(hostileHeader),
        fetchSite: fc.constantFrom(undefined, 'same-origin', 'same-site', 'none', 'cross-site'),
        idShape: fc.constantFrom('canonical', 'canonical', 'lower', 'mixed', 'percent') as fc.Arbitrary<IdShape>,
        salt: fc.nat(),
        again: anyJson,
      })
      await holds(w, scenario, 2, async (s) => {
        const extra: Record<string, unknown> = {}
        if (s.hooked) extra.callback_url = 'http://127.0.0.1:9/hook'
        if (s.context) extra.context = parsed(s.context)
        const id = await freshForm(w, extra)
        const entries: Array<[string, J]> = []
        for (const key of FIELD_KEYS) {
          const a = s.answers[key]!
          if (a.value !== ABSENT) entries.push([key, a.value])
        }
        entries.push(...s.extras)
        const rotated = entries.map((_, i) => entries[(i + s.order) % entries.length]!)
        const text = jsonText(new Obj(rotated))
        const headers: Record<string, string> = { 'content-type': s.contentType }
        if (s.xff !== undefined) headers['x-forwarded-for'] = s.xff
        if (s.ua !== undefined) headers['user-agent'] = s.ua
        if (s.fetchSite) headers['sec-fetch-site'] = s.fetchSite
        const res = await call(w, { method: 'POST', path: `/f/${shapeId(id, s.idShape, s.salt)}`, body: text, headers })
        const invalid = FIELD_KEYS.filter((k) => !s.answers[k]!.ok)
          .map((k) => `/${k}`)
          .concat(s.extras.map(([k]) => pointer(k)))
        if (s.fetchSite === 'cross-site') {
          must(res.status === 403, `cross-site: ${res.where}`)
          return
        }
        if (holdsLoneSurrogate(text)) {
          // Text that is not valid Unicode is refused whole, at the first place it is found.
          must(
            res.status === 422 && res.body.errors.some((e: { message: string }) => /surrogate/.test(e.message)),
            `a lone surrogate not refused: ${res.where}`,
          )
          return
        }
        if (invalid.length > 0) {
          must(res.status === 422, `invalid ${invalid.join(' ')} not refused: ${res.where} body ${show(text, 1000)}`)
          for (const p of invalid) must(errorPaths(res).includes(p), `errors ${show(errorPaths(res))} do not name ${p}`)
          const after = await call(w, { method: 'GET', path: `/api/v1/forms/${id}/responses`, as: 'owner' })
          must(after.body.length === 0, 'a refused submission left a response')
          return
        }
        must(res.status === 201, `a valid submission refused: ${res.where} body ${show(text, 1000)}`)
        must(
          res.body.form_id === id && CANONICAL_ULID.test(res.body.id) && API_TIME.test(res.body.submitted_at),
          `receipt ${show(res.body)}`,
        )
        const list = await call(w, { method: 'GET', path: `/api/v1/forms/${id}/responses`, as: 'owner' })
        must(list.body.length === 1, list.where)
        const response = list.body[0]
        const want: Record<string, unknown> = {}
        for (const key of FIELD_KEYS) {
          const stored = s.answers[key]!.stored
          if (stored !== ABSENT) want[key] = stored
        }
        must(
          JSON.stringify(response.data) === JSON.stringify(want),
          `stored ${show(response.data)}, want ${show(want)}`,
        )
        must(
          response.id === res.body.id && response.submitted_at === res.body.submitted_at,
          'the response differs from the receipt',
        )
        must(
          JSON.stringify(response.context) === JSON.stringify(s.context ? parsed(s.context) : null),
          'the response context differs',
        )
        const sentXff = s.xff === undefined ? null : new Headers({ x: s.xff }).get('x')
        const last = sentXff?.split(',').at(-1)?.trim()
        must(
          response.metadata.ip === (last ? last.slice(0, 64).replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, '$1') : null),
          `metadata.ip ${show(response.metadata.ip)} for X-Forwarded-For ${show(sentXff)}`,
        )
        must(
          response.metadata.user_agent === (s.ua === undefined ? null : new Headers({ x: s.ua }).get('x')),
          'metadata.user_agent differs',
        )
        const deliveries = await call(w, { method: 'GET', path: `/api/v1/forms/${id}/deliveries`, as: 'owner' })
        must(deliveries.body.length === (s.hooked ? 1 : 0), deliveries.where)
        if (s.hooked) {
          const [row] = (await w.t.sql('SELECT payload FROM deliveries WHERE form_id = ?', id)) as Array<{
            payload: string
          }>
          const payload = JSON.parse(row!.payload)
          must(
            JSON.stringify(payload.data) === JSON.stringify(want) &&
              JSON.stringify(payload.context) === JSON.stringify(response.context),
            'the webhook payload differs from the response',
          )
        }
        // The form is answered: any other submission is 409, whatever it holds, unless the body
        // cannot be read as JSON text at all (a lone surrogate in it), which is 422 wherever it is sent.
        const againText = jsonText(s.again)
        const again = await call(w, {
          method: 'POST',
          path: `/f/${id}`,
          body: againText,
          headers: { 'content-type': 'application/json' },
        })
        must(again.status === (holdsLoneSurrogate(againText) ? 422 : 409), `a second submission: ${again.where}`)
      })
    },
    TIMEOUT,
  )

  test(
    named('bodies of any shape, closed and unknown forms, content types: the statuses of CONTRACT 6'),
    async () => {
      const scenario = fc.record({
        target: fc.constantFrom('active', 'completed', 'cancelled', 'expired', 'deleted', 'random'),
        random: strangeId,
        body: fc.oneof(
          anyJson.map((v) => ({ text: jsonText(v) as string | Uint8Array, object: v instanceof Obj })),
          garbageBody.map((t) => ({ text: t, object: false })),
          deepRaw().map((r) => ({ text: r.text as string | Uint8Array, object: r.text.startsWith('{') })),
          fc.constant({ text: `{"name":"${'x'.repeat(1024 * 1024)}"}` as string | Uint8Array, object: true }),
        ),
        contentType: fc.oneof(fc.constantFrom(...CONTENT_TYPES), fc.constant(undefined)),
        accept: opt(fc.constantFrom(...ACCEPTS)),
      })
      await holds(w, scenario, 1.5, async (s) => {
        const fx = w.fx
        const id =
          s.target === 'random' ? undefined : s.target === 'active' ? await freshForm(w) : (fx[s.target] as string)
        const headers: Record<string, string> = {}
        if (s.contentType !== undefined) headers['content-type'] = s.contentType
        if (s.accept !== undefined) headers.accept = s.accept
        const form = id === undefined ? undefined : w.forms.get(id)
        const state = form && !form.deleted ? modelStatus(w, form) : undefined
        const res = await call(w, { method: 'POST', path: `/f/${id ?? s.random}`, body: s.body.text, headers })
        const sent = new Headers(headers).get('content-type')
        const json = sent !== null && /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(sent)
        const big = s.body.text.length > 1024 * 1024
        if (json) {
          let want: number[]
          if (big) want = [413]
          else {
            // A body that is UTF-8 JSON: the form's state decides first, then the body.
            const value = readsAsJson(s.body.text)
            // Unreadable text (not JSON, or not valid Unicode) is refused before the form is looked at.
            if (value === NOT_JSON || (typeof s.body.text === 'string' && holdsLoneSurrogate(s.body.text))) want = [422]
            else if (state === undefined) want = [404]
            else if (state === 'completed') want = [409]
            else if (state === 'cancelled' || state === 'expired') want = [410]
            else want = typeof value === 'object' && value !== null && !Array.isArray(value) ? [422, 201] : [422]
          }
          must(
            want.includes(res.status),
            `JSON submission to a ${state ?? 'missing'} form: want ${want}, got ${res.where}`,
          )
          if (res.status === 201) must(s.body.object, `a non-object was recorded: ${res.where}`)
          must(
            !/text\/html/.test(res.headers.get('content-type') ?? ''),
            `a JSON submission answered with a page: ${res.where}`,
          )
        } else if (
          sent === null ||
          !/^(?:application\/x-www-form-urlencoded|multipart\/form-data)\s*(?:;|$)/i.test(sent)
        ) {
          must(res.status === 415, `content-type ${show(sent)}: ${res.where}`)
        } else {
          must([303, 400, 404, 409, 410, 413, 422].includes(res.status), `a form post: ${res.where}`)
        }
      })
    },
    TIMEOUT,
  )
})

// ---------------------------------------------------------------- POST /f/<id> as a form post

/** What the page sends for EVERY_TYPE_FIELDS: strings per field (valid or not), like a browser. */
type PostValue = { value: string | Absent; ok: boolean; stored?: unknown }
const POST_VALUES: Record<string, fc.Arbitrary<PostValue>> = {
  name: fc.oneof(
    singleLine(1, 50)
      .filter((s) => s.toWellFormed().trim() !== '')
      .map((s) => ({ value: s, ok: true, stored: s.toWellFormed() })),
    fc
      .constantFrom<string | Absent>(ABSENT, '', '   ', 'a\nb', 'a\r\nb', 'n'.repeat(51))
      .map((value): PostValue => ({ value, ok: false })),
  ),
  notes: fc.oneof(
    bounded(0, 200).map((s) => ({
      value: s,
      ok: true,
      stored: s.toWellFormed().trim() === '' ? ABSENT : normalText(s),
    })),
    fc.constant({ value: 'n'.repeat(10_001), ok: false }),
  ),
  email: fc.oneof(
    validEmail.map((e) => ({ value: ` ${e} `, ok: true, stored: e })),
    fc.constantFrom('', ABSENT).map((value): PostValue => ({ value, ok: true, stored: ABSENT })),
    fc.constantFrom('no-at', 'a@b', '<script>@x.example').map((value): PostValue => ({ value, ok: false })),
  ),
  guests: fc.oneof(
    fc.integer({ min: 1, max: 10 }).map((n) => ({ value: String(n), ok: true, stored: n })),
    fc.constantFrom('', ABSENT).map((value): PostValue => ({ value, ok: true, stored: ABSENT })),
    fc
      .constantFrom('0', '11', '2.5', 'abc', '1e400', 'Infinity', '12345678901234567890')
      .map((value): PostValue => ({ value, ok: false })),
  ),
  meal: fc.oneof(
    fc.constantFrom('fish', 'veg').map((v) => ({ value: v, ok: true, stored: v })),
    fc.constantFrom('', ABSENT).map((value): PostValue => ({ value, ok: true, stored: ABSENT })),
    fc.constantFrom('Fish', 'Vegetarian', '<option>').map((value): PostValue => ({ value, ok: false })),
  ),
  agree: fc.oneof(
    fc.constantFrom('on', 'true', 'TRUE', 'On').map((value): PostValue => ({ value, ok: true, stored: true })),
    fc
      .constantFrom<string | Absent>(ABSENT, 'off', 'false', '', 'yes', '1')
      .map((value): PostValue => ({ value, ok: false })),
  ),
  day: fc.oneof(
    fc.integer({ min: 0, max: 364 }).map((n) => ({ value: isoDay(n), ok: true, stored: isoDay(n) })),
    fc.constantFrom('', ABSENT).map((value): PostValue => ({ value, ok: true, stored: ABSENT })),
    fc.constantFrom('2026-02-30', '2027-01-01', '06/01/2026').map((value): PostValue => ({ value, ok: false })),
  ),
}
type PhotoSpec =
  | { kind: 'none' }
  | { kind: 'empty' }
  | { kind: 'file'; name: string; type: string; bytes: Uint8Array; ok: boolean }
  | { kind: 'text'; value: string }
const photoArb: fc.Arbitrary<PhotoSpec> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'empty' as const }) },
  {
    weight: 4,
    arbitrary: fc
      .record({
        name: hostile(20)
          .map((s) => s.toWellFormed())
          .map((s) => (['', '.', '..'].includes(s.replace(/^.*[\\/]/, '')) ? `${s}a.png` : s)),
        type: fc.constantFrom('image/png', 'image/jpeg', 'IMAGE/GIF', 'image/svg+xml'),
        bytes: fc.uint8Array({ maxLength: 1024 }),
      })
      .map((f) => ({ kind: 'file' as const, ...f, ok: true })),
  },
  fc
    .record({
      name: fc.constantFrom('a.png', 'evil.html', ''),
      type: fc.constantFrom('text/html', 'application/pdf', '', 'image'),
      bytes: fc.uint8Array({ minLength: 1, maxLength: 64 }),
    })
    .map((f) => ({ kind: 'file' as const, ...f, ok: false })),
  fc
    .uint8Array({ minLength: 1025, maxLength: 1100 })
    .map((bytes) => ({ kind: 'file' as const, name: 'big.png', type: 'image/png', bytes, ok: false })),
  fc.constantFrom('x', 'C:\\fakepath\\a.png').map((value) => ({ kind: 'text' as const, value })),
)

/** What the published JSON Schema (GET /schema) says about one response's data: problems, empty when it holds. */
function schemaProblems(schema: any, data: unknown, count: 'characters' | 'utf16' = 'characters'): string[] {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return ['data is not an object']
  const problems: string[] = []
  const record = data as Record<string, unknown>
  for (const key of Object.keys(record))
    if (!Object.hasOwn(schema.properties, key)) problems.push(`${key}: not in the schema`)
  for (const key of schema.required as string[])
    if (!Object.hasOwn(record, key)) problems.push(`${key}: required but absent`)
  for (const [key, value] of Object.entries(record)) {
    const rule = Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined
    if (!rule) continue
    const type = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value
    if (rule.type !== type) problems.push(`${key}: ${type}, the schema says ${rule.type}`)
    if (rule.const !== undefined && value !== rule.const)
      problems.push(`${key}: ${show(value)} is not the const ${show(rule.const)}`)
    if (rule.enum && !rule.enum.includes(value)) problems.push(`${key}: ${show(value)} is not in the enum`)
    if (typeof value === 'string') {
      // JSON Schema counts characters (code points); docs/page.md "Field types" says intake counts UTF-16 units.
      const length = count === 'characters' ? [...value].length : value.length
      if (rule.maxLength !== undefined && length > rule.maxLength)
        problems.push(`${key}: ${length} characters > maxLength ${rule.maxLength}`)
      if (rule.minLength !== undefined && length < rule.minLength)
        problems.push(`${key}: ${show(value)} has ${length} characters < minLength ${rule.minLength}`)
      if (rule.pattern !== undefined && !new RegExp(rule.pattern, 'u').test(value))
        problems.push(`${key}: ${show(value)} does not match ${rule.pattern}`)
      if (rule.format === 'date' && !/^\d{4}-\d{2}-\d{2}$/.test(value))
        problems.push(`${key}: ${show(value)} is not a date`)
    }
    if (typeof value === 'number') {
      if (rule.minimum !== undefined && value < rule.minimum)
        problems.push(`${key}: ${value} < minimum ${rule.minimum}`)
      if (rule.maximum !== undefined && value > rule.maximum)
        problems.push(`${key}: ${value} > maximum ${rule.maximum}`)
      if (rule.multipleOf !== undefined) {
        const steps = value / rule.multipleOf
        if (Math.abs(steps - Math.round(steps)) > 1e-6 * Math.max(1, Math.abs(steps)))
          problems.push(`${key}: ${value} is not a multiple of ${rule.multipleOf}`)
      }
    }
  }
  return problems
}

/** Values worth trying for one generated field: its default, its bounds, astral text, and anything at all. */
function answerFor(field: Record<string, any>, tidy: boolean): fc.Arbitrary<J | Absent> {
  const config = field.config ?? {}
  // Tidy: values of the field's own kind, so that whole answers are often valid; else anything at all too.
  const candidates: Array<fc.Arbitrary<J | Absent>> = tidy
    ? []
    : [fc.constant(ABSENT), fc.constantFrom<J>('', '  ', null), hostile(20), anyJson]
  if (!field.required && tidy) candidates.push(fc.constant(ABSENT))
  if (config.default !== undefined) candidates.push(fc.constant(config.default))
  const lengths = (min: number, max: number) => fc.integer({ min, max: Math.max(min, Math.min(max, min + 20)) })
  switch (field.type) {
    case 'text':
    case 'textarea': {
      const min = config.min_length ?? 0
      const max = config.max_length ?? (field.type === 'text' ? 1000 : 10_000)
      // Astral characters: 2 UTF-16 units, 1 character. Lengths are counted in UTF-16 units.
      candidates.push(
        lengths(min, max).map((n) =>
          '😀'
            .repeat(Math.ceil(n / 2))
            .slice(0, n)
            .toWellFormed(),
        ),
        lengths(min, max).map((n) => 'x'.repeat(n)),
        lengths(min, max).map((n) => 'é'.repeat(n)),
      )
      break
    }
    case 'email':
      candidates.push(validEmail)
      break
    case 'number':
      candidates.push(
        fc.constantFrom<J>(
          config.min ?? 0,
          config.max ?? 1,
          (config.min ?? 0) + (config.step ?? 1),
          String(config.min ?? 0),
          ...(tidy ? [] : [0, -1, new Raw('1e400')]),
        ),
      )
      break
    case 'select':
      candidates.push(
        fc.constantFrom<J>(
          ...(config.options as Array<string | { value: string }>).map((o) => (typeof o === 'string' ? o : o.value)),
        ),
      )
      break
    case 'checkbox':
      candidates.push(fc.constantFrom<J>(true, 'on', ...(field.required ? [] : [false, 'off'])))
      break
    case 'date':
      candidates.push(
        fc.constantFrom<J>(
          ...[
            config.min,
            config.max,
            config.min === undefined && config.max === undefined ? '2026-06-01' : undefined,
            tidy ? undefined : '2026-02-30',
          ].filter((d) => d !== undefined),
        ),
      )
      break
  }
  // A required file cannot be answered without an upload: absent, and the answer is refused.
  return candidates.length > 0 ? fc.oneof(...candidates) : fc.constant(ABSENT)
}

describe(named('generated forms take generated answers'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  test(
    named('any generated form: an answer is recorded or refused per field, and what is recorded fits GET /schema'),
    async () => {
      const scenario = validCreate.chain((spec) => {
        const fields = (parsed(spec.body) as { fields: Array<Record<string, any>> }).fields
        return fc.boolean().chain((tidy) =>
          fc.record({
            spec: fc.constant(spec),
            answers: fc.tuple(...fields.map((f) => answerFor(f, tidy))),
            extras: tidy
              ? fc.constant([] as Array<[string, J]>)
              : few(
                  fc.tuple(
                    fc
                      .oneof(fc.constantFrom(...PROTO_KEYS, '_page', 'toString'), hostile(8))
                      .filter((k) => !fields.some((f) => f.key === k)),
                    anyJson,
                  ),
                  2,
                ),
            post: fc.boolean(),
          }),
        )
      })
      await holds(w, scenario, 1, async (s) => {
        const created = await call(w, {
          method: 'POST',
          path: '/api/v1/forms',
          as: 'owner',
          body: jsonText(s.spec.body),
        })
        must(created.status === 201, created.where)
        const id = created.body.id
        const fields = (parsed(s.spec.body) as { fields: Array<Record<string, any>> }).fields
        const entries: Array<[string, J]> = fields.flatMap((f, i) =>
          s.answers[i] === ABSENT ? [] : [[f.key, s.answers[i] as J] as [string, J]],
        )
        entries.push(...s.extras)
        let res: Answer
        if (s.post) {
          const form = new URLSearchParams(
            entries.map(([k, v]): [string, string] => [
              k.toWellFormed(),
              (typeof v === 'string' ? v : jsonText(v)).toWellFormed(),
            ]),
          )
          res = await call(w, { method: 'POST', path: `/f/${id}`, body: form })
          must([303, 422].includes(res.status), `a form post: ${res.where}`)
        } else {
          const text = jsonText(new Obj(entries))
          res = await call(w, {
            method: 'POST',
            path: `/f/${id}`,
            body: text,
            headers: { 'content-type': 'application/json' },
          })
          must([201, 422].includes(res.status), `a JSON answer: ${res.where}`)
          if (holdsLoneSurrogate(text)) {
            // Refused whole, at the first place the bad text is found.
            must(
              res.status === 422 && res.body.errors.some((e: { message: string }) => /surrogate/.test(e.message)),
              `a lone surrogate not refused: ${res.where}`,
            )
            return
          }
          if (res.status === 422) {
            const known = new Set([...fields.map((f) => pointer(f.key)), ...s.extras.map(([k]) => pointer(k))])
            for (const p of errorPaths(res))
              must(known.has(p), `an error at ${p}, which names no field and nothing sent: ${res.where}`)
            for (const [k] of s.extras)
              must(errorPaths(res).includes(pointer(k)), `the unknown key ${show(k)} is not named: ${res.where}`)
          }
        }
        if (res.status === 422) return
        must(
          s.extras.every(([k]) => s.post && k.toWellFormed().startsWith('_')),
          `unknown keys were accepted: ${res.where}`,
        )
        const list = await call(w, { method: 'GET', path: `/api/v1/forms/${id}/responses`, as: 'owner' })
        const schema = await call(w, { method: 'GET', path: `/api/v1/forms/${id}/schema`, as: 'owner' })
        const data = list.body[0].data
        // Lengths as docs/page.md "Field types" counts them (UTF-16 units); the next property holds the schema to JSON Schema's own count.
        const problems = schemaProblems(schema.body, data, 'utf16')
        must(
          problems.length === 0,
          `recorded data ${show(data)} does not fit the published schema: ${problems.join('; ')} (schema ${show(schema.body.properties, 1500)})`,
        )
        must(
          JSON.stringify(Object.keys(data)) ===
            JSON.stringify(fields.map((f) => f.key).filter((k) => Object.hasOwn(data, k))),
          `data keys out of field order: ${Object.keys(data)}`,
        )
      })
    },
    TIMEOUT,
  )

  test(
    named('GET /schema is JSON Schema: what is recorded satisfies it as a JSON Schema validator counts (characters)'),
    async () => {
      const scenario = fc.record({
        type: fc.constantFrom('text', 'textarea'),
        min: fc.integer({ min: 1, max: 40 }),
        text: fc.oneof(
          fc.constantFrom('😀', '𝕏', '👨‍👩‍👧', 'e\u0301', 'x', 'é'),
          hostile(4).filter((t) => t.length > 0),
        ),
      })
      await holds(w, scenario, 0.2, async ({ type, min, text }) => {
        const value = text
          .toWellFormed()
          .repeat(min)
          .slice(0, Math.max(min, text.length))
          .replace(/[\ud800-\udbff]$/, 'x')
          .replace(/[\r\n]/g, 'x')
        if (value.trim() === '' || value.length < min) return
        const created = await call(w, {
          method: 'POST',
          path: '/api/v1/forms',
          as: 'owner',
          body: JSON.stringify({
            title: 'Lengths',
            fields: [{ key: 'v', type, label: 'V', required: true, config: { min_length: min } }],
          }),
        })
        const res = await call(w, {
          method: 'POST',
          path: `/f/${created.body.id}`,
          body: JSON.stringify({ v: value }),
          headers: { 'content-type': 'application/json' },
        })
        if (res.status === 422) return
        must(res.status === 201, res.where)
        const list = await call(w, { method: 'GET', path: `/api/v1/forms/${created.body.id}/responses`, as: 'owner' })
        const schema = await call(w, { method: 'GET', path: `/api/v1/forms/${created.body.id}/schema`, as: 'owner' })
        const problems = schemaProblems(schema.body, list.body[0].data)
        must(
          problems.length === 0,
          `the answer ${show(value)} (${value.length} UTF-16 units, ${[...value].length} characters) was recorded, but a JSON Schema validator rejects it against GET /schema: ${problems.join('; ')}`,
        )
      })
    },
    TIMEOUT,
  )
})

describe(named('concurrent requests on one form'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  test(
    named('concurrent answers and cancellations: one outcome, never two responses'),
    async () => {
      type Op = 'json' | 'json-invalid' | 'post' | 'post-invalid' | 'cancel' | 'expiry' | 'delete'
      const op = fc.constantFrom<Op>(
        'json',
        'json',
        'json-invalid',
        'post',
        'post',
        'post-invalid',
        'cancel',
        'expiry',
        'delete',
      )
      await holds(w, fc.array(op, { minLength: 2, maxLength: 8 }), 0.5, async (ops) => {
        const id = await freshForm(w)
        const json = { 'content-type': 'application/json' }
        w.raced.add(id)
        const results = await Promise.all(
          ops.map((o) => {
            switch (o) {
              case 'json':
                return call(w, {
                  method: 'POST',
                  path: `/f/${id}`,
                  body: JSON.stringify(EVERY_TYPE_ANSWERS),
                  headers: json,
                })
              case 'json-invalid':
                return call(w, {
                  method: 'POST',
                  path: `/f/${id}`,
                  body: JSON.stringify({ ...EVERY_TYPE_ANSWERS, guests: 99 }),
                  headers: json,
                })
              case 'post':
                return call(w, {
                  method: 'POST',
                  path: `/f/${id}`,
                  body: new URLSearchParams({ name: 'Ada', agree: 'on' }),
                })
              case 'post-invalid':
                return call(w, {
                  method: 'POST',
                  path: `/f/${id}`,
                  body: new URLSearchParams({ name: '', agree: 'on' }),
                })
              case 'cancel':
                return call(w, {
                  method: 'PATCH',
                  path: `/api/v1/forms/${id}`,
                  as: 'owner',
                  body: '{"status":"cancelled"}',
                })
              case 'expiry':
                return call(w, {
                  method: 'PATCH',
                  path: `/api/v1/forms/${id}`,
                  as: 'owner',
                  body: '{"expires_at":null}',
                })
              case 'delete':
                return call(w, { method: 'DELETE', path: `/api/v1/forms/${id}`, as: 'owner' })
            }
          }),
        )
        const answered = results.filter(
          (r, i) => (ops[i] === 'json' || ops[i] === 'post') && (r.status === 201 || r.status === 303),
        )
        const cancelled = results.filter(
          (r, i) => ops[i] === 'cancel' && r.status === 200 && r.body.status === 'cancelled',
        )
        const deleted = results.some((r, i) => ops[i] === 'delete' && r.status === 204)
        must(answered.length <= 1, `${answered.length} answers recorded for one form: ${ops.join(', ')}`)
        must(!(answered.length === 1 && cancelled.length > 0), `answered and cancelled at once: ${ops.join(', ')}`)
        for (const [i, r] of results.entries()) {
          const o = ops[i]!
          if (o === 'json-invalid' || o === 'post-invalid')
            must([404, 409, 410, 422].includes(r.status), `${o}: ${r.where}`)
          if (o === 'json' || o === 'post') must([201, 303, 404, 409, 410].includes(r.status), `${o}: ${r.where}`)
          if (o === 'cancel' || o === 'expiry') must([200, 404, 409].includes(r.status), `${o}: ${r.where}`)
        }
        if (!deleted && !ops.includes('cancel') && (ops.includes('json') || ops.includes('post')))
          must(answered.length === 1, `no answer recorded: ${ops.join(', ')}`)
        const after = await call(w, { method: 'GET', path: `/api/v1/forms/${id}`, as: 'owner' })
        if (deleted) must(after.status === 404, after.where)
        else
          must(
            after.body.status === (answered.length === 1 ? 'completed' : cancelled.length > 0 ? 'cancelled' : 'active'),
            `final state ${after.body.status} after ${ops.join(', ')}`,
          )
      })
    },
    TIMEOUT,
  )

  test(
    named('concurrent duplicates with one Idempotency-Key create one form'),
    async () => {
      await holds(
        w,
        fc.tuple(validCreate, fc.integer({ min: 2, max: 6 }), fc.stringMatching(/^[\x21-\x7e]{1,30}$/)),
        0.3,
        async ([spec, n, key]) => {
          const unique = `${key}-${w.requests}`
          const text = jsonText(spec.body)
          const results = await Promise.all(
            Array.from({ length: n }, () =>
              call(w, {
                method: 'POST',
                path: '/api/v1/forms',
                as: 'owner',
                body: text,
                headers: { 'idempotency-key': unique },
              }),
            ),
          )
          const ids = new Set(results.map((r) => r.body?.id))
          must(
            results.every((r) => r.status === 201) && ids.size === 1,
            `${n} concurrent duplicates: ${results.map((r) => `${r.status} ${r.body?.id}`).join(', ')}`,
          )
          must(
            results.filter((r) => r.headers.get('idempotent-replayed') === null).length === 1,
            'not exactly one original among concurrent duplicates',
          )
        },
      )
    },
    TIMEOUT,
  )
})

describe(named('POST /f/<id> as a form post (urlencoded and multipart)'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  test(
    named('recorded (303) exactly when valid; otherwise the page again with the typed values and errors'),
    async () => {
      const ignoredName = fc.oneof(
        fc.constantFrom('_csrf', '__proto__', '_', '_charset_', '__proto__[polluted]', '_name'),
        hostile(8).map((s) => `_${s.toWellFormed()}`),
      )
      const unknownName = fc.oneof(
        fc.constantFrom('constructor', 'prototype', 'toString', 'Name', 'name ', 'polluted', ' name'),
        hostile(8)
          .map((s) => s.toWellFormed())
          .filter((s) => s.length > 0 && !s.startsWith('_') && !FIELD_KEYS.includes(s)),
      )
      const scenario = fc.record({
        values: balanced(POST_VALUES),
        photo: photoArb,
        ignored: fc.array(fc.tuple(ignoredName, hostile(20)), { maxLength: 3 }),
        unknown: few(fc.tuple(unknownName, hostile(10)), 2),
        multipart: fc.boolean(),
        order: fc.nat(),
        fetchSite: fc.constantFrom(undefined, undefined, 'same-origin', 'none', 'cross-site'),
        charset: fc.constantFrom('', '', '; charset=utf-8', '; charset=UTF-8'),
      })
      await holds(w, scenario, 2, async (s) => {
        const id = await freshForm(w)
        const entries: Array<[string, string | File]> = []
        for (const key of Object.keys(POST_VALUES)) {
          const v = s.values[key]!.value
          if (v !== ABSENT) entries.push([key, v])
        }
        if (s.photo.kind === 'text') entries.push(['photo', s.photo.value])
        entries.push(...s.ignored, ...s.unknown)
        const multipart = s.multipart || s.photo.kind === 'file' || s.photo.kind === 'empty'
        if (multipart && s.photo.kind === 'file')
          entries.push(['photo', new File([s.photo.bytes], s.photo.name, { type: s.photo.type })])
        if (multipart && s.photo.kind === 'empty')
          entries.push(['photo', new File([], '', { type: 'application/octet-stream' })])
        const rotated = entries.map((_, i) => entries[(i + s.order) % entries.length]!)
        let body: FormData | URLSearchParams
        const headers: Record<string, string> = {}
        if (multipart) {
          body = new FormData()
          for (const [k, v] of rotated) body.append(k, v)
        } else {
          body = new URLSearchParams(rotated.map(([k, v]): [string, string] => [k, v as string]))
          if (s.charset) headers['content-type'] = `application/x-www-form-urlencoded${s.charset}`
        }
        if (s.fetchSite) headers['sec-fetch-site'] = s.fetchSite
        const res = await call(w, { method: 'POST', path: `/f/${id}`, body, headers })
        if (s.fetchSite === 'cross-site') {
          must(
            res.status === 403 && /text\/html/.test(res.headers.get('content-type') ?? ''),
            `cross-site post: ${res.where}`,
          )
          return
        }
        const photoOk = s.photo.kind === 'file' ? s.photo.ok : s.photo.kind !== 'text'
        const invalid = Object.keys(POST_VALUES).filter((k) => !s.values[k]!.ok)
        if (!photoOk) invalid.push('photo')
        const allOk = invalid.length === 0 && s.unknown.length === 0
        if (!allOk) {
          must(
            res.status === 422,
            `an invalid post (${invalid.join(', ')}${s.unknown.length ? ` unknown ${show(s.unknown.map(([k]) => k))}` : ''}) was not refused: ${res.where}`,
          )
          must(res.text.includes('error-summary'), 'the 422 page has no error summary')
          const tags = tagsOf(res.text)
          for (const key of invalid) {
            const control = tags.find(
              (t) => t.attrs.get('name') === key && ['input', 'textarea', 'select'].includes(t.name),
            )
            must(control?.attrs.get('aria-invalid') === 'true', `the control of ${key} is not marked aria-invalid`)
          }
          // Every value typed is kept (files excepted): the last one sent under the key.
          const typed = (key: string) =>
            rotated.filter(([k, v]) => k === key && typeof v === 'string').at(-1)?.[1] as string | undefined
          const name = typed('name')
          if (name !== undefined) {
            const shown =
              tags.find((t) => t.name === 'input' && t.attrs.get('name') === 'name')?.attrs.get('value') ?? ''
            must(normalText(shown) === normalText(name), `the name typed ${show(name)} came back as ${show(shown)}`)
          }
          const notes = typed('notes')
          if (notes !== undefined) {
            const m = /<textarea[^>]*name="notes"[^>]*>([\s\S]*?)<\/textarea>/.exec(res.text)
            must(
              m && normalText(decodeHtml(m[1]!)).slice(1) === normalText(notes),
              `the notes typed ${show(notes)} came back as ${show(m?.[1])}`,
            )
          }
          const after = await call(w, { method: 'GET', path: `/api/v1/forms/${id}`, as: 'owner' })
          must(after.body.status === 'active', 'a refused post changed the form')
          return
        }
        must(
          res.status === 303 && res.headers.get('location') === `/f/${id}`,
          `a valid post was not recorded: ${res.where}`,
        )
        const list = await call(w, { method: 'GET', path: `/api/v1/forms/${id}/responses`, as: 'owner' })
        const data = list.body[0].data
        const want: Record<string, unknown> = {}
        for (const key of FIELD_KEYS) {
          if (key === 'photo') {
            if (s.photo.kind === 'file' && (s.photo.bytes.length > 0 || s.photo.name !== ''))
              want.photo = `${BASE_URL}/api/v1/forms/${id}/responses/${list.body[0].id}/files/photo`
            continue
          }
          const stored = s.values[key]!.stored
          if (stored !== ABSENT) want[key] = stored
        }
        must(JSON.stringify(data) === JSON.stringify(want), `stored ${show(data)}, want ${show(want)}`)
        if (want.photo && s.photo.kind === 'file') {
          const file = await call(w, {
            method: 'GET',
            path: (want.photo as string).slice(BASE_URL.length),
            as: 'owner',
          })
          must(
            file.status === 200 && Buffer.from(file.bytes).equals(Buffer.from(s.photo.bytes)),
            `the file came back different: ${file.where}`,
          )
          must(
            (file.headers.get('content-disposition') ?? '').startsWith('attachment;'),
            'a file download that is not an attachment',
          )
          must(
            file.headers.get('content-type') === s.photo.type.toLowerCase(),
            `the file type ${file.headers.get('content-type')}`,
          )
          const stranger = await call(w, {
            method: 'GET',
            path: (want.photo as string).slice(BASE_URL.length),
            as: 'other',
          })
          must(stranger.status === 404, `another account downloads the file: ${stranger.where}`)
        }
        const page = await call(w, { method: 'GET', path: `/f/${id}` })
        must(page.status === 200 && !page.text.includes('<form'), `the thank-you page: ${page.where}`)
        const again = await call(w, {
          method: 'POST',
          path: `/f/${id}`,
          body: new URLSearchParams({ name: 'again', agree: 'on' }),
        })
        must(again.status === 409, `a second post: ${again.where}`)
      })
    },
    TIMEOUT,
  )

  test(
    named('broken, oversized and odd form posts; closed and unknown forms'),
    async () => {
      const scenario = fc.record({
        target: fc.constantFrom('active', 'active', 'completed', 'cancelled', 'expired', 'deleted', 'random'),
        random: strangeId,
        body: fc.oneof(
          fc.tuple(fc.string({ maxLength: 8 }), hostile(200)).map(([boundary, junk]) => ({
            type: `multipart/form-data; boundary=${boundary.replace(/[^\x21-\x7e]/g, 'b') || 'x'}`,
            text: junk as string | Uint8Array,
          })),
          hostile(200).map((junk) => ({
            type: 'application/x-www-form-urlencoded',
            text: junk as string | Uint8Array,
          })),
          fc.uint8Array({ maxLength: 300 }).map((bytes) => ({
            type: 'multipart/form-data; boundary=zzz',
            text: Uint8Array.from([
              ...Buffer.from('--zzz\r\nContent-Disposition: form-data; name="name"\r\n\r\n'),
              ...bytes,
            ]) as string | Uint8Array,
          })),
          fc.constantFrom(
            { type: 'multipart/form-data', text: 'x' },
            { type: 'multipart/form-data; boundary=', text: '--\r\n' },
            {
              type: 'multipart/form-data; boundary=zzz',
              text: '--zzz\r\nContent-Disposition: form-data; name="name"\r\n\r\nAda\r\n--zzz--',
            },
            {
              type: 'multipart/form-data; boundary=zzz',
              text: '--zzz\r\nContent-Disposition: form-data; name="__proto__"\r\n\r\n{"polluted":1}\r\n--zzz\r\nContent-Disposition: form-data; name="name"\r\n\r\nAda\r\n--zzz\r\nContent-Disposition: form-data; name="agree"\r\n\r\non\r\n--zzz--',
            },
            {
              type: 'multipart/form-data; boundary=zzz',
              text: `--zzz\r\nContent-Disposition: form-data; name="photo"; filename="../../x.png"\r\nContent-Type: image/png\r\n\r\n${'A'.repeat(300_000)}\r\n--zzz--`,
            },
            { type: 'application/x-www-form-urlencoded', text: `name=${'x'.repeat(300_000)}` },
            {
              type: 'application/x-www-form-urlencoded',
              text: '__proto__[polluted]=1&constructor[prototype][polluted]=1&name=Ada&agree=on',
            },
            { type: 'application/x-www-form-urlencoded', text: '%%%&&&===&name=%ZZ&agree=%E0%A4%A' },
            { type: 'application/x-www-form-urlencoded; charset=utf-16', text: 'name=Ada&agree=on' },
            { type: 'application/x-www-form-urlencoded; charset=nope', text: 'name=Ada&agree=on' },
            {
              type: 'application/x-www-form-urlencoded',
              text: `${Array.from({ length: 2000 }, (_, i) => `_k${i}=v`).join('&')}&name=Ada&agree=on`,
            },
          ),
        ),
        accept: opt(fc.constantFrom(...ACCEPTS)),
        xff: opt(hostileHeader),
      })
      await holds(w, scenario, 1, async (s) => {
        const fx = w.fx
        const id =
          s.target === 'random' ? undefined : s.target === 'active' ? await freshForm(w) : (fx[s.target] as string)
        const headers: Record<string, string> = { 'content-type': s.body.type }
        if (s.accept) headers.accept = s.accept
        if (s.xff) headers['x-forwarded-for'] = s.xff
        const form = id === undefined ? undefined : w.forms.get(id)
        const state = form && !form.deleted ? modelStatus(w, form) : undefined
        const res = await call(w, { method: 'POST', path: `/f/${id ?? s.random}`, body: s.body.text, headers })
        must(
          /text\/html/.test(res.headers.get('content-type') ?? '') || res.status === 303,
          `a form post not answered with a page: ${res.where}`,
        )
        if (state === undefined) must(res.status === 404, `unknown form: ${res.where}`)
        else if (state === 'completed') must(res.status === 409, `completed form: ${res.where}`)
        else if (state !== 'active') must(res.status === 410, `${state} form: ${res.where}`)
        else must([303, 400, 413, 422].includes(res.status), `active form: ${res.where}`)
      })
    },
    TIMEOUT,
  )
})

// ---------------------------------------------------------------- GET /f/<id>

describe(named('GET /f/<id> with any id'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  const pageScenario = fc.record({
    target: fc.constantFrom('active', 'completed', 'cancelled', 'expired', 'deleted', 'otherForm', 'hooked', 'random'),
    shape: fc.constantFrom(...ID_SHAPES),
    salt: fc.nat(),
    random: strangeId,
    headers: fc.record(
      {
        accept: fc.oneof(fc.constantFrom(...ACCEPTS), hostileHeader),
        'user-agent': hostileHeader,
        'x-forwarded-for': hostileHeader,
        'accept-language': hostileHeader,
        'sec-fetch-site': fc.constantFrom('cross-site', 'same-origin'),
      },
      { requiredKeys: [] },
    ),
    query: fc.array(fc.tuple(fc.constantFrom('__proto__', 'constructor', 'x', 'id'), hostile(8)), { maxLength: 2 }),
  })
  const pagePath = (s: {
    target: string
    shape: IdShape
    salt: number
    random: string
    query: Array<[string, string]>
  }) => {
    const fx = w.fx
    const id =
      s.target === 'random'
        ? undefined
        : s.target === 'active'
          ? nth(fx.active, s.salt)
          : (fx[s.target as keyof World['fx']] as string)
    const segment = id === undefined ? s.random : shapeId(id, s.shape, s.salt)
    const query = new URLSearchParams(s.query.map(([k, v]): [string, string] => [k, v.toWellFormed()]))
    const form = id !== undefined && resolvesAs(s.shape) ? w.forms.get(id) : undefined
    const state = form && !form.deleted ? modelStatus(w, form) : undefined
    return { id, path: `/f/${segment}?${query}`, state }
  }

  test(
    named('GET: the page for every state, a 404 page for everything else, always with the CONTRACT 6 headers'),
    async () => {
      await holds(w, pageScenario, 2, async (s) => {
        const { id, path, state } = pagePath(s)
        const res = await call(w, { method: 'GET', path, headers: s.headers })
        must(/^text\/html/.test(res.headers.get('content-type') ?? ''), `not a page: ${res.where}`)
        const want = state === undefined ? 404 : state === 'active' || state === 'completed' ? 200 : 410
        must(res.status === want, `a ${state ?? 'missing'} form: want ${want}, got ${res.where}`)
        must(res.text.includes('<html lang='), 'a page without lang')
        if (state === 'active')
          must(res.text.includes(`action="/f/${id}"`) && res.text.includes('<form'), 'the active page has no form')
        else must(!res.text.includes('<form'), `a ${state ?? 'missing'} form's page offers a form`)
        must(!res.text.includes('ticket') && !res.text.includes('T-1'), 'the page shows the context')
      })
    },
    TIMEOUT,
  )

  test(
    named('HEAD answers as GET does: same status and the same page headers, no body'),
    async () => {
      await holds(w, pageScenario, 0.5, async (s) => {
        const { path } = pagePath(s)
        const get = await call(w, { method: 'GET', path, headers: s.headers })
        const head = await call(w, { method: 'HEAD', path, headers: s.headers })
        must(head.status === get.status, `HEAD ${head.status} but GET ${get.status}: ${head.where}`)
        must(head.bytes.length === 0, `HEAD with a body: ${head.where}`)
        for (const name of [
          'content-type',
          'content-security-policy',
          'x-content-type-options',
          'referrer-policy',
          'cache-control',
        ]) {
          must(
            head.headers.get(name) === get.headers.get(name),
            `HEAD ${name}: ${show(head.headers.get(name))} but GET ${name}: ${show(get.headers.get(name))} (${head.where})`,
          )
        }
      })
    },
    TIMEOUT,
  )
})

// ---------------------------------------------------------------- anything at all

describe(named('any method, path and headers on the whole app'), () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(() => w.t.close())

  const TEMPLATES = [
    '/api/v1/forms',
    '/api/v1/forms/{id}',
    '/api/v1/forms/{id}/schema',
    '/api/v1/forms/{id}/responses',
    '/api/v1/forms/{id}/responses/{sub}',
    '/api/v1/forms/{id}/responses/{sub}/files/{key}',
    '/api/v1/forms/{id}/deliveries',
    '/api/v1/forms/{id}/deliveries/{sub}/redeliver',
    '/f/{id}',
    '/healthz',
    '/',
    '/mcp',
    '/api/v1/openapi.json',
    '/api/v1',
    '/api',
    '/assets/style.css',
    '/{key}',
    '/api/v1/{key}',
  ]
  type Transform = 'none' | 'trailing' | 'double' | 'upper' | 'semicolon' | 'percent' | 'dotdot'
  const pathArb = (transforms: Transform[]) =>
    fc.record({
      template: fc.constantFrom(...TEMPLATES),
      transform: fc.constantFrom(...transforms),
      target: fc.constantFrom('active', 'completed', 'cancelled', 'expired', 'hooked', 'otherForm', 'random'),
      shape: fc.constantFrom(...ID_SHAPES),
      salt: fc.nat(),
      random: anyStrangeId,
      sub: fc.oneof(fc.constantFrom('own'), anyStrangeId),
      key: fc.oneof(fc.constantFrom('photo', '__proto__', 'constructor', '..', '%2F'), strangeId),
      query: fc.array(
        fc.tuple(
          fc.oneof(
            fc.constantFrom('limit', 'status', 'cursor', '__proto__', 'constructor[prototype][x]', 'wait'),
            hostile(6),
          ),
          fc.oneof(fc.constantFrom('0', '101', 'x', '', 'active'), hostile(6)),
        ),
        { maxLength: 3 },
      ),
    })
  type PathSpec = {
    template: string
    transform: Transform
    target: string
    shape: IdShape
    salt: number
    random: string
    sub: string
    key: string
    query: Array<[string, string]>
  }

  function buildPath(p: PathSpec): string {
    const fx = w.fx
    const id =
      p.target === 'random'
        ? undefined
        : p.target === 'active'
          ? nth(fx.active, p.salt)
          : (fx[p.target as keyof World['fx']] as string)
    const segment = id === undefined ? p.random : shapeId(id, p.shape, p.salt)
    const sub = p.sub === 'own' ? fx.completedResponse : p.sub
    let path = p.template.replace('{id}', segment).replace('{sub}', sub).replace('{key}', p.key)
    switch (p.transform) {
      case 'trailing':
        path = `${path}/`
        break
      case 'double':
        path = path.replace(/\/(?=[^/]*$)/, '//')
        break
      case 'upper':
        path = path.toUpperCase()
        break
      case 'semicolon':
        path = `${path};x=1`
        break
      case 'percent':
        path = path.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`)
        break
      case 'dotdot':
        path = `${path}/../${p.template.split('/')[1] ?? ''}`
        break
      case 'none':
        break
    }
    // A valid wait on an active form would hold the request for real seconds: never sent here.
    const query = p.query
      .filter(([k, v]) => !(k === 'wait' && /^[+-]?\d+$/.test(v)))
      .map(([k, v]) => `${encodeURIComponent(k.toWellFormed())}=${encodeURIComponent(v.toWellFormed())}`)
      .join('&')
    return `${path}${query ? `?${query}` : ''}`
  }

  /** CONTRACT 2 on everything that needs a key: 403 without one, 401 for a bad one, never either for a good one. */
  function checkAuth(path: string, method: string, auth: Auth, res: Answer) {
    const pathname = new URL(`${BASE_URL}${path}`).pathname
    const needsKey = (pathname.startsWith('/api/v1/') && pathname !== '/api/v1/openapi.json') || pathname === '/mcp'
    if (!needsKey) return
    // The detail is read from JSON answers; whether an error may be a page at all is checked by `call`.
    const head = method === 'HEAD' || /^text\/html/.test(res.headers.get('content-type') ?? '')
    if (auth.expect === 'none' || auth.expect === '403')
      must(res.status === 403 && (head || res.body?.detail === 'Not authenticated'), `no key: ${res.where}`)
    if (auth.expect === '401')
      must(res.status === 401 && (head || res.body?.detail === 'Invalid API key'), `a bad key: ${res.where}`)
    if (auth.expect === 'any') must(res.status === 401 || res.status === 403, `a garbage Authorization: ${res.where}`)
    if (auth.expect === 'owner' || auth.expect === 'other')
      must(res.status !== 401 && res.status !== 403, `a valid key refused: ${res.where}`)
  }

  test(
    named(
      'every route under every spelling of its path (trailing slash, double slash, case, percent-encoding): never a 5xx',
    ),
    async () => {
      const scenario = fc.record({
        method: fc.constantFrom('GET', 'POST', 'DELETE', 'PATCH', 'HEAD'),
        path: pathArb(['none', 'trailing', 'trailing', 'double', 'upper', 'semicolon', 'percent', 'dotdot']),
        auth: authArb(w.keys),
        body: fc.constantFrom(
          undefined,
          '{}',
          '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
          '{"status":"cancelled"}',
        ),
        accept: fc.constantFrom(undefined, 'application/json, text/event-stream', 'text/html'),
      })
      await holds(w, scenario, 1.5, async (s) => {
        const path = buildPath(s.path)
        const headers: Record<string, string> = { 'content-type': 'application/json' }
        if (s.auth.header !== undefined) headers.authorization = s.auth.header
        if (s.accept) headers.accept = s.accept
        const res = await call(w, { method: s.method, path, headers, body: s.body })
        checkAuth(path, s.method, s.auth, res)
      })
    },
    TIMEOUT,
  )

  test(
    named('errors on /mcp (an API, not a page) are JSON whatever Accept says'),
    async () => {
      const scenario = fc.record({
        method: fc.constantFrom('GET', 'POST', 'DELETE', 'PUT'),
        auth: authArb(w.keys),
        accept: fc.oneof(
          fc.constantFrom(
            ...ACCEPTS,
            'application/json, text/event-stream',
            'text/html, application/json, text/event-stream',
          ),
          hostileHeader,
        ),
        body: fc.oneof(
          fc.constantFrom(
            '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
            '{"jsonrpc":"2.0","id":1,"method":"nope"}',
            '{}',
          ),
          garbageBody,
        ),
        contentType: fc.constantFrom(undefined, 'application/json', 'text/plain'),
      })
      await holds(w, scenario, 0.5, async (s) => {
        const headers: Record<string, string> = { accept: s.accept }
        if (s.contentType) headers['content-type'] = s.contentType
        if (s.auth.header !== undefined) headers.authorization = s.auth.header
        const res = await call(w, { method: s.method, path: '/mcp', headers, body: s.body })
        checkAuth('/mcp', s.method, s.auth, res)
        if (res.status >= 400)
          must(
            /^application\/(?:[\w.+-]+\+)?json/i.test(res.headers.get('content-type') ?? ''),
            `an error from /mcp as ${show(res.headers.get('content-type'))}: ${res.where}`,
          )
      })
    },
    TIMEOUT,
  )

  test(
    named('never a 5xx or an exception; auth as CONTRACT 2; every error JSON with detail or a page'),
    async () => {
      const MCP_BODIES = [
        '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_forms","arguments":{"limit":"x"}}}',
        '{"jsonrpc":"2.0","id":"__proto__","method":"tools/call","params":{"name":"get_form","arguments":{"form_id":"01ARZ3NDEKTSV4RRFFQ69G5FAV"}}}',
        '{"jsonrpc":"2.0","id":1,"method":"__proto__"}',
        '{"jsonrpc":"1.0"}',
        '[]',
      ]
      const scenario = fc.record({
        method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'PROPFIND', 'FOO', 'get'),
        // Trailing slashes are the previous property's subject.
        path: pathArb(['none', 'none', 'none', 'double', 'upper', 'semicolon', 'percent', 'dotdot']),
        auth: authArb(w.keys),
        headers: extraHeaders,
        body: fc.oneof(
          fc.constant(undefined),
          anyJson.map((v) => jsonText(v) as string | Uint8Array | URLSearchParams | FormData),
          garbageBody.map((b) => b as string | Uint8Array | URLSearchParams | FormData),
          validCreate.map((c) => jsonText(c.body) as string | Uint8Array | URLSearchParams | FormData),
          fc.constantFrom(...MCP_BODIES),
          fc
            .array(fc.tuple(hostile(8), hostile(8)))
            .map(
              (e) =>
                new URLSearchParams(e.map(([k, v]): [string, string] => [k.toWellFormed(), v.toWellFormed()])) as
                  | string
                  | Uint8Array
                  | URLSearchParams
                  | FormData,
            ),
          fc.tuple(hostile(8), fc.uint8Array({ maxLength: 50 })).map(([name, bytes]) => {
            const form = new FormData()
            form.append(name.toWellFormed(), new File([bytes], name.toWellFormed()))
            form.append('name', 'Ada')
            return form as string | Uint8Array | URLSearchParams | FormData
          }),
        ),
      })
      await holds(w, scenario, 4, async (s) => {
        const path = buildPath(s.path)
        const headers: Record<string, string> = { ...s.headers }
        if (s.auth.header !== undefined) headers.authorization = s.auth.header
        // A multipart or urlencoded body brings its own content type (and boundary) unless one is given.
        if (s.body instanceof FormData || s.body instanceof URLSearchParams) delete headers['content-type']
        const res = await call(w, { method: s.method, path, headers, body: s.body })
        checkAuth(path, s.method, s.auth, res)
      })
    },
    TIMEOUT,
  )
})
