package proxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/proxytest"
)

// send sends one request to base+path with header pairs and returns the reply and its body.
func send(t *testing.T, method, url, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	return resp, readAll(t, resp.Body)
}

func isAnthropicError(body, typ string) bool {
	e, ok := anthropic.ParseError([]byte(body))
	return ok && e.Type == typ && e.Message != ""
}

func TestBrowserOriginsAndCORS(t *testing.T) {
	const allowed = "https://chat.example.com"
	f := newFixture(t, Config{AllowedOrigins: []string{allowed}})
	msg := streamRequest("claude-sonnet-4-5")

	resp, body := send(t, "POST", f.front.URL+"/v1/messages", msg, "Content-Type", "application/json", "Origin", allowed, "Sec-Fetch-Site", "cross-site")
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != allowed || !slices.Contains(resp.Header.Values("Vary"), "Origin") {
		t.Errorf("allowed origin: %d ACAO %q Vary %q; want 200 granted to %s", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), resp.Header.Values("Vary"), allowed)
	}
	if !strings.Contains(body, "message_stop") {
		t.Errorf("allowed origin got %q; want the stream", body)
	}

	resp, _ = send(t, "OPTIONS", f.front.URL+"/v1/messages", "", "Origin", allowed, "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "content-type,x-api-key,anthropic-version")
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != allowed ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		resp.Header.Get("Access-Control-Allow-Headers") != "content-type,x-api-key,anthropic-version" {
		t.Errorf("preflight from the allowed origin: %d %v; want 204 with the grant", resp.StatusCode, resp.Header)
	}

	for _, origin := range []string{"https://evil.example", "null", "https://chat.example.com.evil.example", "http://chat.example.com"} {
		before := len(f.up.Requests())
		resp, body := send(t, "OPTIONS", f.front.URL+"/v1/messages", "", "Origin", origin, "Access-Control-Request-Method", "POST")
		if resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" || !isAnthropicError(body, anthropic.PermissionError) {
			t.Errorf("preflight from %s: %d %s; want 403 permission_error without a grant", origin, resp.StatusCode, body)
		}
		resp, body = send(t, "POST", f.front.URL+"/v1/messages", msg, "Content-Type", "application/json", "Origin", origin)
		if resp.StatusCode != 403 || !isAnthropicError(body, anthropic.PermissionError) || len(f.up.Requests()) != before {
			t.Errorf("POST from %s: %d %s; want 403 permission_error, nothing upstream", origin, resp.StatusCode, body)
		}
	}

	// A page of the proxy's own origin, and a browser's own navigation, are not foreign pages.
	for _, h := range [][]string{{"Origin", f.front.URL}, {"Sec-Fetch-Site", "same-origin"}, {"Sec-Fetch-Site", "none"}} {
		if resp, body := send(t, "POST", f.front.URL+"/v1/messages", msg, "Content-Type", "application/json", h[0], h[1]); resp.StatusCode != 200 {
			t.Errorf("%s: %s = %d %s; want 200", h[0], h[1], resp.StatusCode, body)
		}
	}
	// JSON with parameters is JSON.
	if resp, body := send(t, "POST", f.front.URL+"/v1/messages", msg, "Content-Type", "application/json; charset=utf-8"); resp.StatusCode != 200 {
		t.Errorf("application/json; charset=utf-8 = %d %s; want 200", resp.StatusCode, body)
	}
	if resp, body := send(t, "POST", f.front.URL+"/v1/messages", msg, "Content-Type", "multipart/form-data; boundary=x"); resp.StatusCode != 415 || !isAnthropicError(body, anthropic.InvalidRequestError) {
		t.Errorf("multipart = %d %s; want 415 invalid_request_error", resp.StatusCode, body)
	}
}

