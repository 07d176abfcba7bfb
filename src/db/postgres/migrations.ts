import type { SQL } from 'bun'
import { DatabaseOpenError } from '../driver.ts'

/**
 * The PostgreSQL schema, one migration per release step. Migration N takes a
 * database from schema N-1 to N; never edit a shipped migration: add one.
 * Migrations are additive first (expand, then contract one release later), and
 * each says which is the oldest schema whose binaries may still run on the
 * database it leaves (`oldestCompatible`).
 *
 * Times are integer milliseconds since the epoch (UTC) in `bigint`. JSON the
 * client owns is `text`, not `jsonb`: it must come back exactly as it was
 * written. Ids are ULIDs compared byte by byte (`COLLATE "C"`), as SQLite
 * does: list pages walk them in that order whatever the database's locale.
 */
export interface PostgresMigration {
  sql: string
  oldestCompatible: number
}

export const migrations: readonly PostgresMigration[] = [
  {
    /* 1: what SQLite holds at its schema 3, without its legacy columns */
    oldestCompatible: 1,
    sql: `
  CREATE TABLE accounts (
    id          text COLLATE "C" PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    created_at  bigint NOT NULL
  );

  CREATE TABLE api_keys (
    id            text COLLATE "C" PRIMARY KEY,
    account_id    text COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    key_hash      text NOT NULL UNIQUE,   -- SHA-256 hex of the whole key; the plaintext is never stored
    key_hint      text NOT NULL,          -- last 4 characters, to tell keys apart in a list
    created_at    bigint NOT NULL,
    last_used_at  bigint,
    revoked_at    bigint
  );
  CREATE INDEX api_keys_account ON api_keys(account_id);
  -- Each process remembers what it found each key to be; a change to the keys,
  -- whoever makes it (an instance, intake keys, an operator's UPDATE), tells
  -- every process listening on intake_changes at its commit (db/postgres/changes.ts).
  CREATE FUNCTION intake_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM pg_notify('intake_changes', 'keys');
    RETURN NULL;
  END $$;
  CREATE TRIGGER api_keys_changed
    AFTER INSERT OR DELETE OR TRUNCATE OR UPDATE OF key_hash, account_id, revoked_at ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION intake_keys_changed();

  CREATE TABLE forms (
    id                 text COLLATE "C" PRIMARY KEY,
    account_id         text COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    title              text NOT NULL,
    description        text,
    fields             text NOT NULL,     -- JSON array of field definitions, as given
    fields_count       integer NOT NULL,
    callback_url       text,
    callback_metadata  text NOT NULL,     -- JSON object
    webhook_secret     text,              -- 64 hex; present when callback_url is
    context            text,              -- JSON object or NULL; removed on expiry
    settings           text NOT NULL,     -- JSON object
    status             text NOT NULL CHECK (status IN ('active', 'completed', 'cancelled', 'expired')),
    expires_at         bigint,
    created_at         bigint NOT NULL,
    updated_at         bigint NOT NULL
  );
  -- List pages walk one account's forms newest first, with or without a status filter.
  CREATE INDEX forms_account_newest ON forms(account_id, id DESC);
  CREATE INDEX forms_account_status_newest ON forms(account_id, status, id DESC);
  -- The expiry sweep (and the expired list) find active forms whose time has come.
  CREATE INDEX forms_active_expiry ON forms(expires_at) WHERE status = 'active' AND expires_at IS NOT NULL;

  CREATE TABLE responses (
    id            text COLLATE "C" PRIMARY KEY,
    form_id       text COLLATE "C" NOT NULL UNIQUE REFERENCES forms(id) ON DELETE CASCADE,  -- one response per form
    data          text NOT NULL,          -- JSON object
    ip            text,
    user_agent    text,
    submitted_at  bigint NOT NULL
  );

  CREATE TABLE response_files (
    response_id   text COLLATE "C" NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
    field_key     text NOT NULL,
    name          text NOT NULL,
    content_type  text NOT NULL,
    size          bigint NOT NULL,
    file_id       text COLLATE "C" NOT NULL UNIQUE,  -- its bytes are the chunks of this id
    PRIMARY KEY (response_id, field_key)
  );

  CREATE TABLE file_chunks (
    file_id     text COLLATE "C" NOT NULL,
    seq         integer NOT NULL,         -- 0, 1, 2, ... in the file's order
    bytes       bytea NOT NULL,           -- at most 512 KiB
    PRIMARY KEY (file_id, seq)
  );
  -- Kept out of line and uncompressed: uploads are mostly compressed already
  -- (images, PDFs), and a chunk is written and read whole.
  ALTER TABLE file_chunks ALTER COLUMN bytes SET STORAGE EXTERNAL;

  -- Chunks no response holds: an upload not (yet) recorded, or the files of a deleted response.
  -- They are removed a few chunks at a time once since is more than an hour old (0: at once).
  CREATE TABLE unclaimed_files (
    file_id     text COLLATE "C" PRIMARY KEY,
    since       bigint NOT NULL
  );
  CREATE INDEX unclaimed_files_since ON unclaimed_files(since);

  -- However a response's file row goes (the form deleted, say), its chunks are then unclaimed.
  CREATE FUNCTION intake_response_files_unclaim() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO unclaimed_files (file_id, since) VALUES (OLD.file_id, 0)
      ON CONFLICT (file_id) DO UPDATE SET since = 0;
    RETURN NULL;
  END
  $$;
  CREATE TRIGGER response_files_unclaim AFTER DELETE ON response_files
    FOR EACH ROW EXECUTE FUNCTION intake_response_files_unclaim();

  -- The webhook outbox: the source of truth for every delivery.
  CREATE TABLE deliveries (
    id                text COLLATE "C" PRIMARY KEY,  -- stable across retries: X-Service-Delivery and webhook-id
    form_id           text COLLATE "C" NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
    response_id       text COLLATE "C" NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
    event             text NOT NULL,
    url               text NOT NULL,
    payload           text NOT NULL,      -- the exact body sent on every attempt
    status            text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts          integer NOT NULL DEFAULT 0,  -- total, across redeliveries
    round_attempts    integer NOT NULL DEFAULT 0,  -- in the current round (a redelivery starts a new one)
    next_attempt_at   bigint,
    lease_until       bigint,             -- an attempt in flight; a crash leaves it to expire and be retried
    last_status_code  integer,
    last_error        text,
    delivered_at      bigint,
    created_at        bigint NOT NULL
  );
  -- Due deliveries are looked through in (next_attempt_at, id) order, both ways.
  CREATE INDEX deliveries_due ON deliveries(next_attempt_at, id) WHERE status = 'pending';
  CREATE INDEX deliveries_form ON deliveries(form_id, id);
  CREATE INDEX deliveries_response ON deliveries(response_id);

  CREATE TABLE idempotency_keys (
    account_id    text COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    key           text NOT NULL,
    request_hash  text NOT NULL,          -- SHA-256 hex of the create body, parsed and serialised again
    form_id       text COLLATE "C" NOT NULL REFERENCES forms(id) ON DELETE CASCADE,  -- a deleted form frees its key
    created_at    bigint NOT NULL,
    PRIMARY KEY (account_id, key)
  );
  CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);
  -- Deleting a form finds its key through this, not by reading the whole table.
  CREATE INDEX idempotency_keys_form ON idempotency_keys(form_id);
  `,
  },
  {
    /*
     * 2: every instance hears of a form answered, cancelled, expired or deleted,
     * whoever changed it, so long-polls anywhere wake (CONTRACT 10). A trigger
     * per statement, not per row: a batch of answers is one notification (or a
     * few: NOTIFY takes under 8000 bytes, 250 ids), and every instance reads
     * every notification. Binaries of schema 1 ignore them.
     */
    oldestCompatible: 1,
    sql: `
  CREATE FUNCTION intake_forms_status_changed() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    payload text;
  BEGIN
    FOR payload IN
      SELECT 'forms ' || string_agg(id, ' ')
        FROM (SELECT now_.id, (row_number() OVER () - 1) / 250 AS part
                FROM forms_now now_ JOIN forms_before before USING (id)
               WHERE now_.status <> before.status) AS changed
       GROUP BY part
    LOOP
      PERFORM pg_notify('intake_changes', payload);
    END LOOP;
    RETURN NULL;
  END $$;
  CREATE TRIGGER forms_status_changed AFTER UPDATE ON forms
    REFERENCING OLD TABLE AS forms_before NEW TABLE AS forms_now
    FOR EACH STATEMENT EXECUTE FUNCTION intake_forms_status_changed();

  CREATE FUNCTION intake_forms_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    payload text;
  BEGIN
    FOR payload IN
      SELECT 'forms ' || string_agg(id, ' ')
        FROM (SELECT id, (row_number() OVER () - 1) / 250 AS part FROM forms_gone) AS gone
       GROUP BY part
    LOOP
      PERFORM pg_notify('intake_changes', payload);
    END LOOP;
    RETURN NULL;
  END $$;
  CREATE TRIGGER forms_deleted AFTER DELETE ON forms
    REFERENCING OLD TABLE AS forms_gone
    FOR EACH STATEMENT EXECUTE FUNCTION intake_forms_deleted();
  `,
  },
  {
    /*
     * 3: the page's settings; files kept across a 422; receipts (CONTRACT 11).
     * Additive: binaries of schema 1 and 2 still run (they write forms without
     * page, which then holds '{}', and never see the new tables).
     */
    oldestCompatible: 1,
    sql: `
  ALTER TABLE forms ADD COLUMN page text NOT NULL DEFAULT '{}';  -- JSON object, as given

  -- An upload that passed its field's checks in a post refused with 422, kept for the next post.
  CREATE TABLE held_files (
    id            text COLLATE "C" PRIMARY KEY,  -- random: the page names it, so it must not be guessable
    form_id       text COLLATE "C" NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
    field_key     text NOT NULL,
    name          text NOT NULL,          -- as the browser sent it
    content_type  text NOT NULL,          -- as the browser declared it
    size          bigint NOT NULL,
    file_id       text COLLATE "C" NOT NULL UNIQUE,  -- its bytes are the chunks of this id
    held_until    bigint NOT NULL
  );
  CREATE INDEX held_files_form ON held_files(form_id);
  CREATE INDEX held_files_until ON held_files(held_until);
  -- However a hold goes (used, removed, lapsed, its form deleted), its chunks are then
  -- unclaimed, unless the answer that used it holds them.
  CREATE FUNCTION intake_held_files_unclaim() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM response_files WHERE file_id = OLD.file_id) THEN
      INSERT INTO unclaimed_files (file_id, since) VALUES (OLD.file_id, 0)
        ON CONFLICT (file_id) DO UPDATE SET since = 0;
    END IF;
    RETURN NULL;
  END
  $$;
  CREATE TRIGGER held_files_unclaim AFTER DELETE ON held_files
    FOR EACH ROW EXECUTE FUNCTION intake_held_files_unclaim();

  -- One-time tokens that show the person what they sent, once, right after sending.
  CREATE TABLE receipts (
    token_hash  text COLLATE "C" PRIMARY KEY,  -- SHA-256 hex of the cookie's token; the token is never stored
    form_id     text COLLATE "C" NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
    expires_at  bigint NOT NULL
  );
  CREATE INDEX receipts_form ON receipts(form_id);
  CREATE INDEX receipts_expiry ON receipts(expires_at);
  `,
  },
  {
    /*
     * 4: lifecycle events (CONTRACT 12): which endings a form's webhook tells
     * of, deliveries that answer no response (expiry, cancellation), and the
     * account's event feed. Additive: binaries of schema 1 to 3 still run (they
     * write forms that tell of completion alone, and write no events).
     */
    oldestCompatible: 1,
    sql: `
  ALTER TABLE forms ADD COLUMN callback_events text NOT NULL DEFAULT '["form.completed"]';  -- JSON array, as given
  -- A delivery may tell of an expiry or a cancellation, which answer no response.
  ALTER TABLE deliveries ALTER COLUMN response_id DROP NOT NULL;
  -- Expiry deliveries carry the context the form lost: they go after 7 days.
  CREATE INDEX deliveries_event_created ON deliveries(event, created_at);

  -- The account's event feed. Transactions commit in an order of their own, so
  -- readers take only events of transactions older than every one still running
  -- (tx below the snapshot's xmin) and order them by (position, seq): position
  -- is the transaction id plus event_positions.floor, so no event can later
  -- commit before one a reader has passed. A form's events go with it, but for
  -- its form.deleted, which has no form to refer to. Kept 7 days.
  CREATE TABLE events (
    seq          bigserial PRIMARY KEY,
    position     bigint NOT NULL,
    tx           xid8 NOT NULL DEFAULT pg_current_xact_id(),  -- '0' for events copied in: visible at once
    account_id   text COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    form_id      text COLLATE "C" NOT NULL,
    type         text NOT NULL,
    occurred_at  bigint NOT NULL,
    payload      text NOT NULL,           -- JSON object: the webhook body of the event
    created_at   bigint NOT NULL
  );
  CREATE INDEX events_account_order ON events(account_id, position, seq);
  CREATE INDEX events_form ON events(form_id);
  CREATE INDEX events_created ON events(created_at);

  -- Added to the transaction id to make new events' position: raised by intake copy above every event it copied in.
  CREATE TABLE event_positions (
    id     integer PRIMARY KEY CHECK (id = 1),
    floor  bigint NOT NULL
  );
  INSERT INTO event_positions (id, floor) VALUES (1, 0);

  -- Every instance hears of new events, whoever wrote them, so waits on the feed wake anywhere.
  CREATE FUNCTION intake_events_added() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    payload text;
  BEGIN
    FOR payload IN
      SELECT 'events ' || string_agg(account_id, ' ')
        FROM (SELECT account_id, (row_number() OVER () - 1) / 250 AS part
                FROM (SELECT DISTINCT account_id FROM events_added) AS accounts) AS added
       GROUP BY part
    LOOP
      PERFORM pg_notify('intake_changes', payload);
    END LOOP;
    RETURN NULL;
  END $$;
  CREATE TRIGGER events_added AFTER INSERT ON events
    REFERENCING NEW TABLE AS events_added
    FOR EACH STATEMENT EXECUTE FUNCTION intake_events_added();
  `,
  },
  {
    /*
     * 5: each account's events numbered on their own (CONTRACT 12a), and each
     * event's payload length, so a page is chosen without reading payloads.
     *
     * An event takes its number from its account's row of event_heads, counted
     * up by the trigger below in the INSERT that writes it: the row stays
     * locked until the transaction ends, so an account's numbers commit in
     * order, and only the account's own writers wait for one another. Readers
     * take events by number, and no longer only those older than every
     * transaction on the server (which a transaction left open anywhere on the
     * server held back). Kept events are numbered per account in the order
     * they had, position and seq, which they keep: cursors from before still
     * read (the events module maps one to the first event after it).
     *
     * The numbering is the database's own, for every INSERT, rather than the
     * new binary's: during a rolling upgrade, instances of schema 1 to 4 go on
     * writing events (with a position and no number) on the migrated database,
     * and refusing that schema would stop them only at their next start. The
     * trigger numbers what they write in order with the rest, so they stay
     * compatible (oldestCompatible unchanged); their own feed reads go on by
     * position, which every event still gets.
     */
    oldestCompatible: 1,
    sql: `
  CREATE TABLE event_heads (
    account_id  text COLLATE "C" PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    last        bigint NOT NULL           -- the number the account's last event took, kept or not
  );

  ALTER TABLE events ADD COLUMN number bigint, ADD COLUMN payload_bytes integer;
  UPDATE events SET number = numbered.number, payload_bytes = octet_length(events.payload)
    FROM (SELECT seq, row_number() OVER (PARTITION BY account_id ORDER BY position, seq) AS number FROM events) AS numbered
   WHERE numbered.seq = events.seq;
  INSERT INTO event_heads (account_id, last) SELECT account_id, max(number) FROM events GROUP BY account_id;

  -- Every event gets its account's next number, and its payload's length, unless it comes with them (intake copy).
  CREATE FUNCTION intake_events_number() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF NEW.number IS NULL THEN
      INSERT INTO event_heads (account_id, last) VALUES (NEW.account_id, 1)
        ON CONFLICT (account_id) DO UPDATE SET last = event_heads.last + 1
        RETURNING last INTO NEW.number;
    END IF;
    NEW.payload_bytes := coalesce(NEW.payload_bytes, octet_length(NEW.payload));
    RETURN NEW;
  END $$;
  CREATE TRIGGER events_number BEFORE INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION intake_events_number();

  ALTER TABLE events ALTER COLUMN number SET NOT NULL, ALTER COLUMN payload_bytes SET NOT NULL;
  CREATE UNIQUE INDEX events_account_number ON events(account_id, number);
  `,
  },
  {
    /*
     * 6: answers waiting on their "Check your answers" page (page.review,
     * CONTRACT 14). Additive: binaries of schema 1 to 5 never see the table
     * (they record a review form's answers at once, as they always did).
     */
    oldestCompatible: 1,
    sql: `
  -- A valid form post held until its Send, for at most an hour; its files are holds in held_files.
  CREATE TABLE drafts (
    id          text COLLATE "C" PRIMARY KEY,  -- random: the review page names it, so it must not be guessable
    form_id     text COLLATE "C" NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
    answers     text NOT NULL,            -- JSON array of [name, text]: the post's texts, in order, as the page sent them
    files       text NOT NULL,            -- JSON object: by field key, the hold id, name and size of its file
    created_at  bigint NOT NULL,
    held_until  bigint NOT NULL
  );
  CREATE INDEX drafts_form ON drafts(form_id, created_at);
  CREATE INDEX drafts_until ON drafts(held_until);
  `,
  },
  {
    /*
     * 7: the console's people (CONTRACT 15): users, their one-time set-up
     * links, their sessions, and sign-in failures (shared by every instance,
     * for throttling). Additive: binaries of schema 1 to 6 never see these tables.
     */
    oldestCompatible: 1,
    sql: `
  CREATE TABLE console_users (
    id             text COLLATE "C" PRIMARY KEY,
    email          text NOT NULL UNIQUE,  -- lower case
    account_id     text COLLATE "C" REFERENCES accounts(id) ON DELETE CASCADE,  -- the one account a member sees; NULL: an operator
    password_hash  text,                  -- argon2id (PHC string); NULL until set through a set-up link
    created_at     bigint NOT NULL
  );

  CREATE TABLE console_setup_tokens (
    token_hash  text COLLATE "C" PRIMARY KEY,  -- SHA-256 hex of the link's token; the token is never stored
    user_id     text COLLATE "C" REFERENCES console_users(id) ON DELETE CASCADE,  -- NULL: the first operator
    created_at  bigint NOT NULL,
    expires_at  bigint NOT NULL,
    used_at     bigint
  );
  CREATE INDEX console_setup_tokens_user ON console_setup_tokens(user_id);

  CREATE TABLE console_sessions (
    token_hash    text COLLATE "C" PRIMARY KEY,  -- SHA-256 hex of the cookie's token
    user_id       text COLLATE "C" NOT NULL REFERENCES console_users(id) ON DELETE CASCADE,
    created_at    bigint NOT NULL,
    last_seen_at  bigint NOT NULL
  );
  CREATE INDEX console_sessions_user ON console_sessions(user_id);

  CREATE TABLE console_sign_in_failures (
    id         text COLLATE "C" PRIMARY KEY,
    email      text NOT NULL,             -- as typed, lower case: unknown emails count too
    client     text NOT NULL,             -- the client's address ('' when unknown)
    failed_at  bigint NOT NULL
  );
  CREATE INDEX console_sign_in_failures_email ON console_sign_in_failures(email, failed_at);
  CREATE INDEX console_sign_in_failures_client ON console_sign_in_failures(client, failed_at);
  CREATE INDEX console_sign_in_failures_at ON console_sign_in_failures(failed_at);

  -- The console counts each account's answers of the last 30 days from the newest answers.
  CREATE INDEX responses_submitted_at ON responses(submitted_at);
  `,
  },
  {
    /*
     * 8: the console's title search (CONTRACT 15): a trigram index of form
     * titles (pg_trgm, in PostgreSQL's contrib, trusted: the database's owner
     * may add it). Where it cannot be added (a role without CREATE on the
     * database, the extension missing or in a schema out of reach) the
     * migration goes on without it, and a title search reads the account's
     * forms one by one until the index is made as docs/postgresql.md says.
     * Additive.
     */
    oldestCompatible: 1,
    sql: `
  DO $$
  BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
    EXECUTE 'CREATE INDEX forms_title_trigrams ON forms USING gin (title gin_trgm_ops)';
  EXCEPTION WHEN insufficient_privilege OR undefined_file OR undefined_object THEN
    RAISE NOTICE 'pg_trgm could not be added: title searches in the console read every form of the account';
  END $$;
  `,
  },
  {
    /*
     * 9: what the console's overview reads without walking every form: the
     * deliveries whose last attempt failed (answers by arrival are migration 7's). Indexes alone: every earlier binary still runs on it.
     */
    oldestCompatible: 1,
    sql: `
  CREATE INDEX deliveries_failing ON deliveries(form_id) WHERE status = 'failed' OR (status = 'pending' AND round_attempts > 0);
  `,
  },
]

