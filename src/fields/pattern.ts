import type { RE2JS } from 're2js'
import { createLruCache } from '../lib/lru.ts'
import { type LegacyVerdict, matchLegacyPattern } from './legacy-pattern.ts'

/**
 * A text field's `pattern` is written as the browser reads the HTML pattern
 * attribute: a JavaScript regular expression with the `v` flag that the whole
 * value must match. The answers schema publishes it as `^(?:pattern)$`.
 *
 * The server matches it with RE2 (re2js), whose time grows linearly with the
 * value whatever the pattern: JavaScript's backtracking engine can take
 * seconds on a pattern such as `(a+)+$`, holding every other request.
 *
 * RE2 reads some syntax differently, so a pattern is translated to RE2 with
 * the browser's meaning before it is compiled:
 * - `.` is any character but a line terminator (\n, \r, U+2028, U+2029);
 * - `\s` and `\S` are JavaScript's whitespace (Unicode spaces, \v, U+FEFF);
 * - `\uXXXX`, `\u{X…}`, `\xXX`, `\cX` and `\0` name code points;
 * - `\p{Letter}`, `\p{gc=Lu}` and `\p{Script=Greek}` become RE2's names;
 * - `[^]` is any character and `[]` none.
 * `\d`, `\w` and `\b` are ASCII in both. What RE2 cannot express with the
 * browser's meaning is refused (422 `invalid_pattern`): back-references,
 * lookahead and lookbehind, inline flags, nested classes and set operations
 * (`[\p{L}--[a-z]]`, `&&`, `\q{…}`), properties RE2 does not know (`\p{C}`
 * includes unassigned code points in JavaScript and not in RE2), repetition
 * counts above 1000, and patterns whose matching would cost too much (see
 * `patternProblem`).
 */

/** How RE2 would run a pattern, or why it cannot. */
type ReadPattern =
  | { kind: 'linear'; re2: RE2JS; cost: number }
  | { kind: 'not_linear'; reason: string }
  | { kind: 'invalid'; reason: string }

/**
 * The work one match may take, as the pattern's cost (about the steps RE2
 * takes per character) times the longest value allowed. At this limit the
 * slowest match found takes about 10 ms on a small server.
 */
const PATTERN_WORK_LIMIT = 4_000_000
/** The cost of a pattern whatever the value's length: bounds compiling it too. */
const PATTERN_COST_LIMIT = 4_000

/**
 * re2js, loaded with the first pattern a form brings: loading it builds its
 * Unicode tables (tens of milliseconds), which a start and the many forms
 * without a pattern should not pay. `require` keeps matching synchronous.
 */
let re2js: typeof import('re2js') | undefined
const loadRe2 = () => (re2js ??= require('re2js') as typeof import('re2js'))

/** Compiled patterns, by pattern: compiled once, not for every answer. */
const readPatterns = createLruCache<ReadPattern>({
  maxBytes: 16 * 1024 * 1024,
  maxEntryBytes: 1024 * 1024,
  // Near enough: RE2's program grows with the cost; a refusal is its reason.
  sizeOf: (read) => 1024 + (read.kind === 'linear' ? read.cost * 128 : read.reason.length * 2),
})

function readPattern(pattern: string): ReadPattern {
  return readPatterns.getOrMake(pattern, () => {
    try {
      new RegExp(pattern, 'v')
    } catch (error) {
      return { kind: 'invalid', reason: (error as Error).message.replace(/^Invalid regular expression: /, '') }
    }
    let translation: Translation
    try {
      translation = translate(pattern)
    } catch (error) {
      if (error instanceof Unsupported) return { kind: 'not_linear', reason: error.message }
      throw error
    }
    // Compiling costs time with the program's size: refuse what would be too large first.
    if (translation.cost > PATTERN_COST_LIMIT)
      return { kind: 'not_linear', reason: tooCostly(translation.cost, PATTERN_COST_LIMIT) }
    try {
      return { kind: 'linear', re2: loadRe2().RE2JS.compile(`^(?:${translation.source})$`), cost: translation.cost }
    } catch (error) {
      return {
        kind: 'not_linear',
        reason: `The server's linear-time matcher cannot run it (${(error as Error).message.replace(/^error parsing regexp: /, '')})`,
      }
    }
  })
}

const tooCostly = (cost: number, limit: number) =>
  `Is too costly to match: its repetitions add up to ${Math.ceil(cost)} steps per character, more than ${Math.floor(limit)}; use smaller counts in {n,m}, or a smaller max_length`

/**
 * Why `pattern` cannot be a field's pattern for values of up to `maxLength`
 * characters; undefined when it can.
 */
