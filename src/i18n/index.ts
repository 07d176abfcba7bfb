import { createLruCache } from '../lib/lru.ts'
import type { Catalog } from './catalog.ts'
import { en, type MessageKey } from './catalogs/en.ts'
import { catalogOf } from './catalogs/index.ts'
import { DEFAULT_LOCALE, directionOf, intlTag, type Locale, negotiateLanguage } from './locales.ts'

export type { MessageKey } from './catalogs/en.ts'
export {
  type Locale,
  languageOfTag,
  matchLocale,
  negotiateLanguage,
  negotiateLocale,
  SUPPORTED_LOCALES,
} from './locales.ts'

/**
 * A value a message shows, written for the page's language: numbers with its
 * digits and separators, a calendar date (`YYYY-MM-DD`) as its dates read, a
 * size in its units, a file field's `accept` list as the kinds of file it names.
 */
type MessageParam = string | number | { date: string } | { bytes: number } | { fileTypes: string }
export type MessageParams = Record<string, MessageParam>

/** Words the page will write, not yet in any language: what fields and services hand the page. */
export interface Message {
  key: MessageKey
  params?: MessageParams
}

/** The parts of a date as the memorable date input asks for them. */
export type DatePart = 'day' | 'month' | 'year'

export interface Translator {
  locale: Locale
  /**
   * The region dates and times are written with (`GB` for en-GB: "27 November
   * 2026"), when the tag that chose the language named one Intl knows for it.
   * Words and numbers are the language's, whatever the region.
   */
  region: string | undefined
  dir: 'ltr' | 'rtl'
  t(key: MessageKey, params?: MessageParams): string
  /** A moment (epoch ms) with its date, time and zone, as `time_zone` reads it. */
  dateTime(ms: number, timeZone: string): string
  /** A calendar date, `YYYY-MM-DD`. */
  date(ymd: string): string
  size(bytes: number): string
  /** How long is left (ms), in whole units never more than is left: days and hours from a day on, hours and minutes below, at least a minute. */
  duration(ms: number): string
  /** The order the language writes a date's day, month and year in. */
  dateOrder: readonly DatePart[]
  /** A calendar date (`YYYY-MM-DD`) as the numbers a person types for it, in `dateOrder`: "27 3 2007". */
  dateExample(ymd: string): string
}

const translators = new Map<Locale, Translator>()

/**
 * Translators for a language and a region, by both: the regions of a language
 * Intl knows are bounded by CLDR, but a client can name any, so the
 * translators kept are bounded too (one costs little to make again).
 */
const REGIONAL_TRANSLATORS_KEPT = 256
const regionalTranslators = createLruCache<Translator>({
  maxEntries: REGIONAL_TRANSLATORS_KEPT,
  maxBytes: Number.MAX_SAFE_INTEGER,
  maxEntryBytes: Number.MAX_SAFE_INTEGER,
  sizeOf: () => 0,
})

/** Languages whose dates run year, month, day (the memorable date input asks in that order). */
const YEAR_FIRST = new Set<Locale>(['hu', 'ja', 'ko', 'zh-Hans', 'zh-Hant'])

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

/**
 * The page's words and formats in `locale` (made once per language), its
 * dates written with `region` (`GB`, `AT`, `419`) when Intl knows that region
 * for the language; otherwise as the language's own.
 */
export function translator(locale: Locale = DEFAULT_LOCALE, region?: string): Translator {
  let made = translators.get(locale)
  if (!made) {
    made = makeTranslator(locale, undefined)
    translators.set(locale, made)
  }
  if (region === undefined) return made
  const base = made
  return regionalTranslators.getOrMake(`${locale} ${region}`, () => {
    const known = knownRegion(locale, region)
    return known === undefined ? base : makeTranslator(locale, known)
  })
}

/** `region` as Intl spells it, when Intl writes dates for `locale` in it and they are not the language's own tag's; else undefined. */
function knownRegion(locale: Locale, region: string): string | undefined {
  try {
    const own = new Intl.Locale(intlTag(locale))
    const tag = new Intl.Locale(own.toString(), { region })
    if (tag.region === undefined || tag.region === own.region) return undefined
    const resolved = new Intl.Locale(new Intl.DateTimeFormat(tag.toString()).resolvedOptions().locale)
    return resolved.region === tag.region ? tag.region : undefined
  } catch {
    return undefined
  }
}

