import type { TSchema } from '@sinclair/typebox'
import { FORM_FILES_MAX_SIZE, fileMaxSize } from '../../fields/file.ts'
import { checkFieldConfig, type FieldDefinition, fieldTypes } from '../../fields/index.ts'
import { canonicalTimeZone, matchLocale, SUPPORTED_LOCALES } from '../../i18n/index.ts'
import { type Problem, ProblemList, pointerSegment } from '../../lib/errors.ts'
import type { TimeSlicer } from '../../lib/slices.ts'
import { parseDuration } from '../../lib/time.ts'
import { collectControlCharacters, collectProblems, isPlainObject } from '../../lib/validation.ts'
import { CreateFormBody, EXPIRES_IN_MAX_MS, PAGE_LIMITS, type PageSettings } from './model.ts'

/** The members of a create body kept as given: JSON the client owns, never shown or matched. */
const FREE_FORM = ['context', 'callback_metadata', 'settings'] as const

/**
 * The create body typed, or a 422 listing its problems (the first
 * PROBLEMS_LISTED): its schema, control characters in any text intake shows
 * or matches, and the rules its schema cannot express. Every step is linear
 * in the body, and the fields are checked a slice of time at a time.
 */
export async function checkCreateBody(input: unknown, slices: TimeSlicer): Promise<CreateFormBody> {
  const problems = new ProblemList()
  for (const problem of listsTooLong(input)) problems.add(problem)
  problems.throwIfAny()
  // The page object is checked by checkPage, which gives every problem its code.
  const { page, ...rest } = isPlainObject(input) ? input : { page: undefined }
  collectProblems(CreateFormBody, isPlainObject(input) ? rest : input, problems)
  if (page !== undefined) checkPage(page, problems)
  // What follows reads the body as its schema types it (and so bounds it).
  problems.throwIfAny()
  const body = input as CreateFormBody
  await slices.pause()
  collectControlCharacters(body, problems, FREE_FORM)
  await slices.pause()

  const fields = body.fields as FieldDefinition[]
  const keys = new Set<string>()
  for (const [index, field] of fields.entries()) {
    if (keys.has(field.key))
      problems.add({ path: `/fields/${index}/key`, message: `Duplicate key "${field.key}"`, code: 'not_unique' })
    keys.add(field.key)
    problems.addAll(await checkFieldConfig(field), `/fields/${index}`)
    await slices.pause()
  }
  const fileSizes = fields
    .filter((field) => field.type === 'file')
    .reduce((total, field) => total + fileMaxSize(field.config), 0)
  if (fileSizes > FORM_FILES_MAX_SIZE) {
    problems.add({
      path: '/fields',
      message: `The file fields' max_size may add up to at most ${FORM_FILES_MAX_SIZE} bytes (100 MiB)`,
      code: 'too_large',
    })
  }
  if (body.callback_events !== undefined && body.callback_url == null) {
    problems.add({
      path: '/callback_url',
      message: 'Required with callback_events: the URL their webhooks are sent to',
      code: 'required',
    })
  }
  if (body.callback_url != null && !isHttpUrl(body.callback_url)) {
    problems.add({ path: '/callback_url', message: 'Expected an absolute http or https URL', code: 'invalid_format' })
  }
  if (body.expires_in != null && parseDuration(body.expires_in)! > EXPIRES_IN_MAX_MS) {
    problems.add({ path: '/expires_in', message: 'Must be at most 365 days', code: 'too_large' })
  }
  problems.throwIfAny()
  // One zone, one spelling, whatever case it came in (CONTRACT 13a): stored and returned as Intl spells it.
  if (body.page?.time_zone !== undefined)
    return { ...body, page: { ...body.page, time_zone: canonicalTimeZone(body.page.time_zone)! } }
  return body
}

/**
 * The lists of a create body longer than its schema allows: the fields, and
 * each field's config lists (a select's options, a multiple default). Found
 * before the schema's own error walk, which visits every item of a list it
 * already knows is too long (200,000 options held the event loop 230-300 ms).
 * A select's options past the bound are `too_large` (CONTRACT 13a).
 */
