import type { Query } from '../../../db/postgres/driver.ts'
import { optionalTimeOf } from '../../../db/rows.ts'
import type { FormStatus } from '../model.ts'
import {
  type FormReads,
  type FormState,
  type FormWrites,
  type IdempotencyRecord,
  type NewForm,
  TITLE_SEARCH_WINDOW,
  type WebhookTarget,
} from './index.ts'
import {
  ACTIVE_FORMS_BY_ACCOUNT,
  containsPattern,
  EXPIRED_COLUMNS,
  type ExpiredRow,
  type FormRow,
  indexedSearch,
  type PublicStateRow,
  type SummaryRow,
  toExpiredForm,
  toPublicState,
  toStatusCounts,
  toStoredForm,
  toSummary,
} from './rows.ts'

// Every read computes expiry with the time it is given (`now`, the parameter named here).
const pastExpiry = (now: string) => `(status = 'active' AND expires_at <= ${now})`
const effectiveStatus = (now: string) => `CASE WHEN ${pastExpiry(now)} THEN 'expired' ELSE status END AS status`
const liveContext = (now: string) => `CASE WHEN ${pastExpiry(now)} THEN NULL ELSE context END AS context`
const summaryColumns = (now: string) =>
  `id, title, description, fields_count, ${effectiveStatus(now)}, expires_at, created_at`
const fullColumns = (
  now: string,
) => `id, account_id, title, description, fields, fields_count, callback_url, callback_events, callback_metadata,
  webhook_secret, ${liveContext(now)}, settings, page, ${effectiveStatus(now)}, expires_at, created_at`

/** Sorts after every ULID: the cursor of a first page. */
const BEFORE_EVERY_FORM = '8'

/**
 * Transactions that look an Idempotency-Key up before creating a form take
 * this lock for the key (with a hash of account and key), so concurrent
 * duplicates wait for each other and the second finds the first's form, as
 * they do on SQLite's single writer. Two-int4 advisory locks are a space of
 * their own, apart from the schema lock's bigint: "int" in ASCII.
 */
const IDEMPOTENCY_LOCKS = 0x696e74

const INSERT = `INSERT INTO forms (id, account_id, title, description, fields, fields_count, callback_url, callback_metadata,
     webhook_secret, context, settings, status, expires_at, created_at, updated_at, page, callback_events)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'active', $12, $13, $13, $14, $15)`
const BY_ID = `SELECT ${fullColumns('$2')} FROM forms WHERE id = $1`
const BY_ID_FOR_ACCOUNT = `SELECT ${fullColumns('$3')} FROM forms WHERE id = $1 AND account_id = $2`
// The row locked until the commit, as SQLite's single writer holds what a unit reads.
const BY_ID_FOR_ACCOUNT_FOR_UPDATE = `${BY_ID_FOR_ACCOUNT} FOR UPDATE`
const PUBLIC_STATE = `SELECT id, title, ${effectiveStatus('$2')}, page FROM forms WHERE id = $1`
const STATE_FOR_ACCOUNT = `SELECT id, ${effectiveStatus('$3')}, expires_at, ${liveContext('$3')} FROM forms WHERE id = $1 AND account_id = $2`

// One statement per filter, each shaped to walk an index newest first and stop
// after the limit. Parameters: $1 account, $2 before, $3 limit, $4 now, $5 status.
const SCOPE = `account_id = $1 AND id < $2`
const PAGE = `ORDER BY id DESC LIMIT $3`
const LISTS = {
  all: `SELECT ${summaryColumns('$4')} FROM forms WHERE ${SCOPE} ${PAGE}`,
  active: `SELECT ${summaryColumns('$4')} FROM forms
    WHERE ${SCOPE} AND status = 'active' AND (expires_at IS NULL OR expires_at > $4) ${PAGE}`,
  stored: `SELECT ${summaryColumns('$4')} FROM forms WHERE ${SCOPE} AND status = $5 ${PAGE}`,
  // Expired forms are those written as expired plus active ones past their time
  // that the sweep has not reached yet: few, found through the expiry index
  // (materialised, so the planner cannot walk all the account's active forms instead).
  expired: `WITH unswept AS MATERIALIZED (
      SELECT id FROM forms WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at <= $4
    )
    SELECT * FROM (
      (SELECT ${summaryColumns('$4')} FROM forms WHERE ${SCOPE} AND status = 'expired' ${PAGE})
      UNION ALL
      (SELECT ${summaryColumns('$4')} FROM forms WHERE id IN (SELECT id FROM unswept) AND ${SCOPE} ${PAGE})
    ) listed ${PAGE}`,
}
// A title search: the newest forms of the scope first (a common word fills its page there), else the
// forms the trigram index finds (materialised, so the planner cannot walk all the account's forms
// instead), else, for text too short for trigrams, every form of the scope. Parameters as the lists',
// $5 the status or null, $6 the LIKE pattern; the status is the one reads compute.
const MATCHING = `WHERE title ILIKE $6 AND ($5::text IS NULL OR status = $5::text)`
const TITLED = {
  window: `SELECT * FROM (SELECT ${summaryColumns('$4')} FROM forms WHERE ${SCOPE} ORDER BY id DESC LIMIT ${TITLE_SEARCH_WINDOW}) listed
    ${MATCHING} ${PAGE}`,
  indexed: `WITH found AS MATERIALIZED (SELECT id FROM forms WHERE title ILIKE $6)
    SELECT * FROM (SELECT ${summaryColumns('$4')} FROM forms WHERE id IN (SELECT id FROM found) AND ${SCOPE}) listed
    ${MATCHING} ${PAGE}`,
  scan: `SELECT * FROM (SELECT ${summaryColumns('$4')} FROM forms WHERE ${SCOPE}) listed ${MATCHING} ${PAGE}`,
}
const SET_STATUS = 'UPDATE forms SET status = $2, updated_at = $3 WHERE id = $1'
const SET_EXPIRY = 'UPDATE forms SET expires_at = $2, updated_at = $3 WHERE id = $1'
// Only an active, unexpired form moves: the first submission to commit wins
// (the others wait for its row lock, then find it completed).
const COMPLETE = `UPDATE forms SET status = 'completed', updated_at = $2
  WHERE id = $1 AND status = 'active' AND (expires_at IS NULL OR expires_at > $2)`
