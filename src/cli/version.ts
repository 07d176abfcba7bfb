import { SCHEMA_VERSION } from '../db/sqlite/open.ts'
import { COMMIT, VERSION } from '../version.ts'

/**
 * `intake --version`: the first line as the start-up banner begins
 * (`intake 0.6.0`), then one `name: value` line each, so a script takes what
 * it needs (`intake --version | sed -n 's/^commit: //p'`). The schemas are
 * the ones this build writes, not those of a database.
 */
export async function versionText(): Promise<string> {
  // Loaded here rather than at start, as everywhere the command line touches PostgreSQL.
  const { POSTGRES_SCHEMA_VERSION } = await import('../db/postgres/migrations.ts')
  return `intake ${VERSION}
commit: ${COMMIT}
sqlite schema: ${SCHEMA_VERSION}
postgresql schema: ${POSTGRES_SCHEMA_VERSION}
bun: ${Bun.version}
`
}
