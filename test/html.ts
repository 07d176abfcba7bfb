/**
 * Pages as a browser reads them: parsed with Bun's HTMLRewriter and
 * entity-decoded, so assertions see attribute values and text after decoding.
 */
import { expect } from 'bun:test'

export interface Node {
  tag: string
  /** Attribute values as a browser reads them (entities decoded). */
  attrs: Record<string, string>
  /** All descendant text as a browser reads it (entities decoded; a textarea's first newline dropped). */
  text: string
  /** Document order: start < every descendant's start, end > every descendant's end. */
  start: number
  end: number
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' }

/**
 * Decodes character references as a browser does. Strict: a "&" that does not
 * start an unambiguous reference fails the test, since a browser might read
 * something else there (`&copy` becomes ©) than what the API client wrote.
 */
export function decodeEntities(raw: string): string {
  let out = ''
  let i = 0
  while (i < raw.length) {
    const amp = raw.indexOf('&', i)
    if (amp === -1) {
      out += raw.slice(i)
      break
    }
    out += raw.slice(i, amp)
    const match = /^&(?:(amp|lt|gt|quot|apos|nbsp);|#([0-9]+);|#[xX]([0-9a-fA-F]+);)/.exec(raw.slice(amp))
    if (!match) throw new Error(`unescaped "&" in the page: ${JSON.stringify(raw.slice(amp, amp + 20))}`)
    if (match[1]) out += NAMED[match[1]]
    else out += String.fromCodePoint(match[2] ? Number(match[2]) : parseInt(match[3]!, 16))
    i = amp + match[0].length
  }
  return out
}

export class Page {
  constructor(
    readonly html: string,
    readonly nodes: Node[],
  ) {}

  all(tag: string): Node[] {
    return this.nodes.filter((n) => n.tag === tag)
  }

  one(tag: string): Node {
    const list = this.all(tag)
    expect(list.map((n) => n.tag)).toEqual([tag])
    return list[0]!
  }

  byId(id: string): Node {
    const list = this.nodes.filter((n) => n.attrs.id === id)
    expect(list.map((n) => n.attrs.id)).toEqual([id])
    return list[0]!
  }

  hasId(id: string): boolean {
    return this.nodes.some((n) => n.attrs.id === id)
  }

  /** The control of a field: the element with id "field-<key>". */
  control(key: string): Node {
    return this.byId(`field-${key}`)
  }

  /** The one label tied to a field's control. */
  label(key: string): Node {
    const list = this.nodes.filter((n) => n.tag === 'label' && n.attrs.for === `field-${key}`)
    expect(list).toHaveLength(1)
    return list[0]!
  }

  /** Elements inside `outer`. */
  within(outer: Node, tag?: string): Node[] {
    return this.nodes.filter((n) => n.start > outer.start && n.end < outer.end && (tag === undefined || n.tag === tag))
  }

  /** Elements whose whole text is exactly `text`. */
  withText(text: string): Node[] {
    return this.nodes.filter((n) => n.text === text)
  }

  /** The text a person reads in the body. */
  get bodyText(): string {
    return this.one('body').text
  }

  /** The error summary's links, by the field key they point at ("#field-<key>"). */
  summaryLinks(): Map<string, Node> {
    const links = new Map<string, Node>()
    for (const a of this.all('a')) {
      const href = a.attrs.href ?? ''
      if (href.startsWith('#field-')) links.set(href.slice('#field-'.length), a)
    }
    return links
  }

  describedBy(node: Node): string[] {
    return (node.attrs['aria-describedby'] ?? '').split(/\s+/).filter(Boolean)
  }

  /** What a browser sends when this page's form is submitted as it stands (no file chosen). */
  browserEntries(): Array<[string, string]> {
    const form = this.one('form')
    const entries: Array<[string, string]> = []
    for (const node of this.within(form)) {
      const name = node.attrs.name
      if (name === undefined || 'disabled' in node.attrs) continue
      if (node.tag === 'input') {
        const type = (node.attrs.type ?? 'text').toLowerCase()
        if (type === 'file' || type === 'submit' || type === 'button' || type === 'reset') continue
        if (type === 'checkbox' || type === 'radio') {
          if ('checked' in node.attrs) entries.push([name, node.attrs.value ?? 'on'])
          continue
        }
        entries.push([name, node.attrs.value ?? ''])
      } else if (node.tag === 'textarea') {
        // A textarea's value is submitted with CRLF line breaks.
        entries.push([name, node.text.replace(/\r\n|\r|\n/g, '\r\n')])
      } else if (node.tag === 'select') {
        const options = this.within(node, 'option')
        const chosen = options.find((o) => 'selected' in o.attrs) ?? options[0]
        if (chosen) entries.push([name, chosen.attrs.value ?? chosen.text.trim()])
      }
    }
    return entries
  }
}

/** Parses a page as a browser would read it. */
export async function parsePage(html: string): Promise<Page> {
  type Raw = { tag: string; attrs: Array<[string, string]>; raw: string; start: number; end: number }
  const raws: Raw[] = []
  const open: Raw[] = []
  let seq = 0
  await new HTMLRewriter()
    .on('*', {
      element(el) {
        const raw: Raw = { tag: el.tagName.toLowerCase(), attrs: [...el.attributes], raw: '', start: seq++, end: -1 }
        raws.push(raw)
        if (!el.canHaveContent || el.selfClosing) {
          raw.end = seq++
          return
        }
        open.push(raw)
        el.onEndTag(() => {
          raw.end = seq++
          open.splice(open.lastIndexOf(raw), 1)
        })
      },
    })
    .onDocument({
      text(chunk) {
        for (const raw of open) raw.raw += chunk.text
      },
    })
    .transform(new Response(html))
    .text()
  const nodes = raws.map((raw) => {
    if (raw.end === -1) raw.end = seq++
    // The HTML parser drops one newline right after <textarea>.
    const text = raw.tag === 'textarea' ? raw.raw.replace(/^\r?\n/, '') : raw.raw
    return {
      tag: raw.tag,
      attrs: Object.fromEntries(raw.attrs.map(([name, value]) => [name.toLowerCase(), decodeEntities(value)])),
      text: decodeEntities(text),
      start: raw.start,
      end: raw.end,
    }
  })
  return new Page(html, nodes)
}

/** The page's text as read: the body without its tags, with spaces (and Intl's narrow ones) collapsed. */
export function pageText(html: string): string {
  const body = html.slice(html.indexOf('<body'))
  return decodeEntities(body.replace(/<[^>]*>/g, ' '))
    .replace(/[\s\u00a0\u202f]+/g, ' ')
    .trim()
}

/** Every <input>'s attributes, decoded. */
export function inputsOf(html: string): Array<Record<string, string>> {
  return [...html.matchAll(/<input\b([^>]*)>/g)].map(([, attrs]) =>
    Object.fromEntries(
      [...attrs!.matchAll(/([\w-]+)(?:="([^"]*)")?/g)].map(([, name, value]) => [
        name!.toLowerCase(),
        decodeEntities(value ?? ''),
      ]),
    ),
  )
}

/** The same spaces collapsed in an expected phrase (Intl writes narrow no-break spaces in times). */
export const collapsed = (text: string) => text.replace(/[\s\u00a0\u202f]+/g, ' ').trim()
