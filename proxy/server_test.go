package proxy

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

func TestNonLoopbackBindRequiresClientKey(t *testing.T) {
	for _, bind := range []string{"0.0.0.0", "192.168.1.20", "::"} {
		if _, err := New(Config{Bind: bind, Port: 8045}, Options{}); !errors.Is(err, ErrClientKeyRequired) {
			t.Errorf("New(bind %s, no key) error = %v; want ErrClientKeyRequired", bind, err)
		}
		if err := (Config{Bind: bind, Port: 8045, ClientKey: "k"}).Validate(); err != nil {
			t.Errorf("Validate(bind %s, with key) = %v; want nil", bind, err)
		}
	}
	// Reconfiguring a running loopback server onto a public bind without a key
	// is refused and the server keeps its old config.
	srv, err := New(Config{Port: 0}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Reconfigure(Config{Bind: "0.0.0.0"}); !errors.Is(err, ErrClientKeyRequired) {
		t.Errorf("Reconfigure(0.0.0.0, no key) = %v; want ErrClientKeyRequired", err)
	}
	if b := srv.Config().Bind; b != "127.0.0.1" {
		t.Errorf("bind after refused reconfigure = %q; want 127.0.0.1", b)
	}
}

func TestClientAuth(t *testing.T) {
	tests := []struct {
		name       string
		bind       string
		key        string
		header     []string
		host       string
		wantStatus int
	}{
		{name: "loopback without key needs nothing", wantStatus: 200},
		{name: "loopback without key ignores any client key", header: []string{"X-Api-Key", "whatever"}, wantStatus: 200},
		{name: "non-loopback Host refused without key (DNS rebinding)", host: "evil.example:8045", wantStatus: 403},
		{name: "key via x-api-key", key: "local-secret", header: []string{"X-Api-Key", "local-secret"}, wantStatus: 200},
		{name: "key via bearer", key: "local-secret", header: []string{"Authorization", "Bearer local-secret"}, wantStatus: 200},
		{name: "key with any Host on an open bind", bind: "0.0.0.0", key: "local-secret", header: []string{"X-Api-Key", "local-secret"}, host: "longhaul.lan:8045", wantStatus: 200},
		{name: "key with a non-loopback Host on a loopback bind (DNS rebinding)", key: "local-secret", header: []string{"X-Api-Key", "local-secret"}, host: "evil.example:8045", wantStatus: 403},
		{name: "wrong key", key: "local-secret", header: []string{"X-Api-Key", "local-secreT"}, wantStatus: 401},
		{name: "missing key", key: "local-secret", wantStatus: 401},
		{name: "prefix of key", key: "local-secret", header: []string{"Authorization", "Bearer local"}, wantStatus: 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Config{Bind: tt.bind, ClientKey: tt.key})
			f.up.SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", "ok")})
			req, _ := http.NewRequest(http.MethodPost, f.front.URL+"/v1/messages", strings.NewReader(`{"model":"m"}`))
			for i := 0; i+1 < len(tt.header); i += 2 {
				req.Header.Set(tt.header[i], tt.header[i+1])
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			resp, err := f.front.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, resp.Body)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d (%s); want %d", resp.StatusCode, body, tt.wantStatus)
			}
			if tt.wantStatus == 200 && f.up.LastRequest().Header.Get("X-Api-Key") != "sk-ant-upstream-secret-0001" {
				t.Error("upstream did not receive the account key")
			}
			if tt.wantStatus != 200 && len(f.up.Requests()) != 0 {
				t.Error("a refused request reached the upstream")
			}
		})
	}
	// Health checks need no key.
	f := newFixture(t, Config{ClientKey: "k"})
	if r, err := http.Get(f.front.URL + "/healthz"); err != nil || r.StatusCode != 200 {
		t.Errorf("healthz with key configured = %v %v; want 200", r.StatusCode, err)
	}
}

func dial(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		c.Close()
	}
	return err
}

