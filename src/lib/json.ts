import { invalidAt } from './errors.ts'

/** Deeper JSON than this is refused: nothing legitimate needs it, and serialising it could exhaust the stack. */
export const MAX_JSON_DEPTH = 100

/** Depth of a parsed JSON value (a scalar is 0), counted without recursion. */
export function jsonDepth(value: unknown): number {
  let deepest = 0
  const stack: Array<[unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (typeof node !== 'object' || node === null) continue
    const level = depth + 1
    if (level > deepest) deepest = level
    if (level > MAX_JSON_DEPTH) return level
    for (const child of Object.values(node)) stack.push([child, level])
  }
  return deepest
}

/** Compact JSON of a free-form object the client gave, or a 422 at `path` when it nests too deeply. */
export function encodeFreeForm(value: object, path: string): string {
  if (jsonDepth(value) > MAX_JSON_DEPTH) throw invalidAt(path, `Must not nest deeper than ${MAX_JSON_DEPTH} levels`)
  return JSON.stringify(value)
}

export const utf8Length = (text: string) => Buffer.byteLength(text, 'utf8')
