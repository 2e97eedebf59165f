package store

import (
	"context"
	"errors"
	"fmt"
	"unsafe"
)

// Digests (DigestRequest): a large request body made ready ahead of its batch, so the recorder
// can give the proxy's buffer back at once; the batch then only writes rows (putDigest).

// BodyDigest is a large request body made ready for the history ahead of its batch
// (Store.DigestRequest): redacted, cut into chunks against its session's previous body, its
// new chunks compressed. It holds no byte of the body it was made from, so the buffer the
// proxy lent can go back at once; the batch then only writes rows.
type BodyDigest struct {
	gen    int64 // body_sweep's generation the chunk ids were known under
	size   int
	chunks []digestChunk
	held   int // bytes of compressed chunks it holds
}

type digestChunk struct {
	hash chunkHash
	id   int64  // the chunk's row when known at the digest; 0: found by hash when written
	data []byte // its stored form when the digest cut it (it may be new); nil otherwise
	size int    // its raw length, with data
}

// Held is how many bytes the digest keeps in memory (its new chunks, compressed).
func (d *BodyDigest) Held() int { return d.held }

// DigestRequest digests e's request body if it is large enough to be stored as chunks, and then
// drops e's reference to it (e.Bodies.Request becomes ""; the digest goes to the batch). It
// reads no database: the chunks it cannot name are found by their hashes, or inserted, when the
// batch is written. The session's next body is cut against this one from now on, as the writer
// would after this one's batch.
func (st *Store) DigestRequest(e *Exchange) error {
	b := e.Bodies
	if b == nil || len(b.Request) < minChunked {
		return nil
	}
	st.bodies.mu.Lock()
	defer st.bodies.mu.Unlock()
	m := st.bodies
	seq := bodySequence{session: e.SessionID, exchange: e.ID, repeats: b.RequestRepeats, cuts: b.RequestMessageEnds}
	key := sessionKeyOf(0, seq)
	var prev *lastBody
	if key.session != "" {
		prev = m.sessions[key]
	}
	raw := unsafe.Slice(unsafe.StringData(b.Request), len(b.Request))
	body, last, fresh := m.cutChunks(prev, seq, raw, st.redactor.now())
	d := &BodyDigest{gen: m.gen, size: len(body), chunks: make([]digestChunk, len(last.chunks))}
	for i, c := range last.chunks {
		dc := digestChunk{hash: c.hash, id: c.id}
		if dc.id == 0 { // most chunks come from the previous body with their ids
			dc.id = m.known[c.hash]
		}
		if i >= len(last.chunks)-fresh && dc.id == 0 {
			data, err := compress(nil, body[chunkStart(last.chunks, i):c.end])
			if err != nil {
				return fmt.Errorf("digest request body: %w", err)
			}
			dc.data, dc.size = data, c.end-chunkStart(last.chunks, i)
			d.held += len(data)
		}
		d.chunks[i] = dc
	}
	if key.session != "" {
		m.remember(key, last)
	}
	b.Request, b.RequestDigest = "", d
	return nil
}

// putDigest writes a digested body's new chunks (if not stored yet) and returns its column, or
// lost when a chunk it reuses is gone (retention swept it between the digest and the batch):
// the body cannot be rebuilt, and the row is written without it.
func (w *bodyWriter) putDigest(ctx context.Context, part int, d *BodyDigest) (col []byte, lost bool, err error) {
	if err := w.checkGeneration(ctx); err != nil {
		return nil, false, err
	}
	trust := d.gen == w.mem.gen // ids learnt under another generation may name deleted rows
	chunks := make([]chunkRef, len(d.chunks))
	for i, c := range d.chunks {
		id := int64(0)
		if trust {
			id = c.id
		}
		if id == 0 {
			if id, err = w.chunkID(ctx, c.hash, nil, c.data, c.size); errors.Is(err, errChunkGone) {
				return nil, true, nil
			} else if err != nil {
				return nil, false, err
			}
		}
		chunks[i] = chunkRef{hash: c.hash, id: id}
	}
	w.cols[part] = appendChunkList(w.cols[part][:0], d.size, chunks)
	return w.cols[part], false, nil
}

// storeDigestChunks inserts the chunks a digest cut (those not stored yet) ahead of the batch's
// rows, so that a body of the batch that reuses one of them finds it whatever the order.
func (w *bodyWriter) storeDigestChunks(ctx context.Context, d *BodyDigest) error {
	if err := w.checkGeneration(ctx); err != nil {
		return err
	}
	for _, c := range d.chunks {
		if c.data == nil {
			continue
		}
		if _, err := w.chunkID(ctx, c.hash, nil, c.data, c.size); err != nil {
			return err
		}
	}
	return nil
}

// errChunkGone: a chunk named by its hash alone is not in body_chunks.
var errChunkGone = errors.New("body chunk gone")
