package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
	"longhaul/proxy/sse"
)

func TestPassthroughIsByteForByte(t *testing.T) {
	f := newFixture(t, Config{})
	f.up.SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", "hello")})
	// Unknown fields, odd key order, odd whitespace and escapes: none may change.
	body := "{ \"zeta\":{\"cache_control\" : {\"type\":\"ephemeral\"}},\n\t\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"future_block\",\"x\":1.50e+2}," +
		"{\"type\":\"text\",\"text\":\"caf\\u00e9 \\\"q\\\" 世界\"}]}] ,\"model\":\"claude-sonnet-4-5\",\"max_tokens\":10 ,\"citations\":null }\n"
	resp := f.post(t, "/v1/messages?beta=true", body,
		"X-Api-Key", "client-placeholder", "Authorization", "Bearer client-token",
		"Anthropic-Version", "2023-06-01", "Anthropic-Beta", "interleaved-thinking-2025-05-14,context-management-2025-06-27",
		"Connection", "X-Hop", "X-Hop", "1", "Proxy-Authorization", "Basic x", "X-Client-Trace", "t1")
	if got := readAll(t, resp.Body); resp.StatusCode != 200 || !strings.Contains(got, "hello") {
		t.Fatalf("status %d body %q", resp.StatusCode, got)
	}
	got := f.up.LastRequest()
	if !bytes.Equal(got.Body, []byte(body)) {
		t.Errorf("upstream body differs from the client's bytes:\n got %q\nwant %q", got.Body, body)
	}
	if got.RawQuery != "beta=true" || got.Path != "/v1/messages" {
		t.Errorf("upstream URL = %s?%s; want /v1/messages?beta=true", got.Path, got.RawQuery)
	}
	for h, want := range map[string]string{
		"X-Api-Key": "sk-ant-upstream-secret-0001", "Authorization": "", "Anthropic-Version": "2023-06-01",
		"Anthropic-Beta": "interleaved-thinking-2025-05-14,context-management-2025-06-27",
		"X-Client-Trace": "", // not on the allow-list (proxy/headers.go): unknown headers stay local
		"X-Hop":          "", "Proxy-Authorization": "", "Connection": "",
	} {
		if v := got.Header.Get(h); v != want {
			t.Errorf("upstream header %s = %q; want %q", h, v, want)
		}
	}
}

func TestStreamIsRelayedVerbatimAndTapped(t *testing.T) {
	f := newFixture(t, Config{})
	msg := &proxytest.Message{
		Model: "claude-sonnet-4-5-20250929",
		Content: []proxytest.Block{
			proxytest.Thinking("Let me look at the file first.", "EqSig-one"),
			proxytest.Text("Reading it now."),
			proxytest.ToolUse("toolu_01A", "Read", map[string]any{"path": "/a.go"}),
		},
		Usage: proxytest.Usage{InputTokens: 1200, OutputTokens: 87, CacheReadInputTokens: 900, CacheCreationInputTokens: 40},
	}
	f.up.SetDefault(proxytest.Reply{Message: msg})
	resp := f.post(t, "/v1/messages", streamRequest("claude-sonnet-4-5"), "User-Agent", "claude-cli/2.1.0")
	got := readAll(t, resp.Body)
	if got != string(msg.SSE()) {
		t.Errorf("client stream differs from upstream stream:\n got %q\nwant %q", got, msg.SSE())
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type = %q; want text/event-stream", ct)
	}
	ex := f.obs.last(t)
	if ex.Status != 200 || ex.StreamOutcome != "complete" || ex.Route != "messages" || ex.Model != "claude-sonnet-4-5" || !ex.Stream {
		t.Errorf("exchange = status %d outcome %q route %q model %q stream %t", ex.Status, ex.StreamOutcome, ex.Route, ex.Model, ex.Stream)
	}
	wantUsage := Usage{InputTokens: 1200, OutputTokens: 87, CacheReadInputTokens: 900, CacheCreationInputTokens: 40}
	if ex.Usage != wantUsage || ex.StopReason != "tool_use" {
		t.Errorf("tapped usage %+v stop %q; want %+v tool_use", ex.Usage, ex.StopReason, wantUsage)
	}
	if len(ex.Signatures) != 1 || ex.Signatures[0] != "EqSig-one" || len(ex.ToolUseIDs) != 1 || ex.ToolUseIDs[0] != "toolu_01A" {
		t.Errorf("tapped signatures %q tool ids %q", ex.Signatures, ex.ToolUseIDs)
	}
	if ex.Start.IsZero() || ex.FirstByte.Before(ex.Start) || ex.End.Before(ex.FirstByte) {
		t.Errorf("times out of order: start %v first byte %v end %v", ex.Start, ex.FirstByte, ex.End)
	}
	if len(ex.Attempts) != 1 || ex.Attempts[0].AccountName != "primary" || ex.Attempts[0].Status != 200 {
		t.Errorf("attempts = %+v", ex.Attempts)
	}
	if ex.UserAgent != "claude-cli/2.1.0" {
		t.Errorf("user agent = %q", ex.UserAgent)
	}
	if len(f.obs.started) != 1 || f.obs.started[0].ID != ex.ID {
		t.Errorf("started records = %d; want one with the same id", len(f.obs.started))
	}
}

