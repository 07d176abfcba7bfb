import { Type } from '@sinclair/typebox'
import type { Problem } from '../lib/errors.ts'

/**
 * The HTML autofill field names by control group (WHATWG HTML, "Autofill"):
 * a browser fills a control only with a token of a group its control takes,
 * so a token outside them is a mistake the agent should hear about.
 */
const TEXT_GROUP = [
  'name',
  'honorific-prefix',
  'given-name',
  'additional-name',
  'family-name',
  'honorific-suffix',
  'nickname',
  'organization-title',
  'organization',
  'address-line1',
  'address-line2',
  'address-line3',
  'address-level4',
  'address-level3',
  'address-level2',
  'address-level1',
  'country',
  'country-name',
  'postal-code',
  'cc-name',
  'cc-given-name',
  'cc-additional-name',
  'cc-family-name',
  'cc-number',
  'cc-csc',
  'cc-type',
  'transaction-currency',
  'language',
  'sex',
  'one-time-code',
]

/** The Tel group: a text field with one of these is a phone number, and gets the phone keypad (`type="tel"`). */
const TEL_GROUP = [
  'tel',
  'tel-national',
  'tel-country-code',
  'tel-area-code',
  'tel-local',
  'tel-local-prefix',
  'tel-local-suffix',
  'tel-extension',
]

/**
 * What a browser can fill into a drop-down: a token whose values come from a
 * short closed list (a country, a month), matched against the options' values or labels.
 */
const CHOICE_GROUP = [
  'country',
  'country-name',
  'address-level1',
  'address-level2',
  'sex',
  'language',
  'honorific-prefix',
  'honorific-suffix',
  'organization-title',
  'cc-type',
  'cc-exp-month',
  'cc-exp-year',
  'bday-day',
  'bday-month',
  'bday-year',
  'transaction-currency',
]

/** The tokens each field type's control takes, its most useful first (an error message names the first few). */
const AUTOCOMPLETE_TOKENS = {
  text: [TEXT_GROUP[0]!, TEL_GROUP[0]!, ...TEXT_GROUP.slice(1), ...TEL_GROUP.slice(1)],
  // The Multiline group: only a textarea can hold a whole street address.
  textarea: ['street-address', ...TEXT_GROUP],
  email: ['email', 'username'],
  date: ['bday'],
  select: CHOICE_GROUP,
} as const satisfies Record<string, readonly string[]>

export type AutocompleteControl = keyof typeof AUTOCOMPLETE_TOKENS

export const Autocomplete = Type.String({
  minLength: 1,
  maxLength: 100,
  description:
    'An HTML autofill token that fits the control, such as name, postal-code, tel (a text field shown with the phone keypad), street-address (textarea), email, bday (date) or country (select); "off" or "on"; optionally after "shipping " or "billing "',
})

/** A 422 problem (path relative to config) when `token` is not one the control takes; undefined when it is. */
export function autocompleteProblem(control: AutocompleteControl, token: string | undefined): Problem | undefined {
  if (token === undefined || fitsControl(control, token)) return undefined
  const examples = AUTOCOMPLETE_TOKENS[control]
    .slice(0, 5)
    .map((t) => `"${t}"`)
    .join(', ')
  return {
    path: '/autocomplete',
    message: `Not an autofill token for a ${control} field; use one such as ${examples}, or "off" (see the HTML autofill field list)`,
    code: 'invalid_value',
  }
}

/** Whether `token` (one that fits a text field) names a phone number: the field is then `type="tel"`. */
export const isTelToken = (token: string | undefined) =>
  token !== undefined && TEL_GROUP.includes(fieldName(token) ?? '')

function fitsControl(control: AutocompleteControl, token: string): boolean {
  const words = tokenWords(token)
  if (words.length === 1 && (words[0] === 'off' || words[0] === 'on')) return true
  const name = fieldName(token)
  return name !== undefined && (AUTOCOMPLETE_TOKENS[control] as readonly string[]).includes(name)
}

/** As the HTML attribute: case-insensitive, tokens separated by whitespace. */
const tokenWords = (token: string) =>
  token
    .trim()
    .toLowerCase()
    .split(/[\t\n\f\r ]+/)

/** The field name a token ends with, after an optional address kind; undefined when the shape is wrong. */
function fieldName(token: string): string | undefined {
  const words = tokenWords(token)
  if (words.length > 2 || (words.length === 2 && words[0] !== 'shipping' && words[0] !== 'billing')) return undefined
  return words.at(-1)
}
