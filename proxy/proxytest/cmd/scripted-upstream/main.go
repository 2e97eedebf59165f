// Command scripted-upstream serves proxytest's scripted upstreams, every protocol from one
// loopback address, for trying Longhaul without a real key and for the end-to-end tests:
//
//	go run ./proxy/proxytest/cmd/scripted-upstream -addr 127.0.0.1:9099 -agent
//	longhaul account add --base-url http://127.0.0.1:9099 --key -                          (Anthropic)
//	longhaul account add --kind openai --base-url http://127.0.0.1:9099/v1 --key -
//	longhaul account add --kind openai-responses --base-url http://127.0.0.1:9099/v1 --key -
//	longhaul account add --kind gemini --base-url http://127.0.0.1:9099 --key -
//
// Routes: /v1/messages… and GET /v1/models (Anthropic), /v1/chat/completions (OpenAI Chat),
// /v1/responses (OpenAI Responses), /v1beta/models… (Gemini), and
// GET /scripted/requests: every request to those routes so far, as JSON, so a test can check
// which protocol an upstream really saw.
//
// With -agent, requests that offer tools are answered by a stand-in model that calls them in
// turn and then answers in text (agent.go), so a tool loop needs no scripting from outside;
// -agent-calls Bash:40 makes it call only Bash, 40 times in a row, then answer.
//
// The Anthropic upstream can simulate the real API's accounting (proxytest.Simulation):
// -count-tokens reports input usage from its own tokenizer, -cache-ttl 5m simulates prompt
// caching (GET /scripted/cache lists what it billed), -window N refuses prompts counted above N
// tokens with "prompt is too long" (and the Chat upstream with context_length_exceeded).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"longhaul/proxy/gemini"
	"longhaul/proxy/proxytest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9099", "loopback address to listen on")
	gap := flag.Duration("gap", 50*time.Millisecond, "pause between streamed events")
	agent := flag.Bool("agent", false, "answer requests that offer tools with calls to them in turn, then text")
	agentCalls := flag.String("agent-calls", "", `with -agent: call only tool NAME, N times in a row, then answer text ("NAME:N", e.g. "Bash:40")`)
	var sim simulation
	flag.BoolVar(&sim.countTokens, "count-tokens", false, "report Anthropic input usage from the upstream's own tokenizer")
	flag.DurationVar(&sim.cacheTTL, "cache-ttl", 0, `simulate Anthropic prompt caching, a "5m" entry living this long after its last use (0 = off)`)
	flag.IntVar(&sim.window, "window", 0, "refuse prompts counted above this many tokens, as the APIs do (0 = no window)")
	flag.Parse()
	script, err := parseAgentScript(*agentCalls)
	if err == nil && script.Tool != "" && !*agent {
		err = fmt.Errorf("-agent-calls %s needs -agent", *agentCalls)
	}
	if err == nil {
		err = run(*addr, *gap, *agent, script, sim)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "scripted-upstream:", err)
		os.Exit(1)
	}
}

// simulation is what the flags ask the upstreams to simulate.
type simulation struct {
	countTokens bool
	cacheTTL    time.Duration
	window      int
}

func run(addr string, gap time.Duration, agent bool, script agentScript, sim simulation) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("parse -addr: %w", err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s is not a loopback address", addr)
	}
	ups := newUpstreams(gap, agent)
	defer ups.Close()
	ups.script = script
	ups.simulate(sim)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: ups.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Printf("scripted upstream (Anthropic, OpenAI Chat and Responses, Gemini) on http://%s\n", ln.Addr())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shut down: %w", err)
	}
	return nil
}

// upstreams are proxytest's scripted upstreams behind one mux, with the record of what each
// was asked.
type upstreams struct {
	gap    time.Duration
	agent  bool
	script agentScript // with agent: the one tool to call and how often (zero: every tool once)

	messages  *proxytest.Upstream
	chat      *proxytest.ChatUpstream
	responses *proxytest.ResponsesUpstream
	gemini    *proxytest.GeminiUpstream

	memory responsesMemory // the agent's Responses conversations, for previous_response_id
	cache  *proxytest.CacheSim
	window int // the simulated window (0 = none): the agent scripts no reply to a refused request

	mu      sync.Mutex
	records []record
}

