package proxy

// The protocol seam over real HTTP: each client protocol against each upstream kind, the
// client's bytes forwarded as they came when both sides speak the same protocol, errors in the
// client's shape, routing by model, and the merged model list.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"longhaul/proxy/gemini"
	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
	"longhaul/proxy/sse"
)

const (
	anthropicSecret = "sk-ant-upstream-secret-0001"
	responsesSecret = "sk-openai-upstream-secret-0002"
	chatSecret      = "sk-chat-upstream-secret-0004"
	geminiSecret    = "AIza-gemini-upstream-secret-0003"
)

// seam is a proxy in front of one scripted upstream of each protocol.
type seam struct {
	anthropic *proxytest.Upstream
	responses *proxytest.ResponsesUpstream
	gemini    *proxytest.GeminiUpstream
	chat      *proxytest.ChatUpstream
	srv       *Server
	front     *httptest.Server
	obs       *recorder
}

// newSeam starts the three upstreams and a proxy with one account per kind in kinds.
func newSeam(tb testing.TB, cfg Config, kinds ...string) *seam {
	tb.Helper()
	s := &seam{anthropic: proxytest.NewUpstream(), responses: proxytest.NewResponsesUpstream(), gemini: proxytest.NewGeminiUpstream(), chat: proxytest.NewChatUpstream(), obs: newRecorder()}
	s.gemini.Key = geminiSecret
	s.chat.Key = chatSecret
	srv, err := New(cfg, Options{Observer: s.obs})
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	var accounts []pool.Account
	for i, k := range kinds {
		a := pool.Account{ID: int64(i + 1), Label: k, Kind: k, Enabled: true}
		switch k {
		case pool.KindAnthropic:
			a.BaseURL, a.Secret = s.anthropic.URL, anthropicSecret
		case pool.KindOpenAIResponses:
			a.BaseURL, a.Secret = s.responses.URL+"/v1", responsesSecret
		case pool.KindGemini:
			a.BaseURL, a.Secret = s.gemini.URL, geminiSecret
		case pool.KindOpenAI:
			a.BaseURL, a.Secret = s.chat.URL+"/v1", chatSecret
		}
		accounts = append(accounts, a)
	}
	srv.SetAccounts(accounts)
	s.srv = srv
	s.front = httptest.NewServer(srv.Handler())
	tb.Cleanup(func() {
		s.anthropic.Release()
		s.front.Close()
		s.anthropic.Close()
		s.responses.Close()
		s.gemini.Close()
		s.chat.Close()
	})
	return s
}

func (s *seam) post(tb testing.TB, path, body string, header ...string) (*http.Response, string) {
	tb.Helper()
	f := &fixture{front: s.front}
	resp := f.post(tb, path, body, header...)
	defer resp.Body.Close()
	return resp, readAll(tb, resp.Body)
}

func sseNames(tb testing.TB, body string) []string {
	tb.Helper()
	rd := sse.NewReader(strings.NewReader(body), 0)
	var names []string
	for {
		ev, err := rd.Next()
		if err != nil {
			return names
		}
		name := ev.Name
		if name == "" {
			name = "data"
		}
		names = append(names, name)
	}
}

const responsesHello = `{"model":"claude-sonnet-4-5","input":"Say hello.","instructions":"Be brief.","max_output_tokens":256}`

