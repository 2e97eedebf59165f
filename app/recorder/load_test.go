package recorder

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"longhaul/proxy"
	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
	"longhaul/store"
)

// loadTarget is a proxy under load and the latencies its clients saw.
type loadTarget struct {
	name  string
	front *httptest.Server
	mu    sync.Mutex
	lat   []time.Duration
	ids   []string
	fails int
}

func newLoadTarget(tb testing.TB, name string, upstream string, cfg proxy.Config, obs proxy.Observer) *loadTarget {
	tb.Helper()
	srv, err := proxy.New(cfg, proxy.Options{Observer: obs})
	if err != nil {
		tb.Fatal(err)
	}
	srv.SetAccounts([]pool.Account{{ID: 1, Label: "load", Kind: "anthropic", BaseURL: upstream, Secret: "sk-ant-load-upstream-000000000001", Enabled: true}})
	t := &loadTarget{name: name, front: httptest.NewServer(srv.Handler())}
	tb.Cleanup(t.front.Close)
	return t
}

// send runs one request and records its latency (to the last byte of the reply).
func (t *loadTarget) send(client *http.Client, i int) {
	body := messagesBody(i%2 == 0, "load-"+strconv.Itoa(i%50))
	start := time.Now()
	resp, err := client.Post(t.front.URL+"/v1/messages", "application/json", strings.NewReader(body))
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	d := time.Since(start)
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.fails++
		return
	}
	t.lat = append(t.lat, d)
	t.ids = append(t.ids, resp.Header.Get("Longhaul-Request-Id"))
}

// summary reports the median, the 99th percentile, the mean and the mean of the fastest 99%
// (a stall of the shared machine that happens to hit a few more requests of one proxy moves
// the plain mean, not the trimmed one).
func (t *loadTarget) summary() (p50, p99, mean, trimmed time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lat) == 0 {
		return 0, 0, 0, 0
	}
	s := slices.Clone(t.lat)
	slices.Sort(s)
	var sum, sum99 time.Duration
	n99 := len(s) * 99 / 100
	for i, d := range s {
		sum += d
		if i < n99 {
			sum99 += d
		}
	}
	trimmed = sum / time.Duration(len(s))
	if n99 > 0 {
		trimmed = sum99 / time.Duration(n99)
	}
	return s[len(s)/2], s[len(s)*99/100], sum / time.Duration(len(s)), trimmed
}

// drive sends rate requests per second to on for d, and every offEvery-th of them to off as
// well, at the same moment, so that both see the same machine: a stall of the shared host
// lands on both samples. It is open-loop: requests start on schedule, whatever the previous
// ones are doing, as real clients would.
func drive(client *http.Client, rate int, d time.Duration, on, off *loadTarget, offEvery int) {
	var wg sync.WaitGroup
	start := time.Now()
	total := int(d.Seconds() * float64(rate))
	sent := 0
	for sent < total {
		due := min(total, int(time.Since(start).Seconds()*float64(rate))+1)
		for ; sent < due; sent++ {
			i := sent
			wg.Go(func() { on.send(client, i) })
			if off != nil && i%offEvery == 0 {
				wg.Go(func() { off.send(client, i/offEvery) }) // its own count: streams alternate too
			}
		}
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
}

// TestRecorderKeepsEveryExchangeWhileTheWriterIsStalled proves the recorder's promises by
// counting, not by the clock: with the database locked by another connection (the writer
// cannot commit anything), every request still completes — so the request path never waits on
// the writer — and once the lock is gone every exchange, from that phase and from one with the
// writer free, is in the database, finished, with nothing dropped. (The latency figure under
// 500 requests/s is BenchmarkHistoryUnderLoad's, run by `make bench`.)
func TestRecorderKeepsEveryExchangeWhileTheWriterIsStalled(t *testing.T) {
	perPhase := 1000
	if raceEnabled {
		perPhase = 200
	}
	r := newLoadRig(t)
	rec := r.rec
	on := newLoadTarget(t, "recorder on", r.up.URL, proxy.Config{CaptureBodies: true}, rec)
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 64, MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()

	unlock := lockDatabase(t, r.path)
	sendAll(client, on, 0, perPhase)
	if len(on.ids) != perPhase || on.fails != 0 {
		t.Fatalf("with the writer stalled: %d requests ok, %d failed; want all %d ok", len(on.ids), on.fails, perPhase)
	}
	if s := rec.Stats(); s.Written != 0 {
		t.Fatalf("the writer committed %d records through another connection's write lock; the test proves nothing", s.Written)
	}
	unlock()
	sendAll(client, on, perPhase, perPhase)
	r.stop()

	if len(on.ids) != 2*perPhase || on.fails != 0 {
		t.Fatalf("requests ok: %d (failed %d); want %d", len(on.ids), on.fails, 2*perPhase)
	}
	stats := rec.Stats()
	if stats.Dropped != 0 || stats.Queued != 0 {
		t.Errorf("recorder stats = %+v; want nothing dropped and nothing left queued", stats)
	}
	if missing := r.missing(on.ids); missing != 0 {
		t.Errorf("%d of the %d exchanges served are missing from the database or unfinished; want none", missing, 2*perPhase)
	}
	t.Logf("%d requests with the writer stalled, %d with it free: %d written in %d failed and retried batches, none dropped", perPhase, perPhase, stats.Written, stats.Failures)
}

// lockDatabase takes SQLite's write lock on another connection (as another process could)
// until the returned function is called.
func lockDatabase(t *testing.T, path string) (unlock func()) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	unlock = func() {
		once.Do(func() {
			if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
				t.Error(err)
			}
			conn.Close()
			db.Close()
		})
	}
	t.Cleanup(unlock)
	return unlock
}

