package anthropic

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// canonical decodes JSON into plain values (numbers kept as written) so two
// encodings compare equal.
func canonical(tb testing.TB, b []byte) any {
	tb.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		tb.Fatalf("decode %q: %v", b, err)
	}
	return v
}

func TestReplyBuilderKeepsPartialToolInput(t *testing.T) {
	b := NewReplyBuilder(1 << 20)
	for _, ev := range []struct{ name, data string }{
		{"message_start", `{"type":"message_start","message":{"id":"m","role":"assistant","content":[],"usage":{"input_tokens":3}}}`},
		{"content_block_start", `{"index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}`},
		{"content_block_delta", `{"index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`},
	} {
		b.Add(ev.name, []byte(ev.data))
	}
	out, _ := b.Bytes()
	if !bytes.Contains(out, []byte(`"input_partial":"{\"a\":"`)) {
		t.Errorf("Bytes() = %s; want the broken-off input kept as input_partial", out)
	}
}

// TestReplyBuilderFastAndSlowPathsAgree feeds the same deltas compact (the fast path reads
// them raw) and spaced out (decoded), with escapes that must survive concatenation.
func TestReplyBuilderFastAndSlowPathsAgree(t *testing.T) {
	deltas := []string{`a \"quoted\" `, `back\\slash \u00e9 `, `\n✓ line`, `\ud83d\ude00`}
	build := func(sep string) []byte {
		b := NewReplyBuilder(1 << 20)
		b.Add("message_start", []byte(`{"type":"message_start","message":{"id":"m","content":[]}}`))
		b.Add("content_block_start", []byte(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
		for _, d := range deltas {
			b.Add("content_block_delta", []byte(`{"type":"content_block_delta",`+sep+`"index":0,"delta":{`+sep+`"type":"text_delta","text":"`+d+`"}}`))
		}
		out, _ := b.Bytes()
		return out
	}
	fast, slow := build(""), build(" ")
	var v struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(fast, &v); err != nil || len(v.Content) != 1 || v.Content[0].Text != "a \"quoted\" back\\slash é \n✓ line😀" {
		t.Errorf("fast path = %s, %v", fast, err)
	}
	if !reflect.DeepEqual(canonical(t, fast), canonical(t, slow)) {
		t.Errorf("fast %s != slow %s", fast, slow)
	}
}
