/** Every method of the console store (users, set-up links, sessions, sign-in failures) and the accounts it reads, on every driver. */
import { expect } from 'bun:test'
import { newId } from '../../src/lib/ids.ts'
import { runOnEveryDriver, type StoreCase, T0 } from './drivers.ts'

const HOUR = 3_600_000
const hash = (c: string) => c.repeat(64)

const cases: StoreCase[] = [
  {
    name: 'accounts by id, by name, and listed by name',
    async run({ store, account }) {
      const b = await account('beta')
      const a = await account('alpha')
      expect(await store.keys.accountById(a)).toEqual({ id: a, name: 'alpha' })
      expect(await store.keys.accountByName('beta')).toEqual({ id: b, name: 'beta' })
      expect(await store.keys.accountById(newId())).toBeUndefined()
      expect(await store.keys.accountByName('gamma')).toBeUndefined()
      expect(await store.keys.listAccounts()).toEqual([
        { id: a, name: 'alpha' },
        { id: b, name: 'beta' },
      ])
    },
  },
  {
    name: 'insertUser once per email; userByEmail, usersExist, listUsers, setPassword, deleteUser',
    async run({ store, account }) {
      const accountId = await account('research')
      expect(await store.console.usersExist()).toBe(false)
      const operator = { id: newId(), email: 'ops@example.com', accountId: null }
      const member = { id: newId(), email: 'ada@example.com', accountId }
      expect(await store.transaction((tx) => tx.console.insertUser({ ...operator, createdAt: T0 }))).toBe(true)
      expect(await store.transaction((tx) => tx.console.insertUser({ ...member, createdAt: T0 + 1 }))).toBe(true)
      const again = { id: newId(), email: 'ada@example.com', accountId: null, createdAt: T0 }
      expect(await store.transaction((tx) => tx.console.insertUser(again))).toBe(false)
      expect(await store.console.usersExist()).toBe(true)
      expect(await store.console.userByEmail('ada@example.com')).toEqual({ ...member, passwordHash: null })
      expect(await store.console.userByEmail('nobody@example.com')).toBeUndefined()
      await store.transaction((tx) => tx.console.setPassword(member.id, '$argon2id$x'))
      expect((await store.console.userByEmail('ada@example.com'))!.passwordHash).toBe('$argon2id$x')
      await store.transaction((tx) =>
        tx.console.insertSession({ tokenHash: hash('a'), userId: member.id, createdAt: T0 }),
      )
      expect(await store.console.listUsers()).toEqual([
        { ...member, account: 'research', createdAt: T0 + 1, passwordSet: true, lastSeenAt: T0 },
        { ...operator, account: null, createdAt: T0, passwordSet: false, lastSeenAt: null },
      ])
      expect(await store.transaction((tx) => tx.console.deleteUser(member.id))).toBe(true)
      expect(await store.transaction((tx) => tx.console.deleteUser(member.id))).toBe(false)
      expect(await store.console.sessionUser(hash('a'), 0, 0)).toBeUndefined()
    },
  },
  {
    name: 'set-up links: valid until expiry, used once, replaced by the next; the first operator’s has no user',
    async run({ store }) {
      const user = { id: newId(), email: 'ops@example.com', accountId: null }
      await store.transaction((tx) => tx.console.insertUser({ ...user, createdAt: T0 }))
      const token = (tokenHash: string, userId: string | null) =>
        store.transaction((tx) =>
          tx.console.insertSetupToken({ tokenHash, userId, createdAt: T0, expiresAt: T0 + 24 * HOUR }),
        )
      await token(hash('1'), user.id)
      expect(await store.console.setupGrant(hash('1'), T0 + 24 * HOUR - 1)).toEqual({
        userId: user.id,
        email: user.email,
      })
      expect(await store.console.setupGrant(hash('1'), T0 + 24 * HOUR)).toBeUndefined()
      expect(await store.transaction((tx) => tx.console.useSetupToken(hash('1'), T0 + 24 * HOUR))).toBe(false)
      await token(hash('2'), user.id)
      expect(await store.console.setupGrant(hash('1'), T0)).toBeUndefined()
      expect(await store.transaction((tx) => tx.console.useSetupToken(hash('2'), T0 + 1))).toBe(true)
      expect(await store.transaction((tx) => tx.console.useSetupToken(hash('2'), T0 + 2))).toBe(false)
      expect(await store.console.setupGrant(hash('2'), T0)).toBeUndefined()
      await token(hash('3'), null)
      expect(await store.console.setupGrant(hash('3'), T0)).toEqual({ userId: null, email: null })
      await token(hash('4'), null)
      expect(await store.console.setupGrant(hash('3'), T0)).toBeUndefined()
      expect(await store.console.setupGrant(hash('4'), T0)).toEqual({ userId: null, email: null })
    },
  },
  {
    name: 'sessions: found while used lately and young enough, touched, ended one or all but one',
    async run({ store, account }) {
      const accountId = await account()
      const user = { id: newId(), email: 'ada@example.com', accountId }
      await store.transaction(async (tx) => {
        await tx.console.insertUser({ ...user, createdAt: T0 })
        for (const c of ['a', 'b', 'c'])
          await tx.console.insertSession({ tokenHash: hash(c), userId: user.id, createdAt: T0 })
      })
      expect(await store.console.sessionUser(hash('a'), T0 - 1, T0 - 1)).toEqual({ user, lastSeenAt: T0 })
      expect(await store.console.sessionUser(hash('a'), T0, T0 - 1)).toBeUndefined()
      expect(await store.console.sessionUser(hash('a'), T0 - 1, T0)).toBeUndefined()
      await store.transaction((tx) => tx.console.touchSession(hash('a'), T0 + HOUR))
      expect(await store.console.sessionUser(hash('a'), T0 + 1, T0 - 1)).toEqual({ user, lastSeenAt: T0 + HOUR })
      await store.transaction((tx) => tx.console.deleteSession(hash('a')))
      expect(await store.console.sessionUser(hash('a'), 0, 0)).toBeUndefined()
      await store.transaction((tx) => tx.console.deleteUserSessions(user.id, hash('b')))
      expect(await store.console.sessionUser(hash('b'), 0, 0)).toBeDefined()
      expect(await store.console.sessionUser(hash('c'), 0, 0)).toBeUndefined()
      await store.transaction((tx) => tx.console.deleteUserSessions(user.id))
      expect(await store.console.sessionUser(hash('b'), 0, 0)).toBeUndefined()
    },
  },
  {
    name: 'sign-in failures: the nth newest in a window, by email and by client; old ones forgotten',
    async run({ store, anotherStore }) {
      const other = await anotherStore()
      const fail = (s: typeof store, email: string, client: string, failedAt: number) =>
        s.transaction((tx) => tx.console.insertFailure({ id: newId(), email, client, failedAt }, failedAt - HOUR))
      await fail(store, 'ada@example.com', '192.0.2.1', T0)
      await fail(other, 'ada@example.com', '192.0.2.2', T0 + 10)
      await fail(store, 'bob@example.com', '192.0.2.1', T0 + 20)
      expect(await store.console.nthNewestFailure('email', 'ada@example.com', T0 - 1, 1)).toBe(T0 + 10)
      expect(await store.console.nthNewestFailure('email', 'ada@example.com', T0 - 1, 2)).toBe(T0)
      expect(await store.console.nthNewestFailure('email', 'ada@example.com', T0 - 1, 3)).toBeNull()
      expect(await store.console.nthNewestFailure('email', 'ada@example.com', T0, 2)).toBeNull()
      expect(await store.console.nthNewestFailure('client', '192.0.2.1', T0 - 1, 2)).toBe(T0)
      expect(await other.console.nthNewestFailure('client', '192.0.2.1', T0 - 1, 1)).toBe(T0 + 20)
      // Recording one an hour later forgets those no window reaches.
      await fail(store, 'carol@example.com', '192.0.2.9', T0 + 19 + HOUR)
      expect(await store.console.nthNewestFailure('email', 'ada@example.com', 0, 1)).toBeNull()
      expect(await store.console.nthNewestFailure('client', '192.0.2.1', 0, 1)).toBe(T0 + 20)
    },
  },
]

runOnEveryDriver('the console store', cases)
