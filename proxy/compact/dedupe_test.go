package compact

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"longhaul/proxy/anthropic"
)

// dedupeBody is a request with the given raw messages.
func dedupeBody(msgs ...string) []byte {
	return []byte(`{"model":"claude-sonnet-4-5","max_tokens":1000,"messages":[` + strings.Join(msgs, ",") + `]}`)
}

// calls is an assistant message calling Read once per id.
func calls(ids ...string) string {
	var bs []string
	for _, id := range ids {
		bs = append(bs, `{"type":"tool_use","id":"`+id+`","name":"Read","input":{"file_path":"/repo/a.go"}}`)
	}
	return `{"role":"assistant","content":[` + strings.Join(bs, ",") + `]}`
}

// results is a user message of raw blocks.
func results(blocks ...string) string {
	return `{"role":"user","content":[` + strings.Join(blocks, ",") + `]}`
}

// result is a tool_result block; content is raw JSON, extra raw members follow it.
func result(id, content string, extra ...string) string {
	s := `{"type":"tool_result","tool_use_id":"` + id + `","content":` + content
	for _, e := range extra {
		s += "," + e
	}
	return s + "}"
}

// fileText is n characters of numbered lines, different for each name.
func fileText(name string, n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%6d\t%s: line %d of the file\n", i, name, i)
	}
	return b.String()[:n]
}

func quoted(s string) string { return string(anthropic.Quote(s)) }

// foldedInto maps each tool_result of body that is a fold note to the id its note names.
func foldedInto(t *testing.T, body []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range mustParseT(t, body).Messages {
		for _, b := range m.Blocks {
			if b.Type != "tool_result" {
				continue
			}
			if note, ok := noteOf(b); ok {
				id, _, _ := strings.Cut(strings.TrimPrefix(note, foldNotePrefix), " ")
				out[b.ToolUseID()] = strings.TrimSuffix(id, ",")
			}
		}
	}
	return out
}

// noteOf returns the fold note a tool_result holds, as a string or one text block.
func noteOf(b anthropic.Block) (string, bool) {
	c := b.Content()
	if len(c) == 0 {
		return "", false
	}
	s := anthropic.Unquote(c)
	if c[0] == '[' {
		inner, err := anthropic.ParseBlocks(c)
		if err != nil || len(inner) != 1 || inner[0].Type != "text" {
			return "", false
		}
		s = inner[0].Text()
	}
	return s, isFoldNote(anthropic.Quote(s))
}

