package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The agent through the real mux, one protocol at a time: what each request shape gets back.

func post(t *testing.T, srv *httptest.Server, path, body string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-test-agent") // the Chat upstream wants a key
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s = %d %s", path, res.StatusCode, b)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("POST %s: %v in %s", path, err, b)
	}
	return out
}

func newAgentServer(t *testing.T) *httptest.Server {
	t.Helper()
	return newScriptedAgentServer(t, agentScript{})
}

// newScriptedAgentServer is the agent with -agent-calls (script), zero for none.
func newScriptedAgentServer(t *testing.T, script agentScript) *httptest.Server {
	t.Helper()
	ups := newUpstreams(0, true)
	ups.script = script
	srv := httptest.NewServer(ups.Handler())
	t.Cleanup(func() { srv.Close(); ups.Close() })
	return srv
}

const twoTools = `[{"name":"read_file","input_schema":{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"},"mode":{"enum":["fast","slow"]}},"required":["path","limit","mode"]}},
	{"name":"list_dir","input_schema":{"type":"object","properties":{}}}]`

func TestAgentMessages(t *testing.T) {
	tests := []struct {
		name     string
		messages string
		tools    string
		wantTool string // "" = text
		wantArgs string
	}{
		{"user text calls the first tool with its required arguments", `[{"role":"user","content":"fix it"}]`, twoTools,
			"read_file", `{"limit":1,"mode":"fast","path":"e2e"}`},
		{"user text blocks call the first tool too", `[{"role":"user","content":[{"type":"text","text":"fix it"}]}]`, twoTools, "read_file", ""},
		{"the first tool's result calls the second", `[{"role":"user","content":"fix it"},
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_x","name":"read_file","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","content":"ok"}]}]`, twoTools, "list_dir", "{}"},
		{"the last tool's result gets text", `[{"role":"user","content":"fix it"},
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_y","name":"list_dir","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_y","content":"ok"}]}]`, twoTools, "", ""},
		{"a result whose call is not in the request is placed by the id the agent wrote", `[
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_agent0_7","content":"ok"}]}]`, twoTools, "list_dir", ""},
		{"no tools: the default reply", `[{"role":"user","content":"hello"}]`, `[]`, "", ""},
	}
	srv := newAgentServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := post(t, srv, "/v1/messages", `{"model":"claude-test","max_tokens":100,"tools":`+tt.tools+`,"messages":`+tt.messages+`}`)
			content, _ := out["content"].([]any)
			var gotTool string
			var gotArgs []byte
			for _, c := range content {
				b := c.(map[string]any)
				if b["type"] == "tool_use" {
					gotTool, _ = b["name"].(string)
					gotArgs, _ = json.Marshal(b["input"])
				}
			}
			if gotTool != tt.wantTool {
				t.Errorf("tool called = %q; want %q (reply %v)", gotTool, tt.wantTool, out)
			}
			if tt.wantArgs != "" && string(gotArgs) != tt.wantArgs {
				t.Errorf("arguments = %s; want %s", gotArgs, tt.wantArgs)
			}
		})
	}
}

