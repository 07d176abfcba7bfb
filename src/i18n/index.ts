import { createLruCache } from '../lib/lru.ts'
import { en, type MessageKey } from './catalogs/en.ts'
import { catalogs } from './catalogs/index.ts'
import { DEFAULT_LOCALE, directionOf, negotiateLocale, type Locale } from './locales.ts'

export { matchLocale, negotiateLocale, directionOf, SUPPORTED_LOCALES, DEFAULT_LOCALE, type Locale } from './locales.ts'
export type { MessageKey } from './catalogs/en.ts'

/** A message's text, or its plural forms by CLDR plural category, chosen by the `count` parameter. */
export type PluralForms = Partial<Record<Intl.LDMLPluralRule, string>>
export type Catalog = Record<MessageKey, string | PluralForms>

/**
 * A value a message shows, written for the page's language: numbers with its
 * digits and separators, a calendar date (`YYYY-MM-DD`) as its dates read, a
 * size in its units, a file field's `accept` list as the kinds of file it names.
 */
export type MessageParam = string | number | { date: string } | { bytes: number } | { fileTypes: string }
export type MessageParams = Record<string, MessageParam>

/** Words the page will write, not yet in any language: what fields and services hand the page. */
export interface Message {
  key: MessageKey
  params?: MessageParams
}

export interface Translator {
  locale: Locale
  dir: 'ltr' | 'rtl'
  t(key: MessageKey, params?: MessageParams): string
  /** A moment (epoch ms) with its date, time and zone, as `time_zone` reads it. */
  dateTime(ms: number, timeZone: string): string
  /** A calendar date, `YYYY-MM-DD`. */
  date(ymd: string): string
  size(bytes: number): string
}

/** Intl's tag for a locale: our `pt` is Portugal's Portuguese, which Intl calls `pt-PT` (its `pt` is Brazil's). */
const intlTag = (locale: Locale) => (locale === 'pt' ? 'pt-PT' : locale)

const translators = new Map<Locale, Translator>()

/**
 * The formats that write a moment in a zone, by language and zone, shared by
 * every translator. Zones are what clients send (a form's `page.time_zone`),
 * and each format holds ICU's data for its language and zone, about 34 KiB
 * (bench/time-zones.ts): so the cache is bounded in entries and in bytes, the
 * least recently used going first. 200 covers the zones a server's pages
 * are really read in; another is made again in well under a millisecond.
 */
export const DATE_TIME_FORMATS_KEPT = { maxEntries: 200, maxBytes: 8 * 1024 * 1024 } as const
/** What one format holds, near enough (measured: 34 KiB). */
const DATE_TIME_FORMAT_BYTES = 40 * 1024
const dateTimeFormats = createLruCache<Intl.DateTimeFormat>({
  ...DATE_TIME_FORMATS_KEPT,
  maxEntryBytes: DATE_TIME_FORMAT_BYTES,
  sizeOf: () => DATE_TIME_FORMAT_BYTES,
})

/** What the date-time format cache holds now (for tests and benches). */
export const dateTimeFormatsKept = () => dateTimeFormats.size()

/** The page's words and formats in `locale` (made once per language). */
export function translator(locale: Locale = DEFAULT_LOCALE): Translator {
  let made = translators.get(locale)
  if (!made) {
    made = makeTranslator(locale)
    translators.set(locale, made)
  }
  return made
}

