// Package proxy is Longhaul's local LLM API proxy: it accepts Anthropic
// Messages API requests, forwards each to an upstream account from a pool and
// relays the reply (streamed event by event) while recording an Exchange.
package proxy

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/compact"
	"longhaul/proxy/gemini"
	"longhaul/proxy/openai"
	"longhaul/proxy/pool"
)

// Options are the proxy's collaborators. Every field is optional.
type Options struct {
	// Transport sends upstream requests. If nil, a Transport with bounded
	// dial, TLS and idle phases (and no overall timeout, for streams) is used.
	Transport http.RoundTripper
	// Observer receives every exchange. If nil, exchanges are discarded.
	Observer Observer
	// OnAccountRevoked is told once when a 401/403 makes the pool stop using
	// an account, so the app can persist it (disabled, with the reason) and
	// push the accounts again; until that push the account stays out of
	// rotation (see pool.Pool.SetAccounts). It must not block. If nil,
	// nothing is told.
	OnAccountRevoked func(accountID int64, reason string)
	// Logger receives operational logs. If nil, logs are discarded.
	Logger *slog.Logger
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
	// Calibrator keeps what real usage taught the token estimator. If nil, a
	// fresh one (every factor 1) is used; pass one to persist it.
	Calibrator *compact.Calibrator
	// UI, if not nil, is served on the proxy's own port under /longhaul/
	// (the app's UI and its API, for headless machines), behind the guard's
	// UI check (Guard.UI: the key or a browser session once a key is set).
	// Paths under /longhaul/v1/ reach it unchanged; any other /longhaul/X
	// arrives as /X. If nil, /longhaul/ is not served.
	UI http.Handler
	// Timeouts bound what a client can hold the listener with; zero values
	// are the defaults (see Timeouts).
	Timeouts Timeouts
}

// Timeouts bound the time and bytes a client may take before the server
// gives up on it. Every http.Server Longhaul runs is built with them
// (NewHTTPServer); tests make them short.
type Timeouts struct {
	ReadHeader     time.Duration // the request line and headers; 0: 10 s
	Idle           time.Duration // a keep-alive connection between requests; 0: 2 min
	BodyRead       time.Duration // a request body's arrival; 0: 5 min
	BodyIdle       time.Duration // the longest pause while a request body arrives; 0: 15 s
	MaxHeaderBytes int           // request line and headers; 0: 64 KiB
}

const (
	defaultReadHeader = 10 * time.Second
	defaultIdle       = 2 * time.Minute
	defaultBodyRead   = 5 * time.Minute
	// defaultBodyIdle: a client on loopback or a LAN never pauses this long mid-body; one that
	// declares a body and stops sending is holding a connection, not uploading.
	defaultBodyIdle       = 15 * time.Second
	defaultMaxHeaderBytes = 64 << 10
)

func (t Timeouts) withDefaults() Timeouts {
	if t.ReadHeader <= 0 {
		t.ReadHeader = defaultReadHeader
	}
	if t.Idle <= 0 {
		t.Idle = defaultIdle
	}
	if t.BodyRead <= 0 {
		t.BodyRead = defaultBodyRead
	}
	if t.BodyIdle <= 0 {
		t.BodyIdle = defaultBodyIdle
	}
	if t.MaxHeaderBytes <= 0 {
		t.MaxHeaderBytes = defaultMaxHeaderBytes
	}
	return t
}

// NewHTTPServer is the http.Server every Longhaul listener uses: headers must
// arrive within t.ReadHeader and fit t.MaxHeaderBytes, idle keep-alive
// connections close after t.Idle. There is no overall read or write timeout:
// a stream may run for as long as the upstream writes (bodies are bounded per
// request, see Guard).
func NewHTTPServer(h http.Handler, t Timeouts, log *slog.Logger) *http.Server {
	t = t.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeader,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    t.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
}

// Server is the proxy. It can be started, stopped and started again (the tray
// toggle), and reconfigured while running.
type Server struct {
	transport http.RoundTripper
	observer  Observer
	log       *slog.Logger
	now       func() time.Time
	pool      *pool.Pool
	bodies    bodyPool
	// recall remembers recent request bodies so a session's next turn is only scanned where
	// it is new (anthropic/recall.go).
	recall *anthropic.Recall
	// prefixes are the starts of recent requests of other protocols, for sending early.
	prefixes recentPrefixes
	// chats is the Chat Completions peek's recall (chatrecall.go).
	chats chatRecall
	// budget is the memory the requests in flight reserved (budget.go).
	budget   memoryBudget
	handler  http.Handler
	ui       atomic.Pointer[http.Handler] // Options.UI, or SetUI's; nil: /longhaul/ is not served
	guard    *Guard
	timeouts Timeouts

	calibrator *compact.Calibrator
	comp       atomic.Pointer[compactor] // rebuilt when Config.Compaction changes
	windows    *learnedWindows           // context windows upstreams revealed
	models     *modelLister
	// responses keeps Responses conversations for previous_response_id (bounded, expiring).
	responses *openai.ResponsesStore
	cfg       atomic.Pointer[Config]
	requests  atomic.Int64
	// nextRequest is closed by the next API request once NextRequest asked for it (nil: nobody
	// waits). countRequest adds to requests and then looks here; NextRequest stores here and
	// its caller then reads requests: atomics being sequentially consistent, a request is
	// either counted in what the caller reads or closes the channel.
	nextRequest atomic.Pointer[chan struct{}]

	mu       sync.Mutex // guards the listener state below
	srv      *http.Server
	addr     string
	draining sync.WaitGroup // old listeners finishing their requests after a rebind
}

