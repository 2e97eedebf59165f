package door

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"longhaul/app/internal/wait"
	"longhaul/app/recorder"
	"longhaul/proxy/proxytest"
	"longhaul/store"
)

// cachedReply is a reply whose usage reports every kind of input token, as a long Claude Code
// session's do: a little new input, a large cached prefix, a few tokens written to the cache.
func cachedReply() proxytest.Reply {
	m := proxytest.TextMessage(proxytest.DefaultModel, "Done.")
	m.Usage = proxytest.Usage{InputTokens: 12_000, OutputTokens: 2_000, CacheReadInputTokens: 140_000, CacheCreationInputTokens: 3_000}
	return proxytest.Reply{Message: m}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// The history's rows, the live feed, the sessions and the dashboard all carry the cost of the
// reported tokens at the price table's prices (the default: Sonnet 4.x at $3 in, $15 out,
// $0.30 cache reads, $3.75 cache writes per million), and follow a change of the table.
func TestDoorHistoryCosts(t *testing.T) {
	f := newFixture(t, recorder.Options{LiveEvery: 20 * time.Millisecond})
	f.up.SetDefault(cachedReply())
	ctx, cancel := context.WithTimeout(context.Background(), wait.Timeout)
	defer cancel()
	liveReq, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.door.URL+"/longhaul/v1/history/live", nil)
	liveResp, err := http.DefaultClient.Do(liveReq)
	if err != nil {
		t.Fatal(err)
	}
	defer liveResp.Body.Close()
	ids := recordThree(t, f)
	// 12k × $3 + 2k × $15 + 140k × $0.30 + 3k × $3.75, per million.
	const each = 0.036 + 0.030 + 0.042 + 0.01125

	live := bufio.NewReader(liveResp.Body)
	for priced := false; !priced; {
		line, err := live.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var batch []store.Exchange
		if err := json.Unmarshal([]byte(data), &batch); err != nil {
			t.Fatalf("live batch %q: %v", data, err)
		}
		for _, e := range batch {
			if e.State == "finished" {
				if e.Cost == nil || !near(e.Cost.Total, each) {
					t.Fatalf("live row %s cost = %+v; want total %v", e.ID, e.Cost, each)
				}
				priced = true
			}
		}
	}

	var page store.HistoryPage
	f.getJSON(t, "/longhaul/v1/history", &page)
	if len(page.Exchanges) != 3 {
		t.Fatalf("list = %+v; want 3 rows", page.Exchanges)
	}
	for _, e := range page.Exchanges {
		if e.Cost == nil || !near(e.Cost.Total, each) || !near(e.Cost.CacheRead, 0.042) || !near(e.Cost.CacheWrite, 0.01125) {
			t.Errorf("list row %s cost = %+v; want %v in all, 0.042 of cache reads, 0.01125 of cache writes", e.ID, e.Cost, each)
		}
	}
	var detail store.Exchange
	if f.getJSON(t, "/longhaul/v1/history/"+ids[0], &detail); detail.Cost == nil || !near(detail.Cost.Input, 0.036) || !near(detail.Cost.Output, 0.030) {
		t.Errorf("detail cost = %+v; want 0.036 of input, 0.030 of output", detail.Cost)
	}
	var sessions []store.Session
	f.getJSON(t, "/longhaul/v1/sessions", &sessions)
	if len(sessions) != 2 || sessions[0].ID != "beta" || sessions[0].Cost == nil || !near(sessions[0].Cost.Total, 2*each) ||
		len(sessions[0].Models) != 1 || sessions[0].Models[0].CacheReadTokens != 280_000 {
		t.Errorf("sessions = %+v; want beta at twice one request's cost, one model with 280k cache reads", sessions)
	}
	var stats store.Stats
	if f.getJSON(t, "/longhaul/v1/stats?bucket=day", &stats); stats.Total.Cost == nil || !near(stats.Total.Cost.Total, 3*each) ||
		stats.Total.CacheReadTokens != 420_000 || stats.Total.CacheWriteTokens != 9_000 || stats.Total.InputTokens != 36_000 {
		t.Errorf("stats total = %+v (cost %+v); want 3 requests' tokens by kind and cost", stats.Total, stats.Total.Cost)
	}

	// Halve the price of Sonnet's input: the same rows are priced anew.
	if _, err := f.st.SetSetting(context.Background(), "pricing.table.claude-sonnet-4*", `{"input":1.5,"output":15,"cache_read":0.3,"cache_write":3.75}`); err != nil {
		t.Fatal(err)
	}
	if err := f.app.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.getJSON(t, "/longhaul/v1/history/"+ids[0], &detail); detail.Cost == nil || !near(detail.Cost.Total, each-0.018) {
		t.Errorf("detail cost after the input price was halved = %+v; want %v", detail.Cost, each-0.018)
	}
	// A model the table does not price shows no cost, rather than a cost of zero.
	if _, err := f.st.SetSetting(context.Background(), "pricing.table", `{"gpt-*":{"input":1,"output":1}}`); err != nil {
		t.Fatal(err)
	}
	if err := f.app.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	var unpriced store.Stats
	if f.getJSON(t, "/longhaul/v1/stats?bucket=day", &unpriced); unpriced.Total.Cost != nil || unpriced.Total.UnpricedRequests != 3 {
		t.Errorf("stats without a price for the model: cost %+v, unpriced %d; want none, 3", unpriced.Total.Cost, unpriced.Total.UnpricedRequests)
	}
}
