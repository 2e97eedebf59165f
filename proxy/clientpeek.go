package proxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/compact"
)

// Reading an OpenAI or Gemini client's request without translating it. Translating an 800 KB
// conversation into Messages costs about 2 ms; a request the engine would leave alone and an
// account of the client's own protocol take needs none of it. So the core first reads what
// routing needs from the client's own body (model, stream, session) in one pass that also
// checks its syntax, and translates only when the engine may act on the request or the
// account speaks another protocol. The pass runs while the body arrives (readBody hands it an
// anthropic.Arriving over the request's reader): from a client sending slower than the pass
// walks, it ends with the last byte instead of starting after it (over loopback an 800 KB body
// is in the socket at once and the pass follows it: docs/benchmarks.md, issue 12). The screen
// then reads no byte of the body, only what the pass gathered (untouchedForeign).

// clientPeek is what routing needs of a request, read from the client's own body, and what
// the screen needs to know the engine would leave it alone.
type clientPeek struct {
	model   string // "" when the body names none (Gemini: the path does)
	stream  bool
	session string
	// maxToolResult is the longest tool result's raw length (an upper bound of its
	// characters); engine reports what the engine acts on whatever the pressure: an image or a
	// saved-to-a-file notice in a tool result, or reasoning of any kind (signature repair).
	maxToolResult int
	engine        bool
	// tools and toolBytes are the tool definitions' count and size (the tool inventory).
	tools, toolBytes int
	// messages is how many messages the body holds (Chat messages, Responses input items,
	// Gemini contents): what the memory budget reserves for (budget.go).
	messages int
}

// peekOpenAI reads a Chat Completions body (messages) or a Responses body (instructions,
// input) in one pass that also checks it is well-formed JSON, while the body arrives (a is
// anthropic.NewArriving) or over a complete one (anthropic.Arrived).
//
// rs, when not nil, recalls what a Chat body repeats of a recent one (chatrecall.go).
func peekOpenAI(a *anthropic.Arriving, rs *chatRecallScan) (clientPeek, error) {
	var p clientPeek
	var explicit, first, second []byte
	b := a.Body()
	end, err := a.WalkObject(0, func(k []byte, vi int) (int, error) {
		if string(k) == `"messages"` {
			rs = rs.enter()
			return p.walkChatMessages(a, vi, &first, &second, rs)
		}
		if string(k) == `"input"` && a.Has(vi+1) && b[vi] == '[' {
			ve, err := countEntries(a, vi, "input", &p.messages)
			if err == nil {
				first = b[vi:ve]
				p.engine = true // Responses is always translated (responsesClient.lazy)
			}
			return ve, err
		}
		ve, err := a.SkipValue(vi)
		if err != nil {
			return 0, err
		}
		v := b[vi:ve]
		switch string(k) {
		case `"model"`:
			p.model = anthropic.Unquote(v)
		case `"stream"`:
			p.stream = string(v) == "true"
		case `"prompt_cache_key"`:
			explicit = v
		case `"user"`, `"safety_identifier"`:
			if explicit == nil {
				explicit = v
			}
		case `"input"`:
			first = v
			p.engine = true // Responses is always translated (responsesClient.lazy)
		case `"instructions"`:
			second = v
		case `"reasoning_effort"`, `"reasoning"`:
			p.engine = true
		case `"tools"`:
			p.countTools(v)
		}
		return ve, nil
	})
	err = a.End(end, err)
	p.session = clientSession(explicit, first, second)
	return p, err
}

// walkChatMessages walks Chat messages once, keeping the first two (the session) and what the
// screen needs: tool results' sizes and notices, and any reasoning.
func (p *clientPeek) walkChatMessages(a *anthropic.Arriving, i int, first, second *[]byte, rs *chatRecallScan) (int, error) {
	n := 0
	msgEngine := false // what the messages set of engine, for the recall's marks
	b := a.Body()
	return a.WalkArray(i, func(mi int) (int, error) {
		if n == 0 && rs != nil {
			if m, ok := rs.skip(a, mi); ok {
				n, msgEngine = int(m.count), m.engine
				p.messages = n
				p.maxToolResult = max(p.maxToolResult, int(m.maxToolResult))
				p.engine = p.engine || m.engine
				*first = rs.first.Of(b)
				if n >= 2 {
					*second = rs.second.Of(b)
				}
				return int(m.end), nil
			}
		}
		was := p.engine
		p.engine = false
		var role, content []byte
		me, err := a.WalkObject(mi, func(k []byte, vi int) (int, error) {
			ve, err := a.SkipValue(vi)
			if err != nil {
				return 0, err
			}
			switch string(k) {
			case `"role"`:
				role = b[vi:ve]
			case `"content"`:
				content = b[vi:ve]
			case `"reasoning_content"`, `"thinking_blocks"`, `"reasoning"`:
				p.engine = true
			}
			return ve, nil
		})
		if err != nil {
			p.engine = p.engine || was
			return 0, err
		}
		switch n {
		case 0:
			*first = b[mi:me]
		case 1:
			*second = b[mi:me]
		}
		if n++; n > anthropic.MaxMessages {
			return 0, &anthropic.TooManyMessagesError{Field: "messages"}
		}
		p.messages = n
		if string(role) == `"tool"` {
			p.toolResult(content)
		}
		msgEngine = msgEngine || p.engine
		p.engine = p.engine || was
		if rs != nil {
			rs.mark(chatMark{end: int32(me), count: int32(n), maxToolResult: int32(p.maxToolResult), engine: msgEngine}, anthropic.Span{Start: mi, End: me})
		}
		return me, nil
	})
}

