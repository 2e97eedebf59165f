package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"sync"

	"longhaul/store/leaks"
)

// Bodies by content (migrations/005_body_chunks.sql). A late request of a Claude Code session
// is ~800 KB and repeats the previous request but for its last turn, and a session sends
// hundreds: stored whole, a session costs the sum of its requests on disk and in CPU. Instead
// a large body is cut into content-defined chunks — boundaries chosen by a rolling (gear)
// hash of the bytes themselves, so an edit moves only the boundaries around it — and each
// distinct chunk is stored once, compressed. A session then costs about its final size.
//
// Two savings follow from a session repeating itself. On disk: a chunk already stored is only
// referenced. In CPU: the writer remembers each session's previous body — not its bytes, a
// hash of each 4 KiB block of it, and its chunks — so the part of a new body equal to the
// previous one (found by hashing the new body's blocks) reuses those chunks without hashing,
// looking up or compressing them, and is not scanned for secrets again; only the new tail is
// chunked.

// Chunk sizes: boundaries are sought after chunkMin bytes and forced at chunkMax; the mask
// gives one boundary per 8 KiB on average past the minimum (≈ 16 KiB chunks). Bodies below
// minChunked stay whole, as before.
const (
	chunkMin   = 8 << 10
	chunkMax   = 64 << 10
	chunkBits  = 13
	minChunked = 2 * chunkMin
)

// bodyChunked marks a column that lists a body's chunks: the byte, then the body's length,
// the chunk count and the chunk ids, all uvarints. A list per body, rather than a row per
// chunk, keeps a turn's write to one small value: rows cost more than all the rest of it.
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
	stmts    map[string]*sql.Stmt // the writer's statements, prepared once (see prepared)
	gen      int64
	known    map[chunkHash]int64
	seed     maphash.Seed // of the block hashes; drawn per process, so no text can aim at a collision
	sessions map[sessionKey]*lastBody
	recent   []sessionKey // session keys, oldest first, for eviction
	// repeatsTaken counts bodies whose shared part the proxy's comparison gave (Repeats), so
	// no byte of it was read here; chunked the bytes cut into chunks (hashed, and compressed
	// when new).
	repeatsTaken, chunked int64
	// lost counts digested bodies written without their body: a chunk they reused was gone.
	lost int64
}

// lastBody is what the writer remembers of a session's previous body. It holds no copy of the
// bytes: keeping one cost an 800 KB allocation per large request (its page faults were a
// quarter of the writer's time per turn, BenchmarkWriteSessionTurn) and up to 16 MiB of heap.
// The block hashes tell how much of the next body repeats it. They are 64-bit hashes of 4 KiB
// blocks under a seed drawn at start (hash/maphash): a block taken for equal while it differs
// needs two different blocks with one hash, a chance of about 2⁻⁶⁴ per block compared.
type lastBody struct {
	exchange string // whose body it was
	size     int
	blocks   []uint64 // maphash of each prefixBlock bytes of the redacted body; the last may be shorter
	chunks   []chunkRef
	clean    bool // redaction masked nothing: the redacted body is also the body as received
	// known is the set of known secrets the body was redacted with: once it changes, the
	// shared prefix must be scanned again for the new ones.
	known *knownSet
}

// Bounds of bodyMemory: the sessions whose previous body is remembered (a few kilobytes each:
// an 800 KB body has 200 blocks and about 50 chunks) and the ids of recent chunks.
const (
	prefixBlock         = 4 << 10
	maxRememberedBodies = 1024
	maxKnownChunks      = 1 << 16
)

// BodiesRepeated counts the request bodies whose part shared with their session's previous one
// the proxy gave (Bodies.RequestRepeats), so the writer read none of it.
func (st *Store) BodiesRepeated() int64 {
	st.bodies.mu.Lock()
	defer st.bodies.mu.Unlock()
	return st.bodies.repeatsTaken
}

// BodiesLost counts request bodies made ready ahead of their batch (DigestRequest) that could
// not be stored: a chunk they shared with an earlier body was gone by then (its batch was given
// up, or retention swept it). Their rows are stored without that body.
func (st *Store) BodiesLost() int64 {
	st.bodies.mu.Lock()
	defer st.bodies.mu.Unlock()
	return st.bodies.lost
}

func newBodyMemory() *bodyMemory {
	return &bodyMemory{known: map[chunkHash]int64{}, seed: maphash.MakeSeed(), sessions: map[sessionKey]*lastBody{}, stmts: map[string]*sql.Stmt{}}
}

