package proxy

import (
	"context"
	"io"
	"net"
)

// directConn is a connection to an upstream that writes a request body straight from the
// proxy's buffer. net/http hands a request body to its connection inside an io.LimitedReader,
// which hides the buffer, so the connection copied it through a 32 KiB buffer of its own
// before each write: an 800 KB body cost a second copy and 25 write calls where one write
// does (docs/performance.md, "Fifth pass"). Over TLS tls.Conn wraps this connection and
// encrypts from a buffer of its own, so there the body arrives here already copied, as before.
type directConn struct{ net.Conn }

// spanWriter is a request body that writes up to limit of its bytes to w without copying
// them first: the proxy's own readers (bodyReader, growingReader).
type spanWriter interface {
	writeSpans(w io.Writer, limit int64) (int64, error)
}

// ReadFrom is what net/http's transport calls to send a request body (through
// persistConnWriter and io.Copy): the proxy's bodies are written from their buffer, anything
// else as the connection would have.
func (c directConn) ReadFrom(r io.Reader) (int64, error) {
	if lr, ok := r.(*io.LimitedReader); ok {
		if sw, ok := lr.R.(spanWriter); ok {
			n, err := sw.writeSpans(c.Conn, lr.N)
			lr.N -= n
			return n, err
		}
	}
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// dialDirect wraps dial's connections in directConn.
func dialDirect(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return directConn{c}, nil
	}
}
