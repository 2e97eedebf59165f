package compact

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// Fuzz tests of the compaction steps over generated conversations.
//
// Random bytes are almost never a Messages request, so the fuzzer's bytes
// drive convGen, a small deterministic generator that always builds a valid,
// plausible conversation (user/assistant turns, tool rounds with parallel
// calls answered out of order, signed thinking, redacted_thinking, images,
// mixed text and tool_result user messages, server tool blocks, unknown
// blocks, cache_control, mid-conversation system messages, odd key orders,
// escapes and indentation); the fuzzer then explores structure instead of
// JSON syntax. An input that is itself a JSON object (the testdata seeds and
// their mutations) is used as the request directly.
//
// Every output must be valid JSON and a valid request (validate), keep every
// signature byte for byte, be no longer than the input, be a fixed point of
// the step (applying it twice equals applying it once), be the same on every
// run, and leave the input bytes alone. Each step adds what it promises.
//
// Run one target for a while with, e.g.
//
//	go test ./proxy/compact -run '^$' -fuzz FuzzLayer1 -fuzztime 3m -fuzzminimizetime 30x
//
// (by default every new interesting input is minimized for up to a minute,
// which with these inputs leaves almost no time for fuzzing). Plain go test
// runs the seeds and testdata/fuzz/<target>/ regressions only.

// convGen turns fuzz bytes into a request. Every choice reads one byte; when
// the bytes run out every choice is "no", so the conversation ends.
type convGen struct {
	data  []byte
	pos   int
	ids   int
	sigs  int
	marks int // cache_control breakpoints used; the API allows 4
	sb    strings.Builder
}

