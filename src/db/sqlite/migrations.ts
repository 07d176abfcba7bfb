/**
 * The schema, one migration per release step. Migration N takes a database
 * from `PRAGMA user_version` N-1 to N. Never edit a shipped migration: add one.
 * Times are integer milliseconds since the epoch (UTC).
 *
 * Migrations are additive first (expand, then contract a release later).
 * From schema 4 on, the database records the oldest schema whose intake may
 * still run on it (`schema_compatibility`): a newer database is refused only
 * when it says this intake is too old. A migration that breaks older
 * releases raises it.
 */
export const migrations: readonly string[] = [
  /* 1: accounts, keys, forms, responses, the webhook outbox */ `
  CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    created_at  INTEGER NOT NULL
  ) STRICT;

  CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    key_hash      TEXT NOT NULL UNIQUE,   -- SHA-256 hex of the whole key; the plaintext is never stored
    key_hint      TEXT NOT NULL,          -- last 4 characters, to tell keys apart in a list
    created_at    INTEGER NOT NULL,
    last_used_at  INTEGER,
    revoked_at    INTEGER
  ) STRICT;
  CREATE INDEX api_keys_account ON api_keys(account_id);

  CREATE TABLE forms (
    id                 TEXT PRIMARY KEY,
    account_id         TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    title              TEXT NOT NULL,
    description        TEXT,
    fields             TEXT NOT NULL,     -- JSON array of field definitions, as given
    fields_count       INTEGER NOT NULL,
    callback_url       TEXT,
    callback_metadata  TEXT NOT NULL,     -- JSON object
    webhook_secret     TEXT,              -- 64 hex; present when callback_url is
    context            TEXT,              -- JSON object or NULL; removed on expiry
    settings           TEXT NOT NULL,     -- JSON object
    status             TEXT NOT NULL CHECK (status IN ('active', 'completed', 'cancelled', 'expired')),
    expires_at         INTEGER,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
  ) STRICT;
  -- List pages walk one account's forms newest first, with or without a status filter.
  CREATE INDEX forms_account_newest ON forms(account_id, id DESC);
  CREATE INDEX forms_account_status_newest ON forms(account_id, status, id DESC);
  -- The expiry sweep finds active forms whose time has come.
  CREATE INDEX forms_active_expiry ON forms(expires_at) WHERE status = 'active' AND expires_at IS NOT NULL;

  CREATE TABLE responses (
    id            TEXT PRIMARY KEY,
    form_id       TEXT NOT NULL UNIQUE REFERENCES forms(id) ON DELETE CASCADE,  -- one response per form
    data          TEXT NOT NULL,          -- JSON object
    ip            TEXT,
    user_agent    TEXT,
    submitted_at  INTEGER NOT NULL
  ) STRICT;

  CREATE TABLE response_files (
    response_id   TEXT NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
    field_key     TEXT NOT NULL,
    name          TEXT NOT NULL,
    content_type  TEXT NOT NULL,
    size          INTEGER NOT NULL,
    content       BLOB NOT NULL,
    PRIMARY KEY (response_id, field_key)
  ) STRICT;

  -- The webhook outbox: the source of truth for every delivery.
  CREATE TABLE deliveries (
    id                TEXT PRIMARY KEY,   -- stable across retries: X-Service-Delivery and webhook-id
    form_id           TEXT NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
    response_id       TEXT NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
    event             TEXT NOT NULL,
    url               TEXT NOT NULL,
    payload           TEXT NOT NULL,      -- the exact body sent on every attempt
    status            TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts          INTEGER NOT NULL DEFAULT 0,  -- total, across redeliveries
    round_attempts    INTEGER NOT NULL DEFAULT 0,  -- in the current round (a redelivery starts a new one)
    next_attempt_at   INTEGER,
    lease_until       INTEGER,            -- an attempt in flight; a crash leaves it to expire and be retried
    last_status_code  INTEGER,
    last_error        TEXT,
    delivered_at      INTEGER,
    created_at        INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX deliveries_due ON deliveries(next_attempt_at) WHERE status = 'pending';
  CREATE INDEX deliveries_form ON deliveries(form_id, id);
  CREATE INDEX deliveries_response ON deliveries(response_id);
  `,

  /* 2: Idempotency-Key on creating forms */ `
  CREATE TABLE idempotency_keys (
    account_id    TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    key           TEXT NOT NULL,
    request_hash  TEXT NOT NULL,          -- SHA-256 hex of the create body, parsed and serialised again
    form_id       TEXT NOT NULL REFERENCES forms(id) ON DELETE CASCADE,  -- a deleted form frees its key
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (account_id, key)
  ) STRICT;
  CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);
  `,

  /* 3: file bytes in chunks of at most 512 KiB, written and read a chunk at a time */ `
  CREATE TABLE file_chunks (
    file_id     TEXT NOT NULL,
    seq         INTEGER NOT NULL,         -- 0, 1, 2, ... in the file's order
    bytes       BLOB NOT NULL,            -- at most 512 KiB
    PRIMARY KEY (file_id, seq)
  ) STRICT;

  -- Chunks no response holds: an upload not (yet) recorded, or the files of a deleted response.
  -- They are removed a few chunks at a time once \`since\` is more than an hour old (0: at once).
  CREATE TABLE unclaimed_files (
    file_id     TEXT PRIMARY KEY,
    since       INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX unclaimed_files_since ON unclaimed_files(since);

  ALTER TABLE response_files ADD COLUMN file_id TEXT;  -- its bytes in file_chunks; \`content\` stays empty
  UPDATE response_files SET file_id = lower(hex(randomblob(16)));
  CREATE UNIQUE INDEX response_files_file ON response_files(file_id);
  WITH RECURSIVE piece(file_id, seq) AS (
    SELECT file_id, 0 FROM response_files WHERE length(content) > 0
    UNION ALL
    SELECT p.file_id, p.seq + 1 FROM piece p JOIN response_files f ON f.file_id = p.file_id
     WHERE (p.seq + 1) * 524288 < length(f.content)
  )
  INSERT INTO file_chunks (file_id, seq, bytes)
    SELECT p.file_id, p.seq, substr(f.content, p.seq * 524288 + 1, 524288) FROM piece p JOIN response_files f ON f.file_id = p.file_id;
  UPDATE response_files SET content = X'';

  -- However a response's file row goes (the form deleted, say), its chunks are then unclaimed.
  CREATE TRIGGER response_files_unclaim AFTER DELETE ON response_files BEGIN
    INSERT OR REPLACE INTO unclaimed_files (file_id, since) VALUES (old.file_id, 0);
  END;
  `,

  /* 4: the oldest schema whose intake may run on this database */ `
  CREATE TABLE schema_compatibility (
    id                 INTEGER PRIMARY KEY CHECK (id = 1),
    oldest_compatible  INTEGER NOT NULL
  ) STRICT;
  INSERT INTO schema_compatibility (id, oldest_compatible) VALUES (1, 3);
  `,

  /*
   * 5: the page's settings; files kept across a 422; receipts. Additive: an
   * intake of schema 3 or 4 still runs (it writes forms without \`page\`, which
   * then holds '{}', and never sees the new tables).
   */ `
  ALTER TABLE forms ADD COLUMN page TEXT NOT NULL DEFAULT '{}';  -- JSON object, as given

  -- An upload that passed its field's checks in a post refused with 422, kept for the next post.
  CREATE TABLE held_files (
    id            TEXT PRIMARY KEY,       -- random: the page names it, so it must not be guessable
    form_id       TEXT NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
    field_key     TEXT NOT NULL,
    name          TEXT NOT NULL,          -- as the browser sent it
    content_type  TEXT NOT NULL,          -- as the browser declared it
    size          INTEGER NOT NULL,
    file_id       TEXT NOT NULL UNIQUE,   -- its bytes in file_chunks
    held_until    INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX held_files_form ON held_files(form_id);
  CREATE INDEX held_files_until ON held_files(held_until);
  -- However a hold goes (used, removed, lapsed, its form deleted), its chunks are then
  -- unclaimed, unless the answer that used it holds them.
  CREATE TRIGGER held_files_unclaim AFTER DELETE ON held_files
    WHEN NOT EXISTS (SELECT 1 FROM response_files WHERE file_id = old.file_id)
  BEGIN
    INSERT OR REPLACE INTO unclaimed_files (file_id, since) VALUES (old.file_id, 0);
  END;

  -- One-time tokens that show the person what they sent, once, right after sending.
  CREATE TABLE receipts (
    token_hash  TEXT PRIMARY KEY,         -- SHA-256 hex of the cookie's token; the token is never stored
    form_id     TEXT NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
    expires_at  INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX receipts_form ON receipts(form_id);
  CREATE INDEX receipts_expiry ON receipts(expires_at);
  `,
  /*
   * 6: lifecycle events (CONTRACT 12): which endings a form's webhook tells
   * of, deliveries that answer no response (expiry, cancellation), and the
   * account's event feed. Additive for the binaries that may still run on it:
   * an intake of schema 3 to 5 writes forms that tell of completion alone,
   * and writes no events.
   */ `
  ALTER TABLE forms ADD COLUMN callback_events TEXT NOT NULL DEFAULT '["form.completed"]';  -- JSON array, as given

  -- response_id becomes optional: a delivery may tell of an expiry or a cancellation.
  -- SQLite changes a column's constraint only by building the table again.
  CREATE TABLE deliveries_new (
    id                TEXT PRIMARY KEY,   -- stable across retries: X-Service-Delivery and webhook-id
    form_id           TEXT NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
    response_id       TEXT REFERENCES responses(id) ON DELETE CASCADE,  -- the answer a form.completed tells of
    event             TEXT NOT NULL,
    url               TEXT NOT NULL,
    payload           TEXT NOT NULL,      -- the exact body sent on every attempt
    status            TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts          INTEGER NOT NULL DEFAULT 0,  -- total, across redeliveries
    round_attempts    INTEGER NOT NULL DEFAULT 0,  -- in the current round (a redelivery starts a new one)
    next_attempt_at   INTEGER,
    lease_until       INTEGER,            -- an attempt in flight; a crash leaves it to expire and be retried
    last_status_code  INTEGER,
    last_error        TEXT,
    delivered_at      INTEGER,
    created_at        INTEGER NOT NULL
  ) STRICT;
  INSERT INTO deliveries_new SELECT id, form_id, response_id, event, url, payload, status, attempts, round_attempts,
    next_attempt_at, lease_until, last_status_code, last_error, delivered_at, created_at FROM deliveries;
  DROP TABLE deliveries;
  ALTER TABLE deliveries_new RENAME TO deliveries;
  CREATE INDEX deliveries_due ON deliveries(next_attempt_at) WHERE status = 'pending';
  CREATE INDEX deliveries_form ON deliveries(form_id, id);
  CREATE INDEX deliveries_response ON deliveries(response_id);
  -- Expiry deliveries carry the context the form lost: they go after 7 days.
  CREATE INDEX deliveries_event_created ON deliveries(event, created_at);

  -- The account's event feed, in commit order: (position, seq). A form's events go with it,
  -- but for its form.deleted, which has no form to refer to. Kept 7 days.
  CREATE TABLE events (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: a cursor past a removed event stays a position
    position     INTEGER NOT NULL,       -- event_positions.floor when written: events copied in keep theirs
    account_id   TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    form_id      TEXT NOT NULL,
    type         TEXT NOT NULL,
    occurred_at  INTEGER NOT NULL,
    payload      TEXT NOT NULL,          -- JSON object: the webhook body of the event
    created_at   INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX events_account_order ON events(account_id, position, seq);
  CREATE INDEX events_form ON events(form_id);
  CREATE INDEX events_created ON events(created_at);

  -- What new events take as their position: raised by intake copy above every event it copied in.
  CREATE TABLE event_positions (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    floor  INTEGER NOT NULL
  ) STRICT;
  INSERT INTO event_positions (id, floor) VALUES (1, 0);
  `,
  /*
   * 7: each account's events numbered on their own (CONTRACT 12a), and each
   * event's payload length, so a page is chosen without reading payloads.
   * The table is built again to hold them (and the small columns) before the
   * payload: SQLite reads a column stored after a large payload by walking
   * the payload's overflow pages.
   *
   * Kept events are numbered per account in the order they had, position
   * and seq, which they keep: cursors from before still read (the events
   * module maps one to the first event after it). AUTOINCREMENT's counter is
   * carried over, so no seq is given twice.
   *
   * An intake of schema 3 to 6 may still run on this database (a downgrade,
   * or the command line of an older release): it writes events without a
   * number or a length, and the trigger gives them both, with the account's
   * next number, in the statement that writes the event. So the database
   * stays open to those binaries (schema_compatibility unchanged): refusing
   * them would not stop one already running, and the trigger keeps what it
   * writes in order for every reader.
   */ `
  CREATE TABLE event_heads (
    account_id  TEXT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    last        INTEGER NOT NULL        -- the number the account's last event took, kept or not
  ) STRICT;

  CREATE TABLE events_numbered (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id     TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    number         INTEGER,               -- per account, from event_heads; NULL only inside the INSERT of an older intake
    position       INTEGER NOT NULL,      -- the order before numbers (see migration 6), for cursors from then
    form_id        TEXT NOT NULL,
    type           TEXT NOT NULL,
    occurred_at    INTEGER NOT NULL,
    created_at     INTEGER NOT NULL,
    payload_bytes  INTEGER,               -- the payload's length in bytes (UTF-8); set with number
    payload        TEXT NOT NULL          -- JSON object: the webhook body of the event
  ) STRICT;
  INSERT INTO events_numbered (seq, account_id, number, position, form_id, type, occurred_at, created_at, payload_bytes, payload)
    SELECT seq, account_id, row_number() OVER (PARTITION BY account_id ORDER BY position, seq), position, form_id, type,
           occurred_at, created_at, length(CAST(payload AS BLOB)), payload
      FROM events;
  INSERT INTO event_heads (account_id, last) SELECT account_id, max(number) FROM events_numbered GROUP BY account_id;
  DELETE FROM sqlite_sequence WHERE name = 'events_numbered';
  UPDATE sqlite_sequence SET name = 'events_numbered' WHERE name = 'events';
  DROP TABLE events;
  ALTER TABLE events_numbered RENAME TO events;
  CREATE UNIQUE INDEX events_account_number ON events(account_id, number);
  CREATE INDEX events_account_order ON events(account_id, position, seq);
  CREATE INDEX events_form ON events(form_id);
  CREATE INDEX events_created ON events(created_at);

  -- An event written without a number (by an older intake) takes its account's next one.
  CREATE TRIGGER events_number AFTER INSERT ON events WHEN NEW.number IS NULL BEGIN
    INSERT INTO event_heads (account_id, last) VALUES (NEW.account_id, 1)
      ON CONFLICT (account_id) DO UPDATE SET last = last + 1;
    UPDATE events SET number = (SELECT last FROM event_heads WHERE account_id = NEW.account_id),
                      payload_bytes = length(CAST(NEW.payload AS BLOB))
     WHERE seq = NEW.seq;
  END;
  `,
  /*
   * 8: answers waiting on their "Check your answers" page (\`page.review\`,
   * CONTRACT 14). Additive: an intake of schema 3 to 7 never sees the table
   * (it records a review form's answers at once, as it always did).
   */ `
  -- A valid form post held until its Send, for at most an hour; its files are holds in held_files.
  CREATE TABLE drafts (
    id          TEXT PRIMARY KEY,         -- random: the review page names it, so it must not be guessable
    form_id     TEXT NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
    answers     TEXT NOT NULL,            -- JSON array of [name, text]: the post's texts, in order, as the page sent them
    files       TEXT NOT NULL,            -- JSON object: by field key, the hold id, name and size of its file
    created_at  INTEGER NOT NULL,
    held_until  INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX drafts_form ON drafts(form_id, created_at);
  CREATE INDEX drafts_until ON drafts(held_until);
  `,
  /*
   * 9: the console's people (CONTRACT 15): users, their one-time set-up
   * links, their sessions, and sign-in failures (shared by every process on
   * the database, for throttling). Additive: an intake of schema 3 to 8 never
   * sees these tables.
   */ `
  CREATE TABLE console_users (
    id             TEXT PRIMARY KEY,
    email          TEXT NOT NULL UNIQUE,  -- lower case
    account_id     TEXT REFERENCES accounts(id) ON DELETE CASCADE,  -- the one account a member sees; NULL: an operator
    password_hash  TEXT,                  -- argon2id (PHC string); NULL until set through a set-up link
    created_at     INTEGER NOT NULL
  ) STRICT;

  CREATE TABLE console_setup_tokens (
    token_hash  TEXT PRIMARY KEY,         -- SHA-256 hex of the link's token; the token is never stored
    user_id     TEXT REFERENCES console_users(id) ON DELETE CASCADE,  -- NULL: the first operator, whose email the page asks
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    used_at     INTEGER
  ) STRICT;
  CREATE INDEX console_setup_tokens_user ON console_setup_tokens(user_id);

  CREATE TABLE console_sessions (
    token_hash    TEXT PRIMARY KEY,       -- SHA-256 hex of the cookie's token
    user_id       TEXT NOT NULL REFERENCES console_users(id) ON DELETE CASCADE,
    created_at    INTEGER NOT NULL,
    last_seen_at  INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX console_sessions_user ON console_sessions(user_id);

  CREATE TABLE console_sign_in_failures (
    id         TEXT PRIMARY KEY,
    email      TEXT NOT NULL,             -- as typed, lower case: unknown emails count too
    client     TEXT NOT NULL,             -- the client's address ('' when unknown)
    failed_at  INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX console_sign_in_failures_email ON console_sign_in_failures(email, failed_at);
  CREATE INDEX console_sign_in_failures_client ON console_sign_in_failures(client, failed_at);
  CREATE INDEX console_sign_in_failures_at ON console_sign_in_failures(failed_at);

  -- The console counts each account's answers of the last 30 days from the newest answers.
  CREATE INDEX responses_submitted_at ON responses(submitted_at);
  `,
  /*
   * 10: the console's title search (CONTRACT 15): a trigram index of form
   * titles, filled by the sweep a batch at a time (nothing is added to a
   * create or a delete but, for a delete, its entry marked gone). Additive:
   * an older intake's forms are indexed by the next sweep; derived from
   * forms, the index is never copied.
   */ `
  -- The search index's rowid for each form: forms' own rowid may change with VACUUM, this one does not.
  CREATE TABLE form_titles (
    seq      INTEGER PRIMARY KEY,
    form_id  TEXT NOT NULL UNIQUE
  ) STRICT;
  -- Titles as trigrams: a search for three characters or more reads only the forms that hold them.
  CREATE VIRTUAL TABLE form_titles_search USING fts5(title, content='', contentless_delete=1, tokenize='trigram');
  -- Entries of deleted forms, for the sweep to take out of the index.
  CREATE TABLE form_titles_gone (seq INTEGER PRIMARY KEY) STRICT;
  CREATE TRIGGER forms_title_gone AFTER DELETE ON forms BEGIN
    INSERT INTO form_titles_gone (seq) SELECT seq FROM form_titles WHERE form_id = OLD.id;
    DELETE FROM form_titles WHERE form_id = OLD.id;
  END;
  `,
  /*
   * 11: what the console's overview reads without walking every form: the
   * deliveries whose last attempt failed (answers by arrival are migration 9's).
   * Indexes alone: every earlier intake still runs on it.
   */ `
  CREATE INDEX deliveries_failing ON deliveries(form_id) WHERE status = 'failed' OR (status = 'pending' AND round_attempts > 0);
  `,
]
