/** @jsxImportSource @kitajs/html */
import type { Translator } from '../src/i18n/index.ts'

/** The button that sends the answer: the API client's `page.submit_label` (their words, `dir="auto"`), else the page's own. */
export function SendButton({ label, t }: { label: string | undefined; t: Translator }) {
  return label ? (
    <button type="submit" dir="auto" safe>
      {label}
    </button>
  ) : (
    <button type="submit" safe>
      {t.t('page.submit')}
    </button>
  )
}
