package proxy

import (
	"strconv"
	"strings"
)

// ModelMapping maps a client model name or * pattern to an upstream model,
// optionally only for one account (by label, id or provider kind).
type ModelMapping struct {
	Pattern string
	Model   string
	Account string
}

// mapModel returns the upstream model for a client model on an account: the
// most specific matching pattern wins (more literal characters; an
// account-specific entry beats a general one), ties go to the earlier entry.
func mapModel(mappings []ModelMapping, model string, acct Account) (string, bool) {
	best, bestScore := -1, -1
	for i, m := range mappings {
		if m.Account != "" && m.Account != acct.Label && m.Account != acct.Kind && m.Account != strconv.FormatInt(acct.ID, 10) {
			continue
		}
		if !matchModel(m.Pattern, model) {
			continue
		}
		score := 2 * (len(m.Pattern) - strings.Count(m.Pattern, "*"))
		if !strings.Contains(m.Pattern, "*") {
			score += 1 << 20 // an exact name beats any pattern
		}
		if m.Account != "" {
			score++
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return model, false
	}
	return mappings[best].Model, true
}

// matchModel matches a name against a pattern where * stands for any run of
// characters (and nothing else is special: model names contain dots).
func matchModel(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(name, part)
		if i < 0 {
			return false
		}
		name = name[i+len(part):]
	}
	return strings.HasSuffix(name, last) && len(name) >= len(last)
}