func TestNonStreamReplyIsTapped(t *testing.T) {
	f := newFixture(t, Config{})
	msg := &proxytest.Message{Content: []proxytest.Block{proxytest.Thinking("hmm, thinking", "EqSig-ns"), proxytest.ToolUse("toolu_9", "Bash", map[string]any{"cmd": "ls"})},
		Usage: proxytest.Usage{InputTokens: 10, OutputTokens: 5}}
	f.up.SetDefault(proxytest.Reply{Message: msg})
	resp := f.post(t, "/v1/messages", `{"model":"claude-haiku-4-5","max_tokens":5,"messages":[]}`)
	if got := readAll(t, resp.Body); got != string(msg.JSON()) {
		t.Errorf("body = %q; want %q", got, msg.JSON())
	}
	ex := f.obs.last(t)
	if ex.Usage.InputTokens != 10 || ex.Usage.OutputTokens != 5 || ex.StopReason != "tool_use" || ex.Stream {
		t.Errorf("exchange usage %+v stop %q stream %t", ex.Usage, ex.StopReason, ex.Stream)
	}
	if len(ex.Signatures) != 1 || len(ex.ToolUseIDs) != 1 || ex.ToolUseIDs[0] != "toolu_9" {
		t.Errorf("signatures %q tool ids %q", ex.Signatures, ex.ToolUseIDs)
	}
}

// The upstream sends one event and stalls: the client must already have it.
func TestStreamIsNotBuffered(t *testing.T) {
	f := newFixture(t, Config{})
	msg := proxytest.TextMessage("", "streaming text that arrives in several chunks")
	f.up.SetDefault(proxytest.Reply{Message: msg, StallAfter: 1})
	resp, rd := openStream(t, context.Background(), f.front.URL)
	defer resp.Body.Close()
	first := nextEvent(t, rd, waitLimit)
	if first.Name != "message_start" {
		t.Fatalf("first event = %q; want message_start", first.Name)
	}
	f.up.Release()
	var rest []byte
	for {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		rest = append(rest, ev.Raw...)
	}
	if got := string(first.Raw) + string(rest); got != string(msg.SSE()) {
		t.Errorf("stream after release differs:\n got %q\nwant %q", got, msg.SSE())
	}
}

func TestIdleStreamGetsKeepAlives(t *testing.T) {
	f := newFixture(t, Config{KeepAlive: 30 * time.Millisecond})
	f.up.SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", "x"), StallAfter: 1})
	resp, rd := openStream(t, context.Background(), f.front.URL)
	defer resp.Body.Close()
	nextEvent(t, rd, waitLimit)
	ev := nextEvent(t, rd, waitLimit)
	if string(ev.Raw) != ": keep-alive\n\n" {
		t.Errorf("event while idle = %q; want a keep-alive comment", ev.Raw)
	}
}

func TestClientHangupCancelsUpstream(t *testing.T) {
	f := newFixture(t, Config{})
	f.up.SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", "long answer"), StallAfter: 2})
	ctx, cancel := context.WithCancel(context.Background())
	resp, rd := openStream(t, ctx, f.front.URL)
	nextEvent(t, rd, waitLimit)
	cancel()
	resp.Body.Close()
	if !f.up.WaitCanceled(waitLimit) {
		t.Fatal("upstream request was not cancelled after the client hung up")
	}
	ex := f.obs.last(t)
	if ex.StreamOutcome != "client_cancelled" || ex.Status != statusClientClosed {
		t.Errorf("exchange outcome %q status %d; want client_cancelled 499", ex.StreamOutcome, ex.Status)
	}
	waitNoGoroutine(t, "proxy.(*Server).relayStream")
	waitNoGoroutine(t, "proxy.(*Server).forward")
}

