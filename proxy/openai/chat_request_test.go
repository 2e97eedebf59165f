package openai

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestChatRequestToAnthropicRefusesBadInput(t *testing.T) {
	const hi = `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct {
		name, body        string
		param, code, want string // want: a substring of the message
	}{
		{"not an object", `[1]`, "", "", "JSON object"},
		{"malformed JSON", `{"model":"gpt-4o","messages":[{"role":"user"`, "", "", "could not parse"},
		{"invalid escape", `{"model":"m",` + hi + `,"user":"\q"}`, "", "", "invalid escape"},
		{"missing model", `{` + hi + `}`, "model", "", "'model'"},
		{"several choices", `{"model":"m",` + hi + `,"n":2}`, "n", "unsupported_value", "n = 1"},
		{"legacy functions", `{"model":"m",` + hi + `,"functions":[{"name":"f"}]}`, "functions", "", "'tools'"},
		{"missing messages", `{"model":"m"}`, "messages", "", "'messages'"},
		{"messages not an array", `{"model":"m","messages":"hi"}`, "messages", "", "expected an array"},
		{"only a system message", `{"model":"m","messages":[{"role":"system","content":"be nice"}]}`, "messages", "", "At least one"},
		{"unknown role", `{"model":"m","messages":[{"role":"robot","content":"x"}]}`, "messages[0].role", "", "'robot'"},
		{"function role", `{"model":"m","messages":[{"role":"function","name":"f","content":"x"}]}`, "messages[0].role", "", "'function'"},
		{"user without content", `{"model":"m","messages":[{"role":"user"}]}`, "messages[0].content", "", "content"},
		{"tool result without its call", `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"call_9","content":"x"}]}`, "messages[1].tool_call_id", "", "call_9"},
		{"tool result without an id", `{"model":"m","messages":[{"role":"tool","content":"x"}]}`, "messages[0].tool_call_id", "", "tool_call_id"},
		{"call without its result", `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"y"}]}`, "messages", "", "call_1"},
		{"arguments not an object", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"[1]"}}]},{"role":"tool","tool_call_id":"c","content":""}]}`, "messages[0].tool_calls[0].function.arguments", "", "JSON object"},
		{"call without a name", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"arguments":"{}"}}]}]}`, "messages[0].tool_calls[0]", "", "function.name"},
		{"custom tool call", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"custom","custom":{"name":"g","input":"x"}}]}]}`, "messages[0].tool_calls[0].type", "", "custom"},
		{"legacy function_call", `{"model":"m","messages":[{"role":"assistant","content":"x","function_call":{"name":"f","arguments":"{}"}}]}`, "messages[0].function_call", "", "tool_calls"},
		{"image with a bad URL", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x/y.png"}}]}]}`, "messages[0].content[0].image_url.url", "", "http(s) URL"},
		{"audio input", `{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AA==","format":"wav"}}]}]}`, "messages[0].content[0].type", "", "Audio"},
		{"file that is not a PDF", `{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_data":"data:text/csv;base64,YQ=="}}]}]}`, "messages[0].content[0].file.file_data", "", "PDF"},
		{"file by id", `{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-1"}}]}]}`, "messages[0].content[0].file.file_data", "", "file_id"},
		{"image in an assistant message", `{"model":"m","messages":[{"role":"assistant","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`, "messages[0].content[0].type", "", "'text' or 'refusal'"},
		{"image in a system message", `{"model":"m","messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]},{"role":"user","content":"x"}]}`, "messages[0].content[0]", "", "text parts"},
		{"text part without text", `{"model":"m","messages":[{"role":"user","content":[{"type":"text"}]}]}`, "messages[0].content[0].text", "", "'text'"},
		{"custom tool", `{"model":"m",` + hi + `,"tools":[{"type":"custom","custom":{"name":"grammar"}}]}`, "tools[0].type", "", "custom"},
		{"tool without a name", `{"model":"m",` + hi + `,"tools":[{"type":"function","function":{"description":"x"}}]}`, "tools[0].function.name", "", "name"},
		{"tool without its function", `{"model":"m",` + hi + `,"tools":[{"type":"function"}]}`, "tools[0].function", "", "function"},
		{"unknown tool_choice", `{"model":"m",` + hi + `,"tool_choice":"always"}`, "tool_choice", "", "always"},
		{"custom tool_choice", `{"model":"m",` + hi + `,"tool_choice":{"type":"custom","custom":{"name":"g"}}}`, "tool_choice.type", "", "custom"},
		{"named tool_choice without a name", `{"model":"m",` + hi + `,"tool_choice":{"type":"function","function":{}}}`, "tool_choice.function.name", "", "name"},
		{"negative max_tokens", `{"model":"m",` + hi + `,"max_tokens":-1}`, "max_tokens", "", "positive integer"},
		{"max_completion_tokens not a number", `{"model":"m",` + hi + `,"max_completion_tokens":"lots"}`, "max_completion_tokens", "", "positive integer"},
		{"unknown reasoning effort", `{"model":"m",` + hi + `,"reasoning_effort":"extreme"}`, "reasoning_effort", "", "extreme"},
		{"reasoning effort not a string", `{"model":"m",` + hi + `,"reasoning_effort":3}`, "reasoning_effort", "", "string"},
		{"unknown response format", `{"model":"m",` + hi + `,"response_format":{"type":"xml"}}`, "response_format.type", "", "xml"},
		{"json_schema without schema", `{"model":"m",` + hi + `,"response_format":{"type":"json_schema","json_schema":{"name":"x"}}}`, "response_format.json_schema.schema", "", "schema"},
		{"stop of the wrong type", `{"model":"m",` + hi + `,"stop":42}`, "stop", "", "array of strings"},
		{"stop list with a number", `{"model":"m",` + hi + `,"stop":["a",1]}`, "stop", "", "array of strings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ChatRequestToAnthropic([]byte(tt.body), ChatRequestOptions{})
			var re *ChatRequestError
			if !errors.As(err, &re) {
				t.Fatalf("ChatRequestToAnthropic(%s) = %s, %v; want a *ChatRequestError", tt.body, out, err)
			}
			if re.Status != http.StatusBadRequest || re.Param != tt.param || re.Code != tt.code || !strings.Contains(re.Message, tt.want) {
				t.Errorf("error = %+v; want status 400, param %q, code %q, message containing %q", re, tt.param, tt.code, tt.want)
			}
			var body ErrorBody
			if err := json.Unmarshal(re.JSON(), &body); err != nil {
				t.Fatal(err)
			}
			if body.Error.Type != InvalidRequestError || body.Error.Message != re.Message ||
				(tt.param != "" && (body.Error.Param == nil || *body.Error.Param != tt.param)) ||
				(tt.code != "" && (body.Error.Code == nil || *body.Error.Code != tt.code)) {
				t.Errorf("JSON() = %s", re.JSON())
			}
		})
	}
}

