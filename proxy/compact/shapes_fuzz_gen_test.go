package compact_test

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The generator of the shape fuzz targets (shapes_fuzz_test.go): fuzz bytes
// in, a valid, plausible client conversation of one protocol out. It works
// as fuzz_gen_test.go's convGen does: every choice reads one byte, and once
// the bytes run out every choice is "no", so the conversation ends.
type shapeGen struct {
	data    []byte
	pos     int
	ids     int
	sigs    int
	outputs []any // the tool outputs so far, which a later call may repeat
}

func (g *shapeGen) next() byte {
	if g.pos >= len(g.data) {
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return b
}

func (g *shapeGen) done() bool { return g.pos >= len(g.data) }

// n returns a choice in [0, k).
func (g *shapeGen) n(k int) int { return int(g.next()) % k }

// chance is true pct percent of the time, and never once the bytes ran out.
func (g *shapeGen) chance(pct int) bool {
	v := g.next()
	return v != 0 && int(v-1)*100 < pct*255
}

// shapeWords is the generator's vocabulary: plain words, multi-byte and
// multi-rune characters, characters JSON must escape, and what the
// tool-result compressor's content rules look for.
var shapeWords = []string{
	"the", "file", "func main() {", "}", "error:", "ok", "\n", "\t", "é", "你好", "日本語のテキスト",
	"😀", "👍🏽", "👨‍👩‍👧", "🇯🇵", "e\u0301", "\u2028", "\"quoted\"", `back\slash`, "\x01", "<", ">", "&",
	"<html>", "<div>", "</div>", "<style>", "body{color:red}", "</style>", "<script>", "var x=1;", "</script>",
	"Page Snapshot", "[ref=e12]", "- button \"OK\" [ref=e1]\n",
	"Output too large (51.6KB). Full output saved to: /tmp/out.txt\n",
	"data:image/png;base64,", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODk=",
	"[truncated 5 chars]", "...", "{\"k\": 1}",
}

// text returns a non-blank text of up to about words words; sometimes one
// word repeated many times, long enough for the compressor. Two bytes seed a
// small PRNG that picks the words, so the fuzzer's bytes go to structure.
func (g *shapeGen) text(words int) string {
	ctl := g.next()
	x := uint32(g.next())<<8 | uint32(ctl) | uint32(g.pos)<<16 | 1
	rnd := func(n int) int {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		return int(x % uint32(n))
	}
	var b strings.Builder
	if ctl%8 == 1 {
		w := shapeWords[rnd(len(shapeWords))]
		for range 40 + rnd(400) {
			b.WriteString(w)
			b.WriteByte(' ')
		}
	}
	for range 1 + rnd(words) {
		b.WriteString(shapeWords[rnd(len(shapeWords))])
		if rnd(10) < 7 {
			b.WriteByte(' ')
		}
	}
	if strings.TrimSpace(b.String()) == "" {
		b.WriteString("x")
	}
	return b.String()
}

func (g *shapeGen) base64(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[(i*7+g.ids)%64]
	}
	return string(b)
}

func (g *shapeGen) newID(prefix string) string {
	g.ids++
	return fmt.Sprintf("%s_%02d%s", prefix, g.ids, g.base64(g.n(6)))
}

func (g *shapeGen) signature(prefix string) string {
	g.sigs++
	return fmt.Sprintf("%s%03d%s", prefix, g.sigs, g.base64(8+g.n(48)))
}

// toolNames are the tools every generated request declares.
var toolNames = []string{"read_file", "run", "grep"}

func (g *shapeGen) toolName() string { return toolNames[g.n(len(toolNames))] }

// args are a call's arguments; sometimes nested, sometimes empty.
func (g *shapeGen) args() map[string]any {
	switch g.n(6) {
	case 0:
		return map[string]any{}
	case 1:
		return map[string]any{"cmd": []any{"go", g.text(2), 3, true, nil}, "opts": map[string]any{"n": 2.5}}
	}
	return map[string]any{"path": g.text(3), "n": g.n(100)}
}