/** The schema this build writes. */
export const POSTGRES_SCHEMA_VERSION = migrations.length

/**
 * Held (for the transaction) by whoever reads or changes the schema, so that
 * instances starting together apply the migrations once: "intake" in ASCII.
 */
const SCHEMA_LOCK = 0x696e74616b65n

export interface SchemaState {
  /** 0: no intake schema yet. */
  version: number
  oldestCompatible: number
}

/** The schema a database holds, read under the schema lock in `tx`; `recorded`: intake_schema has its row. */
async function readSchema(tx: SQL): Promise<SchemaState & { recorded: boolean }> {
  await tx.unsafe(`SELECT pg_advisory_xact_lock(${SCHEMA_LOCK})`)
  const [table] = await tx.unsafe(`SELECT to_regclass('intake_schema') IS NOT NULL AS present`)
  if (!table.present) return { version: 0, oldestCompatible: 0, recorded: false }
  const [row] = await tx.unsafe('SELECT version, oldest_compatible FROM intake_schema')
  return row
    ? { version: row.version, oldestCompatible: row.oldest_compatible, recorded: true }
    : { version: 0, oldestCompatible: 0, recorded: false }
}

/** Throws when this build may not run on `schema`: a newer intake's that says it needs at least a newer one. */
function refuseIncompatible(schema: SchemaState, location: string): void {
  if (schema.version > POSTGRES_SCHEMA_VERSION && schema.oldestCompatible > POSTGRES_SCHEMA_VERSION) {
    throw new DatabaseOpenError(
      `The PostgreSQL database at ${location} was written by a newer intake (schema ${schema.version}, which needs at least schema ${schema.oldestCompatible}; this intake knows up to ${POSTGRES_SCHEMA_VERSION}). Upgrade intake; the database was not changed.`,
    )
  }
}

