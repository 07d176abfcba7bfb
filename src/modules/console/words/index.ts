import { translator } from '../../../i18n/index.ts'
import { deliveries } from './deliveries.ts'
import { events } from './events.ts'
import { forms } from './forms.ts'
import { keys } from './keys.ts'
import { overview } from './overview.ts'
import { shell } from './shell.ts'

/**
 * The console's words: one catalog per page group, combined here. English
 * only for now; another language is another combined catalog with the same
 * keys, chosen where consoleWords is called.
 */
const EN = { ...shell, ...forms, ...overview, ...keys, ...deliveries, ...events } as const

type ConsoleWordKey = keyof typeof EN
type ConsoleParams = Record<string, string | number>

export interface ConsoleWords {
  locale: 'en'
  t(key: ConsoleWordKey, params?: ConsoleParams): string
  /** A number as the language writes it. */
  number(n: number): string
  /** A moment (epoch ms) in UTC, as the language writes it, with its zone. */
  dateTime(ms: number): string
}

const plurals = new Intl.PluralRules('en')
const numbers = new Intl.NumberFormat('en')
const page = translator('en')

const words: ConsoleWords = {
  locale: 'en',
  t(key, params = {}) {
    const entry: string | Partial<Record<Intl.LDMLPluralRule, string>> = EN[key]
    const template =
      typeof entry === 'string'
        ? entry
        : (entry[plurals.select(typeof params.count === 'number' ? params.count : 0)] ?? entry.other ?? '')
    return template.replace(/\{(\w+)\}/g, (whole, name: string) => {
      if (!Object.hasOwn(params, name)) return whole
      const value = params[name]!
      return typeof value === 'number' ? words.number(value) : value
    })
  },
  number: (n) => numbers.format(n),
  dateTime: (ms) => page.dateTime(ms, 'UTC'),
}

/** The console's words (English: the only language it speaks yet). */
export const consoleWords = (): ConsoleWords => words
