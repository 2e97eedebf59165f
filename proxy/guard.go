package proxy

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"longhaul/proxy/anthropic"
)

// Guard is the one check of who may use Longhaul over HTTP: the proxy's API, the UI's API on
// either port and its live feeds all ask it (docs/ARCHITECTURE.md, "The guard"). The window's
// Wails bindings do not come through HTTP and never meet it.
//
// It enforces, in this order:
//   - the Host header names a loopback host, unless the listener is on a non-loopback address
//     and a client key is set (a web page that DNS-rebinds its domain to 127.0.0.1 sends its
//     own name); a non-loopback listener without a key refuses everything;
//   - on the proxy's API, a request a web page sent (Origin, Sec-Fetch-Site) comes from an
//     origin in proxy.allowed_origins, and a POST's body is JSON (a page can send text/plain
//     without a preflight);
//   - when proxy.client_key is set, the caller has it (x-api-key, Authorization: Bearer) or a
//     browser session the login route gave it.
//
// The Server owns one Guard and keeps it current on Reconfigure; the UI's door on its own
// port is handed the same Guard, so one login serves both ports.
type Guard struct {
	policy atomic.Pointer[guardPolicy]
	now    func() time.Time
	// bodyTimeout bounds how long a request body may take to arrive (Timeouts.BodyRead).
	bodyTimeout time.Duration

	mu       sync.Mutex
	sessions map[[sha256.Size]byte]time.Time // hash of a session token → its expiry
}

type guardPolicy struct {
	key     []byte
	origins map[string]bool
}

// SessionCookie is the browser UI's session cookie.
const SessionCookie = "longhaul_session"

const (
	// sessionLifetime bounds a browser session: the key is typed again after it.
	sessionLifetime = 12 * time.Hour
	// maxSessions bounds the sessions held in memory; a new login beyond it ends the oldest.
	maxSessions = 64
)

// The UI's routes the guard answers itself.
const (
	LoginPath  = "/longhaul/v1/login"
	LogoutPath = "/longhaul/v1/logout"
	uiAPIPath  = "/longhaul/v1/"
)

// NewGuard returns a guard with no key and no allowed origins; now is the clock (nil:
// time.Now) and bodyTimeout bounds each request body's arrival (0: defaultBodyRead).
func NewGuard(now func() time.Time, bodyTimeout time.Duration) *Guard {
	if now == nil {
		now = time.Now
	}
	if bodyTimeout <= 0 {
		bodyTimeout = defaultBodyRead
	}
	g := &Guard{now: now, bodyTimeout: bodyTimeout, sessions: map[[sha256.Size]byte]time.Time{}}
	g.policy.Store(&guardPolicy{})
	return g
}

// Configure sets the client key and the allowed origins. A changed key ends every browser
// session: they were opened with the old one.
func (g *Guard) Configure(clientKey string, allowedOrigins []string) {
	p := &guardPolicy{origins: map[string]bool{}}
	if clientKey != "" {
		p.key = []byte(clientKey)
	}
	for _, o := range allowedOrigins {
		p.origins[strings.ToLower(strings.TrimRight(o, "/"))] = true
	}
	old := g.policy.Swap(p)
	if subtle.ConstantTimeCompare(old.key, p.key) != 1 {
		g.mu.Lock()
		clear(g.sessions)
		g.mu.Unlock()
	}
}

// KeyRequired reports whether a client key is set.
func (g *Guard) KeyRequired() bool { return len(g.policy.Load().key) > 0 }

// clientCredential is the key a client presents: x-api-key (Anthropic), Authorization: Bearer
// (OpenAI), x-goog-api-key (Gemini), and on the Gemini API's paths only, the ?key= query
// parameter the Google SDKs may use (never recorded: history keeps the path without its query).
// It is the one place that knows where a key may come in.
func clientCredential(r *http.Request) string {
	h := r.Header
	if k := h.Get("X-Api-Key"); k != "" {
		return k
	}
	if a := h.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	if k := h.Get("X-Goog-Api-Key"); k != "" {
		return k
	}
	if strings.HasPrefix(r.URL.Path, geminiPathPrefix) {
		return r.URL.Query().Get("key")
	}
	return ""
}

// geminiPathPrefix is where the Gemini API's routes live.
const geminiPathPrefix = "/v1beta/"

// hasKey reports whether r carries the client key or a live browser session.
func (g *Guard) hasKey(p *guardPolicy, r *http.Request) bool {
	if subtle.ConstantTimeCompare([]byte(clientCredential(r)), p.key) == 1 {
		return true
	}
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return false
	}
	id := sha256.Sum256([]byte(c.Value)) // a map keyed by the hash: lookup time says nothing about the token
	g.mu.Lock()
	defer g.mu.Unlock()
	exp, ok := g.sessions[id]
	if ok && !g.now().Before(exp) {
		delete(g.sessions, id)
		return false
	}
	return ok
}

