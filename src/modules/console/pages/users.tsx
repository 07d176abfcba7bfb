/** @jsxImportSource @kitajs/html */
import { Elysia } from 'elysia'
import { attr } from '../../../../views/attributes.ts'
import { HttpError } from '../../../lib/errors.ts'
import type { ConsoleDeps } from '../deps.ts'
import { ConsoleLayout, type ConsoleProblem, CsrfField, consoleHtml, ErrorSummary } from '../layout.tsx'
import { UserRefused } from '../service.ts'
import type { Viewer } from '../viewer.ts'
import { type ConsoleWords, consoleWords } from '../words/index.ts'

const REFUSALS: Record<UserRefused['reason'], (words: ConsoleWords) => ConsoleProblem> = {
  'email-invalid': (words) => ({ text: words.t('setup.email_invalid'), controlId: 'email' }),
  'email-taken': (words) => ({ text: words.t('setup.email_taken'), controlId: 'email' }),
  'unknown-account': (words) => ({ text: words.t('users.unknown_account'), controlId: 'role' }),
}

/** The role select's value for an operator; any other value names an account. */
const OPERATOR = ':operator'

interface UsersPageProps {
  viewer: Viewer
  words: ConsoleWords
  deps: ConsoleDeps
  problems?: ConsoleProblem[]
  typed?: { email: string; role: string }
  notice?: string
}