// sendAll sends n requests (numbered from first) through to, 32 at a time, and returns when all
// have finished.
func sendAll(client *http.Client, to *loadTarget, first, n int) {
	work := make(chan int)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := range work {
				to.send(client, i)
			}
		})
	}
	for i := first; i < first+n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
}

// loadRig is what the load tests share: a scripted upstream (not keeping bodies) and a
// running recorder writing to a real SQLite file.
type loadRig struct {
	tb   testing.TB
	up   *proxytest.Upstream
	path string
	st   *store.Store
	rec  *Recorder
	stop func() // ends Run and commits what is left (once)
}

func newLoadRig(tb testing.TB) *loadRig {
	tb.Helper()
	r := &loadRig{tb: tb, up: proxytest.NewUpstream(), path: filepath.Join(tb.TempDir(), "longhaul.db")}
	r.up.SetRecordBodies(false)
	tb.Cleanup(r.up.Close)
	var err error
	if r.st, err = store.Open(context.Background(), r.path); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.st.Close() })
	r.rec = New(r.st, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.rec.Run(ctx); close(done) }()
	r.stop = sync.OnceFunc(func() {
		cancel()
		<-done
		if err := r.rec.Flush(context.Background()); err != nil {
			tb.Error(err)
		}
	})
	tb.Cleanup(r.stop)
	return r
}

// missing counts the ids that are not in the database as finished with 200.
func (r *loadRig) missing(ids []string) int {
	r.tb.Helper()
	recorded := map[string]bool{}
	rows, err := r.st.ListExchanges(context.Background(), store.HistoryFilter{Limit: 1000})
	for err == nil {
		for _, e := range rows.Exchanges {
			recorded[e.ID] = e.State == "finished" && e.Status == 200
		}
		if rows.Next == 0 {
			break
		}
		rows, err = r.st.ListExchanges(context.Background(), store.HistoryFilter{Limit: 1000, Before: rows.Next})
	}
	if err != nil {
		r.tb.Fatal(err)
	}
	n := 0
	for _, id := range ids {
		if !recorded[id] {
			n++
		}
	}
	return n
}

