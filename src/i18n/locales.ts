/**
 * The languages the page speaks, and how a tag (from `page.locale` or
 * `Accept-Language`) picks one (CONTRACT 11).
 */
export const SUPPORTED_LOCALES = [
  'ar',
  'cs',
  'da',
  'de',
  'el',
  'en',
  'es',
  'fi',
  'fr',
  'he',
  'hi',
  'hu',
  'id',
  'it',
  'ja',
  'ko',
  'nb',
  'nl',
  'pl',
  'pt',
  'pt-BR',
  'ro',
  'ru',
  'sv',
  'tr',
  'uk',
  'vi',
  'zh-Hans',
  'zh-Hant',
] as const

export type Locale = (typeof SUPPORTED_LOCALES)[number]

export const DEFAULT_LOCALE: Locale = 'en'

/** Intl's tag for a locale: our `pt` is Portugal's Portuguese, which Intl calls `pt-PT` (its `pt` is Brazil's). */
export const intlTag = (locale: Locale) => (locale === 'pt' ? 'pt-PT' : locale)

const BY_LOWER_CASE = new Map<string, Locale>(SUPPORTED_LOCALES.map((tag) => [tag.toLowerCase(), tag]))

/** Languages whose script runs right to left. */
const RIGHT_TO_LEFT = new Set<Locale>(['ar', 'he'])

export const directionOf = (locale: Locale): 'rtl' | 'ltr' => (RIGHT_TO_LEFT.has(locale) ? 'rtl' : 'ltr')

/**
 * The supported locale a BCP 47 tag means, or undefined. A supported tag
 * matches as written (in any case); otherwise CLDR's likely subtags decide:
 * `de-AT` is `de`, `zh-TW` is `zh-Hant`, `nn` is `nb`, `pt-PT` is `pt`.
 */
export function matchLocale(tag: string): Locale | undefined {
  const exact = BY_LOWER_CASE.get(tag.trim().toLowerCase())
  if (exact) return exact
  let locale: Intl.Locale
  try {
    locale = new Intl.Locale(tag.trim()).maximize()
  } catch {
    return undefined
  }
  const language = locale.language
  if (language === 'zh') return locale.script === 'Hant' ? 'zh-Hant' : 'zh-Hans'
  if (language === 'no' || language === 'nn' || language === 'nb') return 'nb'
  if (language === 'pt') return locale.region === 'BR' ? 'pt-BR' : 'pt'
  // Legacy codes some systems still send.
  if (language === 'iw') return 'he'
  if (language === 'in') return 'id'
  return BY_LOWER_CASE.get(language)
}

/**
 * The best supported locale for an `Accept-Language` header: the tags in
 * order of their q-values (ties in the order sent; q=0 means "not this"),
 * the first that matches; English when none does.
 */
export function negotiateLocale(header: string | null | undefined): Locale {
  return negotiateLanguage(header).locale
}

/**
 * A language and the region the tag that chose it names (`en-GB`: en, GB), if
 * it names one: dates on the page are written with that region.
 */
export interface PageLanguage {
  locale: Locale
  region: string | undefined
}

/** The region a BCP 47 tag names (`de-AT`: AT, `es-419`: 419), or undefined. */
function regionOf(tag: string): string | undefined {
  try {
    return new Intl.Locale(tag.trim()).region
  } catch {
    return undefined
  }
}

/** `page.locale`'s language and region, when it names a supported language. */
export function languageOfTag(tag: string): PageLanguage | undefined {
  const locale = matchLocale(tag)
  return locale === undefined ? undefined : { locale, region: regionOf(tag) }
}

/** negotiateLocale's choice, with the region of the range that chose it. */
export function negotiateLanguage(header: string | null | undefined): PageLanguage {
  if (!header) return { locale: DEFAULT_LOCALE, region: undefined }
  const ranges: Array<{ tag: string; q: number; at: number }> = []
  // A header is short in practice; a hostile one is cut to its first 64 ranges.
  for (const [at, part] of header.split(',').slice(0, 64).entries()) {
    const [tag = '', ...parameters] = part.split(';').map((piece) => piece.trim())
    if (tag === '' || tag === '*') continue
    let q = 1
    for (const parameter of parameters) {
      const match = /^q\s*=\s*([01](?:\.\d{0,3})?)$/i.exec(parameter)
      if (match) q = Math.min(1, Number(match[1]))
      else if (/^q\s*=/i.test(parameter)) q = 0
    }
    if (q > 0) ranges.push({ tag, q, at })
  }
  ranges.sort((a, b) => b.q - a.q || a.at - b.at)
  for (const range of ranges) {
    const chosen = languageOfTag(range.tag)
    if (chosen) return chosen
  }
  return { locale: DEFAULT_LOCALE, region: undefined }
}
