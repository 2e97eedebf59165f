package compact

import (
	"bytes"
	"crypto/sha256"
	"hash"
	"unicode/utf16"
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
	// Replay, when not nil, makes no new decision: only the folds it lists are made, each
	// into the copy it names while that copy is still a later, identical result. That is
	// for the requests between two fold moments, whose cached prefix holds those notes: a
	// new read of the same file would otherwise move every note to it and rewrite the
	// prefix. nil = fold every duplicate into its newest copy.
	Replay Folds
	// Record, when not nil, receives the folds made (for a later Replay).
	Record Folds
}

// Folds are folds FoldDuplicateResults made: the tool_use_id of each folded result →
// that of the copy its note names.
type Folds map[string]string

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

// isFoldNote reports whether the raw JSON string raw is a fold note (a note is plain
// ASCII without escapes, as foldNote writes it with tool ids and names).
func isFoldNote(raw []byte) bool {
	return len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' &&
		bytes.HasPrefix(raw[1:], []byte(foldNotePrefix)) && bytes.HasSuffix(raw[:len(raw)-1], []byte(foldNoteSuffix))
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
// results folded. o.Replay and o.Record keep a session's folds the same from one request
// to the next (see DedupeOptions).
func FoldDuplicateResults(r *anthropic.Request, o DedupeOptions) int {
	if o.MinChars <= 0 {
		o.MinChars = DefaultDedupeMinChars
	}
	var copies []resultCopy
	newest := map[[sha256.Size]byte]int{} // content → index in copies of its last copy
	ch := newContentHash()
	for mi := range r.Messages {
		m := &r.Messages[mi]
		if m.Role != "user" || m.IsString {
			continue
		}
		for bi, b := range m.Blocks {
			if b.Type != "tool_result" {
				continue
			}
			c, ok := readResultCopy(ch, b, o.MinChars)
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
		if c.msg == last {
			continue
		}
		t, ok := foldInto(copies, i, newest, o.Replay)
		if !ok {
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
		if o.Record != nil {
			o.Record[c.id] = t.id
		}
	}
	for mi, blocks := range out {
		if blocks != nil {
			r.Messages[mi].SetBlocks(blocks)
		}
	}
	return n
}

// foldInto is the copy copies[i] folds into: the newest copy of its content or, when
// replaying, the later copy replay names; ok is false when there is none.
func foldInto(copies []resultCopy, i int, newest map[[sha256.Size]byte]int, replay Folds) (t resultCopy, ok bool) {
	c := copies[i]
	if replay == nil {
		j := newest[c.key]
		return copies[j], j != i && copies[j].id != c.id
	}
	id, ok := replay[c.id]
	if !ok || id == c.id {
		return t, false
	}
	for _, t := range copies[i+1:] {
		if t.id == id && t.key == c.key {
			return t, true
		}
	}
	return t, false
}

// resultCopy is one tool_result worth folding: where it is, what it holds.
type resultCopy struct {
	msg, block int
	id         string
	key        [sha256.Size]byte
	// innerCache is the last cache_control inside the content, which the note keeps.
	innerCache []byte
}

// contentHash hashes what the model reads of a tool_result's content: each part (a
// text, an image source, another block) is hashed on its own and its tag and digest go
// into the whole, so no two different sequences of parts hash alike.
type contentHash struct {
	whole, part hash.Hash
	sum         [sha256.Size]byte
	buf         [1]byte
	text        []byte // writeUnescaped's buffer
}

func newContentHash() *contentHash { return &contentHash{whole: sha256.New(), part: sha256.New()} }

// add hashes one part: write writes its bytes into the part hash.
func (ch *contentHash) add(tag byte, write func(w hash.Hash)) {
	ch.part.Reset()
	write(ch.part)
	ch.buf[0] = tag
	ch.whole.Write(ch.buf[:1])
	ch.whole.Write(ch.part.Sum(ch.sum[:0]))
}

// text hashes the text of the raw JSON string raw and returns its length in characters;
// ok is false when raw is not a string.
func (ch *contentHash) addText(raw []byte) (chars int, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return 0, false
	}
	ch.add('t', func(w hash.Hash) { chars = ch.writeUnescaped(w, raw[1:len(raw)-1]) })
	return chars, true
}

// writeUnescaped writes the text a JSON string's body s stands for, as encoding/json
// decodes it, and returns its length in characters. Tool output is mostly lines between
// "\n" escapes: they are decoded into a buffer reused from result to result, without
// the reflection and the fresh string per result of a decoder, which on every request
// would cost more than the step. Invalid UTF-8 stays as it is (a decoder makes it U+FFFD:
// only two byte-identical copies of such a text are taken for the same).
func (ch *contentHash) writeUnescaped(w hash.Hash, s []byte) (chars int) {
	if bytes.IndexByte(s, '\\') < 0 {
		w.Write(s)
		return charCount(s)
	}
	if cap(ch.text) < len(s) {
		ch.text = make([]byte, 0, len(s)) // what it decodes to is no longer
	}
	out := ch.text[:0]
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 || i == len(s)-1 {
			out = append(out, s...)
			break
		}
		out = append(out, s[:i]...)
		c, n := s[i+1], 2
		switch c {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'u':
			var r rune
			r, n = unicodeEscape(s[i:])
			if n > 1 {
				out = utf8.AppendRune(out, r)
				s = s[i+n:]
				continue
			}
			c = '\\'
			n = 1
		}
		out = append(out, c) // '"', '\\', '/' and anything a decoder would refuse, as written
		s = s[i+n:]
	}
	ch.text = out
	w.Write(out)
	return charCount(out)
}

// charCount is the number of characters of the UTF-8 text p (its bytes that start
// one). utf8.RuneCount copies a non-ASCII slice into a string, which for every large
// result on every request is garbage the proxy does not need.
func charCount(p []byte) int {
	n := len(p)
	for _, c := range p {
		if c&0xC0 == 0x80 {
			n--
		}
	}
	return n
}

// unicodeEscape decodes the \uXXXX escape (or surrogate pair of them) at the start of s,
// and how many bytes it took; a lone surrogate is U+FFFD, as encoding/json makes it. A
// malformed escape is its backslash alone.
func unicodeEscape(s []byte) (rune, int) {
	r, ok := hex4(s)
	if !ok {
		return '\\', 1
	}
	if utf16.IsSurrogate(r) {
		if r2, ok := hex4(s[6:]); ok {
			if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
				return pair, 12
			}
		}
		return utf8.RuneError, 6
	}
	return r, 6
}