const DELETE = 'DELETE FROM forms WHERE id = $1 AND account_id = $2'
const LOCK_IDEMPOTENCY_KEY = `SELECT pg_advisory_xact_lock(${IDEMPOTENCY_LOCKS}, hashtext($1 || ' ' || $2))`
const IDEMPOTENCY_KEY =
  'SELECT request_hash, form_id, created_at FROM idempotency_keys WHERE account_id = $1 AND key = $2'
// Replaces a record past its window, which the service found and passed over.
const REMEMBER_KEY = `INSERT INTO idempotency_keys (account_id, key, request_hash, form_id, created_at) VALUES ($1, $2, $3, $4, $5)
  ON CONFLICT (account_id, key) DO UPDATE
  SET request_hash = EXCLUDED.request_hash, form_id = EXCLUDED.form_id, created_at = EXCLUDED.created_at`
const FORGET_KEYS_BEFORE = 'DELETE FROM idempotency_keys WHERE created_at < $1'
// The sweep writes what reads already compute: status expired, context gone, and
// returns the forms as they were (the CTE reads before the update). Rows another
// instance's sweep (or a submission, or a cancel) holds are left to it.
const EXPIRE_DUE = `WITH due AS (
    SELECT ${EXPIRED_COLUMNS} FROM forms WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at <= $1
     ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED
  ), expired AS (
    UPDATE forms SET status = 'expired', context = NULL, updated_at = $1 FROM due WHERE forms.id = due.id RETURNING forms.id
  )
  SELECT due.* FROM due JOIN expired USING (id) ORDER BY due.expires_at, due.id`
const COUNT_BY_STATUS = `SELECT status, count(*) AS n FROM forms GROUP BY status`
const COUNT_STORED = 'SELECT status, count(*) AS forms FROM forms WHERE account_id = $1 GROUP BY status'
const COUNT_PAST_EXPIRY = `SELECT count(*) AS forms FROM forms
  WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at <= $2 AND account_id = $1`
const NEXT_EXPIRY = `SELECT min(expires_at) AS at FROM forms WHERE status = 'active' AND expires_at IS NOT NULL`
const WEBHOOK_TARGETS =
  'SELECT id, account_id, webhook_secret FROM forms WHERE id = ANY($1::text[]) AND webhook_secret IS NOT NULL'

