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
	// bodyTimeout bounds how long a request body may take to arrive (Timeouts.BodyRead), and
	// bodyIdle how long it may pause (Timeouts.BodyIdle).
	bodyTimeout, bodyIdle time.Duration

	mu       sync.Mutex
	sessions map[[sha256.Size]byte]session // by the hash of its token

	// strikes throttles wrong keys per client address (guard_throttle.go).
	strikes strikeTable
}

// session is a browser login: when it ends, and the port of the listener that opened it (a
// cookie cannot be scoped to a port over plain HTTP, so the guard does it: see sessionCookie).
type session struct {
	expires time.Time
	port    string
}

type guardPolicy struct {
	key     []byte
	origins map[string]bool
}

// sessionCookiePrefix starts the browser UI's session cookie's name; the listener's port ends
// it (sessionCookie).
const sessionCookiePrefix = "longhaul_session_"

// sessionCookiePath is the only path the session cookie is sent to: the UI's API, the one part
// that needs it (the UI's files hold no data). Every other server on 127.0.0.1, whatever its
// port, receives cookies of 127.0.0.1 too (cookies ignore ports), and this keeps the session
// off every request a browser makes to them but ones to this very path.
const sessionCookiePath = uiAPIPath

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
// time.Now); t's BodyRead and BodyIdle bound each request body's arrival (zero values: the
// defaults).
func NewGuard(now func() time.Time, t Timeouts) *Guard {
	if now == nil {
		now = time.Now
	}
	t = t.withDefaults()
	g := &Guard{now: now, bodyTimeout: t.BodyRead, bodyIdle: t.BodyIdle, sessions: map[[sha256.Size]byte]session{}}
	g.strikes.entries = map[string]*strike{}
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

// checkKey decides whether r may pass when a key is set: it presents the client key, or
// (presenting none) carries a live browser session of this listener. A wrong key counts
// against the caller's address, and an address with too many wrong keys is refused without
// its key being compared (guard_throttle.go); a request that presents no key is refused
// without counting.
func (g *Guard) checkKey(p *guardPolicy, r *http.Request) *Error {
	if presented := clientCredential(r); presented != "" {
		return g.compareKey(p, r, presented, errNoKey)
	}
	if g.hasSession(r) {
		return nil
	}
	return errNoKey
}

// compareKey compares a presented key with the client key, throttled per client address;
// wrong is the refusal for a wrong key.
func (g *Guard) compareKey(p *guardPolicy, r *http.Request, presented string, wrong *Error) *Error {
	addr := clientAddress(r)
	now := g.now()
	if wait := g.strikes.lockedFor(addr, now); wait > 0 {
		return throttled(wait)
	}
	if subtle.ConstantTimeCompare([]byte(presented), p.key) != 1 {
		g.strikes.fail(addr, now)
		return wrong
	}
	g.strikes.forgive(addr)
	return nil
}

// hasSession reports whether r carries a live browser session opened on this listener.
func (g *Guard) hasSession(r *http.Request) bool {
	port := listenerPort(r)
	c, err := r.Cookie(sessionCookie(port))
	if err != nil || c.Value == "" {
		return false
	}
	id := sha256.Sum256([]byte(c.Value)) // a map keyed by the hash: lookup time says nothing about the token
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.sessions[id]
	if ok && !g.now().Before(s.expires) {
		delete(g.sessions, id)
		return false
	}
	return ok && s.port == port
}

// sessionCookie is the session cookie's name on the listener of port. Browsers send every
// cookie of 127.0.0.1 to every port of it; with the port in the name, two listeners (the
// proxy's port and the UI's, or two instances) never overwrite each other's session, and
// hasSession accepts a session only on the listener that opened it.
func sessionCookie(port string) string { return sessionCookiePrefix + port }

// listenerPort is the port of the listener r arrived on ("" when unknown: a test recorder).
func listenerPort(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, port, err := net.SplitHostPort(a.String()); err == nil {
			return port
		}
	}
	return ""
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
	if len(p.key) > 0 {
		if e := g.checkKey(p, r); e != nil {
			return e
		}
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
// the Host check; a canonical path (routablePath); for writes, same-origin callers only
// (CSRF), a JSON content type and a body within MaxUIBodyBytes that keeps arriving; the key or
// a session for everything but the UI's files and the login route. The UI's files (the login
// page among them) need no key: they hold no data. It answers LoginPath and LogoutPath itself.
// Errors are written in Anthropic's shape, whose error.message is what the UI reads from its
// own errors.
//
// Every decision is made on r's path as next routes it: callers that map paths (the proxy's
// port serves the UI under /longhaul/) map first and guard the result (Server.serveUI).
func (g *Guard) UI(next http.Handler, loopbackListener func() bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e := g.checkUI(w, r, loopbackListener()); e != nil {
			refuseUnread(w, r)
			writeError(w, e)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			r = g.boundBody(w, r) // after the checks: a refusal reads no body (refuseUnread)
		}
		switch r.URL.Path {
		case LoginPath:
			g.login(w, r, g.policy.Load())
		case LogoutPath:
			g.logout(w, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// MaxUIBodyBytes bounds a body sent to the UI's API: its largest is a settings change.
const MaxUIBodyBytes = 1 << 20

func (g *Guard) checkUI(w http.ResponseWriter, r *http.Request, loopbackListener bool) *Error {
	p := g.policy.Load()
	if e := checkHost(p, r, loopbackListener); e != nil {
		return e
	}
	if e := routablePath(r); e != nil {
		return e
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if _, page := fromWebPage(r); page {
			return newError(http.StatusForbidden, anthropic.PermissionError, "cross-origin request refused")
		}
		// Strictly JSON, even for writes that read no body: a page can send text/plain, or a
		// body with no type at all, without a CORS preflight.
		if !isStrictJSON(r.Header.Get("Content-Type")) {
			return newError(http.StatusUnsupportedMediaType, anthropic.InvalidRequestError, "send JSON (Content-Type: application/json)")
		}
		if r.ContentLength > MaxUIBodyBytes {
			return newError(http.StatusRequestEntityTooLarge, anthropic.RequestTooLarge, fmt.Sprintf("the UI's API takes bodies of up to %d bytes", MaxUIBodyBytes))
		}
	}
	if r.URL.Path == LoginPath || r.URL.Path == LogoutPath || len(p.key) == 0 || isUIFile(r) {
		return nil
	}
	return g.checkKey(p, r)
}

// isStrictJSON accepts application/json with any parameters, and nothing else.
func isStrictJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// isUIFile reports whether r asks for one of the UI's files rather than its API: a read of a
// path that is not under /longhaul in any case (the UI's own files never are). r's path is
// canonical already (routablePath).
func isUIFile(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	p := r.URL.Path
	return len(p) < len(uiPrefix) || !strings.EqualFold(p[:len(uiPrefix)], uiPrefix)
}

// refuseUnread makes a reply sent before r's body was read the connection's last, and sends
// it at once: net/http would otherwise first read what is left of the body (up to 256 KiB, for
// as long as the client takes to send it, with no deadline if none was set yet). Connection:
// close skips that read before the reply; after it, net/http still reads up to 256 KiB more
// so that closing does not reset a connection the client is still writing to (which would
// lose the reply), and refusedBodyGrace bounds that read: a client that sends its body gets
// the reply, one that stalls loses the connection a moment later.
func refuseUnread(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
		http.NewResponseController(w).SetReadDeadline(time.Now().Add(refusedBodyGrace)) //nolint:errcheck // not a connection (a test recorder): nothing to cut
	}
}

// refusedBodyGrace is how long the rest of a refused request's body may take to arrive before
// its connection is closed (refuseUnread).
const refusedBodyGrace = time.Second

// login checks the key a browser typed and opens a session: a random token in an HttpOnly,
// SameSite=Strict cookie (no script reads it, no other site's request carries it).
func (g *Guard) login(w http.ResponseWriter, r *http.Request, p *guardPolicy) {
	if r.Method != http.MethodPost {
		writeError(w, newError(http.StatusMethodNotAllowed, anthropic.InvalidRequestError, "POST the key as {\"key\": \"…\"}"))
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
	if e := g.compareKey(p, r, req.Key, errWrongLogin); e != nil {
		w.Header().Del("Cache-Control")
		writeError(w, e)
		return
	}
	port := listenerPort(r)
	token := g.newSession(port)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie(port), Value: token, Path: sessionCookiePath, MaxAge: int(sessionLifetime / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
	io.WriteString(w, `{"required":true}`) //nolint:errcheck // the client is gone
}

var errWrongLogin = newError(http.StatusUnauthorized, anthropic.AuthenticationError, "wrong client key")

// newSession opens a session on the listener of port and returns its token.
func (g *Guard) newSession(port string) string {
	var b [32]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand.Read never fails
	token := hex.EncodeToString(b[:])
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	for id, s := range g.sessions {
		if !now.Before(s.expires) {
			delete(g.sessions, id)
		}
	}
	if len(g.sessions) >= maxSessions {
		var oldest [sha256.Size]byte
		var first time.Time
		for id, s := range g.sessions {
			if first.IsZero() || s.expires.Before(first) {
				oldest, first = id, s.expires
			}
		}
		delete(g.sessions, oldest)
	}
	g.sessions[sha256.Sum256([]byte(token))] = session{expires: now.Add(sessionLifetime), port: port}
	return token
}

// logout ends the browser's session and clears its cookie.
func (g *Guard) logout(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, newError(http.StatusMethodNotAllowed, anthropic.InvalidRequestError, "POST to log out"))
		return
	}
	name := sessionCookie(listenerPort(r))
	if c, err := r.Cookie(name); err == nil {
		g.mu.Lock()
		delete(g.sessions, sha256.Sum256([]byte(c.Value)))
		g.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: sessionCookiePath, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{}`) //nolint:errcheck // the client is gone
}

// boundBody returns r with a body that gets bodyTimeout to arrive, and bodyIdle at most
// between two reads: a client that stops sending gets a read error (its connection is then
// closed) instead of holding a goroutine until the whole deadline passes. The deadline is
// lifted once the body has been read, because after that the server's watch for a hang-up
// reads the connection and a deadline there would cancel the request.
//
// A shallow copy with the new body, never r itself: net/http decides what to do with the rest
// of an unread body by the type of the request's own Body (it reads up to 256 KiB of it, or
// half-closes the connection and waits so that the client can read the reply), and a wrapper
// in its place made it close at once, resetting a connection the client was still writing to.
func (g *Guard) boundBody(w http.ResponseWriter, r *http.Request) *http.Request {
	if r.Body == nil || r.Body == http.NoBody {
		return r
	}
	// The network's clock, not g.now (an injected clock may be anywhere in time).
	now := time.Now()
	rc := http.NewResponseController(w)
	b := &deadlineBody{ReadCloser: r.Body, rc: rc, until: now.Add(g.bodyTimeout), idle: g.bodyIdle}
	if rc.SetReadDeadline(b.next(now)) != nil {
		return r // not a real connection (a test recorder): nothing to bound
	}
	bounded := r.WithContext(r.Context())
	bounded.Body = b
	return bounded
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
	rc     *http.ResponseController
	until  time.Time     // the whole body's deadline
	idle   time.Duration // the longest pause between reads
	done   bool
	failed bool
}

// next is the read deadline for a read starting at now.
func (b *deadlineBody) next(now time.Time) time.Time {
	if d := now.Add(b.idle); d.Before(b.until) {
		return d
	}
	return b.until
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	if !b.done {
		b.rc.SetReadDeadline(b.next(time.Now())) //nolint:errcheck // it worked in boundBody
	}
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.failed = true
	}
	// Only at the end: after a timeout the deadline must stay, so the server's
	// discard of the rest fails fast too and the connection is closed.
	if err == io.EOF && !b.done {
		b.done = true
		b.rc.SetReadDeadline(time.Time{}) //nolint:errcheck // as above
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
