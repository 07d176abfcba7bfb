/**
 * Callback URLs as logs and `last_error` may show them: their origin only
 * (`https://host:port`). Receivers put tokens in the path, the query or the
 * credentials of the URL they hand out, and whoever reads the logs or the
 * delivery log is not meant to learn them.
 */

/** Scheme, host and port of a URL; never its credentials, path, query or fragment. */
export function originOf(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.host}`
  } catch {
    return '(an unparsable URL)'
  }
}

const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi

/**
 * `text` (an error message, ours or one from fetch or DNS, which quote the URL
 * they were given) with every URL in it cut down to its origin, and the
 * callback URL's query, fragment and path removed wherever they still appear
 * on their own.
 */
export function withOriginsOnly(text: string, callbackUrl: string): string {
  let safe = text.replace(URL_IN_TEXT, originOf)
  let parts: string[] = []
  try {
    const { pathname, search, hash } = new URL(callbackUrl)
    parts = [pathname + search + hash, search + hash, search, hash, pathname]
  } catch {}
  // Longest first, so a path and query are cut together; "/" and "?" alone say nothing.
  for (const part of parts.filter((p) => p.length > 1).sort((a, b) => b.length - a.length)) {
    safe = safe.split(part).join('')
  }
  return safe
}
