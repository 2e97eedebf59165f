package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/proxytest"
	"longhaul/proxy/sse"
)

// A Messages client (Claude Code) driving a Responses upstream over real
// HTTP, two rounds of a tool loop with reasoning: the request is translated,
// the stream translated back event by event, and the reasoning the upstream
// encrypted comes back to it on the next round, while Claude's own signature
// never goes there.
func TestResponsesAnthropicClientThroughResponsesUpstream(t *testing.T) {
	up := proxytest.NewResponsesUpstream()
	defer up.Close()
	up.Enqueue(proxytest.ResponsesReply{Response: &proxytest.ResponsesResponse{
		Items: []proxytest.ResponsesItem{
			proxytest.ResponsesReasoning("Look at the tree.", "gAAAAround1"),
			proxytest.ResponsesText("Listing."),
			proxytest.ResponsesFunctionCall("call_r1", "Bash", `{"command":"ls"}`),
		},
		Usage:     proxytest.ResponsesUsage{Input: 300, Cached: 200, Output: 30},
		ChunkSize: 5,
	}}, proxytest.ResponsesReply{Response: &proxytest.ResponsesResponse{
		Items: []proxytest.ResponsesItem{proxytest.ResponsesText("Two files: a.go and b.go.")},
		Usage: proxytest.ResponsesUsage{Input: 400, Cached: 300, Output: 12},
	}})

	first := `{"model":"gpt-5","max_tokens":8000,"stream":true,"system":"You are Claude Code.",
	 "thinking":{"type":"enabled","budget_tokens":4000},
	 "tools":[{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}}],
	 "messages":[{"role":"user","content":"What is here?"}]}`
	reply1 := roundTrip(t, up, first)
	var msg struct {
		Content []struct {
			Type, Text, Thinking, Signature, ID, Name string
			Input                                     json.RawMessage
		}
		StopReason string `json:"stop_reason"`
		Usage      map[string]int
	}
	if err := json.Unmarshal(reply1, &msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 3 || msg.Content[0].Type != "thinking" || msg.Content[0].Thinking != "Look at the tree." ||
		msg.Content[1].Text != "Listing." || msg.Content[2].ID != "call_r1" || string(msg.Content[2].Input) != `{"command":"ls"}` ||
		msg.StopReason != "tool_use" {
		t.Fatalf("assembled reply = %s", reply1)
	}
	if msg.Usage["input_tokens"] != 100 || msg.Usage["cache_read_input_tokens"] != 200 || msg.Usage["output_tokens"] != 30 {
		t.Errorf("usage = %v; want 100 fresh + 200 cached in, 30 out", msg.Usage)
	}
	if !strings.Contains(string(up.Requests()[0].Body), `"include":["reasoning.encrypted_content"]`) {
		t.Errorf("first request did not ask for encrypted reasoning: %s", up.Requests()[0].Body)
	}

	// Round two: the client sends the history back as Messages do, with the
	// thinking block (its signature carrying OpenAI's reasoning) and an older
	// Claude-signed thinking block from before the session moved.
	assistant := anthropic.MemberValue(reply1, "content")
	second := `{"model":"gpt-5","max_tokens":8000,"stream":true,"system":"You are Claude Code.",
	 "thinking":{"type":"enabled","budget_tokens":4000},
	 "tools":[{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}}],
	 "messages":[{"role":"user","content":"What is here?"},
	  {"role":"assistant","content":[{"type":"thinking","thinking":"old","signature":"EqClaudeOnly"},{"type":"text","text":"(earlier)"}]},
	  {"role":"user","content":"continue"},
	  {"role":"assistant","content":` + string(assistant) + `},
	  {"role":"user","content":[{"type":"tool_result","tool_use_id":"call_r1","content":"a.go\nb.go"}]}]}`
	reply2 := roundTrip(t, up, second)
	if !strings.Contains(string(reply2), "Two files: a.go and b.go.") || !strings.Contains(string(reply2), `"stop_reason":"end_turn"`) {
		t.Errorf("second reply = %s", reply2)
	}
	sent := string(up.Requests()[1].Body)
	for _, want := range []string{`"encrypted_content":"gAAAAround1"`, `"type":"function_call_output","call_id":"call_r1","output":"a.go\nb.go"`, `"call_id":"call_r1","name":"Bash"`} {
		if !strings.Contains(sent, want) {
			t.Errorf("second upstream request lacks %s:\n%s", want, sent)
		}
	}
	if strings.Contains(sent, "EqClaudeOnly") {
		t.Errorf("a Claude signature reached the OpenAI upstream:\n%s", sent)
	}
}

// roundTrip translates a Messages request for the Responses upstream, posts
// it, translates the streamed answer back event by event and returns the
// assembled Messages reply.
func roundTrip(t *testing.T, up *proxytest.ResponsesUpstream, messagesRequest string) []byte {
	t.Helper()
	body, err := ResponsesRequestFromAnthropic([]byte(messagesRequest), ResponsesRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(up.URL+"/v1/responses", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("upstream %d: %s", resp.StatusCode, b)
	}
	tr := NewResponsesStreamToAnthropic(ResponsesReplyOptions{Model: "gpt-5"})
	builder := anthropic.NewReplyBuilder(1 << 20)
	emit := func(name string, data []byte) error {
		builder.Add(name, data)
		return nil
	}
	rd := sse.NewReader(resp.Body, 0)
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Event(ev.Name, ev.Data, emit); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.End(emit); err != nil {
		t.Fatal(err)
	}
	out, _ := builder.Bytes()
	return out
}

// A Responses client (Codex) on a Responses upstream non-stream, through the
// Messages shape (as when the proxy compacts): the reply comes back with the
// same items, usage and encrypted reasoning.
func TestResponsesClientThroughMessagesShapeNonStream(t *testing.T) {
	up := proxytest.NewResponsesUpstream()
	defer up.Close()
	up.Enqueue(proxytest.ResponsesReply{Response: &proxytest.ResponsesResponse{
		ID: "resp_codex1",
		Items: []proxytest.ResponsesItem{
			proxytest.ResponsesReasoning("Plan.", "gAAAAcodex"),
			proxytest.ResponsesFunctionCall("call_c1", "shell", `{"command":["ls"]}`),
		},
		Usage: proxytest.ResponsesUsage{Input: 50, Cached: 10, Output: 5},
	}})
	client := `{"model":"gpt-5-codex","instructions":"You are Codex.","input":[{"role":"user","content":"ls please"}],"tools":[{"type":"function","name":"shell","parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}}},"strict":false}],"reasoning":{"effort":"medium"},"store":false}`
	messages, err := ResponsesRequestToAnthropic([]byte(client), ResponsesRequestOptions{ForResponses: true})
	if err != nil {
		t.Fatal(err)
	}
	upstreamReq, err := ResponsesRequestFromAnthropic(messages, ResponsesRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(up.URL+"/v1/responses", "application/json", bytes.NewReader(upstreamReq))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	asMessages, err := ResponsesReplyToAnthropic(raw, ResponsesReplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ResponsesReplyFromAnthropic(asMessages, ResponsesReplyOptions{Echo: ResponsesEchoOf([]byte(client))})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ID     string
		Store  bool
		Output []struct {
			Type, ID, CallID, Arguments string
			EncryptedContent            string `json:"encrypted_content"`
			CallIDTag                   string `json:"call_id"`
		}
		Usage struct {
			InputTokens        int `json:"input_tokens"`
			InputTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"input_tokens_details"`
		}
	}
	if err := json.Unmarshal(back, &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != "resp_codex1" || got.Store || len(got.Output) != 2 || got.Output[0].EncryptedContent != "gAAAAcodex" || got.Output[0].ID != "rs_codex10" ||
		got.Output[1].CallIDTag != "call_c1" || got.Usage.InputTokens != 50 || got.Usage.InputTokensDetails.CachedTokens != 10 {
		t.Errorf("response back to the client = %s", back)
	}
}

// Claude Code's quota probe (max_tokens 1) is accepted by a Responses upstream
// that refuses fewer than 16 output tokens.
func TestResponsesQuotaProbeReachesTheUpstream(t *testing.T) {
	up := proxytest.NewResponsesUpstream()
	defer up.Close()
	body, err := ResponsesRequestFromAnthropic([]byte(`{"model":"gpt-5","max_tokens":1,"messages":[{"role":"user","content":"quota"}]}`), ResponsesRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(up.URL+"/v1/responses", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("upstream answered %d: %s", resp.StatusCode, raw)
	}
	if _, err := ResponsesReplyToAnthropic(raw, ResponsesReplyOptions{}); err != nil {
		t.Error(err)
	}
}
