-- Bodies by content. Consecutive requests of a session repeat almost all of the previous one,
-- so a large body is stored as content-defined chunks (store/bodies.go): each distinct chunk
-- once, in body_chunks, and each body as the ordered list of its chunks, in body_parts. The
-- exchange_bodies column of such a body holds only a header (format byte 2, total length,
-- chunk count); small bodies, and every body written before this migration, stay whole in
-- exchange_bodies and read as before.
CREATE TABLE body_chunks (
    id   INTEGER PRIMARY KEY,
    hash BLOB    NOT NULL UNIQUE, -- SHA-256 of the raw (redacted) bytes, first 16 bytes
    size INTEGER NOT NULL,        -- raw length
    data BLOB    NOT NULL         -- format byte, then the bytes (raw or compressed)
);

-- part: 0 request, 1 forwarded, 2 reply. Rows go with their body (ON DELETE CASCADE); a chunk
-- no row points at any more is swept by retention.
CREATE TABLE body_parts (
    exchange_seq INTEGER NOT NULL REFERENCES exchange_bodies (exchange_seq) ON DELETE CASCADE,
    part         INTEGER NOT NULL,
    n            INTEGER NOT NULL,
    chunk_id     INTEGER NOT NULL,
    PRIMARY KEY (exchange_seq, part, n)
) WITHOUT ROWID;
CREATE INDEX body_parts_chunk ON body_parts (chunk_id);

-- Bumped by every sweep that deleted chunks: a writer that remembers chunk ids (to skip
-- looking up the chunks a session repeats) forgets them when the generation moved, even when
-- the sweep ran in another process.
CREATE TABLE body_sweep (gen INTEGER NOT NULL);
INSERT INTO body_sweep (gen) VALUES (0);