/** The schema of the database, checked (a newer intake's that this one may not run on is refused); nothing is written. */
export async function checkSchema(sql: SQL, location: string): Promise<SchemaState> {
  // A transaction that writes nothing: the lock waits for a migration under way to finish.
  const { version, oldestCompatible } = await sql.begin(async (tx) => readSchema(tx))
  const schema = { version, oldestCompatible }
  refuseIncompatible(schema, location)
  return schema
}

/** The schema row read at once, without a transaction; undefined when there is none (or no table) yet. */
async function recordedSchema(sql: SQL): Promise<SchemaState | undefined> {
  try {
    const [row] = await sql.unsafe('SELECT version, oldest_compatible FROM intake_schema')
    return row ? { version: row.version, oldestCompatible: row.oldest_compatible } : undefined
  } catch (error) {
    if ((error as { errno?: string }).errno === '42P01') return undefined
    throw error
  }
}

/**
 * Brings the schema up to date in one transaction under the schema lock: a
 * second instance starting at the same moment waits, then finds the work
 * done. Returns the schema found and the one left (equal when nothing was
 * applied). A newer intake's database is left as it is: run when it allows
 * this build, refused untouched when it does not.
 */
export async function applyMigrations(sql: SQL, location: string): Promise<{ from: number; to: number }> {
  // Most starts find the schema as this build wants it: one read, no lock, no transaction.
  const recorded = await recordedSchema(sql)
  if (recorded && recorded.version >= POSTGRES_SCHEMA_VERSION) {
    refuseIncompatible(recorded, location)
    return { from: recorded.version, to: recorded.version }
  }
  return sql.begin(async (tx) => {
    const schema = await readSchema(tx)
    refuseIncompatible(schema, location)
    if (schema.version >= POSTGRES_SCHEMA_VERSION) return { from: schema.version, to: schema.version }
    if (!schema.recorded) {
      await tx.unsafe(
        'CREATE TABLE IF NOT EXISTS intake_schema (version integer NOT NULL, oldest_compatible integer NOT NULL)',
      )
      await tx.unsafe('INSERT INTO intake_schema (version, oldest_compatible) VALUES (0, 0)')
    }
    for (let version = schema.version; version < POSTGRES_SCHEMA_VERSION; version++) {
      // Without parameters: one round trip for the whole migration (the simple query protocol).
      await tx.unsafe(migrations[version]!.sql)
    }
    await tx.unsafe('UPDATE intake_schema SET version = $1, oldest_compatible = $2', [
      POSTGRES_SCHEMA_VERSION,
      migrations[POSTGRES_SCHEMA_VERSION - 1]!.oldestCompatible,
    ])
    return { from: schema.version, to: POSTGRES_SCHEMA_VERSION }
  })
}