// repeated is now and then an earlier tool output, as when an agent re-reads a file
// (for the dedupe step), else a fresh one from fresh; it remembers what it returns.
func (g *shapeGen) repeated(fresh func() any) any {
	if len(g.outputs) > 0 && g.chance(15) {
		return g.outputs[g.n(len(g.outputs))]
	}
	v := fresh()
	g.outputs = append(g.outputs, v)
	return v
}

func (g *shapeGen) imageData() string { return g.base64(4 * (1 + g.n(8)*g.n(40))) }

// shuffled returns a copy of ids in an order the bytes choose.
func (g *shapeGen) shuffled(ids []string) []string {
	order := append([]string(nil), ids...)
	for i := len(order) - 1; i > 0; i-- {
		j := g.n(i + 1)
		order[i], order[j] = order[j], order[i]
	}
	return order
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// jsonSchemaTools are function tools in JSON Schema for toolNames.
func jsonSchemaParams() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}
}

// generateChat builds a Chat Completions request from data: parallel tool
// calls answered in any order, reasoning_content (DeepSeek's), tool results
// as strings or parts with images, user text right after tool messages,
// system and developer messages anywhere.
func generateChat(data []byte) []byte {
	g := &shapeGen{data: data}
	var msgs []any
	if g.chance(60) {
		msgs = append(msgs, map[string]any{"role": "system", "content": g.text(8)})
	}
	msgs = append(msgs, g.chatUser())
	for turn := 0; turn < 30 && !g.done(); turn++ {
		if g.chance(5) {
			msgs = append(msgs, map[string]any{"role": "developer", "content": []any{map[string]any{"type": "text", "text": g.text(5)}}})
		}
		a := map[string]any{"role": "assistant"}
		if g.chance(40) {
			a["reasoning_content"] = g.text(12)
		}
		var ids []string
		if g.chance(70) {
			var calls []any
			for range 1 + g.n(4) {
				id := g.newID("call")
				ids = append(ids, id)
				calls = append(calls, map[string]any{"id": id, "type": "function",
					"function": map[string]any{"name": g.toolName(), "arguments": string(mustJSON(g.args()))}})
			}
			a["tool_calls"] = calls
			switch g.n(3) {
			case 0:
				a["content"] = nil
			case 1:
				a["content"] = g.text(8)
			}
		} else {
			a["content"] = g.text(10)
		}
		msgs = append(msgs, a)
		for _, id := range g.shuffled(ids) {
			msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": id, "content": g.repeated(g.chatToolContent)})
		}
		if len(ids) == 0 || g.chance(20) {
			msgs = append(msgs, g.chatUser())
		}
	}
	tools := make([]any, len(toolNames))
	for i, name := range toolNames {
		tools[i] = map[string]any{"type": "function", "function": map[string]any{"name": name, "parameters": jsonSchemaParams()}}
	}
	req := map[string]any{"model": []string{"gpt-4.1", "deepseek-reasoner", "o3", "qwen3-coder"}[g.n(4)], "messages": msgs, "tools": tools}
	if g.chance(40) {
		req["max_completion_tokens"] = 4096
	}
	if g.chance(30) {
		req["reasoning_effort"] = "medium"
	}
	if g.chance(40) {
		req["stream"] = true
		req["stream_options"] = map[string]any{"include_usage": true}
	}
	return mustJSON(req)
}

func (g *shapeGen) chatUser() map[string]any {
	if g.chance(50) {
		return map[string]any{"role": "user", "content": g.text(12)}
	}
	parts := []any{map[string]any{"type": "text", "text": g.text(12)}}
	if g.chance(30) {
		parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + g.imageData()}})
	}
	return map[string]any{"role": "user", "content": parts}
}

