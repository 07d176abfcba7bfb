import type { Catalog } from '../catalog.ts'
import type { Locale } from '../locales.ts'

/**
 * Each language's catalog, read the first time a page is written in it: a
 * server whose pages are read in two languages does not load 29 at start.
 * `require` (not `import()`) keeps the translator synchronous; the bundler
 * still builds every catalog into the binary (each catalog is tagged @public:
 * knip does not follow `require`).
 */
const load: Record<Locale, () => Catalog> = {
  ar: () => (require('./ar.ts') as typeof import('./ar.ts')).ar,
  cs: () => (require('./cs.ts') as typeof import('./cs.ts')).cs,
  da: () => (require('./da.ts') as typeof import('./da.ts')).da,
  de: () => (require('./de.ts') as typeof import('./de.ts')).de,
  el: () => (require('./el.ts') as typeof import('./el.ts')).el,
  en: () => (require('./en.ts') as typeof import('./en.ts')).en,
  es: () => (require('./es.ts') as typeof import('./es.ts')).es,
  fi: () => (require('./fi.ts') as typeof import('./fi.ts')).fi,
  fr: () => (require('./fr.ts') as typeof import('./fr.ts')).fr,
  he: () => (require('./he.ts') as typeof import('./he.ts')).he,
  hi: () => (require('./hi.ts') as typeof import('./hi.ts')).hi,
  hu: () => (require('./hu.ts') as typeof import('./hu.ts')).hu,
  id: () => (require('./id.ts') as typeof import('./id.ts')).id,
  it: () => (require('./it.ts') as typeof import('./it.ts')).it,
  ja: () => (require('./ja.ts') as typeof import('./ja.ts')).ja,
  ko: () => (require('./ko.ts') as typeof import('./ko.ts')).ko,
  nb: () => (require('./nb.ts') as typeof import('./nb.ts')).nb,
  nl: () => (require('./nl.ts') as typeof import('./nl.ts')).nl,
  pl: () => (require('./pl.ts') as typeof import('./pl.ts')).pl,
  pt: () => (require('./pt.ts') as typeof import('./pt.ts')).pt,
  'pt-BR': () => (require('./pt-BR.ts') as typeof import('./pt-BR.ts')).ptBR,
  ro: () => (require('./ro.ts') as typeof import('./ro.ts')).ro,
  ru: () => (require('./ru.ts') as typeof import('./ru.ts')).ru,
  sv: () => (require('./sv.ts') as typeof import('./sv.ts')).sv,
  tr: () => (require('./tr.ts') as typeof import('./tr.ts')).tr,
  uk: () => (require('./uk.ts') as typeof import('./uk.ts')).uk,
  vi: () => (require('./vi.ts') as typeof import('./vi.ts')).vi,
  'zh-Hans': () => (require('./zh-Hans.ts') as typeof import('./zh-Hans.ts')).zhHans,
  'zh-Hant': () => (require('./zh-Hant.ts') as typeof import('./zh-Hant.ts')).zhHant,
}

const loaded = new Map<Locale, Catalog>()

/** A language's catalog. A test holds each to English's keys, placeholders and the language's plural forms. */
export function catalogOf(locale: Locale): Catalog {
  let catalog = loaded.get(locale)
  if (!catalog) {
    catalog = load[locale]()
    loaded.set(locale, catalog)
  }
  return catalog
}
