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

	s, err := st.HistoryStatsSeries(ctx, testNow, testNow.Add(24*time.Hour), "hour", "account")
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

	m, err := st.HistoryStatsSeries(ctx, testNow, testNow.Add(24*time.Hour), "day", "model")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Rows) != 2 || m.Rows[0].Key != "claude-opus-4-5" || m.Rows[0].Requests != 6 || m.Rows[0].Errors != 1 ||
		m.Rows[1].Key != "claude-sonnet-4-5-20250929" || m.Rows[1].Requests != 6 {
		t.Errorf("series by model per day = %+v", m.Rows)
	}
	if _, err := st.HistoryStatsSeries(ctx, testNow, time.Time{}, "week", "account"); err == nil {
		t.Error("bucket week accepted")
	}
	if _, err := st.HistoryStatsSeries(ctx, testNow, time.Time{}, "hour", "session"); err == nil {
		t.Error("by session accepted")
	}
}
