package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
)

// Bodies by content (migrations/005_body_chunks.sql). A late request of a Claude Code session
// is ~800 KB and repeats the previous request but for its last turn, and a session sends
// hundreds: stored whole, a session costs the sum of its requests on disk and in CPU. Instead
// a large body is cut into content-defined chunks — boundaries chosen by a rolling (gear)
// hash of the bytes themselves, so an edit moves only the boundaries around it — and each
// distinct chunk is stored once, compressed. A session then costs about its final size.
//
// Two savings follow from a session repeating itself. On disk: a chunk already stored is only
// referenced. In CPU: the writer remembers each session's previous body and its chunks, so
// the part of a new body equal to the previous one (found with one bytes comparison) reuses
// those chunks without hashing, looking up or compressing them; only the new tail is chunked.

// Chunk sizes: boundaries are sought after chunkMin bytes and forced at chunkMax; the mask
// gives one boundary per 8 KiB on average past the minimum (≈ 16 KiB chunks). Bodies below
// minChunked stay whole, as before.
const (
	chunkMin   = 8 << 10
	chunkMax   = 64 << 10
	chunkBits  = 13
	minChunked = 2 * chunkMin
)

// bodyChunked marks a column whose body lives in body_parts: the byte, then the body's length
// and its chunk count (uvarints), which a read checks.
const bodyChunked = 2

// gear is the rolling hash's byte table: fixed pseudo-random values (splitmix64 from a
// constant seed), so chunk boundaries are the same in every process and release.
var gear = func() (t [256]uint64) {
	x := uint64(0x6c6f6e676861756c) // "longhaul"
	for i := range t {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		t[i] = z ^ z>>31
	}
	return t
}()

// nextCut returns the length of the chunk that starts b. The hash of a position depends on the
// 64 bytes before it (each step shifts one out), and the boundary test reads its top bits,
// which depend on all 64.
func nextCut(b []byte) int {
	if len(b) <= chunkMin {
		return len(b)
	}
	n := min(len(b), chunkMax)
	var h uint64
	for i := chunkMin - 64; i < n; i++ {
		h = h<<1 + gear[b[i]]
		if i >= chunkMin && h>>(64-chunkBits) == 0 {
			return i + 1
		}
	}
	return n
}

type chunkHash [16]byte

// chunkRef is one chunk of a body: where it ends in the body, its hash and its row.
type chunkRef struct {
	end  int
	hash chunkHash
	id   int64
}

// bodyMemory is what the writer remembers between batches: the chunk rows it knows exist and
// each recent session's previous body. Ids are only trusted while body_sweep's generation is
// the one they were learnt under.
type bodyMemory struct {
	mu       sync.Mutex
	gen      int64
	known    map[chunkHash]int64
	sessions map[string]*lastBody
	recent   []string // session keys, oldest first, for eviction
	held     int      // bytes of the bodies remembered
}

type lastBody struct {
	data   []byte // redacted; never modified once remembered
	chunks []chunkRef
	clean  bool // redaction masked nothing: data is also the body as received
}

// Bounds of bodyMemory: the previous bodies of the most recent sessions (a few hold megabytes)
// and the ids of recent chunks.
const (
	maxRememberedBytes = 16 << 20
	maxKnownChunks     = 1 << 16
)

func newBodyMemory() *bodyMemory {
	return &bodyMemory{known: map[chunkHash]int64{}, sessions: map[string]*lastBody{}}
}

func (m *bodyMemory) forget() {
	clear(m.known)
	clear(m.sessions)
	m.recent, m.held = m.recent[:0], 0
}

func (m *bodyMemory) remember(key string, b *lastBody) {
	if old, ok := m.sessions[key]; ok {
		m.held -= len(old.data)
	} else {
		m.recent = append(m.recent, key)
	}
	m.sessions[key] = b
	m.held += len(b.data)
	for m.held > maxRememberedBytes && len(m.recent) > 1 {
		oldest := m.recent[0]
		m.recent = m.recent[1:]
		if old, ok := m.sessions[oldest]; ok && oldest != key {
			m.held -= len(old.data)
			delete(m.sessions, oldest)
		}
	}
	if len(m.known) > maxKnownChunks {
		clear(m.known) // cheap to relearn: one lookup per chunk
	}
}

// bodyWriter stores bodies inside one WriteExchanges transaction. Ids it learns enter the
// shared memory only when the transaction commits (commit), since a rollback unmakes them.
type bodyWriter struct {
	mem                         *bodyMemory
	tx                          *sql.Tx
	lookup, insert, part, clear *sql.Stmt
	genChecked                  bool
	learnt                      map[chunkHash]int64
	sessions                    map[string]*lastBody
	order                       []string
}

