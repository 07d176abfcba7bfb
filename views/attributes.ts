import { escapeHtml } from '@kitajs/html'
import type { ControlAttributes } from '../src/fields/types.ts'

/**
 * @kitajs/html escapes only `"` in attribute values; a value holding `&amp;`
 * would reach the browser as `&`. Escaping all of `& < > " '` ourselves makes
 * every value (an option, a default) come back exactly as the API client wrote it.
 */
export const attr = (value: string | number): string => (typeof value === 'number' ? String(value) : escapeHtml(value))

/** A control's attributes, escaped, with false and undefined ones left out. */
export function attributes(values: ControlAttributes): Record<string, string | true> {
  const out: Record<string, string | true> = {}
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || value === false) continue
    out[name] = value === true ? true : attr(value)
  }
  return out
}
