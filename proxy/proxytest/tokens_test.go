package proxytest

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestTextTokens(t *testing.T) {
	tests := []struct {
		name string
		text string
		want int
	}{
		{"empty text is free", "", 0},
		{"spaces alone are free", "   \t ", 0},
		{"a word of up to five letters is one token", "hello", 1},
		{"a longer word is a token per five letters", "repository", 2},
		{"digits and underscores belong to the word", "line_12345", 2},
		{"accented letters belong to the word", "héllo", 1},
		{"a punctuation run is a token per three characters", "()=>{}", 2},
		{"punctuation splits words", "a.b", 3},
		{"each Han or kana character is a token", "世界かな", 4},
		{"a whitespace run with line breaks is one token", "a\n\n\nb", 3},
		{"a sentence", "Follow the repository conventions.", 2 + 1 + 2 + 3 + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := textTokens(tt.text); got != tt.want {
				t.Errorf("textTokens(%q) = %d; want %d", tt.text, got, tt.want)
			}
		})
	}
}

func TestCountTokensRules(t *testing.T) {
	const base = requestTokens + messageTokens + blockTokens // one message of one block
	tests := []struct {
		name string
		body string
		want int
	}{
		{"a string message is one text block", `{"messages":[{"role":"user","content":"hello world"}]}`, base + 2},
		{"text blocks count their text", `{"messages":[{"role":"user","content":[{"type":"text","text":"hello world"}]}]}`, base + 2},
		{"cache_control costs nothing", `{"messages":[{"role":"user","content":[{"type":"text","text":"hello world","cache_control":{"type":"ephemeral"}}]}]}`, base + 2},
		{"a thinking signature is free", `{"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"EqAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}]}]}`, base + 1},
		{"tool input counts as its compact JSON", `{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{ "path" : "a" }}]}]}`,
			base + 1 + textTokens(`{"path":"a"}`)},
		{"a tool result counts its string content", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"one two"}]}]}`, base + 2},
		{"a tool result's blocks count as blocks", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"one"},{"type":"image","source":{}}]}]}]}`,
			base + blockTokens + 1 + blockTokens + imageTokens},
		{"a text document counts its text, any other a fixed cost", `{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"text","data":"one"}},{"type":"document","source":{"type":"base64","data":"JVBER"}}]}]}`,
			base + 1 + blockTokens + documentTokens},
		{"system string and blocks", `{"system":[{"type":"text","text":"be brief"},{"type":"text","text":"ok"}],"messages":[]}`,
			requestTokens + 2*blockTokens + 3},
		{"a tool counts name, description and schema", `{"tools":[{"name":"Read","description":"Reads a file","input_schema":{"type":"object"}}],"messages":[]}`,
			requestTokens + toolTokens + 1 + 3 + textTokens(`{"type":"object"}`)},
		{"an empty message still takes a turn", `{"messages":[{"role":"user","content":[]}]}`, requestTokens + messageTokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CountTokens([]byte(tt.body))
			if err != nil || got != tt.want {
				t.Errorf("CountTokens(%s) = %d, %v; want %d", tt.body, got, err, tt.want)
			}
		})
	}
	for _, bad := range []string{`not json`, `{"messages":[{"role":"user","content":42}]}`, `{"tools":[1]}`} {
		if _, err := CountTokens([]byte(bad)); err == nil {
			t.Errorf("CountTokens(%s) succeeded; want an error", bad)
		}
	}
}

// The counter must differ from Longhaul's estimator (bytes/4 by character class) in a way that
// depends on the text, so calibration has something to learn, yet stay inside the
// calibrator's clamp (0.5–2×) so that it can.
func TestCountTokensDiffersFromBytesByKind(t *testing.T) {
	msg := func(text string) []byte {
		b, _ := json.Marshal(map[string]any{"messages": []any{map[string]any{"role": "user", "content": text}}})
		return b
	}
	ratio := func(body []byte, text string) float64 {
		n, err := CountTokens(body)
		if err != nil {
			t.Fatal(err)
		}
		return float64(n) / (float64(len(text)) / 4)
	}
	prose := strings.Repeat("The quick brown fox jumps over the lazy dog, then runs into the forest. ", 200)
	code := strings.Repeat("\tif err := f(x[i]); err != nil { return fmt.Errorf(\"f: %w\", err) }\n", 200)
	rp, rc := ratio(msg(prose), prose), ratio(msg(code), code)
	if rp < 0.6 || rp > 1.6 || rc < 0.6 || rc > 1.9 || rc-rp < 0.2 {
		t.Errorf("count/(bytes/4): prose %.2f, code %.2f; want both in the calibrator's range and code denser by 0.2", rp, rc)
	}
}

func TestSimulatedCountIsTheReportedInput(t *testing.T) {
	u := NewUpstream()
	defer u.Close()
	body := `{"model":"m","stream":false,"system":"be brief","messages":[{"role":"user","content":"hello there, upstream"}]}`
	want, err := CountTokens([]byte(body))
	if err != nil {
		t.Fatal(err)
	}

	var plain Message // the zero Simulation keeps the scripted usage
	json.NewDecoder(post(t, u, "/v1/messages", body).Body).Decode(&plain)
	if plain.Usage.InputTokens != 25 || u.LastRequest().Tokens != 0 || u.LastRequest().Usage != nil {
		t.Fatalf("unsimulated usage %+v, recorded %d", plain.Usage, u.LastRequest().Tokens)
	}

	u.SetSimulation(Simulation{CountTokens: true})
	msg := TextMessage("m", "counted")
	u.Enqueue(Reply{Message: msg})
	var got Message
	json.NewDecoder(post(t, u, "/v1/messages", body).Body).Decode(&got)
	if got.Usage.InputTokens != want || got.Usage.OutputTokens != msg.Usage.OutputTokens || got.Content[0].Text != "counted" {
		t.Errorf("usage %+v; want input %d and the scripted output %d", got.Usage, want, msg.Usage.OutputTokens)
	}
	if rec := u.LastRequest(); rec.Tokens != want || rec.Usage == nil || *rec.Usage != got.Usage {
		t.Errorf("recorded tokens %d usage %v; want %d and %+v", rec.Tokens, rec.Usage, want, got.Usage)
	}
	if msg.Usage.InputTokens != 25 {
		t.Errorf("the scripted message was mutated: %+v", msg.Usage)
	}

	// A stream reports it in message_start.
	evs, err := parseSSE(t, post(t, u, "/v1/messages", strings.Replace(body, `"stream":false`, `"stream":true`, 1)).Body)
	if err != nil || len(evs) == 0 {
		t.Fatalf("stream: %v", err)
	}
	var start struct{ Message struct{ Usage Usage } }
	json.Unmarshal(evs[0].Data, &start)
	if start.Message.Usage.InputTokens != want {
		t.Errorf("message_start usage %+v; want input %d", start.Message.Usage, want)
	}

	var ct struct {
		InputTokens int `json:"input_tokens"`
	}
	json.NewDecoder(post(t, u, "/v1/messages/count_tokens", body).Body).Decode(&ct)
	if ct.InputTokens != want {
		t.Errorf("count_tokens = %d; want %d", ct.InputTokens, want)
	}

	resp := post(t, u, "/v1/messages", `{"messages":`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(b), `"invalid_request_error"`) {
		t.Errorf("malformed body = %d %s; want 400 invalid_request_error", resp.StatusCode, b)
	}
}