func TestChatRequestFromAnthropicRefusesBadInput(t *testing.T) {
	tests := []struct{ name, body, param, want string }{
		{"malformed JSON", `{"model":"gpt-4o","messages":[`, "", "could not parse"},
		{"invalid escape", `{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":"\q"}]}`, "", "invalid escape"},
		{"missing model", `{"max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, "model", "Field required"},
		{"server tools", `{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"web_search_20250305","name":"web_search"},{"name":"Read","input_schema":{"type":"object"}},{"type":"bash_20250124","name":"bash"}]}`, "tools", "web_search_20250305, bash_20250124"},
		{"tool without a name", `{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"input_schema":{"type":"object"}}]}`, "tools.0.name", "Field required"},
		{"system role message", `{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"system","content":"hi"}]}`, "messages.0.role", "'user' or 'assistant'"},
		{"system with an image", `{"model":"gpt-4o","max_tokens":10,"system":[{"type":"image","source":{"type":"url","url":"https://x"}}],"messages":[{"role":"user","content":"hi"}]}`, "system", "text blocks"},
		{"image from a file", `{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}]}`, "messages.0.content.0.source.type", "'file'"},
		{"image in a result from a file", `{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}]}]}`, "messages.1.content.0.content.0.source.type", "'file'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ChatRequestFromAnthropic([]byte(tt.body), ChatRequestOptions{})
			var re *ChatRequestError
			if !errors.As(err, &re) {
				t.Fatalf("ChatRequestFromAnthropic(%s) = %s, %v; want a *ChatRequestError", tt.body, out, err)
			}
			if re.Status != http.StatusBadRequest || re.Param != tt.param || !strings.Contains(re.Message, tt.want) {
				t.Errorf("error = %+v; want status 400, param %q, message containing %q", re, tt.param, tt.want)
			}
			var body struct {
				Type  string `json:"type"`
				Error struct{ Type, Message string }
			}
			if err := json.Unmarshal(re.AnthropicJSON(), &body); err != nil || body.Type != "error" || body.Error.Type != "invalid_request_error" || !strings.Contains(body.Error.Message, tt.want) {
				t.Errorf("AnthropicJSON() = %s (%v)", re.AnthropicJSON(), err)
			}
		})
	}
}

// A Messages request in the form the translation writes survives a trip to
// the Chat shape and back (ForChat) unchanged, a Chat upstream's reasoning
// included.
func TestChatRequestRoundTripFromAnthropic(t *testing.T) {
	in := `{"model":"deepseek-chat","max_tokens":4096,"system":"Be brief.",
	"messages":[
	 {"role":"user","content":"What is in /src?"},
	 {"role":"assistant","content":[{"type":"thinking","thinking":"List it.","signature":"openai-chat-reasoning:"},{"type":"text","text":"Listing."},{"type":"tool_use","id":"call_1","name":"ls","input":{"path":"/src"}},{"type":"tool_use","id":"call_2","name":"ls","input":{}}]},
	 {"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"a.go\nb.go"},{"type":"tool_result","tool_use_id":"call_2","content":""},{"type":"text","text":"Now <explain> \"them\"."},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]},
	 {"role":"assistant","content":"They are Go files."},
	 {"role":"user","content":[{"type":"text","text":"Thanks."},{"type":"image","source":{"type":"url","url":"https://example.com/x.png"}}]}
	],
	"tools":[{"name":"ls","description":"List","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}],
	"tool_choice":{"type":"any","disable_parallel_tool_use":true},
	"thinking":{"type":"enabled","budget_tokens":2048},
	"output_config":{"format":{"type":"json_schema","schema":{"type":"object"}}},
	"temperature":0.5,"top_p":0.9,"stop_sequences":["END"],
	"metadata":{"user_id":"session-1"},
	"stream":true}`
	mid, err := ChatRequestFromAnthropic([]byte(in), ChatRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ChatRequestToAnthropic(mid, ChatRequestOptions{ForChat: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, mid)
	}
	if !reflect.DeepEqual(canonicalJSON(t, back), canonicalJSON(t, []byte(in))) {
		t.Errorf("round trip changed the request:\nin:   %s\nmid:  %s\nback: %s", in, mid, back)
	}
}

// A Chat request in the form the translation writes survives a trip to the
// Messages shape (ForChat) and back unchanged.
func TestChatRequestRoundTripToAnthropic(t *testing.T) {
	in := `{"model":"deepseek-reasoner",
	"messages":[
	 {"role":"system","content":"You are terse."},
	 {"role":"user","content":"Fix it."},
	 {"role":"assistant","content":"Looking.","reasoning_content":"Read main.go first.","tool_calls":[
	  {"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"command\":[\"cat\",\"main.go\"]}"}},
	  {"id":"call_2","type":"function","function":{"name":"shell","arguments":"{}"}}]},
	 {"role":"tool","tool_call_id":"call_1","content":"package main"},
	 {"role":"tool","tool_call_id":"call_2","content":""},
	 {"role":"user","content":[{"type":"text","text":"And?"},{"type":"image_url","image_url":{"url":"https://example.com/x.png"}},{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/4AAQ"}}]},
	 {"role":"assistant","content":null,"tool_calls":[{"id":"call_3","type":"function","function":{"name":"shell","arguments":"{\"command\":[\"ls\"]}"}}]},
	 {"role":"tool","tool_call_id":"call_3","content":"main.go"}
	],
	"tools":[{"type":"function","function":{"name":"shell","description":"Run a command","parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}}}}}],
	"tool_choice":"required","parallel_tool_calls":false,"max_completion_tokens":30000,
	"reasoning_effort":"high",
	"response_format":{"type":"json_schema","json_schema":{"name":"output","schema":{"type":"object"}}},
	"temperature":0.3,"top_p":0.8,"stop":["###"],
	"user":"s-1","stream":true,"stream_options":{"include_usage":true}}`
	mid, err := ChatRequestToAnthropic([]byte(in), ChatRequestOptions{ForChat: true})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ChatRequestFromAnthropic(mid, ChatRequestOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, mid)
	}
	if !reflect.DeepEqual(canonicalJSON(t, back), canonicalJSON(t, []byte(in))) {
		t.Errorf("round trip changed the request:\nin:   %s\nmid:  %s\nback: %s", in, mid, back)
	}
}

// Signatures never cross families: Claude's signed thinking comes back from
// a Chat client only when it carries our mark, a Chat upstream's reasoning
// never reaches Anthropic, and Claude's thinking never reaches a Chat upstream.
func TestChatSignaturesStayInTheirFamily(t *testing.T) {
	chat := `{"model":"m","messages":[{"role":"user","content":"q"},
	 {"role":"assistant","content":"a","reasoning_content":"deepseek-secret-reasoning",
	  "thinking_blocks":[{"type":"thinking","thinking":"Claude thought.","signature":"anthropic-thinking:EqClaudeSig"},
	   {"type":"redacted_thinking","data":"anthropic-redacted:opaqueData"},
	   {"type":"thinking","thinking":"Someone else's.","signature":"EqForeignSig"}]},
	 {"role":"user","content":"next"}]}`
	toClaude, err := ChatRequestToAnthropic([]byte(chat), ChatRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"deepseek-secret-reasoning", "EqForeignSig", chatReasoningSignature} {
		if strings.Contains(string(toClaude), leak) {
			t.Errorf("%s sent toward Anthropic: %s", leak, toClaude)
		}
	}
	for _, want := range []string{`{"type":"thinking","thinking":"Claude thought.","signature":"EqClaudeSig"}`, `{"type":"redacted_thinking","data":"opaqueData"}`} {
		if !strings.Contains(string(toClaude), want) {
			t.Errorf("Claude's own thinking %s not restored: %s", want, toClaude)
		}
	}

	// The same conversation bound for a Chat upstream keeps the Chat
	// client's reasoning and drops Claude's.
	mid, err := ChatRequestToAnthropic([]byte(chat), ChatRequestOptions{ForChat: true})
	if err != nil {
		t.Fatal(err)
	}
	var dropped []string
	toChat, err := ChatRequestFromAnthropic(mid, ChatRequestOptions{OnDropped: func(typ string) { dropped = append(dropped, typ) }})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(toChat), `"reasoning_content":"deepseek-secret-reasoning"`) {
		t.Errorf("the Chat client's reasoning lost on its way back: %s", toChat)
	}
	claude := `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"q"},
	 {"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"EqClaudeSig"},{"type":"redacted_thinking","data":"opaqueData"},{"type":"text","text":"a"}]},
	 {"role":"user","content":"next"}]}`
	toChat, err = ChatRequestFromAnthropic([]byte(claude), ChatRequestOptions{OnDropped: func(typ string) { dropped = append(dropped, typ) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"EqClaudeSig", "opaqueData", "reasoning_content"} {
		if strings.Contains(string(toChat), leak) {
			t.Errorf("Claude's %s sent toward a Chat upstream: %s", leak, toChat)
		}
	}
	if !reflect.DeepEqual(dropped, []string{"thinking", "redacted_thinking"}) {
		t.Errorf("OnDropped saw %v; want [thinking redacted_thinking]", dropped)
	}
}

func TestChatReasoningEffortMapsToThinking(t *testing.T) {
	tests := []struct {
		effort, extra string
		want          string // the thinking member, "" for none
	}{
		{"minimal", "", ""},
		{"none", "", ""},
		{"low", "", `{"type":"enabled","budget_tokens":2048}`},
		{"medium", "", `{"type":"enabled","budget_tokens":8192}`},
		{"high", "", `{"type":"enabled","budget_tokens":24576}`},
		{"xhigh", "", `{"type":"enabled","budget_tokens":30976}`},                             // kept below the default max_tokens
		{"high", `,"max_completion_tokens":10000`, `{"type":"enabled","budget_tokens":8976}`}, // kept below max_tokens
		{"high", `,"max_tokens":10000`, `{"type":"enabled","budget_tokens":8976}`},
		{"low", `,"max_tokens":1500`, ""},                                                              // no room for the 1024-token minimum
		{"low", `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required"`, ""}, // a forced tool wins
	}
	for _, tt := range tests {
		body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0.3,"reasoning_effort":"` + tt.effort + `"` + tt.extra + `}`
		out, err := ChatRequestToAnthropic([]byte(body), ChatRequestOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Thinking    json.RawMessage
			Temperature *float64
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if string(got.Thinking) != tt.want {
			t.Errorf("effort %s%s: thinking = %s; want %s", tt.effort, tt.extra, got.Thinking, tt.want)
		}
		// Messages refuses a temperature with thinking on.
		if (got.Temperature != nil) != (tt.want == "") {
			t.Errorf("effort %s%s: temperature = %v with thinking %s", tt.effort, tt.extra, got.Temperature, got.Thinking)
		}
	}
}

func TestChatMaxTokens(t *testing.T) {
	tests := []struct {
		name, limits string
		opts         ChatRequestOptions
		want         string // the max_tokens member, "" for none
	}{
		{"default", ``, ChatRequestOptions{}, "32000"},
		{"configured default", ``, ChatRequestOptions{MaxTokens: 8192}, "8192"},
		{"max_tokens", `,"max_tokens":100`, ChatRequestOptions{}, "100"},
		{"max_completion_tokens wins", `,"max_completion_tokens":200,"max_tokens":100`, ChatRequestOptions{}, "200"},
		{"null is unset", `,"max_tokens":null`, ChatRequestOptions{}, "32000"},
		{"unset on the way back to Chat", ``, ChatRequestOptions{ForChat: true}, ""},
		{"set on the way back to Chat", `,"max_completion_tokens":300`, ChatRequestOptions{ForChat: true}, "300"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ChatRequestToAnthropic([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]`+tt.limits+`}`), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				MaxTokens json.RawMessage `json:"max_tokens"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if string(got.MaxTokens) != tt.want {
				t.Errorf("max_tokens = %s; want %s (%s)", got.MaxTokens, tt.want, out)
			}
		})
	}
	for _, legacy := range []bool{false, true} {
		out, err := ChatRequestFromAnthropic([]byte(`{"model":"m","max_tokens":77,"messages":[{"role":"user","content":"hi"}]}`), ChatRequestOptions{LegacyMaxTokens: legacy})
		if err != nil {
			t.Fatal(err)
		}
		want, not := `"max_completion_tokens":77`, `"max_tokens"`
		if legacy {
			want, not = `"max_tokens":77`, `"max_completion_tokens"`
		}
		if !strings.Contains(string(out), want) || strings.Contains(string(out), not) {
			t.Errorf("LegacyMaxTokens %v: %s; want %s only", legacy, out, want)
		}
	}
}

func TestChatIncludeUsage(t *testing.T) {
	tests := []struct {
		body string
		want bool
	}{
		{`{"model":"m","stream":true,"stream_options":{"include_usage":true}}`, true},
		{`{"model":"m","stream":true,"stream_options":{"include_usage":false}}`, false},
		{`{"model":"m","stream":true,"stream_options":null}`, false},
		{`{"model":"m","stream":true}`, false},
		{`not json`, false},
	}
	for _, tt := range tests {
		if got := ChatIncludeUsage([]byte(tt.body)); got != tt.want {
			t.Errorf("ChatIncludeUsage(%s) = %v; want %v", tt.body, got, tt.want)
		}
	}
}

// Tool messages are paired by tool_call_id and go, with a user message that
// follows them, into one user turn whose tool results come first.
func TestChatToolMessagesJoinOneUserTurn(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"go"},
	 {"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"f","arguments":"{}"}}]},
	 {"role":"tool","tool_call_id":"b","content":"B"},
	 {"role":"user","content":"meanwhile"},
	 {"role":"tool","tool_call_id":"a","content":"A"}]}`
	out, err := ChatRequestToAnthropic([]byte(body), ChatRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := `[{"type":"tool_result","tool_use_id":"b","content":"B"},{"type":"tool_result","tool_use_id":"a","content":"A"},{"type":"text","text":"meanwhile"}]`
	if len(got.Messages) != 3 || got.Messages[2].Role != "user" || string(got.Messages[2].Content) != want {
		t.Errorf("messages = %s; want the last user turn %s", out, want)
	}
}

// OpenAI refuses a user longer than 64 characters: a longer session key
// stays with the proxy.
func TestChatUserIsKeptWithinOpenAIsLimit(t *testing.T) {
	for _, tt := range []struct {
		userID string
		sent   bool
	}{{strings.Repeat("u", 64), true}, {strings.Repeat("é", 64), true}, {strings.Repeat("u", 65), false}} {
		out, err := ChatRequestFromAnthropic([]byte(`{"model":"m","max_tokens":10,"metadata":{"user_id":"`+tt.userID+`"},"messages":[{"role":"user","content":"hi"}]}`), ChatRequestOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(out), `"user":`); got != tt.sent {
			t.Errorf("user_id of %d characters: user sent = %v; want %v (%s)", len([]rune(tt.userID)), got, tt.sent, out)
		}
	}
}

// An assistant message with "" beside its tool calls, or alone, adds no
// empty text (Messages refuses empty content).
func TestChatEmptyAssistantContentIsSkipped(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":""},{"role":"user","content":"b"},
	 {"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}]}`
	out, err := ChatRequestToAnthropic([]byte(body), ChatRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := `"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c","content":"r"}]}]`
	if !strings.Contains(string(out), want) {
		t.Errorf("got %s; want %s", out, want)
	}
}
