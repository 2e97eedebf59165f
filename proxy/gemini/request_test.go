package gemini_test

import (
	"strings"
	"testing"

	"longhaul/proxy/gemini"
)

// Consecutive messages of one role become one Gemini content, so roles
// alternate even when a thinking-only turn is dropped or a system message
// sits mid-conversation.
func TestConsecutiveRolesMerge(t *testing.T) {
	in := `{"model":"m","max_tokens":10,"messages":[
	 {"role":"user","content":"a"},
	 {"role":"system","content":"b"},
	 {"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"EqAnthropic"}]},
	 {"role":"user","content":[{"type":"text","text":"c"}]},
	 {"role":"assistant","content":"d"},
	 {"role":"assistant","content":[{"type":"redacted_thinking","data":"x"}]},
	 {"role":"assistant","content":"e"}]}`
	out, err := gemini.RequestFromAnthropic([]byte(in), gemini.RequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"contents":[{"role":"user","parts":[{"text":"a"},{"text":"b"},{"text":"c"}]},{"role":"model","parts":[{"text":"d"},{"text":"e"}]}],"generationConfig":{"maxOutputTokens":10}}`
	if string(out) != want {
		t.Errorf("RequestFromAnthropic =\n%s\nwant\n%s", out, want)
	}
}

// A user turn that mixes text and function responses puts the tool_result
// blocks first, as Messages requires.
func TestToolResultsComeFirst(t *testing.T) {
	in := `{"contents":[{"role":"user","parts":[{"text":"go"}]},
	 {"role":"model","parts":[{"functionCall":{"id":"c1","name":"f","args":{}}}]},
	 {"role":"user","parts":[{"text":"here you are"},{"functionResponse":{"id":"c1","name":"f","response":{"output":"ok"}}},{"text":" and more"}]}]}`
	out, err := gemini.RequestToAnthropic([]byte(in), gemini.RequestOptions{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"ok"},{"type":"text","text":"here you are and more"}]}`
	if !strings.Contains(string(out), want) {
		t.Errorf("RequestToAnthropic = %s\nwant it to contain %s", out, want)
	}
}
