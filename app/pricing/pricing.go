// Package pricing estimates what model requests cost: a table of model-name patterns (read as
// proxy/modelname reads the model map's and the context limits') to prices per million tokens
// by kind, and the cost of a request's tokens under it. It knows nothing of the store: the
// app prices the rows the store hands out (app/history.go) and the live feed's.
package pricing

import (
	"sort"
	"strings"

	"longhaul/proxy/modelname"
)

// Anthropic's prompt-cache multipliers of the input price, which a price that leaves a cache
// price out follows: Anthropic is the upstream that bills cache writes at all, and a table
// entry written for an OpenAI or Gemini model states its cache prices.
const (
	CacheReadRatio    = 0.1
	CacheWriteRatio   = 1.25 // a 5-minute cache write
	CacheWrite1hRatio = 2.0  // a 1-hour cache write
)

// Price is what one model's tokens cost, in US dollars per million tokens. A cache price left
// out (nil) follows Input by the ratios above.
type Price struct {
	Input        float64
	Output       float64
	CacheRead    *float64
	CacheWrite   *float64 // cache writes with the 5-minute TTL (the default)
	CacheWrite1h *float64 // cache writes with the 1-hour TTL
}

// rates are a Price with the ratios applied, per token.
type rates struct{ input, output, cacheRead, cacheWrite, cacheWrite1h float64 }

func (p Price) rates() rates {
	or := func(v *float64, ratio float64) float64 {
		if v != nil {
			return *v
		}
		return p.Input * ratio
	}
	const perMillion = 1e-6
	return rates{
		input:        p.Input * perMillion,
		output:       p.Output * perMillion,
		cacheRead:    or(p.CacheRead, CacheReadRatio) * perMillion,
		cacheWrite:   or(p.CacheWrite, CacheWriteRatio) * perMillion,
		cacheWrite1h: or(p.CacheWrite1h, CacheWrite1hRatio) * perMillion,
	}
}

// Usage is a request's tokens by kind as the upstream bills them, each kind counted once:
// Input is the uncached part of the prompt (Anthropic's input_tokens; the proxy reports
// OpenAI's and Gemini's usage the same way), CacheRead the part read from the prompt cache,
// CacheWrite and CacheWrite1h the part written to it with a 5-minute and a 1-hour TTL.
type Usage struct {
	Input, Output, CacheRead, CacheWrite, CacheWrite1h int64
}

// Cost is an estimate, in US dollars, of what tokens cost, by kind. CacheWrite holds both
// TTLs' writes.
type Cost struct {
	Input      float64
	Output     float64
	CacheRead  float64
	CacheWrite float64
	Total      float64
}

// Add returns the sum of two costs.
func (c Cost) Add(d Cost) Cost {
	return Cost{
		Input: c.Input + d.Input, Output: c.Output + d.Output, CacheRead: c.CacheRead + d.CacheRead,
		CacheWrite: c.CacheWrite + d.CacheWrite, Total: c.Total + d.Total,
	}
}

// Table prices models by pattern. The zero value and a nil *Table price nothing.
type Table struct {
	entries []entry
}

type entry struct {
	pattern string // lower case
	rates   rates
	score   int
}

// New builds a table from patterns ('*' matches any run of characters, as in
// proxy.context_limits) to prices. A model takes the price of the most specific pattern it
// matches: an exact name first, then the pattern with the most literal characters, then
// (for a stable answer) the lowest pattern in byte order. Matching ignores case.
func New(prices map[string]Price) *Table {
	t := &Table{}
	for p, price := range prices {
		if p == "" {
			continue
		}
		score := modelname.Literal(p)
		if !strings.Contains(p, "*") {
			score += 1 << 20 // exact names win over every pattern
		}
		t.entries = append(t.entries, entry{strings.ToLower(p), price.rates(), score})
	}
	sort.Slice(t.entries, func(i, j int) bool {
		a, b := t.entries[i], t.entries[j]
		if a.score != b.score {
			return a.score > b.score
		}
		return a.pattern < b.pattern
	})
	return t
}

func (t *Table) lookup(model string) (entry, bool) {
	if t == nil || model == "" {
		return entry{}, false
	}
	m := strings.ToLower(model)
	for _, e := range t.entries {
		if modelname.Match(e.pattern, m) {
			return e, true
		}
	}
	return entry{}, false
}

// Cost estimates what u cost on model (the model as sent upstream, after the model map), and
// false when the table has no price for it: an unknown price is not a price of zero.
func (t *Table) Cost(model string, u Usage) (Cost, bool) {
	e, ok := t.lookup(model)
	if !ok {
		return Cost{}, false
	}
	r := e.rates
	c := Cost{
		Input:      float64(u.Input) * r.input,
		Output:     float64(u.Output) * r.output,
		CacheRead:  float64(u.CacheRead) * r.cacheRead,
		CacheWrite: float64(u.CacheWrite)*r.cacheWrite + float64(u.CacheWrite1h)*r.cacheWrite1h,
	}
	c.Total = c.Input + c.Output + c.CacheRead + c.CacheWrite
	return c, true
}
