package compact

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Tool-result compressor defaults (SPEC §5).
const (
	DefaultMaxToolResultChars = 200_000
	DefaultLargeChars         = 20_000 // content rules (HTML, snapshots) apply above this
	DefaultSnapshotHead       = 8_000
	DefaultSnapshotTail       = 4_000
	truncReserve              = 64 // room for the truncation note, so a second pass is a no-op
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
func (c *Compressor) Apply(r *Request) CompressStats {
	var st CompressStats
	for mi := range r.Messages {
		m := &r.Messages[mi]
		if m.Role != "user" || m.IsString {
			continue
		}
		last := mi == len(r.Messages)-1
		var out []Block
		for bi, b := range m.Blocks {
			if b.Type != "tool_result" {
				continue
			}
			nb, ok := c.toolResult(b, last, &st)
			if !ok {
				continue
			}
			if out == nil {
				out = append([]Block(nil), m.Blocks...)
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
func (c *Compressor) toolResult(b Block, last bool, st *CompressStats) (Block, bool) {
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
		s, ok := c.text(unquote(raw), c.o.MaxChars, last, st)
		if !ok {
			return b, false
		}
		nb, err := b.With("content", quote(s))
		return nb, err == nil
	}
	inner, err := parseBlocks(raw)
	if err != nil {
		return b, false
	}
	changed := false
	budget := c.o.MaxChars
	for i, ib := range inner {
		switch ib.Type {
		case "image":
			if last {
				continue
			}
			if note, ok := imageReplacement(ib); ok {
				inner[i] = TextBlock(note)
				st.Images++
				changed = true
			}
		case "text":
			s := ib.Text()
			ns, ok := c.text(s, max(budget, truncReserve*2), last, st)
			if ok {
				if nb, err := ib.With("text", quote(ns)); err == nil {
					inner[i], s, changed = nb, ns, true
				}
			}
			budget -= utf8.RuneCountInString(s)
		}
	}
	if !changed {
		return b, false
	}
	nb, err := b.WithContentBlocks(inner)
	return nb, err == nil
}

// imageReplacement describes a base64 image so the model knows one was there.
func imageReplacement(b Block) (string, bool) {
	src := b.Source()
	if src == nil {
		return "", false
	}
	var typ, media, data []byte
	if eachMember(src, func(k, v []byte) error {
		switch {
		case keyIs(k, "type"):
			typ = v
		case keyIs(k, "media_type"):
			media = v
		case keyIs(k, "data"):
			data = v
		}
		return nil
	}) != nil || unquote(typ) != "base64" {
		return "", false // url and file images cost nothing to carry
	}
	kb := (len(data)*3/4 + 1023) / 1024
	return fmt.Sprintf("[image removed by Longhaul to save context: %s, %d KB]", unquote(media), kb), true
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
			if ns := stripHTML(s); ns != s {
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
			keep := budget - truncReserve
			s = prefixRunes(s, keep) + fmt.Sprintf("\n...[truncated %d chars]", n-keep)
			st.Truncated++
		}
	}
	return s, s != orig
}

// prefixRunes returns the first n characters of s, never splitting a rune.
func prefixRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// suffixRunes returns the last n characters of s.
func suffixRunes(s string, n int) string {
	i := len(s)
	for k := 0; k < n && i > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

func headTail(s string, n, head, tail int) string {
	omitted := n - head - tail
	return prefixRunes(s, head) +
		fmt.Sprintf("\n...[snapshot truncated by Longhaul: %d chars omitted]...\n", omitted) +
		suffixRunes(s, tail)
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
func stripHTML(s string) string {
	s = htmlStyle.ReplaceAllString(s, "")
	s = htmlScript.ReplaceAllString(s, "")
	return base64Frag.ReplaceAllStringFunc(s, func(m string) string {
		i := strings.Index(m, ";base64,")
		return fmt.Sprintf("%s[base64 omitted: %d chars]", m[:i+len(";base64,")], len(m)-i-len(";base64,"))
	})
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