func (g *convGen) next() byte {
	if g.pos >= len(g.data) {
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return b
}

func (g *convGen) done() bool { return g.pos >= len(g.data) }

// n returns a choice in [0, k).
func (g *convGen) n(k int) int { return int(g.next()) % k }

// chance is true pct percent of the time, and never once the bytes ran out.
func (g *convGen) chance(pct int) bool {
	v := g.next()
	return v != 0 && int(v-1)*100 < pct*255
}

// fuzzWords is the generator's vocabulary: plain words, multi-byte and
// multi-rune characters (CJK, emoji with modifiers, ZWJ sequences, flags,
// combining marks), characters JSON must escape, and the markers the
// tool-result compressor's content rules look for.
var fuzzWords = []string{
	"the", "file", "func main() {", "}", "error:", "ok", "\n", "\t", "  ", "é", "naïve",
	"你好", "世界", "日本語のテキスト", "한국어", "😀", "👍🏽", "👨‍👩‍👧", "🇯🇵", "❤️", "e\u0301", "1\uFE0F\u20E3",
	"\u2028", "\"quoted\"", `back\slash`, "\x01", "<", ">", "&", "/",
	"<html>", "<div>", "</div>", "<style>", "body{color:red}", "</style>", "<script>", "var x=1;", "</script>", "<!DOCTYPE html>",
	"Page Snapshot", "[ref=e12]", " ref=e3", "- button \"OK\" [ref=e1]\n",
	"Output too large (51.6KB). Full output saved to: /tmp/out.txt\n", "<persisted-output>", "</persisted-output>",
	"data:image/png;base64,", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODk=",
	"[truncated 5 chars]", "...", "image",
}

// text returns a non-blank text of up to about words words; sometimes one
// word repeated many times, long enough for the compressor's limits. It reads
// two bytes and picks the words with a small PRNG seeded by them, so the
// fuzzer's bytes go to structure rather than to spelling.
func (g *convGen) text(words int) string {
	ctl := g.next()
	x := uint32(g.next())<<8 | uint32(ctl) | uint32(g.pos)<<16 | 1
	rnd := func(n int) int {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		return int(x % uint32(n))
	}
	var b strings.Builder
	if ctl%16 == 1 {
		w := fuzzWords[rnd(len(fuzzWords))]
		for range 20 + rnd(120) {
			b.WriteString(w)
			b.WriteByte(' ')
		}
	}
	for range 1 + rnd(words) {
		b.WriteString(fuzzWords[rnd(len(fuzzWords))])
		if rnd(10) < 7 {
			b.WriteByte(' ')
		}
	}
	if strings.TrimSpace(b.String()) == "" {
		b.WriteString("x")
	}
	return b.String()
}

// str encodes s as a JSON string in one of three styles real encoders use:
// minimal escaping, encoding/json's (HTML and U+2028 escaped), or ASCII only
// (\uXXXX with surrogate pairs, escaped slashes).
func (g *convGen) str(s string) string {
	switch g.n(6) {
	case 0:
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(s); err != nil {
			panic(err)
		}
		return strings.TrimSuffix(buf.String(), "\n")
	case 1:
		var b strings.Builder
		b.WriteByte('"')
		for _, r := range s {
			switch {
			case r == '"' || r == '\\' || r == '/':
				b.WriteByte('\\')
				b.WriteRune(r)
			case r == '\n':
				b.WriteString(`\n`)
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
	default:
		return string(quote(s))
	}
}

type genKV struct{ k, v string }

// obj writes an object; sometimes its members come in another order, as
// they may from any client.
func (g *convGen) obj(ms ...genKV) string {
	if len(ms) > 1 && g.chance(10) {
		k := 1 + g.n(len(ms)-1)
		ms = append(append([]genKV(nil), ms[k:]...), ms[:k]...)
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(string(quote(m.k)))
		b.WriteByte(':')
		b.WriteString(m.v)
	}
	b.WriteByte('}')
	return b.String()
}

func genArr(elems []string) string { return "[" + strings.Join(elems, ",") + "]" }

// cache adds a cache_control breakpoint to ms now and then, at most 4 in all.
func (g *convGen) cache(ms []genKV) []genKV {
	if g.marks < 4 && g.chance(8) {
		g.marks++
		return append(ms, genKV{"cache_control", `{"type":"ephemeral"}`})
	}
	return ms
}

func (g *convGen) textBlock(words int) string {
	return g.obj(g.cache([]genKV{{"type", `"text"`}, {"text", g.str(g.text(words))}})...)
}

func (g *convGen) base64(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[(i*7+g.ids)%64]
	}
	return string(b)
}

func (g *convGen) imageBlock() string {
	if g.chance(15) {
		return g.obj(g.cache([]genKV{{"type", `"image"`}, {"source", `{"type":"url","url":"https://example.com/a.png"}`}})...)
	}
	src := g.obj(genKV{"type", `"base64"`}, genKV{"media_type", `"image/png"`}, genKV{"data", `"` + g.base64(4*(1+g.n(8)*g.n(40))) + `"`})
	return g.obj(g.cache([]genKV{{"type", `"image"`}, {"source", src}})...)
}

func (g *convGen) documentBlock() string {
	src := g.obj(genKV{"type", `"text"`}, genKV{"media_type", `"text/plain"`}, genKV{"data", g.str(g.text(20))})
	return g.obj(g.cache([]genKV{{"type", `"document"`}, {"source", src}, {"title", `"notes.txt"`}})...)
}

func (g *convGen) unknownBlock() string {
	return g.obj(genKV{"type", `"future_block"`}, genKV{"payload", `{"k":[1,2.5,true,null,{"s":` + g.str(g.text(4)) + `}]}`})
}

func (g *convGen) signature() string {
	g.sigs++
	return fmt.Sprintf(`"EqSig%03d%s"`, g.sigs, g.base64(16+g.n(64)))
}

func (g *convGen) thinkingBlock() string {
	if g.chance(10) { // unsigned (another provider, or a client that dropped it)
		return g.obj(genKV{"type", `"thinking"`}, genKV{"thinking", g.str(g.text(12))})
	}
	return g.obj(genKV{"type", `"thinking"`}, genKV{"thinking", g.str(g.text(12))}, genKV{"signature", g.signature()})
}

func (g *convGen) redactedBlock() string {
	g.sigs++
	return g.obj(genKV{"type", `"redacted_thinking"`}, genKV{"data", fmt.Sprintf(`"EmwKRedacted%03d%s"`, g.sigs, g.base64(8+g.n(40)))})
}

func (g *convGen) newID(prefix string) string {
	g.ids++
	return fmt.Sprintf("%s_%02d%s", prefix, g.ids, g.base64(g.n(6)))
}

func (g *convGen) toolUse(id string) string {
	input := g.obj(genKV{"path", g.str(g.text(3))}, genKV{"n", fmt.Sprint(g.n(100))})
	return g.obj(g.cache([]genKV{{"type", `"tool_use"`}, {"id", `"` + id + `"`}, {"name", `"Read"`}, {"input", input}})...)
}

// serverTool is a server tool call and its result, both in the assistant
// message: they are not a tool round and must pass through untouched.
func (g *convGen) serverTool() []string {
	id := g.newID("srvtoolu")
	use := g.obj(genKV{"type", `"server_tool_use"`}, genKV{"id", `"` + id + `"`}, genKV{"name", `"web_search"`}, genKV{"input", `{"query":` + g.str(g.text(3)) + `}`})
	res := g.obj(genKV{"type", `"web_search_tool_result"`}, genKV{"tool_use_id", `"` + id + `"`},
		genKV{"content", `[{"type":"web_search_result","url":"https://example.com","title":` + g.str(g.text(3)) + `,"encrypted_content":"` + g.base64(40) + `"}]`})
	return []string{use, res}
}

func (g *convGen) toolResult(id string) string {
	ms := []genKV{{"type", `"tool_result"`}, {"tool_use_id", `"` + id + `"`}}
	switch g.n(8) {
	case 0: // no content
	case 1, 2, 3, 4:
		ms = append(ms, genKV{"content", g.str(g.text(16))})
	default:
		var inner []string
		for range 1 + g.n(3) {
			switch g.n(6) {
			case 0, 1:
				inner = append(inner, g.imageBlock())
			case 2:
				inner = append(inner, g.unknownBlock())
			default:
				inner = append(inner, g.textBlock(16))
			}
		}
		ms = append(ms, genKV{"content", genArr(inner)})
	}
	if g.chance(8) {
		ms = append(ms, genKV{"is_error", "true"})
	}
	return g.obj(g.cache(ms)...)
}

func (g *convGen) message(role, content string) string {
	if g.chance(5) {
		return g.obj(genKV{"content", content}, genKV{"role", `"` + role + `"`})
	}
	return g.obj(genKV{"role", `"` + role + `"`}, genKV{"content", content})
}

// userText is a user turn without tool results.
func (g *convGen) userText() string {
	if g.chance(40) {
		return g.message("user", g.str(g.text(15)))
	}
	var bs []string
	for range 1 + g.n(3) {
		switch g.n(8) {
		case 0:
			bs = append(bs, g.imageBlock())
		case 1:
			bs = append(bs, g.documentBlock())
		case 2:
			bs = append(bs, g.unknownBlock())
		default:
			bs = append(bs, g.textBlock(15))
		}
	}
	return g.message("user", genArr(bs))
}

// assistant is an assistant turn; it returns the ids of its tool calls.
func (g *convGen) assistant(tools bool) (string, []string) {
	if g.chance(8) { // plain text, as a string
		return g.message("assistant", g.str(g.text(10))), nil
	}
	var bs, ids []string
	if g.chance(60) {
		bs = append(bs, g.thinkingBlock())
	}
	if g.chance(12) {
		bs = append(bs, g.redactedBlock())
	}
	if g.chance(50) {
		bs = append(bs, g.textBlock(15))
	}
	if g.chance(10) {
		bs = append(bs, g.serverTool()...)
	}
	if tools && g.chance(65) {
		for i := range 1 + g.n(4) {
			if i > 0 && g.chance(8) { // interleaved thinking
				bs = append(bs, g.thinkingBlock())
			}
			id := g.newID("toolu")
			bs = append(bs, g.toolUse(id))
			ids = append(ids, id)
		}
	}
	if g.chance(6) {
		bs = append(bs, g.unknownBlock())
	}
	if len(bs) == 0 {
		bs = append(bs, g.textBlock(10))
	}
	return g.message("assistant", genArr(bs)), ids
}

// results answers ids in another order, sometimes followed by user text or
// an image in the same message (tool_result blocks must come first).
func (g *convGen) results(ids []string) string {
	order := append([]string(nil), ids...)
	for i := len(order) - 1; i > 0; i-- {
		j := g.n(i + 1)
		order[i], order[j] = order[j], order[i]
	}
	var bs []string
	for _, id := range order {
		bs = append(bs, g.toolResult(id))
	}
	for g.chance(25) {
		if g.chance(20) {
			bs = append(bs, g.imageBlock())
		} else if g.chance(5) {
			bs = append(bs, g.obj(genKV{"type", `"text"`}, genKV{"text", `"Your task is to create a detailed summary of the conversation so far."`}))
		} else {
			bs = append(bs, g.textBlock(10))
		}
	}
	return g.message("user", genArr(bs))
}

func (g *convGen) systemMessage() string {
	if g.chance(30) {
		return g.message("system", genArr([]string{g.obj(genKV{"type", `"text"`}, genKV{"text", g.str(g.text(8))})}))
	}
	return g.message("system", g.str(g.text(8)))
}

// generateConversation builds a valid request from data.
func generateConversation(data []byte) []byte {
	g := &convGen{data: data}
	var msgs []string
	msgs = append(msgs, g.userText())
	for turn := 0; turn < 30 && !g.done(); turn++ {
		if g.chance(8) {
			msgs = append(msgs, g.systemMessage())
		}
		a, ids := g.assistant(true)
		msgs = append(msgs, a)
		if len(ids) > 0 {
			msgs = append(msgs, g.results(ids))
		} else {
			msgs = append(msgs, g.userText())
		}
	}
	switch g.n(12) {
	case 0:
		msgs = append(msgs, g.systemMessage())
	case 1: // a prefill: text only, no thinking
		msgs = append(msgs, g.message("assistant", genArr([]string{g.textBlock(5)})))
	}
	top := []genKV{{"model", `"claude-sonnet-4-5-20250929"`}, {"max_tokens", "32000"}}
	if g.chance(50) {
		top = append(top, genKV{"stream", "true"})
	}
	if g.chance(60) {
		top = append(top, genKV{"system", `[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}}]`})
	}
	if g.chance(50) {
		top = append(top, genKV{"tools", `[{"name":"Read","description":"read a file","input_schema":{"type":"object"}}]`})
	}
	if g.chance(60) {
		top = append(top, genKV{"thinking", `{"type":"enabled","budget_tokens":10000}`})
	}
	top = append(top, genKV{"messages", genArr(msgs)})
	if g.chance(40) {
		top = append(top, genKV{"metadata", `{"user_id":"user_x_session_abc"}`})
	}
	body := []byte(g.obj(top...))
	if indent := g.n(4); indent > 0 {
		var buf bytes.Buffer
		if err := json.Indent(&buf, body, "", strings.Repeat(" ", indent)); err != nil {
			panic(err)
		}
		body = buf.Bytes()
	}
	return body
}

// fuzzBody is the request a fuzz input stands for.
func fuzzBody(data []byte) []byte {
	if d := bytes.TrimSpace(data); len(d) > 0 && d[0] == '{' && json.Valid(d) {
		return data
	}
	return generateConversation(data)
}

// addSeeds seeds a target with every testdata input and a few generator seeds.
func addSeeds(f *testing.F) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*", "*.input.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, in := range inputs {
		b, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{"", "\x01", "\xff\xff\xff\xff\xff\xff\xff\xff", "\x80\x40\xc0\x10\xf0\x33\x99\x07"} {
		f.Add([]byte(s))
	}
	// Longer pseudo-random seeds reach many tool rounds.
	x := uint32(2463534242)
	for _, n := range []int{300, 1500, 4000, 4000} {
		seed := make([]byte, n)
		for i := range seed {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			seed[i] = byte(x)
		}
		f.Add(seed)
	}
}

// step is one compaction step applied to a parsed request.
type stepFn func(r *Request)

func runFuzzStep(t *testing.T, s stepFn, body []byte) []byte {
	t.Helper()
	r, err := ParseRequest(body)
	if err != nil {
		t.Fatalf("ParseRequest: %v", err)
	}
	s(r)
	return r.Encode()
}

// checkStep applies s to body and checks the properties every step has. It
// returns the output and whether the input was a valid request (the
// properties that need one were checked).
func checkStep(t *testing.T, s func() stepFn, body []byte) (out []byte, valid bool) {
	t.Helper()
	if _, err := ParseRequest(body); err != nil {
		return nil, false // not a request the proxy would hand over
	}
	orig := bytes.Clone(body)
	out = runFuzzStep(t, s(), body)
	if !bytes.Equal(body, orig) {
		t.Fatalf("the step modified its input")
	}
	if !json.Valid(out) {
		t.Fatalf("output is not valid JSON:\n%s", out)
	}
	if len(out) > len(body) {
		t.Errorf("output is %d bytes, longer than the %d-byte input:\nin:  %s\nout: %s", len(out), len(body), body, out)
	}
	valid = len(validate(body, body)) == 0
	if valid {
		for _, p := range validate(body, out) {
			t.Errorf("%s\nin:  %s\nout: %s", p, body, out)
		}
	} else {
		for _, p := range validateKept(body, out) {
			t.Errorf("%s\nin:  %s\nout: %s", p, body, out)
		}
	}
	if again := runFuzzStep(t, s(), out); !bytes.Equal(again, out) {
		t.Errorf("not idempotent:\nonce:  %s\ntwice: %s", out, again)
	}
	if det := runFuzzStep(t, s(), body); !bytes.Equal(det, out) {
		t.Errorf("not deterministic:\nfirst:  %s\nsecond: %s", out, det)
	}
	return out, valid
}

// flatBlock is one piece of message content, for comparing what a step kept.
type flatBlock struct {
	role, typ, raw string
}

// flattenContent lists the content of the user and assistant messages in order; a
// string content counts as a text block. System messages are listed apart.
func flattenContent(msgs []Message) (blocks []flatBlock, system []string) {
	for i := range msgs {
		m := &msgs[i]
		if m.Role == "system" {
			system = append(system, string(m.Raw()))
			continue
		}
		if m.IsString {
			blocks = append(blocks, flatBlock{m.Role, "text", "text:" + m.Text()})
			continue
		}
		for _, b := range m.Blocks {
			raw := string(b.raw)
			if b.Type == "text" && !bytes.Contains(b.raw, []byte(`"cache_control"`)) {
				raw = "text:" + b.Text() // a merged string content becomes a text block
			}
			blocks = append(blocks, flatBlock{m.Role, b.Type, raw})
		}
	}
	return blocks, system
}

func mustParseT(t *testing.T, body []byte) *Request {
	t.Helper()
	r, err := ParseRequest(body)
	if err != nil {
		t.Fatalf("ParseRequest: %v", err)
	}
	return r
}

func FuzzCompressor(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		body := fuzzBody(data)
		// Small limits, chosen by the input, so short conversations reach them.
		var o CompressorOptions
		if len(data) > 0 {
			o = CompressorOptions{MaxChars: 40 + int(data[0])*4, LargeChars: 60 + int(data[len(data)-1])*4, SnapshotHead: 30 + int(data[0]%64), SnapshotTail: 20 + int(data[len(data)-1]%32)}
		}
		out, valid := checkStep(t, func() stepFn { return func(r *Request) { NewCompressor(o).Apply(r) } }, body)
		maxChars := NewCompressor(o).o.MaxChars
		if out == nil || !valid {
			return
		}
		// Only tool_result blocks change, and no message moves.
		in, got := mustParseT(t, body), mustParseT(t, out)
		if len(in.Messages) != len(got.Messages) {
			t.Fatalf("compressor changed the message count %d -> %d", len(in.Messages), len(got.Messages))
		}
		for i := range in.Messages {
			a, b := &in.Messages[i], &got.Messages[i]
			if a.Role != b.Role || len(a.Blocks) != len(b.Blocks) {
				t.Fatalf("message %d changed shape", i)
			}
			for j := range a.Blocks {
				ab, bb := a.Blocks[j], b.Blocks[j]
				if ab.Type == "tool_result" && a.Role == "user" {
					if ab.ToolUseID() != bb.ToolUseID() || bb.Type != "tool_result" {
						t.Errorf("message %d block %d: tool_result lost its id", i, j)
					}
					if c := bb.Content(); len(c) > 0 && c[0] == '"' && !bytes.Equal(c, ab.Content()) {
						if n := utf8.RuneCountInString(unquote(c)); n > maxChars {
							t.Errorf("message %d block %d: compressed result has %d characters; the cap is %d", i, j, n, maxChars)
						}
					}
					checkToolResultText(t, ab, bb)
					continue
				}
				if !bytes.Equal(ab.raw, bb.raw) {
					t.Errorf("message %d block %d (%s) changed:\n%s\n%s", i, j, ab.Type, ab.raw, bb.raw)
				}
			}
		}
	})
}

