package compact

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"longhaul/proxy/anthropic"
)

// Tool-result compressor defaults (compaction.max_tool_result_chars): about
// 50,000 tokens per result, a quarter of a 200k window, past which one
// observation crowds out the conversation. The content rules (HTML,
// snapshots) apply from a tenth of that, where decoding starts to pay.
const (
	DefaultMaxToolResultChars = 200_000
	DefaultLargeChars         = 20_000 // content rules (HTML, snapshots) apply above this
	DefaultSnapshotHead       = 8_000
	DefaultSnapshotTail       = 4_000
	truncReserve              = 64 // room for the truncation note, so a second pass is a no-op
	snapshotReserve           = 96 // room for the snapshot note
	minNoticePreview          = 200
)

// CompressorOptions configures a Compressor. The zero value uses the defaults.
type CompressorOptions struct {
	MaxChars     int // hard cap per tool result, in characters; 0 = DefaultMaxToolResultChars
	LargeChars   int // size above which HTML and snapshot rules apply; 0 = DefaultLargeChars
	SnapshotHead int // characters kept from the start of a snapshot; 0 = DefaultSnapshotHead
	SnapshotTail int // characters kept from its end; 0 = DefaultSnapshotTail
}

// Compressor shrinks oversized tool results. It is deterministic — the same
// request always compresses to the same bytes, which prompt caching needs —
// and idempotent: its output compresses to itself. It never splits a UTF-8
// sequence. Lossy content rules that remove what the model may not have read
// yet (images, saved-output previews) skip the last message.
type Compressor struct{ o CompressorOptions }

// NewCompressor returns a Compressor.
func NewCompressor(o CompressorOptions) *Compressor {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxChars, DefaultMaxToolResultChars)
	def(&o.LargeChars, DefaultLargeChars)
	def(&o.SnapshotHead, DefaultSnapshotHead)
	def(&o.SnapshotTail, DefaultSnapshotTail)
	// Limits too small to hold their own notes would make the output grow, or
	// shrink again on the next request (no longer a fixed point, which breaks
	// prompt caching): raise them to what the notes need.
	o.MaxChars = max(o.MaxChars, 2*truncReserve)
	o.LargeChars = max(o.LargeChars, 2*truncReserve)
	if room := o.LargeChars - snapshotReserve; o.SnapshotHead+o.SnapshotTail > room {
		o.SnapshotHead = room * o.SnapshotHead / (o.SnapshotHead + o.SnapshotTail)
		o.SnapshotTail = room - o.SnapshotHead
	}
	return &Compressor{o: o}
}

// CompressStats counts what the compressor changed.
type CompressStats struct {
	Truncated, Images, SavedNotices, Snapshots, HTML int
}

// Items is the number of tool results touched in any way.
func (s CompressStats) Items() int {
	return s.Truncated + s.Images + s.SavedNotices + s.Snapshots + s.HTML
}

// Apply compresses the tool results of r in place.
func (c *Compressor) Apply(r *anthropic.Request) CompressStats {
	var st CompressStats
	for mi := range r.Messages {
		m := &r.Messages[mi]
		if m.Role != "user" || m.IsString {
			continue
		}
		last := mi == len(r.Messages)-1
		var out []anthropic.Block
		for bi, b := range m.Blocks {
			if b.Type != "tool_result" {
				continue
			}
			nb, ok := c.toolResult(b, last, &st)
			if !ok {
				continue
			}
			if out == nil {
				out = append([]anthropic.Block(nil), m.Blocks...)
			}
			out[bi] = nb
		}
		if out != nil {
			m.SetBlocks(out)
		}
	}
	return st
}

var (
	imageNote  = []byte(`"image"`)
	savedLower = []byte("saved to")
	savedUpper = []byte("Saved to")
)