// New returns a stopped Server.
func New(cfg Config, opts Options) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{
		transport:  opts.Transport,
		observer:   opts.Observer,
		log:        opts.Logger,
		now:        opts.Now,
		pool:       pool.New(opts.OnAccountRevoked),
		calibrator: opts.Calibrator,
		windows:    newLearnedWindows(),
		timeouts:   opts.Timeouts.withDefaults(),
		recall:     anthropic.NewRecall(),
	}
	if opts.UI != nil {
		s.SetUI(opts.UI)
	}
	if s.calibrator == nil {
		s.calibrator = compact.NewCalibrator(compact.CalibratorOptions{})
	}
	if s.transport == nil {
		s.transport = newTransport()
	}
	if s.observer == nil {
		s.observer = discardObserver{}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.models = &modelLister{transport: s.transport, now: s.now, lists: map[int64]modelList{}}
	s.responses = openai.NewResponsesStore(openai.ResponsesStoreOptions{Now: s.now})
	c := cfg.withDefaults()
	if err := s.pool.Configure(c.Policy, !c.NoSessionAffinity); err != nil {
		return nil, err
	}
	s.guard = NewGuard(s.now, s.timeouts)
	s.guard.Configure(c.ClientKey, c.AllowedOrigins)
	s.cfg.Store(&c)
	s.comp.Store(s.newCompactor(c.Compaction, nil))
	s.handler = s.routes()
	return s, nil
}

func newTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialDirect((&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext),
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   64,
		ForceAttemptHTTP2:     true,
	}
}

// Calibrator is the token estimator's calibration, for persisting.
func (s *Server) Calibrator() *compact.Calibrator { return s.calibrator }

// Config returns the configuration new requests use.
func (s *Server) Config() Config { return *s.cfg.Load() }

// Pool returns the account pool.
func (s *Server) Pool() *pool.Pool { return s.pool }

// SetAccounts replaces the upstream accounts; the next request uses them.
func (s *Server) SetAccounts(accounts []pool.Account) { s.pool.SetAccounts(accounts) }

// SetUI serves h on the proxy's port under /longhaul/, as Options.UI does. Main sets it
// once the UI's door exists: the door needs the app, which is built after the proxy.
func (s *Server) SetUI(h http.Handler) { s.ui.Store(&h) }

// Guard is the server's guard, kept current on Reconfigure: the UI's door on
// its own port uses it too, so one key and one login serve both ports.
func (s *Server) Guard() *Guard { return s.guard }

// Requests is the number of API requests served since New.
func (s *Server) Requests() int64 { return s.requests.Load() }

// NextRequest returns a channel that the next API request closes, so that a caller showing
// Requests can sleep while there is no traffic instead of polling. Callers share one channel.
func (s *Server) NextRequest() <-chan struct{} {
	for {
		if ch := s.nextRequest.Load(); ch != nil {
			return *ch
		}
		ch := make(chan struct{})
		if s.nextRequest.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

// countRequest counts an API request and wakes whoever waits for one (NextRequest): a load
// when nobody does.
func (s *Server) countRequest() {
	s.requests.Add(1)
	if s.nextRequest.Load() != nil {
		if ch := s.nextRequest.Swap(nil); ch != nil {
			close(*ch)
		}
	}
}

// Handler serves the proxy's routes without a listener (tests, embedding).
func (s *Server) Handler() http.Handler { return s.handler }

// Addr is the address the running server listens on, "" when stopped.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Running reports whether the server is listening.
func (s *Server) Running() bool { return s.Addr() != "" }

// Start listens on the configured address and serves in the background.
// Starting a running server is a no-op.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return nil
	}
	return s.listenLocked(s.Config())
}

func (s *Server) listenLocked(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr())
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr(), err)
	}
	srv := NewHTTPServer(s.handler, s.timeouts, s.log)
	s.srv, s.addr = srv, ln.Addr().String()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("proxy stopped serving", "addr", ln.Addr().String(), "err", err)
		}
	}()
	s.log.Info("proxy listening", "addr", s.addr)
	return nil
}

