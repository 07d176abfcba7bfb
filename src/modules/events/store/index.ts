import type { EventType } from '../names.ts'
import type { LegacyPosition } from '../position.ts'

/**
 * What the events module keeps (the tables `events` and `event_heads`: the
 * accounts' event feeds, CONTRACT 12 and 12a), and the one interface every
 * database gives it (sqlite.ts, postgres.ts beside this file).
 *
 * Each account's events are numbered 1, 2, 3... in the order they commit:
 * an event takes its number from its account's row of event_heads, counted
 * up in the transaction that writes the event, whose row lock it holds until
 * that transaction ends. So within an account numbers commit in order (a
 * reader that sees number n sees every number below it), and only the
 * account's own writers ever wait for one another: nothing else on the
 * database server holds a reader back. A number is never given twice, though
 * its event be swept or deleted (the count lives in event_heads, not in the
 * events). The database itself numbers every event written without a number
 * (migrations.ts: an older intake still running on the database writes
 * them); `intake copy` carries numbers and heads across.
 *
 * Events also keep `position` and `seq`, the order before numbers: cursors
 * agents got then still read (afterLegacy), and an older intake still
 * running during a rolling upgrade reads by them.
 */

interface NewEvent {
  accountId: string
  formId: string
  type: EventType
  occurredAt: number
  /** JSON object: the event's webhook body (form.deleted: `{"form_id"}`). */
  payload: string
  createdAt: number
}

/** An event as a page is chosen from, without its payload. */
export interface EventSummary {
  number: number
  formId: string
  type: EventType
  occurredAt: number
  /** The payload's length in bytes of UTF-8. */
  payloadBytes: number
}

interface EventPayload {
  number: number
  /** The payload's JSON, as stored, in UTF-8. */
  payload: Uint8Array
}

export interface EventReads {
  /** The account's first `limit` events numbered after `number`, oldest first, without their payloads. */
  after(accountId: string, number: number, limit: number): Promise<EventSummary[]>
  /** The first `limit` events of one of the account's forms, oldest first, without their payloads (the console's form page). */
  ofForm(accountId: string, formId: string, limit: number): Promise<EventSummary[]>
  /** The payloads of the account's events numbered `first` to `last` that are still kept, oldest first. */
  payloads(accountId: string, first: number, last: number): Promise<EventPayload[]>
  /** The number the account's last event took (kept or not), or 0 before its first. */
  head(accountId: string): Promise<number>
  /**
   * For a cursor from before numbers: the number to read after so that the
   * next event read is the first of the account's events after `cursor` in
   * the order of that time (the head when there is none).
   */
  afterLegacy(accountId: string, cursor: LegacyPosition): Promise<number>
}

export interface EventWrites extends EventReads {
  /** Adds an event (in the transaction that writes what it tells of), with its account's next number. */
  append(event: NewEvent): Promise<void>
  /** Removes a form's events: it was deleted. */
  forgetForm(formId: string): Promise<void>
  /** Removes up to `limit` events written before `before`; returns how many. */
  forgetBefore(before: number, limit: number): Promise<number>
}
