package anthropic

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func mustParse(t testing.TB, body []byte) *Request {
	t.Helper()
	r, err := ParseRequest(body)
	if err != nil {
		t.Fatalf("ParseRequest: %v", err)
	}
	return r
}

func TestParseRequestReadsMessagesAndKeepsTheRest(t *testing.T) {
	body := []byte(`{"model":"claude-x","zeta":{"a": 1},"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"S1","future":[1,2]},{"type":"tool_use","id":"tu","name":"Read","input":{"p":1}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu","content":[{"type":"text","text":"r"}]}]},` +
		`{"role":"system","content":"mid-conversation system"}],` +
		`"thinking":{"type":"adaptive"},"metadata":{"user_id":"u"}}`)
	r := mustParse(t, body)
	if r.Model != "claude-x" || len(r.Messages) != 4 || !ThinkingEnabled(r.Thinking) {
		t.Fatalf("ParseRequest = model %q, %d messages, thinking %s", r.Model, len(r.Messages), r.Thinking)
	}
	a := r.Messages[1]
	if a.Role != "assistant" || a.Blocks[0].Signature() != "S1" || a.Blocks[1].ID() != "tu" || string(a.Blocks[1].Input()) != `{"p":1}` {
		t.Errorf("assistant message = %+v", a)
	}
	inner, isString, err := r.Messages[2].Blocks[0].ContentBlocks()
	if err != nil || isString || len(inner) != 1 || inner[0].Text() != "r" {
		t.Errorf("tool_result content = %v, %v, %v", inner, isString, err)
	}
	if m := r.Messages[3]; !m.IsString || m.Text() != "mid-conversation system" {
		t.Errorf("system message = %+v", m)
	}
	var keys []string
	for _, m := range r.Members() {
		keys = append(keys, string(m.Key)+"="+string(m.Value))
	}
	if got, want := strings.Join(keys, " "), `model="claude-x" zeta={"a": 1} thinking={"type":"adaptive"} metadata={"user_id":"u"}`; got != want {
		t.Errorf("Members() = %s; want %s", got, want)
	}
}

func TestBlockWithKeepsOtherMembers(t *testing.T) {
	b, err := ParseBlock([]byte(`{"type":"thinking","thinking":"long thought","signature":"S","cache_control":{"type":"ephemeral"}}`))
	if err != nil {
		t.Fatal(err)
	}
	nb, err := b.With("thinking", Quote("..."))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(nb.Raw()), `{"type":"thinking","thinking":"...","signature":"S","cache_control":{"type":"ephemeral"}}`; got != want {
		t.Errorf("With = %s; want %s", got, want)
	}
	if nb, _ = nb.With("citations", []byte(`[]`)); !strings.HasSuffix(string(nb.Raw()), `,"citations":[]}`) {
		t.Errorf("With(new member) = %s; want it appended", nb.Raw())
	}
}

func TestThinkingEnabled(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want bool
	}{
		{`{"type":"enabled","budget_tokens":1024}`, true},
		{`{"type":"adaptive"}`, true},
		{`{"type":"disabled"}`, false},
		{``, false},
		{`null`, false},
		{`{"type":"enabled","type":"disabled"}`, false},
	} {
		if got := ThinkingEnabled([]byte(tt.raw)); got != tt.want {
			t.Errorf("ThinkingEnabled(%s) = %t; want %t", tt.raw, got, tt.want)
		}
	}
}

func TestQuoteIsShortestJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{`q"b\`, `"q\"b\\"`},
		{"<a>&</a>", `"<a>&</a>"`},
		{"line\u2028sep\u2029", "\"line\u2028sep\u2029\""},
		{"\n\r\t\b\f\x01\x1f", `"\n\r\t\b\f\u0001\u001f"`},
		{"日本😀", `"日本😀"`},
		{"bad\xffutf8", "\"bad\ufffdutf8\""},
	}
	for _, tt := range tests {
		got := string(Quote(tt.in))
		if got != tt.want {
			t.Errorf("Quote(%q) = %s; want %s", tt.in, got, tt.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("Quote(%q) = %s is not a JSON string: %v", tt.in, got, err)
		}
	}
}

// FuzzParseRequest feeds raw bytes to the parser: it must never panic, an
// untouched request must come back as the very same slice, and re-encoding
// every message must give the same JSON value. (The compaction engine's
// FuzzStepsOnAnyRequest runs its steps over whatever parses.)
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"messages":[]}`, `{"messages":null}`, `{"messages":[{"role":"user","content":null}]}`,
		`{"messages":[{"role":"user","content":"a","content":[{"type":"text","text":"b"}]}],"messages":[{"role":"user","content":"c"}]}`,
		`{"messages":[{"role":"assistant","content":[1,"x",{"type":"tool_use"}]},{"role":"user","content":[{"type":"tool_result","content":{}}]}]}`,
		` {"messages" : [ {"role" : "user" , "content" : [ {"type" : "text" , "text" : "a\"\\"} ] } ] } `,
		`{"model":"m","system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		orig := bytes.Clone(body)
		r, err := ParseRequest(body)
		if err != nil {
			return
		}
		if out := r.Encode(); len(out) != len(body) || len(body) > 0 && &out[0] != &body[0] {
			t.Fatalf("Encode of an untouched request is not the input slice")
		}
		for i := range r.Messages {
			r.Messages[i].edited = true // force every message through the encoder
			for _, b := range r.Messages[i].Blocks {
				if s := b.Text(); utf8.ValidString(s) && Unquote(Quote(s)) != s {
					t.Fatalf("Quote does not round-trip %q: %s", s, Quote(s))
				}
			}
		}
		out := r.Encode()
		if json.Valid(body) {
			if !json.Valid(out) {
				t.Fatalf("re-encoded request is not valid JSON:\nin:  %s\nout: %s", body, out)
			}
			if a, b := canonical(t, body), canonical(t, out); !reflect.DeepEqual(a, b) {
				t.Fatalf("re-encoding changed the request:\nin:  %s\nout: %s", body, out)
			}
		}
		if !bytes.Equal(body, orig) {
			t.Fatalf("input modified")
		}
	})
}

// Encode reserves what it writes: a request cut to a few messages does not take a buffer the
// size of the one received.
func TestEncodeReservesWhatItWrites(t *testing.T) {
	body := []byte(`{"model":"m","messages":[` + strings.Repeat(`{"role":"user","content":"aaaaaaaa"},`, 10_000) + `{"role":"user","content":"last"}],"max_tokens":1}`)
	r, err := ParseRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	r.Messages = r.Messages[len(r.Messages)-2:]
	out := r.Encode()
	if n := r.encodedSize(); n < len(out) || n > 2*len(out) {
		t.Errorf("encodedSize = %d for an encoding of %d bytes; want at least that and not far more", n, len(out))
	}
}

// A request parsed with the peek's counts is the one ParseRequest gives, its blocks in one
// array that no message's append can write into another's.
func TestParseRequestCountedIsParseRequest(t *testing.T) {
	body := []byte(`{"model":"m","messages":[` +
		`{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","data":"iVBORw0"}}]},` +
		`{"role":"assistant","content":[]},` +
		`{"role":"assistant","content":"plain"},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"EqSig"},{"type":"tool_use","id":"t1","name":"Read","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"x"}]}]}]}`)
	p, err := PeekRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	for _, counts := range [][2]int{{p.Messages.Count, p.Messages.Blocks}, {1, 1}, {100, 100}} {
		got, err := ParseRequestCounted(body, counts[0], counts[1])
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Messages, want.Messages) {
			t.Fatalf("ParseRequestCounted(%v) = %+v;\nParseRequest gives %+v", counts, got.Messages, want.Messages)
		}
		got.Messages[0].Blocks = append(got.Messages[0].Blocks, TextBlock("more"))
		if !reflect.DeepEqual(got.Messages[3], want.Messages[3]) {
			t.Fatalf("appending to message 0's blocks changed message 3: %+v", got.Messages[3])
		}
	}
}
