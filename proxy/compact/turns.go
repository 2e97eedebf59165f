package compact

import "longhaul/proxy/anthropic"

// appendTurn appends m to msgs. When a step removed messages just before m
// (joined) and the last user or assistant message in msgs has m's role, m is
// merged into that message instead: the upstream wants user and assistant
// turns to alternate (system messages aside), and a removal must not leave
// two turns of one role side by side, nor lose what m says. System messages
// in between stay where they are, after the merged turn.
func appendTurn(msgs []anthropic.Message, m anthropic.Message, joined bool) []anthropic.Message {
	if !joined || m.Role == "system" {
		return append(msgs, m)
	}
	k := len(msgs) - 1
	for k >= 0 && msgs[k].Role == "system" {
		k--
	}
	if k < 0 || msgs[k].Role != m.Role || !m.HasContent() || !msgs[k].HasContent() {
		return append(msgs, m)
	}
	// Blocks, not one joined string: each part keeps its own bytes (and any
	// cache_control it carries).
	p := &msgs[k]
	if bs := append(p.AsBlocks(), m.AsBlocks()...); len(bs) > 0 {
		p.SetBlocks(bs)
	}
	return msgs
}