// checkHost refuses a Host that is not a loopback name, unless the listener is open to the
// network on purpose (non-loopback, with a key); and everything on an open listener without
// a key (the key was removed while it listened).
func checkHost(p *guardPolicy, r *http.Request, loopbackListener bool) *Error {
	if !loopbackListener {
		if len(p.key) == 0 {
			return newError(http.StatusForbidden, anthropic.PermissionError, "this listener is on a non-loopback address and no client key is set (proxy.client_key)")
		}
		return nil
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if !IsLoopbackHost(strings.Trim(host, "[]")) {
		return newError(http.StatusForbidden, anthropic.PermissionError, "address Longhaul by a loopback name (127.0.0.1 or localhost)")
	}
	return nil
}

var errNoKey = newError(http.StatusUnauthorized, anthropic.AuthenticationError, "invalid or missing client key (send it as x-api-key, Authorization: Bearer or x-goog-api-key)")

// fromWebPage reports whether a browser says a web page sent r (Fetch Metadata and Origin),
// and the page's origin ("" when the browser did not say). A page of the same origin as the
// listener is not "a web page" here.
func fromWebPage(r *http.Request) (origin string, page bool) {
	origin = r.Header.Get("Origin")
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return origin, true
	}
	if origin == "" {
		return "", false
	}
	u, err := url.Parse(origin)
	return origin, err != nil || u.Host != r.Host
}

// CheckAPI is the check of a proxy API request (/v1/...): Host, browser origin, key, and a
// JSON body on POST. A nil result means serve it; an allowed browser origin gets its CORS
// grant on w.
func (g *Guard) CheckAPI(w http.ResponseWriter, r *http.Request, loopbackListener bool) *Error {
	p := g.policy.Load()
	if e := checkHost(p, r, loopbackListener); e != nil {
		return e
	}
	if origin, page := fromWebPage(r); page {
		if !p.origins[strings.ToLower(origin)] {
			return newError(http.StatusForbidden, anthropic.PermissionError, "requests from web pages are refused unless their origin is in proxy.allowed_origins")
		}
		grantCORS(w.Header(), origin)
	}
	if len(p.key) > 0 && !g.hasKey(p, r) {
		return errNoKey
	}
	if r.Method == http.MethodPost && !isJSON(r.Header.Get("Content-Type")) {
		return newError(http.StatusUnsupportedMediaType, anthropic.InvalidRequestError, "the request body must be JSON (Content-Type: application/json)")
	}
	return nil
}

