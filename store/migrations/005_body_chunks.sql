-- Bodies by content. Consecutive requests of a session repeat almost all of the previous one,
-- so a large body is stored as content-defined chunks (store/bodies.go): each distinct chunk
-- once, in body_chunks. The exchange_bodies column of such a body holds its list: format byte
-- 2, the body's length, the chunk count and the chunks' ids (uvarints). Small bodies, and
-- every body written before this migration, stay whole in exchange_bodies and read as before.
-- A chunk no list names any more is swept by retention (mark and sweep, in one transaction).
CREATE TABLE body_chunks (
    id   INTEGER PRIMARY KEY,
    hash BLOB    NOT NULL UNIQUE, -- SHA-256 of the raw (redacted) bytes, first 16 bytes
    size INTEGER NOT NULL,        -- raw length
    data BLOB    NOT NULL         -- format byte, then the bytes (raw or compressed)
);

-- Bumped by every sweep that deleted chunks: a writer that remembers chunk ids (to skip
-- looking up the chunks a session repeats) forgets them when the generation moved, even when
-- the sweep ran in another process.
CREATE TABLE body_sweep (gen INTEGER NOT NULL);
INSERT INTO body_sweep (gen) VALUES (0);
