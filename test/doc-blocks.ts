/**
 * The recipes of docs/operating.md that tests run as written. A block a test
 * runs is marked in the guide by a comment line just before its fence:
 *
 *     <!-- tested: nightly-backup (test/operating-recipes.test.ts) -->
 *     ```sh
 *     …
 *     ```
 *
 * (an HTML comment: the rendered guide does not show it). `operatingBlock`
 * returns the text between the fences exactly, so what the test runs is what
 * an operator copies.
 */
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

const OPERATING_GUIDE = join(resolve(import.meta.dir, '..'), 'docs', 'operating.md')

/** The block marked `<!-- tested: NAME … -->` in `file` (the guide unless given). Throws when there is not exactly one. */
export function operatingBlock(name: string, file = OPERATING_GUIDE): string {
  const lines = readFileSync(file, 'utf8').split('\n')
  const marker = new RegExp(`^<!-- tested: ${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[ )]`)
  const at = lines.flatMap((line, n) => (marker.test(line) ? [n] : []))
  if (at.length !== 1)
    throw new Error(`${file} has ${at.length} blocks marked "<!-- tested: ${name} …"; expected exactly one`)
  let open = at[0]! + 1
  while (open < lines.length && lines[open]!.trim() === '') open++
  const fence = /^(```+|~~~+)/.exec(lines[open] ?? '')?.[1]
  if (!fence) throw new Error(`the marker "<!-- tested: ${name} …" in ${file} is not followed by a fenced block`)
  const close = lines.findIndex((line, n) => n > open && line.startsWith(fence) && line.trim() === fence)
  if (close < 0) throw new Error(`the block "${name}" in ${file} is not closed`)
  return `${lines.slice(open + 1, close).join('\n')}\n`
}