// record is one request as GET /scripted/requests lists it.
type record struct {
	Protocol string          `json:"protocol"` // anthropic, openai-chat, openai-responses, gemini; none: no route
	Method   string          `json:"method"`
	Path     string          `json:"path"`
	Query    string          `json:"query,omitempty"`
	Model    string          `json:"model,omitempty"` // from the body, or Gemini's path
	Body     json.RawMessage `json:"body,omitempty"`  // the JSON body as it came
}

// maxRecords bounds the record, as proxytest bounds its own.
const maxRecords = 1000

func newUpstreams(gap time.Duration, agent bool) *upstreams {
	u := &upstreams{gap: gap, agent: agent,
		messages: proxytest.NewUpstream(), chat: proxytest.NewChatUpstream(), responses: proxytest.NewResponsesUpstream(),
		gemini: proxytest.NewGeminiUpstream()}
	u.messages.SetRecordBodies(false)
	msg := &proxytest.Message{Content: []proxytest.Block{
		proxytest.Thinking("The user said hello; a short greeting back is enough.", "EqScriptedSignature"),
		proxytest.Text("Hello from the scripted upstream! This reply streams event by event."),
	}, Usage: proxytest.Usage{InputTokens: 12, OutputTokens: 24}}
	u.messages.SetDefault(proxytest.Reply{Message: msg, EventGap: gap})
	u.chat.SetDefault(proxytest.ChatReply{EventGap: gap, Completion: &proxytest.ChatCompletion{
		Content: "Hello from the scripted Chat upstream.", Usage: proxytest.ChatUsage{Prompt: 12, Completion: 8},
	}})
	u.responses.SetDefault(proxytest.ResponsesReply{EventGap: gap, Response: &proxytest.ResponsesResponse{
		Items: []proxytest.ResponsesItem{proxytest.ResponsesText("Hello from the scripted Responses upstream.")},
		Usage: proxytest.ResponsesUsage{Input: 12, Output: 9},
	}})
	return u
}

// simulate sets what the Anthropic and Chat upstreams simulate of the real APIs.
func (u *upstreams) simulate(sim simulation) {
	u.window = sim.window
	if sim.cacheTTL > 0 {
		u.cache = &proxytest.CacheSim{TTL: sim.cacheTTL}
	}
	u.messages.SetSimulation(proxytest.Simulation{CountTokens: sim.countTokens, Caching: u.cache, Window: sim.window})
	u.chat.SetWindow(sim.window)
}

// Close shuts every upstream down (they also listen on addresses of their own, unused here).
func (u *upstreams) Close() {
	u.messages.Close()
	u.chat.Close()
	u.responses.Close()
	u.gemini.Close()
}

// Handler routes each protocol's paths to its upstream.
func (u *upstreams) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/v1/messages", u.serve("anthropic", u.messages, u.messagesAgent))
	mux.Handle("/v1/messages/", u.serve("anthropic", u.messages, nil))
	mux.Handle("/v1/models", u.serve("anthropic", u.messages, nil))
	mux.Handle("/v1/chat/completions", u.serve("openai-chat", u.chat, u.chatAgent))
	mux.Handle("/v1/responses", u.serve("openai-responses", u.responses, u.responsesAgent))
	mux.Handle("/v1beta/", u.serve("gemini", u.gemini, u.geminiAgent))
	mux.HandleFunc("GET /scripted/requests", u.list)
	mux.HandleFunc("GET /scripted/cache", u.cacheTally)
	// Anything else is recorded too, so a test sees where a request went that no upstream
	// serves, and answered 404 in OpenAI's error shape (the one every SDK here reads).
	mux.Handle("/", u.serve("none", http.HandlerFunc(notFound), nil))
	return mux
}