func TestResponsesClientThroughAnthropicUpstream(t *testing.T) {
	s := newSeam(t, Config{}, pool.KindAnthropic)
	resp, body := s.post(t, "/v1/responses", responsesHello, "Content-Type", "application/json")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var r struct {
		ID     string `json:"id"`
		Object string `json:"object"`
		Status string `json:"status"`
		Output []struct {
			Type    string `json:"type"`
			Content []struct {
				Type, Text string
			} `json:"content"`
		} `json:"output"`
		Usage struct {
			InputTokens int `json:"input_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Object != "response" || r.Status != "completed" || len(r.Output) == 0 || !strings.HasPrefix(r.ID, "resp_") {
		t.Fatalf("reply is not a completed response object: %v %s", err, body)
	}
	up := s.anthropic.LastRequest()
	if up.Path != "/v1/messages" || up.Header.Get("X-Api-Key") != anthropicSecret || up.Header.Get("Authorization") != "" {
		t.Errorf("upstream got %s with x-api-key %q, authorization %q; want /v1/messages with the account's key only", up.Path, up.Header.Get("X-Api-Key"), up.Header.Get("Authorization"))
	}
	if !strings.Contains(string(up.Body), `"system":"Be brief."`) {
		t.Errorf("instructions did not become the system prompt: %s", up.Body)
	}
	ex := s.obs.last(t)
	if ex.ClientProtocol != ProtocolOpenAIResponses || ex.UpstreamProtocol != pool.KindAnthropic || ex.Usage.InputTokens == 0 {
		t.Errorf("exchange protocols %q → %q, usage %+v; want openai-responses → anthropic with usage", ex.ClientProtocol, ex.UpstreamProtocol, ex.Usage)
	}

	// The next turn names the first by previous_response_id: the upstream gets the whole
	// conversation, the first reply included.
	next := `{"model":"claude-sonnet-4-5","previous_response_id":"` + r.ID + `","input":"And goodbye.","stream":true}`
	resp, body = s.post(t, "/v1/responses", next, "Content-Type", "application/json")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream status %d, type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	names := sseNames(t, body)
	if len(names) < 3 || names[0] != "response.created" || names[len(names)-1] != "response.completed" {
		t.Errorf("stream events %v; want response.created … response.completed", names)
	}
	up = s.anthropic.LastRequest()
	if !strings.Contains(string(up.Body), "Say hello.") || !strings.Contains(string(up.Body), `"role":"assistant"`) || !strings.Contains(string(up.Body), "And goodbye.") {
		t.Errorf("previous_response_id did not bring the conversation back: %s", up.Body)
	}
}

func TestAnthropicClientThroughResponsesUpstream(t *testing.T) {
	s := newSeam(t, Config{}, pool.KindOpenAIResponses)
	req := `{"model":"gpt-5","max_tokens":512,"stream":true,"messages":[{"role":"user","content":"Say hello."}]}`
	resp, body := s.post(t, "/v1/messages", req, "Content-Type", "application/json", "Anthropic-Version", "2023-06-01", "Anthropic-Beta", "context-1m")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	names := sseNames(t, body)
	if len(names) < 4 || names[0] != "message_start" || names[len(names)-1] != "message_stop" {
		t.Errorf("events %v; want message_start … message_stop", names)
	}
	recs := s.responses.Requests()
	if len(recs) != 1 {
		t.Fatalf("responses upstream got %d requests; want 1", len(recs))
	}
	up := recs[0]
	if up.Header.Get("Authorization") != "Bearer "+responsesSecret || up.Header.Get("X-Api-Key") != "" {
		t.Errorf("upstream credentials: authorization %q, x-api-key %q; want the account's bearer key only", up.Header.Get("Authorization"), up.Header.Get("X-Api-Key"))
	}
	for k := range up.Header {
		if strings.HasPrefix(k, "Anthropic-") {
			t.Errorf("Anthropic header %s reached an OpenAI upstream", k)
		}
	}
	if ex := s.obs.last(t); ex.ClientProtocol != ProtocolAnthropic || ex.UpstreamProtocol != pool.KindOpenAIResponses || ex.StreamOutcome != "complete" {
		t.Errorf("exchange %q → %q outcome %q; want anthropic → openai-responses, complete", ex.ClientProtocol, ex.UpstreamProtocol, ex.StreamOutcome)
	}
}

func TestSameProtocolIsForwardedByteForByte(t *testing.T) {
	t.Run("responses", func(t *testing.T) {
		s := newSeam(t, Config{}, pool.KindOpenAIResponses)
		req := `{"input":"Say hello.",  "model":"gpt-5","store":false,"x_future_field":{"kept":true}}`
		resp, body := s.post(t, "/v1/responses", req, "Content-Type", "application/json", "Authorization", "Bearer client-key")
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		if got := string(s.responses.Requests()[0].Body); got != req {
			t.Errorf("upstream body = %s; want the client's bytes %s", got, req)
		}
		if ex := s.obs.last(t); ex.Usage.OutputTokens == 0 {
			t.Errorf("usage of a relayed reply not read: %+v", ex.Usage)
		}
	})
	t.Run("gemini", func(t *testing.T) {
		s := newSeam(t, Config{}, pool.KindGemini)
		req := `{"contents":[{"role":"user","parts":[{"text":"Say hello."}]}], "safetySettings":[]}`
		resp, body := s.post(t, "/v1beta/models/gemini-2.5-flash:generateContent", req, "Content-Type", "application/json")
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		up := s.gemini.Requests()[0]
		if string(up.Body) != req || up.Path != "/v1beta/models/gemini-2.5-flash:generateContent" || up.Header.Get("X-Goog-Api-Key") != geminiSecret {
			t.Errorf("upstream got %s %s (key %q); want the client's bytes at the same model with the account's key", up.Path, up.Body, up.Header.Get("X-Goog-Api-Key"))
		}
	})
}

func TestGeminiClientThroughAnthropicUpstream(t *testing.T) {
	s := newSeam(t, Config{ClientKey: "local-client-key"}, pool.KindAnthropic)
	req := `{"contents":[{"role":"user","parts":[{"text":"Say hello."}]}],"systemInstruction":{"parts":[{"text":"Be brief."}]}}`
	resp, body := s.post(t, "/v1beta/models/claude-sonnet-4-5:generateContent?key=local-client-key", req, "Content-Type", "application/json")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var r gemini.Response
	if err := json.Unmarshal([]byte(body), &r); err != nil || len(r.Candidates) != 1 || r.Candidates[0].Content == nil || r.UsageMetadata == nil {
		t.Fatalf("reply is not a generateContent response: %v %s", err, body)
	}
	up := s.anthropic.LastRequest()
	if up.RawQuery != "" || strings.Contains(string(up.Body), "local-client-key") || up.Header.Get("X-Api-Key") != anthropicSecret {
		t.Errorf("the client's key travelled upstream or the account's did not: query %q, x-api-key %q", up.RawQuery, up.Header.Get("X-Api-Key"))
	}

	// Streams, in both of Gemini's forms.
	resp, body = s.post(t, "/v1beta/models/claude-sonnet-4-5:streamGenerateContent?alt=sse", req, "Content-Type", "application/json", "X-Goog-Api-Key", "local-client-key")
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "data: {") {
		t.Errorf("SSE stream: status %d, body %q", resp.StatusCode, body)
	}
	resp, body = s.post(t, "/v1beta/models/claude-sonnet-4-5:streamGenerateContent", req, "Content-Type", "application/json", "X-Goog-Api-Key", "local-client-key")
	var chunks []gemini.Response
	if err := json.Unmarshal([]byte(body), &chunks); resp.StatusCode != 200 || err != nil || len(chunks) == 0 {
		t.Errorf("JSON-array stream: status %d, %v, body %q", resp.StatusCode, err, body)
	}

	// Errors in Google's shape: a wrong key, an unknown method.
	for _, tc := range []struct{ path, key string }{
		{"/v1beta/models/claude-sonnet-4-5:generateContent", "wrong"},
		{"/v1beta/models/claude-sonnet-4-5:embedContent", "local-client-key"},
	} {
		resp, body = s.post(t, tc.path, req, "Content-Type", "application/json", "X-Goog-Api-Key", tc.key)
		var e gemini.ErrorBody
		if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code != resp.StatusCode || e.Error.Status == "" || resp.StatusCode < 400 {
			t.Errorf("POST %s: %d %s; want a Google-shaped error", tc.path, resp.StatusCode, body)
		}
	}
}

func TestAnthropicClientThroughGeminiUpstream(t *testing.T) {
	s := newSeam(t, Config{}, pool.KindGemini)
	s.gemini.Enqueue(proxytest.GeminiCalls(proxytest.GeminiCall("read_file", map[string]string{"path": "a.go"})))
	req := `{"model":"gemini-2.5-pro","max_tokens":1024,"stream":true,"thinking":{"type":"enabled","budget_tokens":512},
	"tools":[{"name":"read_file","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}],
	"messages":[{"role":"user","content":"Read a.go"}]}`
	resp, body := s.post(t, "/v1/messages", req, "Content-Type", "application/json")
	if resp.StatusCode != 200 || !strings.Contains(body, `"type":"tool_use"`) || !strings.Contains(body, `"stop_reason":"tool_use"`) {
		t.Fatalf("status %d; want a tool_use stream: %s", resp.StatusCode, body)
	}
	up := s.gemini.Requests()[0]
	if up.Path != "/v1beta/models/gemini-2.5-pro:streamGenerateContent" || up.RawQuery != "alt=sse" {
		t.Errorf("upstream path %s?%s; want the model's streamGenerateContent with alt=sse", up.Path, up.RawQuery)
	}
	// The next turn sends the call back without Gemini's thought signature (the Messages
	// shape has no place for it): the proxy restores it, or the upstream refuses the turn.
	var id string
	for _, line := range strings.Split(body, "\n") {
		if i := strings.Index(line, `"id":"`); i >= 0 && strings.Contains(line, "tool_use") {
			id = line[i+6:]
			id = id[:strings.Index(id, `"`)]
		}
	}
	turn2 := `{"model":"gemini-2.5-pro","max_tokens":1024,
	"tools":[{"name":"read_file","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}],
	"messages":[{"role":"user","content":"Read a.go"},
	{"role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"read_file","input":{"path":"a.go"}}]},
	{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"package a"}]}]}`
	resp, body = s.post(t, "/v1/messages", turn2, "Content-Type", "application/json")
	if resp.StatusCode != 200 || s.gemini.Rejected() != 0 {
		t.Errorf("second turn: status %d, upstream rejections %d: %s", resp.StatusCode, s.gemini.Rejected(), body)
	}
}

func TestUpstreamErrorsReachTheClientInItsShape(t *testing.T) {
	s := newSeam(t, Config{}, pool.KindGemini)
	s.gemini.Enqueue(proxytest.GeminiRateLimited(42 * time.Second))
	resp, body := s.post(t, "/v1/messages", `{"model":"gemini-2.5-pro","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`, "Content-Type", "application/json")
	if resp.StatusCode != 429 || !strings.Contains(body, `"type":"rate_limit_error"`) {
		t.Errorf("status %d %s; want 429 rate_limit_error in Anthropic's shape", resp.StatusCode, body)
	}
	// The cooldown came from Gemini's retryDelay: the account is unavailable for ~42 s.
	_, err := s.srv.Pool().Pick(pool.Pick{Model: "gemini-2.5-pro"}, time.Now())
	var na *pool.NoAccountError
	if !errorsAs(err, &na) || na.RetryAfter < 30*time.Second || na.RetryAfter > 43*time.Second {
		t.Errorf("after a 429 with retryDelay 42s, Pick = %v; want a cooldown of about 42s", err)
	}
}

func TestRoutingByModelAndUnservedModels(t *testing.T) {
	s := newSeam(t, Config{}, pool.KindAnthropic, pool.KindOpenAIResponses)
	resp, body := s.post(t, "/v1/messages", `{"model":"gpt-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`, "Content-Type", "application/json")
	if resp.StatusCode != 200 || len(s.responses.Requests()) != 1 || len(s.anthropic.Requests()) != 0 {
		t.Fatalf("gpt-5 with both kinds: status %d, responses %d, anthropic %d; want it on the OpenAI account: %s", resp.StatusCode, len(s.responses.Requests()), len(s.anthropic.Requests()), body)
	}
	resp, body = s.post(t, "/v1/responses", `{"model":"claude-sonnet-4-5","input":"hi"}`, "Content-Type", "application/json")
	if resp.StatusCode != 200 || len(s.anthropic.Requests()) != 1 {
		t.Fatalf("claude via Responses: status %d, anthropic %d; want it on the Anthropic account: %s", resp.StatusCode, len(s.anthropic.Requests()), body)
	}

	// A model no account serves: 404 in the client's shape, naming the model and the kinds.
	s.srv.SetAccounts([]pool.Account{{ID: 1, Kind: pool.KindAnthropic, BaseURL: s.anthropic.URL, Secret: anthropicSecret, Enabled: true, Models: []string{"claude-*"}}})
	resp, body = s.post(t, "/v1/responses", `{"model":"mistral-large","input":"hi"}`, "Content-Type", "application/json")
	var e struct {
		Error struct{ Message, Type, Code string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || resp.StatusCode != 404 || e.Error.Code != "model_not_found" ||
		!strings.Contains(e.Error.Message, "mistral-large") || !strings.Contains(e.Error.Message, "anthropic") {
		t.Errorf("unserved model: %d %s; want 404 model_not_found naming the model and the kinds", resp.StatusCode, body)
	}
}

func TestModelListIsMergedAndAnsweredInTheCallersShape(t *testing.T) {
	cfg := Config{ModelMap: []pool.ModelMapping{{Pattern: "fast", Model: "gemini-2.5-flash"}}}
	s := newSeam(t, cfg, pool.KindAnthropic, pool.KindGemini)
	// A third account whose list cannot be read adds nothing and takes nothing away.
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 500) }))
	defer dead.Close()
	accounts := s.srv.Pool().Accounts()
	s.srv.SetAccounts(append(accounts, pool.Account{ID: 9, Kind: pool.KindOpenAI, BaseURL: dead.URL, Secret: "sk-dead-account-0009", Enabled: true}))

	get := func(path string, header ...string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, s.front.URL+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := s.front.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b := bufio.NewReader(resp.Body)
		return resp.StatusCode, readAll(t, b)
	}
	_, body := get("/v1/models", "Anthropic-Version", "2023-06-01")
	var ant struct {
		Data []struct{ Type, ID string } `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &ant); err != nil || len(ant.Data) == 0 || ant.Data[0].Type != "model" {
		t.Fatalf("Anthropic list: %v %s", err, body)
	}
	for _, want := range []string{"gemini-2.5-pro", "fast"} {
		if !strings.Contains(body, `"`+want+`"`) {
			t.Errorf("merged list lacks %s: %s", want, body)
		}
	}
	_, body = get("/v1/models", "Authorization", "Bearer any")
	if !strings.Contains(body, `"object":"list"`) || !strings.Contains(body, `"gemini-2.5-flash"`) {
		t.Errorf("OpenAI list: %s", body)
	}
	status, body := get("/v1beta/models")
	if status != 200 || !strings.Contains(body, `"name":"models/gemini-2.5-pro"`) {
		t.Errorf("Gemini list: %d %s", status, body)
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

func TestLayer3SummaryThroughAnAccountOfAnotherProtocol(t *testing.T) {
	cfg := Config{Compaction: CompactionConfig{ContextLimits: map[string]int{"*": 4000}}}
	s := newSeam(t, cfg, pool.KindOpenAIResponses)
	var msgs []string
	for i := range 6 {
		msgs = append(msgs, `{"role":"user","content":"`+strings.Repeat("Explain the design of module "+string(rune('A'+i))+". ", 120)+`"}`,
			`{"role":"assistant","content":"`+strings.Repeat("Module details follow. ", 100)+`"}`)
	}
	msgs = append(msgs, `{"role":"user","content":"Now summarise what we decided."}`)
	req := `{"model":"gpt-5","max_tokens":256,"messages":[` + strings.Join(msgs, ",") + `]}`
	resp, body := s.post(t, "/v1/messages", req, "Content-Type", "application/json")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	recs := s.responses.Requests()
	if len(recs) != 2 {
		t.Fatalf("responses upstream got %d requests; want the summary call and the compacted request", len(recs))
	}
	if recs[0].Header.Get("Authorization") != "Bearer "+responsesSecret || !strings.Contains(string(recs[0].Body), "summar") {
		t.Errorf("first request is not the summary call with the account's key: %s", recs[0].Body)
	}
	ex := s.obs.last(t)
	layers := ""
	for _, st := range ex.Compaction {
		layers += st.Layer + " "
	}
	if !strings.Contains(layers, "Layer-3") || len(recs[1].Body) >= len(req) {
		t.Errorf("compaction %q, forwarded %d bytes of %d; want a Layer-3 fork", layers, len(recs[1].Body), len(req))
	}
}

func TestChatClientThroughAnthropicUpstream(t *testing.T) {
	s := newSeam(t, Config{}, pool.KindAnthropic)
	req := `{"model":"claude-sonnet-4-5","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Say hello."}],"max_completion_tokens":128}`
	resp, body := s.post(t, "/v1/chat/completions", req, "Content-Type", "application/json", "Authorization", "Bearer anything")
	var c struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Role    string  `json:"role"`
				Content *string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(body), &c); err != nil || resp.StatusCode != 200 || c.Object != "chat.completion" || len(c.Choices) != 1 ||
		c.Choices[0].Message.Content == nil || c.Choices[0].FinishReason != "stop" || c.Usage.PromptTokens == 0 {
		t.Fatalf("status %d: %v %s; want a chat.completion", resp.StatusCode, err, body)
	}
	up := s.anthropic.LastRequest()
	if !strings.Contains(string(up.Body), `"system":"Be brief."`) || up.Header.Get("Authorization") != "" {
		t.Errorf("upstream request %s (authorization %q)", up.Body, up.Header.Get("Authorization"))
	}

	stream := `{"model":"claude-sonnet-4-5","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Say hello."}]}`
	resp, body = s.post(t, "/v1/chat/completions", stream, "Content-Type", "application/json")
	if resp.StatusCode != 200 || !strings.HasSuffix(strings.TrimSpace(body), "data: [DONE]") || !strings.Contains(body, `"choices":[]`) || !strings.Contains(body, `"prompt_tokens"`) {
		t.Errorf("stream: status %d; want chunks, a usage chunk and [DONE]: %s", resp.StatusCode, body)
	}
	if ex := s.obs.last(t); ex.ClientProtocol != ProtocolOpenAIChat || ex.StreamOutcome != "complete" {
		t.Errorf("exchange %q outcome %q", ex.ClientProtocol, ex.StreamOutcome)
	}

	// Refusals in OpenAI's shape, naming the parameter.
	resp, body = s.post(t, "/v1/chat/completions", `{"model":"claude-sonnet-4-5","n":2,"messages":[{"role":"user","content":"hi"}]}`, "Content-Type", "application/json")
	var e struct {
		Error struct {
			Message, Type string
			Param         *string
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || resp.StatusCode != 400 || e.Error.Type != "invalid_request_error" || e.Error.Param == nil || *e.Error.Param != "n" {
		t.Errorf("n=2: %d %s; want 400 invalid_request_error with param n", resp.StatusCode, body)
	}
	resp, body = s.post(t, "/v1/chat/completions", `{"model":`, "Content-Type", "application/json")
	if err := json.Unmarshal([]byte(body), &e); err != nil || resp.StatusCode != 400 || e.Error.Message == "" {
		t.Errorf("malformed JSON: %d %s; want 400 in OpenAI's shape", resp.StatusCode, body)
	}
}

func TestAnthropicClientThroughChatUpstream(t *testing.T) {
	s := newSeam(t, Config{}, pool.KindOpenAI)
	s.chat.Enqueue(proxytest.ChatReply{Completion: proxytest.ChatCalls(
		proxytest.ChatToolCall{ID: "call_a", Name: "read_file", Args: `{"path":"a.go"}`},
		proxytest.ChatToolCall{ID: "call_b", Name: "read_file", Args: `{"path":"b.go"}`})})
	tools := `[{"name":"read_file","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}]`
	req := `{"model":"deepseek-chat","max_tokens":256,"stream":true,"tools":` + tools + `,"messages":[{"role":"user","content":"Read a.go and b.go"}]}`
	resp, body := s.post(t, "/v1/messages", req, "Content-Type", "application/json", "Anthropic-Version", "2023-06-01")
	if resp.StatusCode != 200 || strings.Count(body, `"type":"tool_use"`) != 2 || !strings.Contains(body, `"stop_reason":"tool_use"`) {
		t.Fatalf("status %d; want two parallel tool_use blocks: %s", resp.StatusCode, body)
	}
	up := s.chat.Requests()[0]
	// A compatible server (not api.openai.com) reads max_tokens, as DeepSeek, Ollama and vLLM document.
	if up.Path != "/v1/chat/completions" || up.Header.Get("Authorization") != "Bearer "+chatSecret || !strings.Contains(string(up.Body), `"include_usage":true`) ||
		!strings.Contains(string(up.Body), `"max_tokens":256`) {
		t.Errorf("upstream got %s (authorization %q): %s", up.Path, up.Header.Get("Authorization"), up.Body)
	}
	turn2 := `{"model":"deepseek-chat","max_tokens":256,"tools":` + tools + `,"messages":[{"role":"user","content":"Read a.go and b.go"},
	{"role":"assistant","content":[{"type":"tool_use","id":"call_a","name":"read_file","input":{"path":"a.go"}},{"type":"tool_use","id":"call_b","name":"read_file","input":{"path":"b.go"}}]},
	{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_a","content":"package a"},{"type":"tool_result","tool_use_id":"call_b","content":"package b"}]}]}`
	resp, body = s.post(t, "/v1/messages", turn2, "Content-Type", "application/json")
	if resp.StatusCode != 200 || s.chat.Rejected() != 0 || !strings.Contains(body, `"type":"message"`) {
		t.Errorf("second turn: %d (rejected %d): %s", resp.StatusCode, s.chat.Rejected(), body)
	}
	// An upstream error reaches the client in its own shape (refused again after the proxy
	// learned the window and retried: nothing more to compact).
	tooLong := proxytest.ChatErrorReply(400, "context_length_exceeded", "This model's maximum context length is 65536 tokens.")
	s.chat.Enqueue(tooLong, tooLong)
	resp, body = s.post(t, "/v1/messages", `{"model":"deepseek-chat","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`, "Content-Type", "application/json")
	if resp.StatusCode != 400 || !strings.Contains(body, `"type":"invalid_request_error"`) || !strings.Contains(body, "prompt is too long") {
		t.Errorf("context_length_exceeded: %d %s; want 400 saying the prompt is too long, in Anthropic's shape", resp.StatusCode, body)
	}
}

func TestChatClientOnChatUpstreamIsForwardedByteForByte(t *testing.T) {
	s := newSeam(t, Config{}, pool.KindOpenAI)
	req := `{"messages":[{"role":"user","content":"hi"}],  "model":"gpt-4o-mini","seed":7,"logit_bias":{"50256":-100}}`
	resp, body := s.post(t, "/v1/chat/completions", req, "Content-Type", "application/json", "Authorization", "Bearer local", "X-Stainless-Lang", "js", "Openai-Organization", "org-client")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	up := s.chat.Requests()[0]
	if string(up.Body) != req || up.Header.Get("X-Stainless-Lang") != "js" || up.Header.Get("Openai-Organization") != "" || up.Header.Get("Authorization") != "Bearer "+chatSecret {
		t.Errorf("upstream got %s with headers %v; want the client's bytes, its SDK headers, the account's key and no organisation", up.Body, up.Header)
	}
	if ex := s.obs.last(t); ex.Usage.InputTokens == 0 || ex.UpstreamProtocol != pool.KindOpenAI {
		t.Errorf("usage %+v, upstream %q", ex.Usage, ex.UpstreamProtocol)
	}
}

func TestCountTokensInTheClientsShape(t *testing.T) {
	req := `{"contents":[{"role":"user","parts":[{"text":"How many tokens is this?"}]}]}`
	t.Run("gemini upstream counts itself", func(t *testing.T) {
		s := newSeam(t, Config{}, pool.KindGemini)
		resp, body := s.post(t, "/v1beta/models/gemini-2.5-flash:countTokens", req, "Content-Type", "application/json")
		up := s.gemini.Requests()
		if resp.StatusCode != 200 || !strings.Contains(body, `"totalTokens"`) || len(up) != 1 || up[0].Path != "/v1beta/models/gemini-2.5-flash:countTokens" {
			t.Errorf("status %d %s, upstream %v; want the upstream's count", resp.StatusCode, body, up)
		}
	})
	t.Run("other upstreams: the estimator", func(t *testing.T) {
		s := newSeam(t, Config{}, pool.KindAnthropic)
		resp, body := s.post(t, "/v1beta/models/claude-sonnet-4-5:countTokens", req, "Content-Type", "application/json")
		var c struct {
			TotalTokens int `json:"totalTokens"`
		}
		if err := json.Unmarshal([]byte(body), &c); err != nil || resp.StatusCode != 200 || c.TotalTokens <= 0 || resp.Header.Get("Longhaul-Token-Count") != "estimated" {
			t.Errorf("status %d %s; want an estimated totalTokens", resp.StatusCode, body)
		}
	})
}

func TestPromptTooLongReachesOpenAIClientsAsContextLengthExceeded(t *testing.T) {
	s := newSeam(t, Config{}, pool.KindAnthropic)
	tooLong := proxytest.Reply{Status: 400, Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215000 tokens > 200000 maximum"}}`)}
	s.anthropic.Enqueue(tooLong, tooLong) // refused again after the window was learned: passed on
	resp, body := s.post(t, "/v1/chat/completions", `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`, "Content-Type", "application/json")
	if resp.StatusCode != 400 || !strings.Contains(body, `"code":"context_length_exceeded"`) {
		t.Errorf("status %d %s; want 400 context_length_exceeded", resp.StatusCode, body)
	}
}

func TestGeminiQueryKeyIsAcceptedOnlyOnGeminiRoutes(t *testing.T) {
	s := newSeam(t, Config{ClientKey: "local-client-key"}, pool.KindAnthropic)
	gen := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	resp, body := s.post(t, "/v1beta/models/claude-sonnet-4-5:generateContent?key=wrong", gen, "Content-Type", "application/json")
	if resp.StatusCode != 401 || !strings.Contains(body, `"status":"UNAUTHENTICATED"`) {
		t.Errorf("wrong ?key=: %d %s; want 401 in Google's shape", resp.StatusCode, body)
	}
	resp, body = s.post(t, "/v1/messages?key=local-client-key", `{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, "Content-Type", "application/json")
	if resp.StatusCode != 401 {
		t.Errorf("?key= on /v1/messages: %d %s; want 401 (a key in a URL is only taken where Google's SDKs put it)", resp.StatusCode, body)
	}
	resp, body = s.post(t, "/v1beta/models/claude-sonnet-4-5:generateContent?key=local-client-key", gen, "Content-Type", "application/json")
	if resp.StatusCode != 200 {
		t.Fatalf("right ?key=: %d %s", resp.StatusCode, body)
	}
	if ex := s.obs.last(t); strings.Contains(ex.Path, "local-client-key") {
		t.Errorf("the recorded path %q carries the client's key", ex.Path)
	}
}

func TestScreenedChatRequestsSkipTheTranslationButNotTheEngine(t *testing.T) {
	s := newSeam(t, Config{}, pool.KindOpenAI, pool.KindAnthropic)
	// Small, nothing for the engine: forwarded as it came, session from the client's body.
	small := `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"user":"alice"}`
	resp, body := s.post(t, "/v1/chat/completions", small, "Content-Type", "application/json")
	if resp.StatusCode != 200 || string(s.chat.Requests()[0].Body) != small {
		t.Fatalf("status %d %s; want the client's bytes upstream", resp.StatusCode, body)
	}
	if ex := s.obs.last(t); ex.SessionID != "alice" || ex.ContextLimit == 0 {
		t.Errorf("session %q, limit %d; want alice and the model's window", ex.SessionID, ex.ContextLimit)
	}
	// The same client on a Claude model: translated when the Anthropic account takes it.
	resp, body = s.post(t, "/v1/chat/completions", `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`, "Content-Type", "application/json")
	if up := s.anthropic.LastRequest(); resp.StatusCode != 200 || !strings.Contains(string(up.Body), `"max_tokens":32000`) {
		t.Errorf("status %d %s; want a Messages request upstream", resp.StatusCode, body)
	}
	// A saved-to-a-file notice in a tool result is the compressor's at any size: not screened.
	notice := `{"model":"gpt-4o","messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"run","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"Output too large (90 KB). Full output saved to: /tmp/out.txt\\n` + strings.Repeat("line\\n", 50) + `"},{"role":"assistant","content":"Read it."},{"role":"user","content":"next"}]}`
	resp, body = s.post(t, "/v1/chat/completions", notice, "Content-Type", "application/json")
	if resp.StatusCode != 200 || string(s.chat.Requests()[1].Body) == notice {
		t.Errorf("status %d %s; want the notice compressed, not forwarded as it came", resp.StatusCode, body)
	}
	// Malformed JSON is still refused here, in OpenAI's shape.
	resp, body = s.post(t, "/v1/chat/completions", `{"model":"gpt-4o","messages":[}`, "Content-Type", "application/json")
	if resp.StatusCode != 400 || !strings.Contains(body, `"invalid_request_error"`) {
		t.Errorf("malformed: %d %s", resp.StatusCode, body)
	}
}

func TestTranslatedRequestsKeepTheMessagesAPIRules(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // substrings of what reaches Anthropic
		not      []string
	}{
		{"max_tokens is required", `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`, []string{`"max_tokens":32000`}, nil},
		{"sampling is left to its defaults with thinking", `{"model":"claude-sonnet-4-5","reasoning_effort":"low","temperature":0.2,"top_p":0.5,"messages":[{"role":"user","content":"hi"}]}`,
			[]string{`"thinking"`}, []string{`"temperature"`, `"top_p"`}},
		{"a forced tool turns thinking off", `{"model":"claude-sonnet-4-5","reasoning_effort":"high","tool_choice":{"type":"function","function":{"name":"run"}},"tools":[{"type":"function","function":{"name":"run","parameters":{"type":"object"}}}],"messages":[{"role":"user","content":"hi"}]}`,
			[]string{`"tool_choice"`}, []string{`"thinking"`}},
		{"the budget stays below max_tokens", `{"model":"claude-sonnet-4-5","reasoning_effort":"high","max_completion_tokens":1000,"messages":[{"role":"user","content":"hi"}]}`,
			[]string{`"max_tokens":1000`}, []string{`"budget_tokens":24576`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSeam(t, Config{}, pool.KindAnthropic)
			resp, body := s.post(t, "/v1/chat/completions", tt.in, "Content-Type", "application/json")
			got := string(s.anthropic.LastRequest().Body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d %s", resp.StatusCode, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("upstream got %s; want %s in it", got, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("upstream got %s; want no %s", got, n)
				}
			}
		})
	}
}
func TestMessagesAPIRulesRaisesMaxTokensAboveTheBudget(t *testing.T) {
	in := `{"model":"m","max_tokens":1000,"thinking":{"type":"enabled","budget_tokens":4096},"messages":[]}`
	out, err := messagesAPIRules([]byte(in))
	if want := `{"model":"m","max_tokens":5096,"thinking":{"type":"enabled","budget_tokens":4096},"messages":[]}`; err != nil || string(out) != want {
		t.Errorf("messagesAPIRules(%s) = %s, %v; want %s", in, out, err, want)
	}
	ok := `{"model":"m","max_tokens":9000,"thinking":{"type":"enabled","budget_tokens":4096},"messages":[]}`
	if out, _ := messagesAPIRules([]byte(ok)); string(out) != ok {
		t.Errorf("a request within the rules changed: %s", out)
	}
}

func TestClaudeCodeThinkingIsNotAskedOfModelsThatRefuseIt(t *testing.T) {
	cfg := Config{ModelMap: []pool.ModelMapping{{Pattern: "claude-*", Model: "gpt-4.1", Account: pool.KindOpenAI}}}
	s := newSeam(t, cfg, pool.KindOpenAI)
	req := `{"model":"claude-sonnet-4-5","max_tokens":2048,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"hi"}]}`
	resp, body := s.post(t, "/v1/messages", req, "Content-Type", "application/json")
	up := string(s.chat.Requests()[0].Body)
	if resp.StatusCode != 200 || strings.Contains(up, "reasoning_effort") || !strings.Contains(up, `"model":"gpt-4.1"`) {
		t.Errorf("status %d %s; upstream got %s; want gpt-4.1 without reasoning_effort", resp.StatusCode, body, up)
	}
	cfg.ModelMap[0].Model = "o4-mini"
	if err := s.srv.Reconfigure(cfg); err != nil {
		t.Fatal(err)
	}
	s.post(t, "/v1/messages", req, "Content-Type", "application/json")
	if up := string(s.chat.Requests()[1].Body); !strings.Contains(up, "reasoning_effort") {
		t.Errorf("a reasoning model lost the effort: %s", up)
	}
}

func TestRefusedRequestsAreRecordedWithoutTheirBody(t *testing.T) {
	s := newSeam(t, Config{ClientKey: "local-client-key"}, pool.KindAnthropic)
	resp, _ := s.post(t, "/v1/chat/completions", `{"model":"gpt-4o","messages":[{"role":"user","content":"secret plans"}]}`, "Content-Type", "application/json", "Authorization", "Bearer wrong")
	ex := s.obs.last(t)
	if resp.StatusCode != 401 || ex.Status != 401 || ex.Route != "chat" || ex.ClientProtocol != ProtocolOpenAIChat || ex.ErrorType != "authentication_error" || ex.RequestBody != nil || ex.BytesIn != 0 {
		t.Errorf("refused exchange %+v (client saw %d); want a 401 record of the chat route without its body", ex, resp.StatusCode)
	}
	resp, _ = s.post(t, "/v1beta/models/gemini-2.5-pro:embedContent", `{}`, "Content-Type", "application/json", "X-Goog-Api-Key", "local-client-key")
	if ex := s.obs.last(t); resp.StatusCode != 404 || ex.Status != 404 || ex.ClientProtocol != ProtocolGemini {
		t.Errorf("unknown Gemini method: %d, record %+v", resp.StatusCode, ex)
	}
}

func TestOfficialOpenAIGetsMaxCompletionTokens(t *testing.T) {
	for _, tt := range []struct {
		base string
		want bool
	}{{"https://api.openai.com/v1", true}, {"https://API.openai.com/v1/", true}, {"https://api.deepseek.com/v1", false}, {"http://localhost:11434/v1", false}} {
		if got := officialOpenAI(tt.base); got != tt.want {
			t.Errorf("officialOpenAI(%q) = %v; want %v", tt.base, got, tt.want)
		}
	}
}

func TestToolInventoryIsRecorded(t *testing.T) {
	s := newSeam(t, Config{}, pool.KindAnthropic, pool.KindOpenAI)
	s.anthropic.Enqueue(proxytest.Reply{Message: &proxytest.Message{Content: []proxytest.Block{
		proxytest.ToolUse("toolu_1", "read_file", `{"path":"a.go"}`)}, StopReason: "tool_use"}})
	tools := `[{"name":"read_file","input_schema":{"type":"object"}},{"name":"write_file","input_schema":{"type":"object"}},{"name":"run","input_schema":{"type":"object"}}]`
	resp, body := s.post(t, "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":64,"tools":`+tools+`,"messages":[{"role":"user","content":"go"}]}`, "Content-Type", "application/json")
	ex := s.obs.last(t)
	if resp.StatusCode != 200 || ex.Tools != 3 || ex.ToolTokens <= 0 || len(ex.ToolsCalled) != 1 || ex.ToolsCalled[0] != "read_file" {
		t.Errorf("status %d %s: tools %d (%d tokens), called %v; want 3 offered, read_file called", resp.StatusCode, body, ex.Tools, ex.ToolTokens, ex.ToolsCalled)
	}
	chatTools := `[{"type":"function","function":{"name":"a","parameters":{"type":"object"}}},{"type":"function","function":{"name":"b","parameters":{"type":"object"}}}]`
	s.post(t, "/v1/chat/completions", `{"model":"gpt-4o","tools":`+chatTools+`,"messages":[{"role":"user","content":"go"}]}`, "Content-Type", "application/json")
	if ex := s.obs.last(t); ex.Tools != 2 || ex.ToolTokens <= 0 {
		t.Errorf("a Chat request read without translating: tools %d (%d tokens); want 2", ex.Tools, ex.ToolTokens)
	}
}

