import { Type } from '@sinclair/typebox'
import type { Problem } from '../lib/errors.ts'
import { EMPTY, isBlank, rejected, type FieldType } from './types.ts'

export const FILE_DEFAULT_MAX_SIZE = 10 * 1024 * 1024
export const FILE_LIMIT_MAX_SIZE = 25 * 1024 * 1024

interface FileConfig {
  accept?: string
  max_size?: number
}

// One token of the HTML accept attribute: ".pdf", "image/*" or "application/pdf".
const ACCEPT_TOKEN = /^(?:\.[A-Za-z0-9][A-Za-z0-9._+-]*|[A-Za-z0-9!#$&^_.+-]+\/(?:\*|[A-Za-z0-9!#$&^_.+-]+))$/

export const acceptTokens = (accept: string) =>
  accept.split(',').map((token) => token.trim()).filter((token) => token !== '')

export const file: FieldType<FileConfig> = {
  name: 'file',
  config: Type.Object(
    {
      accept: Type.Optional(
        Type.String({ maxLength: 1000, description: 'As the HTML accept attribute, e.g. "image/*,.pdf"' }),
      ),
      max_size: Type.Optional(
        Type.Integer({ minimum: 1, maximum: FILE_LIMIT_MAX_SIZE, default: FILE_DEFAULT_MAX_SIZE, description: 'Largest accepted file, in bytes' }),
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
        problems.push({ path: '/accept', message: 'Expected a comma-separated list of extensions (".pdf") or media types ("image/*")' })
      }
    }
    return problems
  },
  parse(input) {
    if (isBlank(input)) return EMPTY
    // A JSON body cannot carry a file; the page uploads with multipart/form-data.
    return rejected('A file must be uploaded with multipart/form-data')
  },
}
