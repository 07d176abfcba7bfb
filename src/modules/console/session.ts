import { Elysia } from 'elysia'
import { HttpError } from '../../lib/errors.ts'
import type { FormEntry } from '../../lib/form-data.ts'
import { clientAddress, isFormContentType } from '../../lib/http.ts'
import type { BodyReader } from '../../lib/request-body.ts'
import type { Reads } from '../../stores.ts'
import { isCrossSite } from '../submissions/form-post.ts'
import { type ConsoleService, csrfMatches, SESSION_LIFETIME_MS } from './service.ts'
import type { Viewer } from './viewer.ts'

/** The session cookie's name. */
const SESSION_COOKIE = 'intake_console'
/** A console post holds text only: at most a pasted create body (1 MiB of JSON) and a few fields, encoded. */
const CONSOLE_POST_MAX_BYTES = 4 * 1024 * 1024
const CONSOLE_POST_TEXT_BYTES = 2 * 1024 * 1024

/** A console POST's text fields, by name (each name sent once). */
export type ConsoleFields = Record<string, string>

interface SessionOptions {
  users: ConsoleService
  store: Pick<Reads, 'keys'>
  bodies: BodyReader
  baseUrl: () => string
}

/** The session token a request's Cookie header carries, if any. */
export function sessionTokenOf(request: Request): string | undefined {
  const header = request.headers.get('cookie')
  if (!header) return undefined
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=')
    if (at !== -1 && pair.slice(0, at).trim() === SESSION_COOKIE) return pair.slice(at + 1).trim() || undefined
  }
  return undefined
}

/** The Set-Cookie value that holds a session (`token`), or ends it (undefined). Secure under an https base URL. */
export function sessionCookie(token: string | undefined, baseUrl: string): string {
  const secure = baseUrl.startsWith('https:') ? '; Secure' : ''
  const lifetime = token === undefined ? 0 : SESSION_LIFETIME_MS / 1000
  return `${SESSION_COOKIE}=${token ?? ''}; Path=/console; HttpOnly; SameSite=Lax; Max-Age=${lifetime}${secure}`
}

/**
 * Reads a console POST's fields (urlencoded or multipart, text only, each
 * name once), within the body limits every body has.
 */
export async function readConsoleFields(bodies: BodyReader, request: Request): Promise<ConsoleFields> {
  if (!isFormContentType(request.headers.get('content-type'))) throw new HttpError(403, 'Not a form post')
  return bodies.formPost(
    request,
    CONSOLE_POST_MAX_BYTES,
    {
      textBytes: CONSOLE_POST_TEXT_BYTES,
      openFile() {
        throw new HttpError(400, 'The console takes no files')
      },
      settled: async () => {},
    },
    async (entries: Array<FormEntry<never>>) => {
      const fields: ConsoleFields = Object.create(null)
      for (const [name, value] of entries) {
        if (name in fields) throw new HttpError(400, `The field "${name}" was sent more than once`)
        fields[name] = value
      }
      return fields
    },
  )
}

/**
 * The console's session as macros a route opts into (named, so `.use` in
 * each page plugin dedupes):
 * - `signedIn: true` resolves `{ viewer, fields }`: a GET without a valid
 *   session is sent to sign in (303), anything else is 403. A non-GET must
 *   pass the cross-site check (CONTRACT 13) and carry the session's token as
 *   the field `csrf`, or it is 403 before its handler runs; `fields` are its
 *   form fields (empty for a GET).
 * - `account: true` also resolves `account: { id, name }` from the `:account`
 *   path parameter: unknown, or not the member's, is 404.
 * - `operator: true`: a member gets 404.
 */
export function consoleSession(options: SessionOptions) {
  const { users, store, bodies, baseUrl } = options
  return new Elysia({ name: 'console-session' }).macro({
    signedIn: {
      async resolve({ request, set, status }) {
        const token = sessionTokenOf(request)
        const viewer = token === undefined ? undefined : await users.viewerOf(token)
        const reading = request.method === 'GET' || request.method === 'HEAD'
        if (!viewer) {
          if (!reading) throw new HttpError(403, 'Sign in first')
          const url = new URL(request.url)
          set.headers.location = `/console/sign-in?next=${encodeURIComponent(url.pathname + url.search)}`
          return status(303, '')
        }
        if (reading) return { viewer, fields: Object.create(null) as ConsoleFields }
        if (isCrossSite(request, baseUrl())) throw new HttpError(403, 'Cross-site requests are refused')
        const fields = await readConsoleFields(bodies, request)
        if (!csrfMatches(viewer, fields.csrf))
          throw new HttpError(403, 'The form was out of date: reload the page and try again')
        return { viewer, fields }
      },
    },
    account: {
      signedIn: true,
      async resolve(context) {
        const { viewer, params } = context as typeof context & { viewer: Viewer; params: Record<string, string> }
        const id = params.account ?? ''
        if (!viewer.operator && viewer.accountId !== id) throw new HttpError(404, 'Not found')
        const account = await store.keys.accountById(id)
        if (!account) throw new HttpError(404, 'Not found')
        return { account }
      },
    },
    operator: {
      signedIn: true,
      resolve(context) {
        const { viewer } = context as typeof context & { viewer: Viewer }
        if (!viewer.operator) throw new HttpError(404, 'Not found')
      },
    },
  })
}

export type ConsoleSession = ReturnType<typeof consoleSession>

/** The client's address as the public page takes it (honouring SERVICE_TRUST_PROXY); '' when unknown. */
export function consoleClientAddress(
  request: Request,
  server: { requestIP(request: Request): { address: string } | null } | null,
  trustProxy: boolean,
): string {
  return clientAddress(request, server?.requestIP(request)?.address, trustProxy) ?? ''
}