// The stored forwarded body is what the upstream received, byte for byte, whatever produced it.
func TestForwardedBodyIsWhatTheUpstreamReceived(t *testing.T) {
	cfg := Config{CaptureBodies: true, ModelMap: []pool.ModelMapping{{Pattern: "claude-old", Model: "claude-sonnet-4-5"}},
		Compaction: CompactionConfig{ContextLimits: map[string]int{"claude-tiny": 600}}}
	tool := func(i int) string {
		id := fmt.Sprintf("toolu_%02d", i)
		return `{"role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"run","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"` + strings.Repeat("output ", 40) + `"}]}`
	}
	var rounds []string
	for i := range 8 {
		rounds = append(rounds, tool(i))
	}
	for _, tt := range []struct{ name, path, body string }{
		{"model mapped", "/v1/messages", `{"model":"claude-old","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`},
		{"translated", "/v1/chat/completions", `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`},
		{"compacted", "/v1/messages", `{"model":"claude-tiny","max_tokens":16,"messages":[{"role":"user","content":"go"},` + strings.Join(rounds, ",") + `,{"role":"user","content":"next"}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSeam(t, cfg, pool.KindAnthropic)
			s.anthropic.SetRecordBodies(true)
			resp, body := s.post(t, tt.path, tt.body, "Content-Type", "application/json")
			if resp.StatusCode != 200 {
				t.Fatalf("status %d %s", resp.StatusCode, body)
			}
			ex := s.obs.last(t)
			got := s.anthropic.LastRequest().Body
			if string(ex.ForwardedBody) != string(got) || string(got) == tt.body {
				t.Errorf("stored forwarded body %.200s\nupstream received %.200s", ex.ForwardedBody, got)
			}
		})
	}
}