// sharedPrefix returns how many leading bytes of b are prev's, as the block hashes tell: a
// multiple of prefixBlock, or prev's whole size.
func (m *bodyMemory) sharedPrefix(prev *lastBody, b []byte) int {
	same := 0
	for i, h := range prev.blocks {
		end := min((i+1)*prefixBlock, prev.size)
		if end > len(b) || maphash.Bytes(m.seed, b[i*prefixBlock:end]) != h {
			break
		}
		same = end
	}
	return same
}

// blockHashes returns the block hashes of b, of which the first same bytes are prev's.
func (m *bodyMemory) blockHashes(b []byte, prev *lastBody, same int) []uint64 {
	hs := make([]uint64, 0, (len(b)+prefixBlock-1)/prefixBlock)
	if prev != nil {
		hs = append(hs, prev.blocks[:same/prefixBlock]...) // whole blocks, in prev as in b
	}
	for i := len(hs) * prefixBlock; i < len(b); i += prefixBlock {
		hs = append(hs, maphash.Bytes(m.seed, b[i:min(i+prefixBlock, len(b))]))
	}
	return hs
}

// prepare prepares the writer's statements once, before the first batch's transaction (a
// connection opened inside it would wait on the transaction's own lock): parsing the eight
// statements for every batch took a fifth of its CPU. The caller holds m.mu.
func (m *bodyMemory) prepare(ctx context.Context, db *sql.DB, texts []string) error {
	for _, text := range texts {
		if _, ok := m.stmts[text]; ok {
			continue
		}
		s, err := db.PrepareContext(ctx, text)
		if err != nil {
			return err
		}
		m.stmts[text] = s
	}
	return nil
}

// prepared returns a prepared statement for use in tx (database/sql keeps it prepared per
// connection). The caller holds m.mu.
func (m *bodyMemory) prepared(ctx context.Context, tx *sql.Tx, text string) (*sql.Stmt, error) {
	s, ok := m.stmts[text]
	if !ok {
		return nil, fmt.Errorf("statement not prepared: %.40s", text)
	}
	return tx.StmtContext(ctx, s), nil
}

func (m *bodyMemory) forget() {
	clear(m.known)
	clear(m.sessions)
	m.recent = m.recent[:0]
}

func (m *bodyMemory) remember(key sessionKey, b *lastBody) {
	if _, ok := m.sessions[key]; !ok {
		m.recent = append(m.recent, key)
	}
	m.sessions[key] = b
	for len(m.recent) > maxRememberedBodies {
		delete(m.sessions, m.recent[0])
		m.recent = m.recent[1:]
	}
	if len(m.known) > maxKnownChunks {
		clear(m.known) // cheap to relearn: one lookup per chunk
	}
}

// bodyWriter stores bodies inside one WriteExchanges transaction. Ids it learns enter the
// shared memory only when the transaction commits (commit), since a rollback unmakes them.
type bodyWriter struct {
	mem                 *bodyMemory
	tx                  *sql.Tx
	lookup, insert, gen *sql.Stmt
	genChecked          bool
	learnt              map[chunkHash]int64
	sessions            map[sessionKey]*lastBody
	order               []sessionKey
	// Buffers reused from row to row (the driver copies what it binds): a part's column and a
	// chunk's stored form.
	cols  [3][]byte
	chunk []byte
}

const (
	lookupChunk     = `SELECT id FROM body_chunks WHERE hash = ?`
	insertChunk     = `INSERT INTO body_chunks (hash, size, data) VALUES (?, ?, ?) RETURNING id`
	sweepGeneration = `SELECT gen FROM body_sweep`
)

func newBodyWriter(ctx context.Context, tx *sql.Tx, mem *bodyMemory) (*bodyWriter, error) {
	w := &bodyWriter{mem: mem, tx: tx, learnt: map[chunkHash]int64{}, sessions: map[sessionKey]*lastBody{}}
	for _, p := range []struct {
		dst  **sql.Stmt
		text string
	}{
		{&w.lookup, lookupChunk},
		{&w.insert, insertChunk},
		{&w.gen, sweepGeneration},
	} {
		stmt, err := mem.prepared(ctx, tx, p.text)
		if err != nil {
			w.close()
			return nil, fmt.Errorf("prepare: %w", err)
		}
		*p.dst = stmt
	}
	return w, nil
}

