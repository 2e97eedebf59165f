package door

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"longhaul/app"
	"longhaul/app/internal/wait"
	"longhaul/app/recorder"
	"longhaul/proxy"
	"longhaul/proxy/proxytest"
	"longhaul/store"
)

// fixture is the app as main wires it, behind its door: a scripted upstream and the real
// proxy in front of it, observed by the recorder, the App running, a real SQLite file.
type fixture struct {
	st    *store.Store
	srv   *proxy.Server
	app   *app.App
	up    *proxytest.Upstream
	front *httptest.Server // the proxy's API
	door  *httptest.Server // Door.Handler
}

// newFixture builds the fixture; configure, if given, adjusts the app's Deps first.
func newFixture(t *testing.T, opts recorder.Options, configure ...func(*app.Deps)) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{}
	var err error
	if f.st, err = store.Open(ctx, filepath.Join(t.TempDir(), "longhaul.db")); err != nil {
		t.Fatal(err)
	}
	f.up = proxytest.NewUpstream()
	rec := recorder.New(f.st, opts)
	if f.srv, err = proxy.New(proxy.Config{}, proxy.Options{Observer: rec}); err != nil {
		t.Fatal(err)
	}
	deps := app.Deps{Store: f.st, Proxy: f.srv, Recorder: rec, Version: "test", Overrides: app.Overrides{Port: proxytest.FreePort(t)}}
	for _, c := range configure {
		c(&deps)
	}
	f.app = app.New(deps)
	if err := f.app.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	f.front = httptest.NewServer(f.srv.Handler())
	f.door = httptest.NewServer(New(f.app, fstest.MapFS{"index.html": {Data: []byte("<h1>Longhaul</h1>")}}, Options{Guard: f.srv.Guard()}).Handler(true))
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { f.app.Run(runCtx); close(done) }()
	t.Cleanup(func() {
		f.up.Release()
		f.front.Close()
		f.door.Close()
		cancel()
		<-done
		if err := f.app.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		f.up.Close()
		f.st.Close()
	})
	return f
}

// do sends a request to the door and decodes a JSON object reply.
func (f *fixture) do(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, f.door.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json") // every UI write is JSON, as the UI sends it
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s %s: body %q is not a JSON object", method, path, raw)
	}
	return resp.StatusCode, v
}

func (f *fixture) getJSON(t *testing.T, path string, v any) int {
	t.Helper()
	resp, err := http.Get(f.door.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil && resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: decode: %v", path, err)
		}
	}
	return resp.StatusCode
}

// post sends a Messages request through the proxy and returns its reply.
func (f *fixture) post(t *testing.T, body string) *http.Response {
	t.Helper()
	resp, err := f.front.Client().Post(f.front.URL+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatalf("read reply: %v", err)
	}
	resp.Body.Close()
	return resp
}

// waitRecorded waits until the exchange is in the database, finished.
func (f *fixture) waitRecorded(t *testing.T, id string) {
	t.Helper()
	wait.Until(t, "exchange "+id+" recorded as finished", func() bool {
		e, err := f.st.Exchange(context.Background(), id)
		return err == nil && e.State == "finished"
	})
}

func messagesBody(stream bool, session string) string {
	s := "false"
	if stream {
		s = "true"
	}
	return `{"model":"claude-sonnet-4-5","max_tokens":64,"stream":` + s + `,"metadata":{"user_id":"user_x_account_y_session_` + session + `"},"messages":[{"role":"user","content":"hi"}]}`
}