function makeTranslator(locale: Locale): Translator {
  const catalog: Catalog = catalogs[locale]
  const tag = intlTag(locale)
  const direction = directionOf(locale)
  // Made on first use: the first DateTimeFormat of a process loads ICU's data (about 10 ms),
  // which a request that writes no date (a form post's 303) should not pay.
  const plurals = once(() => new Intl.PluralRules(tag))
  const numbers = once(() => new Intl.NumberFormat(tag, { maximumFractionDigits: 20 }))
  const dates = once(() => new Intl.DateTimeFormat(tag, { dateStyle: 'long', timeZone: 'UTC' }))
  const alternatives = once(() => new Intl.ListFormat(tag, { type: 'disjunction' }))
  const sizeFormats = (['byte', 'kilobyte', 'megabyte'] as const).map((unit) =>
    once(() => new Intl.NumberFormat(tag, { style: 'unit', unit, unitDisplay: unit === 'byte' ? 'long' : 'short', maximumFractionDigits: 1 })),
  )

  const date = (ymd: string) => {
    const [year, month, day] = ymd.split('-').map(Number) as [number, number, number]
    return dates().format(Date.UTC(year, month - 1, day))
  }

  /**
   * A size as one unbreakable piece: the number, then the unit after a
   * no-break space (a word joiner where the language writes none), never a
   * line between them; on a right-to-left page, isolated right to left, so it
   * reads the same beside a Latin file name.
   */
  function size(bytes: number): string {
    let value = bytes
    let unit = 0
    while (value >= 1024 && unit < sizeFormats.length - 1) {
      value /= 1024
      unit++
    }
    const parts = sizeFormats[unit]!().formatToParts(value)
    const number = parts.filter((part) => part.type !== 'unit' && part.type !== 'literal').map((part) => part.value).join('')
    const unitName = parts.filter((part) => part.type === 'unit').map((part) => part.value).join('').replaceAll(' ', '\u00a0')
    // ICU writes Hebrew kilobytes unit first with no space at all ("kB\u200f1"): the number goes first, as for megabytes.
    const unitFirst = parts.findIndex((part) => part.type === 'unit') < parts.findIndex((part) => part.type === 'integer')
    const between = parts.filter((part) => part.type === 'literal').map((part) => part.value).join('')
    const gap = /[\u202f\u00a0]/.exec(between)?.[0] ?? (/\s/.test(between) || unitFirst ? '\u00a0' : '\u2060')
    const written = `${number}${gap}${unitName}`
    return direction === 'rtl' ? `\u2067${written}\u2069` : written
  }

  function fileTypes(accept: string): string {
    const kinds = new Set<string>()
    for (const token of accept.split(',').map((t) => t.trim().toLowerCase()).filter(Boolean)) {
      const family = /^(image|audio|video|text)\/\*$/.exec(token)?.[1]
      if (family) kinds.add(text(`file.kind.${family}` as MessageKey))
      else if (token.startsWith('.')) kinds.add(token.slice(1).toUpperCase())
      else kinds.add((token.split('/')[1] ?? token).replace(/^(?:x-|vnd\.)/, '').toUpperCase())
    }
    return alternatives().format([...kinds])
  }

  function shown(param: MessageParam): string {
    if (typeof param === 'number') return numbers().format(param)
    if (typeof param === 'string') return param
    if ('date' in param) return date(param.date)
    if ('bytes' in param) return size(param.bytes)
    return fileTypes(param.fileTypes)
  }

  function text(key: MessageKey, params: MessageParams = {}): string {
    const entry = catalog[key] ?? en[key]
    let template: string
    if (typeof entry === 'string') template = entry
    else {
      const count = typeof params.count === 'number' ? params.count : 0
      template = entry[plurals().select(count)] ?? entry.other ?? ''
    }
    return template.replace(/\{(\w+)\}/g, (whole, name: string) => (Object.hasOwn(params, name) ? shown(params[name]!) : whole))
  }

  function dateTime(ms: number, timeZone: string): string {
    const format = dateTimeFormats.getOrMake(`${locale} ${timeZone}`, () =>
      new Intl.DateTimeFormat(tag, { year: 'numeric', month: 'long', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone, timeZoneName: 'short' }),
    )
    return format.format(ms)
  }

  return { locale, dir: directionOf(locale), t: text, dateTime, date, size }
}

/** `make()`'s value, made the first time it is asked for. */
function once<T>(make: () => T): () => T {
  let made: T | undefined
  return () => (made ??= make())
}

/**
 * `zone` as Intl spells it (`aMerica/new_york` is `America/New_York`), or
 * undefined when this runtime does not know it. Intl matches names without
 * regard to case and keeps a link (an older name such as
 * `America/Argentina/ComodRivadavia` or `Asia/Calcutta`) as that name, in its
 * own case: both write the same times as the zone they link to.
 */
export function canonicalTimeZone(zone: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en', { timeZone: zone }).resolvedOptions().timeZone
  } catch {
    return undefined
  }
}

/**
 * The language a request's page was chosen in, once a route knows it (a form's
 * `page.locale`): an error page for that request (413, 408, 400) speaks it
 * too. Requests not marked get Accept-Language's choice.
 */
const requestLanguages = new WeakMap<Request, Translator>()

export function rememberPageLanguage(request: Request, t: Translator): Translator {
  requestLanguages.set(request, t)
  return t
}

export function pageLanguageOf(request: Request): Translator {
  return requestLanguages.get(request) ?? translator(negotiateLocale(request.headers.get('accept-language')))
}