// checkToolResultText checks that every text the compressor shortened is
// clean UTF-8 that does not end inside a character sequence of the original
// (a UTF-8 sequence, a combining mark, an emoji with its modifiers or joiners).
func checkToolResultText(t *testing.T, in, out Block) {
	t.Helper()
	if bytes.Equal(in.raw, out.raw) {
		return
	}
	texts := func(b Block) []string {
		c := b.Content()
		if len(c) == 0 {
			return nil
		}
		if c[0] == '"' {
			return []string{unquote(c)}
		}
		inner, err := parseBlocks(c)
		if err != nil {
			return nil
		}
		var out []string
		for _, ib := range inner {
			if ib.Type == "text" {
				out = append(out, ib.Text())
			}
		}
		return out
	}
	const marker = "\n...[truncated "
	unchanged := map[string]bool{}
	for _, s := range texts(in) {
		unchanged[s] = true
	}
	for _, s := range texts(out) {
		if unchanged[s] {
			continue // not rewritten: its bytes are the client's
		}
		if !utf8.ValidString(s) {
			t.Errorf("compressed text is not valid UTF-8: %q", s)
		}
		i := strings.LastIndex(s, marker)
		if i < 0 {
			continue
		}
		kept := s[:i]
		for _, orig := range texts(in) {
			if strings.HasPrefix(orig, kept) && len(orig) > len(kept) {
				if !atCluster(orig, len(kept)) {
					t.Errorf("truncation splits a character sequence: …%q | %q…", tailOf(kept, 12), orig[len(kept):min(len(orig), len(kept)+12)])
				}
			}
		}
	}
}

func tailOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

func FuzzLayer1(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		body := fuzzBody(data)
		keep := 1
		if len(data) > 0 {
			keep = 1 + int(data[len(data)-1]%5)
		}
		out, valid := checkStep(t, func() stepFn { return func(r *Request) { NewLayer1(keep, 0).Apply(r, "", nil) } }, body)
		if out == nil || !valid {
			return
		}
		in, got := mustParseT(t, body), mustParseT(t, out)
		// The last keep rounds stay, whole and in order.
		ir, outRounds := findRounds(in.Messages), findRounds(got.Messages)
		var want, kept []string
		for _, rd := range ir[max(0, len(ir)-keep):] {
			want = append(want, rd.firstID)
		}
		for _, rd := range outRounds {
			kept = append(kept, rd.firstID)
		}
		if fmt.Sprint(want) != fmt.Sprint(kept) {
			t.Errorf("rounds kept %v; want the last %d: %v", kept, keep, want)
		}
		checkKeptContent(t, in.Messages, got.Messages, false)
		// A session whose history grows request by request, trimmed with a
		// remembered boundary: every request must come out valid.
		// Apply moves a boundary at once; ApplyInSteps (the pipeline's) waits
		// for rounds to pile up unless urgent.
		l, steps := NewLayer1(keep, 0), NewLayer1(keep, 0)
		limit := Estimator{}.Raw(in) / 2
		over := func(r *Request) bool { return Estimator{}.Raw(r) > limit }
		urgent := func(r *Request) bool { return Estimator{}.Raw(r) > limit*3/2 }
		prefixes := userPrefixes(body)
		for i, prefix := range prefixes[max(0, len(prefixes)-8):] {
			orig := bytes.Clone(prefix)
			r := mustParseT(t, prefix)
			if i%2 == 0 {
				l.Apply(r, "session", over)
			} else {
				steps.ApplyInSteps(r, "session", over, urgent)
			}
			o := r.Encode()
			if !bytes.Equal(prefix, orig) {
				t.Fatalf("Layer 1 modified its input")
			}
			if len(o) > len(prefix) {
				t.Errorf("session request grew: %d -> %d bytes", len(prefix), len(o))
			}
			for _, p := range validate(prefix, o) {
				t.Errorf("session request: %s\nin:  %s\nout: %s", p, prefix, o)
			}
		}
	})
}

