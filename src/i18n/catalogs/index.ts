import type { Catalog } from '../index.ts'
import type { Locale } from '../locales.ts'
import { en } from './en.ts'

/** Every language's catalog. A test holds each to English's keys, placeholders and the language's plural forms. */
export const catalogs: Partial<Record<Locale, Catalog>> = { en }
