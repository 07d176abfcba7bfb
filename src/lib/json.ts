import { invalid, type Problem, pointerSegment } from './errors.ts'
import { type TimeSlicer, timeSlicer, yieldToLoop } from './slices.ts'

/** Deeper JSON than this is refused: nothing legitimate needs it, and serialising it could exhaust the stack. */
const MAX_JSON_DEPTH = 100

/**
 * Text nested deeper than this is refused before it is parsed: far beyond any
 * valid body, yet parsing 1 MiB of `[` (500,000 levels) would take JSON.parse
 * hundreds of milliseconds. Shallower bodies are parsed and told precisely
 * what is wrong.
 */
const MAX_TEXT_DEPTH = 1000

/** `\\uD800` to `\\uDFFF`, the only way a lone surrogate gets into JSON text decoded from UTF-8. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/

const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a

/**
 * Why JSON text nests too deep to be parsed, found by one pass over the text
 * (stopping at the limit) before JSON.parse sees it; undefined when it does
 * not. The problem is located at the body's member (or element) that holds
 * the deep value. Text that is not JSON passes, for JSON.parse to refuse.
 */
function jsonNestingProblem(text: string, maxDepth = MAX_TEXT_DEPTH): Problem | undefined {
  let depth = 0
  // Where the current member of the outermost object or array starts: its key's text, or its index.
  let memberKey: [number, number] | undefined
  let expectingKey = false
  let index = 0
  let rootIsArray = false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === QUOTE) {
      const end = stringEnd(text, i)
      // In the outermost object a string right after `{` or `,` is a member's key.
      if (depth === 1 && expectingKey) {
        memberKey = [i, end + 1]
        expectingKey = false
      }
      i = end
    } else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      if (depth === 0) {
        rootIsArray = code === OPEN_ARRAY
        expectingKey = !rootIsArray
      }
      depth++
      if (depth > maxDepth) {
        return {
          path: memberPointer(text, rootIsArray, memberKey, index),
          message: `Must not nest deeper than ${MAX_JSON_DEPTH} levels`,
          code: 'invalid_value',
        }
      }
    } else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) {
      depth--
    } else if (code === COMMA && depth === 1) {
      index++
      expectingKey = !rootIsArray
    }
  }
  return undefined
}

/** Where the string opening at `start` closes (the last index when it does not). Jumps quote to quote: most of a large body is strings. */
function stringEnd(text: string, start: number): number {
  let at = start
  for (;;) {
    at = text.indexOf('"', at + 1)
    if (at === -1) return text.length - 1
    // A quote after an odd number of backslashes is escaped.
    let backslashes = 0
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) return at
  }
}

function memberPointer(
  text: string,
  rootIsArray: boolean,
  memberKey: [number, number] | undefined,
  index: number,
): string {
  if (rootIsArray) return `/${index}`
  if (memberKey === undefined) return ''
  try {
    return `/${pointerSegment(JSON.parse(text.slice(memberKey[0], memberKey[1])) as string)}`
  } catch {
    return ''
  }
}

/**
 * The value of a request body's JSON text, or a 422: too deep to parse, not
 * JSON, or holding text that is not valid Unicode. Each step over a large
 * body takes a few milliseconds, and other requests get a turn between them.
 */
export async function parseJsonBody(text: string): Promise<unknown> {
  const tooDeep = jsonNestingProblem(text)
  if (tooDeep !== undefined) throw invalid([tooDeep])
  await yieldToLoop()
  let value: unknown
  try {
    value = await parseInPieces(text)
  } catch (error) {
    if (error instanceof SyntaxError)
      throw invalid([{ path: '', message: 'Request body is not valid JSON', code: 'invalid_format' }])
    throw error
  }
  await yieldToLoop()
  // Text decoded from UTF-8 holds no lone surrogate: only an escape can write one.
  const illFormed = SURROGATE_ESCAPE.test(text) ? illFormedTextAt(value) : undefined
  if (illFormed !== undefined)
    throw invalid([
      {
        path: illFormed,
        message: 'Holds a lone surrogate ("\\ud800"), which is not valid Unicode text',
        code: 'invalid_encoding',
      },
    ])
  return value
}

/**
 * Text parsed by one JSON.parse call at most: about a millisecond's work.
 * JSON.parse of 1 MiB holding 90,000 distinct keys takes 40 ms or more.
 */
const PIECE_CHARS = 64 * 1024

/**
 * The value JSON.parse(text) gives, or its SyntaxError, with the event loop
 * given a turn between pieces: a large object or array is parsed a run of
 * members at a time (a large member by the same rule), and the pieces are put
 * together as JSON.parse would (duplicate keys: the last value, in the first
 * one's place; `__proto__` an own key like any other).
 */
async function parseInPieces(text: string, slices: TimeSlicer = timeSlicer()): Promise<unknown> {
  if (text.length <= PIECE_CHARS) return JSON.parse(text)
  const ends = await largeContainerEnds(text, slices)
  const start = skipWhitespace(text, 0)
  const end = valueEnd(text, start, ends)
  if (skipWhitespace(text, end) !== text.length) throw new SyntaxError('Unexpected text after the JSON value')
  return parseValue(text, start, end, ends, slices)
}