func TestAllowedOriginStillNeedsTheKey(t *testing.T) {
	const allowed = "http://localhost:3000"
	f := newFixture(t, Config{ClientKey: "lh-key-0001", AllowedOrigins: []string{allowed}})
	resp, body := send(t, "POST", f.front.URL+"/v1/messages", streamRequest("m"), "Content-Type", "application/json", "Origin", allowed)
	if resp.StatusCode != 401 || !isAnthropicError(body, anthropic.AuthenticationError) || resp.Header.Get("Access-Control-Allow-Origin") != allowed {
		t.Errorf("allowed origin without key: %d %s ACAO %q; want a readable 401", resp.StatusCode, body, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	if resp, body := send(t, "POST", f.front.URL+"/v1/messages", streamRequest("m"), "Content-Type", "application/json", "Origin", allowed, "X-Api-Key", "lh-key-0001"); resp.StatusCode != 200 {
		t.Errorf("allowed origin with key: %d %s; want 200", resp.StatusCode, body)
	}
	if err := (Config{AllowedOrigins: []string{"chat.example.com"}}).Validate(); err == nil {
		t.Error("Validate accepted an allowed origin without a scheme")
	}
}

// uiStub stands for the door: it answers every path and counts the API calls that got in.
type uiStub struct{ api atomic.Int64 }

func (u *uiStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/longhaul/v1/") {
		u.api.Add(1)
	}
	io.WriteString(w, "ui:"+r.URL.Path) //nolint:errcheck
}

func TestBrowserLoginSession(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	var clock atomic.Pointer[time.Time]
	clock.Store(&now)
	ui := &uiStub{}
	srv, err := New(Config{ClientKey: "lh-browser-key"}, Options{UI: ui, Now: func() time.Time { return *clock.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(srv.Handler())
	defer front.Close()
	status := func(cookie string) int {
		t.Helper()
		var h []string
		if cookie != "" {
			h = []string{"Cookie", cookie}
		}
		resp, _ := send(t, "GET", front.URL+"/longhaul/v1/status", "", h...)
		return resp.StatusCode
	}
	login := func(body string, header ...string) (*http.Response, string) {
		t.Helper()
		return send(t, "POST", front.URL+LoginPath, body, append([]string{"Content-Type", "application/json"}, header...)...)
	}

	if got := status(""); got != 401 {
		t.Fatalf("status without a session = %d; want 401", got)
	}
	if resp, _ := send(t, "GET", front.URL+"/longhaul/", ""); resp.StatusCode != 200 {
		t.Errorf("the UI's page without a session = %d; want 200 (it is the login page)", resp.StatusCode)
	}
	resp, body := login(`{"key":"lh-browser-guess"}`)
	if resp.StatusCode != 401 || len(resp.Cookies()) != 0 || !isAnthropicError(body, anthropic.AuthenticationError) {
		t.Errorf("wrong key: %d %s cookies %v; want 401 and no cookie", resp.StatusCode, body, resp.Cookies())
	}
	if resp, _ := send(t, "POST", front.URL+LoginPath, `{"key":"lh-browser-key"}`, "Content-Type", "text/plain"); resp.StatusCode != 415 || len(resp.Cookies()) != 0 {
		t.Errorf("text/plain login = %d; want 415 and no cookie", resp.StatusCode)
	}
	if resp, _ := login(`{"key":"lh-browser-key"}`, "Origin", "https://evil.example"); resp.StatusCode != 403 || len(resp.Cookies()) != 0 {
		t.Errorf("cross-origin login = %d; want 403 and no cookie", resp.StatusCode)
	}
	if resp, _ := login(`{"key":`); resp.StatusCode != 400 {
		t.Errorf("malformed login body = %d; want 400", resp.StatusCode)
	}
	if resp, _ := send(t, "GET", front.URL+LoginPath, ""); resp.StatusCode != 405 {
		t.Errorf("GET login = %d; want 405", resp.StatusCode)
	}

	resp, _ = login(`{"key":"lh-browser-key"}`)
	cookies := resp.Cookies()
	if resp.StatusCode != 200 || len(cookies) != 1 {
		t.Fatalf("right key: %d cookies %v; want 200 and one cookie", resp.StatusCode, cookies)
	}
	c := cookies[0]
	frontPort := front.URL[strings.LastIndexByte(front.URL, ':')+1:]
	if c.Name != "longhaul_session_"+frontPort || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/longhaul/v1/" || c.MaxAge <= 0 || len(c.Value) < 32 ||
		strings.Contains(c.Value, "lh-browser-key") {
		t.Errorf("session cookie = %+v; want longhaul_session_%s, HttpOnly, SameSite=Strict, Path=/longhaul/v1/, bounded, random", c, frontPort)
	}
	session := c.Name + "=" + c.Value
	apiBefore := ui.api.Load()
	if got := status(session); got != 200 || ui.api.Load() != apiBefore+1 {
		t.Errorf("status with the session = %d; want 200", got)
	}
	if got := status(c.Name + "=" + strings.Repeat("0", 64)); got != 401 {
		t.Errorf("status with a made-up session = %d; want 401", got)
	}

	// The session ends: by logout, by the lifetime, by a new key.
	resp, _ = send(t, "POST", front.URL+LogoutPath, "", "Cookie", session, "Content-Type", "application/json")
	if resp.StatusCode != 200 || len(resp.Cookies()) != 1 || resp.Cookies()[0].MaxAge >= 0 {
		t.Errorf("logout: %d %v; want 200 and the cookie cleared", resp.StatusCode, resp.Cookies())
	}
	if got := status(session); got != 401 {
		t.Errorf("status after logout = %d; want 401", got)
	}
	resp, _ = login(`{"key":"lh-browser-key"}`)
	session = resp.Cookies()[0].Name + "=" + resp.Cookies()[0].Value
	later := now.Add(sessionLifetime)
	clock.Store(&later)
	if got := status(session); got != 401 {
		t.Errorf("status after the session's lifetime = %d; want 401", got)
	}
	clock.Store(&now)
	resp, _ = login(`{"key":"lh-browser-key"}`)
	session = resp.Cookies()[0].Name + "=" + resp.Cookies()[0].Value
	if err := srv.Reconfigure(Config{ClientKey: "lh-browser-key-2"}); err != nil {
		t.Fatal(err)
	}
	if got := status(session); got != 401 {
		t.Errorf("status after the key changed = %d; want 401", got)
	}
}

func TestSessionsAreBounded(t *testing.T) {
	g := NewGuard(nil, Timeouts{})
	g.Configure("k", nil)
	for range maxSessions * 3 {
		g.newSession("8045")
	}
	if n := len(g.sessions); n != maxSessions {
		t.Errorf("sessions held = %d; want at most %d", n, maxSessions)
	}
}

func TestOpenListenerWithoutKeyRefusesEveryone(t *testing.T) {
	g := NewGuard(nil, Timeouts{})
	ui := &uiStub{}
	open := httptest.NewServer(g.UI(ui, func() bool { return false }))
	defer open.Close()
	for _, host := range []string{"localhost", "127.0.0.1", "192.168.1.5:8046"} {
		req, _ := http.NewRequest("GET", open.URL+"/longhaul/v1/settings", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("open listener, no key, Host %s = %d; want 403", host, resp.StatusCode)
		}
	}
	if ui.api.Load() != 0 {
		t.Error("a request reached the UI's API")
	}
}

func TestListenCheck(t *testing.T) {
	for _, tc := range []struct {
		addr, key string
		ok        bool
	}{
		{"127.0.0.1:8046", "", true}, {"localhost:8046", "", true}, {"[::1]:0", "", true},
		{"0.0.0.0:8046", "", false}, {":8046", "", false}, {"[::]:8046", "", false}, {"192.168.1.5:8046", "", false},
		{"0.0.0.0:8046", "k", true}, {"nonsense", "k", false},
	} {
		err := ListenCheck(tc.addr, tc.key)
		if (err == nil) != tc.ok {
			t.Errorf("ListenCheck(%q, key %q) = %v; want ok %t", tc.addr, tc.key, err, tc.ok)
		}
		if !tc.ok && tc.addr != "nonsense" && !errors.Is(err, ErrClientKeyRequired) {
			t.Errorf("ListenCheck(%q) = %v; want ErrClientKeyRequired", tc.addr, err)
		}
	}
}

// The header corpus: what a client sends, and what the upstream must (not) see.
func TestHeaderAllowListUpstream(t *testing.T) {
	f := newFixture(t, Config{})
	forwarded := map[string]string{
		"Content-Type":      "application/json",
		"Accept":            "application/json",
		"User-Agent":        "claude-cli/2.0.0 (external, cli)",
		"Anthropic-Version": "2023-06-01",
		"Anthropic-Beta":    "interleaved-thinking-2025-05-14",
		"Anthropic-Dangerous-Direct-Browser-Access": "true",
		"X-App":                       "cli",
		"X-Stainless-Lang":            "js",
		"X-Stainless-Package-Version": "0.60.0",
		"X-Stainless-Os":              "Linux",
		"X-Stainless-Arch":            "x64",
		"X-Stainless-Runtime":         "node",
		"X-Stainless-Runtime-Version": "v22.0.0",
		"X-Stainless-Retry-Count":     "0",
		"X-Stainless-Timeout":         "600",
		"X-Stainless-Helper-Method":   "stream",
	}
	dropped := map[string]string{
		"Cookie": "session=abc", "Origin": f.front.URL /* same-origin: passes the guard */, "Referer": "https://evil.example/page",
		"Forwarded": "for=10.0.0.1", "X-Forwarded-For": "10.0.0.1", "X-Forwarded-Host": "evil.example",
		"X-Forwarded-Proto": "https", "X-Real-Ip": "10.0.0.1", "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors",
		"Sec-Ch-Ua": `"Chromium";v="130"`, "Sec-Ch-Ua-Platform": `"Linux"`, "Proxy-Authorization": "Basic eDp5",
		"X-Custom-Header": "1", "X-Amz-Security-Token": "t", "Cf-Connecting-Ip": "10.0.0.1", "True-Client-Ip": "10.0.0.1",
		"Via": "1.1 corp-proxy", "Dnt": "1", "If-None-Match": `"x"`, "Accept-Language": "en", "Openai-Organization": "org-x",
		"X-Goog-Api-Key": "AIza-client", "Priority": "u=1", "Keep-Alive": "timeout=5", "Te": "trailers", "Upgrade": "websocket",
		"X-Client-Trace": "t1", "Authorization": "Bearer client-token",
	}
	var hdr []string
	for k, v := range forwarded {
		hdr = append(hdr, k, v)
	}
	for k, v := range dropped {
		hdr = append(hdr, k, v)
	}
	hdr = append(hdr, "X-Api-Key", "client-key-never-upstream")
	resp := f.post(t, "/v1/messages", streamRequest("claude-sonnet-4-5"), hdr...)
	readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d; want 200", resp.StatusCode)
	}
	got := f.up.LastRequest().Header
	for k, v := range forwarded {
		if got.Get(k) != v {
			t.Errorf("%s upstream = %q; want %q", k, got.Get(k), v)
		}
	}
	for k := range dropped {
		if v := got.Values(k); len(v) > 0 {
			t.Errorf("%s reached the upstream: %q", k, v)
		}
	}
	if k := got.Get("X-Api-Key"); k != "sk-ant-upstream-secret-0001" {
		t.Errorf("upstream key = %q; want the account's", k)
	}
	t.Logf("header corpus: %d forwarded, %d dropped (+ the client key replaced)", len(forwarded), len(dropped))
}

func TestForwardHeadersNeverLetsCredentialsThrough(t *testing.T) {
	everything := func(string) bool { return true } // a careless protocol list
	src := http.Header{"Cookie": {"a"}, "Authorization": {"b"}, "X-Api-Key": {"c"}, "Origin": {"d"}, "Sec-Fetch-Dest": {"e"},
		"X-Forwarded-For": {"f"}, "Forwarded": {"g"}, "Referer": {"h"}, "Connection": {"close"}, "X-Ok": {"i"}}
	got := forwardHeaders(src, everything)
	if len(got) != 1 || got.Get("X-Ok") != "i" {
		t.Errorf("forwardHeaders with an allow-everything list = %v; want only X-Ok", got)
	}
}

// startListening runs srv on a real loopback listener and returns its address.
func startListening(t *testing.T, srv *Server) string {
	t.Helper()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop(t.Context()) }) //nolint:errcheck // the test is over
	return srv.Addr()
}

// waitClosed reads from c until the server closes it (EOF or reset), failing after waitLimit.
// What was read on the way (a 408, a 431) is returned.
func waitClosed(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(waitLimit)) //nolint:errcheck
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %v (read %q)", waitLimit, b)
	}
	return string(b)
}

