/**
 * The store conformance suite's frame (River's riverdriver/riverdrivertest):
 * one table of cases per module, each case run on every driver: SQLite
 * always, PostgreSQL when INTAKE_TEST_DATABASE_URL is set (skipped with one
 * line otherwise, required under INTAKE_REQUIRE_POSTGRES=1). Every case gets
 * a store on a fresh, empty database of its own, so no case sees another's rows.
 */
import { afterEach, describe, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { StoreKind } from '../../src/db/driver.ts'
import { newId } from '../../src/lib/ids.ts'
import { openStore, type Store } from '../../src/stores.ts'
import { freshPostgresDatabase, T0 } from '../postgres.ts'
import { POSTGRES, skipWithout, TEST_DATABASE_URL } from '../prerequisites.ts'

export { formRecord, T0 } from '../postgres.ts'

/** What a case is given: a store on an empty database, and more stores on that same database (other processes). */
interface StoreWorld {
  kind: StoreKind
  store: Store
  /** Another store on the same database, as another process would open it; closed after the case. */
  anotherStore(): Promise<Store>
  /** A new account's id (each case makes its own). */
  account(name?: string): Promise<string>
}

export interface StoreCase {
  name: string
  /** Drivers the case is about (both when not given): e.g. claims that skip each other's locked rows. */
  only?: StoreKind
  run(world: StoreWorld): Promise<void>
}

/**
 * The one place the suite builds a store: `openStore` on a fresh SQLite file
 * or a fresh PostgreSQL database. Returns the store and how to open more on
 * the same database, and what removes the database.
 */
async function openDriver(kind: StoreKind): Promise<{ open(): Promise<Store>; drop(): Promise<void> }> {
  if (kind === 'postgres') {
    const database = await freshPostgresDatabase(TEST_DATABASE_URL)
    return {
      open: () => openStore({ dbPath: '', databaseUrl: database.url }, { poolSize: 2 }),
      drop: () => database.drop(),
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'intake-store-'))
  return {
    open: () => openStore({ dbPath: join(dir, 'intake.db'), databaseUrl: undefined }),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  }
}

const skipPostgres = skipWithout(POSTGRES)

/** Runs every case of `cases` on each driver, as `describe(<module> on <driver>)`. */
export function runOnEveryDriver(module: string, cases: StoreCase[]): void {
  for (const kind of ['sqlite', 'postgres'] as const) {
    describe.skipIf(kind === 'postgres' && skipPostgres)(`${module} on ${kind}`, () => {
      const open: Array<{ stores: Store[]; drop(): Promise<void> }> = []
      afterEach(async () => {
        for (const { stores, drop } of open.splice(0)) {
          for (const store of stores.reverse()) await store.close().catch(() => {})
          await drop()
        }
      })
      for (const c of cases) {
        test.skipIf(c.only !== undefined && c.only !== kind)(c.name, async () => {
          const driver = await openDriver(kind)
          const stores: Store[] = []
          open.push({ stores, drop: driver.drop })
          const store = await driver.open()
          stores.push(store)
          await c.run({
            kind,
            store,
            async anotherStore() {
              const other = await driver.open()
              stores.push(other)
              return other
            },
            account: (name = `account-${newId()}`) =>
              store.transaction((tx) => tx.keys.ensureAccount(newId(), name, T0)),
          })
        })
      }
    })
  }
}