func TestFoldDuplicateResults(t *testing.T) {
	file, other := fileText("a.go", 1500), fileText("b.go", 1500)
	escaped := `"` + strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(quoted("é"+file), `"`), `"`), "é", `\u00e9`) + `"`
	png := func(data string) string {
		return `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + data + `"}}`
	}
	pngReordered := func(data string) string {
		return `{"type":"image","source":{"data":"` + data + `","media_type":"image\/png","type":"base64"}}`
	}
	img := strings.Repeat("QUJD", 300)
	tests := []struct {
		name string
		body []byte
		o    DedupeOptions
		want map[string]string // folded id → the id its note names
	}{
		{
			name: "older copies fold into the newest",
			body: dedupeBody(`{"role":"user","content":"go"}`, calls("t1"), results(result("t1", quoted(file))),
				calls("t2"), results(result("t2", quoted(file))), calls("t3"), results(result("t3", quoted(file))),
				`{"role":"assistant","content":"done"}`, `{"role":"user","content":"thanks"}`),
			want: map[string]string{"t1": "t3", "t2": "t3"},
		},
		{
			name: "a string content equals one text block of the same text",
			body: dedupeBody(`{"role":"user","content":"go"}`, calls("t1"), results(result("t1", `[{"type":"text","text":`+quoted(file)+`}]`)),
				calls("t2"), results(result("t2", quoted(file)))),
			want: map[string]string{"t1": "t2"},
		},
		{
			name: "escapes do not make a difference",
			body: dedupeBody(`{"role":"user","content":"go"}`, calls("t1"), results(result("t1", escaped)),
				calls("t2"), results(result("t2", quoted("é"+file)))),
			want: map[string]string{"t1": "t2"},
		},
		{
			name: "is_error must be the same",
			body: dedupeBody(`{"role":"user","content":"go"}`, calls("t1"), results(result("t1", quoted(file), `"is_error":true`)),
				calls("t2"), results(result("t2", quoted(file))), calls("t3"), results(result("t3", quoted(file), `"is_error":false`))),
			want: map[string]string{"t2": "t3"},
		},
		{
			name: "results below MinChars stay",
			body: dedupeBody(`{"role":"user","content":"go"}`, calls("t1"), results(result("t1", quoted(file))),
				calls("t2"), results(result("t2", quoted(file)))),
			o:    DedupeOptions{MinChars: 1501},
			want: map[string]string{},
		},
		{
			name: "different contents stay",
			body: dedupeBody(`{"role":"user","content":"go"}`, calls("t1"), results(result("t1", quoted(file))),
				calls("t2"), results(result("t2", quoted(other)))),
			want: map[string]string{},
		},
		{
			name: "the last message is never folded, but its results are copies to fold into",
			body: dedupeBody(`{"role":"user","content":"go"}`, calls("t1"), results(result("t1", quoted(file))),
				calls("t2", "t3"), results(result("t2", quoted(file)), result("t3", quoted(file)))),
			want: map[string]string{"t1": "t3"},
		},
		{
			name: "images compare by their source's fields",
			body: dedupeBody(`{"role":"user","content":"go"}`,
				calls("t1", "t2"), results(result("t1", `[{"type":"text","text":"shot"},`+png(img)+`]`), result("t2", `[{"type":"text","text":"shot"},`+png(img+"QUJD")+`]`)),
				calls("t3"), results(result("t3", `[{"type":"text","text":"shot"},`+pngReordered(img)+`]`)),
				`{"role":"assistant","content":"done"}`, `{"role":"user","content":"thanks"}`),
			want: map[string]string{"t1": "t3"},
		},
		{
			name: "a tool_result that answers the same id is not its own copy",
			body: dedupeBody(`{"role":"user","content":"go"}`, calls("t1"), results(result("t1", quoted(file))),
				calls("t1"), results(result("t1", quoted(file)))),
			want: map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustParseT(t, tt.body)
			n := FoldDuplicateResults(r, tt.o)
			once := r.Encode()
			if got := foldedInto(t, once); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("folded %v; want %v", got, tt.want)
			}
			if n != len(tt.want) {
				t.Errorf("FoldDuplicateResults = %d; want %d", n, len(tt.want))
			}
			checkValid(t, tt.body, once)
			r2 := mustParseT(t, once)
			if n2 := FoldDuplicateResults(r2, tt.o); n2 != 0 || !bytes.Equal(r2.Encode(), once) {
				t.Errorf("applied again: folded %d more, output changed %v; want a fixed point", n2, !bytes.Equal(r2.Encode(), once))
			}
		})
	}
}

// The fold keeps what pairing and caching read: the block's tool_use_id, is_error and
// cache_control, and a cache_control inside the content, which moves to the note.
// (is_error absent equals is_error false.)
func TestFoldDuplicateResultsKeepsTheBlock(t *testing.T) {
	file := fileText("a.go", 2000)
	body := dedupeBody(`{"role":"user","content":"go"}`,
		calls("t1", "t2"),
		results(result("t1", quoted(file), `"is_error":false`, `"cache_control":{"type":"ephemeral"}`),
			result("t2", `[{"type":"text","text":`+quoted(file)+`,"cache_control":{"type":"ephemeral","ttl":"1h"}}]`)),
		`{"role":"assistant","content":[{"type":"tool_use","id":"t3","name":"Bash","input":{}}]}`,
		results(result("t3", `[{"type":"text","text":`+quoted(file)+`}]`)),
		`{"role":"assistant","content":"done"}`, `{"role":"user","content":"thanks"}`)
	r := mustParseT(t, body)
	if n := FoldDuplicateResults(r, DedupeOptions{}); n != 2 {
		t.Fatalf("FoldDuplicateResults = %d; want 2", n)
	}
	got := r.Messages[2].Blocks
	want := []string{
		`{"type":"tool_result","tool_use_id":"t1","content":"[same content as the result of tool call t3 (Bash), below]","is_error":false,"cache_control":{"type":"ephemeral"}}`,
		`{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"[same content as the result of tool call t3 (Bash), below]","cache_control":{"type":"ephemeral","ttl":"1h"}}]}`,
	}
	for i := range want {
		if string(got[i].Raw()) != want[i] {
			t.Errorf("messages[2].content[%d] = %s; want %s", i, got[i].Raw(), want[i])
		}
	}
	if !bytes.Equal(r.Messages[4].Raw(), mustParseT(t, body).Messages[4].Raw()) {
		t.Errorf("the newest copies changed: %s", r.Messages[4].Raw())
	}
}

