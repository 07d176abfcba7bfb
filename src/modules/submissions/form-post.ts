import { composeDate, DATE_PARTS, datePartName, type UnreadableDate } from '../../fields/date.ts'
import { fileMaxSize } from '../../fields/file.ts'
import type { FieldDefinition } from '../../fields/index.ts'
import { Upload } from '../../fields/types.ts'
import type { FormEntry } from '../../lib/form-data.ts'
import type { IncomingFile } from '../responses/files.ts'
import type { PostedHolds } from './files.ts'
import { RepeatedValue } from './service.ts'

/** Reading a form post: its values by field key, the files it may keep, and whether another site made it. */

/**
 * A form post as the submission service takes it: strings and uploads by
 * field key (keys starting with "_" belong to the page, not the form), the
 * strings alone, to show the person again if something needs fixing, and
 * what the page says of files kept from the last try (`_held_<key>`,
 * `_remove_<key>`). A multiple select's key comes once per ticked box: its
 * values are collected, in the order sent, into an array (nothing ticked:
 * absent). Any other key sent more than once is a RepeatedValue, which the
 * service refuses (the page shows the first value sent): never "the last one
 * wins" (CONTRACT 13a). A memorable date's three boxes (`_day_<key>`,
 * `_month_<key>`, `_year_<key>`) become its field's `YYYY-MM-DD` value (none
 * when all are empty; an UnreadableDate the date field refuses when they name
 * no date), and are kept as typed, to show again.
 */
export function formPostValues(entries: Array<FormEntry<IncomingFile>>, fields: FieldDefinition[]) {
  const multiple = new Set(
    fields.filter((field) => field.type === 'select' && field.config?.multiple === true).map((field) => field.key),
  )
  // No prototype: a field key can never reach Object.prototype.
  const values: Record<string, string | string[] | Upload | RepeatedValue | UnreadableDate> = Object.create(null)
  const typed: Record<string, string | string[]> = Object.create(null)
  const holds: PostedHolds = { ids: new Map(), removed: new Set() }
  const dateBoxes = new Map(
    fields
      .filter((field) => field.type === 'date')
      .flatMap((field) => DATE_PARTS.map((part) => [datePartName(part, field.key), field.key])),
  )
  const datesTyped = new Set<string>()
  const datesRepeated = new Set<string>()
  for (const [key, entry] of entries) {
    if (key.startsWith('_')) {
      if (typeof entry !== 'string') continue
      const dateKey = dateBoxes.get(key)
      if (dateKey !== undefined) {
        // A box sent twice is the field's value sent twice.
        if (key in typed) datesRepeated.add(dateKey)
        else typed[key] = entry
        datesTyped.add(dateKey)
      } else if (key.startsWith(HELD_PREFIX)) holds.ids.set(key.slice(HELD_PREFIX.length), entry)
      else if (key.startsWith(REMOVE_PREFIX)) holds.removed.add(key.slice(REMOVE_PREFIX.length))
      continue
    }
    if (typeof entry === 'string' && multiple.has(key)) {
      const chosen = typed[key]
      if (Array.isArray(chosen)) chosen.push(entry)
      else {
        values[key] = typed[key] = [entry]
      }
    } else if (key in values) {
      values[key] = REPEATED
    } else if (typeof entry === 'string') {
      values[key] = entry
      typed[key] = entry
    } else {
      values[key] = new Upload(entry.filename, entry.type, entry.size, entry.fileId)
    }
  }
  for (const key of datesTyped) {
    const parts = { day: '', month: '', year: '' }
    for (const part of DATE_PARTS) parts[part] = (typed[datePartName(part, key)] as string | undefined) ?? ''
    const composed = composeDate(parts)
    if (key in values || datesRepeated.has(key)) values[key] = REPEATED
    else if (composed !== undefined) values[key] = composed
    // What the page shows of it elsewhere (the boxes show the parts): the date, or what was typed.
    typed[key] ??= typeof composed === 'string' ? composed : `${parts.day} ${parts.month} ${parts.year}`.trim()
  }
  return { values, typed, holds }
}

const REPEATED = new RepeatedValue()

/** The page's names for a file kept from the last try, and for removing it (views/Field.tsx writes them). */
const HELD_PREFIX = '_held_'
const REMOVE_PREFIX = '_remove_'

/** The most bytes of each file field that are kept: its max_size (a file beyond it is refused; a part for no file field keeps nothing). */
export function fileAllowances(fields: FieldDefinition[]): Map<string, number> {
  return new Map(fields.filter((field) => field.type === 'file').map((field) => [field.key, fileMaxSize(field.config)]))
}

/**
 * A browser's POST made by another site's page: `Sec-Fetch-Site` says so (in
 * any case), or, where a browser sends no such header, `Origin` names an
 * origin that is neither intake's (the base URL's) nor the request's own.
 * `Origin: null` (sent under `Referrer-Policy: no-referrer`) is not.
 */
export function isCrossSite(request: Request, baseUrl: string): boolean {
  const fetchSite = request.headers.get('sec-fetch-site')
  if (fetchSite !== null) return fetchSite.trim().toLowerCase() === 'cross-site'
  const origin = request.headers.get('origin')
  if (origin === null || origin.trim() === '' || origin.trim().toLowerCase() === 'null') return false
  const sender = originOf(origin.trim())
  if (sender === undefined) return true
  // The request's own origin is what its Host header names (Bun builds request.url from it).
  return sender !== originOf(baseUrl) && sender !== originOf(request.url)
}

/** The serialised origin of a URL (scheme, host and a non-default port, lower case), or undefined. */
function originOf(url: string): string | undefined {
  try {
    const origin = new URL(url).origin
    return origin === 'null' ? undefined : origin
  } catch {
    return undefined
  }
}
