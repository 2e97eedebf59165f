package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/compact"
	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

// syncLog collects log output from concurrent handlers.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// chatHistory is a conversation of n plain text turns of about size
// characters each, ending with a user turn: no tool rounds (nothing for
// Layer 1) and no thinking (nothing for Layer 2), so only Layer 3 can help.
func chatHistory(n, size int) string {
	var msgs []string
	for i := range n {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, fmt.Sprintf(`{"role":%q,"content":%q}`, role, fmt.Sprintf("turn %d: ", i)+strings.Repeat("lorem ipsum ", size/12)))
	}
	return `{"model":"claude-sonnet-4-5","max_tokens":100,"metadata":{"user_id":"user_a_account_b_session_chat-1"},"messages":[` + strings.Join(msgs, ",") + `]}`
}

func newCompactionFixture(t *testing.T, cc CompactionConfig) (*fixture, *syncLog) {
	t.Helper()
	logs := &syncLog{}
	up := proxytest.NewUpstream()
	obs := newRecorder()
	srv, err := New(Config{Compaction: cc}, Options{Observer: obs, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetAccounts([]pool.Account{{ID: 1, Label: "primary", BaseURL: up.URL, Secret: "sk-ant-upstream-secret-0001", Enabled: true}})
	front := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		up.Release()
		front.Close()
		up.Close()
	})
	return &fixture{up: up, srv: srv, front: front, obs: obs}, logs
}

// A Layer-3 summary that fails must not turn into an over-limit request
// upstream: the client gets a 400 in Anthropic's shape that tells it what to do.
func TestLayer3FailureAnswers400(t *testing.T) {
	f, logs := newCompactionFixture(t, CompactionConfig{ContextLimits: map[string]int{"*": 2000}})
	f.up.Enqueue(proxytest.ErrorReply(http.StatusBadRequest, "invalid_request_error", "summary model refused"))
	resp := f.post(t, "/v1/messages", chatHistory(12, 2000))
	body := readAll(t, resp.Body)
	var e errorBody
	if resp.StatusCode != http.StatusBadRequest || json.Unmarshal([]byte(body), &e) != nil ||
		e.Error.Type != anthropic.InvalidRequestError || !strings.Contains(e.Error.Message, "/compact") || !strings.Contains(e.Error.Message, "/clear") {
		t.Fatalf("status %d body %s; want 400 invalid_request_error suggesting /compact or /clear", resp.StatusCode, body)
	}
	if n := len(f.up.Requests()); n != 1 {
		t.Errorf("upstream saw %d requests; want only the summary call, never the over-limit request", n)
	}
	ex := f.obs.last(t)
	if ex.Status != http.StatusBadRequest || len(ex.RequestBody) == 0 {
		t.Errorf("exchange status %d, request body kept %d bytes; want 400 and the original kept", ex.Status, len(ex.RequestBody))
	}
	if !strings.Contains(logs.String(), "[Layer-3] summary failed") {
		t.Errorf("log lacks the Layer-3 failure:\n%s", logs.String())
	}
}