// Between two fold moments a session replays the folds it recorded: the next request,
// which re-reads the file once more, keeps the notes it forwarded (its cached prefix)
// instead of moving them all to the newest copy.
func TestFoldDuplicateResultsReplay(t *testing.T) {
	file := fileText("a.go", 3000)
	first := dedupeBody(`{"role":"user","content":"go"}`, calls("t1"), results(result("t1", quoted(file))),
		calls("t2"), results(result("t2", quoted(file))))
	next := dedupeBody(`{"role":"user","content":"go"}`, calls("t1"), results(result("t1", quoted(file))),
		calls("t2"), results(result("t2", quoted(file))), calls("t3"), results(result("t3", quoted(file))))

	recorded := Folds{}
	r1 := mustParseT(t, first)
	FoldDuplicateResults(r1, DedupeOptions{Record: recorded})
	if want := (Folds{"t1": "t2"}); fmt.Sprint(recorded) != fmt.Sprint(want) {
		t.Fatalf("recorded %v; want %v", recorded, want)
	}
	changed := dedupeBody(`{"role":"user","content":"go"}`, calls("t1"), results(result("t1", quoted(file))),
		calls("t2"), results(result("t2", quoted(file))), calls("t3"), results(result("t3", quoted(fileText("b.go", 3000)))))
	tests := []struct {
		name string
		body []byte
		o    DedupeOptions
		want map[string]string
	}{
		{"replay keeps the recorded notes", next, DedupeOptions{Replay: recorded}, map[string]string{"t1": "t2"}},
		{"no replay folds into the newest copy", next, DedupeOptions{}, map[string]string{"t1": "t3", "t2": "t3"}},
		{"a replayed fold whose copy is gone is not made", next, DedupeOptions{Replay: Folds{"t1": "t9"}}, map[string]string{}},
		{"a replayed fold whose copy changed is not made", changed, DedupeOptions{Replay: Folds{"t1": "t3"}}, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r2 := mustParseT(t, tt.body)
			FoldDuplicateResults(r2, tt.o)
			out := r2.Encode()
			if got := foldedInto(t, out); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("folded %v; want %v", got, tt.want)
			}
			checkValid(t, tt.body, out)
		})
	}
	r2 := mustParseT(t, next)
	FoldDuplicateResults(r2, DedupeOptions{Replay: recorded})
	for i := range r1.Messages {
		if !bytes.Equal(r1.Messages[i].Raw(), r2.Messages[i].Raw()) {
			t.Errorf("replayed message %d differs from the one forwarded before:\n%.200s\n%.200s", i, r1.Messages[i].Raw(), r2.Messages[i].Raw())
		}
	}
}

