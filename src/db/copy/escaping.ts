/** Names and values written into SQL, COPY's text format and shell commands. */

/** A table or column name in SQL (both stores quote alike). */
export const quote = (name: string) => `"${name.replaceAll('"', '""')}"`

/** A path as a shell word, for a command to copy from a message. */
export const shellWord = (text: string) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`)

/** A value in COPY's text format: \\N for null, bytes as hex, text with its backslashes and control characters escaped. */
export function copyText(value: unknown): string {
  if (value === null || value === undefined) return '\\N'
  if (typeof value === 'number' || typeof value === 'bigint') return String(value)
  if (value instanceof Uint8Array)
    return `\\\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`
  return String(value).replace(/[\\\n\r\t]/g, (c) => COPY_ESCAPES[c]!)
}

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' }
