import { Type } from '@sinclair/typebox'
import type { Message } from '../i18n/index.ts'
import type { Problem } from '../lib/errors.ts'
import { EMPTY, type FieldType, isBlank, rejected, Upload } from './types.ts'

const FILE_DEFAULT_MAX_SIZE = 10 * 1024 * 1024
const FILE_LIMIT_MAX_SIZE = 25 * 1024 * 1024
/**
 * How far past its field's max_size a file is still read (and its excess
 * dropped) to be refused on the page next to its field, everything else kept
 * (CONTRACT 14): a phone's photo for a field of a few megabytes. A post larger
 * than that gets the "too large" page.
 */
const FILE_OVERSIZE_READ = 25 * 1024 * 1024
/** All of one form's files together: what one submission may make the server hold in memory. */
export const FORM_FILES_MAX_SIZE = 100 * 1024 * 1024

interface FileConfig {
  accept?: string
  max_size?: number
}

/** The largest file a file field's config accepts. */
export const fileMaxSize = (config: FileConfig | undefined) => config?.max_size ?? FILE_DEFAULT_MAX_SIZE

// One token of the HTML accept attribute: ".pdf", "image/*" or "application/pdf".
const ACCEPT_TOKEN = /^(?:\.[A-Za-z0-9][A-Za-z0-9._+-]*|[A-Za-z0-9!#$&^_.+-]+\/(?:\*|[A-Za-z0-9!#$&^_.+-]+))$/

const acceptTokens = (accept: string) =>
  accept
    .split(',')
    .map((token) => token.trim())
    .filter((token) => token !== '')

export const file: FieldType<FileConfig> = {
  name: 'file',
  config: Type.Object(
    {
      accept: Type.Optional(
        Type.String({ maxLength: 1000, description: 'As the HTML accept attribute, e.g. "image/*,.pdf"' }),
      ),
      max_size: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: FILE_LIMIT_MAX_SIZE,
          default: FILE_DEFAULT_MAX_SIZE,
          description: 'Largest accepted file, in bytes',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  checkConfig(config) {
    const problems: Problem[] = []
    if (config.accept !== undefined) {
      const tokens = acceptTokens(config.accept)
      const bad = tokens.find((token) => !ACCEPT_TOKEN.test(token))
      if (tokens.length === 0 || bad !== undefined) {
        problems.push({
          path: '/accept',
          message: 'Expected a comma-separated list of extensions (".pdf") or media types ("image/*")',
          code: 'invalid_format',
        })
      }
    }
    return problems
  },
  parse(input, config) {
    // A browser sends an empty, nameless part when no file was chosen.
    if (isBlank(input) || (input instanceof Upload && input.name === '' && input.size === 0)) return EMPTY
    // A JSON body cannot carry a file; the page uploads with multipart/form-data.
    if (!(input instanceof Upload)) return rejected('A file must be uploaded with multipart/form-data', 'invalid_type')
    const maxSize = fileMaxSize(config)
    if (input.size > maxSize)
      return rejected(`The file must be at most ${formatSize(maxSize)}`, 'file_too_large', { size: { bytes: maxSize } })
    if (config.accept !== undefined && !accepts(config.accept, input)) {
      return rejected(
        `The file must be ${describeAccept(config.accept).replace(/^An? /, (a) => a.toLowerCase())}`,
        'file_type',
        { types: { fileTypes: config.accept } },
      )
    }
    return { kind: 'upload', upload: input }
  },
  control: (config) => ({ kind: 'input', attributes: { type: 'file', accept: config.accept } }),
  // The file, its part's headers (name, type), and room for a file too large by up to FILE_OVERSIZE_READ:
  // its bytes past max_size are read and dropped, so the person hears which file, next to its field.
  maxSubmittedBytes: (config) => fileMaxSize(config) + FILE_OVERSIZE_READ + 4096,
  answerSchema: () => ({
    type: 'string',
    format: 'uri',
    description: 'The API URL of the uploaded file: GET it with your API key to download the bytes',
  }),
  note(config): Message | undefined {
    const size = { bytes: fileMaxSize(config) }
    return config.accept === undefined
      ? { key: 'hint.file_size', params: { size } }
      : { key: 'hint.file_types', params: { types: { fileTypes: config.accept }, size } }
  },
}

/**
 * As a browser applies the accept attribute: the file matches when any token
 * does, an extension token by the file name, a type token by the declared type.
 */
export function accepts(accept: string, upload: Upload): boolean {
  const name = upload.name.toLowerCase()
  const type = upload.type.toLowerCase()
  return acceptTokens(accept).some((token) => {
    const wanted = token.toLowerCase()
    if (wanted.startsWith('.')) return name.endsWith(wanted)
    if (wanted.endsWith('/*')) return type.startsWith(wanted.slice(0, -1))
    return type === wanted
  })
}

const KINDS: Record<string, string> = {
  'image/*': 'an image',
  'audio/*': 'an audio file',
  'video/*': 'a video',
  'text/*': 'a text file',
}

/** "image/*,.pdf" -> "An image or PDF": the accept list as a person reads it. */
export function describeAccept(accept: string): string {
  const names = [
    ...new Set(
      acceptTokens(accept).map((token) => {
        const lower = token.toLowerCase()
        if (KINDS[lower]) return KINDS[lower]
        if (lower.startsWith('.')) return lower.slice(1).toUpperCase()
        return (lower.split('/')[1] ?? lower).replace(/^(?:x-|vnd\.)/, '').toUpperCase()
      }),
    ),
  ]
  const list = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`
  return list.charAt(0).toUpperCase() + list.slice(1)
}

/** 10485760 -> "10 MB", 1536 -> "1.5 KB": sizes in the units people read. */
export function formatSize(bytes: number): string {
  const units = ['bytes', 'KB', 'MB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  const shown = Number.isInteger(value) ? String(value) : value.toFixed(1).replace(/\.0$/, '')
  return unit === 0 ? `${bytes} byte${bytes === 1 ? '' : 's'}` : `${shown} ${units[unit]}`
}
