package recorder

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"longhaul/proxy"
	"longhaul/store"
)

// smallExchange is a ~1 KB request as the proxy reports it when it finishes: one attempt,
// the request body lent, a short reply.
func smallExchange(i int, request []byte) proxy.Exchange {
	start := time.Now()
	return proxy.Exchange{
		ID: fmt.Sprintf("lh_cost_%010d", i), State: proxy.ExchangeFinished, Route: "messages", Method: "POST", Path: "/v1/messages",
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
