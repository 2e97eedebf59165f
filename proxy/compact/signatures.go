package compact

import (
	"strings"

	"longhaul/proxy/anthropic"
)

// SignatureSource is the signature cache (proxy/sigcache) as the repair step
// reads it. Declared here, where it is used.
type SignatureSource interface {
	// RecoverForTool returns the signature of the thinking block that
	// preceded tool call toolUseID, if it was issued by family.
	RecoverForTool(toolUseID, family string) (string, bool)
	// RecoverForSession returns the latest signature of session, if issued by family.
	RecoverForSession(session, family string) (string, bool)
	// Compatible reports whether signature may be sent to a model of family.
	Compatible(signature, family string) bool
}

// RepairOptions switch the parts of signature repair; each is a setting
// (named below) a user can turn off when an upstream behaves differently.
type RepairOptions struct {
	// Recover restores signatures the client dropped and the thinking block
	// a tool loop's last assistant turn must start with
	// (proxy.experimental.enable_tool_loop_recovery).
	Recover bool
	// CrossModel drops thinking whose signature another model family issued
	// (proxy.experimental.enable_cross_model_checks).
	CrossModel bool
}

// RepairStats counts what RepairSignatures changed.
type RepairStats struct {
	FromTool    int // signatures restored from the tool_use cache
	FromSession int // signatures restored from the session cache
	CrossModel  int // thinking blocks dropped: signed by another model family
	Unsigned    int // thinking blocks dropped: no signature and none to restore
}

// Recovered is the number of signatures restored.
func (s RepairStats) Recovered() int { return s.FromTool + s.FromSession }

// Items is every block touched.
func (s RepairStats) Items() int { return s.Recovered() + s.CrossModel + s.Unsigned }

// RepairSignatures keeps the thinking-signature chain of r valid for a model
// of family before it goes upstream:
//
//   - a thinking block whose signature the client dropped gets it back from
//     the cache — by the tool call that followed it (TOOL cache), or for the
//     last assistant turn by the session (SESSION cache); one that cannot be
//     restored is removed, since the upstream refuses unsigned thinking;
//   - a signed thinking block whose signature another model family issued is
//     removed (a Claude signature sent to Gemini, or back, is a 400);
//   - when thinking is on and the request is inside a tool loop, the loop's
//     assistant turn must start with its thinking block: if the client
//     dropped it, it is rebuilt from the TOOL cache (text elided, as Layer 2
//     does, signature as issued).
//
// Only blocks it changes are rewritten; everything else keeps its bytes.
func RepairSignatures(r *anthropic.Request, src SignatureSource, session, family string, o RepairOptions) RepairStats {
	var st RepairStats
	if src == nil || (!o.Recover && !o.CrossModel) {
		return st
	}
	lastAssistant := -1
	for i := range r.Messages {
		if r.Messages[i].Role == "assistant" {
			lastAssistant = i
		}
	}
	// out is the new message list, made at the first message that changes: most requests
	// change none, and a copy of every message is 112 bytes each.
	var out []anthropic.Message
	changed := false
	for i, m := range r.Messages {
		if m.Role != "assistant" || m.IsString || !hasThinking(m.Blocks) {
			if changed {
				out = append(out, m)
			}
			continue
		}
		var keep []anthropic.Block
		edited := false
		for bi, b := range m.Blocks {
			if b.Type != "thinking" {
				keep = append(keep, b)
				continue
			}
			sig := b.Signature()
			switch {
			case sig == "" && o.Recover:
				got, from := recoverSignature(src, m.Blocks[bi+1:], i == lastAssistant, session, family)
				if got == "" {
					st.Unsigned++
					edited = true
					continue
				}
				nb, err := b.With("signature", anthropic.Quote(got))
				if err != nil {
					keep = append(keep, b)
					continue
				}
				if from == fromTool {
					st.FromTool++
				} else {
					st.FromSession++
				}
				keep = append(keep, nb)
				edited = true
			case sig != "" && o.CrossModel && !src.Compatible(sig, family):
				st.CrossModel++
				edited = true
			default:
				keep = append(keep, b)
			}
		}
		if !edited {
			if changed {
				out = append(out, m)
			}
			continue
		}
		if !changed {
			changed = true
			out = append(make([]anthropic.Message, 0, len(r.Messages)), r.Messages[:i]...)
		}
		if !hasContent(keep) {
			continue // nothing but thinking was there
		}
		m.SetBlocks(keep)
		out = append(out, m)
	}
	if changed {
		for len(out) > 0 && out[0].Role == "assistant" {
			out = out[1:]
		}
		r.Messages = out
	}
	if o.Recover && anthropic.ThinkingEnabled(r.Thinking) {
		if restoreLoopThinking(r, src, family) {
			st.FromTool++
		}
	}
	return st
}

