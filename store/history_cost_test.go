package store

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// rates is a Pricer for tests: a model's rate in dollars per token of every kind but output,
// which costs twice as much. A model without a rate has no price. Rates are whole numbers, so
// sums are exact.
type rates map[string]float64

func (r rates) Price(model string, t Tokens) (Cost, bool) {
	rate, ok := r[model]
	if !ok {
		return Cost{}, false
	}
	c := Cost{Input: float64(t.Input) * rate, Output: float64(t.Output) * 2 * rate,
		CacheRead: float64(t.CacheRead) * rate, CacheWrite: float64(t.CacheWrite) * rate}
	c.Total = c.Input + c.Output + c.CacheRead + c.CacheWrite
	return c, true
}

func costOf(in, out, cr, cw float64) *Cost {
	return &Cost{Input: in, Output: out, CacheRead: cr, CacheWrite: cw, Total: in + out + cr + cw}
}

// usageExchange is a finished request of session on model (as sent), with its tokens.
func usageExchange(id, session, account, model string, start time.Time, t Tokens) Exchange {
	return Exchange{ID: id, State: "finished", Route: "messages", SessionID: session, AccountName: account,
		Model: "asked-" + model, ModelSent: model, Start: start, Status: 200, StreamOutcome: "complete",
		InputTokens: t.Input, OutputTokens: t.Output, CacheReadTokens: t.CacheRead, CacheWriteTokens: t.CacheWrite}
}

func TestExchangePriceUsesTheModelSent(t *testing.T) {
	p := rates{"sent": 1, "asked": 100}
	tests := []struct {
		name string
		e    Exchange
		want *Cost
	}{
		{"the model sent upstream prices it", Exchange{Model: "asked", ModelSent: "sent", InputTokens: 3, OutputTokens: 2, CacheReadTokens: 5, CacheWriteTokens: 7},
			costOf(3, 4, 5, 7)},
		{"the model asked for when none was sent", Exchange{Model: "asked", InputTokens: 1}, costOf(100, 0, 0, 0)},
		{"a model without a price has no cost", Exchange{ModelSent: "unknown", InputTokens: 1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.e.Cost = &Cost{Total: -1} // a stale cost is replaced
			tt.e.Price(p)
			if !reflect.DeepEqual(tt.e.Cost, tt.want) {
				t.Errorf("Price: Cost = %+v; want %+v", tt.e.Cost, tt.want)
			}
		})
	}
	e := Exchange{ModelSent: "sent", InputTokens: 1,
		Children: []Exchange{{ModelSent: "sent", OutputTokens: 1}}, Replays: []Exchange{{ModelSent: "asked", InputTokens: 1}}}
	e.Price(p)
	if !reflect.DeepEqual(e.Children[0].Cost, costOf(0, 2, 0, 0)) || !reflect.DeepEqual(e.Replays[0].Cost, costOf(100, 0, 0, 0)) {
		t.Errorf("Price: children %+v, replays %+v; want each priced", e.Children[0].Cost, e.Replays[0].Cost)
	}
	e.Price(nil)
	if e.Cost != nil || e.Children[0].Cost != nil {
		t.Error("Price(nil) left a cost")
	}
}

