package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"longhaul/proxy/proxytest"
)

// The flags' simulation through the real mux: prompt caching billed and listed, the window
// refusing in each protocol's words, and the agent scripting nothing for a refused request.

func postRaw(t *testing.T, srv *httptest.Server, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-test-agent")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return res.StatusCode, b
}

func newSimulatingServer(t *testing.T, sim simulation) *httptest.Server {
	t.Helper()
	ups := newUpstreams(0, true)
	ups.simulate(sim)
	srv := httptest.NewServer(ups.Handler())
	t.Cleanup(func() { srv.Close(); ups.Close() })
	return srv
}

// cachedRequest is a Messages request whose system prompt (well over the 1,024-token minimum)
// carries a breakpoint; messages ends it.
func cachedRequest(messages string) string {
	return `{"model":"claude-sonnet-4-5-20250929","max_tokens":100,"system":[{"type":"text","text":"` +
		strings.Repeat("Keep every change small and tested. ", 300) + `","cache_control":{"type":"ephemeral"}}],"tools":` + twoTools +
		`,"messages":` + messages + `}`
}

func TestSimulationFlagsCache(t *testing.T) {
	srv := newSimulatingServer(t, simulation{cacheTTL: 5 * time.Minute})
	body := cachedRequest(`[{"role":"user","content":"fix it"}]`)
	var usages []proxytest.Usage
	for range 2 {
		status, b := postRaw(t, srv, "/v1/messages", body)
		var m proxytest.Message
		if err := json.Unmarshal(b, &m); status != 200 || err != nil {
			t.Fatalf("POST = %d %s", status, b)
		}
		usages = append(usages, m.Usage)
	}
	if usages[0].CacheCreationInputTokens == 0 || usages[0].CacheReadInputTokens != 0 ||
		usages[1].CacheReadInputTokens != usages[0].CacheCreationInputTokens || usages[1].CacheCreationInputTokens != 0 {
		t.Errorf("usages %+v; want a write, then a read of the same prefix", usages)
	}
	res, err := http.Get(srv.URL + "/scripted/cache")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var rep cacheReport
	if err := json.NewDecoder(res.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Enabled || rep.Requests != 2 || rep.Hits != 1 || rep.Reads != usages[1].CacheReadInputTokens ||
		rep.InputCostUSD <= 0 || rep.EffectiveInputTokens >= float64(rep.Input()) {
		t.Errorf("GET /scripted/cache = %+v; want 2 requests, 1 hit, cheaper than uncached", rep)
	}
}

func TestSimulationFlagsWindow(t *testing.T) {
	short := cachedRequest(`[{"role":"user","content":"fix it"},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_y","name":"list_dir","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_y","content":"ok"}]}]`)
	long := cachedRequest(`[{"role":"user","content":"` + strings.Repeat("fix it ", 2000) + `"}]`)
	window, err := proxytest.CountTokens([]byte(short))
	if err != nil {
		t.Fatal(err)
	}
	srv := newSimulatingServer(t, simulation{window: window})

	status, b := postRaw(t, srv, "/v1/messages", long)
	if status != 400 || !strings.Contains(string(b), `"message":"prompt is too long: `) || !strings.Contains(string(b), ` > `+itoa(window)+` maximum"`) {
		t.Errorf("over the window = %d %s; want 400 prompt is too long", status, b)
	}
	// The agent queued nothing for the refusal: the next request gets its own answer (text
	// after the last tool's result), not the tool call scripted for the refused one.
	status, b = postRaw(t, srv, "/v1/messages", short)
	if status != 200 || strings.Contains(string(b), `"tool_use"`) || !strings.Contains(string(b), "Done: the scripted agent") {
		t.Errorf("after a refusal = %d %s; want the agent's text answer", status, b)
	}

	chat := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("fix it ", 4000) + `"}]}`
	status, b = postRaw(t, srv, "/v1/chat/completions", chat)
	if status != 400 || !strings.Contains(string(b), `"code":"context_length_exceeded"`) {
		t.Errorf("Chat over the window = %d %s; want 400 context_length_exceeded", status, b)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
