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
	// builtIn marks an entry the user left at its default (DefaultLimitTable): the context-1m
	// beta may raise it. Any other entry the user chose, and it wins over the beta.
	builtIn bool
}

// Window is a context window and why it applies, for the session view.
type Window struct {
	Tokens int
	// Source is WindowSetting (proxy.context_limits, Pattern names the entry), WindowDefault
	// (a built-in entry or proxy.default_context_limit), WindowBeta (the context-1m beta raised a
	// default) or WindowLearned (the upstream refused a longer request; set by the proxy).
	Source  string
	Pattern string
}

// Window sources.
const (
	WindowSetting = "setting"
	WindowDefault = "default"
	WindowBeta    = "beta"
	WindowLearned = "learned"
)

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
		builtIn := DefaultLimitTable()[p] == n
		l.entries = append(l.entries, limitEntry{strings.ToLower(p), n, score, builtIn})
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

// For returns the context window of model (Explain's tokens).
func (l *Limits) For(model string, betas []string) int { return l.Explain(model, betas).Tokens }

// Explain returns the context window of model and where it comes from. betas are the
// anthropic-beta values of the request: a context-1m beta raises a default window to 1M
// tokens, but never a limit the user set — Claude Code sends that beta on every request, and a
// user who set a smaller window knows what their upstream accepts.
func (l *Limits) Explain(model string, betas []string) Window {
	w := Window{Tokens: l.def, Source: WindowDefault}
	m := strings.ToLower(model)
	for _, e := range l.entries {
		if modelname.Match(e.pattern, m) {
			w = Window{Tokens: e.tokens, Source: WindowSetting, Pattern: e.pattern}
			if e.builtIn {
				w.Source = WindowDefault
			}
			break
		}
	}
	if w.Source == WindowSetting || w.Tokens >= OneMillionTokens {
		return w
	}
	for _, b := range betas {
		if strings.HasPrefix(strings.TrimSpace(strings.ToLower(b)), "context-1m") {
			return Window{Tokens: OneMillionTokens, Source: WindowBeta, Pattern: w.Pattern}
		}
	}
	return w
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
