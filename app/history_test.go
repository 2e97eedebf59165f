package app

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"longhaul/proxy"
	"longhaul/proxy/proxytest"
	"longhaul/store"
)

// historyFixture is the whole recording path: a scripted upstream, the real proxy in front of
// it observed by a Recorder, the App running (recorder, retention, live relay), a real SQLite
// file, and the door.
type historyFixture struct {
	st    *store.Store
	path  string
	rec   *Recorder
	srv   *proxy.Server
	up    *proxytest.Upstream
	front *httptest.Server
	door  *httptest.Server
	app   *App
}

const upstreamKey = "sk-ant-api03-UPSTREAMaccountKEY0000000000000000-wxyz"

func newHistoryFixture(t *testing.T, opts RecorderOptions) *historyFixture {
	t.Helper()
	ctx := context.Background()
	f := &historyFixture{path: filepath.Join(t.TempDir(), "longhaul.db")}
	var err error
	if f.st, err = store.Open(ctx, f.path); err != nil {
		t.Fatal(err)
	}
	f.up = proxytest.NewUpstream()
	if _, err := f.st.AddAccount(ctx, store.Account{Label: "work", BaseURL: f.up.URL, Secret: upstreamKey, Enabled: true, Weight: 1}); err != nil {
		t.Fatal(err)
	}
	f.rec = NewRecorder(f.st, opts)
	if f.srv, err = proxy.New(proxy.Config{}, proxy.Options{Observer: f.rec}); err != nil {
		t.Fatal(err)
	}
	f.app = New(Deps{Store: f.st, Proxy: f.srv, Recorder: f.rec, Overrides: Overrides{Port: 1}})
	if err := f.app.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	f.front = httptest.NewServer(f.srv.Handler())
	f.door = httptest.NewServer(f.app.Door(fstest.MapFS{}))
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { f.app.Run(runCtx); close(done) }()
	t.Cleanup(func() {
		f.up.Release()
		f.front.Close()
		f.door.Close()
		cancel()
		<-done
		if err := f.app.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		f.up.Close()
		f.st.Close()
	})
	return f
}

func (f *historyFixture) post(t *testing.T, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.front.URL+"/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.front.Client().Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("read reply: %v", err)
	}
	return resp, string(b)
}

