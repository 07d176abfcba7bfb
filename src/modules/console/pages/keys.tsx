/** @jsxImportSource @kitajs/html */
import { Elysia } from 'elysia'
import { attr } from '../../../../views/attributes.ts'
import { HttpError } from '../../../lib/errors.ts'
import type { KeyListing } from '../../auth/store/index.ts'
import type { ConsoleDeps } from '../deps.ts'
import { ConsoleLayout, CsrfField, consoleHtml } from '../layout.tsx'
import { type ConsoleWords, consoleWords } from '../words/index.ts'

const notFound = () => new HttpError(404, 'Not found')

function KeyTable({ keys, base, words }: { keys: KeyListing[]; base: string; words: ConsoleWords }) {
  if (keys.length === 0) return <p safe>{words.t('keys.none')}</p>
  return (
    <div class="console-table-scroll">
      <table class="console-table">
        <thead>
          <tr>
            <th scope="col" safe>
              {words.t('keys.hint')}
            </th>
            <th scope="col" safe>
              {words.t('keys.created')}
            </th>
            <th scope="col" safe>
              {words.t('keys.last_used')}
            </th>
            <th scope="col" safe>
              {words.t('keys.state')}
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr>
              <th scope="row" safe>
                {words.t('keys.hint_value', { hint: key.hint })}
              </th>
              <td safe>{words.dateTime(key.createdAt)}</td>
              <td safe>{key.lastUsedAt === null ? words.t('keys.never_used') : words.dateTime(key.lastUsedAt)}</td>
              <td>
                {key.revokedAt === null ? (
                  <>
                    <span safe>{words.t('keys.active')}</span>{' '}
                    <a
                      href={attr(`${base}/keys/${encodeURIComponent(key.id)}/revoke`)}
                      aria-label={attr(words.t('keys.revoke_key', { hint: key.hint }))}
                      safe
                    >
                      {words.t('keys.revoke')}
                    </a>
                  </>
                ) : (
                  <span safe>{words.t('keys.revoked', { time: words.dateTime(key.revokedAt) })}</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

/**
 * The account's API keys: listed (hint, created, last used, revoked), made
 * (the plaintext shown once, on the page that answers the POST), revoked
 * behind a confirmation. Through the auth service the API and the command
 * line use; another account's key is 404, even by its id.
 */
export const keyPages = (deps: ConsoleDeps) => {
  const { auth } = deps.services
  const ownKey = async (accountId: string, id: string) => {
    const key = (await auth.listKeysOfAccount(accountId)).find((listed) => listed.id === id)
    if (!key) throw notFound()
    return key
  }
  return new Elysia({ name: 'console-keys' })
    .use(deps.session)
    .get(
      '/console/accounts/:account/keys',
      async ({ viewer, account, query, set }) => {
        const words = consoleWords()
        const base = `/console/accounts/${encodeURIComponent(account.id)}`
        const keys = await auth.listKeysOfAccount(account.id)
        const revoked = keys.find((key) => key.id === query.revoked && key.revokedAt !== null)
        return consoleHtml(
          set,
          <ConsoleLayout viewer={viewer} title={words.t('keys.title')} account={account} current="keys" words={words}>
            <h1 safe>{words.t('keys.title')}</h1>
            {revoked ? (
              <p class="notice" role="status" safe>
                {words.t('keys.revoked_done', { hint: revoked.hint })}
              </p>
            ) : (
              ''
            )}
            <p safe>{words.t('keys.intro')}</p>
            <KeyTable keys={keys} base={base} words={words} />
            <h2 safe>{words.t('keys.create')}</h2>
            <form method="post" action={attr(`${base}/keys`)}>
              <CsrfField viewer={viewer} />
              <p safe>{words.t('keys.create_intro')}</p>
              <button type="submit" safe>
                {words.t('keys.create')}
              </button>
            </form>
          </ConsoleLayout>,
        )
      },
      { account: true },
    )
    .post(
      '/console/accounts/:account/keys',
      async ({ viewer, account, set }) => {
        const words = consoleWords()
        const created = await auth.createKey(account.name)
        return consoleHtml(
          set,
          <ConsoleLayout
            viewer={viewer}
            title={words.t('keys.created_title')}
            account={account}
            current="keys"
            words={words}
          >
            <h1 safe>{words.t('keys.created_title')}</h1>
            <p safe>{words.t('keys.created_once')}</p>
            <label for="new-key" safe>
              {words.t('keys.created_label')}
            </label>
            <input id="new-key" class="console-secret" type="text" readonly value={attr(created.key)} />
            <p>
              <a href={attr(`/console/accounts/${encodeURIComponent(account.id)}/keys`)} safe>
                {words.t('keys.back')}
              </a>
            </p>
          </ConsoleLayout>,
          201,
        )
      },
      { account: true },
    )
    .get(
      '/console/accounts/:account/keys/:key/revoke',
      async ({ viewer, account, params, set }) => {
        const words = consoleWords()
        const key = await ownKey(account.id, params.key)
        const keysPage = `/console/accounts/${encodeURIComponent(account.id)}/keys`
        if (key.revokedAt !== null) {
          set.status = 303
          set.headers.location = `${keysPage}?revoked=${encodeURIComponent(key.id)}`
          return ''
        }
        return consoleHtml(
          set,
          <ConsoleLayout
            viewer={viewer}
            title={words.t('keys.confirm_title')}
            account={account}
            current="keys"
            words={words}
          >
            <h1 safe>{words.t('keys.confirm_title')}</h1>
            <p safe>{words.t('keys.confirm_intro', { hint: key.hint })}</p>
            <form
              method="post"
              action={attr(`${keysPage}/${encodeURIComponent(key.id)}/revoke`)}
              class="console-actions"
            >
              <CsrfField viewer={viewer} />
              <button type="submit" safe>
                {words.t('keys.confirm')}
              </button>
              <a href={attr(keysPage)} safe>
                {words.t('keys.cancel')}
              </a>
            </form>
          </ConsoleLayout>,
        )
      },
      { account: true },
    )
    .post(
      '/console/accounts/:account/keys/:key/revoke',
      async ({ account, params, set }) => {
        if ((await auth.revokeKeyOfAccount(account.id, params.key)) === 'unknown') throw notFound()
        set.status = 303
        set.headers.location = `/console/accounts/${encodeURIComponent(account.id)}/keys?revoked=${encodeURIComponent(params.key)}`
        return ''
      },
      { account: true },
    )
}
