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

// postChatUpstream posts a Chat request to the scripted upstream.
func postChatUpstream(t *testing.T, up *proxytest.ChatUpstream, body []byte) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, up.URL+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer sk-test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("upstream %d: %s\nrequest: %s", resp.StatusCode, b, body)
	}
	return resp
}

// chatRoundTrip translates a Messages request for the Chat upstream, posts
// it, translates the streamed answer back event by event and returns the
// assembled Messages reply.
func chatRoundTrip(t *testing.T, up *proxytest.ChatUpstream, messagesRequest []byte) []byte {
	t.Helper()
	body, err := ChatRequestFromAnthropic(messagesRequest, ChatRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	resp := postChatUpstream(t, up, body)
	tr := NewChatStreamToAnthropic(ChatReplyOptions{})
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

// A Messages client (Claude Code) driving a Chat upstream over real HTTP,
// two rounds of a tool loop: the strict upstream accepts both requests (tool
// results answered, images moved out of tool messages), the stream comes
// back as Messages events, the upstream's reasoning goes back to it, and
// Claude's own signature never does.
func TestChatAnthropicClientThroughChatUpstream(t *testing.T) {
	up := proxytest.NewChatUpstream()
	defer up.Close()
	up.Enqueue(proxytest.ChatReply{Completion: &proxytest.ChatCompletion{
		Reasoning: "Look at the tree.",
		Content:   "Listing.",
		ToolCalls: []proxytest.ChatToolCall{{ID: "call_r1", Name: "Bash", Args: `{"command":"ls"}`}, {ID: "call_r2", Name: "Shot", Args: `{}`}},
		Usage:     proxytest.ChatUsage{Prompt: 300, Cached: 200, Completion: 30},
		ChunkSize: 5,
	}}, proxytest.ChatReply{Completion: &proxytest.ChatCompletion{
		Content: "Two files: a.go and b.go.",
		Usage:   proxytest.ChatUsage{Prompt: 400, Cached: 300, Completion: 12},
	}})

	const head = `{"model":"deepseek-reasoner","max_tokens":8000,"stream":true,"system":[{"type":"text","text":"You are Claude Code."}],
	 "thinking":{"type":"enabled","budget_tokens":4000},
	 "tools":[{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}},{"name":"Shot","input_schema":{"type":"object"}}],
	 "metadata":{"user_id":"session-7"},`
	reply1 := chatRoundTrip(t, up, []byte(head+`"messages":[{"role":"user","content":"What is here?"}]}`))
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
	if len(msg.Content) != 4 || msg.Content[0].Type != "thinking" || msg.Content[0].Thinking != "Look at the tree." ||
		msg.Content[1].Text != "Listing." || msg.Content[2].ID != "call_r1" || string(msg.Content[2].Input) != `{"command":"ls"}` ||
		msg.Content[3].ID != "call_r2" || msg.StopReason != "tool_use" {
		t.Fatalf("assembled reply = %s", reply1)
	}
	if msg.Usage["input_tokens"] != 100 || msg.Usage["cache_read_input_tokens"] != 200 || msg.Usage["output_tokens"] != 30 {
		t.Errorf("usage = %v; want 100 fresh + 200 cached in, 30 out", msg.Usage)
	}
	first := string(up.Requests()[0].Body)
	for _, want := range []string{`"stream_options":{"include_usage":true}`, `"reasoning_effort":"low"`, `"max_completion_tokens":8000`, `"user":"session-7"`} {
		if !strings.Contains(first, want) {
			t.Errorf("first upstream request lacks %s: %s", want, first)
		}
	}

	// Round two: the history as Messages clients send it back, the tool
	// results (one with a screenshot) and an older Claude-signed thinking.
	assistant := anthropic.MemberValue(reply1, "content")
	second := head + `"messages":[{"role":"user","content":"What is here?"},
	  {"role":"assistant","content":[{"type":"thinking","thinking":"old","signature":"EqClaudeOnly"},{"type":"text","text":"(earlier)"}]},
	  {"role":"user","content":"continue"},
	  {"role":"assistant","content":` + string(assistant) + `},
	  {"role":"user","content":[{"type":"tool_result","tool_use_id":"call_r1","content":"a.go\nb.go"},
	   {"type":"tool_result","tool_use_id":"call_r2","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]}]}]}`
	reply2 := chatRoundTrip(t, up, []byte(second))
	if !strings.Contains(string(reply2), "Two files: a.go and b.go.") || !strings.Contains(string(reply2), `"stop_reason":"end_turn"`) {
		t.Errorf("second reply = %s", reply2)
	}
	sent := string(up.Requests()[1].Body)
	for _, want := range []string{`"reasoning_content":"Look at the tree."`, `{"role":"tool","tool_call_id":"call_r1","content":"a.go\nb.go"}`,
		`"image_url":{"url":"data:image/png;base64,iVBO"}`} {
		if !strings.Contains(sent, want) {
			t.Errorf("second upstream request lacks %s:\n%s", want, sent)
		}
	}
	if strings.Contains(sent, "EqClaudeOnly") {
		t.Errorf("a Claude signature reached the Chat upstream:\n%s", sent)
	}
	if n := up.Rejected(); n != 0 {
		t.Errorf("the upstream refused %d translated requests", n)
	}
}

// Claude Code's long sessions (signed thinking, ~25 tools, tool rounds)
// translate into requests the strict upstream accepts, stream or not.
func TestChatClaudeCodeRequestsAreAccepted(t *testing.T) {
	up := proxytest.NewChatUpstream()
	defer up.Close()
	for _, stream := range []bool{false, true} {
		body, err := ChatRequestFromAnthropic(proxytest.ClaudeCodeRequest(64<<10, stream), ChatRequestOptions{})
		if err != nil {
			t.Fatal(err)
		}
		resp := postChatUpstream(t, up, body)
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if !stream {
			if _, err := ChatReplyToAnthropic(raw, ChatReplyOptions{}); err != nil {
				t.Error(err)
			}
		}
	}
	if n := up.Rejected(); n != 0 {
		t.Errorf("the upstream refused %d translated requests", n)
	}
}

// A Chat client on a Chat upstream through the Messages shape (as when the
// proxy compacts): its request reaches the upstream as it was meant, and the
// non-stream reply comes back with the same message, reasoning and usage.
func TestChatClientThroughMessagesShapeNonStream(t *testing.T) {
	up := proxytest.NewChatUpstream()
	defer up.Close()
	up.Enqueue(proxytest.ChatReply{Completion: &proxytest.ChatCompletion{
		ID: "chatcmpl-c1", Reasoning: "Plan.", Content: "Calling.",
		ToolCalls: []proxytest.ChatToolCall{{ID: "call_c1", Name: "shell", Args: `{"command":["ls"]}`}},
		Usage:     proxytest.ChatUsage{Prompt: 50, Cached: 10, Completion: 5},
	}})
	client := `{"model":"deepseek-chat","messages":[{"role":"system","content":"Be terse."},{"role":"user","content":"ls please"}],
	 "tools":[{"type":"function","function":{"name":"shell","parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}}}}}],
	 "reasoning_effort":"low","temperature":0.2}`
	messages, err := ChatRequestToAnthropic([]byte(client), ChatRequestOptions{ForChat: true})
	if err != nil {
		t.Fatal(err)
	}
	upstreamReq, err := ChatRequestFromAnthropic(messages, ChatRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(postChatUpstream(t, up, upstreamReq).Body)
	if err != nil {
		t.Fatal(err)
	}
	asMessages, err := ChatReplyToAnthropic(raw, ChatReplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ChatReplyFromAnthropic(asMessages, ChatReplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ID      string
		Choices []struct {
			Message struct {
				Content          string
				ReasoningContent string `json:"reasoning_content"`
				ToolCalls        []struct {
					ID       string
					Function struct{ Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			PromptTokens        int `json:"prompt_tokens"`
			PromptTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		}
	}
	if err := json.Unmarshal(back, &got); err != nil {
		t.Fatal(err)
	}
	m := got.Choices[0].Message
	if got.ID != "chatcmpl-c1" || m.Content != "Calling." || m.ReasoningContent != "Plan." || len(m.ToolCalls) != 1 ||
		m.ToolCalls[0].Function.Arguments != `{"command":["ls"]}` || got.Choices[0].FinishReason != "tool_calls" ||
		got.Usage.PromptTokens != 50 || got.Usage.PromptTokensDetails.CachedTokens != 10 {
		t.Errorf("completion back to the client = %s", back)
	}
	sent := string(up.Requests()[0].Body)
	for _, want := range []string{`"reasoning_effort":"low"`, `"temperature":0.2`, `{"role":"system","content":"Be terse."}`} {
		if !strings.Contains(sent, want) {
			t.Errorf("upstream request lacks %s: %s", want, sent)
		}
	}
	if strings.Contains(sent, "max_completion_tokens") {
		t.Errorf("a limit the client never set reached the upstream: %s", sent)
	}
}

// A Chat client driving an Anthropic upstream over real HTTP, two rounds of
// a tool loop with thinking: the stream reaches the client as chunks with
// reasoning_content and the signed block in thinking_blocks; the client
// sends the message back as openai-node accumulates it, and Claude's
// signed thinking leads the assistant turn of the next Messages request, as
// Messages requires in a tool loop.
func TestChatClientThroughAnthropicUpstream(t *testing.T) {
	up := proxytest.NewUpstream()
	defer up.Close()
	const sig = "EqSignedByClaude0123456789"
	up.Enqueue(proxytest.Reply{Message: &proxytest.Message{
		Content: []proxytest.Block{
			proxytest.Thinking("List the directory.", sig),
			proxytest.Text("Listing."),
			proxytest.ToolUse("toolu_01", "shell", map[string]any{"command": []string{"ls"}}),
		},
		Usage:     proxytest.Usage{InputTokens: 40, CacheReadInputTokens: 60, OutputTokens: 25},
		ChunkSize: 6,
	}})

	const tools = `"tools":[{"type":"function","function":{"name":"shell","parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}}}}}]`
	client1 := []byte(`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"ls please"}],` + tools +
		`,"reasoning_effort":"medium","stream":true,"stream_options":{"include_usage":true}}`)
	stream := chatThroughAnthropic(t, up, client1)
	acc := accumulateChat(t, stream)
	if acc.Reasoning != "List the directory." || acc.Content != "Listing." || len(acc.Calls) != 1 || acc.Calls[0].Args != `{"command":["ls"]}` ||
		acc.Finish != "tool_calls" || !acc.Done || !strings.Contains(string(acc.Usage), `"prompt_tokens":100`) {
		t.Fatalf("client saw %+v\n%s", acc, stream)
	}
	// openai-node keeps the last value of a delta field it does not know.
	var thinkingBlocks json.RawMessage
	for _, ev := range readSSE(t, stream) {
		var c struct {
			Choices []struct {
				Delta map[string]json.RawMessage `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal(ev.Data, &c) == nil && len(c.Choices) > 0 && c.Choices[0].Delta["thinking_blocks"] != nil {
			thinkingBlocks = c.Choices[0].Delta["thinking_blocks"]
		}
	}
	if thinkingBlocks == nil {
		t.Fatalf("no thinking_blocks in the stream:\n%s", stream)
	}

	args, _ := json.Marshal(acc.Calls[0].Args)
	client2 := []byte(`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"ls please"},
	 {"role":"assistant","content":"Listing.","reasoning_content":"List the directory.","thinking_blocks":` + string(thinkingBlocks) + `,
	  "tool_calls":[{"id":"` + acc.Calls[0].ID + `","type":"function","function":{"name":"shell","arguments":` + string(args) + `}}]},
	 {"role":"tool","tool_call_id":"` + acc.Calls[0].ID + `","content":"a.go"}],` + tools + `,"reasoning_effort":"medium","stream":true}`)
	chatThroughAnthropic(t, up, client2)
	var sent struct {
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	if err := json.Unmarshal(up.Requests()[1].Body, &sent); err != nil || len(sent.Messages) != 3 {
		t.Fatalf("second Messages request = %s (%v)", up.Requests()[1].Body, err)
	}
	var assistant, results []struct{ Type, Thinking, Signature string }
	if json.Unmarshal(sent.Messages[1].Content, &assistant) != nil || json.Unmarshal(sent.Messages[2].Content, &results) != nil ||
		assistant[0].Type != "thinking" || assistant[0].Signature != sig || assistant[0].Thinking != "List the directory." || results[0].Type != "tool_result" {
		t.Errorf("second Messages request = %s", up.Requests()[1].Body)
	}
}

// chatThroughAnthropic translates a Chat request for the Anthropic upstream,
// posts it, and returns the Chat stream the client gets.
func chatThroughAnthropic(t *testing.T, up *proxytest.Upstream, chatRequest []byte) []byte {
	t.Helper()
	body, err := ChatRequestToAnthropic(chatRequest, ChatRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(up.URL+"/v1/messages", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("upstream %d: %s", resp.StatusCode, b)
	}
	tr := NewChatStreamFromAnthropic(ChatReplyOptions{IncludeUsage: ChatIncludeUsage(chatRequest)})
	var out []byte
	write := func(frame []byte) error {
		out = append(out, frame...)
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
		if err := tr.Event(ev.Name, ev.Data, write); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.End(write); err != nil {
		t.Fatal(err)
	}
	return out
}
