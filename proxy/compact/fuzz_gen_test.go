package compact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"longhaul/proxy/anthropic"
)

// The generator of the fuzz tests (fuzz_test.go): fuzz bytes in, a valid,
// plausible Messages request out.

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
		return string(anthropic.Quote(s))
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
		b.WriteString(string(anthropic.Quote(m.k)))
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
