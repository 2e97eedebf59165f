package compact

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"

	"longhaul/proxy/anthropic"
)

// Estimator defaults. The margin covers the character-class heuristic's
// error: an estimate must err high, since a request over the window fails
// upstream while one compacted a little early only loses some cache.
const (
	DefaultImageTokens    = 1600 // a full-size image costs about (w×h)/750 ≈ 1,600 tokens
	DefaultDocumentTokens = 3000 // a PDF page is 1,500–3,000 tokens; documents rarely are one page
	DefaultMargin         = 0.15
)

// Per-structure overheads: the API wraps every message and block in a few
// control tokens, which matter when a session has hundreds of short blocks.
const (
	messageOverhead = 4
	blockOverhead   = 3
)

// Estimator counts tokens with a character-class heuristic: ASCII and Latin
// text about 4 characters per token, CJK about 1.5 characters per token, wide
// symbols (emoji) about one token each. It reads the raw JSON bytes of the
// fields it counts and never decodes strings, so it runs at memory speed.
// The zero value uses the defaults above.
type Estimator struct {
	ImageTokens    int     // fixed cost per image; 0 = DefaultImageTokens
	DocumentTokens int     // fixed cost per non-text document; 0 = DefaultDocumentTokens
	Margin         float64 // safety margin applied by WithMargin; 0 = DefaultMargin, <0 = none
}

func (e Estimator) imageTokens() float64 {
	if e.ImageTokens > 0 {
		return float64(e.ImageTokens)
	}
	return DefaultImageTokens
}

func (e Estimator) documentTokens() float64 {
	if e.DocumentTokens > 0 {
		return float64(e.DocumentTokens)
	}
	return DefaultDocumentTokens
}

// WithMargin applies the safety margin to a raw count.
func (e Estimator) WithMargin(raw float64) int {
	m := e.Margin
	switch {
	case m == 0:
		m = DefaultMargin
	case m < 0:
		m = 0
	}
	return int(raw*(1+m) + 0.5)
}

// Raw is the token count of the whole request without margin or calibration:
// system, tools and every message.
func (e Estimator) Raw(r *anthropic.Request) float64 {
	t := textTokens(r.System) + textTokens(r.Tools)
	return t + e.Messages(r.Messages)
}

// Estimate is Raw plus the safety margin.
func (e Estimator) Estimate(r *anthropic.Request) int { return e.WithMargin(e.Raw(r)) }

// Messages is the raw token count of msgs.
func (e Estimator) Messages(msgs []anthropic.Message) float64 {
	var t float64
	for i := range msgs {
		t += e.Message(&msgs[i])
	}
	return t
}

// Message is the raw token count of one message.
func (e Estimator) Message(m *anthropic.Message) float64 {
	if m.IsString {
		return messageOverhead + textTokens(m.RawText())
	}
	return messageOverhead + e.blocks(m.Blocks)
}

func (e Estimator) blocks(bs []anthropic.Block) float64 {
	var t float64
	for i := range bs {
		t += e.Block(bs[i])
	}
	return t
}

// Block is the raw token count of one content block.
func (e Estimator) Block(b anthropic.Block) float64 {
	t := float64(blockOverhead)
	switch b.Type {
	case "text":
		return t + textTokens(b.RawText())
	case "thinking":
		// The signature is opaque to the tokenizer's count of the prompt.
		return t + textTokens(b.RawThinking())
	case "redacted_thinking":
		return t + textTokens(b.RawData())/2
	case "tool_use", "server_tool_use":
		return t + textTokens(b.RawName()) + textTokens(b.Input())
	case "image":
		return t + e.imageTokens()
	case "document":
		if src := b.Source(); src != nil {
			if sb, err := anthropic.ParseBlock(src); err == nil && sb.Type == "text" {
				return t + textTokens(sb.RawData())
			}
		}
		return t + e.documentTokens()
	}
	if c := b.Content(); c != nil { // tool_result and the server *_tool_result family
		if c[0] == '[' {
			if inner, err := anthropic.ParseBlocks(c); err == nil {
				return t + e.blocks(inner)
			}
		}
		return t + textTokens(c)
	}
	// Unknown or future block: count all of it; over-counting is the safe side.
	return t + textTokens(b.Raw())
}

// textTokens counts the tokens of raw JSON text by character class. Escapes
// count as the characters they are written with, a slight over-count.
// ToolTokens estimates the tokens of tool definitions (their raw JSON), with the safety
// margin, as the engine counts them in a request.
func (e Estimator) ToolTokens(raw []byte) int { return e.WithMargin(textTokens(raw)) }

func textTokens(b []byte) float64 {
	var latin, cjk, wide int
	i := 0
	for i < len(b) {
		if i+8 <= len(b) {
			// Eight bytes at a time: all ASCII (the common case in code and
			// logs), or the ASCII run before the first non-ASCII byte.
			m := binary.LittleEndian.Uint64(b[i:]) & 0x8080808080808080
			if m == 0 {
				latin += 8
				i += 8
				continue
			}
			k := bits.TrailingZeros64(m) >> 3
			latin += k
			i += k
		} else if b[i] < utf8.RuneSelf {
			latin++
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		i += n
		switch {
		case isCJK(r):
			cjk++
		case r >= 0x1F000:
			wide++
		default:
			latin++
		}
	}
	return float64(latin)/4 + float64(cjk)/1.5 + float64(wide)
}

// isCJK reports Han, kana, Hangul and full-width forms: scripts whose
// tokenizers spend close to a token per character.
func isCJK(r rune) bool {
	switch {
	case r >= 0x2E80 && r <= 0x9FFF: // radicals, punctuation, kana, Han
		return true
	case r >= 0xAC00 && r <= 0xD7AF: // Hangul syllables
		return true
	case r >= 0xF900 && r <= 0xFAFF: // compatibility ideographs
		return true
	case r >= 0xFF00 && r <= 0xFFEF: // full-width forms
		return true
	case r >= 0x20000 && r <= 0x3FFFF: // Han extensions
		return true
	}
	return false
}
