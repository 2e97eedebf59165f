package store

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// replayOf is the exchange the proxy records when a user re-sends original from the history:
// a new request of the same session, uncompacted here, linked by ReplayOf.
func replayOf(original Exchange, id string, at time.Time) Exchange {
	e := fullExchange(0, at)
	e.ID, e.ReplayOf = id, original.ID
	e.SessionID, e.Model = original.SessionID, original.Model
	e.Layers, e.Compaction, e.TokensSaved = []string{}, nil, 0
	e.AccountID, e.AccountName = 2, "home"
	return e
}

func TestReplayIsLinkedToTheExchangeItReSent(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	original := fullExchange(1, testNow)
	first := replayOf(original, "lh_replay_1", testNow.Add(time.Second))
	other := fullExchange(2, testNow.Add(2*time.Second))
	second := replayOf(original, "lh_replay_2", testNow.Add(3*time.Second))
	writeAll(t, st, original, first, other, second)

	got, err := st.Exchange(ctx, original.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Replays) != 2 || got.Replays[0].ID != first.ID || got.Replays[1].ID != second.ID {
		t.Fatalf("Exchange(original).Replays = %+v; want %s then %s", got.Replays, first.ID, second.ID)
	}
	if r := got.Replays[0]; r.ReplayOf != original.ID || r.AccountName != "home" || r.Bodies != nil || r.Attempts != nil {
		t.Errorf("Replays[0] = of %q account %q bodies %v attempts %v; want a list row of %s on home", r.ReplayOf, r.AccountName, r.Bodies, r.Attempts, original.ID)
	}
	if got.ReplayOf != "" || len(got.Children) != 0 {
		t.Errorf("Exchange(original) = replay of %q, children %+v; want neither", got.ReplayOf, got.Children)
	}
	r, err := st.Exchange(ctx, first.ID)
	if err != nil || r.ReplayOf != original.ID || r.Replays != nil {
		t.Errorf("Exchange(replay) = of %q, replays %+v, %v; want of %s with none", r.ReplayOf, r.Replays, err, original.ID)
	}
	if o, err := st.Exchange(ctx, other.ID); err != nil || o.Replays != nil || o.ReplayOf != "" {
		t.Errorf("Exchange(unrelated) = of %q, replays %+v, %v; want no link", o.ReplayOf, o.Replays, err)
	}

	page, err := st.ListExchanges(ctx, HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	marked := map[string]string{}
	for _, e := range page.Exchanges {
		marked[e.ID] = e.ReplayOf
	}
	want := map[string]string{original.ID: "", first.ID: original.ID, other.ID: "", second.ID: original.ID}
	for id, of := range want {
		if marked[id] != of {
			t.Errorf("ListExchanges: %s replay of %q; want %q", id, marked[id], of)
		}
	}
}

func TestReplayIsNeverTheSessionsLatestExchange(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	original := fullExchange(1, testNow)
	replay := replayOf(original, "lh_replay_1", testNow.Add(time.Second))
	writeAll(t, st, original, replay)
	for _, session := range []string{original.SessionID, ""} {
		got, err := st.LatestExchange(ctx, session)
		if err != nil || got.ID != original.ID {
			t.Errorf("LatestExchange(%q) = %s, %v; want the original %s, not its replay", session, got.ID, err, original.ID)
		}
	}
}

// TestReplayKeepsItsLinkWhenItsStartedRowIsReplaced: the finished record of a replay
// replaces the started one in place (the upsert) and keeps replay_of.
func TestReplayKeepsItsLinkWhenItsStartedRowIsReplaced(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	original := fullExchange(1, testNow)
	replay := replayOf(original, "lh_replay_1", testNow.Add(time.Second))
	started := replay
	started.State, started.Status, started.Bodies, started.Attempts = "started", 0, nil, nil
	writeAll(t, st, original, started)
	writeAll(t, st, replay)
	got, err := st.Exchange(ctx, original.ID)
	if err != nil || len(got.Replays) != 1 || got.Replays[0].State != "finished" || got.Replays[0].ReplayOf != original.ID {
		t.Errorf("Exchange(original).Replays = %+v, %v; want the one finished replay", got.Replays, err)
	}
}

// Replays are the user's experiments, not the session's traffic: adding replays (failed ones,
// compacted ones, on another model, with a Layer-3 summary call of their own) to a session
// changes none of its figures nor the dashboard's, only the counts of replays beside them.
func TestReplaysChangeNoSessionOrDashboardTotal(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	var traffic []Exchange
	for i := range 9 {
		traffic = append(traffic, fullExchange(i, testNow.Add(time.Duration(i)*10*time.Minute)))
	}
	child := fullExchange(20, testNow.Add(11*time.Minute)) // a summary call of the session's own
	child.ParentID, child.Route, child.SessionID = traffic[1].ID, "summary", traffic[1].SessionID
	writeAll(t, st, append(traffic, child)...)
	p := rates{"claude-sonnet-4-5-20250929": 1, "claude-opus-4-5": 5}
	since, until := testNow.Add(-time.Hour), testNow.Add(24*time.Hour)

	views := func() ([]Session, Stats, StatsSeries) {
		t.Helper()
		sessions, err := st.Sessions(ctx, since, 10, p)
		if err != nil {
			t.Fatal(err)
		}
		stats, err := st.HistoryStats(ctx, since, until, "hour", p)
		if err != nil {
			t.Fatal(err)
		}
		series, err := st.HistoryStatsSeries(ctx, since, until, "hour", "model", p)
		if err != nil {
			t.Fatal(err)
		}
		return sessions, stats, series
	}
	beforeSessions, beforeStats, beforeSeries := views()

	// Replays of sess-1's requests, later than anything else: a failed one on another model,
	// a compacted one (tokens saved, layers fired) with its own summary call.
	failed := replayOf(traffic[1], "lh_replay_failed", testNow.Add(3*time.Hour))
	failed.ModelSent, failed.Status, failed.ErrorType = "claude-opus-4-5", 529, "overloaded_error"
	compacted := replayOf(traffic[4], "lh_replay_compacted", testNow.Add(3*time.Hour+time.Minute))
	compacted.Layers, compacted.TokensSaved, compacted.Tools = []string{"Layer-2"}, 90_000, 99
	replayChild := fullExchange(21, testNow.Add(3*time.Hour+2*time.Minute))
	replayChild.ParentID, replayChild.Route, replayChild.SessionID = compacted.ID, "summary", compacted.SessionID
	replayChild.ModelSent, replayChild.Layers, replayChild.Compaction, replayChild.TokensSaved = "claude-opus-4-5", []string{}, nil, 0
	writeAll(t, st, failed, compacted, replayChild)

	afterSessions, afterStats, afterSeries := views()
	for i := range afterSessions {
		if afterSessions[i].ID == "sess-1" {
			if afterSessions[i].Replays != 2 {
				t.Errorf("sess-1 replays = %d; want 2", afterSessions[i].Replays)
			}
			afterSessions[i].Replays = 0
		}
	}
	if !reflect.DeepEqual(afterSessions, beforeSessions) {
		t.Errorf("sessions after replays =\n%+v\nwant as before\n%+v", afterSessions, beforeSessions)
	}
	replays := afterStats.Replays
	afterStats.Replays = StatsRow{}
	if !reflect.DeepEqual(afterStats, beforeStats) {
		t.Errorf("stats after replays =\n%+v\nwant as before\n%+v", afterStats, beforeStats)
	}
	if !reflect.DeepEqual(afterSeries, beforeSeries) {
		t.Errorf("series after replays =\n%+v\nwant as before\n%+v", afterSeries, beforeSeries)
	}
	// Counted apart: both replays and the summary call one of them caused.
	wantTokens := failed.InputTokens + compacted.InputTokens + replayChild.InputTokens
	if replays.Requests != 3 || replays.Errors != 1 || replays.SummaryCalls != 1 || replays.TokensSaved != 90_000 ||
		replays.InputTokens != wantTokens || replays.Cost == nil || replays.UnpricedRequests != 0 {
		t.Errorf("stats replays = %+v; want 3 requests (one failed, one summary call), 90000 saved, %d input tokens, priced", replays, wantTokens)
	}
	if beforeStats.Replays.Requests != 0 || beforeStats.Replays.Cost != nil {
		t.Errorf("stats replays before any = %+v; want none", beforeStats.Replays)
	}
}
