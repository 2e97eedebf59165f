package compact

import (
	"sort"
	"strings"

	"longhaul/proxy/modelname"
)

// Context-window defaults, as the providers publish them.
const (
	ClaudeContextTokens  = 200_000
	GeminiContextTokens  = 1_048_576
	OneMillionTokens     = 1_000_000
	DefaultContextTokens = 200_000
)

// Limits maps model names to context windows. Patterns may use '*' as a
// wildcard (claude-*, *-1m); an exact name beats any pattern and among
// patterns the one with the most literal characters wins, so
// "claude-3-haiku-*" overrides "claude-*".
type Limits struct {
	entries []limitEntry // most specific first
	def     int
}

type limitEntry struct {
	pattern string
	tokens  int
	score   int
}

// DefaultLimitTable is the built-in table used by DefaultLimits.
func DefaultLimitTable() map[string]int {
	return map[string]int{"claude-*": ClaudeContextTokens, "gemini-*": GeminiContextTokens}
}

// NewLimits builds Limits from table (pattern → tokens; non-positive entries
// are ignored) and def for unknown models (0 = DefaultContextTokens).
func NewLimits(table map[string]int, def int) *Limits {
	if def <= 0 {
		def = DefaultContextTokens
	}
	l := &Limits{def: def}
	for p, n := range table {
		if n <= 0 || p == "" {
			continue
		}
		score := modelname.Literal(p)
		if !strings.Contains(p, "*") {
			score += 1 << 20 // exact names win over every pattern
		}
		l.entries = append(l.entries, limitEntry{strings.ToLower(p), n, score})
	}
	// Deterministic order: specificity, then the pattern text.
	sort.Slice(l.entries, func(i, j int) bool {
		a, b := l.entries[i], l.entries[j]
		if a.score != b.score {
			return a.score > b.score
		}
		return a.pattern < b.pattern
	})
	return l
}

// DefaultLimits is NewLimits(DefaultLimitTable(), DefaultContextTokens).
func DefaultLimits() *Limits { return NewLimits(DefaultLimitTable(), DefaultContextTokens) }

// For returns the context window of model. betas are the anthropic-beta
// values of the request; a context-1m beta raises the window to 1M tokens.
func (l *Limits) For(model string, betas []string) int {
	n := l.def
	m := strings.ToLower(model)
	for _, e := range l.entries {
		if modelname.Match(e.pattern, m) {
			n = e.tokens
			break
		}
	}
	for _, b := range betas {
		if strings.HasPrefix(strings.TrimSpace(strings.ToLower(b)), "context-1m") {
			return max(n, OneMillionTokens)
		}
	}
	return n
}

// ParseBetas splits anthropic-beta header values ("a,b", "c") into names.
func ParseBetas(values []string) []string {
	var out []string
	for _, v := range values {
		for _, b := range strings.Split(v, ",") {
			if b = strings.TrimSpace(b); b != "" {
				out = append(out, b)
			}
		}
	}
	return out
}
