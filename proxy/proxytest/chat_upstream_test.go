package proxytest

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"longhaul/proxy/sse"
)

func postChat(t *testing.T, u *ChatUpstream, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer sk-proxytest")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readChatChunks reads a Chat stream: the chunks decoded, and whether it
// ended with data: [DONE].
func readChatChunks(t *testing.T, r io.Reader) (chunks []map[string]any, done bool, err error) {
	t.Helper()
	rd := sse.NewReader(r, 0)
	for {
		ev, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return chunks, done, nil
			}
			return chunks, done, err
		}
		if ev.Name != "" {
			t.Errorf("event name %q; Chat streams send data-only events", ev.Name)
		}
		if string(ev.Data) == "[DONE]" {
			done = true
			continue
		}
		if done {
			t.Errorf("chunk after [DONE]: %s", ev.Data)
		}
		var c map[string]any
		if err := json.Unmarshal(ev.Data, &c); err != nil {
			t.Fatalf("chunk %s: %v", ev.Data, err)
		}
		chunks = append(chunks, c)
	}
}

func scriptedChatTurn() *ChatCompletion {
	return &ChatCompletion{
		ID:        "chatcmpl-turn1",
		Reasoning: "Check both.",
		Content:   "Reading both files.",
		ToolCalls: []ChatToolCall{{"call_1", "read", `{"path":"a.go"}`}, {"call_2", "read", `{"path":"b.go"}`}},
		Usage:     ChatUsage{Prompt: 100, Cached: 64, Completion: 20, Reasoning: 8},
		ChunkSize: 6,
	}
}

const chatHi = `"messages":[{"role":"user","content":"hi"}]`

