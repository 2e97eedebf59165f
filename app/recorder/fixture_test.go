package recorder

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"longhaul/app/internal/wait"
	"longhaul/proxy"
	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
	"longhaul/store"
)

// fixture is the recording path as main wires it: a scripted upstream, the real proxy in front
// of it observed by a running Recorder, and a real SQLite file.
type fixture struct {
	st    *store.Store
	path  string
	rec   *Recorder
	srv   *proxy.Server
	up    *proxytest.Upstream
	front *httptest.Server
}

const upstreamKey = "sk-ant-api03-UPSTREAMaccountKEY0000000000000000-wxyz"

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{path: filepath.Join(t.TempDir(), "longhaul.db")}
	var err error
	if f.st, err = store.Open(ctx, f.path); err != nil {
		t.Fatal(err)
	}
	f.up = proxytest.NewUpstream()
	f.rec = New(f.st, opts)
	def := store.DefaultSettings().History
	if f.srv, err = proxy.New(proxy.Config{CaptureBodies: def.StoreBodies, MaxCaptureBytes: def.MaxBodyBytes}, proxy.Options{Observer: f.rec}); err != nil {
		t.Fatal(err)
	}
	f.srv.SetAccounts([]pool.Account{{ID: 1, Label: "work", Kind: store.KindAnthropic, BaseURL: f.up.URL, Secret: upstreamKey, Enabled: true, Weight: 1}})
	f.front = httptest.NewServer(f.srv.Handler())
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { f.rec.Run(runCtx); close(done) }()
	t.Cleanup(func() {
		f.up.Release()
		f.front.Close()
		cancel()
		<-done
		if err := f.rec.Flush(context.Background()); err != nil {
			t.Errorf("Flush: %v", err)
		}
		f.up.Close()
		f.st.Close()
	})
	return f
}

func (f *fixture) post(t *testing.T, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.front.URL+"/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.front.Client().Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("read reply: %v", err)
	}
	return resp, string(b)
}

// waitRecorded waits until the exchange is in the database, finished.
func (f *fixture) waitRecorded(t *testing.T, id string) store.Exchange {
	t.Helper()
	var e store.Exchange
	wait.Until(t, "exchange "+id+" recorded as finished", func() bool {
		var err error
		e, err = f.st.Exchange(context.Background(), id)
		return err == nil && e.State == "finished"
	})
	return e
}

func messagesBody(stream bool, session string) string {
	s := "false"
	if stream {
		s = "true"
	}
	return `{"model":"claude-sonnet-4-5","max_tokens":64,"stream":` + s + `,"metadata":{"user_id":"user_x_account_y_session_` + session + `"},"messages":[{"role":"user","content":"hi"}]}`
}

// runRecorder runs a recorder on a fresh store until the test ends.
func runRecorder(t *testing.T, opts Options) (*Recorder, *store.Store) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "longhaul.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rec := New(st, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { rec.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return rec, st
}