// waitRecorded waits until the exchange is in the database, finished.
func (f *historyFixture) waitRecorded(t *testing.T, id string) store.Exchange {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		e, err := f.st.Exchange(context.Background(), id)
		if err == nil && e.State == "finished" {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("exchange %s not recorded as finished within 5s: %+v, %v", id, e, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (f *historyFixture) getJSON(t *testing.T, path string, v any) int {
	t.Helper()
	resp, err := http.Get(f.door.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil && resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: decode: %v", path, err)
		}
	}
	return resp.StatusCode
}

func messagesBody(stream bool, session string) string {
	s := "false"
	if stream {
		s = "true"
	}
	return `{"model":"claude-sonnet-4-5","max_tokens":64,"stream":` + s + `,"metadata":{"user_id":"user_x_account_y_session_` + session + `"},"messages":[{"role":"user","content":"hi"}]}`
}

func TestStreamDurationCoversTheWholeStreamAndTTFBIsApart(t *testing.T) {
	f := newHistoryFixture(t, RecorderOptions{})
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
	f := newHistoryFixture(t, RecorderOptions{})
	f.up.Enqueue(proxytest.Reply{Message: proxytest.ManyEvents(20, ""), StallAfter: 3})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.front.URL+"/v1/messages", strings.NewReader(messagesBody(true, "s-hangup")))
	resp, err := f.front.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	id := resp.Header.Get("Longhaul-Request-Id")
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil { // the stream has started
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	cancel()
	resp.Body.Close()
	e := f.waitRecorded(t, id)
	if e.StreamOutcome != "client_cancelled" || e.Status != 499 || e.ErrorType != "client_cancelled" || e.TTFB <= 0 || e.Duration < 50*time.Millisecond {
		t.Errorf("record = outcome %q status %d error %q ttfb %v duration %v; want client_cancelled 499 after a first byte",
			e.StreamOutcome, e.Status, e.ErrorType, e.TTFB, e.Duration)
	}
}

// TestPlantedSecretsInHeadersAndBodiesNeverReachTheFile sends secrets the way clients do (key
// headers, a user agent, the prompt) through the real proxy, then scans every byte of the
// database file and its WAL, and the decompressed export.
func TestPlantedSecretsInHeadersAndBodiesNeverReachTheFile(t *testing.T) {
	f := newHistoryFixture(t, RecorderOptions{})
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
		for _, s := range secrets {
			if s == upstreamKey && name != "export" {
				continue // the accounts table holds it by design; history must not
			}
			if n := bytes.Count(b, []byte(s)); n != 0 {
				t.Errorf("%s holds planted secret %q %d times; want 0", name, s, n)
			}
		}
	}
}

func TestRecorderNeverBlocksAndCountsDrops(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "longhaul.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec := NewRecorder(st, RecorderOptions{QueueSize: 4})
	done := make(chan struct{})
	go func() {
		for i := range 10 { // nothing drains the queue: Run is not running
			rec.Observe(proxy.Exchange{ID: "lh_" + string(rune('a'+i)), State: proxy.ExchangeFinished, Start: time.Now()})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("Observe blocked on a full queue")
	}
	if s := rec.Stats(); s.Dropped != 6 || s.Queued != 4 {
		t.Errorf("stats = %+v; want 6 dropped, 4 queued", s)
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	page, err := st.ListExchanges(context.Background(), store.HistoryFilter{})
	if err != nil || len(page.Exchanges) != 4 {
		t.Errorf("after Flush: %d rows, %v; want the 4 queued", len(page.Exchanges), err)
	}
}

func TestFeedDropsSlowSubscriberWithoutBlocking(t *testing.T) {
	feed := newFeed()
	slow, _ := feed.Subscribe()
	fast, unsubscribe := feed.Subscribe()
	defer unsubscribe()
	got := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range fast {
			got++
			if got == feedBuffer+10 {
				return
			}
		}
	}()
	for i := range feedBuffer + 10 {
		feed.publish([]store.Exchange{{ID: string(rune('a' + i))}})
		time.Sleep(time.Millisecond)
	}
	<-done
	n := 0
	for range slow { // closed once it fell behind; what it had stays readable
		n++
	}
	if n != feedBuffer {
		t.Errorf("slow subscriber got %d batches before being dropped; want %d", n, feedBuffer)
	}
}

func TestDoorHistoryRoutes(t *testing.T) {
	f := newHistoryFixture(t, RecorderOptions{LiveEvery: 20 * time.Millisecond})
	// The live feed first, so it sees the requests below.
	liveResp, err := http.Get(f.door.URL + "/longhaul/v1/history/live")
	if err != nil {
		t.Fatal(err)
	}
	defer liveResp.Body.Close()
	var ids []string
	for i, sess := range []string{"alpha", "beta", "beta"} {
		resp, _ := f.post(t, messagesBody(i%2 == 0, sess))
		ids = append(ids, resp.Header.Get("Longhaul-Request-Id"))
	}
	for _, id := range ids {
		f.waitRecorded(t, id)
	}
	live := bufio.NewReader(liveResp.Body)
	seen := map[string]string{}
	deadline := time.Now().Add(5 * time.Second)
	for len(seen) < 3 || seen[ids[2]] != "finished" {
		if time.Now().After(deadline) {
			t.Fatalf("live feed saw %v; want all three exchanges finished", seen)
		}
		line, err := live.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var batch []store.Exchange
			if err := json.Unmarshal([]byte(data), &batch); err != nil {
				t.Fatalf("live batch %q: %v", data, err)
			}
			for _, e := range batch {
				seen[e.ID] = e.State
			}
		}
	}

	var page store.HistoryPage
	if code := f.getJSON(t, "/longhaul/v1/history?session=beta&limit=1", &page); code != 200 || len(page.Exchanges) != 1 || page.Exchanges[0].ID != ids[2] || page.Next == 0 {
		t.Errorf("list = %d %+v; want the newest beta exchange and a cursor", code, page)
	}
	var next store.HistoryPage
	f.getJSON(t, "/longhaul/v1/history?session=beta&limit=1&before="+strconv.FormatInt(page.Next, 10), &next)
	if len(next.Exchanges) != 1 || next.Exchanges[0].ID != ids[1] || next.Next != 0 {
		t.Errorf("second page = %+v; want the older beta exchange, last page", next)
	}
	var detail store.Exchange
	if code := f.getJSON(t, "/longhaul/v1/history/"+ids[0], &detail); code != 200 || detail.Bodies == nil || len(detail.Attempts) != 1 {
		t.Errorf("detail = %d %+v; want bodies and attempts", code, detail)
	}
	if code := f.getJSON(t, "/longhaul/v1/history/lh_nope", nil); code != 404 {
		t.Errorf("detail of an unknown id = %d; want 404", code)
	}
	if code := f.getJSON(t, "/longhaul/v1/history?status=teapot", nil); code != 400 {
		t.Errorf("bad status filter = %d; want 400", code)
	}
	var sessions []store.Session
	if f.getJSON(t, "/longhaul/v1/sessions", &sessions); len(sessions) != 2 || sessions[0].ID != "beta" || sessions[0].Requests != 2 || sessions[0].BoundAccount != "work" {
		t.Errorf("sessions = %+v; want beta (2 requests) then alpha", sessions)
	}
	var stats store.Stats
	if f.getJSON(t, "/longhaul/v1/stats?bucket=day", &stats); stats.Total.Requests != 3 || len(stats.ByAccount) != 1 || stats.ByAccount[0].Key != "work" {
		t.Errorf("stats = %+v; want 3 requests on account work", stats)
	}
	for _, path := range []string{"/longhaul/v1/pressure", "/longhaul/v1/sessions/latest/pressure", "/longhaul/v1/sessions/beta/pressure"} {
		var p Pressure
		if code := f.getJSON(t, path, &p); code != 200 || p.Session != "beta" || p.Limit != 200000 || p.NextLayer != "Layer-1" || p.NextThreshold != 0.4 || p.Account != "work" || !p.Bound {
			t.Errorf("GET %s = %d %+v; want session beta, limit 200000, next Layer-1 at 0.4, bound to work", path, code, p)
		}
	}
	if code := f.getJSON(t, "/longhaul/v1/sessions/nobody/pressure", nil); code != 404 {
		t.Errorf("pressure of an unknown session = %d; want 404", code)
	}
	var status HistoryStatus
	if f.getJSON(t, "/longhaul/v1/history/status", &status); status.Dropped != 0 || status.Written < 3 || status.DatabaseBytes == 0 {
		t.Errorf("history status = %+v; want no drops, ≥ 3 written, a size", status)
	}
	resp, err := http.Get(f.door.URL + "/longhaul/v1/history/export?session=beta")
	if err != nil {
		t.Fatal(err)
	}
	exported, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if lines := strings.Split(strings.TrimSpace(string(exported)), "\n"); len(lines) != 2 || !strings.Contains(lines[0], ids[1]) {
		t.Errorf("export = %q; want 2 lines, oldest first", exported)
	}
}

func TestPressureNextLayer(t *testing.T) {
	for _, tc := range []struct {
		ratio float64
		cfg   proxy.CompactionConfig
		layer string
		at    float64
	}{
		{0.1, proxy.CompactionConfig{}, "Layer-1", 0.4},
		{0.45, proxy.CompactionConfig{}, "Layer-2", 0.55},
		{0.6, proxy.CompactionConfig{}, "Layer-3", 0.7},
		{0.75, proxy.CompactionConfig{}, "", 0},
		{0.45, proxy.CompactionConfig{ThresholdL1: 0.5, ThresholdL2: 0.6, ThresholdL3: 0.9}, "Layer-1", 0.5},
	} {
		var layer string
		var at float64
		for i, th := range thresholds(tc.cfg) {
			if tc.ratio < th {
				layer, at = []string{"Layer-1", "Layer-2", "Layer-3"}[i], th
				break
			}
		}
		if layer != tc.layer || at != tc.at {
			t.Errorf("next layer at ratio %v with %+v = %q at %v; want %q at %v", tc.ratio, tc.cfg, layer, at, tc.layer, tc.at)
		}
	}
}

func TestCLIHistoryExport(t *testing.T) {
	f := newHistoryFixture(t, RecorderOptions{})
	var ids []string
	for _, sess := range []string{"one", "two"} {
		resp, _ := f.post(t, messagesBody(false, sess))
		ids = append(ids, resp.Header.Get("Longhaul-Request-Id"))
	}
	for _, id := range ids {
		f.waitRecorded(t, id)
	}
	var out, errOut bytes.Buffer
	cli := &CLI{Stdout: &out, Stderr: &errOut, DataDir: filepath.Dir(f.path),
		Open: func(ctx context.Context, dir string) (*store.Store, error) {
			return store.Open(ctx, filepath.Join(dir, "longhaul.db"))
		}}
	if err := cli.Run(context.Background(), []string{"history", "export", "--session", "two", "--since", "2000-01-01T00:00:00Z"}); err != nil {
		t.Fatalf("history export: %v (%s)", err, errOut.String())
	}
	var e store.Exchange
	if err := json.Unmarshal(out.Bytes(), &e); err != nil || e.ID != ids[1] || e.Bodies == nil || !strings.Contains(e.Bodies.Reply, "Hello from proxytest.") {
		t.Errorf("export = %q, %v; want one line: the session two exchange with its decompressed reply", out.String(), err)
	}
	err := cli.Run(context.Background(), []string{"history", "export", "--since", "yesterday"})
	if err == nil || errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "RFC 3339") {
		t.Errorf("export --since yesterday = %v; want an RFC 3339 error", err)
	}
}

