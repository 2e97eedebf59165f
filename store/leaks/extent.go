package leaks

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Where a rule's matches lie around its keywords. Gitleaks runs a rule over a whole file when
// one of its keywords occurs in it; run so over an 800 KB request body, the rules whose
// keywords are common words ("key", "token", "ey" of a JWT) took over a second, most of it in
// the generic key = value rule. But a match of almost every rule contains one of its keywords
// at a bounded distance from its ends: the expression says so. extentOf reads that distance
// from the expression's syntax tree, and the scan runs the rule only in a window that wide
// around each keyword occurrence (scan.go).
//
// Unbounded repetitions (x*, x+, x{n,}) are taken to match at most narrowRun bytes, lineRun
// for "." (the rest of a line: in a JSON body every line is one, so "." would run to its end),
// or broadRun for a repetition of anything that crosses lines or strings ("[\s\S]", "[^\"]"):
// a private key block is a few kilobytes, a token far less. A match longer than that, or
// reaching farther than maxExtent from its keyword, is not found. A rule whose matches need
// not contain a keyword (its expression allows other text where the keyword would be) is
// sought within keywordContext of a keyword occurrence: gitleaks asks for the keyword
// somewhere in the same file, and a body holds many files.
const (
	narrowRun      = 1 << 10
	lineRun        = 256
	broadRun       = 8 << 10
	keywordContext = 4 << 10
	// maxExtent caps how far before or after a keyword a match is sought, whatever the
	// expression allows (curl's ".*" repeated six times): it bounds Rules.Reach.
	maxExtent = 8 << 10
	// maxExact bounds the strings exact tracks for one expression.
	maxExact = 64
)

// extent is what extentOf learns of a rule's expression.
type extent struct {
	anchored bool // every match contains an occurrence of one of the keywords
	// A match containing the keyword occurrence at p (the first one of its designated part)
	// lies within [p-before, p+after).
	before, after int
	// lead is the expression from the designated part to the end (without the captures and
	// assertions before it), nil when there is none: a cheap test, run anchored where the
	// designated part would start, that a keyword occurrence can be part of a match at all.
	lead *syntax.Regexp
	// leadOffsets gives, for each keyword, the offsets it can have inside the designated
	// part's match; nil: any offset up to leadBefore.
	leadOffsets map[string][]int
	leadBefore  int
	leadLen     int // the longest match of lead
	prefixLen   int // the longest match of what precedes the designated part
}

// reach bounds how far apart the bytes that decide one of the rule's matches lie: the window
// around its keyword, the pads and snapping around the window, and the line an allowlist may
// read.
func (r *rule) reach() int { return r.ext.before + r.ext.after + 4*pad + 2*maxLine }

func extentOf(re *syntax.Regexp, keywords []string) extent {
	a := analysis{keywords: keywords, exact: map[*syntax.Regexp][]string{}}
	parts := flatten(re)
	best, bestAt := extent{}, -1
	for i := range parts {
		run := []string{""} // the strings of parts[i:j], while known
		for j := i + 1; j <= len(parts); j++ {
			var before, after int
			var offsets map[string][]int
			found := false
			if run = a.extend(run, parts[j-1]); j == i+1 {
				before, after, found = a.span(parts[i])
				if run != nil {
					offsets = a.offsets(run)
				}
			} else if run != nil {
				before, after, found = a.spanExact(run)
				offsets = a.offsets(run)
			}
			if found {
				prefix, suffix := 0, 0
				for _, p := range parts[:i] {
					prefix += a.maxLen(p)
				}
				for _, p := range parts[j:] {
					suffix += a.maxLen(p)
				}
				e := extent{
					anchored: true, before: min(prefix+before, maxExtent), after: min(after+suffix, maxExtent),
					leadOffsets: offsets, leadBefore: before, prefixLen: prefix,
				}
				if bestAt < 0 || e.before+e.after < best.before+best.after {
					best, bestAt = e, i
				}
			}
			if run == nil {
				break // a run of known strings cannot go on through this part
			}
		}
	}
	if bestAt >= 0 {
		best.lead = &syntax.Regexp{Op: syntax.OpConcat, Sub: parts[bestAt:]}
		best.leadLen = min(a.maxLen(best.lead), maxExtent)
		return best
	}
	n := min(keywordContext+a.maxLen(re), maxExtent)
	return extent{before: n, after: n}
}