async function parseValue(
  text: string,
  start: number,
  end: number,
  ends: Map<number, number>,
  slices: TimeSlicer,
): Promise<unknown> {
  const code = text.charCodeAt(start)
  if (end - start <= PIECE_CHARS || (code !== OPEN_ARRAY && code !== OPEN_OBJECT))
    return JSON.parse(text.slice(start, end))
  const isArray = code === OPEN_ARRAY
  const close = isArray ? CLOSE_ARRAY : CLOSE_OBJECT
  const result: unknown[] | Record<string, unknown> = isArray ? [] : {}
  const put = (key: string | undefined, value: unknown) => {
    if (isArray) (result as unknown[]).push(value)
    // Assigning `__proto__` would set the prototype: JSON.parse makes it an own key.
    else if (key === '__proto__')
      Object.defineProperty(result, key, { value, writable: true, enumerable: true, configurable: true })
    else (result as Record<string, unknown>)[key!] = value
  }
  // Members not parsed yet, from runStart to runEnd: parsed together, as one piece.
  let runStart = -1
  let runEnd = -1
  const parseRun = async () => {
    if (runStart === -1) return
    const piece = JSON.parse(`${isArray ? '[' : '{'}${text.slice(runStart, runEnd)}${isArray ? ']' : '}'}`)
    if (isArray) for (const value of piece as unknown[]) put(undefined, value)
    else if (Object.hasOwn(piece, '__proto__')) for (const key of Object.keys(piece)) put(key, piece[key])
    else Object.assign(result, piece)
    runStart = -1
    await slices.pause()
  }
  let at = skipWhitespace(text, start + 1)
  if (text.charCodeAt(at) === close) return result
  for (;;) {
    const memberStart = at
    let keyEnd = -1
    if (!isArray) {
      if (text.charCodeAt(at) !== QUOTE) throw new SyntaxError('Expected a key')
      keyEnd = stringEnd(text, at) + 1
      at = skipWhitespace(text, keyEnd)
      if (text.charCodeAt(at) !== COLON) throw new SyntaxError('Expected ":"')
      at = skipWhitespace(text, at + 1)
    }
    const valueStart = at
    const memberEnd = valueEnd(text, valueStart, ends)
    if (ends.has(valueStart)) {
      await parseRun()
      const value = await parseValue(text, valueStart, memberEnd, ends, slices)
      put(isArray ? undefined : (JSON.parse(text.slice(memberStart, keyEnd)) as string), value)
    } else {
      if (runStart === -1) runStart = memberStart
      runEnd = memberEnd
      if (runEnd - runStart >= PIECE_CHARS) await parseRun()
    }
    at = skipWhitespace(text, memberEnd)
    const next = text.charCodeAt(at)
    if (next === close) break
    if (next !== COMMA) throw new SyntaxError('Expected "," or the end of the container')
    at = skipWhitespace(text, at + 1)
  }
  await parseRun()
  return result
}

/**
 * Where each array or object longer than PIECE_CHARS closes, by where it
 * opens: the ones parsed a member at a time. A SyntaxError when brackets do
 * not match.
 */
async function largeContainerEnds(text: string, slices: TimeSlicer): Promise<Map<number, number>> {
  const ends = new Map<number, number>()
  const open: number[] = []
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === QUOTE) i = stringEnd(text, i)
    else if (code === OPEN_ARRAY || code === OPEN_OBJECT) open.push(i)
    else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) {
      const start = open.pop()
      const opener = code === CLOSE_ARRAY ? OPEN_ARRAY : OPEN_OBJECT
      if (start === undefined || text.charCodeAt(start) !== opener) throw new SyntaxError('Unbalanced brackets')
      if (i - start >= PIECE_CHARS) ends.set(start, i)
    }
    if ((i & 0xffff) === 0) await slices.pause()
  }
  if (open.length > 0) throw new SyntaxError('Unbalanced brackets')
  return ends
}

/** Where the value starting at `start` ends (exclusive): a small array or object is found by matching its brackets. */
function valueEnd(text: string, start: number, ends: Map<number, number>): number {
  const code = text.charCodeAt(start)
  if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
    const known = ends.get(start)
    if (known !== undefined) return known + 1
    let depth = 0
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c === QUOTE) i = stringEnd(text, i)
      else if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++
      else if ((c === CLOSE_ARRAY || c === CLOSE_OBJECT) && --depth === 0) return i + 1
    }
    throw new SyntaxError('Unbalanced brackets')
  }
  if (code === QUOTE) return stringEnd(text, start) + 1
  // A number, true, false or null: up to the next delimiter.
  let at = start
  while (at < text.length && !DELIMITERS.has(text.charCodeAt(at))) at++
  if (at === start) throw new SyntaxError('Expected a value')
  return at
}

/** JSON's whitespace: space, tab, LF, CR. */
const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d])
/** What ends a number or a literal. */
const DELIMITERS = new Set([COMMA, CLOSE_ARRAY, CLOSE_OBJECT, ...WHITESPACE])

