import { randomBytes } from 'node:crypto'
import type { SQL } from 'bun'
import { settledWithin } from '../../lib/time.ts'

/**
 * What other processes change in the database, heard on PostgreSQL's
 * LISTEN/NOTIFY: every intake process on a database listens on one channel,
 * over one connection of its own (Bun's `sql.listen`, which reconnects and
 * listens again by itself). The schema's triggers notify it (migrations.ts),
 * at commit, whoever made the change (an instance, `intake keys`, an
 * operator's UPDATE): `keys` when a key is made, revoked or removed,
 * `forms <id> <id> ...` when forms are answered, cancelled, expired or deleted,
 * and `events <account id> ...` when events are added to accounts' feeds.
 *
 * A notification sent while the connection is down is lost, and Bun's client
 * says when it listens again but not when the connection drops. So each
 * process sends itself a heartbeat through the channel every HEARTBEAT_MS;
 * while the last one it heard is older than SILENCE_MS, the channel counts
 * as down and `keysVersion()` changes on every call: every request then looks
 * its key up (CONTRACT 10), and every FORMS_POLL_MS the watchers of forms and
 * feeds are told that any may have changed. They are told so too when the
 * channel listens again after a drop. Notifications reach a listener in commit
 * order, so a heartbeat heard says that every change committed before it was
 * sent was heard too.
 *
 * The listening connection is a client of its own, so that it can be let go
 * of: on a server that stops answering (frozen, or a network that drops
 * packets without a word) a connection can stay open and silent for as long
 * as TCP keeps it, a quarter of an hour, and Bun would never reconnect it. So
 * when a heartbeat the database took (its NOTIFY committed) is not heard
 * within RELISTEN_AFTER_MS, or a LISTEN is not acknowledged within the
 * store's deadline, that client is closed and another listens in its place.
 * Heartbeats go through the store's pool with its deadline, one at a time.
 */

/** The channel every intake process on a database listens on. */
export const CHANGES_CHANNEL = 'intake_changes'
/** What the trigger on api_keys sends. */
const KEYS_CHANGED = 'keys'
/** What the triggers on forms send before the ids, space-separated. */
const FORMS_CHANGED = 'forms '
/** What the trigger on events sends before the account ids, space-separated. */
const EVENTS_ADDED = 'events '
/** How often a process sends itself a heartbeat through the channel. */
const HEARTBEAT_MS = 250
/**
 * A channel not heard from for this long counts as down. With the heartbeat's
 * period, a revocation reaches every process within about this long even when
 * its notification was lost: within the 1 s of CONTRACT 10.
 */
const SILENCE_MS = 700
/** How long to wait before listening again when a first LISTEN failed (Bun retries only a dropped one). */
const RETRY_LISTEN_MS = 1000
/** A heartbeat the database took but the listening connection did not hear for this long: that connection is let go of. */
const RELISTEN_AFTER_MS = 2000
/** How long closing waits for UNLISTEN. */
const UNLISTEN_WAIT_MS = 1000
/** While the channel is down, forms' watchers look again this often: a lost notification delays a wake, never strands it. */
const FORMS_POLL_MS = 5000

/** Hears of forms changed (or accounts' feeds grown): their ids, or `undefined` when any may have changed unheard. */
type ChangeWatcher = (ids: readonly string[] | undefined) => void

export interface ChangeListener {
  /**
   * The same value while no key can have changed unheard (by ===), a new one
   * after every change heard, and a new one on every call while the channel
   * is down.
   */
  keysVersion(): unknown
  /** Tells `watcher` of every form change heard from now on; returns what stops it. */
  watchForms(watcher: ChangeWatcher): () => void
  /** Tells `watcher` of the accounts whose feeds grew, heard from now on; returns what stops it. */
  watchEvents(watcher: ChangeWatcher): () => void
  close(): Promise<void>
}

/** What listening needs from the store. */
export interface ChangeChannel {
  /** A new client, of its own, for the listening connection (closed to let go of a connection that went silent). */
  open(): SQL
  /** Sends `payload` on the channel through the store's pool, within its deadline. */
  notify(payload: string): Promise<unknown>
  /** How long a LISTEN may go unacknowledged. */
  listenDeadlineMs: number
}

