-- Settings hold only what the user has set; defaults live in code so they can change between
-- versions for keys nobody touched. value is the JSON of one leaf (or whole map/list).
CREATE TABLE settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE accounts (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    label           TEXT    NOT NULL DEFAULT '',
    kind            TEXT    NOT NULL DEFAULT 'anthropic',
    base_url        TEXT    NOT NULL,
    secret          TEXT    NOT NULL,
    enabled         INTEGER NOT NULL DEFAULT 1,
    disabled_reason TEXT    NOT NULL DEFAULT '',
    models          TEXT    NOT NULL DEFAULT '[]',
    priority        INTEGER NOT NULL DEFAULT 0,
    weight          INTEGER NOT NULL DEFAULT 1,
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL
);