// savedNotice is what the compressor's saved-to-a-file rule looks for ("saved to", "Saved
// to"), at any size. Its other rules act only above the size maxToolResult bounds, and images
// in a tool result are Gemini's inlineData (a Chat tool message carries text only).
var savedNotice = []byte("aved to")

// toolResult notes a tool result's raw content.
func (p *clientPeek) toolResult(content []byte) {
	p.maxToolResult = max(p.maxToolResult, len(content))
	if bytes.Contains(content, savedNotice) {
		p.engine = true
	}
}

// peekGemini reads a generateContent body (systemInstruction, contents) in one pass, as
// peekOpenAI does.
func peekGemini(a *anthropic.Arriving) (clientPeek, error) {
	var p clientPeek
	var system, first []byte
	b := a.Body()
	end, err := a.WalkObject(0, func(k []byte, vi int) (int, error) {
		if string(k) == `"contents"` {
			return p.walkGeminiContents(a, vi, &first)
		}
		ve, err := a.SkipValue(vi)
		if err != nil {
			return 0, err
		}
		switch string(k) {
		case `"systemInstruction"`, `"system_instruction"`:
			system = b[vi:ve]
		case `"generationConfig"`, `"generation_config"`:
			if bytes.Contains(b[vi:ve], []byte("hinking")) { // thinkingConfig, thinking_config
				p.engine = true
			}
		case `"tools"`:
			// Gemini's tools hold functionDeclarations lists: count the declarations.
			anthropic.EachElement(b[vi:ve], func(tool []byte) error { //nolint:errcheck // validated by the walk
				p.countTools(anthropic.MemberValue(tool, "functionDeclarations"))
				p.countTools(anthropic.MemberValue(tool, "function_declarations"))
				return nil
			})
			p.toolBytes = ve - vi
		}
		return ve, nil
	})
	err = a.End(end, err)
	p.session = clientSession(nil, system, first)
	return p, err
}

var (
	geminiEngineMarkers = [][]byte{[]byte(`"thought"`), []byte(`"inlineData"`), []byte(`"inline_data"`)}
	geminiResponseKeys  = [][]byte{[]byte(`"functionResponse"`), []byte(`"function_response"`)}
)

// walkGeminiContents walks contents once: the first turn (the session), function responses'
// sizes and notices, inline data and thought parts.
func (p *clientPeek) walkGeminiContents(a *anthropic.Arriving, i int, first *[]byte) (int, error) {
	n := 0
	b := a.Body()
	return a.WalkArray(i, func(ci int) (int, error) {
		ce, err := a.SkipValue(ci)
		if err != nil {
			return 0, err
		}
		turn := b[ci:ce]
		if n == 0 {
			*first = turn
		}
		if n++; n > anthropic.MaxMessages {
			return 0, &anthropic.TooManyMessagesError{Field: "contents"}
		}
		p.messages = n
		for _, m := range geminiEngineMarkers {
			if bytes.Contains(turn, m) {
				p.engine = true
			}
		}
		for _, m := range geminiResponseKeys {
			if bytes.Contains(turn, m) {
				p.toolResult(turn)
			}
		}
		return ce, nil
	})
}

// countEntries walks the array at i, refusing more than anthropic.MaxMessages elements (each
// may become a message), and returns where it ends; *count is set to how many it holds.
func countEntries(a *anthropic.Arriving, i int, field string, count *int) (int, error) {
	n := 0
	end, err := a.WalkArray(i, func(vi int) (int, error) {
		if n++; n > anthropic.MaxMessages {
			return 0, &anthropic.TooManyMessagesError{Field: field}
		}
		return a.SkipValue(vi)
	})
	if err == nil {
		*count = n
	}
	return end, err
}

// countTools adds the elements of a tools array.
func (p *clientPeek) countTools(arr []byte) {
	if len(arr) == 0 || arr[0] != '[' {
		return
	}
	anthropic.EachElement(arr, func([]byte) error { //nolint:errcheck // validated by the walk
		p.tools++
		return nil
	})
	p.toolBytes += len(arr)
}

// clientSession is the session of a request from a client of another protocol: the key the
// client gave (prompt_cache_key, user), else a digest of how its conversation starts (which
// stays the same while the conversation grows).
func clientSession(explicit []byte, parts ...[]byte) string {
	if id := anthropic.Unquote(explicit); id != "" {
		return id
	}
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
		h.Write([]byte{0})
	}
	return "conv_" + hex.EncodeToString(h.Sum(nil)[:12])
}

// untouchedForeign reports, from what the peek of a client's own body found, whether the
// engine would leave the request alone: nothing it acts on whatever the pressure, no tool
// result long enough for the compressor, and a size so far below the Layer-1 threshold that
// no estimate could reach it (the bound of untouched). limit is the context window, for the
// record.
func (c *compactor) untouchedForeign(body []byte, p clientPeek, tg target) (limit int, ok bool) {
	maxChars := c.cfg.MaxToolResultChars
	if maxChars <= 0 {
		maxChars = compact.DefaultMaxToolResultChars
	}
	if p.engine || p.maxToolResult >= min(compact.DefaultLargeChars, maxChars) {
		return 0, false
	}
	limit = tg.window.Tokens
	factor := 1.0
	if !c.cfg.NoUsageScaling {
		factor = c.calibrator.Factor(compact.Family(tg.model))
	}
	bound := float64(len(body)) / quickBytesPerToken * factor * (1 + compact.DefaultMargin)
	return limit, bound <= c.pipe.Thresholds().L1*float64(limit)
}
