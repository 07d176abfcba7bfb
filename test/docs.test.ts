/**
 * The docs a newcomer reads hold together: every relative link reaches a file
 * and a heading that exist, no page outgrows what one sitting reads, every
 * setting intake reads is in docs/settings.md, and docs/api.md is what
 * `bun run docs:api` writes from today's OpenAPI document.
 */
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { API_REFERENCE, apiReference } from '../scripts/api-reference.ts'

const ROOT = resolve(import.meta.dir, '..')
const PAGES = [
  'README.md',
  'SECURITY.md',
  'CHANGELOG.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name)),
]
const read = (page: string) => readFileSync(join(ROOT, page), 'utf8')

/** A page's lines outside fenced code blocks. */
function prose(text: string): string[] {
  let fence: string | undefined
  return text.split('\n').filter((line) => {
    const opening = /^\s*(```+|~~~+)/.exec(line)?.[1]
    if (opening && (fence === undefined || opening.startsWith(fence))) {
      fence = fence === undefined ? opening : undefined
      return false
    }
    return fence === undefined
  })
}

/** The anchors GitHub gives a page's headings: lowercased, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const line of prose(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    result.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return result
}

/** Relative links of a page's prose: `[text](target)`, without http(s) or mailto ones. */
function relativeLinks(text: string): string[] {
  return prose(text)
    .flatMap((line) => [...line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!))
    .filter((target) => !/^[a-z]+:/i.test(target))
}

describe('links', () => {
  for (const page of PAGES) {
    test(`every relative link of ${page} reaches a file and a heading`, () => {
      const broken: string[] = []
      for (const link of relativeLinks(read(page))) {
        const [path = '', anchor] = link.split('#')
        const target = path === '' ? page : relative(ROOT, resolve(dirname(join(ROOT, page)), path))
        if (!existsSync(join(ROOT, target))) broken.push(`${link}: no file ${target}`)
        else if (anchor !== undefined && !anchors(read(target)).has(anchor))
          broken.push(`${link}: no heading #${anchor} in ${target}`)
      }
      expect(broken).toEqual([])
    })
  }
})

test('no Markdown page is over 800 lines, and the README at most 300', () => {
  const lines = (page: string) => read(page).split('\n').length - 1
  expect(PAGES.filter((page) => lines(page) > 800)).toEqual([])
  expect(lines('README.md')).toBeLessThanOrEqual(300)
})

test('docs/settings.md lists every setting intake reads', () => {
  const settings = new Set(read('src/config.ts').match(/SERVICE_[A-Z_]+/g))
  const page = read('docs/settings.md')
  expect([...settings].filter((name) => !page.includes(`| \`${name}\` |`))).toEqual([])
})

test('docs/api.md is what `bun run docs:api` writes from the OpenAPI document today', async () => {
  expect(readFileSync(API_REFERENCE, 'utf8')).toBe(await apiReference())
})
