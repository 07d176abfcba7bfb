import { describe, expect, test } from 'bun:test'
import type { Catalog } from '../src/i18n/catalog.ts'
import { en } from '../src/i18n/catalogs/en.ts'
import { catalogOf } from '../src/i18n/catalogs/index.ts'
import { SUPPORTED_LOCALES, translator } from '../src/i18n/index.ts'

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).sort()
const englishPlaceholders = (entry: Catalog[keyof Catalog]) =>
  typeof entry === 'string'
    ? placeholders(entry)
    : [...new Set(Object.values(entry).flatMap((form) => placeholders(form!)))].sort()
const intlTag = (locale: string) => (locale === 'pt' ? 'pt-PT' : locale)

describe('every language has a complete catalog', () => {
  for (const locale of SUPPORTED_LOCALES) {
    test(locale, () => {
      const catalog = catalogOf(locale)
      expect(catalog, `no catalog for ${locale}`).toBeDefined()
      const keys = Object.keys(catalog!).sort()
      const wanted = Object.keys(en).sort()
      expect(
        wanted.filter((key) => !keys.includes(key)),
        'missing keys',
      ).toEqual([])
      expect(
        keys.filter((key) => !wanted.includes(key)),
        'keys English does not have',
      ).toEqual([])

      const categories = new Intl.PluralRules(intlTag(locale)).resolvedOptions().pluralCategories.sort()
      for (const [key, english] of Object.entries(en) as Array<[keyof Catalog, Catalog[keyof Catalog]]>) {
        const entry = catalog![key]
        const expected = englishPlaceholders(english)
        if (typeof english === 'string') {
          expect(typeof entry, `${key} is one text, as in English`).toBe('string')
          expect(placeholders(entry as string), `${key} placeholders`).toEqual(expected)
          expect((entry as string).trim(), `${key} is empty`).not.toBe('')
        } else {
          expect(typeof entry, `${key} holds plural forms`).toBe('object')
          expect(Object.keys(entry).sort(), `${key} has the plural forms of ${locale}`).toEqual(categories)
          for (const [category, form] of Object.entries(entry)) {
            expect(form!.trim(), `${key}.${category} is empty`).not.toBe('')
            const used = placeholders(form!)
            expect(
              used.filter((name) => !expected.includes(name)),
              `${key}.${category} names a placeholder English does not`,
            ).toEqual([])
            // "one" may say the number in words ("eine Sekunde"); every other form shows every value.
            if (category !== 'one')
              expect([...new Set(used)].sort(), `${key}.${category} placeholders`).toEqual(expected)
          }
        }
      }
      if (locale !== 'en') {
        // Written in the language, not left in English: a handful (a separator, "{label}: {message}") may read the same.
        const same = Object.keys(en).filter(
          (key) => JSON.stringify(catalog![key as keyof Catalog]) === JSON.stringify(en[key as keyof typeof en]),
        )
        expect(same.length, `left as in English: ${same.join(', ')}`).toBeLessThanOrEqual(4)
      }
    })
  }

  test('variants of one language read differently where their usage differs', () => {
    const differing = (a: Catalog | undefined, b: Catalog | undefined) =>
      Object.keys(en).filter(
        (key) => JSON.stringify(a?.[key as keyof Catalog]) !== JSON.stringify(b?.[key as keyof Catalog]),
      ).length
    expect(differing(catalogOf('pt'), catalogOf('pt-BR'))).toBeGreaterThan(10)
    expect(differing(catalogOf('zh-Hans'), catalogOf('zh-Hant'))).toBeGreaterThan(40)
  })

  test('plural forms follow the language: Polish, Arabic and Japanese', () => {
    const seconds = (locale: 'pl' | 'ar' | 'ja', count: number) => translator(locale).t('status.retry_after', { count })
    // Polish: 1 sekundę, 2 sekundy, 5 sekund; each reads differently.
    expect(
      new Set([seconds('pl', 1), seconds('pl', 2).replace('2', '#'), seconds('pl', 5).replace('5', '#')]).size,
    ).toBe(3)
    expect(
      new Set([1, 2, 3, 11, 100].map((n) => seconds('ar', n).replace(/[\d٠-٩]+/, '#'))).size,
    ).toBeGreaterThanOrEqual(4)
    expect(seconds('ja', 5)).toContain('5')
  })
})