// rereadSession is testdata/dedupe/reread_file: a Claude Code session that reads the same
// 40 KB file five times, as the client sends it (compact JSON).
func rereadSession(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "dedupe", "reread_file.input.json"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The "Must show": a session that reads the same 40 KB file five times forwards it
// once, and the ledger names each fold.
func TestDedupeForwardsARereadFileOnce(t *testing.T) {
	body := rereadSession(t)
	fileLine := []byte("migrate001 applies migration 001") // once in the file
	if n := bytes.Count(body, fileLine); n != 5 {
		t.Fatalf("the session holds the file %d times; want 5", n)
	}
	p := NewPipeline(Options{Limits: NewLimits(nil, 1_000_000), FoldDuplicates: true})
	res, err := p.Run(context.Background(), Input{Body: body, Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(res.Body, fileLine); n != 1 {
		t.Errorf("the forwarded request holds the file %d times; want 1", n)
	}
	checkValid(t, body, res.Body)
	folds := editsOf(res, LayerDedupe)
	var got []string
	for _, e := range folds {
		if e.Kind != EditResultFolded || e.Block != 0 || e.TokensAfter >= e.TokensBefore {
			t.Errorf("dedupe edit %+v; want result-folded at content[0], smaller", e)
		}
		got = append(got, fmt.Sprintf("%d:%s", e.Message, e.Note))
	}
	if want := []string{"2:toolu_01", "6:toolu_03", "10:toolu_05", "14:toolu_07"}; !slices.Equal(got, want) {
		t.Errorf("dedupe ledger names %v; want %v", got, want)
	}
	if s := st(res, LayerDedupe); s.Items != 4 || s.TokensAfter >= s.TokensBefore {
		t.Errorf("dedupe stats %+v; want 4 items, fewer tokens", s)
	}
	t.Logf("5× 40 KB session: %d bytes → %d bytes forwarded; estimate %d → %d tokens",
		len(body), len(res.Body), res.Before.Raw, res.After.Raw)

	off, err := NewPipeline(Options{Limits: NewLimits(nil, 1_000_000)}).Run(context.Background(), Input{Body: body})
	if err != nil {
		t.Fatal(err)
	}
	if off.Changed || editsOf(off, LayerDedupe) != nil {
		t.Errorf("with FoldDuplicates off the request changed (%d stats)", len(off.Stats))
	}
}

// withRepeatedResults makes fuzz conversations re-read: it gives some tool results the
// content of an earlier one (and sometimes its is_error), as the bytes choose. The
// generator alone seldom repeats a result.
func withRepeatedResults(body, data []byte) []byte {
	r, err := anthropic.ParseRequest(body)
	if err != nil || len(data) == 0 {
		return body
	}
	type at struct{ msg, block int }
	var seen []at
	k := 0
	for mi := range r.Messages {
		m := &r.Messages[mi]
		if m.IsString {
			continue
		}
		var out []anthropic.Block
		for bi, b := range m.Blocks {
			if b.Type != "tool_result" {
				continue
			}
			k++
			c := data[(k*7)%len(data)]
			if len(seen) > 0 && c%3 != 0 {
				src := seen[int(c)%len(seen)]
				from := r.Messages[src.msg].Blocks[src.block]
				if from.Content() != nil {
					nb, err := b.With("content", from.Content())
					if err == nil && c%5 == 0 {
						if e := anthropic.MemberValue(from.Raw(), "is_error"); e != nil {
							nb, err = nb.With("is_error", e)
						}
					}
					if err == nil {
						if out == nil {
							out = append([]anthropic.Block(nil), m.Blocks...)
						}
						out[bi] = nb
					}
				}
			}
			seen = append(seen, at{mi, bi})
		}
		if out != nil {
			m.SetBlocks(out)
		}
	}
	return r.Encode()
}

// resultView is what the fuzz checks read of a tool_result, decoded apart from the
// engine's hashing so that one checks the other.
type resultView struct {
	msg, block int
	id         string
	isError    bool
	canonical  string // the content as the model reads it: texts and image sources
	plain      bool   // text and images only
	textChars  int    // characters of text: no more than the engine counts
	rawLen     int    // the content's JSON: no less than the engine counts
	note       bool
}

func viewResults(t *testing.T, r *anthropic.Request) []resultView {
	t.Helper()
	var out []resultView
	for mi := range r.Messages {
		m := &r.Messages[mi]
		if m.Role != "user" || m.IsString {
			continue
		}
		for bi, b := range m.Blocks {
			if b.Type != "tool_result" {
				continue
			}
			v := resultView{msg: mi, block: bi, id: b.ToolUseID(), rawLen: len(b.Content()), plain: true,
				isError: string(anthropic.MemberValue(b.Raw(), "is_error")) == "true"}
			_, v.note = noteOf(b)
			var content any
			if c := b.Content(); len(c) > 0 {
				if err := json.Unmarshal(c, &content); err != nil {
					t.Fatalf("tool_result %s content: %v", v.id, err)
				}
			}
			var parts []any
			switch c := content.(type) {
			case string:
				parts = []any{map[string]any{"type": "text", "text": c}}
				v.textChars = utf8.RuneCountInString(c)
			case []any:
				for _, p := range c {
					pm, _ := p.(map[string]any)
					switch pm["type"] {
					case "text":
						s, _ := pm["text"].(string)
						parts = append(parts, map[string]any{"type": "text", "text": s})
						v.textChars += utf8.RuneCountInString(s)
					case "image":
						parts = append(parts, map[string]any{"type": "image", "source": pm["source"]})
					default:
						parts = append(parts, p)
						v.plain = false
					}
				}
			default:
				v.plain = false
			}
			v.canonical = string(must(json.Marshal(parts)))
			out = append(out, v)
		}
	}
	return out
}

func FuzzDedupe(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		body := fuzzBody(data)
		if !bytes.Equal(body, data) { // generated: make it re-read
			body = withRepeatedResults(body, data)
		}
		o := DedupeOptions{MinChars: 200}
		if len(data) > 0 {
			o.MinChars = []int{1, 40, 120, 400}[data[0]%4]
		}
		count := 0
		out, valid := checkStep(t, func() stepFn {
			return func(r *anthropic.Request) { count = FoldDuplicateResults(r, o) }
		}, body)
		if out == nil || !valid {
			return
		}
		in, got := mustParseT(t, body), mustParseT(t, out)
		if len(in.Messages) != len(got.Messages) {
			t.Fatalf("dedupe changed the message count %d -> %d", len(in.Messages), len(got.Messages))
		}
		if last := len(in.Messages) - 1; !bytes.Equal(in.Messages[last].Raw(), got.Messages[last].Raw()) {
			t.Errorf("the last message changed:\n%s\n%s", in.Messages[last].Raw(), got.Messages[last].Raw())
		}
		// Only tool_result contents change, each into a note naming a later copy.
		inViews, outViews := viewResults(t, in), viewResults(t, got)
		if len(inViews) != len(outViews) {
			t.Fatalf("tool_result count %d -> %d", len(inViews), len(outViews))
		}
		changed := 0
		for i := range in.Messages {
			a, b := &in.Messages[i], &got.Messages[i]
			if a.Role != b.Role || len(a.Blocks) != len(b.Blocks) || a.IsString != b.IsString {
				t.Fatalf("message %d changed shape", i)
			}
			for j := range a.Blocks {
				ab, bb := a.Blocks[j], b.Blocks[j]
				if bytes.Equal(ab.Raw(), bb.Raw()) {
					continue
				}
				changed++
				if ab.Type != "tool_result" || bb.Type != "tool_result" || ab.ToolUseID() != bb.ToolUseID() {
					t.Errorf("message %d block %d: changed beyond a tool_result's content:\n%s\n%s", i, j, ab.Raw(), bb.Raw())
				}
				for _, k := range []string{"is_error", "cache_control"} {
					if x, y := anthropic.MemberValue(ab.Raw(), k), anthropic.MemberValue(bb.Raw(), k); !bytes.Equal(x, y) {
						t.Errorf("message %d block %d: %s %s -> %s", i, j, k, x, y)
					}
				}
			}
		}
		if changed != count {
			t.Errorf("FoldDuplicateResults = %d; %d blocks changed", count, changed)
		}
		for k, v := range outViews {
			orig := inViews[k]
			if !v.note || orig.note {
				continue
			}
			target := foldedInto(t, out)[v.id]
			found := false
			for _, later := range inViews[k+1:] {
				if later.id == target && later.canonical == orig.canonical && later.isError == orig.isError {
					found = true
				}
			}
			if !found {
				t.Errorf("tool_result %s folded into %s, which is not a later copy of it", v.id, target)
			}
			if orig.rawLen < o.MinChars {
				t.Errorf("tool_result %s folded with %d bytes of content; MinChars is %d", v.id, orig.rawLen, o.MinChars)
			}
		}
		// A session replaying the folds of an earlier request (its last prefix) on this one.
		if prefixes := userPrefixes(body); len(prefixes) > 0 {
			recorded := Folds{}
			r := mustParseT(t, prefixes[len(prefixes)-1])
			FoldDuplicateResults(r, DedupeOptions{MinChars: o.MinChars, Record: recorded})
			checkStep(t, func() stepFn {
				return func(r *anthropic.Request) {
					FoldDuplicateResults(r, DedupeOptions{MinChars: o.MinChars, Replay: recorded})
				}
			}, body)
		}
		// Every sizeable duplicate outside the last message is folded (400 raw bytes: the
		// note is surely shorter).
		for k, v := range inViews {
			if v.note || !v.plain || v.textChars < o.MinChars || v.rawLen < 400 || v.msg == len(in.Messages)-1 || outViews[k].note {
				continue
			}
			for _, later := range inViews[k+1:] {
				if later.canonical == v.canonical && later.isError == v.isError && later.id != v.id {
					t.Errorf("tool_result %s (%d characters) is a copy of the later %s but was not folded", v.id, v.textChars, later.id)
					break
				}
			}
		}
	})
}

// BenchmarkFoldDuplicateResults folds the 5× 40 KB session: the cost the step adds to a
// request (parse and encode excluded).
func BenchmarkFoldDuplicateResults(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("testdata", "dedupe", "reread_file.input.json"))
	if err != nil {
		b.Fatal(err)
	}
	var body bytes.Buffer
	if err := json.Compact(&body, raw); err != nil {
		b.Fatal(err)
	}
	parsed, err := anthropic.ParseRequest(body.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(body.Len()))
	for b.Loop() {
		if n := FoldDuplicateResults(parsed.Clone(), DedupeOptions{}); n != 4 {
			b.Fatalf("folded %d; want 4", n)
		}
	}
}