// Layer 3 through the proxy: the summary call goes to the pool's account
// with the summary model; the client's request is forwarded as a fork; the
// exchange records the step and both bodies; the log carries [Layer-3].
func TestLayer3ForksThroughThePool(t *testing.T) {
	f, logs := newCompactionFixture(t, CompactionConfig{ContextLimits: map[string]int{"*": 2000}, SummaryModel: "claude-haiku-4-5"})
	f.up.Enqueue(proxytest.Reply{Message: proxytest.TextMessage("claude-haiku-4-5", "<conversation_summary><current_work>chatting</current_work></conversation_summary>")})
	req := chatHistory(12, 2000)
	resp := f.post(t, "/v1/messages", req)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, readAll(t, resp.Body))
	}
	resp.Body.Close()
	got := f.up.Requests()
	if len(got) != 2 {
		t.Fatalf("upstream saw %d requests; want the summary call and the fork", len(got))
	}
	if !bytes.Contains(got[0].Body, []byte(`"model":"claude-haiku-4-5"`)) || got[0].Header.Get("X-Api-Key") != "sk-ant-upstream-secret-0001" {
		t.Errorf("summary call = %s (key %q); want the summary model on the pool's account", got[0].Body[:min(200, len(got[0].Body))], got[0].Header.Get("X-Api-Key"))
	}
	fork := got[1].Body
	if !bytes.Contains(fork, []byte(compact.ContinuationPreamble[:40])) || !bytes.Contains(fork, []byte("turn 11: ")) || bytes.Contains(fork, []byte("turn 3: ")) {
		t.Errorf("forwarded fork lacks the summary or the last turn, or keeps old turns: %.300s", fork)
	}
	ex := f.obs.last(t)
	if len(ex.Compaction) == 0 || ex.Compaction[len(ex.Compaction)-1].Layer != "Layer-3" {
		t.Fatalf("exchange steps %+v; want Layer-3 last", ex.Compaction)
	}
	if string(ex.RequestBody) != req || !bytes.Equal(ex.ForwardedBody, fork) {
		t.Errorf("exchange bodies: received %d bytes (want %d), forwarded %d (want %d)", len(ex.RequestBody), len(req), len(ex.ForwardedBody), len(fork))
	}
	if ex.TokensAfter >= ex.TokensBefore || ex.PressureBefore <= 0.7 || ex.PressureAfter > 0.7 || ex.ContextLimit != 2000 {
		t.Errorf("pressure %d→%d tokens (%.2f→%.2f of %d); want below the Layer-3 threshold after", ex.TokensBefore, ex.TokensAfter, ex.PressureBefore, ex.PressureAfter, ex.ContextLimit)
	}
	if !strings.Contains(logs.String(), "[Layer-3] forked the conversation") {
		t.Errorf("log lacks [Layer-3]:\n%s", logs.String())
	}
	// The same session again: the cached summary is reused, no second call.
	resp = f.post(t, "/v1/messages", req)
	resp.Body.Close()
	if n := len(f.up.Requests()); n != 3 {
		t.Errorf("upstream saw %d requests after a repeat; want 3 (the summary reused)", n)
	}
}

