package compact

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"unicode/utf8"

	"longhaul/proxy/anthropic"
)

// DefaultDedupeMinChars is the smallest tool result folded: below about a
// thousand characters a fold saves little next to the note that replaces it,
// and small results (an "ok", an exit status) repeat by nature.
const DefaultDedupeMinChars = 1_000

// DedupeOptions configures FoldDuplicateResults. The zero value uses the defaults.
type DedupeOptions struct {
	// MinChars is the size, in characters of text (and of an image's or other block's JSON),
	// from which a tool result is folded; 0 = DefaultDedupeMinChars.
	MinChars int
}

// The note an older copy becomes. It names the copy the model reads instead, and is
// recognised by its prefix and suffix so that a folded result is never folded (nor
// taken for a copy) again: that keeps the step idempotent.
const (
	foldNotePrefix = "[same content as the result of tool call "
	foldNoteSuffix = ", below]"
)

func foldNote(id, name string) string {
	if name == "" {
		return foldNotePrefix + id + foldNoteSuffix
	}
	return foldNotePrefix + id + " (" + name + ")" + foldNoteSuffix
}

func isFoldNote(text []byte) bool {
	return bytes.HasPrefix(text, []byte(foldNotePrefix)) && bytes.HasSuffix(text, []byte(foldNoteSuffix))
}

// FoldDuplicateResults replaces each tool_result whose content is identical to that
// of a later tool_result in r by a one-line note naming the later one ("[same content
// as the result of tool call toolu_x (Read), below]"), so an agent that read the same
// file five times carries it once, in its newest copy, where the model reads it last.
//
// Contents are compared by a hash of what the model reads: the texts and images in
// order, however the client encoded them (a string content equals one text block of
// the same text; cache_control does not count), with is_error, which must be equal.
// Only results of at least o.MinChars are folded, and only when the note is shorter.
// The tool_result block stays with its tool_use_id, is_error and cache_control, so
// pairing stays valid; a cache_control inside the content moves to the note. The last
// message is never folded (the model may not have read it yet) but its results are
// the copies others fold into. Deterministic and idempotent. It returns the number of
// results folded.
func FoldDuplicateResults(r *anthropic.Request, o DedupeOptions) int {
	if o.MinChars <= 0 {
		o.MinChars = DefaultDedupeMinChars
	}
	var copies []resultCopy
	newest := map[[sha256.Size]byte]int{} // content → index in copies of its last copy
	h := sha256.New()
	for mi := range r.Messages {
		m := &r.Messages[mi]
		if m.Role != "user" || m.IsString {
			continue
		}
		for bi, b := range m.Blocks {
			if b.Type != "tool_result" {
				continue
			}
			c, ok := readResultCopy(h, b, o.MinChars)
			if !ok {
				continue
			}
			c.msg, c.block = mi, bi
			newest[c.key] = len(copies)
			copies = append(copies, c)
		}
	}
	last := len(r.Messages) - 1
	var names map[string]string // tool_use id → tool name, read on the first fold
	var out [][]anthropic.Block // per message, the blocks as folded; nil = unchanged
	n := 0
	for i, c := range copies {
		t := copies[newest[c.key]]
		if newest[c.key] == i || c.msg == last || t.id == c.id {
			continue
		}
		if names == nil {
			names = toolNames(r)
		}
		m := &r.Messages[c.msg]
		nb, ok := foldResult(m.Blocks[c.block], c.innerCache, foldNote(t.id, names[t.id]))
		if !ok {
			continue
		}
		if out == nil {
			out = make([][]anthropic.Block, len(r.Messages))
		}
		if out[c.msg] == nil {
			out[c.msg] = append([]anthropic.Block(nil), m.Blocks...)
		}
		out[c.msg][c.block] = nb
		n++
	}
	for mi, blocks := range out {
		if blocks != nil {
			r.Messages[mi].SetBlocks(blocks)
		}
	}
	return n
}

// resultCopy is one tool_result worth folding: where it is, what it holds.
type resultCopy struct {
	msg, block int
	id         string
	key        [sha256.Size]byte
	// innerCache is the last cache_control inside the content, which the note keeps.
	innerCache []byte
}

