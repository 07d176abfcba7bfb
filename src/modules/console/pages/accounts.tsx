/** @jsxImportSource @kitajs/html */
import { Elysia } from 'elysia'
import { attr } from '../../../../views/attributes.ts'
import type { ConsoleDeps } from '../deps.ts'
import { ConsoleLayout, consoleHtml } from '../layout.tsx'
import { consoleWords } from '../words/index.ts'

/** /console: an operator's list of accounts; a member goes straight to their account. */
export function accountsPages(deps: ConsoleDeps) {
  const { store } = deps
  const words = consoleWords()
  const t = words.t
  return new Elysia({ name: 'console-accounts' }).use(deps.session).get(
    '/console',
    async ({ viewer, set }) => {
      if (!viewer.operator) {
        set.headers.location = `/console/accounts/${encodeURIComponent(viewer.accountId!)}`
        return consoleHtml(set, '', 303)
      }
      const [accounts, keys] = await Promise.all([store.keys.listAccounts(), store.keys.listKeys()])
      const usableKeys = new Map<string, number>()
      for (const key of keys)
        if (key.revokedAt === null) usableKeys.set(key.account, (usableKeys.get(key.account) ?? 0) + 1)
      return consoleHtml(
        set,
        <ConsoleLayout viewer={viewer} title={t('accounts.title')} current="accounts" words={words}>
          <h1 safe>{t('accounts.title')}</h1>
          <p safe>{t('accounts.intro')}</p>
          {accounts.length === 0 ? (
            <p safe>{t('accounts.none')}</p>
          ) : (
            <div class="console-table-wrap">
              <table class="console-table">
                <thead>
                  <tr>
                    <th scope="col" safe>
                      {t('accounts.name')}
                    </th>
                    <th scope="col" class="console-number" safe>
                      {t('accounts.keys')}
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {accounts.map((account) => (
                    <tr>
                      <th scope="row">
                        <a href={`/console/accounts/${attr(encodeURIComponent(account.id))}`} safe>
                          {account.name}
                        </a>
                      </th>
                      <td class="console-number" safe>
                        {words.number(usableKeys.get(account.name) ?? 0)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </ConsoleLayout>,
      )
    },
    { signedIn: true },
  )
}
