package leaks

import (
	"slices"
	"strings"
	"unsafe"
)

// Secret is a secret found in a text: its bytes, the rule that found it, and how many of its
// leading bytes name its kind (a keyword it starts with and the separator after it: "ghp_",
// "xoxb-", "AKIA") and may stay visible when it is masked.
type Secret struct {
	Start, End int
	Rule       string
	Kind       int
}

// pad widens every window beyond the bytes a match can span, so that the bytes just outside a
// match, which decide \b, ^ and $, are the text's own.
const pad = 16

// Find returns the secrets in b, in order, overlapping ones merged. It never writes to b.
func (rs *Rules) Find(b []byte) []Secret { return rs.FindFrom(b, 0) }

// FindFrom is Find for a text whose first from bytes were scanned before and held no secret
// (store/bodies.go: a session's next body, which repeats the last one): it looks only for
// secrets that reach past from, trying a rule only around the keywords whose reach does. The
// keyword pass still reads the whole of b, which the caller keeps to the rules' Reach before
// from.
func (rs *Rules) FindFrom(b []byte, from int) []Secret {
	if len(b) == 0 || len(rs.rules) == 0 {
		return nil
	}
	text := unsafe.String(unsafe.SliceData(b), len(b)) // read only, for the string APIs below
	var found []Secret
	for ri, hits := range rs.keywords.hits(b, len(rs.rules)) {
		r := rs.rules[ri]
		if from > 0 {
			// A match around a keyword at pos ends before pos+after+pad (byLead, byWindows).
			hits = slices.DeleteFunc(hits, func(h hit) bool { return h.pos+r.ext.after+pad < from })
		}
		if len(hits) == 0 {
			continue
		}
		if err := r.compile(); err != nil {
			continue // not expected: Parse checked the syntax (rule.compile)
		}
		f := finder{rs: rs, r: r, b: b, text: text}
		if r.lead != nil {
			f.byLead(hits)
		} else {
			f.byWindows(hits)
		}
		found = append(found, f.found...)
	}
	return merge(found)
}

// hit is a keyword occurrence: where it starts and which keyword (keywordSet.words).
type hit struct {
	pos, word int
}

type finder struct {
	rs    *Rules
	r     *rule
	b     []byte
	text  string
	found []Secret
	seen  map[[2]int]bool // matches already judged, by span
	// reader feeds the lead expression: through an io.RuneReader, regexp runs its automaton,
	// which stops as soon as no match can go on, where on a string it may take the
	// backtracker, which first clears a bit per instruction and byte of the whole window.
	reader strings.Reader
}

// byLead runs the rule around the keyword occurrences its lead expression accepts: where the
// designated part of the expression would start, the rest of it must match. Most occurrences
// of a common keyword fail that at once ("key" followed by no assignment), and only the few
// left cost a run of the whole expression, in a window from the longest prefix before the
// designated part to the end of the lead's match.
func (f *finder) byLead(hits []hit) {
	ext, n := &f.r.ext, len(f.b)
	lastStart := -1
	for _, h := range hits {
		word := f.rs.keywords.words[h.word]
		offsets := ext.leadOffsets[word]
		if ext.leadOffsets == nil {
			offsets = nil
			for o := 0; o <= ext.leadBefore; o++ {
				offsets = append(offsets, o)
			}
		}
		for _, o := range offsets {
			start := h.pos - o
			if start < 0 || start == lastStart {
				continue
			}
			lastStart = start
			end := min(n, start+ext.leadLen+pad)
			f.reader.Reset(f.text[start:end])
			loc := f.r.lead.FindReaderIndex(&f.reader)
			if loc == nil {
				continue
			}
			ws := snapStart(f.b, max(0, start-ext.prefixLen-pad))
			we := min(n, start+loc[1]+pad)
			if !f.window(ws, we, false) {
				f.window(ws, min(n, h.pos+ext.after+pad), true)
			}
		}
	}
}

// byWindows runs the rule over the windows around its keyword occurrences, merged where they
// overlap: for rules without a lead expression, whose keywords are rare.
func (f *finder) byWindows(hits []hit) {
	ext, n := &f.r.ext, len(f.b)
	for i := 0; i < len(hits); {
		ws := snapStart(f.b, max(0, hits[i].pos-ext.before-pad))
		we := min(n, hits[i].pos+ext.after+pad)
		j := i + 1
		for j < len(hits) && hits[j].pos-ext.before-pad <= we {
			we = min(n, hits[j].pos+ext.after+pad)
			j++
		}
		f.window(ws, we, true)
		i = j
	}
}

