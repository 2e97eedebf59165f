package pricing

import (
	"math"
	"testing"
)

func usd(v float64) *float64 { return &v }

// near compares dollar amounts to a millionth of a cent: the arithmetic is float64.
func near(a, b float64) bool { return math.Abs(a-b) < 1e-8 }

func sameCost(a, b Cost) bool {
	return near(a.Input, b.Input) && near(a.Output, b.Output) && near(a.CacheRead, b.CacheRead) &&
		near(a.CacheWrite, b.CacheWrite) && near(a.Total, b.Total)
}

func TestCost(t *testing.T) {
	sonnet := Price{Input: 3, Output: 15, CacheRead: usd(0.30), CacheWrite: usd(3.75), CacheWrite1h: usd(6)}
	table := New(map[string]Price{
		"claude-sonnet-4*":       sonnet,
		"claude-opus-4*":         {Input: 5, Output: 25},
		"claude-opus-4-1*":       {Input: 15, Output: 75},
		"claude-opus-4-20250514": {Input: 15, Output: 75},
		"gpt-4.1*":               {Input: 2, Output: 8, CacheRead: usd(0.5), CacheWrite: usd(2)},
		"gpt-4.1-mini*":          {Input: 0.4, Output: 1.6, CacheRead: usd(0.1), CacheWrite: usd(0.4)},
		"*-free":                 {},
	})
	tests := []struct {
		name  string
		model string
		u     Usage
		want  Cost
		ok    bool
	}{
		{"each kind at its own price", "claude-sonnet-4-5-20250929",
			Usage{Input: 12_000, Output: 2_000, CacheRead: 140_000, CacheWrite: 3_000},
			Cost{Input: 0.036, Output: 0.03, CacheRead: 0.042, CacheWrite: 0.01125, Total: 0.11925}, true},
		{"a 1-hour cache write at the 1-hour price", "claude-sonnet-4-6",
			Usage{CacheWrite: 1_000_000, CacheWrite1h: 1_000_000},
			Cost{CacheWrite: 3.75 + 6, Total: 9.75}, true},
		{"cache prices left out follow the input price by Anthropic's ratios", "claude-opus-4-5",
			Usage{CacheRead: 1_000_000, CacheWrite: 1_000_000, CacheWrite1h: 1_000_000},
			Cost{CacheRead: 0.5, CacheWrite: 6.25 + 10, Total: 16.75}, true},
		{"the pattern with more literal characters wins", "claude-opus-4-1-20250805",
			Usage{Input: 1_000_000}, Cost{Input: 15, Total: 15}, true},
		{"an exact name wins over every pattern", "claude-opus-4-20250514",
			Usage{Output: 1_000_000}, Cost{Output: 75, Total: 75}, true},
		{"matching ignores case", "Claude-Opus-4-7",
			Usage{Input: 1_000_000}, Cost{Input: 5, Total: 5}, true},
		{"a mini model is not priced as its larger sibling", "gpt-4.1-mini-2025-04-14",
			Usage{Input: 1_000_000, CacheRead: 1_000_000}, Cost{Input: 0.4, CacheRead: 0.1, Total: 0.5}, true},
		{"a cache write priced as input where the upstream charges none extra", "gpt-4.1",
			Usage{CacheWrite: 1_000_000}, Cost{CacheWrite: 2, Total: 2}, true},
		{"a price of zero is a price", "local-free", Usage{Input: 5}, Cost{}, true},
		{"an unknown model has no price", "mistral-large", Usage{Input: 5}, Cost{}, false},
		{"no model has no price", "", Usage{Input: 5}, Cost{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := table.Cost(tt.model, tt.u)
			if ok != tt.ok || !sameCost(got, tt.want) {
				t.Errorf("Cost(%q, %+v) = %+v, %t; want %+v, %t", tt.model, tt.u, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestTheMostSpecificPatternPrices(t *testing.T) {
	// Each pattern's input price is its number, so a million input tokens name the pattern.
	table := New(map[string]Price{"claude-*": {Input: 1}, "claude-opus-4*": {Input: 2}, "*opus*": {Input: 3}, "": {Input: 4}})
	tests := []struct {
		model string
		want  float64
		ok    bool
	}{
		{"claude-opus-4-5", 2, true},
		{"claude-haiku-4-5", 1, true},
		{"anthropic/claude-opus-4-5", 3, true},
		{"gpt-5", 0, false}, // an empty pattern matches nothing
	}
	for _, tt := range tests {
		if c, ok := table.Cost(tt.model, Usage{Input: 1_000_000}); ok != tt.ok || !near(c.Total, tt.want) {
			t.Errorf("Cost(%q, a million input tokens) = %v, %t; want %v, %t", tt.model, c.Total, ok, tt.want, tt.ok)
		}
	}
}

func TestNilTablePricesNothing(t *testing.T) {
	var table *Table
	if c, ok := table.Cost("claude-opus-4-5", Usage{Input: 1}); ok || c != (Cost{}) {
		t.Errorf("nil table: Cost = %+v, %t; want nothing", c, ok)
	}
	if _, ok := (&Table{}).Cost("claude-opus-4-5", Usage{Input: 1}); ok {
		t.Error("zero table priced a model")
	}
}

func TestAddSumsEveryKind(t *testing.T) {
	a := Cost{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, Total: 10}
	if got, want := a.Add(a), (Cost{Input: 2, Output: 4, CacheRead: 6, CacheWrite: 8, Total: 20}); got != want {
		t.Errorf("Add = %+v; want %+v", got, want)
	}
}

// BenchmarkCost is the price of one row with a table of the default's size (the live feed
// prices every exchange it publishes; the history views every row they hand out).
func BenchmarkCost(b *testing.B) {
	prices := map[string]Price{}
	for _, p := range []string{"claude-opus-4*", "claude-opus-4-0*", "claude-opus-4-1*", "claude-opus-4-2025*", "claude-sonnet-4*",
		"claude-haiku-4*", "gpt-5*", "gpt-5-mini*", "gpt-5-nano*", "gpt-5.2*", "gpt-5.4*", "gpt-5.4-mini*", "gpt-5.5*", "gpt-4.1*",
		"gpt-4.1-mini*", "gpt-4.1-nano*", "o3*", "o3-mini*", "o4-mini*", "gemini-2.5-pro*", "gemini-2.5-flash*", "gemini-2.5-flash-lite*"} {
		prices[p] = Price{Input: 1, Output: 2}
	}
	table := New(prices)
	u := Usage{Input: 12_000, Output: 2_000, CacheRead: 140_000, CacheWrite: 3_000}
	for _, model := range []string{"claude-sonnet-4-5-20250929", "gemini-2.5-flash-lite", "unknown-model"} {
		b.Run(model, func(b *testing.B) {
			for b.Loop() {
				table.Cost(model, u)
			}
		})
	}
}