// toolResult returns the compressed block and whether it changed.
func (c *Compressor) toolResult(b anthropic.Block, last bool, st *CompressStats) (anthropic.Block, bool) {
	raw := b.Content()
	if len(raw) == 0 {
		return b, false
	}
	// Cheap raw-byte screen: most tool results are small and plain, and
	// decoding every one on every request would cost more than the rest of
	// the pipeline.
	big := len(raw) > c.o.LargeChars || len(raw) > c.o.MaxChars
	maybeSaved := !last && (bytes.Contains(raw, savedLower) || bytes.Contains(raw, savedUpper))
	maybeImage := !last && raw[0] == '[' && bytes.Contains(raw, imageNote)
	if !big && !maybeSaved && !maybeImage {
		return b, false
	}
	if raw[0] == '"' {
		s, ok := c.text(anthropic.Unquote(raw), c.o.MaxChars, last, st)
		if !ok {
			return b, false
		}
		nb, err := b.With("content", anthropic.Quote(s))
		return nb, err == nil
	}
	inner, err := anthropic.ParseBlocks(raw)
	if err != nil {
		return b, false
	}
	changed := false
	budget := c.o.MaxChars
	for i, ib := range inner {
		switch ib.Type {
		case "image":
			if last {
				break
			}
			if nb, ok := imageReplacement(ib); ok {
				inner[i] = nb
				st.Images++
				changed = true
			}
		case "text":
			if ns, ok := c.text(ib.Text(), max(budget, truncReserve*2), last, st); ok {
				if nb, err := ib.With("text", anthropic.Quote(ns)); err == nil {
					inner[i], changed = nb, true
				}
			}
		}
		// Every text as it leaves, an image's note included, uses up the
		// budget: the next request sees the note as text, and must cut at
		// the same place.
		if inner[i].Type == "text" {
			budget -= utf8.RuneCountInString(inner[i].Text())
		}
	}
	if !changed {
		return b, false
	}
	nb, err := b.WithContentBlocks(inner)
	return nb, err == nil
}

// imageReplacement is a text block that describes a base64 image, so the
// model knows one was there. It keeps the image's cache_control breakpoint,
// and is used only when smaller than the image (a tiny image costs less than
// its description).
func imageReplacement(b anthropic.Block) (anthropic.Block, bool) {
	src := b.Source()
	if src == nil {
		return b, false
	}
	var typ, media, data []byte
	if anthropic.EachMember(src, func(k, v []byte) error {
		switch string(k) {
		case "type":
			typ = v
		case "media_type":
			media = v
		case "data":
			data = v
		}
		return nil
	}) != nil || anthropic.Unquote(typ) != "base64" {
		return b, false // url and file images cost nothing to carry
	}
	kb := (len(data)*3/4 + 1023) / 1024
	nb := anthropic.TextBlock(fmt.Sprintf("[image removed by Longhaul to save context: %s, %d KB]", anthropic.Unquote(media), kb))
	if cc := anthropic.MemberValue(b.Raw(), "cache_control"); cc != nil {
		var err error
		if nb, err = nb.With("cache_control", cc); err != nil {
			return b, false
		}
	}
	return nb, len(nb.Raw()) < len(b.Raw())
}

// text applies the content rules then the hard cap to one tool-result text.
func (c *Compressor) text(s string, budget int, last bool, st *CompressStats) (string, bool) {
	orig := s
	if !last {
		if ns, ok := reduceSavedNotice(s); ok {
			s = ns
			st.SavedNotices++
		}
	}
	if len(s) > c.o.LargeChars { // bytes ≥ characters: a cheap first cut
		if looksHTML(s) {
			// A page of nothing but styles and scripts keeps them: a blank
			// text is not a valid block, and the cap below still applies.
			if ns := stripHTML(s); ns != s && strings.TrimSpace(ns) != "" {
				s = ns
				st.HTML++
			}
		}
		if looksSnapshot(s) {
			if n := utf8.RuneCountInString(s); n > c.o.LargeChars {
				s = headTail(s, n, c.o.SnapshotHead, c.o.SnapshotTail)
				st.Snapshots++
			}
		}
	}
	if len(s) > budget {
		if n := utf8.RuneCountInString(s); n > budget {
			kept := prefixRunes(s, budget-truncReserve)
			s = kept + fmt.Sprintf("\n...[truncated %d chars]", n-utf8.RuneCountInString(kept))
			st.Truncated++
		}
	}
	return s, s != orig
}

// prefixRunes returns at most the first n characters of s, cut where a
// reader sees a character boundary: never inside a UTF-8 sequence, nor
// between an emoji and its modifiers, joiners or flag partner, nor before a
// combining mark (see atBoundary).
func prefixRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	for i < len(s) && i > 0 && !atBoundary(s, i) {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[:i]
}