// userPrefixes lists the requests a client would have sent on the way to
// body: its history cut after each user message.
func userPrefixes(body []byte) [][]byte {
	r, err := ParseRequest(body)
	if err != nil {
		return nil
	}
	var out [][]byte
	for i := range r.Messages {
		if r.Messages[i].Role != "user" || i == len(r.Messages)-1 {
			continue
		}
		c := r.Clone()
		c.Messages = c.Messages[:i+1]
		out = append(out, c.Encode())
	}
	return out
}

// checkKeptContent checks that a step only removed content: what is left is
// in the input's order, system messages stay, and user text, images and
// documents are never lost — Layer 1 drops whole tool rounds but keeps text
// the user typed next to a tool result. With purify, only thinking may go.
func checkKeptContent(t *testing.T, in, out []Message, purify bool) {
	t.Helper()
	ib, isys := flattenContent(in)
	ob, osys := flattenContent(out)
	if fmt.Sprint(isys) != fmt.Sprint(osys) {
		t.Errorf("system messages changed:\n%q\n%q", isys, osys)
	}
	j := 0
	for _, b := range ob {
		for j < len(ib) && ib[j] != b {
			if !purify && ib[j].role == "user" && ib[j].typ != "tool_result" {
				t.Errorf("user content lost: %.200s", ib[j].raw)
			}
			if purify && ib[j].typ != "thinking" && ib[j].typ != "redacted_thinking" {
				t.Errorf("purify removed a block that is not thinking: %.200s", ib[j].raw)
			}
			j++
		}
		if j == len(ib) {
			t.Fatalf("output block not in the input (or out of order): %.300s", b.raw)
		}
		j++
	}
	for ; j < len(ib); j++ {
		if !purify && ib[j].role == "user" && ib[j].typ != "tool_result" {
			t.Errorf("user content lost at the end: %.200s", ib[j].raw)
		}
		if purify && ib[j].typ != "thinking" && ib[j].typ != "redacted_thinking" {
			t.Errorf("purify removed a trailing block that is not thinking: %.200s", ib[j].raw)
		}
	}
}

