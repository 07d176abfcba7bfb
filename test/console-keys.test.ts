/**
 * An account's API keys in the console (CONTRACT 15): listed with their hint,
 * creation and last use; made and shown once; revoked behind a confirmation,
 * through the same auth service as the API and the command line.
 */
import { describe, expect, test } from 'bun:test'
import { consoleClient, consoleRequest } from './console-fixtures.ts'
import { inputsOf, pageText } from './html.ts'
import { contextsPerTest, send } from './utils.ts'

const contexts = contextsPerTest()

/** The key the page answering a create shows (its one read-only input). */
const shownKey = (html: string) => inputsOf(html).find((input) => input.id === 'new-key')?.value

describe('API keys', () => {
  test('a key made in the console is shown once, works against the API, and is 401 once revoked', async () => {
    const t = await contexts.create()
    const member = await consoleClient(t, { account: 'default' })
    const keys = `/console/accounts/${member.viewer.accountId}/keys`

    const created = await member.post(keys, {})
    expect(created.status).toBe(201)
    expect(created.headers.get('cache-control')).toBe('no-store')
    const key = shownKey(await created.text())!
    expect(key).toMatch(/^svc_live_[0-9a-f]{48}$/)
    expect((await send(t.app, 'GET', '/api/v1/forms', { key })).status).toBe(200)

    // Listed by its hint, used just now; the key itself is never on the page again.
    const list = await (await member.get(keys)).text()
    expect(list).not.toContain(key)
    expect(pageText(list)).toContain(`ends in ${key.slice(-4)}`)
    const revokeLink = [...list.matchAll(/href="([^"]+\/revoke)"/g)].map((match) => match[1]!)
    expect(revokeLink).toHaveLength(2) // the context's key and the new one
    const mine = revokeLink.find((href) => list.indexOf(href) > list.indexOf(`ends in ${key.slice(-4)}`))!

    // Revoke asks first; the confirmation page changes nothing.
    const confirm = await member.get(mine)
    expect(confirm.status).toBe(200)
    expect(pageText(await confirm.text())).toContain(`the key ending in ${key.slice(-4)} is refused`)
    expect((await send(t.app, 'GET', '/api/v1/forms', { key })).status).toBe(200)

    const revoked = await member.post(mine, {})
    expect(revoked.status).toBe(303)
    expect(revoked.headers.get('location')).toStartWith(`${keys}?revoked=`)
    expect((await send(t.app, 'GET', '/api/v1/forms', { key })).status).toBe(401)
    const after = pageText(await (await member.get(revoked.headers.get('location')!)).text())
    expect(after).toContain(`The key ending in ${key.slice(-4)} is revoked.`)
    expect(after).toContain('Revoked')
    // The context's own key still works.
    expect((await t.api.get('/forms')).status).toBe(200)
  })

  test('the list shows when a key was last used', async () => {
    const t = await contexts.create()
    const member = await consoleClient(t, { account: 'default' })
    const keys = `/console/accounts/${member.viewer.accountId}/keys`
    expect(pageText(await (await member.get(keys)).text())).toContain('Never')
    await t.api.get('/forms')
    await Bun.sleep(50) // the last-used stamp is written after the request, by a unit of its own
    expect(pageText(await (await member.get(keys)).text())).not.toContain('Never')
  })

  test('a member cannot revoke another account’s key, even by posting its id: 404, and the key still works', async () => {
    const t = await contexts.create()
    const other = await t.createKey('theirs')
    const member = await consoleClient(t, { account: 'default' })
    const mine = `/console/accounts/${member.viewer.accountId}/keys`
    expect((await member.get(`${mine}/${other.id}/revoke`)).status).toBe(404)
    expect((await member.post(`${mine}/${other.id}/revoke`, {})).status).toBe(404)
    expect((await send(t.app, 'GET', '/api/v1/forms', { key: other.key })).status).toBe(200)
  })

  test('POSTs without the session’s csrf field, or from another site, are 403 and change nothing', async () => {
    const t = await contexts.create()
    const member = await consoleClient(t, { account: 'default' })
    const keys = `/console/accounts/${member.viewer.accountId}/keys`
    const before = await t.store.keys.listKeysOfAccount(member.viewer.accountId!)
    const withoutCsrf = await consoleRequest(t, 'POST', keys, { cookie: member.cookie, body: new URLSearchParams() })
    expect(withoutCsrf.status).toBe(403)
    const wrongCsrf = await member.post(keys, { csrf: 'not-the-token' })
    expect(wrongCsrf.status).toBe(403)
    const crossSite = await member.post(
      keys,
      {},
      { origin: 'https://elsewhere.example', 'sec-fetch-site': 'cross-site' },
    )
    expect(crossSite.status).toBe(403)
    const [ownKey] = before
    const revokeWithout = await consoleRequest(t, 'POST', `${keys}/${ownKey!.id}/revoke`, {
      cookie: member.cookie,
      body: new URLSearchParams(),
    })
    expect(revokeWithout.status).toBe(403)
    expect(await t.store.keys.listKeysOfAccount(member.viewer.accountId!)).toEqual(before)
  })
})
