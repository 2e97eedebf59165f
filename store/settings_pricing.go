package store

import (
	"fmt"
	"math"
)

// PricingSettings price the tokens the history shows, for its cost estimates (app/pricing).
type PricingSettings struct {
	// Table maps model patterns ('*' matches any run of characters, as in
	// proxy.context_limits) to prices; the most specific pattern that matches the model as
	// sent upstream prices a request. A model no pattern matches shows no cost.
	Table map[string]ModelPrice `json:"table"`
}

// ModelPrice is what a model's tokens cost, in US dollars per million tokens. A cache price
// left out follows the input price by Anthropic's multipliers: reads 0.1×, 5-minute writes
// 1.25×, 1-hour writes 2× (app/pricing). The fields match pricing.Price one for one (the app
// converts between them).
type ModelPrice struct {
	Input        float64  `json:"input"`
	Output       float64  `json:"output"`
	CacheRead    *float64 `json:"cache_read,omitempty"`
	CacheWrite   *float64 `json:"cache_write,omitempty"`    // 5-minute TTL, the default
	CacheWrite1h *float64 `json:"cache_write_1h,omitempty"` // 1-hour TTL
}

// maxPricePerMillion bounds a price: far above any list price ($75 is the highest below), so
// a slip (a price per billion tokens, a stray digit) is refused rather than shown as a fortune.
const maxPricePerMillion = 10_000

// validatePricing reports the first invalid entry of the price table, in pattern order.
func validatePricing(p PricingSettings) error {
	for _, pattern := range sortedKeys(p.Table) {
		if pattern == "" {
			return &ValidationError{Field: "pricing.table", Message: "model pattern must not be empty"}
		}
		m := p.Table[pattern]
		for _, f := range []struct {
			name string
			v    *float64
		}{{"input", &m.Input}, {"output", &m.Output}, {"cache_read", m.CacheRead}, {"cache_write", m.CacheWrite}, {"cache_write_1h", m.CacheWrite1h}} {
			if f.v != nil && (math.IsNaN(*f.v) || *f.v < 0 || *f.v > maxPricePerMillion) {
				return &ValidationError{Field: "pricing.table." + pattern,
					Message: fmt.Sprintf("%s must be between 0 and %d US dollars per million tokens", f.name, maxPricePerMillion)}
			}
		}
	}
	return nil
}

func usd(v float64) *float64 { return &v }

// DefaultPrices is the price table of a fresh install: list prices, in US dollars per million
// tokens, of the model families Longhaul serves, as read on 2026-11-26 from stored copies of
// the vendors' pages and, where those were missing, of published price tables that cite them.
//
//   - Anthropic, from its pricing page (English and Chinese copies agree): Opus 4.5–4.8 $5 in,
//     $25 out, cache reads $0.50, 5-minute writes $6.25, 1-hour writes $10; Opus 4 and 4.1 $15 /
//     $75 / $1.50 / $18.75 / $30; Sonnet 4, 4.5 and 4.6 $3 / $15 / $0.30 / $3.75 / $6; Haiku 4.5
//     $1 / $5 / $0.10 / $1.25 / $2. Sonnet's higher price for prompts over 200k tokens (the 1M
//     window) was not in the copy and is not modelled.
//   - OpenAI, from its model pages: GPT-5 (and 5.1) $1.25 in, $0.125 cached, $10 out; GPT-5 nano
//     $0.05 / $0.005 / $0.40. From tables citing its pricing page (its own page was not in the
//     copy): GPT-5 mini $0.25 / $0.025 / $2; GPT-5.2 $1.75 / $0.175 / $14; GPT-5.4 $2.50 / $0.25 /
//     $15; GPT-5.4 mini $0.75 / $0.075 / $4.50; GPT-5.5 $5 / $0.50 / $30; GPT-4.1 $2 / $0.50 / $8;
//     GPT-4.1 mini $0.40 / $1.60 and nano $0.10 / $0.40 out, cached at a quarter of input as
//     GPT-4.1 is ($0.10, $0.025); o3 $2 / $0.50 / $8; o3-mini $1.10 / $0.55 / $4.40 (o3-pro's price was not found: it
//     is priced as o3, below its list price); o4-mini $1.10 in, $4.40 out, its cached
//     price not found: a quarter of input, as o3's ($0.275). OpenAI bills no cache writes (its
//     usage reports none), so a write is priced as input.
//   - Google, from tables citing the Gemini API pricing page (not in the copy): 2.5 Pro $1.25
//     in, $10 out for prompts up to 200k tokens (above: $2.50 / $15, not modelled), 2.5 Flash
//     $0.30 / $2.50, 2.5 Flash-Lite $0.10 / $0.40; cached input at a tenth of input ($0.125,
//     $0.03, $0.01). Gemini bills cache storage per hour rather than writes: a write is priced
//     as input.
//
// Each call returns a new map.
func DefaultPrices() map[string]ModelPrice {
	anthropic := func(in, out float64) ModelPrice {
		return ModelPrice{Input: in, Output: out, CacheRead: usd(in / 10), CacheWrite: usd(in * 1.25), CacheWrite1h: usd(in * 2)}
	}
	// noWrites is a vendor that bills cached input at cached and charges nothing extra to
	// write the cache.
	noWrites := func(in, cached, out float64) ModelPrice {
		return ModelPrice{Input: in, Output: out, CacheRead: usd(cached), CacheWrite: usd(in), CacheWrite1h: usd(in)}
	}
	return map[string]ModelPrice{
		"claude-opus-4*":         anthropic(5, 25),
		"claude-opus-4-0*":       anthropic(15, 75),
		"claude-opus-4-1*":       anthropic(15, 75),
		"claude-opus-4-2025*":    anthropic(15, 75), // claude-opus-4-20250514, Opus 4's dated name
		"claude-sonnet-4*":       anthropic(3, 15),
		"claude-haiku-4*":        anthropic(1, 5),
		"gpt-5*":                 noWrites(1.25, 0.125, 10),
		"gpt-5-mini*":            noWrites(0.25, 0.025, 2),
		"gpt-5-nano*":            noWrites(0.05, 0.005, 0.40),
		"gpt-5.2*":               noWrites(1.75, 0.175, 14),
		"gpt-5.4*":               noWrites(2.50, 0.25, 15),
		"gpt-5.4-mini*":          noWrites(0.75, 0.075, 4.50),
		"gpt-5.5*":               noWrites(5, 0.50, 30),
		"gpt-4.1*":               noWrites(2, 0.50, 8),
		"gpt-4.1-mini*":          noWrites(0.40, 0.10, 1.60),
		"gpt-4.1-nano*":          noWrites(0.10, 0.025, 0.40),
		"o3*":                    noWrites(2, 0.50, 8),
		"o3-mini*":               noWrites(1.10, 0.55, 4.40),
		"o4-mini*":               noWrites(1.10, 0.275, 4.40),
		"gemini-2.5-pro*":        noWrites(1.25, 0.125, 10),
		"gemini-2.5-flash*":      noWrites(0.30, 0.03, 2.50),
		"gemini-2.5-flash-lite*": noWrites(0.10, 0.01, 0.40),
	}
}
