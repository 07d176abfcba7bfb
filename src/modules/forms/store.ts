import type { Database } from '../../db/index.ts'
import type { FormStatus } from './model.ts'

/**
 * The SQL of forms. Every read computes expiry itself: a form whose
 * `expires_at` has passed is `expired` (and has no context) at once, whatever
 * the background loop has written yet.
 */

export interface FormRow {
  id: string
  account_id: string
  title: string
  description: string | null
  fields: string
  fields_count: number
  callback_url: string | null
  callback_metadata: string
  webhook_secret: string | null
  context: string | null
  settings: string
  status: FormStatus
  expires_at: number | null
  created_at: number
}

export type FormState = Pick<FormRow, 'id' | 'status' | 'expires_at' | 'context'>

/** What the public page needs to know before anything else: which page to show. */
export type FormPublicState = Pick<FormRow, 'id' | 'title' | 'status'>

export type FormSummaryRow = Pick<FormRow, 'id' | 'title' | 'description' | 'fields_count' | 'status' | 'expires_at' | 'created_at'>

export type NewForm = Omit<FormRow, 'status'> & { updated_at: number }

const PAST_EXPIRY = `(status = 'active' AND expires_at <= $now)`
const EFFECTIVE_STATUS = `CASE WHEN ${PAST_EXPIRY} THEN 'expired' ELSE status END AS status`
const SUMMARY_COLUMNS = `id, title, description, fields_count, ${EFFECTIVE_STATUS}, expires_at, created_at`
const FULL_COLUMNS = `id, account_id, title, description, fields, fields_count, callback_url, callback_metadata,
  webhook_secret, CASE WHEN ${PAST_EXPIRY} THEN NULL ELSE context END AS context, settings,
  ${EFFECTIVE_STATUS}, expires_at, created_at`

/** Sorts after every ULID: the cursor of a first page. */
const BEFORE_EVERY_FORM = '8'

export interface ListParams {
  accountId: string
  status: FormStatus | undefined
  /** Only forms older than this id. */
  before: string | undefined
  limit: number
  now: number
}

