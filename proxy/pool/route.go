package pool

import (
	"slices"
	"strconv"
	"strings"

	"longhaul/proxy/modelname"
)

// Routing by model. Every account kind can carry every client protocol (the proxy translates),
// but an upstream only knows its own models: the Anthropic API has no gpt-4o, OpenAI no Claude.
// So when the pool holds accounts of several kinds, a model goes to the kind that hosts its
// family, unless a model-map entry sends it elsewhere. With one kind configured, everything goes
// to it (an OpenAI-compatible router such as OpenRouter or a local server may well host any name).

// familyKinds are the kinds that host a model family by default (checked against each provider's
// model list naming: claude-*, gpt-*/o1…o4/chatgpt-*/codex-*, gemini-*/gemma-*).
func familyKinds(model string) []string {
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "claude-"):
		return []string{KindAnthropic}
	case strings.HasPrefix(m, "gpt-"), strings.HasPrefix(m, "chatgpt-"), strings.HasPrefix(m, "codex-"),
		len(m) >= 2 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9':
		return []string{KindOpenAI, KindOpenAIResponses}
	case strings.HasPrefix(m, "gemini-"), strings.HasPrefix(m, "gemma-"):
		return []string{KindGemini}
	}
	return nil
}

// routeTarget is the model-map entry that names where a model goes (an entry with Account set:
// a label, an id or a kind), or nil when none matches. The most specific entry wins, as in
// MapModel.
func routeTarget(mappings []ModelMapping, model string) *ModelMapping {
	var best *ModelMapping
	bestScore := -1
	for i := range mappings {
		m := &mappings[i]
		if m.Account == "" || !modelname.Match(m.Pattern, model) {
			continue
		}
		score := 2 * modelname.Literal(m.Pattern)
		if !strings.Contains(m.Pattern, "*") {
			score += 1 << 20
		}
		if score > bestScore {
			best, bestScore = m, score
		}
	}
	return best
}

// named reports whether a model-map entry's Account names a.
func named(target string, a Account) bool {
	return target == a.Label || target == a.KindOf() || target == strconv.FormatInt(a.ID, 10)
}

// preference returns which of the serving accounts a request for model should go to: those a
// model-map entry names, else those of the kinds hosting the model's family, provided at least
// one serving account qualifies; nil when every serving account may take it.
func preference(mappings []ModelMapping, model string, serving []Account) func(Account) bool {
	if t := routeTarget(mappings, model); t != nil {
		target := t.Account
		if slices.ContainsFunc(serving, func(a Account) bool { return named(target, a) }) {
			return func(a Account) bool { return named(target, a) }
		}
	}
	kinds := familyKinds(model)
	if kinds == nil {
		return nil
	}
	prefer := func(a Account) bool { return slices.Contains(kinds, a.KindOf()) }
	if slices.ContainsFunc(serving, prefer) {
		return prefer
	}
	return nil
}
