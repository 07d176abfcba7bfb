/** @jsxImportSource @kitajs/html */
import { escapeHtml } from '@kitajs/html'
import type { Translator } from '../src/i18n/index.ts'

/**
 * An http(s) URL runs to the next space; an e-mail address is the page's
 * e-mail grammar (src/fields/email.ts) with a dot in the domain. Closing
 * punctuation after either belongs to the sentence.
 */
const LINK_IN_TEXT =
  /https?:\/\/\S+|[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+/g
const TRAILING_PUNCTUATION = /[.,;:!?)]+$/
/** What may stand right before an address: not a character that would have been part of it. */
const ADDRESS_START = /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]$/

/**
 * A description as the API client wrote it, with nothing lost and nothing
 * interpreted but three things (CONTRACT 11): blank lines part paragraphs,
 * lines starting with "- " make a list, http(s) URLs become links that
 * open in a new tab, and e-mail addresses become mailto: links. Everything
 * else is escaped text.
 */
export function RichText({ text, t, class: className }: { text: string; t: Translator; class?: string }) {
  const blocks = text
    .replaceAll('\r\n', '\n')
    .split(/\n[ \t]*\n+/)
    .filter((block) => block.trim() !== '')
  const html = blocks
    .map((block) => {
      const lines = block.split('\n')
      const out: string[] = []
      let paragraph: string[] = []
      let items: string[] = []
      const flushParagraph = () => {
        if (paragraph.length) out.push(`<p dir="auto">${paragraph.map((line) => linked(line, t)).join('<br>')}</p>`)
        paragraph = []
      }
      const flushList = () => {
        if (items.length) out.push(`<ul dir="auto">${items.map((item) => `<li>${linked(item, t)}</li>`).join('')}</ul>`)
        items = []
      }
      for (const line of lines) {
        if (line.startsWith('- ')) {
          flushParagraph()
          items.push(line.slice(2))
        } else {
          flushList()
          paragraph.push(line)
        }
      }
      flushParagraph()
      flushList()
      return out.join('')
    })
    .join('')
  // Every piece of `html` was escaped above, so it goes in as markup.
  return `<div class="${className ? `rich-text ${escapeHtml(className)}` : 'rich-text'}">${html}</div>`
}

/** One line, escaped, with its URLs and e-mail addresses as links. */
function linked(line: string, t: Translator): string {
  let out = ''
  let at = 0
  for (const match of line.matchAll(LINK_IN_TEXT)) {
    const text = match[0].replace(TRAILING_PUNCTUATION, '')
    const web = /^https?:/.test(text)
    if (web ? !URL.canParse(text) : ADDRESS_START.test(line.slice(0, match.index)) || !text.includes('@')) continue
    out += escapeHtml(line.slice(at, match.index))
    out += web
      ? `<a href="${escapeHtml(text)}" target="_blank" rel="noopener noreferrer nofollow">${escapeHtml(text)}` +
        `<span class="visually-hidden"> ${escapeHtml(t.t('page.new_tab'))}</span></a>`
      : // A mail program opens: no new tab to announce.
        `<a href="mailto:${escapeHtml(mailtoAddress(text))}">${escapeHtml(text)}</a>`
    at = match.index + text.length
  }
  return out + escapeHtml(line.slice(at))
}

/** An address as a mailto: URL holds it (RFC 6068): `%`, `/`, `?` and `#` percent-encoded, so no part of it reads as a header. */
const mailtoAddress = (address: string) =>
  address.replace(/[%/?#]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
