package proxy

// Benchmark suite: every scenario runs against three targets side by side,
//
//	direct   client → scripted upstream
//	bare     client → httputil.ReverseProxy (FlushInterval -1) → upstream
//	longhaul client → proxy.Server (real listener) → upstream
//
// and a summary table with the targets is printed after the run:
//
//	go test -run '^$' -bench . -benchtime 2s ./proxy/
//
// Every benchmark checks what it received (status, byte counts, event
// counts) so that a broken proxy cannot produce a fast number. Nothing here
// asserts timings; the targets only appear in the summary.

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"longhaul/proxy/proxytest"
	"longhaul/proxy/sse"
)

func TestMain(m *testing.M) {
	code := m.Run()
	closeBenchEnv()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		benchResults.printSummary(os.Stdout)
	}
	os.Exit(code)
}

var benchTargets = []string{"direct", "bare", "longhaul"}

// ---------------------------------------------------------------------------
// Shared environment: one upstream, the two in-process proxies, one client.

type benchEnv struct {
	up      *proxytest.Upstream
	lh      *Server
	stops   []func()
	targets map[string]string // target name -> base URL
	client  *http.Client
}

var (
	benchEnvOnce sync.Once
	benchEnvVal  *benchEnv
	benchEnvErr  error
)

func getBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	benchEnvOnce.Do(func() { benchEnvVal, benchEnvErr = newBenchEnv() })
	if benchEnvErr != nil {
		b.Fatalf("benchmark environment: %v", benchEnvErr)
	}
	return benchEnvVal
}

func newBenchEnv() (*benchEnv, error) {
	up := proxytest.NewUpstream()
	up.SetRecordBodies(false)
	e := &benchEnv{up: up, targets: map[string]string{"direct": up.URL}}
	e.stops = append(e.stops, up.Close)
	for _, kind := range []string{"bare", "longhaul"} {
		base, stop, err := startBenchProxy(kind, up.URL)
		if err != nil {
			e.close()
			return nil, err
		}
		e.targets[kind] = base
		e.stops = append(e.stops, stop)
	}
	e.client = &http.Client{
		Timeout: time.Minute, // a bound, never reached by a healthy run
		Transport: &http.Transport{
			Proxy:               nil, // loopback only, never an environment proxy
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        0, // no overall cap
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     90 * time.Second,
		},
	}
	e.stops = append(e.stops, e.client.CloseIdleConnections)
	return e, nil
}

func (e *benchEnv) close() {
	for _, stop := range slices.Backward(e.stops) {
		stop()
	}
}

func closeBenchEnv() {
	if benchEnvVal != nil {
		benchEnvVal.close()
	}
}

// ---------------------------------------------------------------------------
// Requests and checks.

func benchPost(c *http.Client, base string, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, base+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	req.Header.Set("X-Api-Key", "sk-ant-bench-client")
	return c.Do(req)
}

