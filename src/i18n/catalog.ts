import type { MessageKey } from './catalogs/en.ts'

/** A message's text, or its plural forms by CLDR plural category, chosen by the `count` parameter. */
type PluralForms = Partial<Record<Intl.LDMLPluralRule, string>>

/** One language's words: every key English has (a test holds each catalog to English's keys and placeholders). */
export type Catalog = Record<MessageKey, string | PluralForms>
