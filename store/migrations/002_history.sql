-- Request history. One row per client request, written by the recorder's single
-- writer goroutine. seq is the insertion order: list paging walks it newest first, and since a
-- new row always gets a higher seq (AUTOINCREMENT never reuses one, even after retention
-- deleted the top), a page cursor stays valid while rows arrive. Times are Unix nanoseconds,
-- UTC; durations nanoseconds.
CREATE TABLE exchanges (
    seq                  INTEGER PRIMARY KEY AUTOINCREMENT,
    id                   TEXT    NOT NULL UNIQUE,
    state                TEXT    NOT NULL,
    route                TEXT    NOT NULL DEFAULT '',
    method               TEXT    NOT NULL DEFAULT '',
    path                 TEXT    NOT NULL DEFAULT '',
    user_agent           TEXT    NOT NULL DEFAULT '',
    remote_addr          TEXT    NOT NULL DEFAULT '',
    session_id           TEXT    NOT NULL DEFAULT '',
    model                TEXT    NOT NULL DEFAULT '',
    model_sent           TEXT    NOT NULL DEFAULT '',
    stream               INTEGER NOT NULL DEFAULT 0,
    account_id           INTEGER NOT NULL DEFAULT 0,
    account_name         TEXT    NOT NULL DEFAULT '',
    start_ns             INTEGER NOT NULL,
    first_byte_ns        INTEGER NOT NULL DEFAULT 0,
    end_ns               INTEGER NOT NULL DEFAULT 0,
    duration_ns          INTEGER NOT NULL DEFAULT 0,
    ttfb_ns              INTEGER NOT NULL DEFAULT 0,
    status               INTEGER NOT NULL DEFAULT 0,
    error_type           TEXT    NOT NULL DEFAULT '',
    error_message        TEXT    NOT NULL DEFAULT '',
    stream_outcome       TEXT    NOT NULL DEFAULT '',
    stop_reason          TEXT    NOT NULL DEFAULT '',
    input_tokens         INTEGER NOT NULL DEFAULT 0,
    output_tokens        INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens    INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens   INTEGER NOT NULL DEFAULT 0,
    context_limit        INTEGER NOT NULL DEFAULT 0,
    tokens_before        INTEGER NOT NULL DEFAULT 0,
    tokens_after         INTEGER NOT NULL DEFAULT 0,
    pressure_before      REAL    NOT NULL DEFAULT 0,
    pressure_after       REAL    NOT NULL DEFAULT 0,
    layers               TEXT    NOT NULL DEFAULT '', -- compaction layers applied, comma-separated
    tokens_saved         INTEGER NOT NULL DEFAULT 0,
    signature_recoveries INTEGER NOT NULL DEFAULT 0,
    cross_model_dropped  INTEGER NOT NULL DEFAULT 0,
    signatures           INTEGER NOT NULL DEFAULT 0, -- how many the upstream issued (not the values)
    tool_use_ids         TEXT    NOT NULL DEFAULT '[]',
    bytes_in             INTEGER NOT NULL DEFAULT 0,
    bytes_out            INTEGER NOT NULL DEFAULT 0,
    has_bodies           INTEGER NOT NULL DEFAULT 0,
    bodies_truncated     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX exchanges_start ON exchanges (start_ns);
CREATE INDEX exchanges_session ON exchanges (session_id, seq);

-- Every upstream attempt of an exchange, in order.
CREATE TABLE exchange_attempts (
    exchange_seq INTEGER NOT NULL REFERENCES exchanges (seq) ON DELETE CASCADE,
    n            INTEGER NOT NULL,
    account_id   INTEGER NOT NULL,
    account_name TEXT    NOT NULL,
    status       INTEGER NOT NULL,
    error        TEXT    NOT NULL,
    start_ns     INTEGER NOT NULL,
    duration_ns  INTEGER NOT NULL,
    PRIMARY KEY (exchange_seq, n)
) WITHOUT ROWID;

-- Every compaction step that changed the request, in order.
CREATE TABLE exchange_compaction (
    exchange_seq  INTEGER NOT NULL REFERENCES exchanges (seq) ON DELETE CASCADE,
    n             INTEGER NOT NULL,
    layer         TEXT    NOT NULL,
    tokens_before INTEGER NOT NULL,
    tokens_after  INTEGER NOT NULL,
    raw_before    INTEGER NOT NULL,
    raw_after     INTEGER NOT NULL,
    items         INTEGER NOT NULL,
    duration_ns   INTEGER NOT NULL,
    cache_hit     INTEGER NOT NULL,
    PRIMARY KEY (exchange_seq, n)
) WITHOUT ROWID;

-- Bodies live apart so that list queries never read them and retention can drop them first.
-- Each is redacted, capped and DEFLATE-compressed; NULL when not kept.
CREATE TABLE exchange_bodies (
    exchange_seq INTEGER PRIMARY KEY REFERENCES exchanges (seq) ON DELETE CASCADE,
    request      BLOB,
    forwarded    BLOB,
    reply        BLOB
);