export function patternProblem(pattern: string, maxLength: number): string | undefined {
  const read = readPattern(pattern)
  if (read.kind === 'invalid')
    return `Is not a valid regular expression (read as the browser does, with the v flag): ${read.reason}`
  if (read.kind === 'not_linear') return read.reason
  const limit = Math.min(PATTERN_COST_LIMIT, PATTERN_WORK_LIMIT / maxLength)
  if (read.cost > limit) return tooCostly(read.cost, limit)
  return undefined
}

export type PatternVerdict = 'match' | 'mismatch' | LegacyVerdict

/**
 * Whether the whole `value` matches `pattern`. A pattern intake accepts today
 * is matched by RE2 at once; one stored by an older version that RE2 cannot
 * run as the browser does (or only at too high a cost) is matched by the
 * browser's engine in a worker thread, with a deadline.
 */
export function matchPattern(
  pattern: string,
  maxLength: number,
  value: string,
): PatternVerdict | Promise<PatternVerdict> {
  if (patternProblem(pattern, maxLength) !== undefined) return matchLegacyPattern(pattern, value)
  const read = readPattern(pattern) as Extract<ReadPattern, { kind: 'linear' }>
  return read.re2.testExact(value) ? 'match' : 'mismatch'
}

// ------------------------------------------------------------ translation

/** A construct RE2 cannot run with the browser's meaning. */
class Unsupported extends Error {}

interface Translation {
  /** The pattern in RE2's syntax, with the browser's meaning. */
  source: string
  /** About the steps RE2 takes per character of the value (its program's size, classes weighted). */
  cost: number
}

/** A character, `.` or a class of a few ranges. */
const SIMPLE_COST = 1
const CLASS_COST = 2
/** A class with Unicode properties or JavaScript's whitespace: many ranges to search for every character. */
const LARGE_CLASS_COST = 16
const MAX_REPEAT = 1000

const hex = (codePoint: number) => `\\x{${codePoint.toString(16)}}`

/** JavaScript's \s: WhiteSpace and LineTerminator. */
const WHITESPACE: Array<[number, number]> = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
]

const rangesText = (ranges: Array<[number, number]>) =>
  ranges.map(([from, to]) => (from === to ? hex(from) : `${hex(from)}-${hex(to)}`)).join('')

/** Every code point outside `ranges` (sorted, apart), as ranges: \S inside a class. */
function complement(ranges: Array<[number, number]>): Array<[number, number]> {
  const outside: Array<[number, number]> = []
  let next = 0
  for (const [from, to] of ranges) {
    if (from > next) outside.push([next, from - 1])
    next = to + 1
  }
  if (next <= 0x10ffff) outside.push([next, 0x10ffff])
  return outside
}

const WHITESPACE_MEMBERS = rangesText(WHITESPACE)
const NON_WHITESPACE_MEMBERS = rangesText(complement(WHITESPACE))
const ANY_MEMBERS = rangesText([[0, 0x10ffff]])
/** `.` without the s flag: anything but a line terminator. */
const DOT = `[^${rangesText([
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
])}]`

/** General categories by their long names (JavaScript accepts both), as RE2 names them. */
const GENERAL_CATEGORIES: Record<string, string> = {
  Cased_Letter: 'LC',
  Close_Punctuation: 'Pe',
  Connector_Punctuation: 'Pc',
  Control: 'Cc',
  cntrl: 'Cc',
  Currency_Symbol: 'Sc',
  Dash_Punctuation: 'Pd',
  Decimal_Number: 'Nd',
  digit: 'Nd',
  Enclosing_Mark: 'Me',
  Final_Punctuation: 'Pf',
  Format: 'Cf',
  Initial_Punctuation: 'Pi',
  Letter: 'L',
  Letter_Number: 'Nl',
  Line_Separator: 'Zl',
  Lowercase_Letter: 'Ll',
  Mark: 'M',
  Combining_Mark: 'M',
  Math_Symbol: 'Sm',
  Modifier_Letter: 'Lm',
  Modifier_Symbol: 'Sk',
  Nonspacing_Mark: 'Mn',
  Number: 'N',
  Open_Punctuation: 'Ps',
  Other_Letter: 'Lo',
  Other_Number: 'No',
  Other_Punctuation: 'Po',
  Other_Symbol: 'So',
  Paragraph_Separator: 'Zp',
  Private_Use: 'Co',
  Punctuation: 'P',
  punct: 'P',
  Separator: 'Z',
  Space_Separator: 'Zs',
  Spacing_Mark: 'Mc',
  Surrogate: 'Cs',
  Symbol: 'S',
  Titlecase_Letter: 'Lt',
  Uppercase_Letter: 'Lu',
}
const RE2_CATEGORIES = new Set(Object.values(GENERAL_CATEGORIES))

