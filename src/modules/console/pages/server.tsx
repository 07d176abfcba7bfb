/** @jsxImportSource @kitajs/html */
import { Elysia } from 'elysia'
import { attr } from '../../../../views/attributes.ts'
import { type Config, SETTINGS } from '../../../config.ts'
import { COMMIT, VERSION } from '../../../version.ts'
import type { ConsoleDeps } from '../deps.ts'
import { ConsoleLayout, consoleHtml } from '../layout.tsx'
import { type ConsoleWords, consoleWords } from '../words/index.ts'

/** Settings whose value is a secret, or may hold one: said to be set, never shown. */
const SECRET_VARIABLE = /KEY|PASSWORD|SECRET|TOKEN/

type SettingKey = keyof typeof SETTINGS

/** A setting's value as an operator reads it: durations in seconds, lists joined. */
function shown(key: SettingKey, value: unknown): string {
  if (Array.isArray(value)) return value.map((ms) => `${Number(ms) / 1000}s`).join(', ')
  if (key.endsWith('Ms') && typeof value === 'number') return String(value / 1000)
  return String(value)
}

/** Each setting's value in force, with what it is; secrets and a database URL's password never appear. */
function settingsInForce(config: Config, databaseLocation: string, words: ConsoleWords) {
  return (Object.entries(SETTINGS) as Array<[SettingKey, (typeof SETTINGS)[SettingKey]]>).map(([key, setting]) => {
    // Retries past SERVICE_WEBHOOK_MAX_RETRIES never happen: their delays are not in force.
    const value = key === 'webhookRetryScheduleMs' ? config[key].slice(0, config.webhookMaxRetries) : config[key]
    const fallback = (setting.read as (text: undefined, name: string) => unknown)(undefined, setting.variable)
    const isDefault = JSON.stringify(config[key]) === JSON.stringify(fallback)
    let text: string
    if (value === undefined) text = words.t('server.unset')
    else if (key === 'databaseUrl') text = databaseLocation
    else if (SECRET_VARIABLE.test(setting.variable)) text = words.t('server.hidden')
    else text = shown(key, value)
    return { variable: setting.variable, text, isDefault: isDefault && value !== undefined, help: setting.help }
  })
}

/** /console/server (operators): what runs here and the settings in force, without secrets. */
export function serverPages(deps: ConsoleDeps) {
  const { config, database, baseUrl } = deps
  const words = consoleWords()
  const t = words.t
  return new Elysia({ name: 'console-server' }).use(deps.session).get(
    '/console/server',
    ({ viewer, set }) => {
      const facts: Array<[string, string]> = [
        [t('server.version'), VERSION],
        [t('server.commit'), COMMIT],
        [t('server.store'), database.kind === 'postgres' ? 'PostgreSQL' : 'SQLite'],
        [t('server.schema'), String(database.schemaVersion)],
        [t('server.location'), database.location],
        [t('server.base_url'), baseUrl()],
      ]
      return consoleHtml(
        set,
        <ConsoleLayout viewer={viewer} title={t('server.title')} current="server" words={words}>
          <h1 safe>{t('server.title')}</h1>
          <p safe>{t('server.intro')}</p>
          <dl class="console-facts">
            {facts.map(([term, value]) => (
              <>
                <dt safe>{term}</dt>
                <dd safe>{value}</dd>
              </>
            ))}
          </dl>
          <h2 safe>{t('server.settings')}</h2>
          <div class="console-table-wrap">
            <table class="console-table">
              <thead>
                <tr>
                  <th scope="col" safe>
                    {t('server.setting')}
                  </th>
                  <th scope="col" safe>
                    {t('server.value')}
                  </th>
                  <th scope="col" safe>
                    {t('server.about')}
                  </th>
                </tr>
              </thead>
              <tbody>
                {settingsInForce(config, database.location, words).map((setting) => (
                  <tr>
                    <th scope="row">
                      <code safe>{setting.variable}</code>
                    </th>
                    <td data-label={attr(t('server.value'))}>
                      <span safe>{setting.text}</span>
                      {setting.isDefault ? (
                        <span class="console-muted" safe>
                          {` ${t('server.default')}`}
                        </span>
                      ) : (
                        ''
                      )}
                    </td>
                    <td data-label={attr(t('server.about'))} safe>
                      {setting.help}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </ConsoleLayout>,
      )
    },
    { operator: true },
  )
}