// isJSON accepts application/json with any parameters, and no content type at all (some
// scripts send none; a browser sending none is caught by the origin check before this).
func isJSON(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// grantCORS lets an allowed origin read the reply. Every allowed reply varies by Origin, so
// a cache never hands one origin's grant to another.
func grantCORS(h http.Header, origin string) {
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", "Request-Id, Longhaul-Request-Id, Retry-After")
}

// Preflight answers a CORS preflight (OPTIONS) for the proxy's API: a grant for an origin in
// proxy.allowed_origins, 403 in the protocol's shape for any other.
func (g *Guard) Preflight(w http.ResponseWriter, r *http.Request, loopbackListener bool) *Error {
	p := g.policy.Load()
	if e := checkHost(p, r, loopbackListener); e != nil {
		return e
	}
	origin := r.Header.Get("Origin")
	if origin == "" || !p.origins[strings.ToLower(origin)] {
		return newError(http.StatusForbidden, anthropic.PermissionError, "CORS preflight refused: the origin is not in proxy.allowed_origins")
	}
	h := w.Header()
	grantCORS(h, origin)
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	// The SDKs' own headers and the key; the browser asks for what it needs, and only names
	// a forwardable header or a credential get anything upstream or past the guard.
	if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
		h.Set("Access-Control-Allow-Headers", req)
	}
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// UI guards the browser UI and its API (next), on the listener loopbackListener describes:
// the Host check; the key or a session for everything under /longhaul/v1/ but the login
// route; and same-origin writes only (CSRF). The UI's files (the login page among them) need
// no key: they hold no data. It answers LoginPath and LogoutPath itself. Errors are written in
// Anthropic's shape, whose error.message is what the UI reads from its own errors.
func (g *Guard) UI(next http.Handler, loopbackListener func() bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := g.policy.Load()
		if e := checkHost(p, r, loopbackListener()); e != nil {
			writeError(w, e)
			return
		}
		write := r.Method != http.MethodGet && r.Method != http.MethodHead
		if write {
			if _, page := fromWebPage(r); page {
				writeError(w, newError(http.StatusForbidden, anthropic.PermissionError, "cross-origin request refused"))
				return
			}
			g.boundBody(w, r)
		}
		switch {
		case r.URL.Path == LoginPath:
			g.login(w, r, p)
			return
		case r.URL.Path == LogoutPath:
			g.logout(w, r)
			return
		case !isUIFile(r.URL.Path) && len(p.key) > 0 && !g.hasKey(p, r):
			writeError(w, errNoKey)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isUIFile reports whether p names one of the UI's files rather than its API: a clean path
// outside /longhaul/v1/. Anything unclean is treated as API (the mux would only redirect it).
func isUIFile(p string) bool {
	if strings.HasPrefix(p, uiAPIPath) || p == strings.TrimSuffix(uiAPIPath, "/") {
		return false
	}
	c := path.Clean(p)
	return c == p || c+"/" == p
}

// login checks the key a browser typed and opens a session: a random token in an HttpOnly,
// SameSite=Strict cookie (no script reads it, no other site's request carries it).
func (g *Guard) login(w http.ResponseWriter, r *http.Request, p *guardPolicy) {
	if r.Method != http.MethodPost {
		writeError(w, newError(http.StatusMethodNotAllowed, anthropic.InvalidRequestError, "POST the key as {\"key\": \"…\"}"))
		return
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		writeError(w, newError(http.StatusUnsupportedMediaType, anthropic.InvalidRequestError, "send JSON (Content-Type: application/json)"))
		return
	}
	var req struct {
		Key string `json:"key"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil {
		writeError(w, newError(http.StatusBadRequest, anthropic.InvalidRequestError, `body must be {"key": "…"}`))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if len(p.key) == 0 {
		io.WriteString(w, `{"required":false}`) //nolint:errcheck // the client is gone
		return
	}
	if subtle.ConstantTimeCompare([]byte(req.Key), p.key) != 1 {
		writeError(w, newError(http.StatusUnauthorized, anthropic.AuthenticationError, "wrong client key"))
		return
	}
	token := g.newSession()
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: token, Path: "/", MaxAge: int(sessionLifetime / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
	io.WriteString(w, `{"required":true}`) //nolint:errcheck // the client is gone
}

func (g *Guard) newSession() string {
	var b [32]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand.Read never fails
	token := hex.EncodeToString(b[:])
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	for id, exp := range g.sessions {
		if !now.Before(exp) {
			delete(g.sessions, id)
		}
	}
	if len(g.sessions) >= maxSessions {
		var oldest [sha256.Size]byte
		var first time.Time
		for id, exp := range g.sessions {
			if first.IsZero() || exp.Before(first) {
				oldest, first = id, exp
			}
		}
		delete(g.sessions, oldest)
	}
	g.sessions[sha256.Sum256([]byte(token))] = now.Add(sessionLifetime)
	return token
}

// logout ends the browser's session and clears its cookie.
func (g *Guard) logout(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, newError(http.StatusMethodNotAllowed, anthropic.InvalidRequestError, "POST to log out"))
		return
	}
	if c, err := r.Cookie(SessionCookie); err == nil {
		g.mu.Lock()
		delete(g.sessions, sha256.Sum256([]byte(c.Value)))
		g.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{}`) //nolint:errcheck // the client is gone
}

// boundBody gives the request body bodyTimeout to arrive; a client that stops sending gets a
// read error (its connection is then closed) instead of holding a goroutine forever. The
// deadline is lifted once the body has been read, because after that the server's watch for
// a hang-up reads the connection and a deadline there would cancel the request.
func (g *Guard) boundBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	// The network's clock, not g.now (an injected clock may be anywhere in time).
	if rc.SetReadDeadline(time.Now().Add(g.bodyTimeout)) != nil {
		return // not a real connection (a test recorder): nothing to bound
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, lift: func() { rc.SetReadDeadline(time.Time{}) }} //nolint:errcheck // as above
}

// closeIfBodyFailed closes the connection of a request whose body could not be read (cut
// short, too slow): the client gets no half-made reply, and the connection, whose next bytes
// are unknown, is not reused.
func closeIfBodyFailed(w http.ResponseWriter, r *http.Request) {
	if b, ok := r.Body.(*deadlineBody); ok && b.failed {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	}
}

type deadlineBody struct {
	io.ReadCloser
	lift   func()
	done   bool
	failed bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.failed = true
	}
	// Only at the end: after a timeout the deadline must stay, so the server's
	// discard of the rest fails fast too and the connection is closed.
	if err == io.EOF && !b.done {
		b.done = true
		b.lift()
	}
	return n, err
}

// ValidOrigin reports whether o is a web origin as browsers send it: scheme://host[:port],
// http or https, with nothing after.
func ValidOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(o, "/") {
		return fmt.Errorf("%q is not an origin (scheme://host[:port], e.g. https://chat.example.com)", o)
	}
	return nil
}

// ListenCheck refuses a non-loopback listen address without a client key: anyone on the
// network could otherwise use the listener. Main calls it for the UI's own address; the
// proxy's bind is checked by Config.Validate.
func ListenCheck(addr, clientKey string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "" || !IsLoopbackHost(strings.Trim(host, "[]")) {
		if clientKey == "" {
			return fmt.Errorf("listen on %s: %w", addr, ErrClientKeyRequired)
		}
	}
	return nil
}

// LoopbackAddr reports whether a listen address (host:port) only accepts local connections.
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && host != "" && IsLoopbackHost(strings.Trim(host, "[]"))
}