func FuzzLayer2(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		body := fuzzBody(data)
		protect := 4
		if len(data) > 0 {
			protect = 1 + int(data[0]%6)
		}
		out, valid := checkStep(t, func() stepFn { return func(r *Request) { ElideThinking(r, protect) } }, body)
		if out == nil || !valid {
			return
		}
		in, got := mustParseT(t, body), mustParseT(t, out)
		if len(in.Messages) != len(got.Messages) {
			t.Fatalf("Layer 2 changed the message count")
		}
		for i := range in.Messages {
			a, b := &in.Messages[i], &got.Messages[i]
			if i >= len(in.Messages)-protect && !bytes.Equal(a.Raw(), b.Raw()) {
				t.Errorf("protected message %d changed", i)
			}
			for j := range a.Blocks {
				ab, bb := a.Blocks[j], b.Blocks[j]
				if bytes.Equal(ab.raw, bb.raw) {
					if ab.Type == "thinking" && a.Role == "assistant" && i < len(in.Messages)-protect &&
						ab.Signature() != "" && utf8.RuneCountInString(ab.Thinking()) > minThinkingChars {
						t.Errorf("message %d: signed thinking not elided", i)
					}
					continue
				}
				want, err := ab.With("thinking", elidedThinkingJSON)
				if ab.Type != "thinking" || err != nil || !bytes.Equal(want.raw, bb.raw) {
					t.Errorf("message %d block %d: changed beyond eliding thinking:\n%s\n%s", i, j, ab.raw, bb.raw)
				}
			}
		}
	})
}

