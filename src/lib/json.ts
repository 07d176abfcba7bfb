import { invalidAt, pointerSegment } from './errors.ts'

/** Deeper JSON than this is refused: nothing legitimate needs it, and serialising it could exhaust the stack. */
export const MAX_JSON_DEPTH = 100

/**
 * The first reason a free-form JSON value cannot be stored and returned
 * exactly as given, with its JSON Pointer; undefined when it can. Walks
 * without recursion, so no input can exhaust the stack here.
 */
export function freeFormProblem(value: unknown, path: string): { path: string; message: string } | undefined {
  const stack: Array<[unknown, string, number]> = [[value, path, 0]]
  while (stack.length > 0) {
    const [node, at, depth] = stack.pop()!
    if (typeof node === 'number') {
      // 1e400 parses as Infinity and would come back as null.
      if (!Number.isFinite(node)) return { path: at, message: 'Holds a number too large to store' }
      // Past 2^53 integers silently lose digits (12345678901234567890 -> ...000).
      if (Number.isInteger(node) && !Number.isSafeInteger(node)) {
        return { path: at, message: 'Holds an integer beyond ±9007199254740991, which cannot be returned exactly; send it as a string' }
      }
    }
    if (typeof node !== 'object' || node === null) continue
    if (depth + 1 > MAX_JSON_DEPTH) return { path, message: `Must not nest deeper than ${MAX_JSON_DEPTH} levels` }
    for (const [key, child] of Object.entries(node)) stack.push([child, `${at}/${pointerSegment(key)}`, depth + 1])
  }
  return undefined
}

/** Compact JSON of a free-form object the client gave, or a 422 naming what cannot be kept exactly. */
export function encodeFreeForm(value: object, path: string): string {
  const problem = freeFormProblem(value, path)
  if (problem) throw invalidAt(problem.path, problem.message)
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
  const stack: Array<[unknown, string]> = [[value, path]]
  while (stack.length > 0) {
    const [node, at] = stack.pop()!
    if (typeof node === 'string') {
      if (!node.isWellFormed()) return at
    } else if (typeof node === 'object' && node !== null) {
      for (const [key, child] of Object.entries(node)) {
        if (!key.isWellFormed()) return at
        stack.push([child, `${at}/${pointerSegment(key)}`])
      }
    }
  }
  return undefined
}
