/**
 * The fuzz tests' generators of answers: JSON values for each field type (and
 * whether each must be taken), form-post values, photos, and answers generated
 * from a form's own schema.
 */
import fc from 'fast-check'
import { isoDay, validEmail } from './fuzz-forms.ts'
import { anyJson, bounded, hostile, type J, Obj, Raw, show, singleLine } from './fuzz-json.ts'
import { normalText } from './fuzz-requests.ts'
import { EVERY_TYPE_FIELDS } from './utils.ts'

// ---------------------------------------------------------------- POST /f/<id> with JSON

export const NOT_JSON = Symbol('not JSON')
/** Text nested deeper than this is refused before it is parsed (docs/agents.md "Errors"). */
const TEXT_DEPTH_LIMIT = 1000
/**
 * The body as a JSON reader sees it: UTF-8 (a BOM dropped), then JSON;
 * NOT_JSON when it is neither, or nests too deep to be read.
 */
export function readsAsJson(body: string | Uint8Array): unknown {
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

export const ABSENT: unique symbol = Symbol('absent')
export type Absent = typeof ABSENT
export type Answerish = { value: J | Absent; ok: boolean; stored?: unknown }

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
export const FIELD_KEYS = EVERY_TYPE_FIELDS.map((f) => f.key)

/**
 * One value per field, most often all valid or one invalid (a uniform mix
 * would almost never be valid as a whole, and the happy path must be fuzzed too).
 */
export function balanced<T extends { ok: boolean }>(
  fields: Record<string, fc.Arbitrary<T>>,
): fc.Arbitrary<Record<string, T>> {
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
export const answersArb = balanced(ANSWERS)
/** Mostly none: a few extra things at a time. */
export const few = <T>(arb: fc.Arbitrary<T>, maxLength = 3) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant([] as T[]) },
    { weight: 1, arbitrary: fc.array(arb, { minLength: 1, maxLength }) },
  )

// ---------------------------------------------------------------- POST /f/<id> as a form post

/** What the page sends for EVERY_TYPE_FIELDS: strings per field (valid or not), like a browser. */
export type PostValue = { value: string | Absent; ok: boolean; stored?: unknown }
export const POST_VALUES: Record<string, fc.Arbitrary<PostValue>> = {
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
export type PhotoSpec =
  | { kind: 'none' }
  | { kind: 'empty' }
  | { kind: 'file'; name: string; type: string; bytes: Uint8Array; ok: boolean }
  | { kind: 'text'; value: string }
export const photoArb: fc.Arbitrary<PhotoSpec> = fc.oneof(
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
export function schemaProblems(schema: any, data: unknown, count: 'characters' | 'utf16' = 'characters'): string[] {
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
export function answerFor(field: Record<string, any>, tidy: boolean): fc.Arbitrary<J | Absent> {
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
