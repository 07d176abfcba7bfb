/**
 * Numbers as a page's language writes them, and how a number a person typed
 * there is read (CONTRACT 14). Everything is derived from what
 * `Intl.NumberFormat` writes for the language, so the page reads exactly
 * what its own hints, examples and receipt show.
 *
 * The reading is strict, never a guess. What is read, in the page's language:
 * - digits of one system: ASCII, or the language's native digits (Arabic's
 *   ٠-٩, Hindi's ०-९), never two systems in one number;
 * - at most one decimal separator, the language's (`,` in de, fr, pl, ru; `.`
 *   in en, ja, hi), with digits after it; digits before it may be left out
 *   (`,5` in de is 0.5);
 * - the language's grouping separator, only between the groups CLDR writes
 *   (threes; hi: 12,34,567), the first group starting with 1-9, never after
 *   the decimal separator. A language that groups with a space (fr, ru, pl,
 *   cs, sv ...) takes a plain space, a no-break space and a narrow no-break
 *   space alike, as people type any of them;
 * - full-width forms (`４１２．８`, as East Asian input methods type them)
 *   as the ASCII characters they stand for;
 * - no more significant digits than a double keeps exactly (a number that
 *   would be stored rounded is refused, never changed);
 * - an optional leading minus (`-`, `−` U+2212, or the one Intl writes), with
 *   the direction marks Intl puts around it (ar, he).
 * Anything else is refused: the other convention's decimal point where it
 * cannot be a grouping of threes (`412.80`, `1.5` or `0.125` in de;
 * `412,80` in en), `1,2,3`, a lone or trailing separator, two decimal
 * separators, grouping after the decimal separator, exponents, `+`, spaces
 * in a language that does not group with them.
 *
 * One case reads as the language writes it although another convention
 * would read it otherwise: a single grouping separator before exactly three
 * digits (`1.234` in de, `1,234` in en) is 1234, as CLDR, the page's hint and
 * its example write it; `1,234` in de (and `1.234` in en) is 1.234. But
 * when the person's region writes numbers the other way round (es-MX, de-CH,
 * en-ZA ...) and the value reads as another number there, it could mean two
 * things: it is refused.
 */
import { intlTag, type Locale } from './locales.ts'

/**
 * The digits a language may be written in besides ASCII ones: CLDR's native
 * decimal digits where people type them (ja, ko and zh native systems are
 * not positional decimal digits, or not typed in a number field).
 */
const NATIVE_DIGITS: Partial<Record<Locale, string>> = { ar: 'arab', hi: 'deva' }

/** How a number is written in one digit system of a language. */
interface Notation {
  /** Each digit's value, by its character. */
  digits: Map<string, number>
  decimal: string
  /** The characters read as grouping (one, or the three spaces). */
  groups: Set<string>
  /** The size of the last group before the decimal separator, and of the others (hi: 3 and 2). */
  primary: number
  secondary: number
}

interface Conventions {
  notations: Notation[]
  minus: Set<string>
  /** What the page shows as an example of a number (1234.5 as Intl writes it). */
  example: string
}

const SPACES = [' ', '\u00a0', '\u202f']
/** The direction marks Intl writes around a minus sign (LRM, RLM, ALM). */
const MARKS = new Set(['\u200e', '\u200f', '\u061c'])

/** By Intl tag: a language's own, or one with a region Intl knows for it (bounded by CLDR). */
const conventions = new Map<string, Conventions>()
const writers = new Map<Locale, Intl.NumberFormat>()

function writer(locale: Locale): Intl.NumberFormat {
  let made = writers.get(locale)
  // 100 fraction digits: Intl writes a double's shortest form, so what it writes reads back as the same number.
  if (!made) writers.set(locale, (made = new Intl.NumberFormat(intlTag(locale), { maximumFractionDigits: 100 })))
  return made
}

/** `value` as the page's language writes it (`412,8` in de, `1 234,5` in fr with a narrow no-break space). */
export function writeNumber(locale: Locale, value: number): string {
  return writer(locale).format(value)
}

/** An example of a number the page reads, as its language writes it (`1.234,5` in de). */
export const numberExample = (locale: Locale): string => conventionsOf(locale).example

/**
 * The Intl tag of `locale` with `region`, when Intl writes numbers for it
 * differently from the language (de-CH: `1’234.5`; es-MX: `1,234.5`).
 */
function regionalTag(locale: Locale, region: string): string | undefined {
  try {
    const tag = new Intl.Locale(intlTag(locale), { region }).toString()
    if (new Intl.Locale(new Intl.NumberFormat(tag).resolvedOptions().locale).region !== region) return undefined
    const [own, theirs] = [intlTag(locale), tag].map((t) => new Intl.NumberFormat(t).format(-1234567.5))
    return own === theirs ? undefined : tag
  } catch {
    return undefined
  }
}