// Thresholds are hot-reloaded: a request that passes untouched compacts
// after Reconfigure lowers Layer 1, and requests already running keep theirs.
func TestCompactionSettingsApplyToTheNextRequest(t *testing.T) {
	f, logs := newCompactionFixture(t, CompactionConfig{})
	var rounds []string
	rounds = append(rounds, `{"role":"user","content":"start"}`)
	for i := range 8 {
		id := fmt.Sprintf("toolu_%02d", i)
		rounds = append(rounds,
			`{"role":"assistant","content":[{"type":"tool_use","id":"`+id+`","name":"Read","input":{}}]}`,
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"`+id+`","content":"`+strings.Repeat("data ", 200)+`"}]}`)
	}
	req := `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[` + strings.Join(rounds, ",") + `]}`
	resp := f.post(t, "/v1/messages", req)
	resp.Body.Close()
	if got := f.up.LastRequest().Body; string(got) != req {
		t.Fatal("with the default thresholds the small request should pass byte for byte")
	}
	cfg := f.srv.Config()
	cfg.Compaction.ThresholdL1, cfg.Compaction.ThresholdL2, cfg.Compaction.ThresholdL3 = 0.001, 0.9, 1
	cfg.Compaction.KeepToolRounds = 2
	if err := f.srv.Reconfigure(cfg); err != nil {
		t.Fatal(err)
	}
	resp = f.post(t, "/v1/messages", req)
	resp.Body.Close()
	got := f.up.LastRequest().Body
	if bytes.Contains(got, []byte("toolu_05")) || !bytes.Contains(got, []byte("toolu_06")) || !bytes.Contains(got, []byte("toolu_07")) {
		t.Errorf("after lowering L1 to 0.001 with 2 rounds kept, forwarded %.400s", got)
	}
	ex := f.obs.last(t)
	if len(ex.Compaction) != 1 || ex.Compaction[0].Layer != "Layer-1" || ex.Compaction[0].Items != 6 {
		t.Errorf("steps %+v; want one Layer-1 step removing 6 rounds", ex.Compaction)
	}
	if !strings.Contains(logs.String(), "[Layer-1] trimmed old tool rounds") {
		t.Errorf("log lacks [Layer-1]:\n%s", logs.String())
	}
	if err := f.srv.Reconfigure(Config{Compaction: CompactionConfig{ThresholdL1: 0.9, ThresholdL2: 0.5, ThresholdL3: 1}}); err == nil {
		t.Error("Reconfigure accepted L1 > L2")
	}
}

// What an upstream reply teaches the engine: the thinking signatures it
// issued restore a client's dropped signature on the next turn (logged and
// counted), and its real usage calibrates the estimator. (The window is
// small enough that the engine examines the first request: requests far
// below every threshold are screened and teach nothing, by design.)
func TestRepliesFeedTheSignatureCacheAndCalibration(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%t", stream), func(t *testing.T) { testRepliesFeed(t, stream) })
	}
}

func testRepliesFeed(t *testing.T, stream bool) {
	f, logs := newCompactionFixture(t, CompactionConfig{ContextLimits: map[string]int{"*": 700}})
	reply := &proxytest.Message{Content: []proxytest.Block{
		proxytest.Thinking("I will read the file.", "EqIssuedSig0001"),
		proxytest.ToolUse("toolu_sig_1", "Read", map[string]any{"path": "a.go"}),
	}, Usage: proxytest.Usage{InputTokens: 900, OutputTokens: 20}}
	f.up.Enqueue(proxytest.Reply{Message: reply})
	first := `{"model":"claude-sonnet-4-5","max_tokens":2000,"stream":` + fmt.Sprint(stream) + `,"thinking":{"type":"enabled","budget_tokens":1024},` +
		`"metadata":{"user_id":"user_a_account_b_session_sig-1"},"messages":[{"role":"user","content":"` + strings.Repeat("read a.go ", 100) + `"}]}`
	resp := f.post(t, "/v1/messages", first)
	readAll(t, resp.Body)
	f.obs.last(t)
	if factor := f.srv.Calibrator().Factor("claude"); factor == 1 {
		t.Error("the reply's usage did not calibrate the estimator")
	}
	// The client sends the turn back without the signature.
	second := strings.Replace(first, `"messages":[`, `"messages":[`, 1)
	second = strings.TrimSuffix(second, "]}") + `,{"role":"assistant","content":[{"type":"thinking","thinking":"I will read the file."},` +
		`{"type":"tool_use","id":"toolu_sig_1","name":"Read","input":{"path":"a.go"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_sig_1","content":"package a"}]}]}`
	resp = f.post(t, "/v1/messages", second)
	readAll(t, resp.Body)
	ex := f.obs.last(t)
	if got := f.up.LastRequest().Body; !bytes.Contains(got, []byte(`"signature":"EqIssuedSig0001"`)) {
		t.Errorf("forwarded without the restored signature: %.600s", got)
	}
	if ex.SignatureRecoveries != 1 || f.srv.SignatureCacheStats().ToolRecoveries != 1 {
		t.Errorf("recoveries: exchange %d, cache %+v; want 1", ex.SignatureRecoveries, f.srv.SignatureCacheStats())
	}
	if !strings.Contains(logs.String(), "Recovered signature from TOOL cache") {
		t.Errorf("log lacks the recovery:\n%s", logs.String())
	}
	// The ledger names the restored signature where it was, and the forwarded body recorded is
	// what the upstream received.
	var restored []compact.Edit
	for _, st := range ex.Compaction {
		for _, e := range st.Edits {
			if e.Kind == compact.EditSignatureRestored {
				restored = append(restored, e)
			}
		}
	}
	if len(restored) != 1 || restored[0].Message != 1 || restored[0].Block != 0 {
		t.Errorf("ledger %+v; want one signature-restored at messages[1].content[0]", ex.Compaction)
	}
	if !bytes.Equal(ex.ForwardedBody, f.up.LastRequest().Body) {
		t.Errorf("the recorded forwarded body differs from what the upstream received")
	}
}
