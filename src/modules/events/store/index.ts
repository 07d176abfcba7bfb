import type { EventPosition } from '../position.ts'

/**
 * What the events module keeps (the table `events`: the account's event feed,
 * CONTRACT 12), and the one interface every database gives it (sqlite.ts,
 * postgres.ts beside this file).
 *
 * Events are read in commit order, (position, seq): a reader that goes on
 * from the last event it read never skips one that commits later. On SQLite,
 * whose one writer commits in the order it writes, every event takes the
 * same position and `seq` counts up. On PostgreSQL transactions commit in an
 * order of their own: an event's position is its transaction's id, and a
 * read returns only events of transactions older than every one still
 * running; any event committed later has a larger transaction id, so a
 * larger position. Events `intake copy` brings in keep theirs; new ones are
 * placed after them (the `floor` of event_positions).
 */

export const EVENT_TYPES = ['form.completed', 'form.expired', 'form.cancelled', 'form.deleted'] as const
export type EventType = (typeof EVENT_TYPES)[number]

export interface NewEvent {
  accountId: string
  formId: string
  type: EventType
  occurredAt: number
  /** JSON object: the event's webhook body (form.deleted: `{"form_id"}`). */
  payload: string
  createdAt: number
}

export interface StoredEvent extends EventPosition {
  formId: string
  type: EventType
  occurredAt: number
  payload: string
}

export interface EventPage {
  /** Oldest first. */
  events: StoredEvent[]
  /**
   * Events after the position are committed but not readable yet, as a
   * transaction older than theirs still runs (PostgreSQL): look again soon.
   */
  unsettled: boolean
}

export interface EventReads {
  /** The account's first `limit` readable events after `after`. */
  after(accountId: string, after: EventPosition, limit: number): Promise<EventPage>
  /** The account's last readable event's position, or the feed's start. */
  head(accountId: string): Promise<EventPosition>
}

export interface EventWrites extends EventReads {
  /** Adds an event (in the transaction that writes what it tells of). */
  append(event: NewEvent): Promise<void>
  /** Removes a form's events: it was deleted. */
  forgetForm(formId: string): Promise<void>
  /** Removes up to `limit` events written before `before`; returns how many. */
  forgetBefore(before: number, limit: number): Promise<number>
}