type signatureOrigin int

const (
	fromTool signatureOrigin = iota
	fromSession
)

// recoverSignature looks the signature of a thinking block up: by the first
// tool call after it in the same turn, else (last turn only) by session.
func recoverSignature(src SignatureSource, after []anthropic.Block, lastTurn bool, session, family string) (string, signatureOrigin) {
	for _, b := range after {
		if b.Type == "thinking" {
			break // the next thinking block owns the calls after it
		}
		if b.Type == "tool_use" {
			if sig, ok := src.RecoverForTool(b.ID(), family); ok {
				return sig, fromTool
			}
			break
		}
	}
	if lastTurn && session != "" {
		if sig, ok := src.RecoverForSession(session, family); ok {
			return sig, fromSession
		}
	}
	return "", fromTool
}

// restoreLoopThinking rebuilds the thinking block that must open the
// assistant turn of an unfinished tool loop, when the client dropped it.
func restoreLoopThinking(r *anthropic.Request, src SignatureSource, family string) bool {
	n := len(r.Messages)
	if n < 2 {
		return false
	}
	last := &r.Messages[n-1]
	if last.Role != "user" || !hasToolResult(last) {
		return false
	}
	a := &r.Messages[n-2]
	if a.Role != "assistant" || a.IsString || len(a.Blocks) == 0 {
		return false
	}
	if t := a.Blocks[0].Type; t == "thinking" || t == "redacted_thinking" {
		return false
	}
	for _, b := range a.Blocks {
		if b.Type != "tool_use" {
			continue
		}
		sig, ok := src.RecoverForTool(b.ID(), family)
		if !ok {
			return false
		}
		blk, err := anthropic.ParseBlock([]byte(`{"type":"thinking","thinking":` + string(elidedThinkingJSON) + `,"signature":` + string(anthropic.Quote(sig)) + `}`))
		if err != nil {
			return false
		}
		a.SetBlocks(append([]anthropic.Block{blk}, a.Blocks...))
		return true
	}
	return false
}

func hasThinking(bs []anthropic.Block) bool {
	for _, b := range bs {
		if b.Type == "thinking" {
			return true
		}
	}
	return false
}

// SupportsThinking reports whether model accepts thinking blocks. Only the
// Claude generations before 3.7 are known not to; an unknown model is given
// the benefit of the doubt, since purifying is lossy.
func SupportsThinking(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, p := range []string{"claude-instant", "claude-2", "claude-3-haiku", "claude-3-sonnet", "claude-3-opus", "claude-3-5-", "claude-3.5-"} {
		if strings.HasPrefix(m, p) {
			return false
		}
	}
	return true
}

// LoopMissingThinking reports whether a request whose last two messages are
// prev and last is inside a tool loop whose assistant turn does not start
// with thinking — the case RepairSignatures restores when thinking is on. It
// parses only those two messages.
func LoopMissingThinking(prev, last []byte) bool {
	p, err := anthropic.ParseMessage(prev)
	if err != nil {
		return false
	}
	l, err := anthropic.ParseMessage(last)
	if err != nil || l.Role != "user" || !hasToolResult(&l) || p.Role != "assistant" || p.IsString || len(p.Blocks) == 0 {
		return false
	}
	t := p.Blocks[0].Type
	return t != "thinking" && t != "redacted_thinking"
}