// BenchmarkHistoryUnderLoad is the load figure: 500 requests/s (half streams) for b.N seconds
// through the real proxy with the recorder on, against the scripted upstream, while a second
// proxy without recorder (and without body capture) gets every fourth request too, at the same
// moment, so that both see the same machine. It reports each one's median latency and their
// ratio (the recorder's cost: within 10% on a quiet machine), and fails if an exchange is
// missing from the database or was dropped. `make bench` runs it for 60 s:
//
//	go test -run '^$' -bench HistoryUnderLoad -benchtime 60x ./app/recorder/
func BenchmarkHistoryUnderLoad(b *testing.B) {
	const rate, offEvery = 500, 4
	d := time.Duration(b.N) * time.Second
	r := newLoadRig(b)
	on := newLoadTarget(b, "recorder on", r.up.URL, proxy.Config{CaptureBodies: true}, r.rec)
	off := newLoadTarget(b, "recorder off", r.up.URL, proxy.Config{}, nil)
	// Bounded connections: a saturated machine queues requests in the client (equally for
	// both proxies) instead of running out of ephemeral ports.
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 256, MaxIdleConnsPerHost: 256, MaxIdleConns: 512}}
	defer client.CloseIdleConnections()

	b.ResetTimer()
	drive(client, rate, d, on, off, offEvery)
	b.StopTimer()
	r.stop()
	want := int(d.Seconds() * float64(rate))
	if len(on.ids) != want || on.fails != 0 || off.fails != 0 {
		b.Fatalf("requests ok: on %d (failed %d), off %d (failed %d); want %d with the recorder, none failed", len(on.ids), on.fails, len(off.lat), off.fails, want)
	}
	missing, stats := r.missing(on.ids), r.rec.Stats()
	if missing != 0 || stats.Dropped != 0 {
		b.Errorf("%d of %d exchanges missing from the database, %d dropped; want none", missing, want, stats.Dropped)
	}
	onP50, onP99, onMean, _ := on.summary()
	offP50, offP99, offMean, _ := off.summary()
	b.Logf("%d req/s with the recorder (%d/s without, alongside) for %v: on p50 %v p99 %v mean %v | off p50 %v p99 %v mean %v | written %d",
		rate, rate/offEvery, d, onP50, onP99, onMean, offP50, offP99, offMean, stats.Written)
	b.ReportMetric(float64(onP50.Microseconds()), "on-p50-µs")
	b.ReportMetric(float64(offP50.Microseconds()), "off-p50-µs")
	b.ReportMetric(float64(onP50)/float64(offP50), "p50-ratio")
	b.ReportMetric(0, "ns/op") // one op is a second of load: the time says nothing
}

// BenchmarkRecorderOverhead is the latency comparison on a quiet path: one request at a time
// (half streams) through the real proxy with the recorder (and body capture) and through one
// without, alternating request by request so that both see the same machine. It reports the
// median and mean of each and their ratio. Run it without -race:
//
//	go test -run '^$' -bench RecorderOverhead -benchtime 5000x ./app/recorder/
func BenchmarkRecorderOverhead(b *testing.B) {
	r := newLoadRig(b)
	defer r.stop()
	rec := r.rec
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	defer client.CloseIdleConnections()
	off := newLoadTarget(b, "recorder off", r.up.URL, proxy.Config{}, nil)
	on := newLoadTarget(b, "recorder on", r.up.URL, proxy.Config{CaptureBodies: true}, rec)
	for i := 0; b.Loop(); i++ {
		first, second := on, off
		if i%2 == 1 {
			first, second = off, on
		}
		first.send(client, i)
		second.send(client, i)
	}
	if on.fails+off.fails > 0 {
		b.Fatalf("%d requests failed", on.fails+off.fails)
	}
	onP50, _, onMean, _ := on.summary()
	offP50, _, offMean, _ := off.summary()
	b.ReportMetric(float64(onP50.Microseconds()), "on-p50-µs")
	b.ReportMetric(float64(offP50.Microseconds()), "off-p50-µs")
	b.ReportMetric(float64(onMean.Microseconds()), "on-mean-µs")
	b.ReportMetric(float64(offMean.Microseconds()), "off-mean-µs")
	b.ReportMetric(float64(onP50)/float64(offP50), "p50-ratio")
	if d := rec.Stats().Dropped; d != 0 {
		b.Errorf("drop counter = %d; want 0", d)
	}
}
