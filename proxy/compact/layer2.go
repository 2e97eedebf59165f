package compact

import "longhaul/proxy/anthropic"

// Layer-2 defaults: the last messages whose thinking is kept in full
// (compaction.protect_last_messages), and the shortest text worth eliding.
const (
	DefaultProtectLastMessages = 4
	minThinkingChars           = 10
	elidedThinking             = "..."
)

var elidedThinkingJSON = anthropic.Quote(elidedThinking)

// ElideThinking (Layer 2) replaces the text of signed thinking blocks longer
// than 10 characters with "..." in assistant messages before the last
// protect messages. The signature stays: the upstream checks the signature,
// and the chain stays intact. Unsigned thinking is left alone (it was not
// issued by the upstream, so nothing vouches for an edited copy). It returns
// the number of blocks elided.
func ElideThinking(r *anthropic.Request, protect int) int { return elideThinking(r, protect, -1) }

// elideThinking is ElideThinking limited, when bound ≥ 0, to the messages received before
// index bound: the elision a previous request already forwarded, which keeps the prefix the
// prompt cache holds.
func elideThinking(r *anthropic.Request, protect, bound int) int {
	if protect <= 0 {
		protect = DefaultProtectLastMessages
	}
	n := 0
	for i := 0; i < len(r.Messages)-protect; i++ {
		m := &r.Messages[i]
		if m.Role != "assistant" || m.IsString || (bound >= 0 && (m.Index() < 0 || m.Index() >= bound)) {
			continue
		}
		var out []anthropic.Block
		for bi, b := range m.Blocks {
			if b.Type != "thinking" || b.Signature() == "" || len([]rune(b.Thinking())) <= minThinkingChars {
				continue
			}
			nb, err := b.With("thinking", elidedThinkingJSON)
			if err != nil {
				continue
			}
			if out == nil {
				out = append([]anthropic.Block(nil), m.Blocks...)
			}
			out[bi] = nb
			n++
		}
		if out != nil {
			m.SetBlocks(out)
		}
	}
	return n
}

// elisionBound is the bound of the elision ElideThinking made on r: one past the last
// received message it may have touched.
func elisionBound(r *anthropic.Request, protect int) int {
	if protect <= 0 {
		protect = DefaultProtectLastMessages
	}
	bound := 0
	for i := 0; i < len(r.Messages)-protect; i++ {
		bound = max(bound, r.Messages[i].Index()+1)
	}
	return bound
}

// Purify removes thinking and redacted_thinking blocks from every message,
// for a model without thinking support. A message left empty is dropped, and
// the turns on either side of it, now of one role, are joined; the first
// message stays a user message. It returns the blocks removed.
func Purify(r *anthropic.Request) int {
	n := 0
	var out []anthropic.Message
	joined := false
	for _, m := range r.Messages {
		if !m.IsString {
			var keep []anthropic.Block
			removed := 0
			for _, b := range m.Blocks {
				if b.Type == "thinking" || b.Type == "redacted_thinking" {
					removed++
					continue
				}
				keep = append(keep, b)
			}
			if removed > 0 {
				n += removed
				if len(keep) == 0 {
					joined = true
					continue
				}
				m.SetBlocks(keep)
			}
		}
		out = appendTurn(out, m, joined)
		if m.Role != "system" {
			joined = false
		}
	}
	for len(out) > 0 && out[0].Role == "assistant" {
		out = out[1:]
	}
	if n > 0 {
		r.Messages = out
	}
	return n
}