// doJSON sends a non-stream request and checks for a 200 of wantLen bytes.
func doJSON(c *http.Client, base string, body []byte, wantLen int) error {
	resp, err := benchPost(c, base, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return fmt.Errorf("reading reply: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	if n != int64(wantLen) {
		return fmt.Errorf("reply is %d bytes; want %d", n, wantLen)
	}
	return nil
}

// verifyNonStream checks once, outside the timed loop, that the target
// passes the request body to the upstream byte for byte and the reply back
// byte for byte.
func (e *benchEnv) verifyNonStream(b *testing.B, base string, body, wantReply []byte) {
	b.Helper()
	e.up.SetRecordBodies(true)
	defer e.up.SetRecordBodies(false)
	resp, err := benchPost(e.client, base, body)
	if err != nil {
		b.Fatalf("verify: %v", err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("verify: status %d, read error %v, body %.200s", resp.StatusCode, err, got)
	}
	if !bytes.Equal(got, wantReply) {
		b.Fatalf("verify: reply differs from the upstream's (%d bytes; want %d)", len(got), len(wantReply))
	}
	if rec := e.up.LastRequest(); !bytes.Equal(rec.Body, body) {
		b.Fatalf("verify: upstream received %d bytes that differ from the %d sent", len(rec.Body), len(body))
	}
}

// streamResult is one stream as the client saw it.
type streamResult struct {
	ttfb   time.Duration   // request sent → first event read
	gaps   []time.Duration // arrival gap before each event after the first
	events int
	bytes  int
	last   string // name of the last event
}

// readStream sends a streaming request and reads it event by event, timing
// arrivals. onHeaders (optional) runs once the response headers are in.
func readStream(c *http.Client, base string, body []byte, onHeaders func()) (streamResult, error) {
	var res streamResult
	t0 := time.Now()
	resp, err := benchPost(c, base, body)
	if err != nil {
		return res, err
	}
	defer resp.Body.Close()
	if onHeaders != nil {
		onHeaders()
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return res, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return res, fmt.Errorf("content-type %q; want text/event-stream", resp.Header.Get("Content-Type"))
	}
	rd := sse.NewReader(resp.Body, 0)
	var prev time.Time
	for {
		ev, err := rd.Next()
		now := time.Now()
		if err == io.EOF {
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("after %d events: %w", res.events, err)
		}
		if res.events == 0 {
			res.ttfb = now.Sub(t0)
		} else {
			res.gaps = append(res.gaps, now.Sub(prev))
		}
		prev = now
		res.events++
		res.bytes += len(ev.Raw)
		res.last = ev.Name
	}
}

func (r streamResult) check(msg *proxytest.Message) error {
	want := len(msg.Events())
	if r.events != want || r.bytes != len(msg.SSE()) || r.last != "message_stop" {
		return fmt.Errorf("stream had %d events / %d bytes ending in %q; want %d / %d ending in message_stop",
			r.events, r.bytes, r.last, want, len(msg.SSE()))
	}
	return nil
}

// smallRequest is a ~1 KB non-stream Messages request.
func smallRequest() []byte {
	const size = 1024
	head := `{"model":"claude-sonnet-4-5-20250929","max_tokens":1024,"stream":false,` +
		`"metadata":{"user_id":"user_3f2a_account_9c1e_session_6d0b8f3e-1111-4222-8333-944455556666"},` +
		`"messages":[{"role":"user","content":"`
	tail := `"}]}`
	text := strings.Repeat("Summarise the change in this diff. ", size/30)
	return []byte(head + text[:size-len(head)-len(tail)] + tail)
}

// ---------------------------------------------------------------------------
// (a) and (b): non-stream latency.

// BenchmarkSmall is a ~1 KB non-stream request answered by a short message.
func BenchmarkSmall(b *testing.B) {
	benchNonStream(b, smallRequest(), proxytest.TextMessage(proxytest.DefaultModel, "Hello from the benchmark."))
}

// BenchmarkClaudeCode800KB is a late-session Claude Code request (800 KB,
// non-stream) answered by a short message; the body must pass untouched.
func BenchmarkClaudeCode800KB(b *testing.B) {
	benchNonStream(b, proxytest.ClaudeCodeRequest(800<<10, false), proxytest.TextMessage(proxytest.DefaultModel, "Done."))
}

func benchNonStream(b *testing.B, body []byte, msg *proxytest.Message) {
	env := getBenchEnv(b)
	want := msg.JSON()
	for _, target := range benchTargets {
		b.Run(target, func(b *testing.B) {
			env.up.SetDefault(proxytest.Reply{Message: msg})
			base := env.targets[target]
			env.verifyNonStream(b, base, body, want) // also warms the connections
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := doJSON(env.client, base, body, len(want)); err != nil {
					b.Fatal(err)
				}
			}
			benchResults.set(b.Name(), "ns/op", float64(b.Elapsed().Nanoseconds())/float64(b.N))
		})
	}
}

// ---------------------------------------------------------------------------
// (c): stream event spacing.

const (
	spacingEvents = 100
	spacingGap    = 10 * time.Millisecond
	clumpGap      = 2 * time.Millisecond
)

// BenchmarkStreamSpacing streams ManyEvents(100) with 10 ms between events
// and measures time to first event, the worst deviation of arrival gaps from
// 10 ms, and how many events arrived clumped (< 2 ms after the previous one).
// One op is one whole stream (~1 s).
func BenchmarkStreamSpacing(b *testing.B) {
	env := getBenchEnv(b)
	msg := proxytest.ManyEvents(spacingEvents, "")
	body := []byte(strings.Replace(string(smallRequest()), `"stream":false`, `"stream":true`, 1))
	for _, target := range benchTargets {
		b.Run(target, func(b *testing.B) {
			env.up.SetDefault(proxytest.Reply{Message: msg, EventGap: spacingGap})
			base := env.targets[target]
			// Warm the keep-alive connections (client→target→upstream): a
			// non-stream request gets the same message as one JSON body.
			if err := doJSON(env.client, base, smallRequest(), len(msg.JSON())); err != nil {
				b.Fatalf("warm-up: %v", err)
			}
			var ttfbs []time.Duration
			var maxDev time.Duration
			maxHeld := 0
			for b.Loop() {
				r, err := readStream(env.client, base, body, nil)
				if err == nil {
					err = r.check(msg)
				}
				if err != nil {
					b.Fatal(err)
				}
				ttfbs = append(ttfbs, r.ttfb)
				held := 0
				var odd []string // anomalies, logged so a bad number can be traced to its events
				for i, g := range r.gaps {
					maxDev = max(maxDev, (g - spacingGap).Abs())
					if g < clumpGap {
						held++
					}
					if g < clumpGap || (g-spacingGap).Abs() > 5*time.Millisecond {
						odd = append(odd, fmt.Sprintf("event %d after %v", i+1, g.Round(10*time.Microsecond)))
					}
				}
				maxHeld = max(maxHeld, held)
				if len(odd) > 0 || r.ttfb > 2*time.Millisecond {
					b.Logf("stream %d: ttfb %v; irregular arrivals: %s", len(ttfbs), r.ttfb.Round(10*time.Microsecond), strings.Join(odd, ", "))
				}
			}
			report(b, float64(mean(ttfbs).Microseconds()), "ttfb-µs")
			report(b, float64(maxDev)/float64(time.Millisecond), "max-gap-dev-ms")
			report(b, float64(maxHeld), "held-events")
		})
	}
}

// ---------------------------------------------------------------------------
// (d): concurrency, with the proxy in a child process.

const (
	throughputConcurrency = 32
	rssStreams            = 64
	rssBodySize           = 800 << 10
	rssEvents             = 20
	rssEventGap           = 30 * time.Millisecond // 25 gaps: each stream lasts ~750 ms, so all 64 overlap
)

// BenchmarkConcurrency runs each proxy in a child process (see
// TestBenchChild) and measures
//
//	small-c32:       throughput of ~1 KB non-stream requests at concurrency 32;
//	stream64x800KB:  the proxy's peak RSS (VmHWM) while 64 streaming requests,
//	                 each carrying an 800 KB body, are in flight at once
//	                 (one op is one wave of 64).
func BenchmarkConcurrency(b *testing.B) {
	env := getBenchEnv(b)
	for _, kind := range []string{"bare", "longhaul"} {
		b.Run(kind, func(b *testing.B) {
			b.Run("small-c32", func(b *testing.B) { benchThroughput(b, env, kind) })
			b.Run("stream64x800KB", func(b *testing.B) { benchPeakRSS(b, env, kind) })
		})
	}
}

func benchThroughput(b *testing.B, env *benchEnv, kind string) {
	msg := proxytest.TextMessage(proxytest.DefaultModel, "Hello from the benchmark.")
	env.up.SetDefault(proxytest.Reply{Message: msg})
	child := startBenchChild(b, kind, env.up.URL)
	defer child.stop(b)
	body, want := smallRequest(), msg.JSON()
	env.verifyNonStream(b, child.base, body, want)

	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((throughputConcurrency + procs - 1) / procs)
	b.ReportAllocs()
	var failed atomic.Bool
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if failed.Load() {
				return
			}
			if err := doJSON(env.client, child.base, body, len(want)); err != nil {
				if failed.CompareAndSwap(false, true) {
					b.Error(err)
				}
				return
			}
		}
	})
	b.StopTimer()
	report(b, float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func benchPeakRSS(b *testing.B, env *benchEnv, kind string) {
	msg := proxytest.ManyEvents(rssEvents, "")
	env.up.SetDefault(proxytest.Reply{Message: msg, EventGap: rssEventGap})
	child := startBenchChild(b, kind, env.up.URL)
	defer child.stop(b)
	_, baseRSS, err := child.memMB()
	if err != nil {
		b.Fatal(err)
	}
	body := proxytest.ClaudeCodeRequest(rssBodySize, true)

	minOverlap := rssStreams
	for b.Loop() {
		var open, maxOpen atomic.Int64
		errs := make(chan error, rssStreams)
		var wg sync.WaitGroup
		for range rssStreams {
			wg.Go(func() {
				r, err := readStream(env.client, child.base, body, func() {
					n := open.Add(1)
					for m := maxOpen.Load(); n > m && !maxOpen.CompareAndSwap(m, n); m = maxOpen.Load() {
					}
				})
				open.Add(-1)
				if err == nil {
					err = r.check(msg)
				}
				if err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			b.Fatalf("%d of %d streams failed; first: %v", len(errs)+1, rssStreams, err)
		}
		minOverlap = min(minOverlap, int(maxOpen.Load()))
	}
	peak, _, err := child.memMB()
	if err != nil {
		b.Fatal(err)
	}
	report(b, peak, "peak-rss-MB")
	report(b, baseRSS, "idle-rss-MB")
	report(b, float64(minOverlap), "overlap")
	if minOverlap < rssStreams {
		b.Logf("only %d of %d streams were open at once in some wave; peak RSS understates full overlap", minOverlap, rssStreams)
	}
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}
