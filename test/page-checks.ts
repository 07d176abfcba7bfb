/**
 * What every page a person sees must be (CONTRACT 6), for the page tests that
 * live outside test/page.test.ts: the headers, no script, no inline handler.
 */
import { expect } from 'bun:test'
import { type Page, parsePage } from './html.ts'
import type { TestResponse } from './utils.ts'

const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

/** An HTML page with the given status and the CONTRACT 6 headers; returns it parsed. */
export async function expectPage(res: TestResponse, status: number): Promise<Page> {
  expect({ status: res.status, text: res.status === status ? '' : res.text.slice(0, 500) }).toEqual({
    status,
    text: '',
  })
  expect(res.headers.get('content-type') ?? '').toMatch(/^text\/html\s*(;|$)/i)
  expect(res.headers.get('content-security-policy')).toBe(CSP)
  expect(res.headers.get('cache-control')).toBe('no-store')
  expect(res.text.toLowerCase()).not.toContain('<script')
  expect(res.text).not.toMatch(/\sstyle=/i)
  const page = await parsePage(res.text)
  const handlers = page.nodes.flatMap((n) =>
    Object.keys(n.attrs)
      .filter((name) => name.startsWith('on'))
      .map((name) => `${n.tag}[${name}]`),
  )
  expect(handlers).toEqual([])
  expect(page.one('html').attrs.lang ?? '').not.toBe('')
  // Ids are unique, as valid HTML needs (labels, aria-describedby and links rely on them).
  const ids = page.nodes.map((n) => n.attrs.id).filter((id) => id !== undefined)
  expect(ids.length).toBe(new Set(ids).size)
  return page
}

/** Nothing a client wrote became markup: no element or attribute of its own. */
export function expectNoInjectedMarkup(page: Page) {
  expect(page.all('b')).toEqual([])
  expect(page.all('script')).toEqual([])
  expect(page.html.toLowerCase()).not.toContain('<script')
  const attributeNames = new Set(page.nodes.flatMap((n) => Object.keys(n.attrs)))
  for (const name of ['onmouseover', "x'", 'x', "'"]) expect(attributeNames.has(name)).toBe(false)
}

/** A client's texts that would become markup if they were not escaped. */
export const SCRIPT = `"><script>alert(1)</script>`
export const HOVER = `' onmouseover='x`
export const AMP = '&amp;'
