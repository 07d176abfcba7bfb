import type { Catalog } from '../index.ts'
import type { Locale } from '../locales.ts'
import { ar } from './ar.ts'
import { cs } from './cs.ts'
import { da } from './da.ts'
import { de } from './de.ts'
import { el } from './el.ts'
import { en } from './en.ts'
import { es } from './es.ts'
import { fi } from './fi.ts'
import { fr } from './fr.ts'
import { he } from './he.ts'
import { hi } from './hi.ts'
import { hu } from './hu.ts'
import { id } from './id.ts'
import { it } from './it.ts'
import { ja } from './ja.ts'
import { ko } from './ko.ts'
import { nb } from './nb.ts'
import { nl } from './nl.ts'
import { pl } from './pl.ts'
import { pt } from './pt.ts'
import { ptBR } from './pt-BR.ts'
import { ro } from './ro.ts'
import { ru } from './ru.ts'
import { sv } from './sv.ts'
import { tr } from './tr.ts'
import { uk } from './uk.ts'
import { vi } from './vi.ts'
import { zhHans } from './zh-Hans.ts'
import { zhHant } from './zh-Hant.ts'

/** Every language's catalog. A test holds each to English's keys, placeholders and the language's plural forms. */
export const catalogs: Record<Locale, Catalog> = {
  ar,
  cs,
  da,
  de,
  el,
  en,
  es,
  fi,
  fr,
  he,
  hi,
  hu,
  id,
  it,
  ja,
  ko,
  nb,
  nl,
  pl,
  pt,
  'pt-BR': ptBR,
  ro,
  ru,
  sv,
  tr,
  uk,
  vi,
  'zh-Hans': zhHans,
  'zh-Hant': zhHant,
}
