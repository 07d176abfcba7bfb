/**
 * For tests that need something from outside the repository (Debian's
 * Chromium; a PostgreSQL server): on a machine without it they skip,
 * saying in one line how to run them, so `bun test` passes on a fresh machine
 * with Bun alone. Where its environment variable is 1 (.ci/run sets it), the
 * prerequisite is required: missing, it is a failing test.
 */
import { test } from 'bun:test'
import { existsSync } from 'node:fs'

export interface Prerequisite {
  /** The tests that need it, as a reader names them: "the browser tests". */
  tests: string
  /** Whether it is there. */
  present: boolean
  /** What is missing, when it is: "Chromium is not installed at /usr/bin/chromium". */
  missing: string
  /** How to get it: "install Debian's chromium (apt-get install chromium)". */
  toRun: string
  /** The environment variable that makes it required when set to 1. */
  requiredBy: string
}

/**
 * Whether the tests needing `prerequisite` must skip (give it to
 * `describe.skipIf` and `test.skipIf`, and return early from their hooks).
 * When it is missing but required, a failing test says so, and the rest skip:
 * without it they have nothing to run against.
 */
export function skipWithout(prerequisite: Prerequisite): boolean {
  if (prerequisite.present) return false
  if (process.env[prerequisite.requiredBy] === '1') {
    test(`${prerequisite.tests} can run (${prerequisite.requiredBy}=1 requires them)`, () => {
      throw new Error(`${prerequisite.missing}; to run ${prerequisite.tests}, ${prerequisite.toRun}`)
    })
  } else {
    console.log(`Skipping ${prerequisite.tests}: ${prerequisite.missing}. To run them, ${prerequisite.toRun}.`)
  }
  return true
}

/**
 * The PostgreSQL database the tests may use: INTAKE_TEST_DATABASE_URL, a
 * postgres:// URL of an empty database they may create schemas and databases
 * in. `scripts/postgres-cluster.sh start` makes a throwaway cluster on
 * loopback and prints one. Empty when it is not set.
 */
export const TEST_DATABASE_URL = process.env.INTAKE_TEST_DATABASE_URL ?? ''

/**
 * PostgreSQL, for the tests that run against it:
 * `const skipPostgres = skipWithout(POSTGRES)`, then connect to TEST_DATABASE_URL.
 * Required where INTAKE_REQUIRE_POSTGRES=1 (.ci/run sets it, with a cluster of its own).
 */
export const POSTGRES: Prerequisite = {
  tests: 'the PostgreSQL tests',
  present: /^postgres(ql)?:\/\//.test(TEST_DATABASE_URL),
  missing: TEST_DATABASE_URL
    ? 'INTAKE_TEST_DATABASE_URL is not a postgres:// URL'
    : 'INTAKE_TEST_DATABASE_URL is not set',
  toRun:
    'set INTAKE_TEST_DATABASE_URL to the URL of an empty PostgreSQL database (scripts/postgres-cluster.sh start prints one)',
  requiredBy: 'INTAKE_REQUIRE_POSTGRES',
}

/** Debian's PgBouncer, where test/e2e/pgbouncer.test.ts runs it. */
export const PGBOUNCER_PATH = '/usr/sbin/pgbouncer'

/**
 * Debian's PgBouncer, for the tests that put it between intake and the test
 * cluster: `skipWithout(POSTGRES) || skipWithout(PGBOUNCER)`. Required where
 * INTAKE_REQUIRE_POSTGRES=1: .ci/run installs it beside the cluster.
 */
export const PGBOUNCER: Prerequisite = {
  tests: 'the PgBouncer tests',
  present: Bun.file(PGBOUNCER_PATH).size > 0,
  missing: `PgBouncer is not installed at ${PGBOUNCER_PATH}`,
  toRun: "install Debian's pgbouncer (apt-get install pgbouncer)",
  requiredBy: 'INTAKE_REQUIRE_POSTGRES',
}

/** Debian's nginx, where test/e2e/nginx.test.ts runs it. */
export const NGINX_PATH = '/usr/sbin/nginx'

/**
 * Debian's nginx (and openssl, which makes its test certificate), for the
 * tests that put intake instances behind it: `skipWithout(POSTGRES) || skipWithout(NGINX)`.
 * Required where INTAKE_REQUIRE_POSTGRES=1: .ci/run installs nginx-light beside the cluster.
 */
export const NGINX: Prerequisite = {
  tests: 'the nginx tests',
  present: existsSync(NGINX_PATH) && Bun.which('openssl') !== null,
  missing: existsSync(NGINX_PATH) ? 'openssl is not on PATH' : `nginx is not installed at ${NGINX_PATH}`,
  toRun: "install Debian's nginx and openssl (apt-get install nginx-light openssl)",
  requiredBy: 'INTAKE_REQUIRE_POSTGRES',
}

/** Debian's promtool (package prometheus): Prometheus's own checks of metrics text and alert rules. */
export const PROMTOOL_PATH = '/usr/bin/promtool'

/** promtool, for the metrics tests. Required where INTAKE_REQUIRE_PROMTOOL=1 (.ci/run installs it). */
export const PROMTOOL: Prerequisite = {
  tests: 'the promtool checks of the metrics and of the alert rules',
  present: existsSync(PROMTOOL_PATH),
  missing: `promtool is not installed at ${PROMTOOL_PATH}`,
  toRun: "install Debian's prometheus (apt-get install prometheus)",
  requiredBy: 'INTAKE_REQUIRE_PROMTOOL',
}