function notation(tag: string, numberingSystem: string): Notation {
  const format = new Intl.NumberFormat(tag, {
    numberingSystem,
    useGrouping: 'always',
    maximumFractionDigits: 1,
  } as Intl.NumberFormatOptions)
  const parts = format.formatToParts(1234567890.5)
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? ''
  const integers = parts.filter((p) => p.type === 'integer').map((p) => [...p.value].length)
  const group = part('group')
  const plain = new Intl.NumberFormat(tag, { numberingSystem, useGrouping: false })
  const digits = new Map<string, number>()
  for (let digit = 0; digit <= 9; digit++) digits.set(plain.format(digit), digit)
  return {
    digits,
    decimal: part('decimal'),
    groups: new Set(SPACES.includes(group) ? SPACES : [group]),
    primary: integers.at(-1) ?? 3,
    secondary: integers.at(-2) ?? 3,
  }
}

function conventionsOf(locale: Locale, tag = intlTag(locale)): Conventions {
  let made = conventions.get(tag)
  if (made) return made
  const systems = new Set([new Intl.NumberFormat(tag).resolvedOptions().numberingSystem, 'latn'])
  const native = NATIVE_DIGITS[locale]
  if (native) systems.add(native)
  const minus = new Set(['-', '\u2212'])
  for (const system of systems) {
    const sign = new Intl.NumberFormat(tag, { numberingSystem: system })
      .formatToParts(-1)
      .find((p) => p.type === 'minusSign')
    if (sign) minus.add(sign.value)
  }
  made = { notations: [...systems].map((system) => notation(tag, system)), minus, example: writeNumber(locale, 1234.5) }
  conventions.set(tag, made)
  return made
}

/**
 * The number `text` is in the page's language, or undefined when it is not
 * written the way that language writes numbers (see above). Surrounding white
 * space is ignored.
 */
export function readNumber(locale: Locale, text: string, region?: string): number | undefined {
  const read = readWith(conventionsOf(locale), text)
  const regional = read === undefined || region === undefined ? undefined : regionalTag(locale, region)
  if (regional === undefined) return read
  // The person's region writes numbers another way round (es-MX `1,234` is 1234; es reads 1.234): a value
  // that reads as another number there could mean two things, and is refused.
  const theirs = readWith(conventionsOf(locale, regional), text)
  return theirs === undefined || theirs === read ? read : undefined
}

function readWith({ notations, minus }: Conventions, text: string): number | undefined {
  // Full-width digits and signs (`４１２．８`, what a Japanese, Chinese or Korean input method types) are the ASCII ones.
  const characters = [...text.normalize('NFKC').trim()]
  let at = 0
  const skipMarks = () => {
    while (at < characters.length && MARKS.has(characters[at]!)) at++
  }
  skipMarks()
  const negative = at < characters.length && minus.has(characters[at]!)
  if (negative) {
    at++
    skipMarks()
  }
  const body = characters.slice(at)
  // The digit system is the first digit's; every other digit must be of it too.
  const first = body.find((c) => notations.some((n) => n.digits.has(c)))
  const written = first === undefined ? undefined : notations.find((n) => n.digits.has(first))
  if (!written) return undefined

  let whole = ''
  let fraction: string | undefined
  const groups: string[] = []
  let current = ''
  for (const character of body) {
    const digit = written.digits.get(character)
    if (digit !== undefined) current += digit
    else if (character === written.decimal && fraction === undefined) {
      groups.push(current)
      current = ''
      fraction = ''
    } else if (written.groups.has(character) && fraction === undefined) {
      groups.push(current)
      current = ''
    } else return undefined
  }
  if (fraction === undefined) groups.push(current)
  else fraction = current
  if (fraction !== undefined && fraction === '') return undefined

  if (groups.length === 1) whole = groups[0]!
  else {
    const [head = '', ...rest] = groups
    const last = rest.at(-1)!
    if (head.length < 1 || head.length > written.secondary || head.startsWith('0')) return undefined
    if (last.length !== written.primary) return undefined
    if (rest.slice(0, -1).some((group) => group.length !== written.secondary)) return undefined
    whole = groups.join('')
  }
  if (whole === '' && fraction === undefined) return undefined
  const value = Number(`${negative ? '-' : ''}${whole || '0'}${fraction === undefined ? '' : `.${fraction}`}`)
  // More digits than a double holds would be stored rounded: a number that changed is refused, never kept.
  return meaningfulDigits(`${whole}${fraction ?? ''}`) === meaningfulDigits(Math.abs(value).toString().split('e')[0]!)
    ? value
    : undefined
}

/** The digits of a decimal without its point, leading zeros or trailing zeros: `0.0120` and `12` are both `12`. */
const meaningfulDigits = (digits: string) => digits.replace('.', '').replace(/^0+/, '').replace(/0+$/, '')