function listsTooLong(input: unknown): Problem[] {
  if (!isPlainObject(input) || !Array.isArray(input.fields)) return []
  const fieldsMax = CreateFormBody.properties.fields.maxItems!
  if (input.fields.length > fieldsMax)
    return [{ path: '/fields', message: `Must have at most ${fieldsMax} items`, code: 'too_long' }]
  const problems: Problem[] = []
  input.fields.forEach((field: unknown, index) => {
    if (
      !isPlainObject(field) ||
      !isPlainObject(field.config) ||
      typeof field.type !== 'string' ||
      !Object.hasOwn(fieldTypes, field.type)
    )
      return
    for (const [name, schema] of Object.entries(fieldTypes[field.type]!.config.properties)) {
      const list = field.config[name]
      const max = maxItemsOf(schema)
      if (!Array.isArray(list) || max === undefined || list.length <= max) continue
      const path = `/fields/${index}/config/${name}`
      if (field.type === 'select' && name === 'options')
        problems.push({ path, message: `Must have at most ${max} options`, code: 'too_large' })
      else problems.push({ path, message: `Must have at most ${max} items`, code: 'too_long' })
    }
  })
  return problems
}

/** The most items a schema's array (or the array among a union's variants) may hold. */
function maxItemsOf(schema: TSchema): number | undefined {
  const array =
    schema.type === 'array'
      ? schema
      : (schema.anyOf as TSchema[] | undefined)?.find((variant) => variant.type === 'array')
  return array?.maxItems
}

/** The longest `locale` looked at: BCP 47 tags in use are far shorter, and Intl need not parse a megabyte. */
const LOCALE_MAX_LENGTH = 64
const TIME_ZONE_MAX_LENGTH = 100

/**
 * The problems of a create body's `page` (CONTRACT 11), each with its code:
 * only the keys PageSettings names, each a string within its bounds (but
 * `review`, a boolean), a locale that some supported language matches, a
 * time zone this runtime knows. Control characters are found with the rest of the body's texts.
 */
function checkPage(page: unknown, problems: ProblemList): void {
  if (page === null) return
  if (!isPlainObject(page)) {
    problems.add({ path: '/page', message: 'Expected an object', code: 'invalid_type' })
    return
  }
  const bounds: Record<Exclude<keyof PageSettings, 'review'>, { min: number; max: number }> = {
    locale: { min: 1, max: LOCALE_MAX_LENGTH },
    submit_label: { min: 1, max: PAGE_LIMITS.submitLabel },
    success_message: { min: 0, max: PAGE_LIMITS.successMessage },
    sender: { min: 1, max: PAGE_LIMITS.sender },
    time_zone: { min: 1, max: TIME_ZONE_MAX_LENGTH },
  }
  for (const [key, value] of Object.entries(page)) {
    const path = `/page/${pointerSegment(key)}`
    if (key === 'review') {
      if (typeof value !== 'boolean') problems.add({ path, message: 'Expected a boolean', code: 'invalid_type' })
      continue
    }
    if (!Object.hasOwn(bounds, key)) {
      problems.add({
        path,
        message: `Unknown key; the page takes ${[...Object.keys(bounds), 'review'].join(', ')}`,
        code: 'unknown_key',
      })
      continue
    }
    if (typeof value !== 'string') {
      problems.add({ path, message: 'Expected a string', code: 'invalid_type' })
      continue
    }
    const { min, max } = bounds[key as keyof typeof bounds]
    if (value.length > max) {
      problems.add({ path, message: `Must be at most ${max} characters`, code: 'too_long' })
    } else if (value.length < min || (min > 0 && value.trim() === '')) {
      // A button or a sender of nothing but spaces says nothing.
      problems.add({ path, message: 'Must not be empty', code: 'too_short' })
    } else if (key === 'locale' && matchLocale(value) === undefined) {
      problems.add({
        path,
        message: `No supported language matches "${value}"; supported: ${SUPPORTED_LOCALES.join(', ')}`,
        code: 'invalid_value',
      })
    } else if (key === 'time_zone' && canonicalTimeZone(value) === undefined) {
      problems.add({
        path,
        message: `Unknown time zone "${value}"; expected an IANA name such as Europe/Berlin or UTC`,
        code: 'invalid_value',
      })
    }
  }
}

function isHttpUrl(text: string): boolean {
  // `new URL` forgives surrounding spaces and "https:host"; a callback URL must be written out plainly.
  if (!/^https?:\/\/[^\s]+$/i.test(text)) return false
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}