// flatten lists the parts of a concatenation, captures and nested concatenations opened.
func flatten(re *syntax.Regexp) []*syntax.Regexp {
	switch re.Op {
	case syntax.OpCapture:
		return flatten(re.Sub[0])
	case syntax.OpConcat:
		var out []*syntax.Regexp
		for _, s := range re.Sub {
			out = append(out, flatten(s)...)
		}
		return out
	}
	return []*syntax.Regexp{re}
}

type analysis struct {
	keywords []string
	exact    map[*syntax.Regexp][]string
}

// maxLen is the longest match of re in bytes, unbounded repetitions capped (see narrowRun).
func (a *analysis) maxLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		n := 0
		for _, c := range re.Rune {
			n += utf8.RuneLen(c)
		}
		return n
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return 0
		}
		return utf8.RuneLen(min(re.Rune[len(re.Rune)-1], utf8.MaxRune))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return a.maxLen(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			n = n + a.maxLen(s)
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			n = max(n, a.maxLen(s))
		}
		return n
	case syntax.OpStar, syntax.OpPlus:
		return runCap(re.Sub[0])
	case syntax.OpRepeat:
		if re.Max < 0 {
			return max(runCap(re.Sub[0]), re.Min*a.maxLen(re.Sub[0]))
		}
		return re.Max * a.maxLen(re.Sub[0])
	}
	return 0 // empty matches and assertions
}

// runCap is how many bytes an unbounded repetition of re is taken to match.
func runCap(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpAnyCharNotNL:
		return lineRun
	case syntax.OpAnyChar:
		return broadRun
	case syntax.OpCharClass:
		if classHas(re, '\n') || classHas(re, '"') {
			return broadRun
		}
		return narrowRun
	}
	return broadRun
}

func classHas(re *syntax.Regexp, c rune) bool {
	for i := 0; i+1 < len(re.Rune); i += 2 {
		if re.Rune[i] <= c && c <= re.Rune[i+1] {
			return true
		}
	}
	return false
}

// wildcard stands in an exact string for one ASCII byte of a large class.
const wildcard = "\x00"

// exactOf returns, lower-cased, every string re can match, when they are few and their
// lengths known (a large ASCII class counts as one wildcard byte); nil otherwise.
func (a *analysis) exactOf(re *syntax.Regexp) []string {
	if set, ok := a.exact[re]; ok {
		return set
	}
	set := a.computeExact(re)
	a.exact[re] = set
	return set
}

func (a *analysis) computeExact(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			if c >= utf8.RuneSelf {
				return nil
			}
		}
		return []string{strings.ToLower(string(re.Rune))}
	case syntax.OpCharClass:
		if len(re.Rune) == 0 || re.Rune[len(re.Rune)-1] >= utf8.RuneSelf {
			return nil
		}
		var set []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for c := re.Rune[i]; c <= re.Rune[i+1]; c++ {
				if s := strings.ToLower(string(c)); !contains(set, s) {
					set = append(set, s)
				}
				if len(set) > 8 {
					return []string{wildcard}
				}
			}
		}
		return set
	case syntax.OpCapture:
		return a.exactOf(re.Sub[0])
	case syntax.OpQuest:
		set := a.exactOf(re.Sub[0])
		if set == nil || len(set) >= maxExact {
			return nil
		}
		return append([]string{""}, set...)
	case syntax.OpAlternate:
		var set []string
		for _, s := range re.Sub {
			sub := a.exactOf(s)
			if sub == nil {
				return nil
			}
			for _, x := range sub {
				if !contains(set, x) {
					set = append(set, x)
				}
			}
			if len(set) > maxExact {
				return nil
			}
		}
		return set
	case syntax.OpConcat:
		return a.runExact(re.Sub)
	case syntax.OpRepeat:
		if re.Min == re.Max && re.Min <= 4 {
			return a.runExact(repeatParts(re))
		}
	}
	return nil
}

