package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"longhaul/proxy/proxytest"
	"strings"
	"testing"
	"testing/iotest"
)

func TestPeekRequest(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Peek
	}{
		{"reads model stream and user id", `{"model":"claude-sonnet-4-5","stream":true,"metadata":{"user_id":"user_x_session_abc"}}`,
			Peek{Model: "claude-sonnet-4-5", Stream: true, UserID: "user_x_session_abc"}},
		{"odd whitespace and key order", " {\n\t\"max_tokens\" : 10 ,\"stream\":false , \"model\" :\"m\"}\r\n", Peek{Model: "m"}},
		{"escaped model name", `{"model":"a\"b\u00e9"}`, Peek{Model: "a\"bé"}},
		{"nested structures are skipped", `{"messages":[{"role":"user","content":[{"type":"text","text":"x\\\"}{]["}]},[],{},-1.5e+3,0,true,null],"model":"m"}`, Peek{Model: "m"}},
		{"null stream and model", `{"stream":null,"model":null}`, Peek{}},
		{"metadata without user id", `{"metadata":{"other":{"user_id":"nested"}}}`, Peek{}},
		{"unknown fields survive", `{"future_field":{"cache_control":{"type":"ephemeral"}},"model":"m","stream":true}`, Peek{Model: "m", Stream: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PeekRequest([]byte(tt.body))
			if err != nil || got != tt.want {
				t.Errorf("PeekRequest(%q) = %+v, %v; want %+v", tt.body, got, err, tt.want)
			}
		})
	}
}

func TestPeekRequestRejectsMalformedJSON(t *testing.T) {
	bad := []string{
		``, `   `, `[]`, `"x"`, `{`, `{"model":"m"`, `{"model":"m",}`, `{"model" "m"}`, `{model:"m"}`,
		`{"a":[1,,2]}`, `{"a":[1 2]}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":tru}`,
		`{"a":"unterminated}`, `{"a":1} trailing`, `{"stream":"yes"}`, `{"model":5}`, `{"a":{"b":}}`,
		`{"a":[` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `]}`,
	}
	for _, body := range bad {
		if _, err := PeekRequest([]byte(body)); !IsSyntaxError(err) {
			t.Errorf("PeekRequest(%.40q) error = %v; want a SyntaxError", body, err)
		}
	}
}

// FuzzPeekRequest checks PeekRequest against encoding/json: every body the
// standard library accepts as an object must be accepted with the same fields.
func FuzzPeekRequest(f *testing.F) {
	for _, s := range []string{`{"model":"m","stream":true}`, `{"metadata":{"user_id":"u"},"x":[1,{"y":"\\\""}]}`, `{"a":-0.1E+2}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := PeekRequest(body)
		// Scanning while reading, in any chunking, must agree with the whole buffer.
		for _, r := range []io.Reader{iotest.OneByteReader(bytes.NewReader(body)), iotest.HalfReader(bytes.NewReader(body))} {
			chunked, cerr := ReadAndPeek(r, make([]byte, len(body)))
			if chunked != got || (cerr == nil) != (err == nil) {
				t.Fatalf("ReadAndPeek(%q) = %+v, %v; PeekRequest = %+v, %v", body, chunked, cerr, got, err)
			}
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) != nil || m == nil {
			return
		}
		var want Peek
		var streamOK, modelOK, metaOK = true, true, true
		if raw, ok := m["stream"]; ok && string(raw) != "null" {
			streamOK = json.Unmarshal(raw, &want.Stream) == nil
		}
		if raw, ok := m["model"]; ok && string(raw) != "null" {
			modelOK = json.Unmarshal(raw, &want.Model) == nil
		}
		if raw, ok := m["metadata"]; ok {
			var meta map[string]json.RawMessage
			if json.Unmarshal(raw, &meta) == nil {
				if u, ok := meta["user_id"]; ok && len(u) > 0 && u[0] == '"' {
					metaOK = json.Unmarshal(u, &want.UserID) == nil
				}
			}
		}
		if !streamOK || !modelOK || !metaOK {
			return // wrong field types are rejected by design
		}
		if err != nil {
			t.Fatalf("PeekRequest(%q) rejected valid JSON: %v", body, err)
		}
		if got != want {
			t.Fatalf("PeekRequest(%q) = %+v; want %+v", body, got, want)
		}
	})
}

func TestReadAndPeekReadErrors(t *testing.T) {
	body := []byte(`{"model":"m","stream":true}`)
	// Client sent fewer bytes than it announced.
	_, err := ReadAndPeek(bytes.NewReader(body), make([]byte, len(body)+10))
	var re *ReadError
	if !errors.As(err, &re) {
		t.Errorf("short body: error %v; want *ReadError", err)
	}
	// Connection dropped mid-body: a read error, not a syntax error.
	_, err = ReadAndPeek(iotest.DataErrReader(io.MultiReader(bytes.NewReader(body[:10]), iotest.ErrReader(io.ErrClosedPipe))), make([]byte, len(body)))
	if !errors.As(err, &re) || IsSyntaxError(err) {
		t.Errorf("dropped connection: error %v; want *ReadError", err)
	}
	p, err := ReadAndPeek(iotest.OneByteReader(bytes.NewReader(body)), make([]byte, len(body)))
	if err != nil || p.Model != "m" || !p.Stream {
		t.Errorf("one byte at a time = %+v, %v", p, err)
	}
}

func BenchmarkPeekRequest800KB(b *testing.B) {
	body := proxytest.ClaudeCodeRequest(800<<10, true)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := PeekRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJSONValid800KB(b *testing.B) {
	body := proxytest.ClaudeCodeRequest(800<<10, true)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if !json.Valid(body) {
			b.Fatal("invalid")
		}
	}
}