// Stop closes the listener and waits for in-flight requests to finish, or
// until ctx is done, after which remaining connections are closed.
// Stopping a stopped server is a no-op.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	srv := s.srv
	s.srv, s.addr = nil, ""
	s.mu.Unlock()
	var err error
	if srv != nil {
		err = shutdown(ctx, srv)
	}
	s.draining.Wait()
	return err
}

func shutdown(ctx context.Context, srv *http.Server) error {
	if err := srv.Shutdown(ctx); err != nil {
		srv.Close() //nolint:errcheck // Shutdown's error is the one worth returning
		return fmt.Errorf("drain proxy: %w", err)
	}
	return nil
}

// drainTimeout bounds how long an old listener's streams may run after a
// rebind before their connections are closed.
const drainTimeout = 10 * time.Minute

// Reconfigure applies cfg to new requests atomically; requests in flight keep
// the config they started with. If the listen address changed while running,
// the server binds the new address first (so a failure leaves it as it was)
// and lets the old listener drain in the background.
func (s *Server) Reconfigure(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	c := cfg.withDefaults()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.pool.Configure(c.Policy, !c.NoSessionAffinity); err != nil {
		return err
	}
	old := s.cfg.Load()
	comp := s.comp.Load()
	if !comp.cfg.equal(c.Compaction) {
		comp = s.newCompactor(c.Compaction, comp)
	}
	s.guard.Configure(c.ClientKey, c.AllowedOrigins)
	if s.srv == nil || old.Addr() == c.Addr() {
		s.cfg.Store(&c)
		s.comp.Store(comp)
		return nil
	}
	oldSrv := s.srv
	s.srv = nil
	if err := s.listenLocked(c); err != nil {
		s.srv = oldSrv
		return err
	}
	s.cfg.Store(&c)
	s.comp.Store(comp)
	s.draining.Add(1)
	go func() {
		defer s.draining.Done()
		ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
		defer cancel()
		if err := shutdown(ctx, oldSrv); err != nil {
			s.log.Warn("old listener did not drain", "err", err)
		}
	}()
	return nil
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok"}`) //nolint:errcheck
	})
	// Claude Code probes HEAD / before its first call.
	mux.HandleFunc("HEAD /{$}", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "Longhaul proxy. Point ANTHROPIC_BASE_URL here.\n") //nolint:errcheck
	})
	mux.Handle("POST /v1/messages", s.api(messagesClient{}, fixedCall(opGenerate, "messages")))
	mux.Handle("POST /v1/messages/count_tokens", s.api(messagesClient{}, fixedCall(opCount, "count_tokens")))
	mux.Handle("POST /v1/chat/completions", s.api(chatClient{}, fixedCall(opGenerate, "chat")))
	mux.Handle("POST /v1/responses", s.api(responsesClient{}, func(c *call, _ *http.Request) *Error {
		c.op, c.route, c.tr.store = opGenerate, "responses", s.responses
		return nil
	}))
	mux.Handle("POST /v1beta/models/{call}", s.api(geminiClient{}, geminiCall))
	mux.Handle("GET /v1/models", s.listing(messagesClient{}))
	mux.Handle("GET /v1beta/models", s.listing(geminiClient{}))
	mux.Handle("GET /v1beta/models/{model}", s.listing(geminiClient{}))
	preflight := func(w http.ResponseWriter, r *http.Request) {
		if e := s.guard.Preflight(w, r, s.cfg.Load().Loopback()); e != nil {
			writeError(w, e)
		}
	}
	mux.HandleFunc("OPTIONS /v1/", preflight)
	mux.HandleFunc("OPTIONS /v1beta/", preflight)
	mux.HandleFunc("/", notFound)
	mux.Handle("/longhaul/", s.serveUI())
	mux.HandleFunc("GET /longhaul", func(w http.ResponseWriter, r *http.Request) {
		if s.ui.Load() == nil {
			notFound(w, r)
			return
		}
		http.Redirect(w, r, "/longhaul/", http.StatusMovedPermanently)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The mux would answer CONNECT in plain text; this is not a forward proxy.
		if r.Method == http.MethodConnect {
			writeError(w, newError(http.StatusMethodNotAllowed, anthropic.InvalidRequestError, "CONNECT is not supported: Longhaul is not a forward proxy"))
			return
		}
		if e := routablePath(r); e != nil {
			refuseUnread(w, r)
			writeError(w, e)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, newError(http.StatusNotFound, anthropic.NotFoundError, fmt.Sprintf("%s %s is not a route of this proxy", r.Method, r.URL.Path)))
}

// uiPrefix is where the UI lives on the proxy's port.
const uiPrefix = "/longhaul"

// serveUI maps the proxy port's /longhaul/ onto the UI's own paths, then guards the result
// (Guard.UI), so the guard decides on the very path the UI routes: the UI's API keeps its
// /longhaul/v1/ paths, any other /longhaul/X is the UI's file /X. A mapped path that is
// itself under /longhaul (/longhaul/longhaul/v1/…) would reach the API by a second name, and
// is refused.
func (s *Server) serveUI() http.Handler {
	guarded := s.guard.UI(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*s.ui.Load()).ServeHTTP(w, r)
	}), func() bool { return s.cfg.Load().Loopback() })
	files := http.StripPrefix(uiPrefix, guarded)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.ui.Load() == nil {
			notFound(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, uiAPIPath) {
			guarded.ServeHTTP(w, r)
			return
		}
		if rest := r.URL.Path[len(uiPrefix):]; len(rest) >= len(uiPrefix) && strings.EqualFold(rest[:len(uiPrefix)], uiPrefix) {
			refuseUnread(w, r)
			notFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
}

// api wraps an upstream route with the checks every API request gets, in the client
// protocol's error shape; setup fills in the request's call (what it asks, from its path).
func (s *Server) api(proto clientProtocol, setup func(*call, *http.Request) *Error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cfg := s.cfg.Load()
		c := &call{proto: proto}
		if e := setup(c, r); e != nil {
			s.refuse(w, r, c, e)
			return
		}
		if e := s.guard.CheckAPI(w, r, cfg.Loopback()); e != nil {
			s.refuse(w, r, c, e)
			return
		}
		if r.ContentLength > cfg.MaxBodyBytes {
			s.refuse(w, r, c, bodyTooLarge(cfg.MaxBodyBytes))
			return
		}
		r = s.guard.boundBody(w, r)
		defer closeIfBodyFailed(w, r)
		s.countRequest()
		s.forward(w, r, cfg, s.comp.Load(), c)
	})
}