// A session or group that used two models is priced model by model, not at one price for
// all its tokens; a model without a price is counted apart, never as free.
func TestViewsPriceEachModelAtItsOwnPrice(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	at := func(m int) time.Time { return testNow.Add(time.Duration(m) * time.Minute) }
	writeAll(t, st,
		usageExchange("lh_1", "s1", "work", "cheap", at(0), Tokens{Input: 10, Output: 1, CacheRead: 100, CacheWrite: 20}),
		usageExchange("lh_2", "s1", "work", "dear", at(1), Tokens{Input: 10, Output: 1}),
		usageExchange("lh_3", "s1", "home", "cheap", at(70), Tokens{Input: 5}),
		usageExchange("lh_4", "s1", "home", "unpriced", at(71), Tokens{Input: 1000}),
	)
	p := rates{"cheap": 1, "dear": 10}

	sessions, err := st.Sessions(ctx, testNow, 10, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 1 {
		t.Fatalf("Sessions = %+v; want one", sessions)
	}
	s := sessions[0]
	wantModels := []ModelUsage{
		{Model: "cheap", Requests: 2, InputTokens: 15, OutputTokens: 1, CacheReadTokens: 100, CacheWriteTokens: 20, Cost: costOf(15, 2, 100, 20)},
		{Model: "dear", Requests: 1, InputTokens: 10, OutputTokens: 1, Cost: costOf(100, 20, 0, 0)},
		{Model: "unpriced", Requests: 1, InputTokens: 1000},
	}
	if !reflect.DeepEqual(s.Models, wantModels) {
		t.Errorf("session models = %+v; want %+v", s.Models, wantModels)
	}
	if want := costOf(115, 22, 100, 20); !reflect.DeepEqual(s.Cost, want) || s.UnpricedRequests != 1 {
		t.Errorf("session cost = %+v, unpriced %d; want %+v, 1", s.Cost, s.UnpricedRequests, want)
	}

	stats, err := st.HistoryStats(ctx, testNow, testNow.Add(24*time.Hour), "hour", p)
	if err != nil {
		t.Fatal(err)
	}
	if want := costOf(115, 22, 100, 20); !reflect.DeepEqual(stats.Total.Cost, want) || stats.Total.UnpricedRequests != 1 || stats.Total.Requests != 4 {
		t.Errorf("total = %+v (cost %+v); want cost %+v, 1 unpriced of 4", stats.Total, stats.Total.Cost, want)
	}
	byAccount := map[string]*Cost{}
	for _, r := range stats.ByAccount {
		byAccount[r.Key] = r.Cost
	}
	if !reflect.DeepEqual(byAccount, map[string]*Cost{"work": costOf(110, 22, 100, 20), "home": costOf(5, 0, 0, 0)}) {
		t.Errorf("cost by account = %v", byAccount)
	}
	if len(stats.ByAccount) != 2 || stats.ByAccount[0].Key != "home" || stats.ByAccount[0].UnpricedRequests != 1 {
		t.Errorf("by account = %+v; want home (one unpriced request) then work: as many requests, by name", stats.ByAccount)
	}
	if len(stats.ByModel) != 3 || stats.ByModel[0].Key != "cheap" || stats.ByModel[0].Requests != 2 || stats.ByModel[2].Cost != nil {
		t.Errorf("by model = %+v; want cheap (2) first, the unpriced model without a cost", stats.ByModel)
	}
	if len(stats.ByTime) != 2 || !reflect.DeepEqual(stats.ByTime[0].Cost, costOf(110, 22, 100, 20)) || !reflect.DeepEqual(stats.ByTime[1].Cost, costOf(5, 0, 0, 0)) {
		t.Errorf("by hour = %+v; want the first hour's two models and the second's priced one", stats.ByTime)
	}

	series, err := st.HistoryStatsSeries(ctx, testNow, testNow.Add(24*time.Hour), "hour", "account", p)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range series.Rows {
		keys = append(keys, r.Key)
	}
	if !reflect.DeepEqual(keys, []string{"work", "home"}) || !reflect.DeepEqual(series.Rows[0].Cost, costOf(110, 22, 100, 20)) {
		t.Errorf("series by account = %+v; want work (hour 0) then home (hour 1), priced", series.Rows)
	}

	unpriced, err := st.HistoryStats(ctx, testNow, testNow.Add(24*time.Hour), "hour", nil)
	if err != nil || unpriced.Total.Cost != nil || unpriced.Total.UnpricedRequests != 4 {
		t.Errorf("stats without a pricer: total %+v, %v; want no cost and every request unpriced", unpriced.Total, err)
	}
}