func TestStopStartStopWithRequestInFlight(t *testing.T) {
	up := proxytest.NewUpstream()
	defer up.Close()
	port := proxytest.FreePort(t)
	srv, err := New(Config{Port: port}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetAccounts([]pool.Account{{ID: 1, BaseURL: up.URL, Secret: "sk-ant-0000000000000", Enabled: true}})
	msg := proxytest.TextMessage("", "an answer that is still streaming when the proxy is stopped")
	up.SetDefault(proxytest.Reply{Message: msg, StallAfter: 1})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	url := "http://" + addr

	for round := range 2 { // stop → start → stop, on the same port
		if err := srv.Start(); err != nil {
			t.Fatalf("round %d: Start: %v", round, err)
		}
		if !srv.Running() || srv.Addr() != addr {
			t.Fatalf("round %d: Running %t Addr %q; want true %q", round, srv.Running(), srv.Addr(), addr)
		}
		resp, rd := openStream(t, context.Background(), url)
		first := nextEvent(t, rd, waitLimit)

		stopped := make(chan error, 1)
		go func() { stopped <- srv.Stop(context.Background()) }()
		// The listener closes at once; the stream in flight goes on.
		waitFor(t, fmt.Sprintf("round %d: listener closed after Stop", round), func() bool { return dial(addr) != nil })
		select {
		case err := <-stopped:
			t.Fatalf("round %d: Stop returned (%v) while a request was in flight", round, err)
		case <-time.After(50 * time.Millisecond):
		}
		up.Release()
		got := string(first.Raw) + readAll(t, resp.Body)
		if got != string(msg.SSE()) {
			t.Errorf("round %d: in-flight stream did not finish intact: %q", round, got)
		}
		select {
		case err := <-stopped:
			if err != nil {
				t.Errorf("round %d: Stop = %v", round, err)
			}
		case <-time.After(waitLimit):
			t.Fatalf("round %d: Stop did not return after the stream finished", round)
		}
		if srv.Running() {
			t.Errorf("round %d: Running after Stop", round)
		}
		up.SetDefault(proxytest.Reply{Message: msg, StallAfter: 1}) // re-arm the stall
	}
	if err := srv.Stop(context.Background()); err != nil {
		t.Errorf("Stop on a stopped server = %v; want nil", err)
	}
}

func TestReconfigureRebindsAndInFlightKeepsOldListener(t *testing.T) {
	up := proxytest.NewUpstream()
	defer up.Close()
	oldPort, newPort := proxytest.FreePort(t), proxytest.FreePort(t)
	srv, err := New(Config{Port: oldPort, MaxBodyBytes: 1 << 20}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(context.Background())
	srv.SetAccounts([]pool.Account{{ID: 1, BaseURL: up.URL, Secret: "sk-ant-0000000000000", Enabled: true}})
	msg := proxytest.TextMessage("", "long")
	up.SetDefault(proxytest.Reply{Message: msg, StallAfter: 1})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	oldURL := "http://127.0.0.1:" + strconv.Itoa(oldPort)
	resp, rd := openStream(t, context.Background(), oldURL)
	first := nextEvent(t, rd, waitLimit)

	if err := srv.Reconfigure(Config{Port: newPort, MaxBodyBytes: 20}); err != nil {
		t.Fatalf("Reconfigure: %v", err)
	}
	if want := "127.0.0.1:" + strconv.Itoa(newPort); srv.Addr() != want {
		t.Errorf("Addr after rebind = %q; want %q", srv.Addr(), want)
	}
	// New requests see the new config (a 20-byte limit) on the new port.
	r, err := http.Post("http://"+srv.Addr()+"/v1/messages", "application/json", strings.NewReader(streamRequest("m")))
	if err != nil {
		t.Fatalf("request on the new port: %v", err)
	}
	readAll(t, r.Body)
	if r.StatusCode != 413 {
		t.Errorf("new request status = %d; want 413 under the new limit", r.StatusCode)
	}
	// The old stream, started under the old config, completes.
	up.Release()
	if got := string(first.Raw) + readAll(t, resp.Body); got != string(msg.SSE()) {
		t.Errorf("in-flight stream broken by rebind: %q", got)
	}
	waitFor(t, "old listener closed after the rebind drained", func() bool { return dial("127.0.0.1:"+strconv.Itoa(oldPort)) != nil })
}

func TestStartOnBusyPortFailsClearly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv, err := New(Config{Port: ln.Addr().(*net.TCPAddr).Port}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err == nil || !strings.Contains(err.Error(), "listen on") {
		t.Errorf("Start on a busy port = %v; want a listen error", err)
	}
	if srv.Running() {
		t.Error("Running after a failed Start")
	}
}

// The app's UI rides on the proxy's port under /longhaul/, guarded like the API.
func TestUIOnTheProxyPort(t *testing.T) {
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ui:"+r.URL.Path)
	})
	get := func(t *testing.T, h http.Handler, host, path string, header ...string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "http://"+host+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	t.Run("loopback, no key", func(t *testing.T) {
		srv, err := New(Config{}, Options{UI: ui})
		if err != nil {
			t.Fatal(err)
		}
		h := srv.Handler()
		for path, want := range map[string]string{
			"/longhaul/":               "ui:/",
			"/longhaul/assets/app.js":  "ui:/assets/app.js",
			"/longhaul/v1/status":      "ui:/longhaul/v1/status",
			"/longhaul/v1/history?x=1": "ui:/longhaul/v1/history",
		} {
			if rec := get(t, h, "127.0.0.1:8045", path); rec.Code != http.StatusOK || rec.Body.String() != want {
				t.Errorf("GET %s = %d %q; want 200 %q", path, rec.Code, rec.Body.String(), want)
			}
		}
		if rec := get(t, h, "127.0.0.1:8045", "/longhaul"); rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "/longhaul/" {
			t.Errorf("GET /longhaul = %d %q; want a redirect to /longhaul/", rec.Code, rec.Header().Get("Location"))
		}
		if rec := get(t, h, "evil.example:8045", "/longhaul/v1/status"); rec.Code != http.StatusForbidden {
			t.Errorf("DNS-rebound Host: %d; want 403", rec.Code)
		}
	})
	t.Run("client key", func(t *testing.T) {
		srv, err := New(Config{Bind: "0.0.0.0", ClientKey: "local-secret"}, Options{UI: ui})
		if err != nil {
			t.Fatal(err)
		}
		h := srv.Handler()
		// The UI's files are the login page: they need no key; its API does.
		if rec := get(t, h, "192.168.1.5:8045", "/longhaul/"); rec.Code != http.StatusOK {
			t.Errorf("UI files without a key: %d; want 200 (the login page)", rec.Code)
		}
		if rec := get(t, h, "192.168.1.5:8045", "/longhaul/v1/status"); rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") != "" {
			t.Errorf("UI API without a key: %d %q; want 401 without a Basic-auth prompt", rec.Code, rec.Header().Get("WWW-Authenticate"))
		}
		for _, hdr := range [][]string{{"X-Api-Key", "local-secret"}, {"Authorization", "Bearer local-secret"}} {
			if rec := get(t, h, "192.168.1.5:8045", "/longhaul/v1/status", hdr...); rec.Code != http.StatusOK {
				t.Errorf("with %s: %d; want 200", hdr[0], rec.Code)
			}
		}
		basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("me:local-secret"))
		if rec := get(t, h, "192.168.1.5:8045", "/longhaul/v1/status", "Authorization", basic); rec.Code != http.StatusUnauthorized {
			t.Errorf("Basic auth: %d; want 401 (the login page replaced it)", rec.Code)
		}
	})
	t.Run("no UI configured", func(t *testing.T) {
		srv, err := New(Config{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rec := get(t, srv.Handler(), "127.0.0.1:8045", "/longhaul/"); rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), anthropic.NotFoundError) {
			t.Errorf("GET /longhaul/ without UI = %d %s; want the API's 404", rec.Code, rec.Body.String())
		}
	})
}

