package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// writeLog is a connection that keeps every Write it is given, as the upstream's side of
// the socket would see the calls.
type writeLog struct {
	net.Conn
	mu     sync.Mutex
	writes [][]byte // the slices handed to Write, not copies
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.writes = append(w.writes, p)
	w.mu.Unlock()
	if w.Conn == nil {
		return len(p), nil
	}
	return w.Conn.Write(p)
}

func (w *writeLog) sizes() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []int
	for _, p := range w.writes {
		out = append(out, len(p))
	}
	return out
}

func TestDirectConnWritesAPooledBodyFromItsBuffer(t *testing.T) {
	var pool bodyPool
	body := pool.get(300 << 10)
	for i := range body.buf {
		body.buf[i] = byte(i % 251)
	}
	r := body.reader()
	head := make([]byte, 1000) // net/http may read some through its own buffer first
	if _, err := io.ReadFull(r, head); err != nil {
		t.Fatal(err)
	}
	log := &writeLog{}
	lr := &io.LimitedReader{R: r, N: int64(len(body.buf)) - 1000 - 7} // the limit holds
	n, err := directConn{log}.ReadFrom(lr)
	if err != nil || n != int64(len(body.buf))-1007 || lr.N != 0 {
		t.Fatalf("wrote %d (left %d), %v", n, lr.N, err)
	}
	if len(log.writes) != 1 || &log.writes[0][0] != &body.buf[1000] {
		t.Fatalf("writes %v: want one, straight from the buffer at offset 1000", log.sizes())
	}
	rest, _ := io.ReadAll(r)
	if !bytes.Equal(rest, body.buf[len(body.buf)-7:]) {
		t.Fatalf("the reader did not move past what was written: %d bytes left", len(rest))
	}
	r.Close()
	body.release()
}

// arrivingBody is a pooled buffer of n bytes filling as a client's body arrives, and a reader
// of it, as a turn sent early has. done closes the reader and lets the buffer go.
func arrivingBody(n int) (src *requestBody, g *growingBody, r io.ReadCloser, done func()) {
	var pool bodyPool
	src = pool.get(n)
	g = newGrowingBody(src)
	r = g.reader()
	return src, g, r, func() { r.Close(); src.release() }
}

func TestDirectConnWritesAnArrivingBodyAsItArrives(t *testing.T) {
	src, g, r, release := arrivingBody(10_000)
	defer release()
	log := &writeLog{}
	done := make(chan error, 1)
	var n int64
	go func() {
		var err error
		n, err = directConn{log}.ReadFrom(&io.LimitedReader{R: r, N: int64(len(src.buf))})
		done <- err
	}()
	waitWrites := func(want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for len(log.sizes()) < want {
			if time.Now().After(deadline) {
				t.Fatalf("writes %v: want %d", log.sizes(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	copy(src.buf, strings.Repeat("a", 4000))
	g.publish(4000)
	waitWrites(1)
	copy(src.buf[4000:], strings.Repeat("b", 6000))
	g.publish(10_000)
	waitWrites(2) // all but the held-back last byte
	if got := log.sizes(); got[1] != 5999 {
		t.Fatalf("writes %v: the last byte went before the send was decided", got)
	}
	g.release()
	if err := <-done; err != nil || n != 10_000 {
		t.Fatalf("wrote %d, %v", n, err)
	}
	if got := log.sizes(); len(got) != 3 || &log.writes[0][0] != &src.buf[0] || &log.writes[2][0] != &src.buf[9999] {
		t.Fatalf("writes %v: want the three spans, straight from the buffer", got)
	}
}

func TestDirectConnEndsAnAbandonedBodyWithItsError(t *testing.T) {
	_, g, r, release := arrivingBody(5000)
	defer release()
	g.publish(100)
	g.fail(errEarlyAbandoned)
	n, err := directConn{&writeLog{}}.ReadFrom(&io.LimitedReader{R: r, N: 5000})
	if !errors.Is(err, errEarlyAbandoned) || n > 100 {
		t.Fatalf("wrote %d, %v: want at most what arrived, then the abandon", n, err)
	}
}

func TestDirectConnCopiesOtherBodies(t *testing.T) {
	log := &writeLog{}
	n, err := directConn{log}.ReadFrom(strings.NewReader("hello, upstream"))
	if err != nil || n != 15 || string(bytes.Join(log.writes, nil)) != "hello, upstream" {
		t.Fatalf("wrote %d, %v: %q", n, err, bytes.Join(log.writes, nil))
	}
}

// Through net/http's own transport, as the proxy sends: a large body reaches the connection
// in one write from the pool's buffer, and a small one in the same write as its headers.
func TestUpstreamBodiesGoOutInWholeWrites(t *testing.T) {
	var got []int
	var mu sync.Mutex
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, len(b))
		mu.Unlock()
		w.Write([]byte("ok")) //nolint:errcheck // the client checks
	}))
	defer up.Close()
	var logs []*writeLog
	tr := newTransport()
	tr.Proxy = nil
	tr.DialContext = dialDirect(func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		l := &writeLog{Conn: c}
		logs = append(logs, l)
		return l, nil
	})
	defer tr.CloseIdleConnections()
	var pool bodyPool
	send := func(size int) *writeLog {
		t.Helper()
		body := pool.get(size)
		for i := range body.buf {
			body.buf[i] = 'x'
		}
		defer body.release()
		in := httptest.NewRequest(http.MethodPost, "/v1/messages", nil)
		out, err := http.NewRequest(http.MethodPost, up.URL+"/v1/messages", nil)
		if err != nil {
			t.Fatal(err)
		}
		out.Header = in.Header
		attachBody(out, body)
		tr.DisableKeepAlives = true // a connection, and so a log, per request
		resp, err := tr.RoundTrip(out)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body) //nolint:errcheck // drained to reuse nothing
		resp.Body.Close()
		return logs[len(logs)-1]
	}
	large := send(800 << 10)
	if sizes := large.sizes(); !containsAtLeast(sizes, 800<<10) {
		t.Fatalf("an 800 KB body went out in writes of %v bytes: want it in one", sizes)
	}
	small := send(1000)
	if sizes := small.sizes(); len(sizes) != 1 || sizes[0] < 1000 {
		t.Fatalf("a 1 KB request went out in writes of %v bytes: want headers and body in one", sizes)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != 800<<10 || got[1] != 1000 {
		t.Fatalf("upstream read bodies of %v bytes", got)
	}
}

func containsAtLeast(sizes []int, n int) bool {
	for _, s := range sizes {
		if s >= n {
			return true
		}
	}
	return false
}