// hex4 reads a \\uXXXX escape at the start of s.
func hex4(s []byte) (rune, bool) {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return 0, false
	}
	return anthropic.Hex4(s[2:6])
}

// readResultCopy hashes what the model reads of a tool_result b; ok is false when b is
// smaller than minChars, is a fold note, or cannot be read.
func readResultCopy(ch *contentHash, b anthropic.Block, minChars int) (c resultCopy, ok bool) {
	raw := b.Content()
	// A raw JSON string is never shorter than the characters it decodes to: a free first cut.
	if len(raw) < minChars {
		return c, false
	}
	ch.whole.Reset()
	if string(anthropic.MemberValue(b.Raw(), "is_error")) == "true" {
		ch.buf[0] = 'E'
		ch.whole.Write(ch.buf[:1])
	}
	chars := 0
	switch raw[0] {
	case '"':
		if isFoldNote(raw) {
			return c, false
		}
		chars, ok = ch.addText(raw)
		if !ok {
			return c, false
		}
	case '[':
		inner, err := anthropic.ParseBlocks(raw)
		if err != nil || len(inner) == 0 {
			return c, false
		}
		if len(inner) == 1 && inner[0].Type == "text" && isFoldNote(inner[0].RawText()) {
			return c, false
		}
		for _, ib := range inner {
			switch ib.Type {
			case "text":
				n, ok := ch.addText(ib.RawText())
				if !ok {
					return c, false
				}
				chars += n
			case "image":
				src := ib.Source()
				chars += len(src)
				ch.add('i', func(w hash.Hash) { ch.writeImageSource(w, src) })
			default: // documents, search results, blocks of the future: as they came
				chars += len(ib.Raw())
				ch.add('o', func(w hash.Hash) { w.Write(ib.Raw()) })
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
	ch.whole.Sum(c.key[:0])
	return c, true
}

// writeImageSource writes an image's source by its decoded fields, in a fixed order,
// whatever the order and escapes the client wrote them in.
func (ch *contentHash) writeImageSource(w hash.Hash, src []byte) {
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
		w.Write(src)
		return
	}
	for _, v := range vals {
		if len(v) >= 2 && v[0] == '"' {
			ch.writeUnescaped(w, v[1:len(v)-1])
		}
		ch.buf[0] = 0 // a field's end: no decoded field holds a raw NUL
		w.Write(ch.buf[:1])
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
