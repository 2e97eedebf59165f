package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestHistoryStatsSeriesPerAccountAndModel(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	var batch []Exchange
	for i := range 12 { // 20 minutes apart: 3 per hour; accounts alternate work/home
		e := fullExchange(i, testNow.Add(time.Duration(i)*20*time.Minute))
		if i >= 6 {
			e.ModelSent = "claude-opus-4-5"
		}
		if i == 11 {
			e.Status, e.ErrorType = 529, "overloaded_error"
		}
		batch = append(batch, e)
	}
	started := fullExchange(99, testNow)
	started.State = "started"
	writeAll(t, st, append(batch, started)...)

	s, err := st.HistoryStatsSeries(ctx, testNow, testNow.Add(24*time.Hour), "hour", "account", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, r := range s.Rows {
		got[fmt.Sprintf("%s@%d", r.Key, r.Bucket.Sub(testNow)/time.Hour)] = r.Requests
	}
	want := map[string]int64{"work@0": 2, "home@0": 1, "work@1": 1, "home@1": 2, "work@2": 2, "home@2": 1, "work@3": 1, "home@3": 2}
	if fmt.Sprint(got) != fmt.Sprint(want) || s.By != "account" || s.Bucket != "hour" {
		t.Errorf("series by account = %v (%s/%s); want %v", got, s.By, s.Bucket, want)
	}

	m, err := st.HistoryStatsSeries(ctx, testNow, testNow.Add(24*time.Hour), "day", "model", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Rows) != 2 || m.Rows[0].Key != "claude-opus-4-5" || m.Rows[0].Requests != 6 || m.Rows[0].Errors != 1 ||
		m.Rows[1].Key != "claude-sonnet-4-5-20250929" || m.Rows[1].Requests != 6 {
		t.Errorf("series by model per day = %+v", m.Rows)
	}
	if _, err := st.HistoryStatsSeries(ctx, testNow, time.Time{}, "week", "account", nil); err == nil {
		t.Error("bucket week accepted")
	}
	if _, err := st.HistoryStatsSeries(ctx, testNow, time.Time{}, "hour", "session", nil); err == nil {
		t.Error("by session accepted")
	}
}

// The "error" and "ok" filters (SQL) and HasFailed (Go, what the UI colours rows by) are one
// rule written twice; every combination of the fields it reads must land on the same side.
func TestFailedRuleIsOneRule(t *testing.T) {
	st, _ := openTemp(t)
	var all []Exchange
	i := 0
	for _, state := range []string{"started", "finished"} {
		for _, status := range []int{0, 200, 399, 400, 529} {
			for _, errType := range []string{"", "api_error"} {
				for _, outcome := range []string{"", "complete", "client_cancelled", "upstream_error"} {
					e := fullExchange(i, testNow.Add(time.Duration(i)*time.Millisecond))
					e.State, e.Status, e.ErrorType, e.StreamOutcome = state, status, errType, outcome
					all = append(all, e)
					i++
				}
			}
		}
	}
	writeAll(t, st, all...)
	ids := func(class string) map[string]bool {
		t.Helper()
		page, err := st.ListExchanges(context.Background(), HistoryFilter{StatusClass: class, Limit: len(all)})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, e := range page.Exchanges {
			out[e.ID] = true
			if e.Failed != e.HasFailed() {
				t.Errorf("read %s: Failed = %t; want HasFailed() = %t", e.ID, e.Failed, e.HasFailed())
			}
		}
		return out
	}
	failed, ok := ids("error"), ids("ok")
	for _, e := range all {
		if got := failed[e.ID]; got != e.HasFailed() {
			t.Errorf("state %s status %d error %q outcome %q: in the \"error\" filter = %t; HasFailed() = %t", e.State, e.Status, e.ErrorType, e.StreamOutcome, got, e.HasFailed())
		}
		if want := e.State == "finished" && !e.HasFailed(); ok[e.ID] != want {
			t.Errorf("state %s status %d error %q outcome %q: in the \"ok\" filter = %t; want %t", e.State, e.Status, e.ErrorType, e.StreamOutcome, ok[e.ID], want)
		}
	}
}