/** Starts listening on the channel's database: heard from within milliseconds, down until then. */
export function listenForChanges(channel: ChangeChannel): ChangeListener {
  const heartbeat = `alive ${randomBytes(8).toString('hex')} `
  let keysEpoch = 0
  let lastHeardAt = -Infinity
  /** The number of the last heartbeat heard, and of the last one sent. */
  let heardBeat = 0
  let sentBeat = 0
  let beating = false
  /** The first heartbeat the database took that is not heard yet, and when it was sent. */
  let awaited: { beat: number; sentAt: number } | undefined
  let client: SQL | undefined
  let subscription: { unlisten(): Promise<void> } | undefined
  let retry: ReturnType<typeof setTimeout> | undefined
  let closed = false
  let listenedBefore = false
  let formsPolledAt = -Infinity
  const formsWatchers = new Set<ChangeWatcher>()
  const eventsWatchers = new Set<ChangeWatcher>()
  const tell = (watchers: Set<ChangeWatcher>, ids: readonly string[] | undefined) => {
    for (const watcher of watchers) watcher(ids)
  }
  /** Anything may have changed unheard. */
  const anyChanged = () => {
    tell(formsWatchers, undefined)
    tell(eventsWatchers, undefined)
  }

  const heard = (payload: string) => {
    if (payload.startsWith(heartbeat)) {
      lastHeardAt = performance.now()
      heardBeat = Math.max(heardBeat, Number(payload.slice(heartbeat.length)))
    } else if (payload === KEYS_CHANGED) keysEpoch++
    else if (payload.startsWith(FORMS_CHANGED)) tell(formsWatchers, payload.slice(FORMS_CHANGED.length).split(' '))
    else if (payload.startsWith(EVENTS_ADDED)) tell(eventsWatchers, payload.slice(EVENTS_ADDED.length).split(' '))
  }
  const channelDown = () => performance.now() - lastHeardAt > SILENCE_MS

  /** Listens on a new client, letting go of the one before (and of what it was stuck on). */
  function subscribe() {
    const previous = client
    subscription = undefined
    awaited = undefined
    if (previous) void previous.close({ timeout: 0 }).catch(() => {})
    if (closed) return
    const listener = channel.open()
    client = listener
    // At every LISTEN acknowledged (the first, and after each reconnect): what was sent meanwhile went unheard.
    const listening = () => {
      if (client !== listener) return
      keysEpoch++
      lastHeardAt = performance.now()
      if (listenedBefore) anyChanged()
      listenedBefore = true
    }
    let timer: ReturnType<typeof setTimeout> | undefined
    const unacknowledged = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('LISTEN was not acknowledged')), channel.listenDeadlineMs)
    })
    Promise.race([listener.listen(CHANGES_CHANNEL, heard, listening), unacknowledged]).then(
      (made) => {
        clearTimeout(timer)
        if (client === listener) subscription = made
        else made.unlisten().catch(() => {})
      },
      () => {
        clearTimeout(timer)
        if (client !== listener || closed) return
        void listener.close({ timeout: 0 }).catch(() => {})
        retry = setTimeout(subscribe, RETRY_LISTEN_MS)
      },
    )
  }
  subscribe()

  const beat = setInterval(() => {
    if (awaited && heardBeat >= awaited.beat) awaited = undefined
    // The database took a heartbeat the listening connection has not heard: that connection is lost.
    if (awaited && subscription && performance.now() - awaited.sentAt > RELISTEN_AFTER_MS) subscribe()
    // One at a time: while the database does not answer, heartbeats wait for none but their own deadline.
    if (!beating) {
      beating = true
      const number = ++sentBeat
      const sentAt = performance.now()
      channel.notify(heartbeat + number).then(
        () => {
          beating = false
          if (!awaited && heardBeat < number) awaited = { beat: number, sentAt }
        },
        // A heartbeat that cannot be sent (the database away) is not heard: the channel then counts as down.
        () => (beating = false),
      )
    }
    // The first look as soon as the silence is noticed, then one every FORMS_POLL_MS.
    if (!channelDown()) formsPolledAt = -Infinity
    else if (performance.now() - formsPolledAt >= FORMS_POLL_MS) {
      formsPolledAt = performance.now()
      anyChanged()
    }
  }, HEARTBEAT_MS)
  beat.unref()

  return {
    keysVersion: () => (channelDown() ? {} : keysEpoch),
    watchForms(watcher) {
      formsWatchers.add(watcher)
      return () => formsWatchers.delete(watcher)
    },
    watchEvents(watcher) {
      eventsWatchers.add(watcher)
      return () => eventsWatchers.delete(watcher)
    },
    async close() {
      closed = true
      clearInterval(beat)
      clearTimeout(retry)
      // UNLISTEN waits for a connection: not for long when the database is gone.
      await settledWithin(subscription?.unlisten(), UNLISTEN_WAIT_MS)
      await client?.close({ timeout: 0 }).catch(() => {})
    },
  }
}