// captureHash is a hash.Hash that keeps what is written, to read writeUnescaped's output.
type captureHash struct{ bytes.Buffer }

func (*captureHash) Sum(b []byte) []byte { return b }
func (*captureHash) Size() int           { return 0 }
func (*captureHash) BlockSize() int      { return 1 }

// writeUnescaped decodes a JSON string's body as encoding/json does, in each style real
// encoders write (minimal, HTML-safe, ASCII only), surrogate pairs and lone surrogates
// included.
func TestWriteUnescapedDecodesAsEncodingJSON(t *testing.T) {
	texts := []string{"", "plain", "line\nnext\ttab", `"quoted" \back\ /slash/`, "é 你好 😀 👨‍👩‍👧 🇯🇵", "\x01\x1f\u2028<>&"}
	raws := []string{`\ud83d\ude00`, `\ud83d`, `\ud83dx`, `\ude00\ud83d`, `\ud83d\u0041`, `\u00E9\u00e9`, `\/\b\f\r`}
	for _, s := range texts {
		for _, enc := range [][]byte{anthropic.Quote(s), must(json.Marshal(s)), []byte(asciiJSON(s))} {
			raws = append(raws, string(enc[1:len(enc)-1]))
		}
	}
	for _, body := range raws {
		var want string
		if err := json.Unmarshal([]byte(`"`+body+`"`), &want); err != nil {
			t.Fatalf("json.Unmarshal(%q): %v", body, err)
		}
		var got captureHash
		chars := newContentHash().writeUnescaped(&got, []byte(body))
		if got.String() != want || chars != utf8.RuneCountInString(want) {
			t.Errorf("writeUnescaped(%q) = %q, %d characters; want %q, %d", body, got.String(), chars, want, utf8.RuneCountInString(want))
		}
	}
}

// asciiJSON is s as a JSON string with everything past ASCII escaped (\uXXXX, surrogate
// pairs above the BMP), as Python's json.dumps writes it.
func asciiJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r >= 0x7f && r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r >= 0x10000:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
