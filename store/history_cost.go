package store

// Tokens are tokens by kind as the upstream bills them, each counted once: Input is the
// uncached part of the prompt, CacheRead the part read from the prompt cache, CacheWrite the
// part written to it.
type Tokens struct {
	Input, Output, CacheRead, CacheWrite int64
}

// Cost is an estimate, in US dollars, of what tokens cost, by kind. The store never computes
// one: it knows no prices. The views that show a cost take a Pricer (the app's price table,
// app/pricing), and the app prices the rows it hands out (Exchange.Price).
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
}

func (c Cost) add(d Cost) Cost {
	return Cost{Input: c.Input + d.Input, Output: c.Output + d.Output, CacheRead: c.CacheRead + d.CacheRead,
		CacheWrite: c.CacheWrite + d.CacheWrite, Total: c.Total + d.Total}
}

// Pricer estimates what tokens of a model (the model as sent upstream) cost; ok is false for
// a model it has no price for. A nil Pricer prices nothing.
type Pricer interface {
	Price(model string, t Tokens) (c Cost, ok bool)
}

// pricedModelSQL is the model an exchange's tokens are priced by, as SQL: the model sent
// upstream (after the model map), or the one asked for when none was sent. pricedModel is
// the same rule in Go.
const pricedModelSQL = "coalesce(nullif(model_sent, ''), model)"

func (e *Exchange) pricedModel() string {
	if e.ModelSent != "" {
		return e.ModelSent
	}
	return e.Model
}

// Tokens are the exchange's tokens by kind.
func (e *Exchange) Tokens() Tokens {
	return Tokens{Input: e.InputTokens, Output: e.OutputTokens, CacheRead: e.CacheReadTokens, CacheWrite: e.CacheWriteTokens}
}

// Price sets the estimated Cost of e and of the summary calls and replays it lists, by p; a
// model p has no price for leaves Cost nil.
func (e *Exchange) Price(p Pricer) {
	e.Cost = priceOf(p, e.pricedModel(), e.Tokens())
	for i := range e.Children {
		e.Children[i].Price(p)
	}
	for i := range e.Replays {
		e.Replays[i].Price(p)
	}
}

// priceOf is p's price of t on model, nil when p has none (or p is nil).
func priceOf(p Pricer, model string, t Tokens) *Cost {
	if p == nil {
		return nil
	}
	c, ok := p.Price(model, t)
	if !ok {
		return nil
	}
	return &c
}

// pricedSum accumulates the costs of a group's models; the requests of a model without a
// price are counted as unpriced instead.
type pricedSum struct {
	cost     *Cost
	unpriced int64
}

func (s *pricedSum) add(c *Cost, requests int64) {
	if c == nil {
		s.unpriced += requests
		return
	}
	if s.cost == nil {
		s.cost = &Cost{}
	}
	*s.cost = s.cost.add(*c)
}