func newBodyWriter(ctx context.Context, tx *sql.Tx, mem *bodyMemory) (*bodyWriter, error) {
	w := &bodyWriter{mem: mem, tx: tx, learnt: map[chunkHash]int64{}, sessions: map[string]*lastBody{}}
	for _, p := range []struct {
		dst  **sql.Stmt
		text string
	}{
		{&w.lookup, `SELECT id FROM body_chunks WHERE hash = ?`},
		{&w.insert, `INSERT INTO body_chunks (hash, size, data) VALUES (?, ?, ?) RETURNING id`},
		{&w.part, `INSERT INTO body_parts (exchange_seq, part, n, chunk_id) VALUES (?, ?, ?, ?)`},
		{&w.clear, `DELETE FROM body_parts WHERE exchange_seq = ? AND part = ?`},
	} {
		stmt, err := tx.PrepareContext(ctx, p.text)
		if err != nil {
			w.close()
			return nil, fmt.Errorf("prepare: %w", err)
		}
		*p.dst = stmt
	}
	return w, nil
}

func (w *bodyWriter) close() {
	for _, s := range []*sql.Stmt{w.lookup, w.insert, w.part, w.clear} {
		if s != nil {
			s.Close() //nolint:errcheck // closing a prepared statement of a finished tx
		}
	}
}

// checkGeneration forgets remembered ids if a sweep ran since they were learnt. It runs in
// the writer's transaction after its first write, so no sweep can run until it commits.
func (w *bodyWriter) checkGeneration(ctx context.Context) error {
	if w.genChecked {
		return nil
	}
	var gen int64
	if err := w.tx.QueryRowContext(ctx, `SELECT gen FROM body_sweep`).Scan(&gen); err != nil {
		return fmt.Errorf("sweep generation: %w", err)
	}
	if gen != w.mem.gen {
		w.mem.forget()
		w.mem.gen = gen
	}
	w.genChecked = true
	return nil
}

// put redacts and stores one part (0 request, 1 forwarded, 2 reply) of exchange seq and
// returns what its exchange_bodies column holds. raw is the body as received; put may keep
// it, so the caller must not modify it afterwards. session names the body's sequence (a
// session's requests) for the prefix shortcut; "" has none.
func (w *bodyWriter) put(ctx context.Context, seq int64, part int, session string, raw []byte) ([]byte, error) {
	if len(raw) < minChunked {
		return compress(Redact(raw))
	}
	if err := w.checkGeneration(ctx); err != nil {
		return nil, err
	}
	key := ""
	var prev *lastBody
	if session != "" {
		key = fmt.Sprintf("%d/%s", part, session)
		if prev = w.sessions[key]; prev == nil {
			prev = w.mem.sessions[key]
		}
	}
	body, clean := redactNew(prev, raw)
	chunks := make([]chunkRef, 0, len(body)/(chunkMin+1<<chunkBits)+2)
	start := 0
	if prev != nil {
		// Chunks of the previous body that end within the common prefix are this body's
		// chunks too: the cut points depend only on the bytes from the chunk's start.
		same := commonPrefix(prev.data, body)
		for _, c := range prev.chunks {
			if c.end > same {
				break
			}
			chunks = append(chunks, c)
			start = c.end
		}
	}
	for start < len(body) {
		end := start + nextCut(body[start:])
		h := sha256.Sum256(body[start:end])
		c := chunkRef{end: end, hash: chunkHash(h[:16])}
		id, err := w.chunkID(ctx, c.hash, body[start:end])
		if err != nil {
			return nil, err
		}
		c.id = id
		chunks = append(chunks, c)
		start = end
	}
	if _, err := w.clear.ExecContext(ctx, seq, part); err != nil {
		return nil, fmt.Errorf("body parts: %w", err)
	}
	for n, c := range chunks {
		if _, err := w.part.ExecContext(ctx, seq, part, n, c.id); err != nil {
			return nil, fmt.Errorf("body part %d: %w", n, err)
		}
	}
	if key != "" {
		if _, ok := w.sessions[key]; !ok {
			w.order = append(w.order, key)
		}
		w.sessions[key] = &lastBody{data: body, chunks: chunks, clean: clean}
	}
	col := binary.AppendUvarint([]byte{bodyChunked}, uint64(len(body)))
	return binary.AppendUvarint(col, uint64(len(chunks))), nil
}

