package proxy

// Benchmarks of the protocol seam, each measured against its baseline in the same run:
//
//	ChatPassthrough800KB: an OpenAI client on an OpenAI account (nothing to rewrite, so the
//	  client's bytes go up as they came): Longhaul's added latency as a ratio of a bare
//	  httputil.ReverseProxy's, both over the upstream reached directly.
//	TranslatedStream: a Chat client on an Anthropic account (every event translated) beside
//	  an Anthropic client reaching the upstream directly: how much later the first content
//	  delta arrives, and how many deltas arrived clumped (held back and released together).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
	"longhaul/proxy/sse"
)

// chatConversation builds an OpenAI Chat request of about size bytes: a system prompt, tools
// and alternating tool rounds, as an agent sends late in a session.
func chatConversation(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"gpt-4.1","stream":false,"tools":[{"type":"function","function":{"name":"run","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}}],"messages":[`)
	b.WriteString(`{"role":"system","content":"You are a coding agent."},{"role":"user","content":"Fix the failing tests."}`)
	for round := 0; b.Len() < size; round++ {
		out, _ := json.Marshal(strings.Repeat(fmt.Sprintf("%4d\tfunc line%d() { return \"héllo\" }\n", round, round), 120))
		fmt.Fprintf(&b, `,{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"run","arguments":"{\"cmd\":\"go test ./...\"}"}}]}`, round)
		fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":"call_%d","content":%s}`, round, out)
	}
	b.WriteString(`,{"role":"user","content":"continue"}]}`)
	return []byte(b.String())
}

func postTo(c *http.Client, url string, body []byte, header ...string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return c.Do(req)
}

func timedPost(b *testing.B, c *http.Client, url string, body []byte) time.Duration {
	t0 := time.Now()
	resp, err := postTo(c, url, body, "Authorization", "Bearer bench")
	if err != nil {
		b.Fatal(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("POST %s: status %d, %v", url, resp.StatusCode, err)
	}
	return time.Since(t0)
}

func p50(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// fastChatUpstream reads a request whole and answers one fixed completion, without parsing
// the body: the yardstick must not drown the proxies' cost in its own (proxytest's upstream
// validates every request, which takes longer than forwarding it). It reads into one buffer it
// reuses: io.ReadAll's growing copies were ~2 MB of garbage per 800 KB request, a collection per
// iteration in the process the proxies share, which is not what a remote upstream costs them.
// forwarded reports whether the last request's body was want.
func fastChatUpstream() (srv *httptest.Server, forwarded func(want []byte) bool) {
	var mu sync.Mutex
	var buf []byte
	completion := []byte(`{"id":"chatcmpl-bench","object":"chat.completion","created":1,"model":"gpt-4.1","choices":[{"index":0,"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}],"usage":{"prompt_tokens":200000,"completion_tokens":2,"total_tokens":200002}}`)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.ContentLength < 0 {
			http.Error(w, "the benchmark sends a Content-Length", http.StatusLengthRequired)
			return
		}
		if int64(cap(buf)) < r.ContentLength {
			buf = make([]byte, r.ContentLength)
		}
		buf = buf[:r.ContentLength]
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(completion) //nolint:errcheck // the benchmark checks the client's side
	}))
	return srv, func(want []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		return bytes.Equal(buf, want)
	}
}

// chatTurns gives Chat requests of one growing session, each ending in a user text no other
// request of the run carries (as consecutive turns do, and as
// app/recorder/cmd/shipped-bench/main.go's workload.next varies its bodies): a proxy that
// remembered a body it saw before would not be measured on what real sessions send.
type chatTurns struct {
	head, tail []byte
	n          int
}

func newChatTurns(size int) *chatTurns {
	const last = `"content":"continue"`
	b := chatConversation(size)
	i := bytes.LastIndex(b, []byte(last))
	return &chatTurns{head: b[:i], tail: b[i+len(last):]}
}

// next writes the next turn's body into buf (reused: the previous request is done with it).
func (t *chatTurns) next(buf []byte) []byte {
	t.n++
	buf = append(buf[:0], t.head...)
	buf = fmt.Appendf(buf, `"content":"continue with step %d"`, t.n)
	return append(buf, t.tail...)
}

func BenchmarkChatPassthrough800KB(b *testing.B) {
	up, forwarded := fastChatUpstream()
	defer up.Close()
	// Each proxy runs in its own process, as users run Longhaul and as shipped-bench measures
	// the Anthropic passthrough: in one process the client's, the upstream's and the other
	// proxy's allocations and collections would be charged to whichever proxy ran then.
	bare := startBenchChild(b, "bare", up.URL)
	defer bare.stop(b)
	lh := startBenchChild(b, "longhaul-chat", up.URL)
	defer lh.stop(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	defer client.CloseIdleConnections()

	names := []string{"direct", "bare", "longhaul"}
	paths := map[string]string{"direct": up.URL + "/v1/chat/completions", "bare": bare.base + "/v1/chat/completions", "longhaul": lh.base + "/v1/chat/completions"}
	turns := newChatTurns(800 << 10)
	// One buffer per path, rewritten with each turn outside the clock: building a body
	// allocates nothing the timed requests would pay for in GC.
	bufs := map[string][]byte{}
	send := func(name string) time.Duration {
		bufs[name] = turns.next(bufs[name])
		d := timedPost(b, client, paths[name], bufs[name])
		if name == "longhaul" && !forwarded(bufs[name]) {
			b.Fatalf("Longhaul did not forward the client's bytes as they came")
		}
		return d
	}
	for _, name := range names { // warm connections
		send(name)
	}
	times := map[string][]time.Duration{}
	for b.Loop() {
		for _, name := range names {
			times[name] = append(times[name], send(name))
		}
	}
	direct, bareP50, lhP50 := p50(times["direct"]), p50(times["bare"]), p50(times["longhaul"])
	report(b, float64(direct.Microseconds()), "direct-p50-µs")
	report(b, float64(bareP50.Microseconds()), "bare-p50-µs")
	report(b, float64(lhP50.Microseconds()), "longhaul-p50-µs")
	if added := bareP50 - direct; added > 0 {
		report(b, float64(lhP50-direct)/float64(added), "added-latency-vs-bare")
	}
}

// firstDeltaAndGaps reads a stream and returns when the first content delta arrived and the
// gaps between content deltas; isDelta tells a content delta's event.
func firstDeltaAndGaps(b *testing.B, resp *http.Response, t0 time.Time, isDelta func(sse.Event) bool) (time.Duration, []time.Duration) {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("status %d", resp.StatusCode)
	}
	rd := sse.NewReader(resp.Body, 0)
	var first time.Duration
	var gaps []time.Duration
	var prev time.Time
	for {
		ev, err := rd.Next()
		now := time.Now()
		if err == io.EOF {
			return first, gaps
		}
		if err != nil {
			b.Fatal(err)
		}
		if !isDelta(ev) {
			continue
		}
		if prev.IsZero() {
			first = now.Sub(t0)
		} else {
			gaps = append(gaps, now.Sub(prev))
		}
		prev = now
	}
}

func BenchmarkTranslatedStream(b *testing.B) {
	up := proxytest.NewUpstream()
	defer up.Close()
	up.SetRecordBodies(false)
	msg := proxytest.ManyEvents(spacingEvents, "")
	up.SetDefault(proxytest.Reply{Message: msg, EventGap: spacingGap})
	srv, err := New(Config{}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	srv.SetAccounts([]pool.Account{{ID: 1, Kind: pool.KindAnthropic, BaseURL: up.URL, Secret: "sk-ant-bench-account-01", Enabled: true}})
	lh := httptest.NewServer(srv.Handler())
	defer lh.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	defer client.CloseIdleConnections()

	messages := []byte(`{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"Count."}]}`)
	chat := []byte(`{"model":"claude-sonnet-4-5","stream":true,"messages":[{"role":"user","content":"Count."}]}`)
	isText := func(ev sse.Event) bool { return ev.Name == "content_block_delta" }
	isChatText := func(ev sse.Event) bool {
		return bytes.Contains(ev.Data, []byte(`"content":"`)) && !bytes.Contains(ev.Data, []byte(`"content":""`))
	}

	var direct, translated []time.Duration
	maxHeld := 0 // the most deltas one stream had clumped, as BenchmarkStreamSpacing counts them
	for b.Loop() {
		t0 := time.Now()
		resp, err := postTo(client, up.URL+"/v1/messages", messages)
		if err != nil {
			b.Fatal(err)
		}
		d, _ := firstDeltaAndGaps(b, resp, t0, isText)
		t0 = time.Now()
		resp, err = postTo(client, lh.URL+"/v1/chat/completions", chat)
		if err != nil {
			b.Fatal(err)
		}
		tr, gaps := firstDeltaAndGaps(b, resp, t0, isChatText)
		if len(gaps) != spacingEvents-1 {
			b.Fatalf("the translated stream had %d content deltas; want %d", len(gaps)+1, spacingEvents)
		}
		held := 0
		for _, g := range gaps {
			if g < clumpGap {
				held++
			}
		}
		maxHeld = max(maxHeld, held)
		direct, translated = append(direct, d), append(translated, tr)
	}
	report(b, float64(p50(direct).Microseconds()), "direct-first-delta-µs")
	report(b, float64(p50(translated).Microseconds()), "translated-first-delta-µs")
	report(b, float64((p50(translated)-p50(direct)).Microseconds())/1000, "first-delta-added-ms")
	report(b, float64(maxHeld), "held-deltas")
}