// window runs the rule's expression over b[ws:we] and keeps what it finds. A match that ends
// at the window's end when the text goes on may be cut short by it: unless final, window then
// keeps nothing and reports false, for the caller to try a wider window.
func (f *finder) window(ws, we int, final bool) bool {
	matches := f.r.re.FindAllStringSubmatchIndex(f.text[ws:we], -1)
	if !final {
		for _, m := range matches {
			if ws+m[1] == we && we < len(f.b) {
				return false
			}
		}
	}
	for _, m := range matches {
		for i := range m {
			if m[i] >= 0 {
				m[i] += ws
			}
		}
		f.judge(m)
	}
	return true
}

// judge applies gitleaks' tests to a match (submatch indexes into the text): which group is
// the secret, its entropy, the allowlists.
func (f *finder) judge(m []int) {
	start, end := m[0], m[1]
	for start < end && f.b[start] == '\n' {
		start++
	}
	for end > start && f.b[end-1] == '\n' {
		end--
	}
	if start == end {
		return
	}
	key := [2]int{start, end}
	if f.seen[key] {
		return
	}
	if f.seen == nil {
		f.seen = map[[2]int]bool{}
	}
	f.seen[key] = true
	ss, se := start, end
	if g := f.r.secretGroup; g > 0 {
		if 2*g+1 < len(m) && m[2*g] >= 0 && m[2*g+1] > m[2*g] {
			ss, se = m[2*g], m[2*g+1]
		}
	} else {
		for g := 1; 2*g+1 < len(m); g++ {
			if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
				ss, se = m[2*g], m[2*g+1]
				break
			}
		}
	}
	secret := f.text[ss:se]
	if f.r.entropy != 0 && shannonEntropy(secret) <= f.r.entropy {
		return
	}
	match := f.text[start:end]
	var line string
	lineDone := false
	for _, lists := range [][]*allowlist{f.rs.global, f.r.allow} {
		for _, a := range lists {
			if a.target == "line" && !lineDone {
				line, lineDone = f.text[lineStart(f.b, start):lineEnd(f.b, end)], true
			}
			if a.allows(secret, match, line) {
				return
			}
		}
	}
	f.found = append(f.found, Secret{Start: ss, End: se, Rule: f.r.id, Kind: f.kind(secret)})
}

// kind is how many leading bytes of secret name its kind: one of the rule's keywords it
// starts with, and a '-' or '_' right after it.
func (f *finder) kind(secret string) int {
	best := 0
	for _, k := range f.r.keywords {
		if len(k) > best && len(k) < len(secret) && equalFold(secret[:len(k)], k) {
			best = len(k)
		}
	}
	if best > 0 && best < len(secret) && (secret[best] == '-' || secret[best] == '_') {
		best++
	}
	return best
}

func equalFold(s, lower string) bool {
	for i := 0; i < len(s); i++ {
		if lowerByte(s[i]) != lower[i] {
			return false
		}
	}
	return true
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// snapStart moves a window's start back, a little, to just after a byte that is not a word
// byte, so that \b at the window's first byte means what it means in the whole text.
func snapStart(b []byte, ws int) int {
	for i := ws; i > 0 && i > ws-pad; i-- {
		if !isWordByte(b[i-1]) {
			return i
		}
	}
	return ws
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// maxLine bounds how far lineStart and lineEnd look: a JSON body is one line.
const maxLine = 1 << 10

// lineStart is where the line holding b[i] starts: after a newline, or after an escaped one
// ("\n" inside a JSON string, as in a tool's output), at most maxLine back.
func lineStart(b []byte, i int) int {
	for j := i; j > 0 && j > i-maxLine; j-- {
		if b[j-1] == '\n' || j >= 2 && b[j-2] == '\\' && b[j-1] == 'n' {
			return j
		}
	}
	return max(0, i-maxLine)
}

// lineEnd is where the line holding b[i-1] ends (see lineStart).
func lineEnd(b []byte, i int) int {
	for j := i; j < len(b) && j < i+maxLine; j++ {
		if b[j] == '\n' || b[j] == '\\' && j+1 < len(b) && b[j+1] == 'n' {
			return j
		}
	}
	return min(len(b), i+maxLine)
}

// merge sorts secrets by start and merges the overlapping ones (a generic rule and a specific
// one often find the same token); the first one's rule and kind name the whole.
func merge(found []Secret) []Secret {
	if len(found) < 2 {
		return found
	}
	slices.SortFunc(found, func(a, b Secret) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return b.End - a.End
	})
	out := found[:1]
	for _, s := range found[1:] {
		last := &out[len(out)-1]
		if s.Start < last.End {
			last.End = max(last.End, s.End)
			continue
		}
		out = append(out, s)
	}
	return out
}