// readResultCopy hashes what the model reads of a tool_result b; ok is false when b is
// smaller than minChars, is a fold note, or cannot be read.
func readResultCopy(h hash.Hash, b anthropic.Block, minChars int) (c resultCopy, ok bool) {
	raw := b.Content()
	// A raw JSON string is never shorter than the characters it decodes to: a free first cut.
	if len(raw) < minChars {
		return c, false
	}
	h.Reset()
	if string(anthropic.MemberValue(b.Raw(), "is_error")) == "true" {
		h.Write([]byte{'E'})
	}
	chars := 0
	switch raw[0] {
	case '"':
		s := decodedText(raw)
		if isFoldNote(s) {
			return c, false
		}
		chars = utf8.RuneCount(s)
		hashPart(h, 't', s)
	case '[':
		inner, err := anthropic.ParseBlocks(raw)
		if err != nil || len(inner) == 0 {
			return c, false
		}
		if len(inner) == 1 && inner[0].Type == "text" && isFoldNote(decodedText(inner[0].RawText())) {
			return c, false
		}
		for _, ib := range inner {
			switch ib.Type {
			case "text":
				s := decodedText(ib.RawText())
				chars += utf8.RuneCount(s)
				hashPart(h, 't', s)
			case "image":
				src := ib.Source()
				chars += len(src)
				hashImageSource(h, src)
			default: // documents, search results, blocks of the future: as they came
				chars += len(ib.Raw())
				hashPart(h, 'o', ib.Raw())
			}
			if cc := anthropic.MemberValue(ib.Raw(), "cache_control"); cc != nil {
				c.innerCache = cc
			}
		}
	default:
		return c, false
	}
	if chars < minChars {
		return c, false
	}
	c.id = b.ToolUseID()
	h.Sum(c.key[:0])
	return c, true
}

// hashPart writes one tagged, length-prefixed part, so that no two different
// sequences of parts hash alike by their concatenation.
func hashPart(h hash.Hash, tag byte, p []byte) {
	var head [9]byte
	head[0] = tag
	binary.BigEndian.PutUint64(head[1:], uint64(len(p)))
	h.Write(head[:])
	h.Write(p)
}

// decodedText is the text of a raw JSON string: the bytes between its quotes when it
// has no escapes (most tool output, and no copy of a large result), else decoded.
func decodedText(raw []byte) []byte {
	if len(raw) < 2 || raw[0] != '"' {
		return nil
	}
	if in := raw[1 : len(raw)-1]; bytes.IndexByte(in, '\\') < 0 {
		return in
	}
	return []byte(anthropic.Unquote(raw))
}

// hashImageSource hashes an image by its source's decoded fields, in a fixed order,
// whatever the order and escapes the client wrote them in.
func hashImageSource(h hash.Hash, src []byte) {
	fields := [...]string{"type", "media_type", "data", "url", "file_id"}
	var vals [len(fields)][]byte
	if anthropic.EachMember(src, func(k, v []byte) error {
		for i, f := range fields {
			if string(k) == f {
				vals[i] = v
			}
		}
		return nil
	}) != nil {
		hashPart(h, 'i', src)
		return
	}
	h.Write([]byte{'i'})
	for _, v := range vals {
		hashPart(h, 'f', decodedText(v))
	}
}

// foldResult is b with its content replaced by note, in the content's own form (a
// string, or one text block carrying the content's last cache_control); ok is false
// when that would not be shorter.
func foldResult(b anthropic.Block, innerCache []byte, note string) (anthropic.Block, bool) {
	content := anthropic.Quote(note)
	if raw := b.Content(); raw[0] == '[' {
		tb := anthropic.TextBlock(note)
		if innerCache != nil {
			var err error
			if tb, err = tb.With("cache_control", innerCache); err != nil {
				return b, false
			}
		}
		content = append(append([]byte{'['}, tb.Raw()...), ']')
	}
	nb, err := b.With("content", content)
	return nb, err == nil && len(nb.Raw()) < len(b.Raw())
}

// toolNames maps every tool_use id of r's assistant messages to its tool's name.
func toolNames(r *anthropic.Request) map[string]string {
	names := map[string]string{}
	for mi := range r.Messages {
		m := &r.Messages[mi]
		if m.Role != "assistant" || m.IsString {
			continue
		}
		for _, b := range m.Blocks {
			if b.Type == "tool_use" {
				names[b.ID()] = b.Name()
			}
		}
	}
	return names
}