func TestMidStreamFailureBecomesErrorEvent(t *testing.T) {
	tests := []struct {
		name      string
		reply     proxytest.Reply
		wantType  string
		wantInMsg string
	}{
		{"connection dropped", proxytest.Reply{FailAfter: 3}, "api_error", "upstream stream failed"},
		{"upstream error event relayed", proxytest.Reply{ErrorEventAfter: 3}, "overloaded_error", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Config{})
			tt.reply.Message = proxytest.TextMessage("", "some text to stream out")
			f.up.SetDefault(tt.reply)
			resp := f.post(t, "/v1/messages", streamRequest("m"))
			if resp.StatusCode != 200 {
				t.Fatalf("status = %d; want 200 (failure came after the first byte)", resp.StatusCode)
			}
			body := readAll(t, resp.Body)
			i := strings.LastIndex(body, "event: error\ndata: ")
			if i < 0 || !strings.HasSuffix(body, "\n\n") {
				t.Fatalf("stream does not end with an error event: %q", body)
			}
			var e errorBody
			if err := json.Unmarshal([]byte(strings.TrimSpace(body[i+len("event: error\ndata: "):])), &e); err != nil || e.Type != "error" || e.Error.Type != tt.wantType || !strings.Contains(e.Error.Message, tt.wantInMsg) {
				t.Errorf("error event = %+v (%v); want type %s", e, err, tt.wantType)
			}
			if ex := f.obs.last(t); ex.StreamOutcome != "upstream_error" || ex.ErrorType != tt.wantType {
				t.Errorf("exchange outcome %q error %q; want upstream_error %s", ex.StreamOutcome, ex.ErrorType, tt.wantType)
			}
		})
	}
}

func TestErrorsHaveAnthropicShape(t *testing.T) {
	dead := pool.Account{ID: 7, BaseURL: "http://127.0.0.1:" + strconv.Itoa(proxytest.FreePort(t)), Secret: "sk-dead-0000000000", Enabled: true}
	tests := []struct {
		name       string
		cfg        Config
		accounts   []pool.Account
		reply      *proxytest.Reply
		method     string
		path, body string
		wantStatus int
		wantType   string
		wantHeader [2]string
	}{
		{name: "malformed JSON", path: "/v1/messages", body: `{"model":"m",`, wantStatus: 400, wantType: "invalid_request_error"},
		{name: "body is not an object", path: "/v1/messages", body: `["x"]`, wantStatus: 400, wantType: "invalid_request_error"},
		{name: "body over the limit", cfg: Config{MaxBodyBytes: 1024}, path: "/v1/messages", body: `{"x":"` + strings.Repeat("a", 2000) + `"}`, wantStatus: 413, wantType: "request_too_large"},
		{name: "unknown route", path: "/v1/complete", body: `{}`, wantStatus: 404, wantType: "not_found_error"},
		{name: "wrong method", method: "GET", path: "/v1/messages", wantStatus: 404, wantType: "not_found_error"},
		{name: "upstream unreachable", accounts: []pool.Account{dead}, path: "/v1/messages", body: streamRequest("m"), wantStatus: 502, wantType: "api_error"},
		{name: "no account configured", accounts: []pool.Account{}, path: "/v1/messages", body: streamRequest("m"), wantStatus: 503, wantType: "overloaded_error"},
		{name: "all accounts disabled", accounts: []pool.Account{{ID: 1, BaseURL: "http://127.0.0.1:1", Secret: "sk-x-000000000000", Enabled: false}}, path: "/v1/messages", body: streamRequest("m"), wantStatus: 503, wantType: "overloaded_error"},
		{name: "upstream 400 passed through", reply: ptr(proxytest.ErrorReply(400, "invalid_request_error", "max_tokens: too large")), path: "/v1/messages", body: streamRequest("m"), wantStatus: 400, wantType: "invalid_request_error"},
		{name: "upstream 401 passed through", reply: ptr(proxytest.Unauthorized()), path: "/v1/messages", body: streamRequest("m"), wantStatus: 401, wantType: "authentication_error"},
		{name: "upstream 429 passed through with retry-after", reply: ptr(proxytest.RateLimited(17)), path: "/v1/messages", body: streamRequest("m"), wantStatus: 429, wantType: "rate_limit_error", wantHeader: [2]string{"Retry-After", "17"}},
		{name: "upstream 529 passed through", reply: ptr(proxytest.Overloaded()), path: "/v1/messages", body: streamRequest("m"), wantStatus: 529, wantType: "overloaded_error"},
		{name: "no first byte in time", cfg: Config{RequestTimeout: 50 * time.Millisecond}, reply: &proxytest.Reply{FirstByteDelay: 2 * time.Second}, path: "/v1/messages", body: streamRequest("m"), wantStatus: 504, wantType: "timeout_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.cfg, tt.accounts...)
			if tt.accounts != nil && len(tt.accounts) == 0 {
				f.srv.SetAccounts(nil)
			}
			if tt.reply != nil {
				f.up.SetDefault(*tt.reply)
			}
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			req, _ := http.NewRequest(method, f.front.URL+tt.path, strings.NewReader(tt.body))
			resp, err := f.front.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, resp.Body)
			var e errorBody
			if err := json.Unmarshal([]byte(body), &e); err != nil || e.Type != "error" || e.Error.Message == "" {
				t.Fatalf("body %q is not an Anthropic error (%v)", body, err)
			}
			if resp.StatusCode != tt.wantStatus || e.Error.Type != tt.wantType {
				t.Errorf("%s %s = %d %s (%s); want %d %s", method, tt.path, resp.StatusCode, e.Error.Type, e.Error.Message, tt.wantStatus, tt.wantType)
			}
			if h := tt.wantHeader; h[0] != "" && resp.Header.Get(h[0]) != h[1] {
				t.Errorf("header %s = %q; want %q", h[0], resp.Header.Get(h[0]), h[1])
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type = %q; want application/json", ct)
			}
		})
	}
}