func FuzzPurify(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		body := fuzzBody(data)
		out, valid := checkStep(t, func() stepFn { return func(r *Request) { Purify(r) } }, body)
		if out == nil || !valid {
			return
		}
		got := mustParseT(t, out)
		for i, m := range got.Messages {
			for _, b := range m.Blocks {
				if b.Type == "thinking" || b.Type == "redacted_thinking" {
					t.Errorf("message %d still has a %s block", i, b.Type)
				}
			}
		}
		checkKeptContent(t, mustParseT(t, body).Messages, got.Messages, true)
	})
}

// shortSummarizer is Layer 3's fake summary model: deterministic, and its
// summary is never longer than the history it replaces (a fraction of it,
// chosen by the fuzz input).
type shortSummarizer struct{ percent int }

func (s shortSummarizer) Summarize(_ context.Context, h History) (string, error) {
	size := 0
	for i := range h.Messages {
		size += len(h.Messages[i].Raw())
	}
	n := size * s.percent / 100
	var b strings.Builder
	b.WriteString("<conversation_summary><current_work>")
	for i := range h.Messages {
		if b.Len() >= n {
			break
		}
		b.WriteString(h.Messages[i].Role)
		b.WriteString(": ")
		b.WriteString(h.Messages[i].Text())
		b.WriteString("\n")
	}
	b.WriteString("</current_work></conversation_summary>")
	return prefixRunes(b.String(), max(n, 1)), nil
}

func FuzzLayer3(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		body := fuzzBody(data)
		sum := shortSummarizer{percent: 100}
		if len(data) > 0 {
			sum.percent = 1 + int(data[0])%100
		}
		apply := func(l *Layer3, session string) stepFn {
			return func(r *Request) {
				if _, err := l.Apply(context.Background(), r, session, nil); err != nil {
					t.Fatalf("Layer3.Apply: %v", err)
				}
			}
		}
		out, valid := checkStep(t, func() stepFn { return apply(NewLayer3(sum, 0), "") }, body)
		if out == nil || !valid {
			return
		}
		in, got := mustParseT(t, body), mustParseT(t, out)
		if !bytes.Equal(out, body) {
			if !strings.HasPrefix(got.Messages[0].Text(), ContinuationPreamble) {
				t.Errorf("a fork does not open with the summary")
			}
			// The client's last user message (with its tool round) stays verbatim.
			lastUser := func(ms []Message) []byte {
				for i := len(ms) - 1; i >= 0; i-- {
					if ms[i].Role == "user" {
						return ms[i].Raw()
					}
				}
				return nil
			}
			if !bytes.Equal(lastUser(in.Messages), lastUser(got.Messages)) {
				t.Errorf("the last user message was not kept verbatim")
			}
			// So is everything from the start of its tool round on.
			tail := in.Messages[tailStart(in.Messages):]
			if len(got.Messages) < len(tail) {
				t.Fatalf("the fork is shorter than the tail it keeps")
			}
			for i, m := range got.Messages[len(got.Messages)-len(tail):] {
				if !bytes.Equal(m.Raw(), tail[i].Raw()) {
					t.Errorf("tail message %d changed", i)
				}
			}
			if sig := LatestSignature(in.Messages[:tailStart(in.Messages)]); sig != "" &&
				!strings.Contains(got.Messages[0].Text(), "<latest_thinking_signature>"+sig+"</latest_thinking_signature>") {
				t.Errorf("the summary does not carry the latest signature %s", sig)
			}
		}
		// With a session the second request is served from the cache and
		// must give the same bytes.
		l := NewLayer3(sum, 0)
		first := runFuzzStep(t, apply(l, "s"), body)
		if second := runFuzzStep(t, apply(l, "s"), body); !bytes.Equal(first, second) || !bytes.Equal(first, out) {
			t.Errorf("cached summary gave different bytes")
		}
		// A session growing request by request, forked when over a limit:
		// cached summaries are resumed or extended, and every request must
		// come out valid and no larger.
		l = NewLayer3(sum, 0)
		limit := Estimator{}.Raw(in) / 2
		over := func(r *Request) bool { return Estimator{}.Raw(r) > limit }
		prefixes := append(userPrefixes(body), body)
		for _, prefix := range prefixes[max(0, len(prefixes)-8):] {
			r := mustParseT(t, prefix)
			if _, err := l.Apply(context.Background(), r, "grow", over); err != nil {
				t.Fatalf("Layer3.Apply: %v", err)
			}
			o := r.Encode()
			if len(o) > len(prefix) {
				t.Errorf("session request grew: %d -> %d bytes", len(prefix), len(o))
			}
			for _, p := range validate(prefix, o) {
				t.Errorf("session request: %s\nin:  %s\nout: %s", p, prefix, o)
			}
		}
	})
}

