package proxy

// What a request costs in memory per byte of its body, on the shape that costs the most per
// byte: hundreds of thousands of tiny messages (the security issue's 29 MB body of 900k
// `{"role":"user","content":"a"}`). Every per-message allocation or record is paid 900k times
// there, against 32 bytes of body each.
//
//	go test -run '^$' -bench TinyMessages -benchtime 3x ./proxy/

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"

	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

// tinyProtocols are the routes the tiny-message shape is sent to, each with how one message
// and the body around them are written in that protocol.
var tinyProtocols = []struct {
	name, path string
	head, tail string
	message    func(user bool) string
}{
	{"messages", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[`, `]}`, func(user bool) string {
		if user {
			return `{"role":"user","content":"a"}`
		}
		return `{"role":"assistant","content":"b"}`
	}},
	{"chat", "/v1/chat/completions", `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[`, `]}`, func(user bool) string {
		if user {
			return `{"role":"user","content":"a"}`
		}
		return `{"role":"assistant","content":"b"}`
	}},
	{"responses", "/v1/responses", `{"model":"claude-sonnet-4-5","max_output_tokens":10,"input":[`, `]}`, func(user bool) string {
		if user {
			return `{"role":"user","content":"a"}`
		}
		return `{"role":"assistant","content":"b"}`
	}},
	{"gemini", "/v1beta/models/claude-sonnet-4-5:generateContent", `{"generationConfig":{"maxOutputTokens":10},"contents":[`, `]}`, func(user bool) string {
		if user {
			return `{"role":"user","parts":[{"text":"a"}]}`
		}
		return `{"role":"model","parts":[{"text":"b"}]}`
	}},
}

// tinyMessagesBody is a request of about size bytes made of alternating one-letter messages,
// in the protocol at index p of tinyProtocols; it reports how many messages it holds.
func tinyMessagesBody(p, size int) (body []byte, messages int) {
	tp := tinyProtocols[p]
	b := bytes.NewBuffer(make([]byte, 0, size+64))
	b.WriteString(tp.head)
	for b.Len() < size-len(tp.tail)-40 {
		if messages > 0 {
			b.WriteByte(',')
		}
		b.WriteString(tp.message(messages%2 == 0))
		messages++
	}
	b.WriteString(tp.tail)
	return b.Bytes(), messages
}

// discardUpstream answers every request with reply after reading its body into one buffer it
// reuses: what the proxy allocates is then measured without an upstream's own (proxytest's
// upstream decodes every request, which would cost more than the proxy does).
func discardUpstream(reply []byte) *httptest.Server {
	var mu sync.Mutex
	var buf []byte
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		var err error
		buf, err = readInto(buf[:0], r.Body)
		if err != nil {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(reply) //nolint:errcheck // the client's side is checked
	}))
}

// readInto appends everything r has to buf, growing it only when it must.
func readInto(buf []byte, r io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// BenchmarkTinyMessages sends a 6 MB and a 29 MB body of tiny messages in each protocol through
// the real handler to an Anthropic account (so every other protocol is translated) and reports
// the bytes allocated per byte of body.
func BenchmarkTinyMessages(b *testing.B) {
	up := discardUpstream(proxytest.TextMessage(proxytest.DefaultModel, "ok").JSON())
	defer up.Close()
	for _, size := range []int{6 << 20, 29 << 20} {
		for p, tp := range tinyProtocols {
			b.Run(fmt.Sprintf("%s-%dMB", tp.name, size>>20), func(b *testing.B) {
				srv, err := New(Config{}, Options{})
				if err != nil {
					b.Fatal(err)
				}
				srv.SetAccounts([]pool.Account{{ID: 1, Label: "bench", Kind: pool.KindAnthropic, BaseURL: up.URL, Secret: "sk-ant-bench-upstream-0001", Enabled: true}})
				front := httptest.NewServer(srv.Handler())
				defer front.Close()
				body, _ := tinyMessagesBody(p, size)
				client := front.Client()
				send := func() {
					resp, err := postTo(client, front.URL+tp.path, body)
					if err != nil {
						b.Fatal(err)
					}
					got, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != http.StatusOK {
						b.Fatalf("status %d, %v: %.300s", resp.StatusCode, err, got)
					}
				}
				send()
				b.SetBytes(int64(len(body)))
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for b.Loop() {
					send()
				}
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(body)), "B/body-B")
			})
		}
	}
}
