package compact

import (
	"strings"

	"longhaul/proxy/anthropic"
)

// Layer-1 default: the tool rounds kept (compaction.keep_tool_rounds).
const DefaultKeepToolRounds = 5

// round is a tool round: messages[start] is an assistant message with
// tool_use blocks, messages[start+1:end] the user messages carrying results.
type round struct {
	start, end int
	ids        map[string]bool // tool_use ids of the assistant message
	firstID    string
	complete   bool // every tool_use answered inside the round and vice versa
}

// findRounds lists the tool rounds of msgs in order.
func findRounds(msgs []anthropic.Message) []round {
	var out []round
	for i := 0; i < len(msgs); i++ {
		m := &msgs[i]
		if m.Role != "assistant" || m.IsString {
			continue
		}
		rd := round{start: i, ids: map[string]bool{}}
		for _, b := range m.Blocks {
			if b.Type == "tool_use" {
				id := b.ID()
				if rd.firstID == "" {
					rd.firstID = id
				}
				rd.ids[id] = true
			}
		}
		if len(rd.ids) == 0 {
			continue
		}
		answered := map[string]bool{}
		foreign := false
		j := i + 1
		for ; j < len(msgs) && msgs[j].Role == "user" && hasToolResult(&msgs[j]); j++ {
			for _, b := range msgs[j].Blocks {
				if b.Type == "tool_result" {
					id := b.ToolUseID()
					if rd.ids[id] {
						answered[id] = true
					} else {
						foreign = true
					}
				}
			}
		}
		rd.end = j
		rd.complete = !foreign && len(answered) == len(rd.ids)
		out = append(out, rd)
		i = j - 1
	}
	return out
}

func hasToolResult(m *anthropic.Message) bool {
	for _, b := range m.Blocks {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

// Layer1 trims old tool rounds. Cache-stable: it remembers per session where
// it cut (the first tool_use id kept) and keeps cutting there, so the
// forwarded prefix stays byte-identical request after request; only when the
// trimmed request is still over the threshold does the boundary move, and
// then in one step to the last KeepRounds rounds, not one round at a time,
// so the prompt cache breaks as seldom as possible.
type Layer1 struct {
	KeepRounds int // rounds kept; 0 = DefaultKeepToolRounds
	boundary   *memo[string]
}

// NewLayer1 returns a Layer1 remembering boundaries for up to sessions sessions.
func NewLayer1(keepRounds, sessions int) *Layer1 {
	if keepRounds <= 0 {
		keepRounds = DefaultKeepToolRounds
	}
	return &Layer1{KeepRounds: keepRounds, boundary: newMemo[string](sessions)}
}

// Apply trims r in place and returns the number of rounds removed. over
// reports whether a request is still above the Layer-1 threshold; nil means
// always (trim to KeepRounds). session "" disables the remembered boundary.
// A boundary that leaves the request over the threshold moves at once; see
// ApplyInSteps for the cache-friendlier rule the pipeline uses.
func (l *Layer1) Apply(r *anthropic.Request, session string, over func(*anthropic.Request) bool) int {
	return l.ApplyInSteps(r, session, over, nil)
}

// ApplyInSteps is Apply with hysteresis: a remembered boundary that leaves
// the request over the Layer-1 threshold moves only once KeepRounds more
// rounds have piled up behind it, or at once when urgent (the request is
// over the next threshold, where a costlier, cache-breaking layer would run).
// Under steady pressure the forwarded prefix so changes every KeepRounds
// requests, not every request. urgent nil means never urgent.
func (l *Layer1) ApplyInSteps(r *anthropic.Request, session string, over, urgent func(*anthropic.Request) bool) int {
	p := l.plan(r, session, over, urgent)
	return l.commit(r, session, p, p.move)
}

// l1Plan is what Layer 1 would do to a request, before anything is committed: the messages
// with the remembered boundary held, and with it moved.
type l1Plan struct {
	rounds      []round
	held, moved []anthropic.Message
	heldCut     int
	cut         int  // the cut a move makes
	move        bool // the boundary rule asks for a move
}

func (l *Layer1) plan(r *anthropic.Request, session string, over, urgent func(*anthropic.Request) bool) l1Plan {
	rounds := findRounds(r.Messages)
	maxCut := len(rounds) - l.KeepRounds
	p := l1Plan{rounds: rounds, held: r.Messages, moved: r.Messages}
	if maxCut <= 0 {
		return p
	}
	if session != "" {
		if id, ok := l.boundary.get(session); ok {
			for i, rd := range rounds[:maxCut+1] {
				if rd.firstID == id {
					p.heldCut = i
					break
				}
			}
		}
	}
	if p.heldCut > 0 {
		p.held = removeRounds(r.Messages, rounds[:p.heldCut])
	}
	p.moved, p.cut = p.held, p.heldCut
	held := *r
	held.Messages = p.held
	p.move = p.heldCut == 0 || over == nil || over(&held)
	if p.move && p.heldCut > 0 && urgent != nil && maxCut-p.heldCut < l.KeepRounds && !urgent(&held) {
		p.move = false // over, but not by enough rounds to be worth a cache break yet
	}
	if p.move {
		p.cut = maxCut
		p.moved = removeRounds(r.Messages, rounds[:maxCut])
	}
	return p
}

// commit applies a plan to r, moved or held, remembers the boundary and returns the rounds
// removed.
func (l *Layer1) commit(r *anthropic.Request, session string, p l1Plan, move bool) int {
	cut := p.heldCut
	r.Messages = p.held
	if move {
		cut, r.Messages = p.cut, p.moved
	}
	if len(p.rounds) == 0 || len(p.rounds) <= l.KeepRounds {
		return 0
	}
	if session != "" && (cut > 0 || move) {
		l.boundary.put(session, p.rounds[cut].firstID)
	}
	return removedCount(p.rounds[:cut])
}

func removedCount(rs []round) int {
	n := 0
	for _, rd := range rs {
		if rd.complete {
			n++
		}
	}
	return n
}

// removeRounds drops the complete rounds among rs (incomplete ones are left
// alone: removing them could orphan a tool_use or tool_result). User text
// that shared a message with a removed tool_result is kept: it joins the
// user message before the removed round, so turns still alternate.
func removeRounds(msgs []anthropic.Message, rs []round) []anthropic.Message {
	drop := map[int]bool{}
	strip := map[int]map[string]bool{}
	for _, rd := range rs {
		if !rd.complete {
			continue
		}
		drop[rd.start] = true
		for j := rd.start + 1; j < rd.end; j++ {
			strip[j] = rd.ids
		}
	}
	out := make([]anthropic.Message, 0, len(msgs))
	joined := false
	for i, m := range msgs {
		if drop[i] {
			joined = true
			continue
		}
		if ids := strip[i]; ids != nil {
			var keep []anthropic.Block
			for _, b := range m.Blocks {
				if b.Type == "tool_result" && ids[b.ToolUseID()] {
					continue
				}
				keep = append(keep, b)
			}
			if !hasContent(keep) {
				continue
			}
			m.SetBlocks(keep)
		}
		out = appendTurn(out, m, joined)
		if m.Role != "system" {
			joined = false
		}
	}
	// The first message must stay a user message: drop any leading
	// assistant turn a removal exposed.
	for len(out) > 0 && out[0].Role == "assistant" {
		out = out[1:]
	}
	return out
}

// hasContent reports whether blocks hold something besides blank text.
func hasContent(bs []anthropic.Block) bool {
	for _, b := range bs {
		if b.Type != "text" || strings.TrimSpace(b.Text()) != "" {
			return true
		}
	}
	return false
}
