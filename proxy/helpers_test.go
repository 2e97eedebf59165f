package proxy

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
	"longhaul/proxy/sse"
)

// recorder is an Observer that keeps every exchange for assertions.
type recorder struct {
	mu       sync.Mutex
	started  []Exchange
	finished []Exchange
	done     chan struct{}
}

func newRecorder() *recorder { return &recorder{done: make(chan struct{}, 100)} }

func (r *recorder) Observe(ex Exchange) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ex.State == ExchangeStarted {
		r.started = append(r.started, ex)
		return
	}
	r.finished = append(r.finished, ex)
	select { // Observe must never block, in tests too
	case r.done <- struct{}{}:
	default:
	}
}

// last waits for the next finished exchange.
func (r *recorder) last(tb testing.TB) Exchange {
	tb.Helper()
	select {
	case <-r.done:
	case <-time.After(waitLimit):
		tb.Fatal("no exchange finished (hang guard)")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.finished[len(r.finished)-1]
}

// fixture is the two-server setup: a scripted upstream and the proxy in front.
type fixture struct {
	up    *proxytest.Upstream
	srv   *Server
	front *httptest.Server
	obs   *recorder
}

func newFixture(tb testing.TB, cfg Config, accounts ...pool.Account) *fixture {
	tb.Helper()
	up := proxytest.NewUpstream()
	obs := newRecorder()
	srv, err := New(cfg, Options{Observer: obs})
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	if accounts == nil {
		accounts = []pool.Account{{ID: 1, Label: "primary", BaseURL: up.URL, Secret: "sk-ant-upstream-secret-0001", Enabled: true}}
	}
	srv.SetAccounts(accounts)
	front := httptest.NewServer(srv.Handler())
	tb.Cleanup(func() {
		up.Release()
		front.Close()
		up.Close()
	})
	return &fixture{up: up, srv: srv, front: front, obs: obs}
}

func (f *fixture) post(tb testing.TB, path, body string, header ...string) *http.Response {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, f.front.URL+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.front.Client().Do(req)
	if err != nil {
		tb.Fatalf("POST %s: %v", path, err)
	}
	return resp
}

func readAll(tb testing.TB, r io.Reader) string {
	tb.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		tb.Fatalf("read body: %v", err)
	}
	return string(b)
}

// nextEvent reads one SSE event or fails the test after the timeout.
func nextEvent(tb testing.TB, rd *sse.Reader, timeout time.Duration) sse.Event {
	tb.Helper()
	type result struct {
		ev  sse.Event
		err error
	}
	ch := make(chan result, 1)
	go func() {
		ev, err := rd.Next()
		ch <- result{ev, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			tb.Fatalf("reading event: %v", r.err)
		}
		return r.ev
	case <-time.After(timeout):
		tb.Fatalf("no event within %v", timeout)
		return sse.Event{}
	}
}

// waitLimit bounds every wait in these tests: a deadline for a hung test on a busy machine,
// never a measure (each wait ends as soon as its condition holds).
const waitLimit = 30 * time.Second

// waitFor polls cond until it holds, and fails the test with what when it has not within
// waitLimit.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not true within %v", what, waitLimit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitNoGoroutine fails, showing every stack, if a goroutine running fn is still alive after
// waitLimit.
func waitNoGoroutine(tb testing.TB, fn string) {
	tb.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, fn) {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("goroutine in %s still running:\n%s", fn, stacks)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func streamRequest(model string) string {
	return `{"model":"` + model + `","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
}

// openStream starts a streaming request and returns its event reader.
func openStream(tb testing.TB, ctx context.Context, url string) (*http.Response, *sse.Reader) {
	tb.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/messages", strings.NewReader(streamRequest("claude-sonnet-4-5")))
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("open stream: %v", err)
	}
	return resp, sse.NewReader(bufio.NewReader(resp.Body), 0)
}
