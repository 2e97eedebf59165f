package compact

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"longhaul/proxy/anthropic"
)

// Edit is one change a step made to the request: the ledger the monitor draws its diff from.
//
// Edits are found by comparing the messages before and after each step, one step at a time,
// so each is exactly what that step changed and nothing has to be inferred afterwards from the
// shape of the final body. The layers stay unaware of the ledger: a new step is covered the day
// it is added, and a ledger cannot drift from what a layer really does.
type Edit struct {
	Kind EditKind
	// Message is the message's index in the request as received (-1 for one the step built,
	// such as a summary); Through, for a span of removed messages, the last index, inclusive.
	Message int
	Through int
	// Block is the block's index in the message as the step found it (-1: the whole message).
	Block int
	// Count is how many messages or blocks the edit stands for: the span's length, or for
	// EditMore the edits folded into it.
	Count int
	// TokensBefore and TokensAfter estimate (uncalibrated) what the edited part held.
	TokensBefore int
	TokensAfter  int
	// Before and After are short previews of the text on each side.
	Before string
	After  string
	// Note names what the edit is about: a tool_use id, a block type.
	Note string
}

// EditKind says what kind of change an Edit is.
type EditKind string

const (
	EditRoundsRemoved     EditKind = "rounds-removed"      // Layer 1: old tool rounds gone
	EditResultsRemoved    EditKind = "results-removed"     // Layer 1: tool results of a removed round left a message
	EditThinkingElided    EditKind = "thinking-elided"     // Layer 2: thinking text → "...", signature kept
	EditSummarised        EditKind = "messages-summarised" // Layer 3: messages replaced by the summary
	EditSummaryAdded      EditKind = "summary-added"       // Layer 3: the summary and its acknowledgement
	EditResultShortened   EditKind = "result-shortened"    // tool-result compressor
	EditImageReplaced     EditKind = "image-replaced"      // tool-result compressor: an image became a note
	EditResultFolded      EditKind = "result-folded"       // dedupe: a result identical to a later one became a note naming it
	EditSignatureRestored EditKind = "signature-restored"  // signature repair, from the cache
	EditThinkingRestored  EditKind = "thinking-restored"   // signature repair: a thinking block put back
	EditThinkingDropped   EditKind = "thinking-dropped"    // signature repair: signed by another model family
	EditThinkingRemoved   EditKind = "thinking-removed"    // purify: the model has no thinking
	EditTurnsJoined       EditKind = "turns-joined"        // a message emptied by a step, merged into its neighbour
	EditMessageRestored   EditKind = "message-restored"    // a message an earlier step removed, back as received
	EditBlockChanged      EditKind = "block-changed"       // any other change to a block
	EditBlockRemoved      EditKind = "block-removed"
	EditBlockAdded        EditKind = "block-added"
	EditMessageRemoved    EditKind = "message-removed"
	EditMessageAdded      EditKind = "message-added"
	EditMore              EditKind = "more" // the edits past MaxEditsPerStep, counted
	// Edits the proxy records around the engine.
	EditModelRenamed EditKind = "model-renamed" // proxy.model_map
	EditTranslated   EditKind = "translated"    // sent in the account's protocol
)

// MaxEditsPerStep bounds the ledger of one step: a Layer-2 pass over a long session elides
// hundreds of blocks, and the record of each request should stay small. The rest is one
// EditMore entry with their count and tokens.
const MaxEditsPerStep = 40

const previewRunes = 120

// snapshot is the message list as a step found it: copies of the Message values, whose
// Blocks headers the steps never write through (they build new slices and SetBlocks them).
type snapshot []anthropic.Message

func takeSnapshot(dst snapshot, msgs []anthropic.Message) snapshot {
	return append(dst[:0], msgs...)
}