export function createFormStore(db: Database) {
  const insert = db.query<never, NewForm>(
    `INSERT INTO forms (id, account_id, title, description, fields, fields_count, callback_url, callback_metadata,
       webhook_secret, context, settings, status, expires_at, created_at, updated_at)
     VALUES ($id, $account_id, $title, $description, $fields, $fields_count, $callback_url, $callback_metadata,
       $webhook_secret, $context, $settings, 'active', $expires_at, $created_at, $updated_at)`,
  )
  const byIdForAccount = db.query<FormRow, { id: string; account_id: string; now: number }>(
    `SELECT ${FULL_COLUMNS} FROM forms WHERE id = $id AND account_id = $account_id`,
  )
  const byId = db.query<FormRow, { id: string; now: number }>(`SELECT ${FULL_COLUMNS} FROM forms WHERE id = $id`)
  const publicStateById = db.query<FormPublicState, { id: string; now: number }>(`SELECT id, title, ${EFFECTIVE_STATUS} FROM forms WHERE id = $id`)
  const stateForAccount = db.query<FormState, { id: string; account_id: string; now: number }>(
    `SELECT id, ${EFFECTIVE_STATUS}, expires_at, CASE WHEN ${PAST_EXPIRY} THEN NULL ELSE context END AS context
       FROM forms WHERE id = $id AND account_id = $account_id`,
  )

  // One statement per filter, each shaped to walk an index newest first and stop after `limit`.
  const page = `ORDER BY id DESC LIMIT $limit`
  const scope = `account_id = $account_id AND id < $before`
  type ListArgs = { account_id: string; before: string; limit: number; now: number; status?: string }
  const lists = {
    all: db.query<FormSummaryRow, ListArgs>(`SELECT ${SUMMARY_COLUMNS} FROM forms WHERE ${scope} ${page}`),
    active: db.query<FormSummaryRow, ListArgs>(
      `SELECT ${SUMMARY_COLUMNS} FROM forms
        WHERE ${scope} AND status = 'active' AND (expires_at IS NULL OR expires_at > $now) ${page}`,
    ),
    stored: db.query<FormSummaryRow, ListArgs>(
      `SELECT ${SUMMARY_COLUMNS} FROM forms WHERE ${scope} AND status = $status ${page}`,
    ),
    // Expired forms are those written as expired plus active ones past their time
    // that the loop has not reached yet (few: it runs every second).
    expired: db.query<FormSummaryRow, ListArgs>(
      `SELECT * FROM (SELECT ${SUMMARY_COLUMNS} FROM forms WHERE ${scope} AND status = 'expired' ${page})
       UNION ALL
       SELECT * FROM (SELECT ${SUMMARY_COLUMNS} FROM forms INDEXED BY forms_active_expiry
                       WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at <= $now AND ${scope} ${page})
       ${page}`,
    ),
  }
  const setStatus = db.query('UPDATE forms SET status = $status, updated_at = $now WHERE id = $id')
  const setExpiry = db.query('UPDATE forms SET expires_at = $expires_at, updated_at = $now WHERE id = $id')
  const remove = db.query('DELETE FROM forms WHERE id = $id AND account_id = $account_id')
  const idempotencyKey = db.query<{ request_hash: string; form_id: string; created_at: number }, { account_id: string; key: string }>(
    'SELECT request_hash, form_id, created_at FROM idempotency_keys WHERE account_id = $account_id AND key = $key',
  )
  const rememberKey = db.query(
    `INSERT OR REPLACE INTO idempotency_keys (account_id, key, request_hash, form_id, created_at)
     VALUES ($account_id, $key, $request_hash, $form_id, $created_at)`,
  )
  const forgetKeysBefore = db.query<never, { before: number }>('DELETE FROM idempotency_keys WHERE created_at < $before')
  // The sweep writes what reads already compute: status expired, context gone.
  const expireDue = db.query<{ id: string }, { now: number; limit: number }>(
    `UPDATE forms SET status = 'expired', context = NULL, updated_at = $now
      WHERE id IN (SELECT id FROM forms INDEXED BY forms_active_expiry
                    WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at <= $now LIMIT $limit)
     RETURNING id`,
  )
  const nextExpiry = db.query<{ at: number | null }, []>(
    `SELECT min(expires_at) AS at FROM forms INDEXED BY forms_active_expiry WHERE status = 'active' AND expires_at IS NOT NULL`,
  )

  return {
    insert: (form: NewForm) => void insert.run(form),
    findForAccount: (accountId: string, id: string, now: number) =>
      byIdForAccount.get({ id, account_id: accountId, now }) ?? undefined,
    find: (id: string, now: number) => byId.get({ id, now }) ?? undefined,
    /** The state and title alone: not the fields, which may be a megabyte of JSON. */
    findPublicState: (id: string, now: number) => publicStateById.get({ id, now }) ?? undefined,
    /** Only what changes after creation: the state, expiry and context of the account's form. */
    findStateForAccount: (accountId: string, id: string, now: number) =>
      stateForAccount.get({ id, account_id: accountId, now }) ?? undefined,
    list(params: ListParams): FormSummaryRow[] {
      const args: ListArgs = {
        account_id: params.accountId,
        before: params.before ?? BEFORE_EVERY_FORM,
        limit: params.limit,
        now: params.now,
      }
      switch (params.status) {
        case undefined:
          return lists.all.all(args)
        case 'active':
          return lists.active.all(args)
        case 'expired':
          return lists.expired.all(args)
        default:
          return lists.stored.all({ ...args, status: params.status })
      }
    },
    setStatus: (id: string, status: FormStatus, now: number) => void setStatus.run({ id, status, now }),
    setExpiry: (id: string, expiresAt: number | null, now: number) =>
      void setExpiry.run({ id, expires_at: expiresAt, now }),
    /** True when a form was deleted (with its responses, files and deliveries, by cascade). */
    delete: (accountId: string, id: string) => remove.run({ id, account_id: accountId }).changes === 1,
    /** The form an Idempotency-Key of the account created, with the hash of the body it came with. */
    idempotencyKey: (accountId: string, key: string) => idempotencyKey.get({ account_id: accountId, key }) ?? undefined,
    rememberIdempotencyKey: (entry: { accountId: string; key: string; requestHash: string; formId: string; createdAt: number }) =>
      void rememberKey.run({
        account_id: entry.accountId,
        key: entry.key,
        request_hash: entry.requestHash,
        form_id: entry.formId,
        created_at: entry.createdAt,
      }),
    /** Forgets Idempotency-Keys made before `before`; returns how many. */
    forgetIdempotencyKeysBefore: (before: number) => forgetKeysBefore.run({ before }).changes,
    /** Writes `expired` on up to `limit` active forms past their time; returns their ids. */
    expireDue: (now: number, limit: number) => expireDue.all({ now, limit }).map((row) => row.id),
    /** The earliest expiry among active forms, if any. */
    nextExpiryAt: () => nextExpiry.get()!.at,
  }
}

export type FormStore = ReturnType<typeof createFormStore>