function skipWhitespace(text: string, from: number): number {
  let at = from
  while (WHITESPACE.has(text.charCodeAt(at))) at++
  return at
}

/** A container met on a walk, and where it sits: enough to spell its JSON Pointer when one is needed. */
export interface JsonPlace {
  readonly parent: JsonPlace | undefined
  readonly key: string | number
  /** 1 for the value the walk started from. */
  readonly depth: number
}

/** The JSON Pointer of `key` inside `place` (of `place` itself without a key), after `base`. */
export function pointerAt(base: string, place: JsonPlace | undefined, key?: string | number): string {
  const segments: Array<string | number> = key === undefined ? [] : [key]
  for (let at = place; at?.parent !== undefined; at = at.parent) segments.push(at.key)
  return (
    base +
    segments
      .reverse()
      .map((segment) => `/${pointerSegment(segment)}`)
      .join('')
  )
}

/** What a walk does after a value: go on (into it, when it is an object or array), skip what is inside it, or stop. */
export type WalkStep = 'skip' | 'stop' | undefined

/**
 * Visits every value inside `root` in document order, without recursion (no
 * depth can exhaust the stack) and without building a path per value (a
 * JSON Pointer is spelled only when asked for, with `pointerAt`), so a walk
 * costs the same for every value whatever its depth. `root` itself is not
 * visited; `place` is the container holding each value.
 */
export function walkJson(
  root: unknown,
  visit: (value: unknown, place: JsonPlace, key: string | number) => WalkStep,
): void {
  if (typeof root !== 'object' || root === null) return
  interface Frame extends JsonPlace {
    readonly value: object
    readonly keys: string[] | undefined
    next: number
  }
  const open = (value: object, parent: Frame | undefined, key: string | number): Frame => ({
    value,
    parent,
    key,
    depth: parent === undefined ? 1 : parent.depth + 1,
    keys: Array.isArray(value) ? undefined : Object.keys(value),
    next: 0,
  })
  const stack: Frame[] = [open(root, undefined, '')]
  while (stack.length > 0) {
    const frame = stack.at(-1)!
    const length = frame.keys === undefined ? (frame.value as unknown[]).length : frame.keys.length
    if (frame.next >= length) {
      stack.pop()
      continue
    }
    const key = frame.keys === undefined ? frame.next : frame.keys[frame.next]!
    frame.next++
    const value = (frame.value as Record<string | number, unknown>)[key]
    const step = visit(value, frame, key)
    if (step === 'stop') return
    if (step !== 'skip' && typeof value === 'object' && value !== null) stack.push(open(value, frame, key))
  }
}

/**
 * The first reason a free-form JSON value cannot be stored and returned
 * exactly as given, with its JSON Pointer; undefined when it can.
 */
function freeFormProblem(value: unknown, path: string): Problem | undefined {
  let problem: Problem | undefined
  walkJson(value, (node, place, key) => {
    if (typeof node === 'number') {
      // 1e400 parses as Infinity and would come back as null.
      if (!Number.isFinite(node))
        problem = { path: pointerAt(path, place, key), message: 'Holds a number too large to store', code: 'too_large' }
      // Past 2^53 integers silently lose digits (12345678901234567890 -> ...000).
      else if (Number.isInteger(node) && !Number.isSafeInteger(node)) {
        problem = {
          path: pointerAt(path, place, key),
          message: 'Holds an integer beyond ±9007199254740991, which cannot be returned exactly; send it as a string',
          code: 'too_large',
        }
      }
    } else if (typeof node === 'object' && node !== null && place.depth + 1 > MAX_JSON_DEPTH) {
      problem = { path, message: `Must not nest deeper than ${MAX_JSON_DEPTH} levels`, code: 'invalid_value' }
    }
    return problem ? 'stop' : undefined
  })
  return problem
}

/** Compact JSON of a free-form object the client gave, or a 422 naming what cannot be kept exactly. */
export function encodeFreeForm(value: object, path: string): string {
  const problem = freeFormProblem(value, path)
  if (problem) throw invalid([problem])
  return JSON.stringify(value)
}

export const utf8Length = (text: string) => Buffer.byteLength(text, 'utf8')

/** JSON with object keys sorted at every level: the same for any two texts holding the same value. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
    return `{${entries.join(',')}}`
  }
  return JSON.stringify(value)
}

/**
 * Where a parsed JSON value holds a string (or key) that is not valid Unicode
 * text (a lone surrogate, written as "\ud800"), or undefined. Such a string
 * cannot be stored as UTF-8 without being changed, so it is refused.
 */
export function illFormedTextAt(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.isWellFormed() ? undefined : path
  let found: string | undefined
  walkJson(value, (node, place, key) => {
    if (typeof key === 'string' && !key.isWellFormed()) found = pointerAt(path, place)
    else if (typeof node === 'string' && !node.isWellFormed()) found = pointerAt(path, place, key)
    return found === undefined ? undefined : 'stop'
  })
  return found
}