// refuse answers a request refused before anything was read of it (the guard, an unknown
// method, a declared body over the limit) and records it, with the reason and without its
// body: the caller may not even be allowed to send one. The connection closes after the
// answer (refuseUnread).
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, c *call, e *Error) {
	refuseUnread(w, r)
	now := s.now()
	route := c.route
	if route == "" {
		route = "refused"
	}
	s.observer.Observe(Exchange{
		ID: newExchangeID(), State: ExchangeFinished, Route: route, Method: r.Method, Path: r.URL.Path,
		UserAgent: r.UserAgent(), RemoteAddr: r.RemoteAddr, Start: now, End: now, ClientProtocol: c.proto.name(),
		Status: e.Status, ErrorType: e.Type, ErrorMessage: e.Message,
	})
	writeErrorAs(w, c.proto, e)
}

// listing serves a model list behind the same guard.
func (s *Server) listing(proto clientProtocol) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &call{proto: proto, route: "models"}
		if e := s.guard.CheckAPI(w, r, s.cfg.Load().Loopback()); e != nil {
			s.refuse(w, r, c, e)
			return
		}
		s.countRequest()
		s.serveModels(w, r, c)
	})
}

func fixedCall(o op, route string) func(*call, *http.Request) *Error {
	return func(c *call, _ *http.Request) *Error {
		c.op, c.route = o, route
		return nil
	}
}

// geminiCall reads a Gemini route's model and method from its path
// (/v1beta/models/{model}:{method}) and the stream form from alt=sse.
func geminiCall(c *call, r *http.Request) *Error {
	model, method, ok := gemini.ParseModelPath(r.PathValue("call"))
	if !ok {
		return newError(http.StatusNotFound, anthropic.NotFoundError, fmt.Sprintf("%s is not a Gemini API method (want models/{model}:generateContent, :streamGenerateContent or :countTokens)", r.URL.Path))
	}
	c.tr.model, c.tr.geminiMethod = model, method
	switch method {
	case "generateContent":
		c.op, c.route = opGenerate, "generate"
	case "streamGenerateContent":
		c.op, c.route, c.tr.stream = opGenerate, "generate", true
		c.tr.geminiSSE = r.URL.Query().Get("alt") == "sse"
	case "countTokens":
		c.op, c.route = opCount, "count_tokens"
	default:
		return newError(http.StatusNotFound, anthropic.NotFoundError, fmt.Sprintf("the Gemini method %q is not served by Longhaul", method))
	}
	return nil
}

// newExchangeID is "lh_" and 24 hex digits: the time in Unix nanoseconds, then 32 random bits.
// Ids that start with the time are appended to the history's id index instead of inserted at
// random places in it (a new row cost the store about half as much at 100,000 rows:
// docs/performance.md); the random part keeps ids of one nanosecond apart.
func newExchangeID() string {
	var b [12]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixNano()))
	rand.Read(b[8:]) //nolint:errcheck // crypto/rand.Read never fails
	return "lh_" + hex.EncodeToString(b[:])
}