// FuzzParseRequest feeds raw bytes to the parser: it must never panic, an
// untouched request must come back as the very same slice, and re-encoding
// every message must give the same JSON value. Every step must survive
// whatever parses.
func FuzzParseRequest(f *testing.F) {
	addSeeds(f)
	for _, s := range []string{
		`{}`, `{"messages":[]}`, `{"messages":null}`, `{"messages":[{"role":"user","content":null}]}`,
		`{"messages":[{"role":"user","content":"a","content":[{"type":"text","text":"b"}]}],"messages":[{"role":"user","content":"c"}]}`,
		`{"messages":[{"role":"assistant","content":[1,"x",{"type":"tool_use"}]},{"role":"user","content":[{"type":"tool_result","content":{}}]}]}`,
		` {"messages" : [ {"role" : "user" , "content" : [ {"type" : "text" , "text" : "a\"\\"} ] } ] } `,
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
				if s := b.Text(); utf8.ValidString(s) && unquote(quote(s)) != s {
					t.Fatalf("quote does not round-trip %q: %s", s, quote(s))
				}
			}
		}
		out := r.Encode()
		if json.Valid(body) {
			if !json.Valid(out) {
				t.Fatalf("re-encoded request is not valid JSON:\nin:  %s\nout: %s", body, out)
			}
			if a, b := canonical(t, body), canonical(t, out); !bytes.Equal(a, b) {
				t.Fatalf("re-encoding changed the request:\nin:  %s\nout: %s", a, b)
			}
		}
		for _, s := range []stepFn{
			func(r *Request) { NewCompressor(CompressorOptions{MaxChars: 50, LargeChars: 60}).Apply(r) },
			func(r *Request) { NewLayer1(1, 0).Apply(r, "s", nil) },
			func(r *Request) { ElideThinking(r, 1) },
			func(r *Request) { Purify(r) },
			func(r *Request) {
				if _, err := NewLayer3(shortSummarizer{percent: 50}, 0).Apply(context.Background(), r, "s", nil); err != nil {
					t.Fatal(err)
				}
			},
			func(r *Request) { Estimator{}.Estimate(r) },
		} {
			out := runFuzzStep(t, s, body)
			if json.Valid(body) && !json.Valid(out) {
				t.Fatalf("a step made invalid JSON of a valid body:\nin:  %s\nout: %s", body, out)
			}
		}
		if !bytes.Equal(body, orig) {
			t.Fatalf("input modified")
		}
	})
}

// atCluster reports whether s can be cut before byte i without splitting a
// user-perceived character: not inside a UTF-8 sequence, not before a
// combining mark, variation selector, skin-tone modifier, keycap or emoji
// tag, not next to a zero-width joiner, not between two regional indicators
// of a flag. (Written apart from the engine's cut, so one checks the other.)
func atCluster(s string, i int) bool {
	if i <= 0 || i >= len(s) {
		return true
	}
	if !utf8.RuneStart(s[i]) {
		return false
	}
	next, _ := utf8.DecodeRuneInString(s[i:])
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	extends := func(r rune) bool {
		return r >= 0x300 && r <= 0x36F || r == 0x200D || r >= 0xFE00 && r <= 0xFE0F ||
			r >= 0x1F3FB && r <= 0x1F3FF || r == 0x20E3 || r >= 0xE0020 && r <= 0xE007F
	}
	if extends(next) || prev == 0x200D {
		return false
	}
	isRI := func(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }
	if isRI(prev) && isRI(next) {
		n := 0 // regional indicators before the cut: an odd count splits a flag
		for j := i; j > 0; {
			r, size := utf8.DecodeLastRuneInString(s[:j])
			if !isRI(r) {
				break
			}
			n++
			j -= size
		}
		return n%2 == 0
	}
	return true
}