// chunkID returns the row of a chunk, inserting it (compressed) when it is new.
func (w *bodyWriter) chunkID(ctx context.Context, h chunkHash, raw []byte) (int64, error) {
	if id, ok := w.learnt[h]; ok {
		return id, nil
	}
	if id, ok := w.mem.known[h]; ok {
		return id, nil
	}
	var id int64
	err := w.lookup.QueryRowContext(ctx, h[:]).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		data, cerr := compress(raw)
		if cerr != nil {
			return 0, fmt.Errorf("compress chunk: %w", cerr)
		}
		err = w.insert.QueryRowContext(ctx, h[:], len(raw), data).Scan(&id)
	}
	if err != nil {
		return 0, fmt.Errorf("body chunk: %w", err)
	}
	w.learnt[h] = id
	return id, nil
}

// commit makes what this transaction learnt known to later ones; call it after the commit.
func (w *bodyWriter) commit() {
	for h, id := range w.learnt {
		w.mem.known[h] = id
	}
	for _, key := range w.order {
		w.mem.remember(key, w.sessions[key])
	}
}

// redactNew is Redact(raw), scanning only what raw does not share with the previous body of
// its session when that one had nothing to mask — redaction was the writer's largest cost,
// and it was spent on the same bytes again each turn. The shared part is cut after a byte
// none of redact.go's patterns contains ('{', '}', '[', ']', ','), so no secret can span the
// cut and redacting the two sides apart equals redacting the whole;
// TestRedactSplitAtStructuralBytes keeps that true as redact.go evolves. clean reports that
// nothing was masked (the result is raw itself).
func redactNew(prev *lastBody, raw []byte) (body []byte, clean bool) {
	cut := 0
	if prev != nil && prev.clean {
		cut = bytes.LastIndexAny(raw[:commonPrefix(prev.data, raw)], "{}[],") + 1
	}
	tail := raw[cut:]
	r := Redact(tail)
	if len(r) == len(tail) && (len(r) == 0 || &r[0] == &tail[0]) {
		return raw, true
	}
	return append(append(make([]byte, 0, cut+len(r)), raw[:cut]...), r...), false
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	// Compare in blocks: the runtime's memequal is vectorised; then narrow down the block
	// that differs.
	const block = 4096
	i := 0
	for i+block <= n && string(a[i:i+block]) == string(b[i:i+block]) {
		i += block
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// readChunked reassembles a body stored as chunks and checks it against its header.
func readChunked(ctx context.Context, q queryer, seq int64, part int, header []byte) (string, error) {
	size, k := binary.Uvarint(header)
	count, k2 := binary.Uvarint(header[max(k, 0):])
	if k <= 0 || k2 <= 0 || size > maxInflate {
		return "", errors.New("read body: bad chunked header")
	}
	rows, err := q.QueryContext(ctx, `SELECT c.data FROM body_parts p JOIN body_chunks c ON c.id = p.chunk_id
		WHERE p.exchange_seq = ? AND p.part = ? ORDER BY p.n`, seq, part)
	if err != nil {
		return "", fmt.Errorf("read body: %w", err)
	}
	defer rows.Close() //nolint:errcheck // read-only
	out := make([]byte, 0, size)
	var n uint64
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return "", fmt.Errorf("read body: %w", err)
		}
		if out, err = decompressAppend(out, data); err != nil {
			return "", err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("read body: %w", err)
	}
	if n != count || uint64(len(out)) != size {
		return "", fmt.Errorf("read body: %d chunks, %d bytes; stored as %d chunks, %d bytes", n, len(out), count, size)
	}
	return string(out), nil
}

// sweepChunks deletes chunks no body refers to any more, a few hundred per transaction, and
// moves the sweep generation when it deleted any. It returns how many it deleted.
func (st *Store) sweepChunks(ctx context.Context) (int64, error) {
	var total int64
	for {
		tx, err := st.db.BeginTx(ctx, nil)
		if err != nil {
			return total, fmt.Errorf("sweep chunks: %w", err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM body_chunks WHERE id IN (SELECT c.id FROM body_chunks c
			WHERE NOT EXISTS (SELECT 1 FROM body_parts p WHERE p.chunk_id = c.id) LIMIT ?)`, retentionChunk)
		var n int64
		if err == nil {
			n, err = res.RowsAffected()
		}
		if err == nil && n > 0 {
			_, err = tx.ExecContext(ctx, `UPDATE body_sweep SET gen = gen + 1`)
		}
		if err == nil {
			err = tx.Commit()
		}
		if err != nil {
			st.rollback(tx)
			return total, fmt.Errorf("sweep chunks: %w", err)
		}
		total += n
		if n == 0 {
			return total, nil
		}
	}
}