func TestAgentChat(t *testing.T) {
	tools := `[{"type":"function","function":{"name":"a","parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}},{"type":"function","function":{"name":"b","parameters":{}}}]`
	tests := []struct {
		name     string
		messages string
		wantCall string // "" = text
	}{
		{"a user message calls the first tool", `[{"role":"user","content":"go"}]`, "a"},
		{"the tool message answering a calls b", `[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"a","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"x"}]`, "b"},
		{"the tool message answering b gets text", `[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c2","type":"function","function":{"name":"b","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c2","content":"x"}]`, ""},
	}
	srv := newAgentServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := post(t, srv, "/v1/chat/completions", `{"model":"gpt-4o-mini","tools":`+tools+`,"messages":`+tt.messages+`}`)
			b, _ := json.Marshal(out)
			var reply struct {
				Choices []struct {
					Message struct {
						Content   *string `json:"content"`
						ToolCalls []struct {
							Function struct{ Name, Arguments string } `json:"function"`
						} `json:"tool_calls"`
					} `json:"message"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(b, &reply); err != nil || len(reply.Choices) != 1 {
				t.Fatalf("reply %s: %v", b, err)
			}
			msg := reply.Choices[0].Message
			got := ""
			if len(msg.ToolCalls) == 1 {
				got = msg.ToolCalls[0].Function.Name
				if got == "a" && msg.ToolCalls[0].Function.Arguments != `{"q":"e2e"}` {
					t.Errorf("a's arguments = %s; want {\"q\":\"e2e\"}", msg.ToolCalls[0].Function.Arguments)
				}
			}
			if got != tt.wantCall {
				t.Errorf("function called = %q; want %q (reply %s)", got, tt.wantCall, b)
			}
			if got == "" && (msg.Content == nil || *msg.Content != agentText(1)) {
				t.Errorf("text = %v; want %q", msg.Content, agentText(1))
			}
		})
	}
}

func TestAgentResponses(t *testing.T) {
	tools := `[{"type":"function","name":"a","parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}},{"type":"function","name":"b","parameters":{}}]`
	tests := []struct {
		name     string
		input    string
		wantCall string // "" = a message
	}{
		{"string input calls the first tool", `"go"`, "a"},
		{"a user message calls the first tool", `[{"role":"user","content":"go"}]`, "a"},
		{"the output of a's call calls b", `[{"role":"user","content":"go"},{"type":"function_call","call_id":"c1","name":"a","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"x"}]`, "b"},
		{"an output whose call is not in the request is placed by the id", `[{"type":"function_call_output","call_id":"call_agent0_3","output":"x"}]`, "b"},
		{"the output of b's call gets text", `[{"type":"function_call_output","call_id":"call_agent1_4","output":"x"}]`, ""},
	}
	srv := newAgentServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := post(t, srv, "/v1/responses", `{"model":"gpt-5","tools":`+tools+`,"input":`+tt.input+`}`)
			items, _ := out["output"].([]any)
			if len(items) != 1 {
				t.Fatalf("output = %v; want one item", items)
			}
			it := items[0].(map[string]any)
			got, _ := it["name"].(string)
			if got != tt.wantCall {
				t.Errorf("function called = %q; want %q (item %v)", got, tt.wantCall, it)
			}
		})
	}
}

func TestAgentResponsesContinuesPreviousResponseID(t *testing.T) {
	srv := newAgentServer(t)
	tools := `[{"type":"function","name":"a","parameters":{}},{"type":"function","name":"b","parameters":{}}]`
	r1 := post(t, srv, "/v1/responses", `{"model":"gpt-5","tools":`+tools+`,"input":"go"}`)
	call1 := r1["output"].([]any)[0].(map[string]any)
	r2 := post(t, srv, "/v1/responses", `{"model":"gpt-5","tools":`+tools+`,"previous_response_id":"`+r1["id"].(string)+
		`","input":[{"type":"function_call_output","call_id":"`+call1["call_id"].(string)+`","output":"x"}]}`)
	call2 := r2["output"].([]any)[0].(map[string]any)
	if call1["name"] != "a" || call2["name"] != "b" {
		t.Fatalf("calls = %v, %v; want a then b", call1["name"], call2["name"])
	}
	r3 := post(t, srv, "/v1/responses", `{"model":"gpt-5","tools":`+tools+`,"previous_response_id":"`+r2["id"].(string)+
		`","input":[{"type":"function_call_output","call_id":"`+call2["call_id"].(string)+`","output":"y"}]}`)
	msg := r3["output"].([]any)[0].(map[string]any)
	text := msg["content"].([]any)[0].(map[string]any)["text"]
	if text != agentText(2) {
		t.Errorf("final text = %q; want %q (both outputs of the chained conversation)", text, agentText(2))
	}
}

func TestAgentGemini(t *testing.T) {
	tools := `[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"q":{"type":"STRING"}},"required":["q"]}},{"name":"g"}]}]`
	tests := []struct {
		name     string
		contents string
		wantCall string
	}{
		{"user text calls the first function", `[{"role":"user","parts":[{"text":"go"}]}]`, "f"},
		{"f's response calls g", `[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"functionCall":{"name":"f","args":{}},"thoughtSignature":"skip_thought_signature_validator"}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":"x"}}}]}]`, "g"},
		{"g's response gets text", `[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"functionCall":{"name":"g","args":{}},"thoughtSignature":"skip_thought_signature_validator"}]},{"role":"user","parts":[{"functionResponse":{"name":"g","response":{"output":"x"}}}]}]`, ""},
	}
	srv := newAgentServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := post(t, srv, "/v1beta/models/gemini-2.5-flash:generateContent", `{"tools":`+tools+`,"contents":`+tt.contents+`}`)
			b, _ := json.Marshal(out)
			var reply struct {
				Candidates []struct {
					Content struct {
						Parts []struct {
							FunctionCall *struct {
								Name string          `json:"name"`
								Args json.RawMessage `json:"args"`
							} `json:"functionCall"`
						} `json:"parts"`
					} `json:"content"`
				} `json:"candidates"`
			}
			if err := json.Unmarshal(b, &reply); err != nil || len(reply.Candidates) != 1 {
				t.Fatalf("reply %s: %v", b, err)
			}
			got := ""
			for _, p := range reply.Candidates[0].Content.Parts {
				if p.FunctionCall != nil {
					got = p.FunctionCall.Name
					if got == "f" && string(p.FunctionCall.Args) != `{"q":"e2e"}` {
						t.Errorf("f's args = %s; want {\"q\":\"e2e\"}", p.FunctionCall.Args)
					}
				}
			}
			if got != tt.wantCall {
				t.Errorf("function called = %q; want %q (reply %s)", got, tt.wantCall, b)
			}
		})
	}
}

