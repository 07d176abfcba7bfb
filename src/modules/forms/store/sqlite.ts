import type { Database } from 'bun:sqlite'
import { timeSlicer } from '../../../lib/slices.ts'
import { FORM_STATUSES, type FormStatus } from '../model.ts'
import {
  type FormState,
  type FormWrites,
  type IdempotencyRecord,
  type ListParams,
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

const PAST_EXPIRY = `(status = 'active' AND expires_at <= $now)`
const EFFECTIVE_STATUS = `CASE WHEN ${PAST_EXPIRY} THEN 'expired' ELSE status END AS status`
const SUMMARY_COLUMNS = `id, title, description, fields_count, ${EFFECTIVE_STATUS}, expires_at, created_at`
const FULL_COLUMNS = `id, account_id, title, description, fields, fields_count, callback_url, callback_events, callback_metadata,
  webhook_secret, CASE WHEN ${PAST_EXPIRY} THEN NULL ELSE context END AS context, settings, page,
  ${EFFECTIVE_STATUS}, expires_at, created_at`

/** Sorts after every ULID: the cursor of a first page. */
const BEFORE_EVERY_FORM = '8'
/** Index entries counted in one go (a few ms) before the event loop takes its turn. */
const COUNT_SLICE = 20_000

/** The forms module's store on SQLite (one per connection: the reads' and the writer's). */
export function createSqliteFormStore(db: Database): FormWrites {
  const insert = db.query(
    `INSERT INTO forms (id, account_id, title, description, fields, fields_count, callback_url, callback_events, callback_metadata,
       webhook_secret, context, settings, status, expires_at, created_at, updated_at, page)
     VALUES ($id, $account_id, $title, $description, $fields, $fields_count, $callback_url, $callback_events, $callback_metadata,
       $webhook_secret, $context, $settings, 'active', $expires_at, $created_at, $created_at, $page)`,
  )
  const byIdForAccount = db.query<FormRow, { id: string; account_id: string; now: number }>(
    `SELECT ${FULL_COLUMNS} FROM forms WHERE id = $id AND account_id = $account_id`,
  )
  const byId = db.query<FormRow, { id: string; now: number }>(`SELECT ${FULL_COLUMNS} FROM forms WHERE id = $id`)
  const publicStateById = db.query<PublicStateRow, { id: string; now: number }>(
    `SELECT id, title, ${EFFECTIVE_STATUS}, page FROM forms WHERE id = $id`,
  )
  const stateForAccount = db.query<
    { id: string; status: FormStatus; expires_at: number | null; context: string | null },
    { id: string; account_id: string; now: number }
  >(
    `SELECT id, ${EFFECTIVE_STATUS}, expires_at, CASE WHEN ${PAST_EXPIRY} THEN NULL ELSE context END AS context
       FROM forms WHERE id = $id AND account_id = $account_id`,
  )

  // One statement per filter, each shaped to walk an index newest first and stop after `limit`.
  const page = `ORDER BY id DESC LIMIT $limit`
  const scope = `account_id = $account_id AND id < $before`
  type ListArgs = { account_id: string; before: string; limit: number; now: number; status?: string }
  const lists = {
    all: db.query<SummaryRow, ListArgs>(`SELECT ${SUMMARY_COLUMNS} FROM forms WHERE ${scope} ${page}`),
    active: db.query<SummaryRow, ListArgs>(
      `SELECT ${SUMMARY_COLUMNS} FROM forms
        WHERE ${scope} AND status = 'active' AND (expires_at IS NULL OR expires_at > $now) ${page}`,
    ),
    stored: db.query<SummaryRow, ListArgs>(
      `SELECT ${SUMMARY_COLUMNS} FROM forms WHERE ${scope} AND status = $status ${page}`,
    ),
    // Expired forms are those written as expired plus active ones past their time
    // that the sweep has not reached yet (few: it runs every second).
    expired: db.query<SummaryRow, ListArgs>(
      `SELECT * FROM (SELECT ${SUMMARY_COLUMNS} FROM forms WHERE ${scope} AND status = 'expired' ${page})
       UNION ALL
       SELECT * FROM (SELECT ${SUMMARY_COLUMNS} FROM forms INDEXED BY forms_active_expiry
                       WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at <= $now AND ${scope} ${page})
       ${page}`,
    ),
  }
  // A title search: the newest forms of the scope first (a common word fills its page there), else the
  // trigram index's matches (a phrase of trigrams: the text itself, case aside), else, for text too short
  // for trigrams, every form of the scope. The status is the one reads compute.
  type SearchArgs = Omit<ListArgs, 'status'> & { status: string | null; like: string; phrase: string }
  const matching = `WHERE title LIKE $like ESCAPE '\\' AND ($status IS NULL OR status = $status)`
  const titled = {
    window: db.query<SummaryRow, SearchArgs>(
      `SELECT * FROM (SELECT ${SUMMARY_COLUMNS} FROM forms WHERE ${scope} ORDER BY id DESC LIMIT ${TITLE_SEARCH_WINDOW})
        ${matching} ${page}`,
    ),
    // What the index found, and the forms it does not hold yet (after the last it holds: a range of the scope's index).
    indexed: db.query<SummaryRow, SearchArgs>(
      `SELECT * FROM (
         SELECT ${SUMMARY_COLUMNS} FROM forms
          WHERE id IN (SELECT form_id FROM form_titles WHERE seq IN
                         (SELECT rowid FROM form_titles_search WHERE form_titles_search MATCH $phrase))
            AND ${scope}
         UNION ALL
         SELECT ${SUMMARY_COLUMNS} FROM forms
          WHERE ${scope} AND id > coalesce((SELECT form_id FROM form_titles ORDER BY form_id DESC LIMIT 1), '') AND title LIKE $like ESCAPE '\\')
        WHERE ($status IS NULL OR status = $status) ${page}`,
    ),
    scan: db.query<SummaryRow, SearchArgs>(
      `SELECT * FROM (SELECT ${SUMMARY_COLUMNS} FROM forms WHERE ${scope}) ${matching} ${page}`,
    ),
  }
  const setStatus = db.query('UPDATE forms SET status = $status, updated_at = $now WHERE id = $id')
  const setExpiry = db.query('UPDATE forms SET expires_at = $expires_at, updated_at = $now WHERE id = $id')
  // Only an active, unexpired form moves: the first submission to commit wins.
  const complete = db.query(
    `UPDATE forms SET status = 'completed', updated_at = $now
      WHERE id = $id AND status = 'active' AND (expires_at IS NULL OR expires_at > $now)`,
  )
  const remove = db.query('DELETE FROM forms WHERE id = $id AND account_id = $account_id')
  const idempotencyKey = db.query<
    { request_hash: string; form_id: string; created_at: number },
    { account_id: string; key: string }
  >('SELECT request_hash, form_id, created_at FROM idempotency_keys WHERE account_id = $account_id AND key = $key')
  const rememberKey = db.query(
    `INSERT OR REPLACE INTO idempotency_keys (account_id, key, request_hash, form_id, created_at)
     VALUES ($account_id, $key, $request_hash, $form_id, $created_at)`,
  )
  const forgetKeysBefore = db.query<never, { before: number }>(
    'DELETE FROM idempotency_keys WHERE created_at < $before',
  )
  // The sweep writes what reads already compute: status expired, context gone. The forms are
  // read first, as they were: the one writer holds them until the update.
  const dueForExpiry = db.query<ExpiredRow, { now: number; limit: number }>(
    `SELECT ${EXPIRED_COLUMNS} FROM forms INDEXED BY forms_active_expiry
      WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at <= $now ORDER BY expires_at LIMIT $limit`,
  )
  const expire = db.query<never, { id: string; now: number }>(
    `UPDATE forms SET status = 'expired', context = NULL, updated_at = $now WHERE id = $id`,
  )
  const nextExpiry = db.query<{ at: number | null }, []>(
    `SELECT min(expires_at) AS at FROM forms INDEXED BY forms_active_expiry WHERE status = 'active' AND expires_at IS NOT NULL`,
  )
  // SQLite answers on this thread: forms are counted a slice of one status's index at a time, the
  // event loop free between slices (a million forms take a few hundred ms in all).
  const nextAccount = db.query<{ account_id: string }, { after: string }>(
    'SELECT account_id FROM forms INDEXED BY forms_account_status_newest WHERE account_id > $after ORDER BY account_id LIMIT 1',
  )
  const countSlice = db.query<
    { forms: number; last: string | null },
    { account_id: string; status: string; before: string }
  >(
    `SELECT count(*) AS forms, min(id) AS last FROM (
       SELECT id FROM forms INDEXED BY forms_account_status_newest
        WHERE account_id = $account_id AND status = $status AND id < $before ORDER BY id DESC LIMIT ${COUNT_SLICE})`,
  )
  const countPastExpiry = db.query<{ forms: number }, { account_id: string; now: number }>(
    `SELECT count(*) AS forms FROM forms INDEXED BY forms_active_expiry
      WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at <= $now AND account_id = $account_id`,
  )
  /** One account's forms by status as stored, the event loop's turn between slices. */
  async function countStored(accountId: string, slicer: ReturnType<typeof timeSlicer>) {
    const stored: Array<{ status: FormStatus; forms: number }> = []
    for (const status of FORM_STATUSES) {
      let forms = 0
      let before = BEFORE_EVERY_FORM
      for (;;) {
        const slice = countSlice.get({ account_id: accountId, status, before })!
        forms += slice.forms
        if (slice.forms < COUNT_SLICE) break
        before = slice.last!
        await slicer.pause()
      }
      stored.push({ status, forms })
    }
    return stored
  }
  // The title search's index is filled here, a batch a transaction (FTS5 writes a segment per transaction):
  // the forms after the last one it holds. (A form made with a smaller id later, by a clock set back, is
  // found only among the newest forms a search looks through first.)
  const afterIndexed = `id > coalesce((SELECT form_id FROM form_titles ORDER BY form_id DESC LIMIT 1), '')`
  const titlesToIndex = db.query<{ waiting: number }, []>(
    `SELECT EXISTS (SELECT 1 FROM forms WHERE ${afterIndexed}) OR EXISTS (SELECT 1 FROM form_titles_gone) AS waiting`,
  )
  const unindexed = db.query<{ id: string; title: string }, { limit: number }>(
    `SELECT id, title FROM forms WHERE ${afterIndexed} ORDER BY id LIMIT $limit`,
  )
  const addTitle = db.query<{ seq: number }, { form_id: string }>(
    'INSERT INTO form_titles (form_id) VALUES ($form_id) RETURNING seq',
  )
  const indexTitle = db.query<never, { seq: number; title: string }>(
    'INSERT INTO form_titles_search (rowid, title) VALUES ($seq, $title)',
  )
  const goneTitles = db.query<{ seq: number }, []>('SELECT seq FROM form_titles_gone')
  // One by rowid: FTS5 looks a rowid up, where `rowid IN (subquery)` would read the whole index.
  const forgetTitle = db.query<never, [number]>('DELETE FROM form_titles_search WHERE rowid = ?')
  const clearGone = db.query<never, []>('DELETE FROM form_titles_gone')
  const webhookTarget = db.query<{ account_id: string; webhook_secret: string }, [string]>(
    'SELECT account_id, webhook_secret FROM forms WHERE id = ? AND webhook_secret IS NOT NULL',
  )

  async function findForAccount(accountId: string, id: string, now: number) {
    const row = byIdForAccount.get({ id, account_id: accountId, now })
    return row ? toStoredForm(row) : undefined
  }
  async function idempotencyRecord(accountId: string, key: string): Promise<IdempotencyRecord | undefined> {
    const row = idempotencyKey.get({ account_id: accountId, key })
    return row ? { requestHash: row.request_hash, formId: row.form_id, createdAt: row.created_at } : undefined
  }

  const activeByAccount = db.query<{ account_id: string; n: number }, [number]>(ACTIVE_FORMS_BY_ACCOUNT)
  return {
    async activeFormsByAccount(now) {
      return new Map(activeByAccount.all(now).map((row) => [row.account_id, Number(row.n)]))
    },
    async insert(form: NewForm) {
      insert.run({
        id: form.id,
        account_id: form.accountId,
        title: form.title,
        description: form.description,
        fields: JSON.stringify(form.fields),
        fields_count: form.fieldsCount,
        callback_url: form.callbackUrl,
        callback_events: JSON.stringify(form.callbackEvents),
        callback_metadata: form.callbackMetadata,
        webhook_secret: form.webhookSecret,
        context: form.context,
        settings: form.settings,
        expires_at: form.expiresAt,
        created_at: form.createdAt,
        page: JSON.stringify(form.page),
      })
    },
    findForAccount,
    // SQLite's writer runs one unit of work at a time: what a unit reads holds until it commits.
    findForAccountForUpdate: findForAccount,
    async find(id, now) {
      const row = byId.get({ id, now })
      return row ? toStoredForm(row) : undefined
    },
    findPublicState: async (id, now) => toPublicState(publicStateById.get({ id, now })),
    async findStateForAccount(accountId, id, now): Promise<FormState | undefined> {
      const row = stateForAccount.get({ id, account_id: accountId, now })
      return row ? { id: row.id, status: row.status, expiresAt: row.expires_at, context: row.context } : undefined
    },
    async list(params: ListParams) {
      const args: ListArgs = {
        account_id: params.accountId,
        before: params.before ?? BEFORE_EVERY_FORM,
        limit: params.limit,
        now: params.now,
      }
      if (params.titleContains !== undefined) {
        const text = params.titleContains
        const search: SearchArgs = {
          ...args,
          status: params.status ?? null,
          like: containsPattern(text),
          phrase: `"${text.replaceAll('"', '""')}"`,
        }
        const newest = titled.window.all(search)
        if (newest.length >= params.limit) return newest.map(toSummary)
        return (indexedSearch(text) ? titled.indexed : titled.scan).all(search).map(toSummary)
      }
      switch (params.status) {
        case undefined:
          return lists.all.all(args).map(toSummary)
        case 'active':
          return lists.active.all(args).map(toSummary)
        case 'expired':
          return lists.expired.all(args).map(toSummary)
        default:
          return lists.stored.all({ ...args, status: params.status }).map(toSummary)
      }
    },
    setStatus: async (id, status, now) => void setStatus.run({ id, status, now }),
    setExpiry: async (id, expiresAt, now) => void setExpiry.run({ id, expires_at: expiresAt, now }),
    complete: async (id, now) => complete.run({ id, now }).changes === 1,
    delete: async (accountId, id) => remove.run({ id, account_id: accountId }).changes === 1,
    idempotencyKey: idempotencyRecord,
    idempotencyKeyForUpdate: idempotencyRecord,
    rememberIdempotencyKey: async (entry) =>
      void rememberKey.run({
        account_id: entry.accountId,
        key: entry.key,
        request_hash: entry.requestHash,
        form_id: entry.formId,
        created_at: entry.createdAt,
      }),
    forgetIdempotencyKeysBefore: async (before) => forgetKeysBefore.run({ before }).changes,
    async expireDue(now, limit) {
      const due = dueForExpiry.all({ now, limit })
      for (const row of due) expire.run({ id: row.id, now })
      return due.map(toExpiredForm)
    },
    nextExpiryAt: async () => nextExpiry.get()!.at,
    titlesToIndex: async () => titlesToIndex.get()!.waiting === 1,
    async indexTitles(limit) {
      const gone = goneTitles.all()
      for (const { seq } of gone) forgetTitle.run(seq)
      if (gone.length > 0) clearGone.run()
      const forms = unindexed.all({ limit })
      for (const form of forms) indexTitle.run({ seq: addTitle.get({ form_id: form.id })!.seq, title: form.title })
      return forms.length
    },
    async countAllByStatus() {
      // A gauge may mix moments; a scrape never stalls requests (CONTRACT 13).
      const counts = new Map<FormStatus, number>()
      const slicer = timeSlicer()
      for (
        let account = nextAccount.get({ after: '' });
        account;
        account = nextAccount.get({ after: account.account_id })
      ) {
        for (const { status, forms } of await countStored(account.account_id, slicer)) {
          if (forms > 0) counts.set(status, (counts.get(status) ?? 0) + forms)
        }
        await slicer.pause()
      }
      return counts
    },
    async countByStatus(accountId, now) {
      const stored = await countStored(accountId, timeSlicer())
      return toStatusCounts(stored, countPastExpiry.get({ account_id: accountId, now })!.forms)
    },
    async webhookTargets(formIds) {
      const targets = new Map<string, WebhookTarget>()
      for (const id of new Set(formIds)) {
        const row = webhookTarget.get(id)
        if (row) targets.set(id, { accountId: row.account_id, secret: row.webhook_secret })
      }
      return targets
    },
  } satisfies FormWrites
}