func (g *shapeGen) chatToolContent() any {
	switch g.n(6) {
	case 0:
		return ""
	case 1:
		parts := []any{map[string]any{"type": "text", "text": g.text(16)}}
		if g.chance(50) {
			parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + g.imageData()}})
		}
		return parts
	}
	return g.text(16)
}

// generateResponses builds a Responses request from data: reasoning items
// with encrypted_content before calls or messages, parallel function calls
// answered in any order, outputs as strings or parts with images, assistant
// messages between rounds, developer messages.
func generateResponses(data []byte) []byte {
	g := &shapeGen{data: data}
	req := map[string]any{"model": []string{"gpt-5", "gpt-5-codex", "o4-mini"}[g.n(3)], "store": false,
		"include": []any{"reasoning.encrypted_content"}}
	if g.chance(10) {
		req["input"] = g.text(10)
		return mustJSON(req)
	}
	var items []any
	if g.chance(30) {
		items = append(items, map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": g.text(5)}}})
	}
	items = append(items, g.responsesUser())
	for turn := 0; turn < 30 && !g.done(); turn++ {
		for range g.n(3) {
			summary := []any{}
			if g.chance(70) {
				summary = append(summary, map[string]any{"type": "summary_text", "text": g.text(12)})
			}
			items = append(items, map[string]any{"type": "reasoning", "id": g.newID("rs"), "summary": summary,
				"encrypted_content": g.signature("gAAAAB")})
		}
		var ids []string
		calls := 0
		if g.chance(70) {
			calls = 1 + g.n(4)
		}
		if calls == 0 || g.chance(20) {
			items = append(items, map[string]any{"type": "message", "role": "assistant",
				"content": []any{map[string]any{"type": "output_text", "text": g.text(10), "annotations": []any{}}}})
		}
		for range calls {
			id := g.newID("call")
			ids = append(ids, id)
			items = append(items, map[string]any{"type": "function_call", "call_id": id, "name": g.toolName(), "arguments": string(mustJSON(g.args()))})
		}
		for _, id := range g.shuffled(ids) {
			items = append(items, map[string]any{"type": "function_call_output", "call_id": id, "output": g.repeated(g.responsesOutput)})
		}
		if calls == 0 || g.chance(20) {
			items = append(items, g.responsesUser())
		}
	}
	tools := make([]any, len(toolNames))
	for i, name := range toolNames {
		tools[i] = map[string]any{"type": "function", "name": name, "parameters": jsonSchemaParams()}
	}
	req["input"], req["tools"] = items, tools
	if g.chance(50) {
		req["instructions"] = g.text(8)
	}
	if g.chance(50) {
		req["reasoning"] = map[string]any{"effort": "high", "summary": "auto"}
	}
	if g.chance(40) {
		req["stream"] = true
	}
	return mustJSON(req)
}

func (g *shapeGen) responsesUser() map[string]any {
	if g.chance(40) {
		return map[string]any{"role": "user", "content": g.text(12)}
	}
	parts := []any{map[string]any{"type": "input_text", "text": g.text(12)}}
	if g.chance(30) {
		parts = append(parts, map[string]any{"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64," + g.imageData()})
	}
	return map[string]any{"type": "message", "role": "user", "content": parts}
}

func (g *shapeGen) responsesOutput() any {
	if g.chance(20) {
		parts := []any{map[string]any{"type": "input_text", "text": g.text(16)}}
		if g.chance(50) {
			parts = append(parts, map[string]any{"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64," + g.imageData()})
		}
		return parts
	}
	return g.text(16)
}

// generateGemini builds a generateContent request from data: model turns
// with thought parts, signed first calls of parallel calls (with and
// without ids, as Gemini CLI sends none), text turns whose signature rides
// on the last part (sometimes an empty one), user turns whose responses come
// in any order followed by text or images.
func generateGemini(data []byte) []byte {
	g := &shapeGen{data: data}
	var contents []any
	contents = append(contents, map[string]any{"role": "user", "parts": g.geminiUserParts()})
	for turn := 0; turn < 30 && !g.done(); turn++ {
		var parts []any
		if g.chance(40) {
			p := map[string]any{"text": g.text(8), "thought": true}
			if g.chance(30) {
				p["thoughtSignature"] = g.signature("Cthought")
			}
			parts = append(parts, p)
		}
		type call struct{ id, name string }
		var calls []call
		if g.chance(70) {
			withIDs := g.chance(50)
			if g.chance(25) {
				parts = append(parts, map[string]any{"text": g.text(6)})
			}
			for i := range 1 + g.n(3) {
				c := call{name: g.toolName()}
				fc := map[string]any{"name": c.name, "args": g.args()}
				if withIDs {
					c.id = g.newID("fc")
					fc["id"] = c.id
				}
				p := map[string]any{"functionCall": fc}
				if i == 0 && g.chance(90) || i > 0 && g.chance(10) {
					p["thoughtSignature"] = g.signature("Ccall")
				}
				parts = append(parts, p)
				calls = append(calls, c)
			}
		} else {
			for range 1 + g.n(2) {
				parts = append(parts, map[string]any{"text": g.text(8)})
			}
			if g.chance(60) {
				last := parts[len(parts)-1].(map[string]any)
				if g.chance(30) {
					parts = append(parts, map[string]any{"text": "", "thoughtSignature": g.signature("Ctext")})
				} else {
					last["thoughtSignature"] = g.signature("Ctext")
				}
			}
		}
		contents = append(contents, map[string]any{"role": "model", "parts": parts})
		var user []any
		order := make([]int, len(calls))
		for i := range order {
			order[i] = i
		}
		// Without ids, responses pair by name in order (proxy/gemini callIDs):
		// only calls with ids are answered out of order.
		if len(calls) > 0 && calls[0].id != "" {
			for i := len(order) - 1; i > 0; i-- {
				j := g.n(i + 1)
				order[i], order[j] = order[j], order[i]
			}
		}
		for _, i := range order {
			fr := map[string]any{"name": calls[i].name, "response": g.repeated(func() any { return g.geminiResponse() })}
			if calls[i].id != "" {
				fr["id"] = calls[i].id
			}
			user = append(user, map[string]any{"functionResponse": fr})
		}
		if len(calls) == 0 || g.chance(20) {
			user = append(user, g.geminiUserParts()...)
		}
		contents = append(contents, map[string]any{"role": "user", "parts": user})
	}
	decls := make([]any, len(toolNames))
	for i, name := range toolNames {
		decls[i] = map[string]any{"name": name, "parametersJsonSchema": jsonSchemaParams()}
	}
	req := map[string]any{"contents": contents, "tools": []any{map[string]any{"functionDeclarations": decls}}}
	if g.chance(50) {
		req["systemInstruction"] = map[string]any{"parts": []any{map[string]any{"text": g.text(8)}}}
	}
	if g.chance(50) {
		req["generationConfig"] = map[string]any{"thinkingConfig": map[string]any{"includeThoughts": true, "thinkingBudget": -1}}
	}
	if g.chance(30) {
		req["safetySettings"] = []any{map[string]any{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "threshold": "BLOCK_NONE"}}
	}
	return mustJSON(req)
}

func (g *shapeGen) geminiUserParts() []any {
	parts := []any{map[string]any{"text": g.text(12)}}
	if g.chance(25) {
		parts = append(parts, map[string]any{"inlineData": map[string]any{"mimeType": "image/png", "data": g.imageData()}})
	}
	return parts
}

func (g *shapeGen) geminiResponse() map[string]any {
	switch g.n(5) {
	case 0:
		return map[string]any{"content": g.text(6), "lines": g.n(50)}
	case 1:
		return map[string]any{"error": g.text(6)}
	}
	return map[string]any{"output": g.text(16)}
}
