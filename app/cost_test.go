package app

import (
	"math"
	"testing"

	"longhaul/store"
)

// The default price table prices each model Longhaul serves, by its dated or aliased name, at
// its own list price (store/settings_pricing.go): a million tokens of each kind cost the price
// per million of that kind.
func TestDefaultPricesOfTheServedModels(t *testing.T) {
	p := storePricer{priceTable(store.DefaultSettings().Pricing)}
	million := store.Tokens{Input: 1_000_000}
	tests := []struct {
		model                    string
		input, output, cacheRead float64
	}{
		{"claude-opus-4-5-20251101", 5, 25, 0.5},
		{"claude-opus-4-7", 5, 25, 0.5},
		{"claude-opus-4-1-20250805", 15, 75, 1.5},
		{"claude-opus-4-20250514", 15, 75, 1.5},
		{"claude-opus-4-0", 15, 75, 1.5},
		{"claude-sonnet-4-5-20250929", 3, 15, 0.3},
		{"claude-sonnet-4-20250514", 3, 15, 0.3},
		{"claude-haiku-4-5-20251001", 1, 5, 0.1},
		{"gpt-5", 1.25, 10, 0.125},
		{"gpt-5-2025-08-07", 1.25, 10, 0.125},
		{"gpt-5-mini", 0.25, 2, 0.025},
		{"gpt-5-nano-2025-08-07", 0.05, 0.4, 0.005},
		{"gpt-5.4-mini", 0.75, 4.5, 0.075},
		{"gpt-5.5", 5, 30, 0.5},
		{"gpt-4.1-2025-04-14", 2, 8, 0.5},
		{"gpt-4.1-mini", 0.4, 1.6, 0.1},
		{"o3", 2, 8, 0.5},
		{"o3-mini", 1.1, 4.4, 0.55},
		{"o4-mini-2025-04-16", 1.1, 4.4, 0.275},
		{"gemini-2.5-pro", 1.25, 10, 0.125},
		{"gemini-2.5-flash", 0.3, 2.5, 0.03},
		{"gemini-2.5-flash-lite", 0.1, 0.4, 0.01},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, tt := range tests {
		in, ok := p.Price(tt.model, million)
		out, _ := p.Price(tt.model, store.Tokens{Output: 1_000_000})
		cr, _ := p.Price(tt.model, store.Tokens{CacheRead: 1_000_000})
		if !ok || !near(in.Total, tt.input) || !near(out.Total, tt.output) || !near(cr.Total, tt.cacheRead) {
			t.Errorf("%s: a million input, output, cache-read tokens = $%v, $%v, $%v (priced %t); want $%v, $%v, $%v",
				tt.model, in.Total, out.Total, cr.Total, ok, tt.input, tt.output, tt.cacheRead)
		}
	}
	// Anthropic bills cache writes at 1.25× the input price; OpenAI and Gemini bill none extra.
	for model, want := range map[string]float64{"claude-sonnet-4-5": 3.75, "claude-opus-4-5": 6.25, "gpt-5": 1.25, "gemini-2.5-pro": 1.25} {
		if c, _ := p.Price(model, store.Tokens{CacheWrite: 1_000_000}); !near(c.Total, want) {
			t.Errorf("%s: a million cache-write tokens = $%v; want $%v", model, c.Total, want)
		}
	}
	if _, ok := p.Price("llama-3.3-70b", million); ok {
		t.Error("a model the table does not list was priced")
	}
}
