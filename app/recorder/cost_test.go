package recorder

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"longhaul/proxy"
	"longhaul/proxy/proxytest"
	"longhaul/store"
)

// smallExchange is a ~1 KB request as the proxy reports it when it finishes: one attempt,
// the request body lent, a short reply; its id made as the proxy makes them (its start in Unix
// nanoseconds, then 32 random bits).
func smallExchange(i int, request []byte) proxy.Exchange {
	start := time.Now()
	return proxy.Exchange{
		ID: fmt.Sprintf("lh_%016x%08x", uint64(start.UnixNano()), uint32(uint64(i)*0x9E3779B97F4A7C15>>32)), State: proxy.ExchangeFinished, Route: "messages", Method: "POST", Path: "/v1/messages",
		ClientProtocol: proxy.ProtocolAnthropic, UpstreamProtocol: "anthropic",
		UserAgent: "Go-http-client/1.1", RemoteAddr: "127.0.0.1:41234", SessionID: "6d0b8f3e-1111-4222-8333-944455556666",
		Model: "claude-sonnet-4-5-20250929", ModelSent: "claude-sonnet-4-5-20250929",
		Start: start, FirstByte: start.Add(300 * time.Microsecond), End: start.Add(400 * time.Microsecond),
		Status: 200, StopReason: "end_turn", Usage: proxy.Usage{InputTokens: 12, OutputTokens: 8},
		Attempts:    []proxy.Attempt{{AccountID: 1, AccountName: "bench", Status: 200, Start: start, Duration: 350 * time.Microsecond}},
		RequestBody: request,
		ReplyBody:   fmt.Appendf(nil, `{"id":"msg_%010d","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Hello from the benchmark."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":8}}`, i),
		BytesIn:     int64(len(request)), BytesOut: 310,
	}
}

// BenchmarkRecorderSmallExchange is the recorder's whole cost per small exchange, as under
// many concurrent small requests: both hand-offs (started, finished), the writer's batches
// and the live feed's, with its defaults, on a real SQLite file. It reports the process's CPU
// time per exchange (the proxy's share of the machine is what is left).
func BenchmarkRecorderSmallExchange(b *testing.B) {
	st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "longhaul.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	rec := New(st, Options{})
	feed, unsubscribe := rec.Feed().Subscribe()
	defer unsubscribe()
	go func() {
		for range feed { // a live view that keeps up
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { rec.Run(ctx); close(done) }()
	request := []byte(`{"model":"claude-sonnet-4-5-20250929","max_tokens":1024,"stream":false,"metadata":{"user_id":"user_3f2a_account_9c1e_session_6d0b8f3e-1111-4222-8333-944455556666"},"messages":[{"role":"user","content":"` +
		strings.Repeat("Summarise the change in this diff. ", 24) + `"}]}`)

	cpu0 := processCPU(b)
	n := 0
	for b.Loop() {
		ex := smallExchange(n, request)
		started := ex.WithoutBodies()
		started.State, started.End, started.Status, started.Attempts = proxy.ExchangeStarted, time.Time{}, 0, nil
		rec.Observe(started)
		rec.Observe(ex)
		n++
		if n%3000 == 0 { // about a second of c32 load: let the writer keep up, as it does there
			for rec.Stats().Queued > 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}
	cancel()
	<-done
	if err := rec.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(n), "cpu-ns/exchange")
	if s := rec.Stats(); s.Written < int64(n) || s.Dropped != 0 {
		b.Fatalf("stats %+v; want %d written, none dropped", s, n)
	}
}

// BenchmarkRecorderLargeRequest is the history's cost per 800 KB request of a long session,
// as shipped-bench's "CPU per 1,000 800 KB requests" measures it but in one process: the real
// proxy with and without the recorder (and body capture), sequential requests that differ
// from the previous one in their last turn, to the scripted upstream. It reports the
// process's CPU time per request (the client and the upstream are in it too, equally in
// both); the difference between the two is what the history costs.
func BenchmarkRecorderLargeRequest(b *testing.B) {
	body := proxytest.ClaudeCodeRequest(800<<10, false)
	cut := bytes.LastIndex(body, []byte(`"text":"continue"`))
	head, tail := body[:cut], body[cut+len(`"text":"continue"`):]
	cfg := proxy.Config{Compaction: proxy.CompactionConfig{ContextLimits: map[string]int{"claude-*": 10_000_000}}}
	for _, withRecorder := range []bool{false, true} {
		name := "recorder-off"
		if withRecorder {
			name = "recorder-on"
		}
		b.Run(name, func(b *testing.B) {
			r := newLoadRig(b)
			msg := proxytest.TextMessage(proxytest.DefaultModel, "Hello from the benchmark.")
			r.up.SetDefault(proxytest.Reply{Message: msg})
			c := cfg
			var obs proxy.Observer
			if withRecorder {
				h := store.DefaultSettings().History
				c.CaptureBodies, c.MaxCaptureBytes = h.StoreBodies, h.MaxBodyBytes
				obs = r.rec
			}
			t := newLoadTarget(b, name, r.up.URL, c, obs)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			defer client.CloseIdleConnections()
			var body []byte // each request's own text, so each has a new last chunk to store
			cpu0 := processCPU(b)
			n := 0
			for b.Loop() {
				body = fmt.Appendf(append(body[:0], head...), `"text":"continue with step %d"%s`, n, tail)
				resp, err := client.Post(t.front.URL+"/v1/messages", "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body) //nolint:errcheck // the status says
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
				n++
			}
			r.stop() // the history written after the replies is part of the cost
			b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(n), "cpu-ns/request")
			// Under a loaded machine the writer may fall behind its body budget: the figure is
			// then of fewer bodies, which the report says.
			s := r.rec.Stats()
			if s.Dropped != 0 {
				b.Fatalf("stats %+v; want no exchange dropped", s)
			}
			b.ReportMetric(float64(s.BodiesDropped), "bodies-dropped")
		})
	}
}
