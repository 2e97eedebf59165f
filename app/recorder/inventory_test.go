package recorder

import (
	"context"
	"slices"
	"testing"

	"longhaul/app/internal/wait"
	"longhaul/proxy"
	"longhaul/store"
)

// A request the guard refuses (no client key) reaches the recorder as one finished record
// with no started record before it: it is written, failed, without bodies.
func TestRefusedRequestIsRecordedWithoutAStartedRecord(t *testing.T) {
	f := newFixture(t, Options{})
	def := store.DefaultSettings().History
	if err := f.srv.Reconfigure(proxy.Config{ClientKey: "lh-key-0001", CaptureBodies: def.StoreBodies, MaxCaptureBytes: def.MaxBodyBytes}); err != nil {
		t.Fatal(err)
	}
	resp, _ := f.post(t, messagesBody(false, "refused"))
	if resp.StatusCode != 401 {
		t.Fatalf("status without the client key = %d; want 401", resp.StatusCode)
	}
	var rows []store.Exchange
	wait.Until(t, "the refused request recorded", func() bool {
		page, err := f.st.ListExchanges(context.Background(), store.HistoryFilter{})
		rows = page.Exchanges
		return err == nil && len(rows) > 0
	})
	e := rows[0]
	if len(rows) != 1 || e.State != "finished" || e.Status != 401 || !e.Failed || e.ErrorType == "" || e.HasBodies {
		t.Errorf("recorded %d rows, first %+v; want one finished, failed 401 with its reason and no body", len(rows), e)
	}
	if got := len(f.up.Requests()); got != 0 {
		t.Errorf("upstream saw %d requests; want none", got)
	}
}

// The tool inventory of a request goes from the proxy to the row: how many tools it offered,
// their estimated tokens, and (a session's) the tools called.
func TestToolInventoryIsRecorded(t *testing.T) {
	f := newFixture(t, Options{})
	tools := `[{"name":"read_file","description":"read a file","input_schema":{"type":"object"}},` +
		`{"name":"bash","description":"run a command","input_schema":{"type":"object"}}]`
	body := `{"model":"claude-sonnet-4-5","max_tokens":64,"tools":` + tools + `,"metadata":{"user_id":"user_x_account_y_session_inv"},"messages":[{"role":"user","content":"hi"}]}`
	resp, _ := f.post(t, body)
	e := f.waitRecorded(t, resp.Header.Get("Longhaul-Request-Id"))
	if e.Tools != 2 || e.ToolTokens <= 0 || e.ToolsCalled == nil {
		t.Errorf("recorded tools %d (%d tokens), called %v; want 2 offered with an estimate", e.Tools, e.ToolTokens, e.ToolsCalled)
	}
	sessions, err := f.st.Sessions(context.Background(), e.Start.Add(-1), 10, nil)
	if i := slices.IndexFunc(sessions, func(s store.Session) bool { return s.ID == e.SessionID }); err != nil || i < 0 || sessions[i].Tools != 2 {
		t.Errorf("sessions = %+v, %v; want session %q offering 2 tools", sessions, err, e.SessionID)
	}
}