func TestExchangeIDsAreUniqueAndStartWithTheTime(t *testing.T) {
	seen := map[string]bool{}
	prev := ""
	for range 1000 {
		id := newExchangeID()
		if len(id) != 27 || !strings.HasPrefix(id, "lh_") || seen[id] {
			t.Fatalf("id %q: want lh_ and 24 hex digits, never repeated", id)
		}
		if id[:19] < prev[:min(len(prev), 19)] {
			t.Fatalf("id %q sorts before the earlier %q: its time part must not go back", id, prev)
		}
		seen[id], prev = true, id
	}
}

// NextRequest's channel is closed by the next API request and by nothing before it, so a
// caller showing the request count can sleep while there is no traffic; callers waiting
// together share it, and the one after is a new, open channel.
func TestNextRequestIsClosedByTheNextAPIRequest(t *testing.T) {
	f := newFixture(t, Config{})
	next, again := f.srv.NextRequest(), f.srv.NextRequest()
	if next != again {
		t.Error("two waiters got different channels; want one, shared")
	}
	if r, err := f.front.Client().Get(f.front.URL + "/healthz"); err != nil {
		t.Fatal(err)
	} else {
		r.Body.Close()
	}
	select {
	case <-next:
		t.Fatal("closed by /healthz, which is not an API request")
	default:
	}
	before := f.srv.Requests()
	resp := f.post(t, "/v1/messages", streamRequest("claude-sonnet-4-5"))
	io.Copy(io.Discard, resp.Body) //nolint:errcheck // the stream is not what is tested
	resp.Body.Close()
	select {
	case <-next:
	default:
		t.Fatal("not closed by an API request that was served")
	}
	if got := f.srv.Requests(); got != before+1 {
		t.Errorf("Requests() = %d; want %d", got, before+1)
	}
	select {
	case <-f.srv.NextRequest():
		t.Fatal("the next wait starts closed; want a new channel, open until the next request")
	default:
	}
}
