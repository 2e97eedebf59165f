package recorder

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"longhaul/app/internal/wait"
	"longhaul/proxy"
	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
	"longhaul/store"
)

func TestStreamDurationCoversTheWholeStreamAndTTFBIsApart(t *testing.T) {
	f := newFixture(t, Options{})
	msg := proxytest.TextMessage("claude-sonnet-4-5", "one two three four five six seven eight")
	msg.ChunkSize = 4
	f.up.Enqueue(proxytest.Reply{Message: msg, EventGap: 20 * time.Millisecond})
	start := time.Now()
	resp, _ := f.post(t, messagesBody(true, "s-stream"))
	elapsed := time.Since(start)
	e := f.waitRecorded(t, resp.Header.Get("Longhaul-Request-Id"))
	events := len(msg.Events())
	minStream := time.Duration(events-1) * 20 * time.Millisecond
	if e.Duration < minStream || e.Duration > elapsed {
		t.Errorf("duration = %v; want the whole stream: ≥ %v (%d events 20 ms apart) and ≤ %v seen by the client", e.Duration, minStream, events, elapsed)
	}
	if e.TTFB <= 0 || e.TTFB > e.Duration-minStream/2 {
		t.Errorf("ttfb = %v, duration %v; want the first byte well before the end", e.TTFB, e.Duration)
	}
	if e.StreamOutcome != "complete" || e.Status != 200 || e.AccountName != "work" || len(e.Attempts) != 1 || e.SessionID != "s-stream" {
		t.Errorf("record = %+v; want a complete 200 stream on account work with one attempt", e)
	}
	if e.Bodies == nil || !strings.Contains(e.Bodies.Reply, `"text":"one two three four five six seven eight"`) || strings.Contains(e.Bodies.Reply, "event:") {
		t.Errorf("reply body = %+v; want the reconstructed message, not SSE", e.Bodies)
	}
}

func TestClientHangUpIsRecordedAsSuch(t *testing.T) {
	f := newFixture(t, Options{})
	f.up.Enqueue(proxytest.Reply{Message: proxytest.ManyEvents(20, ""), StallAfter: 3})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.front.URL+"/v1/messages", strings.NewReader(messagesBody(true, "s-hangup")))
	resp, err := f.front.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	id := resp.Header.Get("Longhaul-Request-Id")
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil { // the stream has started
		t.Fatal(err)
	}
	started := time.Now() // the proxy started the exchange before this first byte…
	// The stalled stream stays open a measurable while; no assertion waits on this, it only
	// makes the lower bound below worth checking.
	time.Sleep(50 * time.Millisecond)
	open := time.Since(started)
	cancel() // …and ends it after this hang-up: its duration is at least open
	resp.Body.Close()
	e := f.waitRecorded(t, id)
	if e.StreamOutcome != "client_cancelled" || e.Status != 499 || e.ErrorType != "client_cancelled" || e.TTFB <= 0 || e.Duration < open || e.Duration <= e.TTFB {
		t.Errorf("record = outcome %q status %d error %q ttfb %v duration %v; want client_cancelled 499 after a first byte, lasting until the hang-up (≥ %v)",
			e.StreamOutcome, e.Status, e.ErrorType, e.TTFB, e.Duration, open)
	}
}

// TestPlantedSecretsInHeadersAndBodiesNeverReachTheFile sends secrets the way clients do (key
// headers, a user agent, the prompt) through the real proxy, then scans every byte of the
// database file and its WAL, and the decompressed export.
func TestPlantedSecretsInHeadersAndBodiesNeverReachTheFile(t *testing.T) {
	f := newFixture(t, Options{})
	secrets := []string{
		"sk-ant-api03-CLIENTkeyPLANTED0000000000000000000-abcd",
		"PLANTEDbearerTOKEN0123456789abcdefghij",
		"sk-proj-PLANTEDinPROMPT0123456789abcdef",
		"AIzaSyPLANTEDgoogleKEY0123456789abcdefg",
		upstreamKey,
	}
	body := `{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"keys: ` + secrets[2] + ` ` + secrets[3] + ` Authorization: Bearer ` + secrets[1] + `"}]}`
	for _, stream := range []bool{false, true} {
		b := body
		if stream {
			b = strings.Replace(b, `"max_tokens":64`, `"max_tokens":64,"stream":true`, 1)
		}
		f.up.Enqueue(proxytest.Reply{Message: proxytest.TextMessage("claude-sonnet-4-5", "I saw "+secrets[2]+" and "+secrets[3])})
		resp, _ := f.post(t, b, "X-Api-Key", secrets[0], "Authorization", "Bearer "+secrets[1], "User-Agent", "script/1.0 key="+secrets[0])
		e := f.waitRecorded(t, resp.Header.Get("Longhaul-Request-Id"))
		if e.Bodies == nil || !strings.Contains(e.Bodies.Request, "…[redacted]") || !strings.Contains(e.Bodies.Reply, "…[redacted]") {
			t.Errorf("stream=%t bodies = %+v; want stored, with secrets masked", stream, e.Bodies)
		}
	}
	var export bytes.Buffer
	if _, err := f.st.ExportExchanges(context.Background(), store.HistoryFilter{}, &export); err != nil {
		t.Fatal(err)
	}
	scanned := map[string][]byte{"export": export.Bytes()}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if b, err := os.ReadFile(f.path + suffix); err == nil {
			scanned[filepath.Base(f.path+suffix)] = b
		}
	}
	for name, b := range scanned {
		for _, s := range secrets { // the upstream key too: the fixture keeps accounts out of the file
			if n := bytes.Count(b, []byte(s)); n != 0 {
				t.Errorf("%s holds planted secret %q %d times; want 0", name, s, n)
			}
		}
	}
}