// diffStep lists what one step of layer changed between before and after. beforeProf and
// afterProf, when they profile exactly those message lists, give a whole message's tokens
// without counting its text again (a Layer-1 move removes most of the request); nil = count.
func diffStep(layer Layer, before snapshot, after []anthropic.Message, beforeProf, afterProf *Profile) []Edit {
	d := stepDiff{layer: layer}
	tokensBefore := messageTokens(beforeProf, before)
	tokensAfter := messageTokens(afterProf, after)
	at := make(map[int]int, len(after)) // received index → position in after
	for j := range after {
		if i := after[j].Index(); i >= 0 {
			at[i] = j
		}
	}
	seen := make(map[int]bool, len(before))
	spanStart, spanEnd := -1, -1
	var spanTokens int
	var spanPreview string
	flush := func() {
		if spanStart < 0 {
			return
		}
		d.add(Edit{Kind: d.removedKind(), Message: spanStart, Through: spanEnd, Block: -1,
			Count: spanEnd - spanStart + 1, TokensBefore: spanTokens, Before: spanPreview})
		spanStart, spanTokens = -1, 0
	}
	for k := range before {
		m := &before[k]
		i := m.Index()
		if i < 0 {
			continue // built by an earlier step (a summary): Layer 3 alone replaces it
		}
		seen[i] = true
		j, ok := at[i]
		if !ok {
			if d.layer != Layer1Trim && d.layer != Layer3Summary {
				flush()
				d.add(Edit{Kind: EditTurnsJoined, Message: i, Through: i, Block: -1, Count: 1,
					TokensBefore: tokensBefore(k), Before: messagePreview(m)})
				continue
			}
			if spanStart >= 0 && i != spanEnd+1 {
				flush()
			}
			if spanStart < 0 {
				spanStart, spanPreview = i, messagePreview(m)
			}
			spanEnd = i
			spanTokens += tokensBefore(k)
			continue
		}
		flush()
		d.blocks(i, m, &after[j])
	}
	flush()
	for j := range after {
		m := &after[j]
		switch i := m.Index(); {
		case i < 0:
			if !containsBuilt(before, m) {
				d.add(Edit{Kind: d.addedKind(), Message: -1, Through: -1, Block: -1, Count: 1,
					TokensAfter: tokensAfter(j), After: messagePreview(m)})
			}
		case !seen[i]:
			d.add(Edit{Kind: EditMessageRestored, Message: i, Through: i, Block: -1, Count: 1,
				TokensAfter: tokensAfter(j), After: messagePreview(m)})
		}
	}
	return d.done()
}

// messageTokens returns the tokens of the message at a position of msgs: from p's running
// estimate when p profiles msgs, else counted from its text.
func messageTokens(p *Profile, msgs []anthropic.Message) func(pos int) int {
	if p == nil || len(p.raws) != len(msgs) {
		return func(pos int) int { return tokensOf(msgs[pos].Raw()) }
	}
	return func(pos int) int {
		prev := 0.0
		if pos > 0 {
			prev = p.raws[pos-1]
		}
		return int(p.raws[pos] - prev + 0.5)
	}
}

// containsBuilt reports whether m, a message built by a step, was already in before (an
// earlier step's summary kept as it was).
func containsBuilt(before snapshot, m *anthropic.Message) bool {
	raw := m.Raw()
	for k := range before {
		if before[k].Index() < 0 && bytes.Equal(before[k].Raw(), raw) {
			return true
		}
	}
	return false
}

type stepDiff struct {
	layer Layer
	edits []Edit
	more  Edit
}

func (d *stepDiff) add(e Edit) {
	if len(d.edits) < MaxEditsPerStep {
		d.edits = append(d.edits, e)
		return
	}
	d.more.Count += max(e.Count, 1)
	d.more.TokensBefore += e.TokensBefore
	d.more.TokensAfter += e.TokensAfter
}

func (d *stepDiff) done() []Edit {
	if d.more.Count > 0 {
		d.more.Kind, d.more.Message, d.more.Through, d.more.Block = EditMore, -1, -1, -1
		d.edits = append(d.edits, d.more)
	}
	return d.edits
}

func (d *stepDiff) removedKind() EditKind {
	switch d.layer {
	case Layer1Trim:
		return EditRoundsRemoved
	case Layer3Summary:
		return EditSummarised
	}
	return EditMessageRemoved
}

func (d *stepDiff) addedKind() EditKind {
	if d.layer == Layer3Summary {
		return EditSummaryAdded
	}
	return EditMessageAdded
}

