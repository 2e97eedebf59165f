package gemini

import (
	"encoding/json"
	"strings"
	"testing"

	"longhaul/proxy/anthropic"
)

// checkText agrees with encoding/json on the strings the scanner lets
// through, on either side of the eight-byte fast path.
func TestCheckTextAgreesWithJSON(t *testing.T) {
	pad := strings.Repeat("a", 13)
	for _, s := range []string{
		`{"t":"plain"}`, `{"t":"` + pad + `\n` + pad + `"}`, `{"t":"` + pad + `\u00e9` + pad + `"}`, `{"t":"héllo 世界` + pad + `"}`,
		"{\"t\":\"" + pad + "\x00" + pad + "\"}", "{\"t\":\"" + pad + "\n\"}", "{\"t\":\"\x1f\"}", `{"t":"` + pad + `\q"}`,
		`{"t":"\u12G4"}`, `{"t":"\u12"}`, `{"t":"ends with \\"}`, "{\"t\":1}\x01", `{"t":"` + pad + `\"` + pad + `"}`,
		`{"t":"` + strings.Repeat(`\\`, 9) + `"}`, "{\"t\":\"\x7f\x80\"}",
	} {
		got := checkText([]byte(s)) == nil
		if want := json.Valid([]byte(s)); got != want {
			t.Errorf("checkText(%q) ok = %v; json.Valid = %v", s, got, want)
		}
	}
}

func BenchmarkCheckText800KB(b *testing.B) {
	body := []byte(`{"t":"` + strings.Repeat(`     1\tfunc line1() { return \"héllo, 世界\" } // \\ \"quoted\"\n`, 800<<10/70) + `"}`)
	b.SetBytes(int64(len(body)))
	for range b.N {
		if err := checkText(body); err != nil {
			b.Fatal(err)
		}
	}
}

// is_error is read around a tool_result's content, never inside it.
func TestIsErrorAroundContent(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"type":"tool_result","tool_use_id":"t","content":"x","is_error":true}`:                          true,
		`{"type":"tool_result","is_error":true,"tool_use_id":"t","content":[{"type":"text","text":"x"}]}`: true,
		`{"type":"tool_result","tool_use_id":"t","content":"{\"is_error\":true}"}`:                        false,
		`{"type":"tool_result","tool_use_id":"t","content":"x","is_error":false}`:                         false,
	} {
		blocks, err := anthropic.ParseBlocks([]byte("[" + raw + "]"))
		if err != nil {
			t.Fatal(err)
		}
		b := blocks[0]
		got := string(anthropic.MemberValue(outside(b.Raw(), b.Content()), "is_error")) == "true"
		if got != want {
			t.Errorf("is_error of %s = %v; want %v", raw, got, want)
		}
	}
	if got := outside([]byte(`{"a":1}`), []byte(`1`)); string(got) != `{"a":1}` {
		t.Errorf("outside with a foreign slice = %s; want the object unchanged", got)
	}
}