/** The forms module's store on PostgreSQL: one for the pool's reads, one per transaction. */
export function createPostgresFormStore(query: Query): FormWrites {
  type StateRow = Pick<FormRow, 'id' | 'status' | 'expires_at' | 'context'>
  const toState = (row: StateRow | undefined): FormState | undefined =>
    row && { id: row.id, status: row.status, expiresAt: optionalTimeOf(row.expires_at), context: row.context }
  const lookup =
    <Row>(sql: string) =>
    async (args: unknown[]) =>
      (await query<Row>(sql, args))[0]
  const formOf = lookup<FormRow>(BY_ID)
  const publicStateOf = lookup<PublicStateRow>(PUBLIC_STATE)
  const stateOf = lookup<StateRow>(STATE_FOR_ACCOUNT)
  const reads: FormReads = {
    async activeFormsByAccount(now) {
      const rows = await query<{ account_id: string; n: string }>(ACTIVE_FORMS_BY_ACCOUNT.replace('?', '$1'), [now])
      return new Map(rows.map((row) => [row.account_id, Number(row.n)]))
    },
    async find(id, now) {
      const row = await formOf([id, now])
      return row ? toStoredForm(row) : undefined
    },
    async findForAccount(accountId, id, now) {
      const [row] = await query<FormRow>(BY_ID_FOR_ACCOUNT, [id, accountId, now])
      return row ? toStoredForm(row) : undefined
    },
    findPublicState: async (id, now) => toPublicState(await publicStateOf([id, now])),
    findStateForAccount: async (accountId, id, now) => toState(await stateOf([id, accountId, now])),
    async list(params) {
      const args = [params.accountId, params.before ?? BEFORE_EVERY_FORM, params.limit, params.now]
      if (params.titleContains !== undefined) {
        const search = [...args, params.status ?? null, containsPattern(params.titleContains)]
        const newest = await query<SummaryRow>(TITLED.window, search)
        if (newest.length >= params.limit) return newest.map(toSummary)
        const rest = indexedSearch(params.titleContains) ? TITLED.indexed : TITLED.scan
        return (await query<SummaryRow>(rest, search)).map(toSummary)
      }
      let rows: SummaryRow[]
      switch (params.status) {
        case undefined:
          rows = await query<SummaryRow>(LISTS.all, args)
          break
        case 'active':
          rows = await query<SummaryRow>(LISTS.active, args)
          break
        case 'expired':
          rows = await query<SummaryRow>(LISTS.expired, args)
          break
        default:
          rows = await query<SummaryRow>(LISTS.stored, [...args, params.status])
      }
      return rows.map(toSummary)
    },
    async idempotencyKey(accountId, key): Promise<IdempotencyRecord | undefined> {
      const [row] = await query<{ request_hash: string; form_id: string; created_at: string }>(IDEMPOTENCY_KEY, [
        accountId,
        key,
      ])
      return row ? { requestHash: row.request_hash, formId: row.form_id, createdAt: Number(row.created_at) } : undefined
    },
    async countByStatus(accountId, now) {
      const [stored, [pastExpiry]] = await Promise.all([
        query<{ status: FormStatus; forms: string }>(COUNT_STORED, [accountId]),
        query<{ forms: string }>(COUNT_PAST_EXPIRY, [accountId, now]),
      ])
      return toStatusCounts(stored, pastExpiry!.forms)
    },
    // The trigram index is PostgreSQL's own (GIN, its pending list taking inserts cheaply).
    titlesToIndex: async () => false,
    async nextExpiryAt() {
      const [row] = await query<{ at: string | null }>(NEXT_EXPIRY)
      return optionalTimeOf(row!.at)
    },
    async countAllByStatus() {
      const rows = await query<{ status: FormStatus; n: string }>(COUNT_BY_STATUS)
      return new Map(rows.map((row) => [row.status, Number(row.n)]))
    },
    async webhookTargets(formIds) {
      const targets = new Map<string, WebhookTarget>()
      if (formIds.length === 0) return targets
      const rows = await query<{ id: string; account_id: string; webhook_secret: string }>(WEBHOOK_TARGETS, [
        [...new Set(formIds)],
      ])
      for (const row of rows) targets.set(row.id, { accountId: row.account_id, secret: row.webhook_secret })
      return targets
    },
  }

  return {
    ...reads,
    async findForAccountForUpdate(accountId, id, now) {
      const [row] = await query<FormRow>(BY_ID_FOR_ACCOUNT_FOR_UPDATE, [id, accountId, now])
      return row ? toStoredForm(row) : undefined
    },
    async idempotencyKeyForUpdate(accountId, key) {
      await query(LOCK_IDEMPOTENCY_KEY, [accountId, key])
      return reads.idempotencyKey(accountId, key)
    },
    async insert(form: NewForm) {
      await query(INSERT, [
        form.id,
        form.accountId,
        form.title,
        form.description,
        JSON.stringify(form.fields),
        form.fieldsCount,
        form.callbackUrl,
        form.callbackMetadata,
        form.webhookSecret,
        form.context,
        form.settings,
        form.expiresAt,
        form.createdAt,
        JSON.stringify(form.page),
        JSON.stringify(form.callbackEvents),
      ])
    },
    setStatus: async (id, status, now) => void (await query(SET_STATUS, [id, status, now])),
    setExpiry: async (id, expiresAt, now) => void (await query(SET_EXPIRY, [id, expiresAt, now])),
    complete: async (id, now) => (await query(COMPLETE, [id, now])).count === 1,
    delete: async (accountId, id) => (await query(DELETE, [id, accountId])).count === 1,
    rememberIdempotencyKey: async (entry) =>
      void (await query(REMEMBER_KEY, [entry.accountId, entry.key, entry.requestHash, entry.formId, entry.createdAt])),
    forgetIdempotencyKeysBefore: async (before) => (await query(FORGET_KEYS_BEFORE, [before])).count,
    indexTitles: async () => 0,
    expireDue: async (now, limit) => (await query<ExpiredRow>(EXPIRE_DUE, [now, limit])).map(toExpiredForm),
  }
}