func TestStoreBodiesOffKeepsNoBodies(t *testing.T) {
	f := newHistoryFixture(t, RecorderOptions{})
	ctx := context.Background()
	if _, err := f.st.SetSetting(ctx, "history.store_bodies", "false"); err != nil {
		t.Fatal(err)
	}
	if err := f.app.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if f.srv.Config().CaptureBodies {
		t.Fatal("proxy still captures bodies with history.store_bodies off")
	}
	for _, stream := range []bool{false, true} {
		resp, _ := f.post(t, messagesBody(stream, "nobodies"))
		e := f.waitRecorded(t, resp.Header.Get("Longhaul-Request-Id"))
		if e.HasBodies || e.Bodies != nil {
			t.Errorf("stream=%t: bodies = %+v; want none with history.store_bodies off", stream, e.Bodies)
		}
	}
}

func TestRetentionLoopEnablesIncrementalVacuum(t *testing.T) {
	f := newHistoryFixture(t, RecorderOptions{RetentionEvery: 20 * time.Millisecond})
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
	deadline := time.Now().Add(5 * time.Second)
	for {
		m := mode()
		if m == 2 {
			return // the background loop switched the database over
		}
		if time.Now().After(deadline) {
			t.Fatalf("auto_vacuum = %d after 5 s; want 2 (INCREMENTAL), set by the retention loop", m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