func TestRecordsListEveryProtocol(t *testing.T) {
	srv := newAgentServer(t)
	post(t, srv, "/v1/messages", `{"model":"claude-test","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`)
	post(t, srv, "/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`)
	post(t, srv, "/v1/responses", `{"model":"gpt-5","input":"hi"}`)
	post(t, srv, "/v1beta/models/gemini-2.5-flash:generateContent?key=secret-key", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	res, err := http.Get(srv.URL + "/scripted/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var recs []record
	if err := json.NewDecoder(res.Body).Decode(&recs); err != nil {
		t.Fatal(err)
	}
	want := []struct{ protocol, model string }{{"anthropic", "claude-test"}, {"openai-chat", "gpt-4o-mini"}, {"openai-responses", "gpt-5"}, {"gemini", "gemini-2.5-flash"}}
	if len(recs) != len(want) {
		t.Fatalf("records = %+v; want %d", recs, len(want))
	}
	for i, w := range want {
		if recs[i].Protocol != w.protocol || recs[i].Model != w.model {
			t.Errorf("record %d = %s %s; want %s %s", i, recs[i].Protocol, recs[i].Model, w.protocol, w.model)
		}
	}
	if strings.Contains(recs[3].Query, "secret-key") {
		t.Errorf("record query %q shows the key", recs[3].Query)
	}
}

func TestParseAgentScript(t *testing.T) {
	tests := []struct {
		in      string
		want    agentScript
		wantErr bool
	}{
		{"", agentScript{}, false},
		{"Bash:40", agentScript{Tool: "Bash", Calls: 40}, false},
		{"mcp:tool:2", agentScript{}, true}, // the count after the first colon is "tool:2"
		{"Bash", agentScript{}, true},
		{":3", agentScript{}, true},
		{"Bash:0", agentScript{}, true},
		{"Bash:x", agentScript{}, true},
	}
	for _, tt := range tests {
		got, err := parseAgentScript(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("parseAgentScript(%q) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// Claude Code's tools, in its order: the script's tool is not the first.
const claudeCodeTools = `[{"name":"Agent","input_schema":{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}},
	{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"number"}},"required":["command"]}},
	{"name":"Read","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}}]`

// messagesToolUse is the tool_use block of a Messages reply, or ok false for a text answer.
func messagesToolUse(t *testing.T, reply map[string]any) (use map[string]any, text string, ok bool) {
	t.Helper()
	content, _ := reply["content"].([]any)
	for _, c := range content {
		b := c.(map[string]any)
		switch b["type"] {
		case "tool_use":
			return b, "", true
		case "text":
			text, _ = b["text"].(string)
		}
	}
	return nil, text, false
}

func TestAgentScriptCallsOneToolNTimesThenAnswers(t *testing.T) {
	const calls = 5
	srv := newScriptedAgentServer(t, agentScript{Tool: "Bash", Calls: calls})
	// A client's loop: send the conversation, run each call the agent makes, send it back.
	messages := []any{map[string]any{"role": "user", "content": "run e2e until it is done"}}
	var called []string
	for range calls + 2 {
		body, err := json.Marshal(map[string]any{"model": "claude-test", "max_tokens": 100, "tools": json.RawMessage(claudeCodeTools), "messages": messages})
		if err != nil {
			t.Fatal(err)
		}
		reply := post(t, srv, "/v1/messages", string(body))
		use, text, ok := messagesToolUse(t, reply)
		if !ok {
			if want := agentText(calls); text != want {
				t.Errorf("final text = %q; want %q", text, want)
			}
			break
		}
		called = append(called, use["name"].(string))
		if got, want := string(mustJSON(t, use["input"])), `{"command":"e2e"}`; got != want {
			t.Errorf("call %d input = %s; want %s", len(called), got, want)
		}
		messages = append(messages,
			map[string]any{"role": "assistant", "content": reply["content"]},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": use["id"], "content": "e2e output"}}})
	}
	want := []string{"Bash", "Bash", "Bash", "Bash", "Bash"}
	if strings.Join(called, ",") != strings.Join(want, ",") {
		t.Errorf("calls = %v; want %v, then text", called, want)
	}
}

func TestAgentScriptRounds(t *testing.T) {
	script := agentScript{Tool: "Bash", Calls: 3}
	bashRound := func(id string) string {
		return `{"role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"Bash","input":{"command":"e2e"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"ok"}]}`
	}
	tests := []struct {
		name      string
		messages  string
		tools     string
		wantRound int // 0 = text
	}{
		{"user text calls the script's tool, round 1", `[{"role":"user","content":"go"}]`, claudeCodeTools, 1},
		{"two answered calls: round 3", `[{"role":"user","content":"go"},` + bashRound("toolu_a") + `,` + bashRound("toolu_b") + `]`, claudeCodeTools, 3},
		{"three answered calls: text", `[{"role":"user","content":"go"},` + bashRound("toolu_a") + `,` + bashRound("toolu_b") + `,` + bashRound("toolu_c") + `]`, claudeCodeTools, 0},
		{"early rounds compacted away: the round is read from the last call's id", `[{"role":"user","content":"[earlier rounds summarised]"},` +
			bashRound("toolu_agent1_9_round2") + `]`, claudeCodeTools, 3},
		{"the last round's id alone ends the script", `[{"role":"user","content":"[earlier rounds summarised]"},` +
			bashRound("toolu_agent1_9_round3") + `]`, claudeCodeTools, 0},
		{"the script's tool is not offered: text", `[{"role":"user","content":"go"}]`, twoTools, 0},
	}
	srv := newScriptedAgentServer(t, script)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply := post(t, srv, "/v1/messages", `{"model":"claude-test","max_tokens":100,"tools":`+tt.tools+`,"messages":`+tt.messages+`}`)
			use, _, ok := messagesToolUse(t, reply)
			gotRound := 0
			if ok {
				if use["name"] != "Bash" {
					t.Fatalf("called %v; want Bash", use["name"])
				}
				gotRound = agentRoundOfID(use["id"].(string))
			}
			if gotRound != tt.wantRound {
				t.Errorf("round = %d; want %d (reply %v)", gotRound, tt.wantRound, reply)
			}
		})
	}
}

func TestAgentScriptOtherProtocols(t *testing.T) {
	srv := newScriptedAgentServer(t, agentScript{Tool: "b", Calls: 2})
	t.Run("chat: one answered call of b calls b again, two answer in text", func(t *testing.T) {
		tools := `[{"type":"function","function":{"name":"a","parameters":{}}},{"type":"function","function":{"name":"b","parameters":{}}}]`
		round := func(id string) string {
			return `{"role":"assistant","content":null,"tool_calls":[{"id":"` + id + `","type":"function","function":{"name":"b","arguments":"{}"}}]},{"role":"tool","tool_call_id":"` + id + `","content":"x"}`
		}
		first := post(t, srv, "/v1/chat/completions", `{"model":"gpt-4o-mini","tools":`+tools+`,"messages":[{"role":"user","content":"go"},`+round("c1")+`]}`)
		if b := mustJSON(t, first); !strings.Contains(string(b), `"name":"b"`) {
			t.Errorf("after one call of b: %s; want another call of b", b)
		}
		second := post(t, srv, "/v1/chat/completions", `{"model":"gpt-4o-mini","tools":`+tools+`,"messages":[{"role":"user","content":"go"},`+round("c1")+`,`+round("c2")+`]}`)
		if b := mustJSON(t, second); strings.Contains(string(b), `"tool_calls"`) || !strings.Contains(string(b), agentText(2)) {
			t.Errorf("after two calls of b: %s; want the text %q", b, agentText(2))
		}
	})
	t.Run("gemini: results counted by function name", func(t *testing.T) {
		tools := `[{"functionDeclarations":[{"name":"a"},{"name":"b"}]}]`
		call := `{"role":"model","parts":[{"functionCall":{"name":"b","args":{}},"thoughtSignature":"skip_thought_signature_validator"}]},{"role":"user","parts":[{"functionResponse":{"name":"b","response":{"output":"x"}}}]}`
		once := post(t, srv, "/v1beta/models/gemini-2.5-flash:generateContent", `{"tools":`+tools+`,"contents":[{"role":"user","parts":[{"text":"go"}]},`+call+`]}`)
		if b := mustJSON(t, once); !strings.Contains(string(b), "functionCall") || !strings.Contains(string(b), `"name":"b"`) {
			t.Errorf("after one call of b: %s; want another call of b", b)
		}
		twice := post(t, srv, "/v1beta/models/gemini-2.5-flash:generateContent", `{"tools":`+tools+`,"contents":[{"role":"user","parts":[{"text":"go"}]},`+call+`,`+call+`]}`)
		if b := mustJSON(t, twice); strings.Contains(string(b), "functionCall") || !strings.Contains(string(b), agentText(2)) {
			t.Errorf("after two calls of b: %s; want the text %q", b, agentText(2))
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
