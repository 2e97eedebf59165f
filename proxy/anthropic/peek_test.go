package anthropic

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
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
			if err != nil || fields(got) != tt.want {
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
	for _, s := range []string{`{"model":"m","stream":true}`, `{"metadata":{"user_id":"u"},"x":[1,{"y":"\\\""}]}`, `{"a":-0.1E+2}`, `{}`,
		`{"stream":"","stream":true}`, `{"metadata":{"user_id":"a"},"metadata":5}`,
		`{"model":"0123456\"9abcdef\\\"xyz\\","x":"` + strings.Repeat(`ab\"cd\\`, 10) + `"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		// Besides the one-byte and half readers, split right after each
		// backslash, so that escapes straddle chunks.
		var cuts []int
		for i, c := range body {
			if c == '\\' {
				cuts = append(cuts, i+1)
			}
		}
		checkPeek(t, body, cuts)
	})
}

// checkPeek checks PeekRequest(body) against encoding/json, and ReadAndPeek,
// with the body arriving in various chunkings (among them chunks ending at
// each of cuts), against PeekRequest.
func checkPeek(t testing.TB, body []byte, cuts []int) {
	t.Helper()
	got, err := PeekRequest(body)
	// Scanning while reading, in any chunking, must agree with the whole buffer.
	readers := []io.Reader{iotest.OneByteReader(bytes.NewReader(body)), iotest.HalfReader(bytes.NewReader(body))}
	if len(cuts) > 0 {
		readers = append(readers, &splitReader{b: body, cuts: cuts})
	}
	for _, r := range readers {
		chunked, cerr := ReadAndPeek(r, make([]byte, len(body)))
		if chunked != got || (cerr == nil) != (err == nil) {
			t.Fatalf("ReadAndPeek(%q) via %T = %+v, %v; PeekRequest = %+v, %v", body, r, chunked, cerr, got, err)
		}
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m == nil || repeatsPeekedField(body) {
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
	if fields(got) != want {
		t.Fatalf("PeekRequest(%q) = %+v; want %+v", body, got, want)
	}
	// Each span holds exactly the value encoding/json sees.
	var messages []json.RawMessage
	json.Unmarshal(m["messages"], &messages) //nolint:errcheck // not an array: no span expected
	var first json.RawMessage
	if len(messages) > 0 {
		first = messages[0]
	}
	model := m["model"]
	if string(model) == "null" {
		model = json.RawMessage("null")
	}
	for _, sp := range []struct {
		name string
		span Span
		want []byte
	}{{"model", got.ModelSpan, model}, {"system", got.SystemSpan, m["system"]}, {"first message", got.FirstMessageSpan, first}} {
		if !bytes.Equal(sp.span.Of(body), sp.want) {
			t.Fatalf("PeekRequest(%q) %s span = %q; want %q", body, sp.name, sp.span.Of(body), sp.want)
		}
	}
}

// fields drops the spans, for comparing what was read.
func fields(p Peek) Peek {
	p.ModelSpan, p.SystemSpan, p.FirstMessageSpan, p.ThinkingSpan, p.ToolsSpan = Span{}, Span{}, Span{}, Span{}, Span{}
	p.Messages, p.Tools = MessageStats{}, 0
	return p
}

// repeatsPeekedField reports whether the object body names a field that
// PeekRequest reads (model, stream, metadata or metadata.user_id) more than
// once. encoding/json keeps the last value; PeekRequest also type-checks the
// earlier ones, so {"stream":"","stream":true} is an error by design.
func repeatsPeekedField(body []byte) bool {
	count := map[string]int{}
	var walk func(raw []byte, prefix string)
	walk = func(raw []byte, prefix string) {
		d := json.NewDecoder(bytes.NewReader(raw))
		if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
			return
		}
		for d.More() {
			tok, err := d.Token()
			if err != nil {
				return
			}
			var v json.RawMessage
			if d.Decode(&v) != nil {
				return
			}
			key := prefix + tok.(string)
			count[key]++
			if key == "metadata" {
				walk(v, "metadata.")
			}
		}
	}
	walk(body, "")
	return count["model"] > 1 || count["stream"] > 1 || count["metadata"] > 1 || count["metadata.user_id"] > 1
}

// splitReader returns b in chunks that end at the (increasing) offsets cuts.
type splitReader struct {
	b    []byte
	off  int
	cuts []int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if r.off == len(r.b) {
		return 0, io.EOF
	}
	end := len(r.b)
	for len(r.cuts) > 0 && r.cuts[0] <= r.off {
		r.cuts = r.cuts[1:]
	}
	if len(r.cuts) > 0 && r.cuts[0] < end {
		end = r.cuts[0]
	}
	n := copy(p, r.b[r.off:end])
	r.off += n
	return n, nil
}

// refString is the obvious byte-by-byte scan for the quote closing a string
// whose contents start at b[start], or -1.
func refString(b []byte, start int) int {
	for i := start; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// TestNonCandidates checks the mask against its definition for every triple
// of bytes (x's, z's and w's byte), in every byte position, among random
// neighbours (the masks must not carry from one byte into the next).
func TestNonCandidates(t *testing.T) {
	m7, hi, qs, bs, nbs := swar[0], swar[1], swar[2], swar[3], swar[4]
	rng := rand.New(rand.NewPCG(1, 2))
	step := 1
	if testing.Short() {
		step = 7
	}
	var xs, zs, ws [8]byte
	for v := 0; v < 1<<24; v += step {
		if v%64 < step {
			// New random neighbours, biased toward the interesting bytes.
			for j := range 8 {
				for _, a := range []*[8]byte{&xs, &zs, &ws} {
					r := rng.Uint64()
					a[j] = []byte{'"', '\\', 0xdc, 0xa2, 0x7f, 0x80, 0xff, byte(r >> 8)}[r&7]
				}
			}
		}
		j := rng.IntN(8)
		xs[j], zs[j], ws[j] = byte(v), byte(v>>8), byte(v>>16)
		le := binary.LittleEndian
		c := ^nonCandidates(le.Uint64(xs[:]), le.Uint64(zs[:]), le.Uint64(ws[:]), m7, hi, qs, bs, nbs) & highs
		for j := range 8 {
			// Escaped for sure: one backslash before the quote. A byte of
			// w that is '\\' but for the high bit counts as a backslash.
			want := xs[j] == '"' && (zs[j] != '\\' || ws[j]&0x7f == '\\')
			if got := c>>(8*j+7)&1 == 1; got != want {
				t.Fatalf("x=% x z=% x w=% x: byte %d candidate = %v; want %v", xs, zs, ws, j, got, want)
			}
		}
	}
}

// TestScanString compares scanString with refString on random strings rich
// in quotes, backslashes and bytes >= 0x80, resuming at every offset and cut
// at every length, as when the body arrives in chunks.
func TestScanString(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte{'"', '\\', '\\', '\\', 'a', 0xdc, 0xa2, 0xe4}
	for range 3000 {
		// The byte before the opening quote is arbitrary: the string may
		// follow anything (here, even a backslash) in the buffer.
		b := make([]byte, rng.IntN(4))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		b = append(b, '"')
		start := len(b)
		for range rng.IntN(120) {
			// Runs of quotes or backslashes, or plain bytes, and now and
			// then a long run without quotes (for the IndexByte probes).
			c := alphabet[rng.IntN(len(alphabet))]
			n := 1 + rng.IntN(3)*rng.IntN(3)
			if c == 'a' && rng.IntN(8) == 0 {
				n = rng.IntN(300)
			}
			for range n {
				b = append(b, c)
			}
		}
		want := refString(b, start)
		end := want
		if end < 0 {
			end = len(b)
		}
		// Every length and resume offset for short strings; for long ones,
		// a stride that still crosses every alignment.
		stride := 1 + len(b)/100
		for n := start; n <= len(b); n += 1 + rng.IntN(stride) {
			wantN := want
			if want >= n {
				wantN = -1
			}
			for i := start; i <= min(end, n); i += 1 + rng.IntN(stride) {
				if got := scanString(b[:n], start, i); got != wantN {
					t.Fatalf("scanString(%q[:%d], %d, %d) = %d; want %d", b, n, start, i, got, wantN)
				}
			}
		}
	}
}

// TestScanStringLong checks long strings, past the re-probes of scanString
// after denseSpan bytes, in code-like and prose-like text, with the closing
// quote after runs of backslashes of every length up to 5.
func TestScanStringLong(t *testing.T) {
	for _, unit := range []string{`x = f(\"a\\\\\", \"b\") // \\ \"c\"\n`, strings.Repeat("words ", 30) + `\"q\" `} {
		for run := 0; run <= 5; run += 2 {
			for _, n := range []int{100, 1000, 3 * denseSpan / len(unit)} {
				b := []byte(`:"` + strings.Repeat(unit, n) + strings.Repeat(`\\`, run) + `"x`)
				want := len(b) - 2
				if ref := refString(b, 2); ref != want {
					t.Fatalf("bad test string: refString = %d; want %d", ref, want)
				}
				for _, i := range []int{2, 3, 50, len(b) / 2, len(b) - 9, want} {
					if got := scanString(b, 2, i); got != want {
						t.Fatalf("scanString(%.40q..., 2, %d) = %d; want %d", b, i, got, want)
					}
				}
				if got := scanString(b[:want], 2, 2); got != -1 {
					t.Fatalf("scanString(%.40q...[:%d], 2, 2) = %d; want -1", b, want, got)
				}
			}
		}
	}
}

// TestPeekRequestEscapes covers escaped quotes at every position of a word,
// backslash runs before a quote, strings ending at every position relative to
// word boundaries, and chunk boundaries anywhere, notably between a backslash
// and the quote it escapes.
func TestPeekRequestEscapes(t *testing.T) {
	var contents []string
	for off := range 20 {
		pad := strings.Repeat("a", off)
		// An escaped quote at each offset, and at each offset after 32 bytes
		// (past the first words, in the block loop).
		contents = append(contents, pad+`\"b`, strings.Repeat("x", 40)+pad+`\"b`+strings.Repeat("y", 40))
		// Runs of 1 to 5 backslashes before a quote: an odd run escapes it,
		// an even run leaves it to close the string.
		for run := 1; run <= 5; run++ {
			bs := strings.Repeat(`\`, run)
			contents = append(contents, pad+bs+`"`, pad+bs+`"z`, strings.Repeat("é", 20)+pad+bs+`"z\"`+strings.Repeat(`q\\\"`, 10))
		}
		// Strings of every length around the word boundaries.
		contents = append(contents, pad, strings.Repeat("b", 32)+pad, pad+`\\`, pad+`\u00e9\"`)
	}
	for _, c := range contents {
		// A string that does not close where it looks like it might makes
		// invalid JSON below; checkPeek compares with encoding/json anyway.
		for _, body := range []string{
			`{"model":"` + c + `","stream":true}`,
			`{"x":"` + c + `","model":"m"}`,
			`{"messages":[{"content":"` + c + `"}],"metadata":{"user_id":"` + c + `"}}`,
			`{"k` + c + `":1,"model":"m"}`,
		} {
			b := []byte(body)
			// Chunks ending at every offset, and one-byte chunks.
			cuts := make([]int, len(b))
			for i := range cuts {
				cuts[i] = i + 1
			}
			checkPeek(t, b, cuts)
			for cut := 1; cut < len(b); cut++ {
				checkPeek(t, b, []int{cut})
			}
		}
	}
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

func TestPeekMessageStats(t *testing.T) {
	body := `{"thinking":{"type":"enabled","budget_tokens":1000},"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0"}}]},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"EqSig"},{"type":"thinking","thinking":"no sig","signature":""},{"type":"redacted_thinking","data":"xx"},{"type":"tool_use","id":"t1","name":"Read","input":{"type":"image"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"Output too large. Full output saved to: /tmp/out.txt"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"Saved to /x; ` + strings.Repeat("y", 300) + `"},{"type":"document","source":{"type":"text","media_type":"text/plain","data":"d"}}]}]}`
	p, err := PeekRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	ms := p.Messages
	want := MessageStats{Count: 4, Blocks: 9, Images: 3, ToolImages: 1, Thinking: 2, Signed: 1, Redacted: 1, SavedNotice: true, LastSpans: ms.LastSpans,
		MaxToolContent: len(`"Saved to /x; ` + strings.Repeat("y", 300) + `"`)}
	if ms != want {
		t.Errorf("Messages = %+v;\nwant %+v", ms, want)
	}
	if got := string(p.ThinkingSpan.Of([]byte(body))); got != `{"type":"enabled","budget_tokens":1000}` {
		t.Errorf("ThinkingSpan = %q", got)
	}
	if got := string(ms.LastSpans[1].Of([]byte(body))); !strings.HasPrefix(got, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2"`) {
		t.Errorf("LastSpans[1] = %q; want the last message", got)
	}
	if got := string(ms.LastSpans[0].Of([]byte(body))); !strings.Contains(got, `"tool_use_id":"t1"`) {
		t.Errorf("LastSpans[0] = %q; want the message before the last", got)
	}
	// Images and notices in the last message do not count as tool images:
	// the compressor leaves the last message's to the model.
	last := `{"messages":[{"role":"user","content":[{"type":"tool_result","content":[{"type":"image","source":{}}]}]}]}`
	if p, _ := PeekRequest([]byte(last)); p.Messages.ToolImages != 0 || p.Messages.Images != 1 {
		t.Errorf("last-message image: %+v; want Images 1, ToolImages 0", p.Messages)
	}
}

// chunkReader returns at most n bytes a read and counts what it gave.
type chunkReader struct {
	b    []byte
	n    int
	read int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.read == len(r.b) {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.b[r.read:])
	r.read += k
	return k, nil
}

// More messages than the Messages API takes are refused as soon as the peek has counted them,
// without reading the rest of the body.
func TestPeekRefusesTooManyMessages(t *testing.T) {
	body := func(n int) []byte {
		var b bytes.Buffer
		b.WriteString(`{"model":"m","messages":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"role":"user","content":"a"}`)
		}
		b.WriteString(`],"max_tokens":1}`)
		return b.Bytes()
	}
	if p, err := PeekRequest(body(MaxMessages)); err != nil || p.Messages.Count != MaxMessages {
		t.Fatalf("PeekRequest of %d messages = %d messages, %v; want them read", MaxMessages, p.Messages.Count, err)
	}
	over := append(body(MaxMessages+1), bytes.Repeat([]byte(" "), 1<<20)...)
	var tooMany *TooManyMessagesError
	if _, err := PeekRequest(over); !errors.As(err, &tooMany) {
		t.Fatalf("PeekRequest of %d messages: %v; want a TooManyMessagesError", MaxMessages+1, err)
	}
	r := &chunkReader{b: over, n: 4 << 10}
	if _, _, _, err := NewRecall().ReadAndPeek(r, make([]byte, len(over)), nil); !errors.As(err, &tooMany) {
		t.Fatalf("ReadAndPeek of %d messages: %v; want a TooManyMessagesError", MaxMessages+1, err)
	}
	if r.read > len(over)-(1<<20)+r.n {
		t.Errorf("ReadAndPeek read %d of %d bytes; want it stopped at the message over the limit", r.read, len(over))
	}
}
