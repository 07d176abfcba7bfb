/**
 * The names of the events: the events module owns them (webhooks, forms and
 * the feed speak of endings by these). A leaf: stores and schemas import it.
 */

export const FORM_COMPLETED = 'form.completed'
export const FORM_EXPIRED = 'form.expired'
export const FORM_CANCELLED = 'form.cancelled'
export const FORM_DELETED = 'form.deleted'

/** The endings a form's webhook may tell of (CONTRACT 12); the feed has them all, and form.deleted. */
export const FORM_EVENTS = [FORM_COMPLETED, FORM_EXPIRED, FORM_CANCELLED] as const
export type FormEvent = (typeof FORM_EVENTS)[number]

/** Every event of an account's feed. */
export const EVENT_TYPES = [...FORM_EVENTS, FORM_DELETED] as const
export type EventType = (typeof EVENT_TYPES)[number]
