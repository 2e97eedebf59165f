package app

import (
	"longhaul/app/pricing"
	"longhaul/store"
)

// The store knows no prices: its views take a store.Pricer, and the rows it hands out are
// priced here (History.List, History.Detail) and in the recorder's live feed, all from the
// price table of the settings (pricing.table), built once per settings change (App.Reload).

// storePricer prices the store's views with a price table.
type storePricer struct{ table *pricing.Table }

var _ store.Pricer = storePricer{}

func (p storePricer) Price(model string, t store.Tokens) (store.Cost, bool) {
	c, ok := p.table.Cost(model, pricing.Usage{Input: t.Input, Output: t.Output, CacheRead: t.CacheRead, CacheWrite: t.CacheWrite})
	// The conversion compiles while the two Cost types have the same fields: the store's is
	// the JSON the UI reads, pricing's the arithmetic.
	return store.Cost(c), ok
}

// priceTable builds the price table of the settings.
func priceTable(s store.PricingSettings) *pricing.Table {
	prices := make(map[string]pricing.Price, len(s.Table))
	for pattern, p := range s.Table {
		prices[pattern] = pricing.Price(p)
	}
	return pricing.New(prices)
}

// pricer is the price table in force, for the history views.
func (a *App) pricer() store.Pricer {
	return storePricer{a.prices.Load()}
}
