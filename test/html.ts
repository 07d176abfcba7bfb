/**
 * A light reading of an HTML page, as a person and a browser see it: its
 * text (tags dropped, entities decoded, spaces collapsed) and its inputs'
 * attributes. For tests that look at what a page says, not at its structure
 * (page.test.ts parses pages fully).
 */

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' }

export const decodeEntities = (raw: string) =>
  raw.replace(/&(?:(amp|lt|gt|quot|apos|nbsp);|#([0-9]+);|#[xX]([0-9a-fA-F]+);)/g, (_, name, dec, hex) =>
    name ? NAMED[name]! : String.fromCodePoint(dec ? Number(dec) : parseInt(hex, 16)),
  )

/** The page's text as read: the body without its tags, with spaces (and Intl's narrow ones) collapsed. */
export function pageText(html: string): string {
  const body = html.slice(html.indexOf('<body'))
  return decodeEntities(body.replace(/<[^>]*>/g, ' ')).replace(/[\s\u00a0\u202f]+/g, ' ').trim()
}

/** Every <input>'s attributes, decoded. */
export function inputsOf(html: string): Array<Record<string, string>> {
  return [...html.matchAll(/<input\b([^>]*)>/g)].map(([, attrs]) =>
    Object.fromEntries([...attrs!.matchAll(/([\w-]+)(?:="([^"]*)")?/g)].map(([, name, value]) => [name!.toLowerCase(), decodeEntities(value ?? '')])),
  )
}

/** The same spaces collapsed in an expected phrase (Intl writes narrow no-break spaces in times). */
export const collapsed = (text: string) => text.replace(/[\s\u00a0\u202f]+/g, ' ').trim()