func TestServerTimeoutsCutSlowAndIdleClients(t *testing.T) {
	up := proxytest.NewUpstream()
	defer up.Close()
	srv, err := New(Config{}, Options{Timeouts: Timeouts{ReadHeader: 300 * time.Millisecond, Idle: 300 * time.Millisecond, MaxHeaderBytes: 4 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	addr := startListening(t, srv)

	// Headers one byte at a time: the server closes the connection once ReadHeader has passed,
	// whatever the pace; the client keeps writing until a write fails or the read sees the end.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	closed := make(chan string, 1)
	go func() { closed <- waitClosed(t, c) }()
	req := "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + strings.Repeat("a", 1<<12)
	sent, cut := 0, false
	for i := 0; i < len(req) && !cut; i++ {
		if _, err := c.Write([]byte{req[i]}); err != nil {
			break
		}
		sent++
		select {
		case <-closed:
			cut = true
		case <-time.After(20 * time.Millisecond): // the client's pace, not a measure
		}
	}
	if !cut {
		<-closed
	}
	if sent >= len(req) {
		t.Errorf("the server read all %d header bytes sent slowly; want it to cut the client off", sent)
	}
	t.Logf("slow headers: cut off after %d of %d bytes", sent, len(req))

	// Oversized headers: 431, and the connection is closed.
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	io.WriteString(c2, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "+strings.Repeat("b", 64<<10)+"\r\n\r\n") //nolint:errcheck // the server may close first
	if got := waitClosed(t, c2); !strings.HasPrefix(got, "HTTP/1.1 431") {
		t.Errorf("oversized headers answered %.40q; want 431", got)
	}

	// An idle keep-alive connection is closed after Idle.
	c3, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	io.WriteString(c3, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") //nolint:errcheck
	resp, err := http.ReadResponse(bufio.NewReader(c3), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz on a keep-alive connection: %v %v", resp, err)
	}
	resp.Body.Close()
	waitClosed(t, c3)
}

func TestNewHTTPServerDefaults(t *testing.T) {
	s := NewHTTPServer(http.NotFoundHandler(), Timeouts{}, nil)
	if s.ReadHeaderTimeout != defaultReadHeader || s.IdleTimeout != defaultIdle || s.MaxHeaderBytes != defaultMaxHeaderBytes || s.ReadTimeout != 0 || s.WriteTimeout != 0 {
		t.Errorf("server = header %v idle %v max %d read %v write %v; want the defaults and no overall timeouts (streams)",
			s.ReadHeaderTimeout, s.IdleTimeout, s.MaxHeaderBytes, s.ReadTimeout, s.WriteTimeout)
	}
}

// Cookies ignore ports: every server on 127.0.0.1 receives the cookies of every other. The
// session cookie is named after the listener that opened it, sent only to the UI's API path,
// and a session is accepted only on that listener: the UI's own port does not take the proxy
// port's session, even under the proxy port's cookie name.
func TestSessionIsBoundToItsListener(t *testing.T) {
	const key = "lh-two-ports-key-000001"
	ui := &uiStub{}
	srv, err := New(Config{ClientKey: key}, Options{UI: ui})
	if err != nil {
		t.Fatal(err)
	}
	proxyPort := httptest.NewServer(srv.Handler())
	defer proxyPort.Close()
	uiPort := httptest.NewServer(srv.Guard().UI(ui, func() bool { return true }))
	defer uiPort.Close()
	port := func(u string) string { return u[strings.LastIndexByte(u, ':')+1:] }

	resp, _ := send(t, "POST", proxyPort.URL+LoginPath, `{"key":"`+key+`"}`, "Content-Type", "application/json")
	if resp.StatusCode != 200 || len(resp.Cookies()) != 1 {
		t.Fatalf("login: %d %v", resp.StatusCode, resp.Cookies())
	}
	c := resp.Cookies()[0]
	if c.Name != "longhaul_session_"+port(proxyPort.URL) || c.Path != "/longhaul/v1/" {
		t.Fatalf("cookie %s, Path %s; want longhaul_session_%s, Path /longhaul/v1/", c.Name, c.Path, port(proxyPort.URL))
	}
	status := func(base, cookie string) int {
		resp, _ := send(t, "GET", base+"/longhaul/v1/status", "", "Cookie", cookie)
		return resp.StatusCode
	}
	if got := status(proxyPort.URL, c.Name+"="+c.Value); got != 200 {
		t.Errorf("the session on its own port = %d; want 200", got)
	}
	for _, cookie := range []string{c.Name + "=" + c.Value, "longhaul_session_" + port(uiPort.URL) + "=" + c.Value} {
		if got := status(uiPort.URL, cookie); got != 401 {
			t.Errorf("the proxy port's session on the UI's port (%s) = %d; want 401", cookie[:strings.IndexByte(cookie, '=')], got)
		}
	}
}