// blocks compares one message as the step found it (b) and left it (a). Blocks the step kept
// are the same bytes (the steps copy a kept block's raw slice), so identity pairs them; the
// changed ones pair in order by type, and what is left was removed or added.
func (d *stepDiff) blocks(msg int, b, a *anthropic.Message) {
	if b.IsString && a.IsString {
		if !sameBytes(b.RawText(), a.RawText()) {
			d.add(Edit{Kind: EditBlockChanged, Message: msg, Through: msg, Block: -1, Count: 1,
				TokensBefore: tokensOf(b.RawText()), TokensAfter: tokensOf(a.RawText()),
				Before: preview(b.Text()), After: preview(a.Text())})
		}
		return
	}
	bb, ab := b.AsBlocks(), a.AsBlocks()
	if b.IsString || a.IsString { // a string content turned into blocks (a join) or back
		if !bytes.Equal(b.Raw(), a.Raw()) {
			d.add(Edit{Kind: EditBlockChanged, Message: msg, Through: msg, Block: -1, Count: 1,
				TokensBefore: tokensOf(b.Raw()), TokensAfter: tokensOf(a.Raw()),
				Before: messagePreview(b), After: messagePreview(a)})
		}
		return
	}
	kept := make([]bool, len(ab))
	var gone []int
	for bi := range bb {
		found := false
		for ai := range ab {
			if !kept[ai] && sameBytes(bb[bi].Raw(), ab[ai].Raw()) {
				kept[ai], found = true, true
				break
			}
		}
		if !found {
			gone = append(gone, bi)
		}
	}
	var fresh []int
	for ai := range ab {
		if !kept[ai] {
			fresh = append(fresh, ai)
		}
	}
	for _, bi := range gone {
		old := bb[bi]
		pair := -1
		for k, ai := range fresh {
			if ai >= 0 && ab[ai].Type == old.Type && old.ToolUseID() == ab[ai].ToolUseID() {
				pair, fresh[k] = ai, -1
				break
			}
		}
		if pair < 0 {
			d.add(Edit{Kind: d.blockRemovedKind(old), Message: msg, Through: msg, Block: bi, Count: 1,
				TokensBefore: tokensOf(old.Raw()), Before: blockPreview(old), Note: blockNote(old)})
			continue
		}
		nb := ab[pair]
		d.add(Edit{Kind: d.blockChangedKind(old, nb), Message: msg, Through: msg, Block: bi, Count: 1,
			TokensBefore: tokensOf(old.Raw()), TokensAfter: tokensOf(nb.Raw()),
			Before: blockPreview(old), After: blockPreview(nb), Note: blockNote(old)})
	}
	for _, ai := range fresh {
		if ai < 0 {
			continue
		}
		nb := ab[ai]
		kind := EditBlockAdded
		if d.layer == LayerSignatures && isThinking(nb) {
			kind = EditThinkingRestored
		}
		d.add(Edit{Kind: kind, Message: msg, Through: msg, Block: ai, Count: 1,
			TokensAfter: tokensOf(nb.Raw()), After: blockPreview(nb), Note: blockNote(nb)})
	}
}

func (d *stepDiff) blockRemovedKind(b anthropic.Block) EditKind {
	switch {
	case d.layer == LayerSignatures && isThinking(b):
		return EditThinkingDropped
	case d.layer == LayerPurify && isThinking(b):
		return EditThinkingRemoved
	case d.layer == Layer1Trim && b.Type == "tool_result":
		return EditResultsRemoved
	}
	return EditBlockRemoved
}

func (d *stepDiff) blockChangedKind(old, nb anthropic.Block) EditKind {
	switch {
	case d.layer == Layer2Thinking && old.Type == "thinking":
		return EditThinkingElided
	case d.layer == LayerSignatures && old.Type == "thinking" && old.Signature() != nb.Signature():
		return EditSignatureRestored
	case d.layer == LayerToolResults && old.Type == "tool_result":
		if imageCount(nb.Content()) < imageCount(old.Content()) {
			return EditImageReplaced
		}
		return EditResultShortened
	case d.layer == LayerDedupe && old.Type == "tool_result":
		return EditResultFolded
	}
	return EditBlockChanged
}

func isThinking(b anthropic.Block) bool { return b.Type == "thinking" || b.Type == "redacted_thinking" }

func imageCount(content []byte) int { return bytes.Count(content, []byte(`"image"`)) }

// sameBytes reports whether a and b are the same bytes in memory: how a step's untouched
// block is told from a rewritten one without comparing contents.
func sameBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

func tokensOf(raw []byte) int { return int(textTokens(raw) + 0.5) }

func blockNote(b anthropic.Block) string {
	switch b.Type {
	case "tool_result":
		return b.ToolUseID()
	case "tool_use":
		return b.Name() + " " + b.ID()
	}
	return b.Type
}

func blockPreview(b anthropic.Block) string {
	switch b.Type {
	case "text":
		return preview(b.Text())
	case "thinking":
		return preview(b.Thinking())
	case "redacted_thinking":
		return "[redacted thinking]"
	case "tool_use":
		return preview("[tool_use " + b.Name() + "] " + string(b.Input()))
	case "tool_result":
		blocks, isString, err := b.ContentBlocks()
		if err != nil {
			return preview(string(b.Content()))
		}
		if isString {
			return preview(anthropic.Unquote(b.Content()))
		}
		var parts []string
		for _, c := range blocks {
			if c.Type == "text" {
				parts = append(parts, c.Text())
			} else {
				parts = append(parts, "["+c.Type+"]")
			}
		}
		return preview(strings.Join(parts, " "))
	}
	return "[" + b.Type + "]"
}

func messagePreview(m *anthropic.Message) string {
	if m.IsString {
		return preview(m.Text())
	}
	var parts []string
	for _, b := range m.Blocks {
		parts = append(parts, blockPreview(b))
		if len(parts) == 3 {
			break
		}
	}
	return preview(m.Role + ": " + strings.Join(parts, " "))
}

// preview cuts s to previewRunes runes, on a rune boundary.
func preview(s string) string {
	if utf8.RuneCountInString(s) <= previewRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == previewRunes {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
