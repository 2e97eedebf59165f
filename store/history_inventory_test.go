package store

import (
	"context"
	"slices"
	"testing"
	"time"
)

// summaryCall is the exchange the proxy records for a Layer-3 summary call it made on
// parent's behalf: its own account, tokens and route, linked by ParentID.
func summaryCall(parent Exchange, id string, at time.Time) Exchange {
	e := fullExchange(0, at)
	e.ID, e.ParentID, e.Route, e.Path = id, parent.ID, "summary", "/v1/messages"
	e.SessionID, e.UserAgent = parent.SessionID, parent.UserAgent
	e.Model, e.ModelSent = "claude-haiku-4-5", "claude-haiku-4-5"
	e.AccountID, e.AccountName = 2, "home"
	e.InputTokens, e.OutputTokens = 40000, 800
	e.Layers, e.Compaction, e.TokensSaved, e.Bodies = []string{}, nil, 0, nil
	e.Tools, e.ToolTokens, e.ToolsCalled, e.ToolUseIDs = 0, 0, []string{}, []string{}
	return e
}

func TestSummaryCallIsAChildExchange(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	parent := fullExchange(1, testNow)
	parent.Layers = []string{"Layer-3"}
	child := summaryCall(parent, "lh_sum_1", testNow.Add(time.Second))
	other := fullExchange(2, testNow.Add(2*time.Second))
	writeAll(t, st, parent, child, other)

	got, err := st.Exchange(ctx, parent.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Children) != 1 || got.Children[0].ID != child.ID || got.Children[0].ParentID != parent.ID ||
		got.Children[0].AccountName != "home" || got.Children[0].InputTokens != 40000 || got.Children[0].OutputTokens != 800 {
		t.Fatalf("Exchange(parent).Children = %+v; want the summary call with its account and tokens", got.Children)
	}
	if got.Children[0].Bodies != nil || got.Children[0].Attempts != nil {
		t.Errorf("a child is a list row; got detail %+v", got.Children[0])
	}
	if c, err := st.Exchange(ctx, child.ID); err != nil || c.ParentID != parent.ID || c.Route != "summary" || len(c.Children) != 0 {
		t.Errorf("Exchange(child) = parent %q route %q children %d, %v; want linked to %s", c.ParentID, c.Route, len(c.Children), err, parent.ID)
	}
	if o, err := st.Exchange(ctx, other.ID); err != nil || o.Children != nil {
		t.Errorf("Exchange(unrelated).Children = %+v, %v; want none", o.Children, err)
	}
	page, err := st.ListExchanges(ctx, HistoryFilter{Parent: parent.ID})
	if err != nil || len(page.Exchanges) != 1 || page.Exchanges[0].ID != child.ID {
		t.Errorf("ListExchanges(parent %s) = %+v, %v; want the one child", parent.ID, page.Exchanges, err)
	}

	stats, err := st.HistoryStats(ctx, testNow, testNow.Add(time.Hour), "hour", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantIn := parent.InputTokens + child.InputTokens + other.InputTokens
	if stats.Total.Requests != 3 || stats.Total.SummaryCalls != 1 || stats.Total.InputTokens != wantIn {
		t.Errorf("stats total = %d requests, %d summary calls, %d input tokens; want 3, 1, %d (the summary call counted with its tokens)",
			stats.Total.Requests, stats.Total.SummaryCalls, stats.Total.InputTokens, wantIn)
	}
	i := slices.IndexFunc(stats.ByModel, func(r StatsRow) bool { return r.Key == "claude-haiku-4-5" })
	if i < 0 || stats.ByModel[i].SummaryCalls != 1 || stats.ByModel[i].InputTokens != 40000 {
		t.Errorf("stats by model = %+v; want the summary model's row with its call", stats.ByModel)
	}
}

func TestSessionToolInventory(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	first := fullExchange(3, testNow) // session sess-0
	first.Tools, first.ToolsCalled = 12, []string{"read_file", "bash"}
	quiet := fullExchange(6, testNow.Add(time.Second))
	quiet.Tools, quiet.ToolsCalled = 12, []string{}
	last := fullExchange(9, testNow.Add(2*time.Second))
	last.Tools, last.ToolTokens, last.ToolsCalled = 40, 12000, []string{"edit", "read_file"}
	sum := summaryCall(last, "lh_sum_9", testNow.Add(3*time.Second)) // the latest row, but not a client's
	writeAll(t, st, first, quiet, last, sum)

	sessions, err := st.Sessions(ctx, testNow, 10, nil)
	if err != nil || len(sessions) != 1 {
		t.Fatalf("Sessions = %+v, %v; want one", sessions, err)
	}
	s := sessions[0]
	if want := []string{"read_file", "bash", "edit"}; !slices.Equal(s.ToolsCalled, want) {
		t.Errorf("ToolsCalled = %q; want %q (each once, first-called order)", s.ToolsCalled, want)
	}
	if s.Tools != 40 || s.ToolTokens != 12000 || s.LastModel != last.Model {
		t.Errorf("latest offered = %d tools (%d tokens), model %q; want the latest client request's 40 (12000), not the summary call's",
			s.Tools, s.ToolTokens, s.LastModel)
	}
	if s.Requests != 4 || s.SummaryCalls != 1 {
		t.Errorf("requests %d, summary calls %d; want 4 and 1", s.Requests, s.SummaryCalls)
	}
}

// A request refused before forwarding (a guard's 401, an unknown method) is recorded as one
// finished record, never preceded by a started one.
func TestFinishedRecordWithoutStarted(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	refused := Exchange{ID: "lh_refused", State: "finished", Route: "messages", Method: "POST", Path: "/v1/messages",
		Start: testNow, End: testNow.Add(time.Millisecond), Status: 401, ErrorType: "authentication_error",
		ErrorMessage: "invalid x-api-key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"}
	writeAll(t, st, refused)
	got, err := st.Exchange(ctx, refused.ID)
	if err != nil || got.State != "finished" || got.Status != 401 || !got.Failed || got.HasBodies || got.Bodies != nil {
		t.Fatalf("Exchange(refused) = %+v, %v; want a finished, failed 401 without bodies", got, err)
	}
	if got.ErrorMessage == refused.ErrorMessage {
		t.Errorf("error message stored unredacted: %q", got.ErrorMessage)
	}
	page, err := st.ListExchanges(ctx, HistoryFilter{StatusClass: "error"})
	if err != nil || len(page.Exchanges) != 1 || page.Exchanges[0].ID != refused.ID {
		t.Errorf("error filter = %+v, %v; want the refused request", page.Exchanges, err)
	}
}
