package app

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"longhaul/store"
)

// TestCompactionIsRecorded sends a request whose tool result is over the compressor's cap
// through the real proxy and pipeline: history must show the step, the tokens it saved, the
// pressure before and after, and both bodies (as received and as forwarded).
func TestCompactionIsRecorded(t *testing.T) {
	f := newHistoryFixture(t, RecorderOptions{})
	big := strings.Repeat("log line ", 30000) // 270,000 characters: over the 200,000 cap
	body := `{"model":"claude-sonnet-4-5","max_tokens":64,"metadata":{"user_id":"user_x_account_y_session_compacted"},"messages":[` +
		`{"role":"user","content":"read the log"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"read","input":{"path":"/var/log/x"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"` + big + `"}]}]}`
	resp, _ := f.post(t, body)
	e := f.waitRecorded(t, resp.Header.Get("Longhaul-Request-Id"))
	if !slices.Contains(e.Layers, "tool-results") || e.TokensSaved <= 0 || len(e.Compaction) == 0 || e.Compaction[0].Items < 1 {
		t.Fatalf("compaction in history: layers %v, saved %d, steps %+v; want the tool-results step with its savings", e.Layers, e.TokensSaved, e.Compaction)
	}
	if e.ContextLimit != 200000 || e.TokensBefore <= e.TokensAfter || e.PressureBefore <= e.PressureAfter || e.PressureAfter <= 0 {
		t.Errorf("pressure: limit %d, tokens %d → %d, ratio %v → %v; want 200000 and a drop", e.ContextLimit, e.TokensBefore, e.TokensAfter, e.PressureBefore, e.PressureAfter)
	}
	if e.Bodies == nil || !strings.Contains(e.Bodies.Request, big) || e.Bodies.Forwarded == "" || len(e.Bodies.Forwarded) >= len(e.Bodies.Request) {
		t.Errorf("bodies: request %d bytes, forwarded %d bytes; want the original and the shorter rewrite", len(bodyOf(e).Request), len(bodyOf(e).Forwarded))
	}
	ctx := context.Background()
	page, err := f.st.ListExchanges(ctx, store.HistoryFilter{Compacted: true})
	if err != nil || len(page.Exchanges) != 1 || page.Exchanges[0].ID != e.ID {
		t.Errorf("compacted filter = %+v, %v; want this exchange", page.Exchanges, err)
	}
	stats, err := f.st.HistoryStats(ctx, time.Now().Add(-time.Hour), time.Time{}, "hour")
	if err != nil || stats.Total.TokensSaved != int64(e.TokensSaved) {
		t.Errorf("stats tokens saved = %d, %v; want %d", stats.Total.TokensSaved, err, e.TokensSaved)
	}
}

func bodyOf(e store.Exchange) store.Bodies {
	if e.Bodies == nil {
		return store.Bodies{}
	}
	return *e.Bodies
}
