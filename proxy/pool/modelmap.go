package pool

import (
	"strconv"
	"strings"

	"longhaul/proxy/modelname"
)

// ModelMapping maps a client model name or * pattern to an upstream model,
// optionally only for one account (by label, id or provider kind).
type ModelMapping struct {
	Pattern string
	Model   string
	Account string
}

// MapModel returns the upstream model for a client model on an account, and
// whether a mapping applied: the most specific matching pattern wins (more
// literal characters; an account-specific entry beats a general one), ties
// go to the earlier entry.
func MapModel(mappings []ModelMapping, model string, acct Account) (string, bool) {
	best, bestScore := -1, -1
	for i, m := range mappings {
		if m.Account != "" && m.Account != acct.Label && m.Account != acct.Kind && m.Account != strconv.FormatInt(acct.ID, 10) {
			continue
		}
		if !modelname.Match(m.Pattern, model) {
			continue
		}
		score := 2 * modelname.Literal(m.Pattern)
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