/**
 * `pattern`, already known to compile with the `v` flag, in RE2's syntax with
 * the same meaning; throws Unsupported for what RE2 cannot express so.
 */
function translate(pattern: string): Translation {
  let at = 0
  const peek = (offset = 0) => pattern[at + offset]
  const startsWith = (text: string) => pattern.startsWith(text, at)

  function disjunction(): Translation {
    const alternatives = [alternative()]
    while (peek() === '|') {
      at++
      alternatives.push(alternative())
    }
    return {
      source: alternatives.map((a) => a.source).join('|'),
      cost: alternatives.reduce((total, a) => total + a.cost, alternatives.length - 1),
    }
  }

  function alternative(): Translation {
    let source = ''
    let cost = 0
    while (at < pattern.length && peek() !== '|' && peek() !== ')') {
      const term = atom()
      const repeated = quantifier(term)
      source += repeated.source
      cost += repeated.cost
    }
    return { source, cost }
  }

  function quantifier(term: Translation & { assertion?: boolean }): Translation {
    let times: number
    let suffix: string
    const c = peek()
    if (c === '*' || c === '+' || c === '?') {
      at++
      times = 1
      suffix = c
    } else if (c === '{') {
      const match = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(at))!
      at += match[0].length
      const min = Number(match[1])
      const max = match[2] === undefined ? min : match[3] === '' ? undefined : Number(match[3])
      if (min > MAX_REPEAT || (max ?? 0) > MAX_REPEAT)
        throw new Unsupported(
          `Repeats more than ${MAX_REPEAT} times, which the server's linear-time matcher cannot run`,
        )
      times = max === undefined ? min + 1 : Math.max(max, 1)
      suffix = match[0]
    } else {
      return term
    }
    // A lazy quantifier matches the same whole values.
    if (peek() === '?') {
      at++
      suffix += '?'
    }
    return { source: `(?:${term.source})${suffix}`, cost: term.cost * times + 1 }
  }

  function atom(): Translation {
    const c = peek()!
    if (c === '^' || c === '$') {
      at++
      return { source: c, cost: SIMPLE_COST }
    }
    if (c === '.') {
      at++
      return { source: DOT, cost: CLASS_COST }
    }
    if (c === '(') return group()
    if (c === '[') return characterClass()
    if (c === '\\') return translateEscape()
    const codePoint = pattern.codePointAt(at)!
    at += codePoint > 0xffff ? 2 : 1
    return { source: hex(codePoint), cost: SIMPLE_COST }
  }

  function group(): Translation {
    if (startsWith('(?=') || startsWith('(?!') || startsWith('(?<=') || startsWith('(?<!')) {
      throw new Unsupported(
        "Uses lookahead or lookbehind ((?=, (?!, (?<=, (?<!), which the server's linear-time matcher cannot run",
      )
    }
    if (startsWith('(?:')) at += 3
    else if (startsWith('(?<')) at = pattern.indexOf('>', at) + 1
    else if (startsWith('(?'))
      throw new Unsupported(
        "Uses inline flags such as (?i:…), which the server's linear-time matcher cannot run as the browser does",
      )
    else at += 1
    const inner = disjunction()
    at++ // the closing parenthesis
    return { source: `(?:${inner.source})`, cost: inner.cost }
  }

  function translateEscape(): Translation {
    const c = peek(1)!
    if (c === 'b' || c === 'B') {
      at += 2
      return { source: `\\${c}`, cost: SIMPLE_COST }
    }
    if (/[1-9]/.test(c) || c === 'k')
      throw new Unsupported("Uses a back-reference (\\1, \\k<name>), which the server's linear-time matcher cannot run")
    if (c === 's' || c === 'S') {
      at += 2
      return { source: c === 's' ? `[${WHITESPACE_MEMBERS}]` : `[^${WHITESPACE_MEMBERS}]`, cost: LARGE_CLASS_COST }
    }
    const member = classEscape()
    const cost = member.kind === 'property' ? LARGE_CLASS_COST : member.kind === 'set' ? CLASS_COST : SIMPLE_COST
    return { source: member.kind === 'char' ? hex(member.codePoint) : member.source, cost }
  }

  /** An escape that can stand in a class: a character, a set (\d), or a property (\p{L}). */
  function classEscape(): { kind: 'char'; codePoint: number } | { kind: 'set' | 'property'; source: string } {
    const c = peek(1)!
    at += 2
    switch (c) {
      case 'd':
      case 'D':
      case 'w':
      case 'W':
        return { kind: 'set', source: `\\${c}` }
      case 'p':
      case 'P':
        return { kind: 'property', source: property(c) }
      case 't':
        return { kind: 'char', codePoint: 0x09 }
      case 'n':
        return { kind: 'char', codePoint: 0x0a }
      case 'v':
        return { kind: 'char', codePoint: 0x0b }
      case 'f':
        return { kind: 'char', codePoint: 0x0c }
      case 'r':
        return { kind: 'char', codePoint: 0x0d }
      case '0':
        return { kind: 'char', codePoint: 0 }
      case 'c': {
        const letter = pattern.charCodeAt(at)
        at++
        return { kind: 'char', codePoint: letter % 32 }
      }
      case 'x': {
        const codePoint = Number.parseInt(pattern.slice(at, at + 2), 16)
        at += 2
        return { kind: 'char', codePoint }
      }
      case 'u':
        return { kind: 'char', codePoint: unicodeEscape() }
      default:
        // An escaped syntax character stands for itself.
        return { kind: 'char', codePoint: c.codePointAt(0)! }
    }
  }

  /** After `\u`: `{X…}`, or four hex digits (a surrogate pair written as two escapes is one character). */
  function unicodeEscape(): number {
    if (peek() === '{') {
      const end = pattern.indexOf('}', at)
      const codePoint = Number.parseInt(pattern.slice(at + 1, end), 16)
      at = end + 1
      return codePoint
    }
    const unit = Number.parseInt(pattern.slice(at, at + 4), 16)
    at += 4
    if (unit >= 0xd800 && unit <= 0xdbff && /^\\u[dD][c-fC-F][0-9a-fA-F]{2}/.test(pattern.slice(at))) {
      const low = Number.parseInt(pattern.slice(at + 2, at + 6), 16)
      at += 6
      return 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)
    }
    if (unit >= 0xd800 && unit <= 0xdfff)
      throw new Unsupported('Names a lone surrogate (\\uD800), which is no character the server can match')
    return unit
  }

  /** After `\p` or `\P`: `{Name}` or `{Name=Value}`, as RE2 writes it. */
  function property(letter: string): string {
    const end = pattern.indexOf('}', at)
    const text = pattern.slice(at + 1, end)
    at = end + 1
    const [name, value] = text.includes('=') ? (text.split('=') as [string, string]) : [undefined, text]
    let re2Name: string | undefined
    if (name === undefined || name === 'General_Category' || name === 'gc') {
      const category = GENERAL_CATEGORIES[value] ?? value
      if (RE2_CATEGORIES.has(category) || (name === undefined && value === 'Any')) re2Name = category
    } else if (name === 'Script' || name === 'sc') {
      re2Name = value
    }
    if (re2Name === undefined)
      throw new Unsupported(`Uses the Unicode property ${text}, which the server's linear-time matcher does not know`)
    return `\\${letter}{${re2Name}}`
  }

  function characterClass(): Translation {
    at++ // [
    const negated = peek() === '^'
    if (negated) at++
    let members = ''
    let cost = CLASS_COST
    while (peek() !== ']') {
      if (peek() === '[' || startsWith('--') || startsWith('&&') || startsWith('\\q')) {
        throw new Unsupported(
          "Uses a nested class or a set operation in […] (--, &&, \\q{…}), which the server's linear-time matcher cannot run",
        )
      }
      if (startsWith('\\s') || startsWith('\\S')) {
        members += peek(1) === 's' ? WHITESPACE_MEMBERS : NON_WHITESPACE_MEMBERS
        cost = LARGE_CLASS_COST
        at += 2
        continue
      }
      const from = classAtom()
      if (from.kind !== 'char') {
        members += from.source
        if (from.kind === 'property') cost = LARGE_CLASS_COST
        continue
      }
      // In a v-flag class an unescaped "-" between two characters is a range.
      if (peek() === '-') {
        at++
        const to = classAtom() as { kind: 'char'; codePoint: number }
        members += `${hex(from.codePoint)}-${hex(to.codePoint)}`
      } else {
        members += hex(from.codePoint)
      }
    }
    at++ // ]
    // RE2 has no empty class: [] matches nothing, [^] anything.
    if (members === '') return { source: negated ? `[${ANY_MEMBERS}]` : `[^${ANY_MEMBERS}]`, cost }
    return { source: `[${negated ? '^' : ''}${members}]`, cost }
  }

  function classAtom(): ReturnType<typeof classEscape> {
    if (peek() === '\\') {
      // In a class \b is the backspace character.
      if (peek(1) === 'b') {
        at += 2
        return { kind: 'char', codePoint: 0x08 }
      }
      return classEscape()
    }
    const codePoint = pattern.codePointAt(at)!
    at += codePoint > 0xffff ? 2 : 1
    return { kind: 'char', codePoint }
  }

  return disjunction()
}
