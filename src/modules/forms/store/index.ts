import type { FieldDefinition } from '../../../fields/index.ts'
import type { FormEvent } from '../../events/names.ts'
import type { FormStatus, PageSettings } from '../model.ts'

/**
 * What the forms module keeps, and the one interface every database gives it
 * (sqlite.ts, postgres.ts beside this file). The forms module owns the tables
 * `forms` and `idempotency_keys`; nothing else writes them.
 *
 * Every read computes expiry itself: a form whose `expiresAt` has passed is
 * `expired` (and has no context) at once, whatever the background sweep has
 * written yet.
 */

/** JSON text the API client owns (context, callback_metadata, settings): kept exactly as encoded at creation. */
export type FreeFormJson = string

export interface StoredForm {
  id: string
  accountId: string
  title: string
  description: string | null
  fields: FieldDefinition[]
  fieldsCount: number
  callbackUrl: string | null
  /** The endings the webhook tells of (CONTRACT 12). */
  callbackEvents: FormEvent[]
  callbackMetadata: FreeFormJson
  /** 64 hex; present when callbackUrl is. */
  webhookSecret: string | null
  /** Removed once the form expires. */
  context: FreeFormJson | null
  settings: FreeFormJson
  /** How the person's page speaks (CONTRACT 11): as given at creation, `{}` when none. */
  page: PageSettings
  status: FormStatus
  expiresAt: number | null
  createdAt: number
}

/** What changes after creation: the state, expiry and context. */
export type FormState = Pick<StoredForm, 'id' | 'status' | 'expiresAt' | 'context'>

/** What the public page needs to know before anything else: which page to show, and in which language. */
export type FormPublicState = Pick<StoredForm, 'id' | 'title' | 'status' | 'page'>

/** A form in a list: not its fields, which may be a megabyte. */
export type FormSummaryRecord = Pick<
  StoredForm,
  'id' | 'title' | 'description' | 'fieldsCount' | 'status' | 'expiresAt' | 'createdAt'
>

export type NewForm = Omit<StoredForm, 'status'>

/** A form and whose it is: what hears of its changes needs both (its waits, its account's feed). */
export type FormOfAccount = Pick<StoredForm, 'id' | 'accountId'>

/** What a form's ending tells, and to whom: its account, and its webhook when it has one. */
type EndingForm = Pick<
  StoredForm,
  'id' | 'accountId' | 'callbackUrl' | 'callbackEvents' | 'callbackMetadata' | 'context'
>

/** A form the sweep expired, as it was before: its context goes into the event (CONTRACT 12). */
export interface ExpiredForm extends EndingForm {
  expiresAt: number
}

/** Where a form's webhooks go, and whose they are. */
export interface WebhookTarget {
  accountId: string
  secret: string
}

export interface IdempotencyRecord {
  /** SHA-256 hex of the create body, canonicalised. */
  requestHash: string
  formId: string
  createdAt: number
}

export interface ListParams {
  accountId: string
  status: FormStatus | undefined
  /** Only forms older than this id. */
  before: string | undefined
  limit: number
  now: number
  /**
   * Only forms whose title contains this text (case aside): the console's
   * search. A trigram index finds the few that match, so a search that matches
   * a handful of a million forms reads a handful (CONTRACT 15); forms not yet
   * in the index (created since the sweep last added some) are read one by one.
   */
  titleContains?: string
}

/**
 * A title search first looks this far down the account's list (newest first):
 * a common word fills its page there at once, and only a rarer one, whose
 * matches the index then finds, is looked up there.
 */
export const TITLE_SEARCH_WINDOW = 1000

export interface FormReads {
  find(id: string, now: number): Promise<StoredForm | undefined>
  findForAccount(accountId: string, id: string, now: number): Promise<StoredForm | undefined>
  /** The state and title alone: not the fields. */
  findPublicState(id: string, now: number): Promise<FormPublicState | undefined>
  findStateForAccount(accountId: string, id: string, now: number): Promise<FormState | undefined>
  /** The account's forms newest first, one index walk per filter. */
  list(params: ListParams): Promise<FormSummaryRecord[]>
  /** The form an Idempotency-Key of the account created, with the hash of the body it came with. */
  idempotencyKey(accountId: string, key: string): Promise<IdempotencyRecord | undefined>
  /**
   * How many of the account's forms are in each state, expiry computed as every
   * read does: one walk of the account's status index, plus its few active
   * forms past their time that the sweep has not reached yet.
   */
  countByStatus(accountId: string, now: number): Promise<Record<FormStatus, number>>
  /** The earliest expiry among active forms, if any. */
  nextExpiryAt(): Promise<number | null>
  /**
   * How many forms each status holds, every account together, as stored: a
   * form whose time ran out counts as active until the sweep (within a second) writes it expired.
   */
  countAllByStatus(): Promise<Map<FormStatus, number>>
  /** How many forms each account has active at `now` (accounts with none are left out). */
  activeFormsByAccount(now: number): Promise<Map<string, number>>
  /** Whether forms wait to join the title search's index (SQLite's; PostgreSQL's keeps itself). */
  titlesToIndex(): Promise<boolean>
  /** The account and webhook secret of each of these forms that has a callback. */
  webhookTargets(formIds: string[]): Promise<Map<string, WebhookTarget>>
}

export interface FormWrites extends FormReads {
  /**
   * findForAccount, the form held until the transaction commits: a decision
   * made on its state (cancel an active form) cannot be overtaken by another
   * transaction's change (an answer completing it).
   */
  findForAccountForUpdate(accountId: string, id: string, now: number): Promise<StoredForm | undefined>
  /**
   * idempotencyKey, the key held until the transaction commits: of
   * duplicates in flight, the first creates the form and the others wait for
   * it, then find it.
   */
  idempotencyKeyForUpdate(accountId: string, key: string): Promise<IdempotencyRecord | undefined>
  insert(form: NewForm): Promise<void>
  setStatus(id: string, status: FormStatus, now: number): Promise<void>
  setExpiry(id: string, expiresAt: number | null, now: number): Promise<void>
  /**
   * Moves an active, unexpired form to `completed`: the one-response race.
   * False when the form no longer takes an answer (nothing written then).
   */
  complete(id: string, now: number): Promise<boolean>
  /** True when a form was deleted (with its responses, files and deliveries). */
  delete(accountId: string, id: string): Promise<boolean>
  rememberIdempotencyKey(entry: { accountId: string; key: string } & IdempotencyRecord): Promise<void>
  /** Forgets Idempotency-Keys made before `before`; returns how many. */
  forgetIdempotencyKeysBefore(before: number): Promise<number>
  /**
   * Writes `expired` on up to `limit` active forms past their time (taking
   * none another transaction holds); returns them as they were.
   */
  expireDue(now: number, limit: number): Promise<ExpiredForm[]>
  /**
   * Adds up to `limit` forms to the title search's index, and takes deleted
   * ones out; returns how many were added. Off the request path: a form
   * created pays nothing for the index (measured on SQLite, an entry written
   * in the create's own transaction cost creates 0.72 × their throughput).
   */
  indexTitles(limit: number): Promise<number>
}
