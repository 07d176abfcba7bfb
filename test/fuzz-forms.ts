/**
 * The fuzz tests' generators of forms: valid create bodies of every field type,
 * and mutations that make them wrong in one named place; bodies that are not JSON.
 */
import fc from 'fast-check'
import {
  anyJson,
  bounded,
  chars,
  deepRaw,
  deepText,
  hostile,
  type J,
  jsonText,
  Obj,
  PROTO_KEYS,
  pointer,
  Raw,
  singleLine,
  storableObject,
} from './fuzz-json.ts'

// ---------------------------------------------------------------- generators: forms

const VALID_PATTERNS = ['[a-z]+', '\\d{3}', '.*', '(a|b)+c?', '\\p{L}+', '[^<>]*', 'x{0,5}']
const VALID_ACCEPTS = ['image/*', '.pdf', 'image/*,.pdf', 'application/pdf', '.tar.gz', 'text/plain, .TXT']
export const DAY_MS = 86_400_000
export const isoDay = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * DAY_MS).toISOString().slice(0, 10)
export const validEmail = fc
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
export const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined })

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

export interface CreateSpec {
  body: Obj
  fields: FieldSpec[]
}

/** A create body the service must accept (201), hostile in every string it holds. */
export const validCreate: fc.Arbitrary<CreateSpec> = fc
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
export const extraKey = fc.oneof(
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

export type Mutation = {
  kind: 'extraTop' | 'extraField' | 'extraConfig' | 'wrongTop' | 'wrongField' | 'wrongConfig' | 'remove'
  a: number
  b: number
  key: string
  value: J
}
export const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom('extraTop', 'extraField', 'extraConfig', 'wrongTop', 'wrongField', 'wrongConfig', 'remove'),
  a: fc.nat(),
  b: fc.nat(),
  key: extraKey,
  value: anyJson,
})
export const nth = <T>(list: readonly T[], n: number): T => list[n % list.length]!

/** Applies one mutation that makes the body invalid; returns the body and the JSON Pointer the error must name. */
export function mutate(spec: CreateSpec, body: Obj, m: Mutation): { body: Obj; path: string } {
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
export const garbageBody: fc.Arbitrary<string | Uint8Array> = fc.oneof(
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
