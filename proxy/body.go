package proxy

import (
	"bytes"
	"io"
	"math/bits"
	"sync"
	"sync/atomic"
)

// bodyPool recycles request-body buffers by power-of-two size class: a fresh
// 800 KB buffer per request costs more in zeroing and GC than forwarding it.
type bodyPool struct {
	classes [28]sync.Pool // up to 128 MiB
}

const minBodyClass = 12 // 4 KiB

func (p *bodyPool) get(n int) *requestBody {
	c := max(bits.Len(uint(n-1)), minBodyClass)
	b := &requestBody{pool: p, class: c}
	if c >= len(p.classes) {
		b.buf = make([]byte, n)
	} else if v, ok := p.classes[c].Get().(*[]byte); ok {
		b.buf = (*v)[:n]
	} else {
		b.buf = make([]byte, n, 1<<c)
	}
	b.refs.Store(1)
	return b
}

// requestBody is a pooled buffer shared by the handler and every outbound
// request built from it. It returns to the pool when the handler has let go
// and the Transport has closed every reader (which it may do after RoundTrip
// returns), so no reader ever sees a recycled buffer.
type requestBody struct {
	buf   []byte
	refs  atomic.Int32
	pool  *bodyPool
	class int
	once  sync.Once // the handler's own reference
}

// reader returns a new reader over the body that holds a reference until closed.
func (b *requestBody) reader() io.ReadCloser {
	b.refs.Add(1)
	return &bodyReader{Reader: bytes.NewReader(b.buf), buf: b.buf, body: b}
}

// retain adds a reference, dropped with unref.
func (b *requestBody) retain() { b.refs.Add(1) }

// release drops the handler's reference; safe to call more than once.
func (b *requestBody) release() { b.once.Do(b.unref) }

// staticBody wraps a buffer that is not pooled (a rewritten body).
func staticBody(buf []byte) *requestBody {
	b := &requestBody{buf: buf}
	b.refs.Store(1)
	return b
}

func (b *requestBody) unref() {
	if b.refs.Add(-1) == 0 && b.pool != nil && b.class < len(b.pool.classes) {
		buf := b.buf[:0]
		b.buf = nil
		b.pool.classes[b.class].Put(&buf)
	}
}

type bodyReader struct {
	*bytes.Reader
	buf  []byte // what Reader reads, for writeSpans
	body *requestBody
	once sync.Once
}

// writeSpans writes up to limit of the bytes not yet read straight from the buffer
// (directConn).
func (r *bodyReader) writeSpans(w io.Writer, limit int64) (int64, error) {
	off := len(r.buf) - r.Len()
	n := int(min(limit, int64(r.Len())))
	if n <= 0 {
		return 0, nil
	}
	m, err := w.Write(r.buf[off : off+n])
	r.Seek(int64(m), io.SeekCurrent) //nolint:errcheck // within the buffer: cannot fail
	return int64(m), err
}

func (r *bodyReader) Close() error {
	r.once.Do(r.body.unref)
	return nil
}
