/** @jsxImportSource @kitajs/html */
import { escapeHtml } from '@kitajs/html'
import type { Translator } from '../src/i18n/index.ts'

/** An http(s) URL runs to the next space; closing punctuation after it belongs to the sentence. */
const URL_IN_TEXT = /https?:\/\/\S+/g
const TRAILING_PUNCTUATION = /[.,;:!?)]+$/

/**
 * A description as the API client wrote it, with nothing lost and nothing
 * interpreted but three things (CONTRACT 11): blank lines part paragraphs,
 * lines starting with "- " make a list, and http(s) URLs become links that
 * open in a new tab. Everything else is escaped text.
 */
export function RichText({ text, t, class: className }: { text: string; t: Translator; class?: string }) {
  const blocks = text.replaceAll('\r\n', '\n').split(/\n[ \t]*\n+/).filter((block) => block.trim() !== '')
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

/** One line, escaped, with its URLs as links. */
function linked(line: string, t: Translator): string {
  let out = ''
  let at = 0
  for (const match of line.matchAll(URL_IN_TEXT)) {
    const url = match[0].replace(TRAILING_PUNCTUATION, '')
    if (!URL.canParse(url)) continue
    out += escapeHtml(line.slice(at, match.index))
    out +=
      `<a href="${escapeHtml(url)}" target="_blank" rel="noopener noreferrer nofollow">${escapeHtml(url)}` +
      `<span class="visually-hidden"> ${escapeHtml(t.t('page.new_tab'))}</span></a>`
    at = match.index + url.length
  }
  return out + escapeHtml(line.slice(at))
}
