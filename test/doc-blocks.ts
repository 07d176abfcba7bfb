/**
 * The recipes of docs/*.md that tests run as written. A block a test runs is
 * marked in its page by a comment line just before its fence:
 *
 *     <!-- tested: nightly-backup (test/operating-recipes.test.ts) -->
 *     ```sh
 *     …
 *     ```
 *
 * (an HTML comment: the rendered page does not show it). `operatingBlock`
 * returns the text between the fences exactly, so what the test runs is what
 * an operator copies.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

const DOCS = join(resolve(import.meta.dir, '..'), 'docs')

/** The block marked `<!-- tested: NAME … -->` in docs/*.md. Throws when there is not exactly one. */
export function operatingBlock(name: string): string {
  const marker = new RegExp(`^<!-- tested: ${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[ )]`)
  const found = readdirSync(DOCS)
    .filter((page) => page.endsWith('.md'))
    .flatMap((page) => {
      const lines = readFileSync(join(DOCS, page), 'utf8').split('\n')
      return lines.flatMap((line, n) => (marker.test(line) ? [{ file: join(DOCS, page), lines, n }] : []))
    })
  if (found.length !== 1)
    throw new Error(`docs/ has ${found.length} blocks marked "<!-- tested: ${name} …"; expected exactly one`)
  const { file, lines, n: at } = found[0]!
  let open = at + 1
  while (open < lines.length && lines[open]!.trim() === '') open++
  const fence = /^(```+|~~~+)/.exec(lines[open] ?? '')?.[1]
  if (!fence) throw new Error(`the marker "<!-- tested: ${name} …" in ${file} is not followed by a fenced block`)
  const close = lines.findIndex((line, n) => n > open && line.startsWith(fence) && line.trim() === fence)
  if (close < 0) throw new Error(`the block "${name}" in ${file} is not closed`)
  return `${lines.slice(open + 1, close).join('\n')}\n`
}
