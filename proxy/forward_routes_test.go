package proxy

// The routes beside /v1/messages (count_tokens, models, probes) and the
// attempt loop's retries and passed-on failures.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

func TestRetryBeforeFirstByteUsesAnotherAccount(t *testing.T) {
	tests := []struct {
		name  string
		first proxytest.Reply
	}{
		{"overloaded", proxytest.Overloaded()},
		{"server error", proxytest.ServerError()},
		{"rate limited", proxytest.RateLimited(30)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Config{})
			second := proxytest.NewUpstream()
			defer second.Close()
			f.srv.SetAccounts([]pool.Account{
				{ID: 1, Label: "a", BaseURL: f.up.URL, Secret: "sk-aaaaaaaaaaaa", Enabled: true},
				{ID: 2, Label: "b", BaseURL: second.URL, Secret: "sk-bbbbbbbbbbbb", Enabled: true},
			})
			f.up.SetDefault(tt.first)
			second.SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", "from b")})
			resp := f.post(t, "/v1/messages", streamRequest("m"))
			body := readAll(t, resp.Body)
			if resp.StatusCode != 200 || !strings.Contains(body, "message_stop") || len(second.Requests()) != 1 {
				t.Fatalf("status %d body %q; want 200 from account b", resp.StatusCode, body)
			}
			ex := f.obs.last(t)
			if len(ex.Attempts) != 2 || ex.Attempts[0].AccountID != 1 || ex.Attempts[0].Status != tt.first.Status || ex.Attempts[1].AccountID != 2 || ex.Attempts[1].Status != 200 {
				t.Errorf("attempts = %+v", ex.Attempts)
			}
			if second.LastRequest().Header.Get("X-Api-Key") != "sk-bbbbbbbbbbbb" {
				t.Error("retry did not use account b's key")
			}
		})
	}
}

func TestConnectionDroppedBeforeFirstEventIsRetried(t *testing.T) {
	f := newFixture(t, Config{})
	dropper := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }))
	defer dropper.Close()
	f.srv.SetAccounts([]pool.Account{
		{ID: 1, Label: "dropper", BaseURL: dropper.URL, Secret: "sk-aaaaaaaaaaaa", Enabled: true},
		{ID: 2, Label: "good", BaseURL: f.up.URL, Secret: "sk-bbbbbbbbbbbb", Enabled: true},
	})
	f.up.SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", "recovered")})
	resp := f.post(t, "/v1/messages", streamRequest("m"))
	if body := readAll(t, resp.Body); resp.StatusCode != 200 || !strings.Contains(body, "message_stop") || len(f.up.Requests()) != 1 {
		t.Fatalf("status %d body %q; want 200 from the second account", resp.StatusCode, body)
	}
	if ex := f.obs.last(t); len(ex.Attempts) != 2 || ex.Attempts[0].Status != 0 || ex.Attempts[0].Error == "" {
		t.Errorf("attempts = %+v; want a failed connection then success", ex.Attempts)
	}
}

func TestCountTokensModelsAndProbes(t *testing.T) {
	f := newFixture(t, Config{})
	resp := f.post(t, "/v1/messages/count_tokens?beta=true", `{"model":"m","messages":[{"role":"user","content":"`+strings.Repeat("w", 400)+`"}]}`)
	var ct struct {
		InputTokens int `json:"input_tokens"`
	}
	if err := json.Unmarshal([]byte(readAll(t, resp.Body)), &ct); err != nil || resp.StatusCode != 200 || ct.InputTokens <= 0 {
		t.Errorf("count_tokens = %d %+v %v", resp.StatusCode, ct, err)
	}
	if got := f.up.LastRequest(); got.Path != "/v1/messages/count_tokens" || got.RawQuery != "beta=true" {
		t.Errorf("count_tokens forwarded to %s?%s", got.Path, got.RawQuery)
	}
	r, _ := f.front.Client().Get(f.front.URL + "/v1/models")
	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.Unmarshal([]byte(readAll(t, r.Body)), &models); err != nil || len(models.Data) == 0 {
		t.Errorf("models = %+v %v", models, err)
	}
	for _, probe := range []struct{ method, path string }{{"HEAD", "/"}, {"GET", "/healthz"}} {
		req, _ := http.NewRequest(probe.method, f.front.URL+probe.path, nil)
		r, err := f.front.Client().Do(req)
		if err != nil || r.StatusCode != 200 {
			t.Errorf("%s %s = %v %v; want 200", probe.method, probe.path, r.StatusCode, err)
		}
		r.Body.Close()
	}
}

// An upstream that cannot count tokens (an OpenAI-compatible endpoint, an
// older gateway) gets count_tokens answered from the calibrated estimator.
func TestCountTokensFallsBackToTheEstimator(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if !bytes.Contains(b, []byte("claude-nope")) {
			http.NotFound(w, r) // a gateway without the route
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}`)
	}))
	defer up.Close()
	f := newFixture(t, Config{}, pool.Account{ID: 1, BaseURL: up.URL, Secret: "sk-ant-count-test-0001", Enabled: true})
	resp := f.post(t, "/v1/messages/count_tokens", `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"`+strings.Repeat("word ", 400)+`"}]}`)
	body := readAll(t, resp.Body)
	var ct struct {
		InputTokens int `json:"input_tokens"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &ct) != nil {
		t.Fatalf("count_tokens = %d %s; want 200 with input_tokens", resp.StatusCode, body)
	}
	// 2,000 ASCII characters at ~4 per token, plus a few for the structure.
	if ct.InputTokens < 480 || ct.InputTokens > 560 || resp.Header.Get("Longhaul-Token-Count") != "estimated" {
		t.Errorf("input_tokens = %d (header %q); want ≈ 500, marked estimated", ct.InputTokens, resp.Header.Get("Longhaul-Token-Count"))
	}
	if ex := f.obs.last(t); ex.Status != http.StatusOK || ex.TokensAfter != ct.InputTokens {
		t.Errorf("exchange status %d tokens %d; want 200 and %d", ex.Status, ex.TokensAfter, ct.InputTokens)
	}
	// A 404 about the model is the upstream's verdict on the request: passed on.
	resp = f.post(t, "/v1/messages/count_tokens", `{"model":"claude-nope","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(readAll(t, resp.Body), "claude-nope") {
		t.Errorf("unknown model: status %d; want the upstream's 404", resp.StatusCode)
	}
}

// An upstream error passed on to the client is kept as the reply body when
// history captures bodies.
func TestPassedOnErrorIsCaptured(t *testing.T) {
	f := newFixture(t, Config{CaptureBodies: true, MaxAttempts: 1})
	f.up.Enqueue(proxytest.ErrorReply(http.StatusBadRequest, "invalid_request_error", "max_tokens: too large"))
	resp := f.post(t, "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":999999,"messages":[{"role":"user","content":"hi"}]}`)
	readAll(t, resp.Body)
	ex := f.obs.last(t)
	if ex.Status != http.StatusBadRequest || !strings.Contains(string(ex.ReplyBody), "max_tokens: too large") || len(ex.RequestBody) == 0 {
		t.Errorf("exchange status %d reply %q request %d bytes; want the 400 body and the request kept", ex.Status, ex.ReplyBody, len(ex.RequestBody))
	}
}