// serve records a request, lets the agent script its reply (when on), and hands it to next.
func (u *upstreams) serve(protocol string, next http.Handler, script func(r *http.Request, body []byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
			return
		}
		u.record(protocol, r, body)
		if u.agent && script != nil && r.Method == http.MethodPost {
			script(r, body)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

func notFound(w http.ResponseWriter, r *http.Request) {
	b, err := json.Marshal(map[string]any{"error": map[string]any{"type": "invalid_request_error", "code": "not_found", "param": nil,
		"message": "scripted-upstream serves no " + r.Method + " " + r.URL.Path}})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	w.Write(b) //nolint:errcheck // the client is gone if this fails
}

func (u *upstreams) messagesAgent(_ *http.Request, body []byte) {
	if n, err := proxytest.CountTokens(body); u.window > 0 && err == nil && n > u.window {
		return // refused as too long: a reply queued now would answer the next request
	}
	if rep, ok := messagesAgent(body, u.gap, u.script); ok {
		u.messages.Enqueue(rep)
	}
}

func (u *upstreams) chatAgent(_ *http.Request, body []byte) {
	if n, err := proxytest.CountChatTokens(body); u.window > 0 && err == nil && n > u.window {
		return // refused as too long, as above
	}
	if rep, ok := chatAgent(body, u.gap, u.script); ok {
		u.chat.Enqueue(rep)
	}
}

func (u *upstreams) responsesAgent(_ *http.Request, body []byte) {
	if rep, ok := responsesAgent(body, u.gap, &u.memory, u.script); ok {
		u.responses.Enqueue(rep)
	}
}

func (u *upstreams) geminiAgent(r *http.Request, body []byte) {
	_, method, ok := gemini.ParseModelPath(strings.TrimPrefix(r.URL.Path, "/v1beta/"))
	if !ok || (method != "generateContent" && method != "streamGenerateContent") {
		return
	}
	if rep, ok := geminiAgent(body, u.script); ok {
		u.gemini.Enqueue(rep)
	}
}

func (u *upstreams) record(protocol string, r *http.Request, body []byte) {
	rec := record{Protocol: protocol, Method: r.Method, Path: r.URL.Path, Query: redactKey(r.URL.Query()), Model: modelOf(body)}
	if model, _, ok := gemini.ParseModelPath(strings.TrimPrefix(r.URL.Path, "/v1beta/")); ok && protocol == "gemini" {
		rec.Model = model
	}
	if json.Valid(body) {
		rec.Body = body
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.records) == maxRecords {
		u.records = u.records[1:]
	}
	u.records = append(u.records, rec)
}

// redactKey is the query string without Gemini's ?key= (a key is never echoed back).
func redactKey(q map[string][]string) string {
	if _, ok := q["key"]; ok {
		q["key"] = []string{"REDACTED"}
	}
	var parts []string
	for k, vs := range q {
		for _, v := range vs {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, "&")
}

func (u *upstreams) list(w http.ResponseWriter, _ *http.Request) {
	u.mu.Lock()
	b, err := json.Marshal(append([]record{}, u.records...))
	u.mu.Unlock()
	if err != nil {
		http.Error(w, "encode records: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b) //nolint:errcheck // the client is gone if this fails
}

// cacheReport is what GET /scripted/cache answers: the simulated cache's tally, and its input
// priced at Sonnet's list prices.
type cacheReport struct {
	Enabled bool `json:"enabled"` // false: -cache-ttl is off and the tally stays empty
	proxytest.CacheTally
	InputCostUSD         float64 `json:"input_cost_usd"`
	EffectiveInputTokens float64 `json:"effective_input_tokens"` // the input cost in uncached tokens
}

func (u *upstreams) cacheTally(w http.ResponseWriter, _ *http.Request) {
	rep := cacheReport{Enabled: u.cache != nil}
	if u.cache != nil {
		rep.CacheTally = u.cache.Tally()
		prices := proxytest.SonnetPrices()
		rep.InputCostUSD, rep.EffectiveInputTokens = prices.InputCost(rep.CacheTally), prices.EffectiveInput(rep.CacheTally)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		http.Error(w, "encode cache tally: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b) //nolint:errcheck // the client is gone if this fails
}
