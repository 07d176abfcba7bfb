import { Type } from '@sinclair/typebox'
import type { Problem } from '../lib/errors.ts'

/**
 * The HTML autofill field names by control group (WHATWG HTML, "Autofill"):
 * a browser fills a control only with a token of a group its control takes,
 * so a token outside them is a mistake the agent should hear about.
 */
const TEXT_GROUP = [
  'name', 'honorific-prefix', 'given-name', 'additional-name', 'family-name', 'honorific-suffix', 'nickname',
  'organization-title', 'organization', 'address-line1', 'address-line2', 'address-line3', 'address-level4',
  'address-level3', 'address-level2', 'address-level1', 'country', 'country-name', 'postal-code', 'cc-name',
  'cc-given-name', 'cc-additional-name', 'cc-family-name', 'cc-number', 'cc-csc', 'cc-type', 'transaction-currency',
  'language', 'sex', 'one-time-code',
]

/** The tokens each field type's control takes, its most useful first (an error message names the first few). */
export const AUTOCOMPLETE_TOKENS = {
  text: TEXT_GROUP,
  // The Multiline group: only a textarea can hold a whole street address.
  textarea: ['street-address', ...TEXT_GROUP],
  email: ['email', 'username'],
  date: ['bday'],
} as const satisfies Record<string, readonly string[]>

export type AutocompleteControl = keyof typeof AUTOCOMPLETE_TOKENS

export const Autocomplete = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'An HTML autofill token that fits the control, such as name, postal-code, street-address (textarea), email or bday (date); "off" or "on"; optionally after "shipping " or "billing "',
})

/** A 422 problem (path relative to config) when `token` is not one the control takes; undefined when it is. */
export function autocompleteProblem(control: AutocompleteControl, token: string | undefined): Problem | undefined {
  if (token === undefined || fitsControl(control, token)) return undefined
  const examples = AUTOCOMPLETE_TOKENS[control].slice(0, 5).map((t) => `"${t}"`).join(', ')
  return {
    path: '/autocomplete',
    message: `Not an autofill token for a ${control} field; use one such as ${examples}, or "off" (see the HTML autofill field list)`,
    code: 'invalid_value',
  }
}

function fitsControl(control: AutocompleteControl, token: string): boolean {
  // As the HTML attribute: case-insensitive, tokens separated by whitespace, an address kind first.
  const words = token.trim().toLowerCase().split(/[\t\n\f\r ]+/)
  if (words.length === 1 && (words[0] === 'off' || words[0] === 'on')) return true
  if (words.length > 2 || (words.length === 2 && words[0] !== 'shipping' && words[0] !== 'billing')) return false
  return (AUTOCOMPLETE_TOKENS[control] as readonly string[]).includes(words.at(-1)!)
}