// TestCompactionIsRecorded sends a request whose tool result is over the compressor's cap
// through the real proxy and pipeline: history must show the step, the tokens it saved, the
// pressure before and after, and both bodies (as received and as forwarded).
func TestCompactionIsRecorded(t *testing.T) {
	f := newFixture(t, Options{})
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
	var bodies store.Bodies
	if e.Bodies != nil {
		bodies = *e.Bodies
	}
	if !strings.Contains(bodies.Request, big) || bodies.Forwarded == "" || len(bodies.Forwarded) >= len(bodies.Request) {
		t.Errorf("bodies: request %d bytes, forwarded %d bytes; want the original and the shorter rewrite", len(bodies.Request), len(bodies.Forwarded))
	}
	// The ledger: the compressor's edit names the tool result in the request as received.
	if got := e.Compaction[0].Edits; len(got) != 1 || got[0].Kind != "result-shortened" || got[0].Message != 2 ||
		got[0].Block != 0 || got[0].Note != "toolu_01" || got[0].TokensAfter >= got[0].TokensBefore || !strings.HasPrefix(got[0].Before, "log line") {
		t.Errorf("tool-results step edits = %+v; want one result-shortened edit of messages[2].content[0] (toolu_01)", got)
	}
	ctx := context.Background()
	page, err := f.st.ListExchanges(ctx, store.HistoryFilter{Compacted: true})
	if err != nil || len(page.Exchanges) != 1 || page.Exchanges[0].ID != e.ID {
		t.Errorf("compacted filter = %+v, %v; want this exchange", page.Exchanges, err)
	}
	stats, err := f.st.HistoryStats(ctx, time.Now().Add(-time.Hour), time.Time{}, "hour", nil)
	if err != nil || stats.Total.TokensSaved != int64(e.TokensSaved) {
		t.Errorf("stats tokens saved = %d, %v; want %d", stats.Total.TokensSaved, err, e.TokensSaved)
	}
}

// TestModelMapIsInTheLedgerNotInTheLayers: a mapped request records the rename in its ledger
// (model asked → model sent) but is no compaction: no layer, nothing saved, not in the
// "compacted" filter the dashboard and sessions count by.
func TestModelMapIsInTheLedgerNotInTheLayers(t *testing.T) {
	f := newFixture(t, Options{})
	def := store.DefaultSettings().History
	if err := f.srv.Reconfigure(proxy.Config{CaptureBodies: def.StoreBodies, MaxCaptureBytes: def.MaxBodyBytes,
		ModelMap: []pool.ModelMapping{{Pattern: "claude-sonnet-4-5", Model: "claude-sonnet-4-5-20250929"}}}); err != nil {
		t.Fatal(err)
	}
	resp, _ := f.post(t, messagesBody(false, "mapped"))
	e := f.waitRecorded(t, resp.Header.Get("Longhaul-Request-Id"))
	if len(e.Layers) != 0 || e.TokensSaved != 0 {
		t.Errorf("layers %v, saved %d; want none: a model map is no compaction", e.Layers, e.TokensSaved)
	}
	want := []store.CompactionStep{{Layer: proxy.StepModelMap, Items: 1, Edits: []store.Edit{{Kind: "model-renamed", Message: -1, Through: -1, Block: -1,
		Count: 1, Before: "claude-sonnet-4-5", After: "claude-sonnet-4-5-20250929", Note: "proxy.model_map"}}}}
	if !reflect.DeepEqual(e.Compaction, want) {
		t.Errorf("steps = %+v; want %+v", e.Compaction, want)
	}
	page, err := f.st.ListExchanges(context.Background(), store.HistoryFilter{Compacted: true})
	if err != nil || len(page.Exchanges) != 0 {
		t.Errorf("compacted filter = %+v, %v; want no exchange", page.Exchanges, err)
	}
}

func TestRetentionLoopEnablesIncrementalVacuum(t *testing.T) {
	f := newFixture(t, Options{RetentionEvery: 20 * time.Millisecond})
	// A connection caches the mode it read from the header, so each poll opens its own.
	mode := func() int {
		db, err := sql.Open("sqlite", "file:"+f.path+"?_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var m int
		if err := db.QueryRow(`PRAGMA auto_vacuum`).Scan(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	// 2 is INCREMENTAL, which the background loop switches the database to.
	wait.Until(t, "auto_vacuum = 2 (INCREMENTAL), set by the retention loop", func() bool { return mode() == 2 })
}