// The stream is the API's: a role chunk, deltas, per tool call a first chunk
// with id and name then argument fragments keyed by index, the finish chunk,
// the usage chunk (choices []) only when include_usage asks and every other
// chunk then with "usage": null, and data: [DONE].
func TestChatUpstreamStreamsTheAPISequence(t *testing.T) {
	for _, includeUsage := range []bool{true, false} {
		u := NewChatUpstream()
		u.Enqueue(ChatReply{Completion: scriptedChatTurn()})
		body := `{"model":"gpt-4.1",` + chatHi + `,"stream":true}`
		if includeUsage {
			body = `{"model":"gpt-4.1",` + chatHi + `,"stream":true,"stream_options":{"include_usage":true}}`
		}
		resp := postChat(t, u, "/v1/chat/completions", body)
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			t.Fatalf("Content-Type = %q", ct)
		}
		chunks, done, err := readChatChunks(t, resp.Body)
		u.Close()
		if err != nil || !done {
			t.Fatalf("stream ended with %v, [DONE] %v", err, done)
		}
		var content, reasoning strings.Builder
		var calls []map[string]string
		var finish any
		for i, c := range chunks {
			if c["object"] != "chat.completion.chunk" || c["id"] != "chatcmpl-turn1" || c["model"] != "gpt-4.1" {
				t.Errorf("chunk %d = %v", i, c)
			}
			usage, has := c["usage"]
			last := i == len(chunks)-1
			switch {
			case includeUsage && last:
				if len(c["choices"].([]any)) != 0 || usage.(map[string]any)["prompt_tokens"] != float64(100) ||
					usage.(map[string]any)["prompt_tokens_details"].(map[string]any)["cached_tokens"] != float64(64) {
					t.Errorf("usage chunk = %v", c)
				}
				continue
			case includeUsage && (!has || usage != nil):
				t.Errorf("chunk %d usage = %v; want null", i, usage)
			case !includeUsage && has:
				t.Errorf("chunk %d has usage %v without include_usage", i, usage)
			}
			choice := c["choices"].([]any)[0].(map[string]any)
			delta := choice["delta"].(map[string]any)
			if i == 0 && delta["role"] != "assistant" {
				t.Errorf("first delta = %v; want the assistant role", delta)
			}
			if s, ok := delta["content"].(string); ok {
				content.WriteString(s)
			}
			if s, ok := delta["reasoning_content"].(string); ok {
				reasoning.WriteString(s)
			}
			for _, tc := range asSlice(delta["tool_calls"]) {
				tc := tc.(map[string]any)
				idx := int(tc["index"].(float64))
				fn := tc["function"].(map[string]any)
				if idx == len(calls) {
					if tc["id"] == nil || fn["name"] == nil || fn["arguments"] != "" {
						t.Errorf("first fragment of call %d = %v; want id, name and empty arguments", idx, tc)
					}
					calls = append(calls, map[string]string{"id": tc["id"].(string), "name": fn["name"].(string)})
				}
				calls[idx]["args"] += fn["arguments"].(string)
			}
			if choice["finish_reason"] != nil {
				finish = choice["finish_reason"]
			}
		}
		want := []map[string]string{{"id": "call_1", "name": "read", "args": `{"path":"a.go"}`}, {"id": "call_2", "name": "read", "args": `{"path":"b.go"}`}}
		if content.String() != "Reading both files." || reasoning.String() != "Check both." || !reflect.DeepEqual(calls, want) || finish != "tool_calls" {
			t.Errorf("include_usage %v: stream adds up to %q, %q, %v, %v", includeUsage, content.String(), reasoning.String(), calls, finish)
		}
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// Non-stream: the chat.completion object, on both paths compatible servers use.
func TestChatUpstreamAnswersACompletion(t *testing.T) {
	u := NewChatUpstream()
	defer u.Close()
	u.Enqueue(ChatReply{Completion: scriptedChatTurn()})
	for _, path := range []string{"/v1/chat/completions", "/chat/completions"} {
		resp := postChat(t, u, path, `{"model":"deepseek-chat",`+chatHi+`}`)
		var got struct {
			ID, Object, Model string
			Choices           []struct {
				Message struct {
					Role             string
					Content          *string
					ReasoningContent string `json:"reasoning_content"`
					ToolCalls        []struct {
						ID, Type string
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
				FinishReason string `json:"finish_reason"`
			}
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
				TotalTokens  int `json:"total_tokens"`
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || got.Object != "chat.completion" || got.Model != "deepseek-chat" || len(got.Choices) != 1 || got.Usage.TotalTokens == 0 {
			t.Fatalf("%s: %d %+v", path, resp.StatusCode, got)
		}
		m := got.Choices[0].Message
		if path == "/v1/chat/completions" && (m.Role != "assistant" || *m.Content != "Reading both files." || m.ReasoningContent != "Check both." ||
			len(m.ToolCalls) != 2 || m.ToolCalls[1].Function.Arguments != `{"path":"b.go"}` || got.Choices[0].FinishReason != "tool_calls" ||
			got.Usage.TotalTokens != 120) {
			t.Errorf("message = %+v, finish %s", m, got.Choices[0].FinishReason)
		}
		if path == "/chat/completions" && (*m.Content != "Hello from proxytest." || got.Choices[0].FinishReason != "stop") {
			t.Errorf("default reply = %+v", got.Choices[0])
		}
	}
}

// Requests the API refuses are refused the same way, in OpenAI's error shape.
func TestChatUpstreamValidatesLikeTheAPI(t *testing.T) {
	call := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}`
	tests := []struct {
		name, auth, body string
		status           int
		code, param      string
	}{
		{"no bearer token", "", `{"model":"m",` + chatHi + `}`, 401, "", ""},
		{"a basic token", "Basic abc", `{"model":"m",` + chatHi + `}`, 401, "", ""},
		{"malformed JSON", "Bearer k", `{"model":`, 400, "", ""},
		{"missing model", "Bearer k", `{` + chatHi + `}`, 400, "", ""},
		{"no messages", "Bearer k", `{"model":"m","messages":[]}`, 400, "empty_array", "messages"},
		{"unknown role", "Bearer k", `{"model":"m","messages":[{"role":"robot","content":"x"}]}`, 400, "invalid_value", "messages.[0].role"},
		{"user without content", "Bearer k", `{"model":"m","messages":[{"role":"user"}]}`, 400, "", "messages.[0].content"},
		{"unanswered tool call", "Bearer k", `{"model":"m","messages":[{"role":"user","content":"x"},` + call + `,{"role":"user","content":"y"}]}`, 400, "", "messages.[2].role"},
		{"tool message without a call", "Bearer k", `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"call_9","content":"r"}]}`, 400, "", "messages.[1].role"},
		{"tool message without an id", "Bearer k", `{"model":"m","messages":[` + call + `,{"role":"tool","content":"r"}]}`, 400, "missing_required_parameter", "messages.[1].tool_call_id"},
		{"image in a tool message", "Bearer k", `{"model":"m","messages":[` + call + `,{"role":"tool","tool_call_id":"call_1","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`, 400, "invalid_value", "messages.[1].content.[0].type"},
		{"arguments not a string", "Bearer k", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{}}}]},{"role":"tool","tool_call_id":"c","content":""}]}`, 400, "invalid_type", "messages.[0].tool_calls.[0].function.arguments"},
		{"stream_options without stream", "Bearer k", `{"model":"m",` + chatHi + `,"stream_options":{"include_usage":true}}`, 400, "invalid_value", "stream_options"},
		{"parallel_tool_calls without tools", "Bearer k", `{"model":"m",` + chatHi + `,"parallel_tool_calls":false}`, 400, "invalid_value", "parallel_tool_calls"},
		{"a long user", "Bearer k", `{"model":"m",` + chatHi + `,"user":"` + strings.Repeat("u", 65) + `"}`, 400, "string_above_max_length", "user"},
		{"five stop sequences", "Bearer k", `{"model":"m",` + chatHi + `,"stop":["a","b","c","d","e"]}`, 400, "invalid_value", "stop"},
	}
	u := NewChatUpstream()
	defer u.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, u.URL+"/v1/chat/completions", strings.NewReader(tt.body))
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got struct {
				Error struct {
					Message, Type string
					Param, Code   *string
				}
			}
			err = json.NewDecoder(resp.Body).Decode(&got)
			if err != nil || resp.StatusCode != tt.status || got.Error.Message == "" || deref(got.Error.Code) != tt.code || deref(got.Error.Param) != tt.param {
				t.Errorf("%s = %d %+v (%v); want %d code %q param %q", tt.body, resp.StatusCode, got.Error, err, tt.status, tt.code, tt.param)
			}
		})
	}
	if n := u.Rejected(); n != len(tests) {
		t.Errorf("Rejected() = %d; want %d", n, len(tests))
	}

	// A request the API accepts: tool calls answered, a user message after.
	ok := postChat(t, u, "/v1/chat/completions", `{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"x"},`+call+
		`,{"role":"tool","tool_call_id":"call_1","content":[{"type":"text","text":"r"}]},{"role":"user","content":[{"type":"text","text":"y"}]}],"stream":true,"stream_options":{"include_usage":true}}`)
	if ok.StatusCode != 200 {
		body, _ := io.ReadAll(ok.Body)
		t.Errorf("valid request = %d %s", ok.StatusCode, body)
	}
}

func TestChatUpstreamKey(t *testing.T) {
	u := NewChatUpstream()
	defer u.Close()
	u.Key = "sk-right"
	resp := postChat(t, u, "/v1/chat/completions", `{"model":"m",`+chatHi+`}`) // sends sk-proxytest
	var got struct{ Error struct{ Code *string } }
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 401 || deref(got.Error.Code) != "invalid_api_key" {
		t.Errorf("wrong key = %d %v (%v); want 401 invalid_api_key", resp.StatusCode, deref(got.Error.Code), err)
	}
}

// Scripted errors: OpenAI's body and status, retry-after on a 429; unknown
// paths are 404s.
func TestChatUpstreamScriptedErrors(t *testing.T) {
	u := NewChatUpstream()
	defer u.Close()
	u.Enqueue(ChatRateLimited(7), ChatReply{Status: 503}, ChatErrorReply(400, "context_length_exceeded", "This model's maximum context length is 128000 tokens."))
	tests := []struct {
		path       string
		status     int
		typ, code  string
		retryAfter string
	}{
		{"/v1/chat/completions", 429, "rate_limit_error", "rate_limit_exceeded", "7"},
		{"/v1/chat/completions", 503, "server_error", "", ""},
		{"/v1/chat/completions", 400, "invalid_request_error", "context_length_exceeded", ""},
		{"/v1/completions", 404, "invalid_request_error", "", ""},
	}
	for _, tt := range tests {
		resp := postChat(t, u, tt.path, `{"model":"m",`+chatHi+`}`)
		var got struct {
			Error struct {
				Message, Type string
				Code          *string
			}
		}
		err := json.NewDecoder(resp.Body).Decode(&got)
		if err != nil || resp.StatusCode != tt.status || got.Error.Type != tt.typ || deref(got.Error.Code) != tt.code ||
			got.Error.Message == "" || resp.Header.Get("Retry-After") != tt.retryAfter {
			t.Errorf("%s = %d %+v retry-after %q (%v); want %d %s %q retry-after %q", tt.path, resp.StatusCode, got.Error,
				resp.Header.Get("Retry-After"), err, tt.status, tt.typ, tt.code, tt.retryAfter)
		}
	}
	if n := u.Rejected(); n != 0 {
		t.Errorf("Rejected() = %d; scripted errors are not rejections", n)
	}
}

// Mid-stream failures: ErrorAfter sends an error chunk and ends without
// [DONE]; FailAfter drops the connection.
func TestChatUpstreamFailsMidStream(t *testing.T) {
	u := NewChatUpstream()
	defer u.Close()
	u.Enqueue(ChatReply{Completion: scriptedChatTurn(), ErrorAfter: 3}, ChatReply{Completion: scriptedChatTurn(), FailAfter: 3})
	body := `{"model":"m",` + chatHi + `,"stream":true}`

	chunks, done, err := readChatChunks(t, postChat(t, u, "/v1/chat/completions", body).Body)
	if err != nil || done || len(chunks) != 4 || chunks[3]["error"].(map[string]any)["type"] != "server_error" {
		t.Errorf("error after 3: %d chunks, [DONE] %v, err %v, last %v", len(chunks), done, err, chunks[len(chunks)-1])
	}
	chunks, done, err = readChatChunks(t, postChat(t, u, "/v1/chat/completions", body).Body)
	if err == nil || done || len(chunks) != 3 {
		t.Errorf("dropped stream: %d chunks, [DONE] %v, err %v; want 3 and an unexpected EOF", len(chunks), done, err)
	}
}

// EventGap paces the chunks; a client that hangs up ends the handler.
func TestChatUpstreamEventGapEndsWithTheClient(t *testing.T) {
	u := NewChatUpstream()
	defer u.Close()
	u.Enqueue(ChatReply{Completion: ChatText(strings.Repeat("slow ", 40)), EventGap: time.Hour})
	resp := postChat(t, u, "/v1/chat/completions", `{"model":"m",`+chatHi+`,"stream":true}`)
	rd := sse.NewReader(resp.Body, 0)
	if ev, err := rd.Next(); err != nil || !strings.Contains(string(ev.Data), `"role":"assistant"`) {
		t.Fatalf("first chunk = %s, %v", ev.Data, err)
	}
	resp.Body.Close() // the hour-long gap must not keep the server from closing
}

func TestChatUpstreamRecordsRequests(t *testing.T) {
	u := NewChatUpstream()
	defer u.Close()
	body := `{"model":"m","messages":[{"role":"user","content":"remember me"}]}`
	postChat(t, u, "/chat/completions", body)
	reqs := u.Requests()
	if len(reqs) != 1 || string(reqs[0].Body) != body || reqs[0].Path != "/chat/completions" || reqs[0].Header.Get("Authorization") != "Bearer sk-proxytest" {
		t.Errorf("requests = %+v", reqs)
	}
}
