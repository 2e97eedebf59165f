package openai

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestResponsesRequestToAnthropicRefusesBadInput(t *testing.T) {
	tests := []struct {
		name, body        string
		param, code, want string // want: a substring of the message
	}{
		{"not an object", `[1]`, "", "", "JSON object"},
		{"malformed JSON", `{"model":"gpt-5","input":[{"type":"message"`, "", "", "could not parse"},
		{"missing model", `{"input":"hi"}`, "model", "", "'model'"},
		{"invalid escape", `{"model":"","input":"\0"}`, "", "", "invalid escape"},
		{"control character in a string", "{\"model\":\"m\",\"input\":\"a\x01b\"}", "", "", "control character"},
		{"bad unicode escape", `{"model":"m","input":"\u12G4"}`, "", "", "\\u escape"},
		{"missing input", `{"model":"m"}`, "input", "", "'input'"},
		{"input of the wrong type", `{"model":"m","input":42}`, "input", "", "expected a string or an array"},
		{"unknown item type", `{"model":"m","input":[{"type":"web_search_call","id":"ws_1"}]}`, "input[0].type", "", "web_search_call"},
		{"unknown role", `{"model":"m","input":[{"role":"tool","content":"x"}]}`, "input[0].role", "", "'tool'"},
		{"output without its call", `{"model":"m","input":[{"type":"function_call_output","call_id":"call_9","output":"x"}]}`, "input[0].call_id", "", "call_9"},
		{"call without its output", `{"model":"m","input":[{"type":"function_call","call_id":"call_1","name":"f","arguments":"{}"}]}`, "input", "", "No tool output found for function call call_1"},
		{"arguments not an object", `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"[1,2]"},{"type":"function_call_output","call_id":"c","output":""}]}`, "input[0].arguments", "", "JSON object"},
		{"arguments not JSON", `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{oops"},{"type":"function_call_output","call_id":"c","output":""}]}`, "input[0].arguments", "", "JSON object"},
		{"built-in tools", `{"model":"m","input":"hi","tools":[{"type":"web_search"},{"type":"function","name":"f"},{"type":"file_search","vector_store_ids":["vs"]},{"type":"web_search"}]}`, "tools", "", "web_search, file_search"},
		{"computer use", `{"model":"m","input":"hi","tools":[{"type":"computer_use_preview","display_width":1024}]}`, "tools", "", "computer_use_preview"},
		{"tool without a name", `{"model":"m","input":"hi","tools":[{"type":"function"}]}`, "tools[0].name", "", "name"},
		{"hosted tool_choice", `{"model":"m","input":"hi","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"file_search"}}`, "tool_choice", "", "file_search"},
		{"unknown tool_choice", `{"model":"m","input":"hi","tool_choice":"always"}`, "tool_choice", "", "always"},
		{"bad max_output_tokens", `{"model":"m","input":"hi","max_output_tokens":-5}`, "max_output_tokens", "", "positive integer"},
		{"image by file_id", `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","file_id":"file-1"}]}]}`, "input[0].content[0].image_url", "", "file_id"},
		{"image with a bad URL", `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"ftp://x"}]}]}`, "input[0].content[0].image_url", "", "http(s) URL"},
		{"file that is not a PDF", `{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_data":"data:text/csv;base64,YQ=="}]}]}`, "input[0].content[0].file_data", "", "PDF"},
		{"audio part", `{"model":"m","input":[{"role":"user","content":[{"type":"input_audio"}]}]}`, "input[0].content[0].type", "", "input_audio"},
		{"item reference", `{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`, "input[0]", "", "previous_response_id"},
		{"json_schema without schema", `{"model":"m","input":"hi","text":{"format":{"type":"json_schema","name":"x"}}}`, "text.format.schema", "", "schema"},
		{"unknown text format", `{"model":"m","input":"hi","text":{"format":{"type":"xml"}}}`, "text.format.type", "", "xml"},
		{"instructions not a string", `{"model":"m","input":"hi","instructions":[1]}`, "instructions", "", "string"},
		{"unknown previous response", `{"model":"m","input":"hi","previous_response_id":"resp_gone"}`, "previous_response_id", "previous_response_not_found", "resp_gone"},
		{"system part that is not text", `{"model":"m","input":[{"role":"developer","content":[{"type":"input_image","image_url":"https://x/y.png"}]}]}`, "input[0].content[0]", "", "input_text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ResponsesRequestToAnthropic([]byte(tt.body), ResponsesRequestOptions{})
			var re *ResponsesRequestError
			if !errors.As(err, &re) {
				t.Fatalf("ResponsesRequestToAnthropic(%s) = %s, %v; want a *ResponsesRequestError", tt.body, out, err)
			}
			if re.Status != http.StatusBadRequest || re.Param != tt.param || re.Code != tt.code || !strings.Contains(re.Message, tt.want) {
				t.Errorf("error = %+v; want status 400, param %q, code %q, message containing %q", re, tt.param, tt.code, tt.want)
			}
			// The body the client gets is OpenAI's shape, with param and code.
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

func TestResponsesRequestFromAnthropicRefusesBadInput(t *testing.T) {
	tests := []struct{ name, body, param, want string }{
		{"malformed JSON", `{"model":"gpt-5","messages":[`, "", "could not parse"},
		{"invalid escape", `{"model":"gpt-5","max_tokens":10,"messages":[{"role":"user","content":"\q"}]}`, "", "invalid escape"},
		{"missing model", `{"max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, "model", "Field required"},
		{"server tools", `{"model":"gpt-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"web_search_20250305","name":"web_search"},{"name":"Read","input_schema":{"type":"object"}},{"type":"bash_20250124","name":"bash"}]}`, "tools", "web_search_20250305, bash_20250124"},
		{"system role message", `{"model":"gpt-5","max_tokens":10,"messages":[{"role":"system","content":"hi"}]}`, "messages.0.role", "'user' or 'assistant'"},
		{"image from a file", `{"model":"gpt-5","max_tokens":10,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}]}`, "messages.0.content.0.source.type", "'file'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ResponsesRequestFromAnthropic([]byte(tt.body), ResponsesRequestOptions{})
			var re *ResponsesRequestError
			if !errors.As(err, &re) {
				t.Fatalf("ResponsesRequestFromAnthropic(%s) = %s, %v; want a *ResponsesRequestError", tt.body, out, err)
			}
			if re.Status != http.StatusBadRequest || re.Param != tt.param || !strings.Contains(re.Message, tt.want) {
				t.Errorf("error = %+v; want status 400, param %q, message containing %q", re, tt.param, tt.want)
			}
			// A Messages client gets the refusal in Anthropic's shape.
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
// the Responses shape and back unchanged.
func TestResponsesRequestRoundTripFromAnthropic(t *testing.T) {
	in := `{"model":"gpt-5","max_tokens":4096,"system":"Be brief.",
	"messages":[
	 {"role":"user","content":"What is in /src?"},
	 {"role":"assistant","content":[{"type":"thinking","thinking":"List it.","signature":"openai-reasoning:rs_1:gAAAAx"},{"type":"text","text":"Listing."},{"type":"tool_use","id":"call_1","name":"ls","input":{"path":"/src"}},{"type":"tool_use","id":"call_2","name":"ls","input":{}}]},
	 {"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"a.go\nb.go"},{"type":"tool_result","tool_use_id":"call_2","content":[{"type":"text","text":"x"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]},{"type":"text","text":"Now <explain> \"them\"."}]}
	],
	"tools":[{"name":"ls","description":"List","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}],
	"tool_choice":{"type":"auto","disable_parallel_tool_use":true},
	"thinking":{"type":"enabled","budget_tokens":2048},
	"metadata":{"user_id":"session-1"},
	"stream":true}`
	mid, err := ResponsesRequestFromAnthropic([]byte(in), ResponsesRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ResponsesRequestToAnthropic(mid, ResponsesRequestOptions{ForResponses: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, mid)
	}
	if !reflect.DeepEqual(canonicalJSON(t, back), canonicalJSON(t, []byte(in))) {
		t.Errorf("round trip changed the request:\nin:   %s\nmid:  %s\nback: %s", in, mid, back)
	}
}

// A Responses request in the form the translation writes survives a trip to
// the Messages shape and back unchanged, encrypted reasoning included.
func TestResponsesRequestRoundTripToAnthropic(t *testing.T) {
	in := `{"model":"gpt-5-codex","instructions":"You are Codex.",
	"input":[
	 {"type":"message","role":"user","content":"Fix it."},
	 {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Look first."}],"encrypted_content":"gAAAAenc"},
	 {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Looking.","annotations":[]}]},
	 {"type":"function_call","call_id":"call_1","name":"shell","arguments":"{\"command\":[\"cat\",\"main.go\"]}"},
	 {"type":"function_call_output","call_id":"call_1","output":"package main"},
	 {"type":"message","role":"user","content":[{"type":"input_text","text":"And?"},{"type":"input_image","detail":"auto","image_url":"https://example.com/x.png"}]}
	],
	"tools":[{"type":"function","name":"shell","parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}}},"strict":false}],
	"tool_choice":"required","parallel_tool_calls":false,"max_output_tokens":30000,
	"reasoning":{"effort":"high","summary":"auto"},"include":["reasoning.encrypted_content"],
	"metadata":{"user_id":"s-1"},"store":false,"stream":true}`
	mid, err := ResponsesRequestToAnthropic([]byte(in), ResponsesRequestOptions{ForResponses: true})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ResponsesRequestFromAnthropic(mid, ResponsesRequestOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, mid)
	}
	want := in
	if !reflect.DeepEqual(canonicalJSON(t, back), canonicalJSON(t, []byte(want))) {
		t.Errorf("round trip changed the request:\nin:   %s\nmid:  %s\nback: %s", want, mid, back)
	}
}

// Signatures never cross families: OpenAI's encrypted reasoning never reaches
// a request for Anthropic, and Claude's signatures never reach a request for
// OpenAI; each family's own goes back to it.
func TestResponsesSignaturesStayInTheirFamily(t *testing.T) {
	responses := `{"model":"m","input":[{"role":"user","content":"q"},
	 {"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA-openai-secret"},
	 {"type":"reasoning","id":"rs_2","summary":[{"type":"summary_text","text":"Claude thought."}],"encrypted_content":"anthropic-thinking:EqClaudeSig"},
	 {"type":"reasoning","id":"rs_3","summary":[],"encrypted_content":"anthropic-redacted:opaqueData"},
	 {"type":"message","role":"assistant","content":"a"},{"role":"user","content":"next"}]}`
	toClaude, err := ResponsesRequestToAnthropic([]byte(responses), ResponsesRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(toClaude), "openai-secret") {
		t.Errorf("OpenAI reasoning sent toward Anthropic: %s", toClaude)
	}
	for _, want := range []string{`{"type":"thinking","thinking":"Claude thought.","signature":"EqClaudeSig"}`, `{"type":"redacted_thinking","data":"opaqueData"}`} {
		if !strings.Contains(string(toClaude), want) {
			t.Errorf("Claude's own thinking %s not restored: %s", want, toClaude)
		}
	}

	// The same conversation bound for a Responses upstream keeps OpenAI's
	// reasoning and drops Claude's.
	mid, err := ResponsesRequestToAnthropic([]byte(responses), ResponsesRequestOptions{ForResponses: true})
	if err != nil {
		t.Fatal(err)
	}
	toOpenAI, err := ResponsesRequestFromAnthropic(mid, ResponsesRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(toOpenAI), `"encrypted_content":"gAAAA-openai-secret"`) {
		t.Errorf("OpenAI reasoning lost on its way back to OpenAI: %s", toOpenAI)
	}
	for _, leak := range []string{"EqClaudeSig", "opaqueData"} {
		if strings.Contains(string(toOpenAI), leak) {
			t.Errorf("Claude's %s sent toward OpenAI: %s", leak, toOpenAI)
		}
	}
}

func TestResponsesReasoningEffortMapsToThinking(t *testing.T) {
	tests := []struct {
		effort    string
		maxOutput string
		want      string // the thinking member, "" for none
	}{
		{"minimal", "", ""},
		{"none", "", ""},
		{"low", "", `{"type":"enabled","budget_tokens":2048}`},
		{"medium", "", `{"type":"enabled","budget_tokens":8192}`},
		{"high", "", `{"type":"enabled","budget_tokens":24576}`},
		{"high", `,"max_output_tokens":10000`, `{"type":"enabled","budget_tokens":8976}`}, // kept below max_tokens
		{"low", `,"max_output_tokens":1500`, ""},                                          // no room for the 1024-token minimum
	}
	for _, tt := range tests {
		body := `{"model":"m","input":"hi","temperature":0.3,"reasoning":{"effort":"` + tt.effort + `"}` + tt.maxOutput + `}`
		out, err := ResponsesRequestToAnthropic([]byte(body), ResponsesRequestOptions{})
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
			t.Errorf("effort %s%s: thinking = %s; want %s", tt.effort, tt.maxOutput, got.Thinking, tt.want)
		}
		// Messages refuses a temperature with thinking on.
		if (got.Temperature != nil) != (tt.want == "") {
			t.Errorf("effort %s%s: temperature = %v with thinking %s", tt.effort, tt.maxOutput, got.Temperature, got.Thinking)
		}
	}
}

func TestResponsesUserMessageAfterToolOutputsComesAfterResults(t *testing.T) {
	body := `{"model":"m","input":[{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
	 {"role":"user","content":"by the way"},
	 {"type":"function_call_output","call_id":"c1","output":"done"}]}`
	out, err := ResponsesRequestToAnthropic([]byte(body), ResponsesRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Messages []struct {
			Role    string
			Content []struct{ Type string }
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 2 || got.Messages[1].Role != "user" || len(got.Messages[1].Content) != 2 ||
		got.Messages[1].Content[0].Type != "tool_result" || got.Messages[1].Content[1].Type != "text" {
		t.Errorf("messages = %s; want the tool_result first in the user turn", out)
	}
}

func TestResponsesRequestFromAnthropicRaisesTinyMaxTokens(t *testing.T) {
	out, err := ResponsesRequestFromAnthropic([]byte(`{"model":"gpt-5","max_tokens":1,"messages":[{"role":"user","content":"quota"}]}`), ResponsesRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"max_output_tokens":16`) {
		t.Errorf("max_tokens 1 became %s; want the Responses minimum, 16", out)
	}
}

// Toward Anthropic, a forced tool call wins over thinking (Messages refuses
// both); on the way back to Responses both are kept.
func TestResponsesForcedToolAndThinking(t *testing.T) {
	body := []byte(`{"model":"m","input":"hi","tools":[{"type":"function","name":"f"}],"tool_choice":"required","reasoning":{"effort":"low"},"temperature":0.4}`)
	toClaude, err := ResponsesRequestToAnthropic(body, ResponsesRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(toClaude), `"thinking"`) || !strings.Contains(string(toClaude), `"tool_choice":{"type":"any"}`) || !strings.Contains(string(toClaude), `"temperature":0.4`) {
		t.Errorf("toward Anthropic: %s", toClaude)
	}
	mid, err := ResponsesRequestToAnthropic(body, ResponsesRequestOptions{ForResponses: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mid), `"thinking":{"type":"enabled","budget_tokens":2048}`) || !strings.Contains(string(mid), `"temperature":0.4`) {
		t.Errorf("toward Responses: %s", mid)
	}
}

// A Responses request without max_output_tokens, bound back to Responses,
// stays without it: the Messages default would exceed some models' limits.
func TestResponsesMaxOutputTokensStaysUnsetOnTheWayBack(t *testing.T) {
	body := []byte(`{"model":"gpt-4o","input":"hi"}`)
	mid, err := ResponsesRequestToAnthropic(body, ResponsesRequestOptions{ForResponses: true})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ResponsesRequestFromAnthropic(mid, ResponsesRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mid), "max_tokens") || strings.Contains(string(back), "max_output_tokens") {
		t.Errorf("max tokens appeared: %s → %s", mid, back)
	}
	toClaude, err := ResponsesRequestToAnthropic(body, ResponsesRequestOptions{MaxTokens: 4096})
	if err != nil || !strings.Contains(string(toClaude), `"max_tokens":4096`) {
		t.Errorf("toward Anthropic max_tokens must be set: %s (%v)", toClaude, err)
	}
}

// The one-pass translation does not depend on member order: input ahead of
// model and instructions, a developer message longer than the room kept for
// the system prompt, and a repeated input (the last one counts) give the
// request the members in their usual order give.
func TestResponsesRequestToAnthropicMemberOrder(t *testing.T) {
	dev := strings.Repeat("Follow the rules. ", 200)
	items := `[{"role":"developer","content":"` + dev + `"},{"role":"user","content":"a"},{"role":"user","content":[{"type":"input_text","text":"b"}]}]`
	want := `{"model":"m","max_tokens":32000,"system":[{"type":"text","text":"ins"},{"type":"text","text":"` + dev + `"}],` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`
	for name, body := range map[string]string{
		"usual order":    `{"model":"m","instructions":"ins","input":` + items + `}`,
		"input first":    `{"input":` + items + `,"instructions":"ins","model":"m"}`,
		"repeated input": `{"input":[{"role":"tool","content":"x"}],"model":"m","input":` + items + `,"instructions":"ins"}`,
	} {
		got, err := ResponsesRequestToAnthropic([]byte(body), ResponsesRequestOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(canonicalJSON(t, got), canonicalJSON(t, []byte(want))) {
			t.Errorf("%s: ResponsesRequestToAnthropic = %s; want %s", name, got, want)
		}
	}
}
