package store

import (
	"context"
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