func (w *bodyWriter) close() {
	for _, s := range []*sql.Stmt{w.lookup, w.insert, w.gen} {
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
	if err := w.gen.QueryRowContext(ctx).Scan(&gen); err != nil {
		return fmt.Errorf("sweep generation: %w", err)
	}
	if gen != w.mem.gen {
		w.mem.forget()
		w.mem.gen = gen
	}
	w.genChecked = true
	return nil
}

// bodySequence places a body among its session's: seq.session names the sequence (a
// session's requests) for the prefix shortcut, "" none; exchange is the body's own exchange,
// and repeats what the proxy found it repeats of another's.
type bodySequence struct {
	session, exchange string
	repeats           Repeats
	// cuts are offsets where a chunk may end beside the content-defined cuts: the ends of a
	// request's messages. A session's next turn repeats the body up to a message end, so its
	// shared part then ends on a cut and only what is new is chunked, hashed and compressed
	// again, not the chunk around the end of the shared part (up to chunkMax bytes of text
	// whose rolling hash finds no cut, such as a tool's repetitive output).
	cuts []int
}

// put redacts and stores one part (0 request, 1 forwarded, 2 reply) of an exchange and
// returns what its exchange_bodies column holds, valid until the next put of the same part.
// raw is the body as received; put only reads it and keeps none of it (what it stores is
// copied).
func (w *bodyWriter) put(ctx context.Context, part int, seq bodySequence, raw []byte, redactor *Redactor) ([]byte, error) {
	red := redactor.now()
	if len(raw) < minChunked {
		col, err := compress(w.cols[part], red.redact(raw))
		w.cols[part] = col
		return col, err
	}
	if err := w.checkGeneration(ctx); err != nil {
		return nil, err
	}
	key := sessionKeyOf(part, seq)
	var prev *lastBody
	if key.session != "" {
		if prev = w.sessions[key]; prev == nil {
			prev = w.mem.sessions[key]
		}
	}
	body, last, _ := w.mem.cutChunks(prev, seq, raw, red)
	chunks := last.chunks
	for i := range chunks {
		c := &chunks[i]
		if c.id != 0 {
			continue // reused from the previous body, its row known
		}
		// A new chunk, or one the previous body reused from a digest whose row is learnt only
		// when its batch is written: found by hash, inserted from the bytes here if missing.
		id, err := w.chunkID(ctx, c.hash, body[chunkStart(chunks, i):c.end], nil, 0)
		if err != nil {
			return nil, err
		}
		c.id = id
	}
	if key.session != "" {
		if _, ok := w.sessions[key]; !ok {
			w.order = append(w.order, key)
		}
		w.sessions[key] = last
	}
	w.cols[part] = appendChunkList(w.cols[part][:0], len(body), chunks)
	return w.cols[part], nil
}

// sessionKey names the sequence a part's body belongs to in bodyMemory.sessions; the zero
// key (no session) none. A struct, not a formatted string: it is built for every large body.
type sessionKey struct {
	part    int
	session string
}

func sessionKeyOf(part int, seq bodySequence) sessionKey {
	if seq.session == "" {
		return sessionKey{}
	}
	return sessionKey{part: part, session: seq.session}
}

// chunkStart is where chunk i of a body starts.
func chunkStart(chunks []chunkRef, i int) int {
	if i == 0 {
		return 0
	}
	return chunks[i-1].end
}

// appendChunkList appends a chunked column: the format byte, the body's length, the chunk
// count and the chunks' ids.
func appendChunkList(col []byte, size int, chunks []chunkRef) []byte {
	col = binary.AppendUvarint(append(col, bodyChunked), uint64(size))
	col = binary.AppendUvarint(col, uint64(len(chunks)))
	for _, c := range chunks {
		col = binary.AppendUvarint(col, uint64(c.id))
	}
	return col
}

// cutChunks redacts raw and cuts it into chunks, the ones it shares with prev (the session's
// previous body, nil when none) taken from it: it returns the redacted body, what to remember
// of it for the session's next body (its chunks with their ids where prev knew them) and how
// many of its last chunks are new (cut here; their ids not known). It reads no database.
func (m *bodyMemory) cutChunks(prev *lastBody, seq bodySequence, raw []byte, red redaction) (body []byte, last *lastBody, fresh int) {
	body, clean, same := m.redactNew(prev, raw, red, seq.repeats)
	chunks := make([]chunkRef, 0, len(body)/(chunkMin+1<<chunkBits)+2)
	start := 0
	if prev != nil {
		// Chunks of the previous body that end within the shared prefix are this body's
		// chunks too: the cut points depend only on the bytes from the chunk's start.
		for _, c := range prev.chunks {
			if c.end > same {
				break
			}
			chunks = append(chunks, c)
			start = c.end
		}
	}
	reused := len(chunks)
	cuts := seq.cuts
	if !clean {
		cuts = nil // masking moved the offsets
	}
	for start < len(body) {
		end := start + nextCut(body[start:])
		for len(cuts) > 0 && cuts[0] < start+chunkMin {
			cuts = cuts[1:]
		}
		if len(cuts) > 0 && cuts[0] < end {
			end = cuts[0]
		}
		m.chunked += int64(end - start)
		h := sha256.Sum256(body[start:end])
		chunks = append(chunks, chunkRef{end: end, hash: chunkHash(h[:16])})
		start = end
	}
	last = &lastBody{
		exchange: seq.exchange, size: len(body), blocks: m.blockHashes(body, prev, same),
		chunks: chunks, clean: clean, known: red.known,
	}
	return body, last, len(chunks) - reused
}

// chunkID returns the row of a chunk, inserting it when it is new: raw is its bytes (compressed
// here if needed), or stored its stored form already compressed and size its raw length; with
// neither, a chunk not found is errChunkGone.
func (w *bodyWriter) chunkID(ctx context.Context, h chunkHash, raw, stored []byte, size int) (int64, error) {
	if id, ok := w.learnt[h]; ok {
		return id, nil
	}
	if id, ok := w.mem.known[h]; ok {
		return id, nil
	}
	var id int64
	err := w.lookup.QueryRowContext(ctx, h[:]).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		switch {
		case stored != nil:
		case raw != nil:
			size = len(raw)
			data, cerr := compress(w.chunk, raw)
			if cerr != nil {
				return 0, fmt.Errorf("compress chunk: %w", cerr)
			}
			w.chunk, stored = data, data
		default:
			return 0, errChunkGone
		}
		err = w.insert.QueryRowContext(ctx, h[:], size, stored).Scan(&id)
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

// redactNew is the redaction of raw, scanning only what raw does not share with the previous
// body of its session when that one had nothing to mask — redaction was the writer's largest
// cost, and it was spent on the same bytes again each turn. clean reports that nothing was
// masked (the result is raw itself); same how many leading bytes of the result are the
// previous body's (0 without one).
//
// Where the scan starts: a secret must not survive because it spans the start, or sits partly
// in the shared part (a key whose first bytes the previous body ended with). The previous body
// held no secret, so none lies wholly in the shared part; one that reaches into the new part
// starts at most the rules' reach (leaks.Rules.Reach: how far from a secret the bytes that
// decide it lie, a few kilobytes) before its end. The scan therefore starts that far back, and
// then after a byte none of redact.go's patterns contains ('{', '}', '[', ']', ','), so no
// pattern spans the start and redacting the two sides apart equals redacting the whole; and
// in that stretch the rules only try the keywords whose reach gets past the shared part
// (leaks.Rules.FindFrom: trying them all made a turn's redaction 3x dearer);
// TestRedactSplitAtStructuralBytes and TestRedactNewFindsSecretsAcrossTheSharedPart keep that
// true as redact.go and the rules evolve.
//
// The known secrets (store/redact.go's Redactor) are masked the same way: the shortcut is only
// taken when the previous body was scanned with the same set, and known values (API keys and
// their base64 and URL-encoded forms) hold none of those bytes either.
//
// What raw repeats of the previous body is what the proxy found (repeats) when it compared
// them — then no byte of the shared part before the scan's start is read here — and otherwise
// what their block hashes tell.
func (m *bodyMemory) redactNew(prev *lastBody, raw []byte, red redaction, repeats Repeats) (body []byte, clean bool, same int) {
	if prev == nil || !prev.clean || prev.known != red.known {
		body = red.redact(raw)
		clean = len(body) == len(raw) && (len(body) == 0 || &body[0] == &raw[0])
		if prev != nil {
			same = m.sharedPrefix(prev, body)
		}
		return body, clean, same
	}
	if repeats.Exchange != "" && repeats.Exchange == prev.exchange && repeats.Bytes > 0 {
		same = min(repeats.Bytes, prev.size, len(raw))
		m.repeatsTaken++
	} else {
		same = m.sharedPrefix(prev, raw)
	}
	cut := scanStart(raw, same, red.leaks)
	tail := raw[cut:]
	r := red.redactFrom(tail, same-cut)
	if len(r) == len(tail) && (len(r) == 0 || &r[0] == &tail[0]) {
		return raw, true, same
	}
	// What the redacted body shares with the previous one ends at the cut at least.
	return append(append(make([]byte, 0, cut+len(r)), raw[:cut]...), r...), false, cut
}

// scanStart is where redactNew starts scanning a body whose first same bytes are a clean
// body's: the rules' reach before same, then after a structural byte.
func scanStart(raw []byte, same int, rules *leaks.Rules) int {
	if rules != nil {
		same = max(0, same-rules.Reach())
	}
	return bytes.LastIndexAny(raw[:same], "{}[],") + 1
}

// chunkList decodes a chunked column (after its format byte): the body's length and its
// chunk ids in order.
func chunkList(col []byte) (size uint64, ids []int64, err error) {
	size, k := binary.Uvarint(col)
	if k <= 0 {
		return 0, nil, errors.New("bad chunk list")
	}
	col = col[k:]
	count, k := binary.Uvarint(col)
	if k <= 0 || count > uint64(len(col)) {
		return 0, nil, errors.New("bad chunk list")
	}
	col = col[k:]
	ids = make([]int64, 0, count)
	for range count {
		id, k := binary.Uvarint(col)
		if k <= 0 {
			return 0, nil, errors.New("bad chunk list")
		}
		ids, col = append(ids, int64(id)), col[k:]
	}
	return size, ids, nil
}

// readChunked reassembles a body stored as chunks and checks its length.
func readChunked(ctx context.Context, q queryer, col []byte) (string, error) {
	size, ids, err := chunkList(col)
	if err != nil || size > maxInflate {
		return "", fmt.Errorf("read body: %v (%d bytes)", err, size)
	}
	data := make(map[int64][]byte, len(ids))
	rows, err := q.QueryContext(ctx, `SELECT id, data FROM body_chunks WHERE id IN (SELECT value FROM json_each(?))`, idsJSON(ids))
	if err != nil {
		return "", fmt.Errorf("read body: %w", err)
	}
	defer rows.Close() //nolint:errcheck // read-only
	for rows.Next() {
		var id int64
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return "", fmt.Errorf("read body: %w", err)
		}
		data[id] = b
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("read body: %w", err)
	}
	out := make([]byte, 0, size)
	for _, id := range ids {
		b, ok := data[id]
		if !ok {
			return "", fmt.Errorf("read body: chunk %d is missing", id)
		}
		if out, err = decompressAppend(out, b); err != nil {
			return "", err
		}
	}
	if uint64(len(out)) != size {
		return "", fmt.Errorf("read body: %d bytes; stored as %d", len(out), size)
	}
	return string(out), nil
}

func idsJSON(ids []int64) string {
	b := make([]byte, 0, 8*len(ids)+2)
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}

// sweepChunks deletes the chunks no stored body lists any more and returns how many. Mark
// and sweep run in one write transaction, so no batch can add a reference in between; a sweep
// that deleted chunks moves the generation, so writers forget the ids they remembered.
func (st *Store) sweepChunks(ctx context.Context) (int64, error) {
	tx, err := st.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("sweep chunks: %w", err)
	}
	defer st.rollback(tx)
	live, err := listedChunks(ctx, tx)
	if err != nil {
		return 0, fmt.Errorf("sweep chunks: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM body_chunks`)
	if err != nil {
		return 0, fmt.Errorf("sweep chunks: %w", err)
	}
	var dead []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close() //nolint:errcheck
			return 0, fmt.Errorf("sweep chunks: %w", err)
		}
		if _, ok := live[id]; !ok {
			dead = append(dead, id)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, fmt.Errorf("sweep chunks: %w", err)
	}
	if len(dead) == 0 {
		return 0, nil
	}
	for batch := range slices.Chunk(dead, retentionChunk) {
		if _, err := tx.ExecContext(ctx, `DELETE FROM body_chunks WHERE id IN (SELECT value FROM json_each(?))`, idsJSON(batch)); err != nil {
			return 0, fmt.Errorf("sweep chunks: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE body_sweep SET gen = gen + 1`); err != nil {
		return 0, fmt.Errorf("sweep chunks: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("sweep chunks: %w", err)
	}
	return int64(len(dead)), nil
}

// listedChunks returns the ids every stored chunk list names.
func listedChunks(ctx context.Context, q queryer) (map[int64]struct{}, error) {
	rows, err := q.QueryContext(ctx, `SELECT request, forwarded, reply FROM exchange_bodies`)
	if err != nil {
		return nil, err
	}
	defer rows.Close() //nolint:errcheck // read-only
	live := map[int64]struct{}{}
	for rows.Next() {
		var cols [3][]byte
		if err := rows.Scan(&cols[0], &cols[1], &cols[2]); err != nil {
			return nil, err
		}
		for _, col := range cols {
			if len(col) == 0 || col[0] != bodyChunked {
				continue
			}
			_, ids, err := chunkList(col[1:])
			if err != nil {
				return nil, err // never sweep on a list we cannot read
			}
			for _, id := range ids {
				live[id] = struct{}{}
			}
		}
	}
	return live, rows.Err()
}