func repeatParts(re *syntax.Regexp) []*syntax.Regexp {
	parts := make([]*syntax.Regexp, re.Min)
	for i := range parts {
		parts[i] = re.Sub[0]
	}
	return parts
}

// runExact is exactOf of the concatenation of parts.
func (a *analysis) runExact(parts []*syntax.Regexp) []string {
	set := []string{""}
	for _, p := range parts {
		if set = a.extend(set, p); set == nil {
			return nil
		}
	}
	return set
}

// extend returns the strings of set followed by those of p, nil when unknown or too many.
func (a *analysis) extend(set []string, p *syntax.Regexp) []string {
	sub := a.exactOf(p)
	if set == nil || sub == nil || len(set)*len(sub) > maxExact {
		return nil
	}
	next := make([]string, 0, len(set)*len(sub))
	for _, x := range set {
		for _, y := range sub {
			if s := x + y; !contains(next, s) {
				next = append(next, s)
			}
		}
	}
	return next
}

func contains(set []string, s string) bool {
	for _, x := range set {
		if x == s {
			return true
		}
	}
	return false
}

// firstKeyword is where the first keyword occurrence in s starts, -1 if none.
func (a *analysis) firstKeyword(s string) int {
	first := -1
	for _, k := range a.keywords {
		if i := strings.Index(s, k); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	return first
}

// spanExact is span for a part whose strings are set.
func (a *analysis) spanExact(set []string) (before, after int, ok bool) {
	for _, s := range set {
		i := a.firstKeyword(s)
		if i < 0 {
			return 0, 0, false
		}
		before, after = max(before, i), max(after, len(s)-i)
	}
	return before, after, true
}

// offsets lists, per keyword, where it occurs in the strings of set.
func (a *analysis) offsets(set []string) map[string][]int {
	out := map[string][]int{}
	for _, k := range a.keywords {
		for _, s := range set {
			for from := 0; ; {
				i := strings.Index(s[from:], k)
				if i < 0 {
					break
				}
				if o := from + i; !containsInt(out[k], o) {
					out[k] = append(out[k], o)
				}
				from += i + 1
			}
		}
	}
	return out
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// span reports whether every match of re contains a keyword occurrence, and then bounds a
// match around the first one of a designated part: it starts at most before bytes ahead of it
// and ends at most after bytes from its start.
func (a *analysis) span(re *syntax.Regexp) (before, after int, ok bool) {
	if set := a.exactOf(re); set != nil {
		if b, af, ok := a.spanExact(set); ok {
			return b, af, true
		}
	}
	switch re.Op {
	case syntax.OpCapture:
		return a.span(re.Sub[0])
	case syntax.OpPlus:
		b, af, ok := a.span(re.Sub[0])
		return b, af + runCap(re.Sub[0]), ok
	case syntax.OpRepeat:
		if re.Min < 1 {
			return 0, 0, false
		}
		b, af, ok := a.span(re.Sub[0])
		rest := 0
		if re.Max < 0 {
			rest = max(runCap(re.Sub[0]), (re.Min-1)*a.maxLen(re.Sub[0]))
		} else {
			rest = (re.Max - 1) * a.maxLen(re.Sub[0])
		}
		return b, af + rest, ok
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			b, af, ok := a.span(s)
			if !ok {
				return 0, 0, false
			}
			before, after = max(before, b), max(after, af)
		}
		return before, after, true
	case syntax.OpConcat:
		best := -1
		for i := range re.Sub {
			run := []string{""}
			for j := i + 1; j <= len(re.Sub); j++ {
				var b, af int
				var found bool
				if run = a.extend(run, re.Sub[j-1]); j == i+1 {
					b, af, found = a.span(re.Sub[i])
				} else if run != nil {
					b, af, found = a.spanExact(run)
				}
				if !found {
					if run == nil {
						break
					}
					continue
				}
				for _, p := range re.Sub[:i] {
					b = b + a.maxLen(p)
				}
				for _, p := range re.Sub[j:] {
					af = af + a.maxLen(p)
				}
				if best < 0 || b+af < best {
					best, before, after, ok = b+af, b, af, true
				}
				if run == nil {
					break
				}
			}
		}
		return before, after, ok
	}
	return 0, 0, false
}