async function UsersPage({ viewer, words, deps, problems = [], typed, notice }: UsersPageProps) {
  const t = words.t
  const [users, accounts] = await Promise.all([deps.users.listUsers(), deps.store.keys.listAccounts()])
  const chosen = typed?.role ?? OPERATOR
  return (
    <ConsoleLayout viewer={viewer} title={t('users.title')} current="users" words={words}>
      <ErrorSummary problems={problems} words={words} />
      <h1 safe>{t('users.title')}</h1>
      {notice ? (
        <p class="console-notice" role="status" safe>
          {notice}
        </p>
      ) : (
        ''
      )}
      <p safe>{t('users.intro')}</p>
      <div class="console-table-wrap">
        <table class="console-table">
          <thead>
            <tr>
              <th scope="col" safe>
                {t('users.email')}
              </th>
              <th scope="col" safe>
                {t('users.role')}
              </th>
              <th scope="col" safe>
                {t('users.password')}
              </th>
              <th scope="col" safe>
                {t('users.last_seen')}
              </th>
              <th scope="col" safe>
                {t('users.actions')}
              </th>
            </tr>
          </thead>
          <tbody>
            {users.map((user) => (
              <tr>
                <th scope="row" safe>
                  {user.email}
                </th>
                <td safe>{user.account ?? t('users.every_account')}</td>
                <td safe>{user.passwordSet ? t('common.yes') : t('common.no')}</td>
                <td safe>{user.lastSeenAt === null ? t('common.never') : words.dateTime(user.lastSeenAt)}</td>
                <td class="console-actions">
                  <form method="post" action="/console/users/reset">
                    <CsrfField viewer={viewer} />
                    <input type="hidden" name="email" value={attr(user.email)} />
                    <button
                      type="submit"
                      class="console-link-button"
                      aria-label={attr(t('users.reset_for', { email: user.email }))}
                      safe
                    >
                      {t('users.reset')}
                    </button>
                  </form>
                  {user.email === viewer.email ? (
                    ''
                  ) : (
                    <a
                      href={`/console/users/remove?email=${attr(encodeURIComponent(user.email))}`}
                      aria-label={attr(t('users.remove_for', { email: user.email }))}
                      safe
                    >
                      {t('users.remove')}
                    </a>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2 safe>{t('users.add_title')}</h2>
      <form method="post" action="/console/users" novalidate>
        <CsrfField viewer={viewer} />
        <div class="field">
          <label class="label" for="email" safe>
            {t('users.add_email')}
          </label>
          <input
            id="email"
            name="email"
            type="email"
            spellcheck="false"
            autocomplete="off"
            value={attr(typed?.email ?? '')}
          />
        </div>
        <div class="field">
          <label class="label" for="role" safe>
            {t('users.add_account')}
          </label>
          <select id="role" name="role">
            <option value={OPERATOR} selected={chosen === OPERATOR} safe>
              {t('users.add_operator')}
            </option>
            {accounts.map((account) => (
              <option value={attr(account.name)} selected={chosen === account.name} safe>
                {account.name}
              </option>
            ))}
          </select>
        </div>
        <div class="actions">
          <button type="submit" safe>
            {t('users.add_submit')}
          </button>
        </div>
      </form>
    </ConsoleLayout>
  )
}

/** The one time a set-up link is shown. */
function LinkPage({
  viewer,
  words,
  email,
  link,
}: {
  viewer: Viewer
  words: ConsoleWords
  email: string
  link: string
}) {
  const t = words.t
  return (
    <ConsoleLayout viewer={viewer} title={t('users.link_title', { email })} current="users" words={words}>
      <h1 safe>{t('users.link_title', { email })}</h1>
      <p safe>{t('users.link_intro', { email })}</p>
      <div class="field">
        <label class="label" for="link" safe>
          {t('users.link_label')}
        </label>
        <input id="link" type="text" readonly value={attr(link)} class="console-secret" />
      </div>
      <p>
        <a href="/console/users" safe>
          {t('common.back')}
        </a>
      </p>
    </ConsoleLayout>
  )
}

function RemovePage({ viewer, words, email }: { viewer: Viewer; words: ConsoleWords; email: string }) {
  const t = words.t
  return (
    <ConsoleLayout viewer={viewer} title={t('users.remove_title', { email })} current="users" words={words}>
      <h1 safe>{t('users.remove_title', { email })}</h1>
      <p safe>{t('users.remove_intro')}</p>
      <form method="post" action="/console/users/remove">
        <CsrfField viewer={viewer} />
        <input type="hidden" name="email" value={attr(email)} />
        <div class="actions console-buttons">
          <button type="submit" class="console-danger" safe>
            {t('users.remove_confirm')}
          </button>
          <a href="/console/users" safe>
            {t('common.cancel')}
          </a>
        </div>
      </form>
    </ConsoleLayout>
  )
}

/** /console/users (operators): the users, adding one (its link shown once), a new link, removing one. */
export function usersPages(deps: ConsoleDeps) {
  const { users } = deps
  const words = consoleWords()
  const t = words.t
  return new Elysia({ name: 'console-users' })
    .use(deps.session)
    .get(
      '/console/users',
      async ({ viewer, query, set }) => {
        const removed = typeof query.removed === 'string' ? query.removed : undefined
        const notice = removed ? t('users.removed', { email: removed }) : undefined
        return consoleHtml(set, <UsersPage viewer={viewer} words={words} deps={deps} notice={notice} />)
      },
      { operator: true },
    )
    .post(
      '/console/users',
      async ({ viewer, fields, set }) => {
        const typed = { email: fields.email ?? '', role: fields.role ?? OPERATOR }
        try {
          const role = typed.role === OPERATOR ? { operator: true as const } : { account: typed.role }
          const { user, link } = await users.addUser(typed.email, role)
          return consoleHtml(set, <LinkPage viewer={viewer} words={words} email={user.email} link={link} />)
        } catch (error) {
          if (!(error instanceof UserRefused)) throw error
          const problems = [REFUSALS[error.reason](words)]
          return consoleHtml(
            set,
            <UsersPage viewer={viewer} words={words} deps={deps} problems={problems} typed={typed} />,
            422,
          )
        }
      },
      { operator: true },
    )
    .post(
      '/console/users/reset',
      async ({ viewer, fields, set }) => {
        const link = await users.resetUser(fields.email ?? '')
        if (link === undefined) throw new HttpError(404, 'Not found')
        return consoleHtml(set, <LinkPage viewer={viewer} words={words} email={fields.email!} link={link} />)
      },
      { operator: true },
    )
    .get(
      '/console/users/remove',
      async ({ viewer, query, set }) => {
        const email = typeof query.email === 'string' ? query.email : ''
        const known = (await users.listUsers()).some((user) => user.email === email)
        if (!known || email === viewer.email) throw new HttpError(404, 'Not found')
        return consoleHtml(set, <RemovePage viewer={viewer} words={words} email={email} />)
      },
      { operator: true },
    )
    .post(
      '/console/users/remove',
      async ({ viewer, fields, set }) => {
        const email = fields.email ?? ''
        // Removing oneself is not offered: the last operator would lock everyone out.
        if (email === viewer.email || !(await users.removeUser(email))) throw new HttpError(404, 'Not found')
        set.headers.location = `/console/users?removed=${encodeURIComponent(email)}`
        return consoleHtml(set, '', 303)
      },
      { operator: true },
    )
}