function makeTranslator(locale: Locale, region: string | undefined): Translator {
  const catalog: Catalog = catalogOf(locale)
  const tag = intlTag(locale)
  // Dates and times with the region; words and numbers with the language alone.
  const dateTag = region === undefined ? tag : new Intl.Locale(tag, { region }).toString()
  const direction = directionOf(locale)
  // Made on first use: the first DateTimeFormat of a process loads ICU's data (about 10 ms),
  // which a request that writes no date (a form post's 303) should not pay.
  const plurals = once(() => new Intl.PluralRules(tag))
  const numbers = once(() => new Intl.NumberFormat(tag, { maximumFractionDigits: 20 }))
  const dates = once(() => new Intl.DateTimeFormat(dateTag, { dateStyle: 'long', timeZone: 'UTC' }))
  const durations = once(() => new (Intl as unknown as IntlWithDurations).DurationFormat(tag, { style: 'long' }))
  const plainNumbers = once(() => new Intl.NumberFormat(tag, { useGrouping: false }))
  const dateOrder: readonly DatePart[] = YEAR_FIRST.has(locale) ? ['year', 'month', 'day'] : ['day', 'month', 'year']
  const alternatives = once(() => new Intl.ListFormat(tag, { type: 'disjunction' }))
  const sizeFormats = (['byte', 'kilobyte', 'megabyte'] as const).map((unit) =>
    once(
      () =>
        new Intl.NumberFormat(tag, {
          style: 'unit',
          unit,
          unitDisplay: unit === 'byte' ? 'long' : 'short',
          maximumFractionDigits: 1,
        }),
    ),
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
    const number = parts
      .filter((part) => part.type !== 'unit' && part.type !== 'literal')
      .map((part) => part.value)
      .join('')
    const unitName = parts
      .filter((part) => part.type === 'unit')
      .map((part) => part.value)
      .join('')
      .replaceAll(' ', '\u00a0')
    // ICU writes Hebrew kilobytes unit first with no space at all ("kB\u200f1"): the number goes first, as for megabytes.
    const unitFirst =
      parts.findIndex((part) => part.type === 'unit') < parts.findIndex((part) => part.type === 'integer')
    const between = parts
      .filter((part) => part.type === 'literal')
      .map((part) => part.value)
      .join('')
    const gap = /[\u202f\u00a0]/.exec(between)?.[0] ?? (/\s/.test(between) || unitFirst ? '\u00a0' : '\u2060')
    const written = `${number}${gap}${unitName}`
    return direction === 'rtl' ? `\u2067${written}\u2069` : written
  }

  function fileTypes(accept: string): string {
    const kinds = new Set<string>()
    for (const token of accept
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean)) {
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
    return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
      Object.hasOwn(params, name) ? shown(params[name]!) : whole,
    )
  }

  function dateTime(ms: number, timeZone: string): string {
    const format = dateTimeFormats.getOrMake(
      `${dateTag} ${timeZone}`,
      () =>
        new Intl.DateTimeFormat(dateTag, {
          year: 'numeric',
          month: 'long',
          day: 'numeric',
          hour: 'numeric',
          minute: '2-digit',
          timeZone,
          timeZoneName: 'short',
        }),
    )
    return format.format(ms)
  }

  function duration(ms: number): string {
    const minutes = Math.max(1, Math.floor(ms / 60_000))
    if (minutes >= 24 * 60)
      return durations().format({
        days: Math.floor(minutes / (24 * 60)),
        hours: Math.floor((minutes % (24 * 60)) / 60),
      })
    if (minutes >= 60) return durations().format({ hours: Math.floor(minutes / 60), minutes: minutes % 60 })
    return durations().format({ minutes })
  }

  function dateExample(ymd: string): string {
    const [year, month, day] = ymd.split('-').map(Number) as [number, number, number]
    const parts = { day, month, year }
    return dateOrder.map((part) => plainNumbers().format(parts[part])).join(' ')
  }

  return { locale, region, dir: directionOf(locale), t: text, dateTime, date, size, duration, dateOrder, dateExample }
}

/** Intl.DurationFormat (in Bun, not yet in TypeScript's lib). */
interface IntlWithDurations {
  DurationFormat: new (
    tag: string,
    options: { style: 'long' },
  ) => { format(duration: { days?: number; hours?: number; minutes?: number }): string }
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
  const remembered = requestLanguages.get(request)
  if (remembered) return remembered
  const { locale, region } = negotiateLanguage(request.headers.get('accept-language'))
  return translator(locale, region)
}