func TestOversizedChunkedBodyIsRejected(t *testing.T) {
	f := newFixture(t, Config{MaxBodyBytes: 1024})
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(`{"x":"` + strings.Repeat("a", 4096) + `"}`))
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, f.front.URL+"/v1/messages", pr) // no Content-Length: chunked
	resp, err := f.front.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp.Body)
	if resp.StatusCode != 413 {
		t.Errorf("chunked oversized body: status %d; want 413", resp.StatusCode)
	}
	if n := len(f.up.Requests()); n != 0 {
		t.Errorf("upstream received %d requests; want 0", n)
	}
}

func TestNoCORSGrant(t *testing.T) {
	f := newFixture(t, Config{})
	f.up.SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", "x"), Header: http.Header{"Access-Control-Allow-Origin": {"*"}}})
	resp := f.post(t, "/v1/messages", `{"model":"m"}`, "Origin", "https://evil.example")
	readAll(t, resp.Body)
	if v := resp.Header.Get("Access-Control-Allow-Origin"); v != "" {
		t.Errorf("Access-Control-Allow-Origin = %q; want none", v)
	}
	req, _ := http.NewRequest(http.MethodOptions, f.front.URL+"/v1/messages", nil)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	r, err := f.front.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if v := r.Header.Get("Access-Control-Allow-Origin"); v != "" || r.StatusCode < 400 {
		t.Errorf("preflight = %d with ACAO %q; want refusal without a grant", r.StatusCode, v)
	}
}

func ptr[T any](v T) *T { return &v }

// Pooled body buffers must never be reused while any reader (a retry, or the
// Transport finishing a write) still holds them.
func TestPooledBodiesSurviveConcurrencyAndRetries(t *testing.T) {
	f := newFixture(t, Config{})
	flaky := proxytest.NewUpstream()
	defer flaky.Close()
	flaky.SetDefault(proxytest.Overloaded())
	f.srv.SetAccounts([]pool.Account{
		{ID: 1, BaseURL: flaky.URL, Secret: "sk-aaaaaaaaaaaa", Enabled: true},
		{ID: 2, BaseURL: f.up.URL, Secret: "sk-bbbbbbbbbbbb", Enabled: true},
	})
	f.up.SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", "ok")})
	const n = 48
	sent := make(map[string]bool, n)
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = `{"model":"m","i":` + strconv.Itoa(i) + `,"pad":"` + strings.Repeat(string(rune('a'+i%26)), 1000+i*7919%60000) + `"}`
		sent[bodies[i]] = true
	}
	errs := make(chan error, n)
	for _, b := range bodies {
		go func() {
			resp, err := http.Post(f.front.URL+"/v1/messages", "application/json", strings.NewReader(b))
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// The flaky account cools down after its first 529s; the good one serves all.
	if got := len(f.up.Requests()); got != n {
		t.Fatalf("good upstream got %d requests; want %d", got, n)
	}
	for _, up := range []*proxytest.Upstream{flaky, f.up} {
		got := up.Requests()
		for _, r := range got {
			if !sent[string(r.Body)] {
				t.Fatalf("upstream received a body the client never sent (%d bytes): buffer reused too early", len(r.Body))
			}
		}
	}
}

// An upstream that dies in the middle of an event: the partial event must not
// reach the client (its parser would fuse it with the error event).
func TestTruncatedEventIsNotForwarded(t *testing.T) {
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n")
		io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"PARTIAL")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}))
	defer cut.Close()
	f := newFixture(t, Config{}, pool.Account{ID: 1, BaseURL: cut.URL, Secret: "sk-aaaaaaaaaaaa", Enabled: true})
	resp := f.post(t, "/v1/messages", streamRequest("m"))
	body := readAll(t, resp.Body)
	if strings.Contains(body, "PARTIAL") {
		t.Errorf("partial event forwarded: %q", body)
	}
	rd := sse.NewReader(strings.NewReader(body), 0)
	var names []string
	for {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		if !json.Valid(ev.Data) {
			t.Errorf("event %q has invalid JSON data %q", ev.Name, ev.Data)
		}
		names = append(names, ev.Name)
	}
	if fmt.Sprint(names) != "[message_start error]" {
		t.Errorf("client events = %v; want [message_start error]", names)
	}
}