// suffixRunes returns at most the last n characters of s, cut as prefixRunes cuts.
func suffixRunes(s string, n int) string {
	i := len(s)
	for k := 0; k < n && i > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	for i > 0 && i < len(s) && !atBoundary(s, i) {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[i:]
}

// atBoundary reports whether s[:i] and s[i:] split s between two
// user-perceived characters: i starts a rune that does not extend the one
// before it (combining mark, variation selector, skin-tone modifier, keycap,
// emoji tag, or anything after a zero-width joiner), and does not split a
// flag's pair of regional indicators. A cheap subset of Unicode's grapheme
// rules: enough for the CJK, accented and emoji text tools print.
func atBoundary(s string, i int) bool {
	if !utf8.RuneStart(s[i]) {
		return false
	}
	next, _ := utf8.DecodeRuneInString(s[i:])
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	switch {
	case prev == zwj, extendsCharacter(next):
		return false
	case isRegionalIndicator(prev) && isRegionalIndicator(next):
		n := 0
		for j := i; j > 0; {
			r, size := utf8.DecodeLastRuneInString(s[:j])
			if !isRegionalIndicator(r) {
				break
			}
			n++
			j -= size
		}
		return n%2 == 0
	}
	return true
}

const zwj = 0x200D

func extendsCharacter(r rune) bool {
	switch {
	case r >= 0x0300 && r <= 0x036F, // combining diacritical marks
		r == zwj,
		r >= 0xFE00 && r <= 0xFE0F,   // variation selectors (emoji presentation)
		r >= 0x1F3FB && r <= 0x1F3FF, // skin-tone modifiers
		r == 0x20E3,                  // combining enclosing keycap
		r >= 0xE0020 && r <= 0xE007F: // emoji tag sequences (subdivision flags)
		return true
	}
	return false
}

func isRegionalIndicator(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

func headTail(s string, n, head, tail int) string {
	h, t := prefixRunes(s, head), suffixRunes(s, tail)
	omitted := n - utf8.RuneCountInString(h) - utf8.RuneCountInString(t)
	return h + fmt.Sprintf("\n...[snapshot truncated by Longhaul: %d chars omitted]...\n", omitted) + t
}

// savedLine finds Claude Code's "<persisted-output> Output too large (…).
// Full output saved to: PATH" notice and similar tool messages.
var savedLine = regexp.MustCompile(`(?i)[^\n]*(?:output|result|content)[^\n]{0,120}saved to:?\s*\S+[^\n]*`)

// reduceSavedNotice keeps the facts of a saved-to-file notice (the line with
// the path and size) and drops the preview under it.
func reduceSavedNotice(s string) (string, bool) {
	loc := savedLine.FindStringIndex(s)
	if loc == nil {
		return "", false
	}
	rest := s[loc[1]:]
	closing := ""
	if t := strings.TrimRight(rest, " \n"); strings.HasSuffix(t, "</persisted-output>") {
		closing = "\n</persisted-output>"
		rest = strings.TrimSuffix(t, "</persisted-output>")
	}
	n := utf8.RuneCountInString(strings.TrimSpace(rest))
	if n < minNoticePreview {
		return "", false
	}
	return s[:loc[1]] + fmt.Sprintf("\n[tool_result omitted by Longhaul: %d chars of preview; the full output is in the file above]", n) + closing, true
}

func looksHTML(s string) bool {
	head := strings.ToLower(s[:min(len(s), 2048)])
	return strings.Contains(head, "<html") || strings.Contains(head, "<!doctype html") ||
		strings.Contains(head, "<head") || strings.Contains(head, "<body") ||
		(strings.Count(head, "<div") >= 3)
}

var (
	htmlStyle  = regexp.MustCompile(`(?is)<style\b[^>]*>.*?</style\s*>`)
	htmlScript = regexp.MustCompile(`(?is)<script\b[^>]*>.*?</script\s*>`)
	base64Frag = regexp.MustCompile(`data:[a-zA-Z0-9/+.\-]*;base64,[A-Za-z0-9+/=]{64,}`)
)

// stripHTML removes what a model never needs from a page: styles, scripts and
// inline base64 payloads (noted, so the model knows something was there).
//
// It repeats until nothing is left to remove: a removal can join the pieces
// of a new match ("<sty<style>…</style>le>"), and the result must be a fixed
// point, or the next request would strip it again. Every round shortens s.
func stripHTML(s string) string {
	for {
		ns := htmlStyle.ReplaceAllString(s, "")
		ns = htmlScript.ReplaceAllString(ns, "")
		ns = base64Frag.ReplaceAllStringFunc(ns, func(m string) string {
			i := strings.Index(m, ";base64,")
			return fmt.Sprintf("%s[base64 omitted: %d chars]", m[:i+len(";base64,")], len(m)-i-len(";base64,"))
		})
		if ns == s {
			return s
		}
		s = ns
	}
}

// looksSnapshot recognises browser/accessibility snapshots (Playwright MCP
// "Page Snapshot", or many "[ref=eN]" element references).
func looksSnapshot(s string) bool {
	head := strings.ToLower(s[:min(len(s), 4096)])
	if strings.Contains(head, "page snapshot") {
		return true
	}
	return strings.Count(s, "[ref=") >= 50 || strings.Count(s, " ref=") >= 50
}
