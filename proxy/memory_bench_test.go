package proxy

// What a request costs in memory per byte of its body, on the shapes that cost the most per
// byte: many small messages (a 29 MB body of 900k
// `{"role":"user","content":"a"}`). Every per-message allocation or record is paid for each
// message there, against 30 bytes of body.
//
//	go test -run '^$' -bench ManyMessages -benchtime 3x ./proxy/

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"longhaul/proxy/anthropic"

	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

// manyMessageProtocols are the routes a body of many messages is sent to, each with how its
// protocol writes the body around them and one message of text.
var manyMessageProtocols = []struct {
	name, path string
	head, tail string
	message    func(user bool, text string) string
}{
	{"messages", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[`, `]}`, roleContent("assistant")},
	{"chat", "/v1/chat/completions", `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[`, `]}`, roleContent("assistant")},
	{"responses", "/v1/responses", `{"model":"claude-sonnet-4-5","max_output_tokens":10,"input":[`, `]}`, roleContent("assistant")},
	{"gemini", "/v1beta/models/claude-sonnet-4-5:generateContent", `{"generationConfig":{"maxOutputTokens":10},"contents":[`, `]}`,
		func(user bool, text string) string {
			if user {
				return `{"role":"user","parts":[{"text":"` + text + `"}]}`
			}
			return `{"role":"model","parts":[{"text":"` + text + `"}]}`
		}},
}

// roleContent writes a message as {"role":…,"content":"…"}, the model's role named other.
func roleContent(other string) func(user bool, text string) string {
	return func(user bool, text string) string {
		if user {
			return `{"role":"user","content":"` + text + `"}`
		}
		return `{"role":"` + other + `","content":"` + text + `"}`
	}
}

// manyMessagesBody is a request of n alternating messages of text (a letter repeated
// textLen times) in the protocol at index p of manyMessageProtocols; fewer when n would not fit
// in maxBytes (0: no bound).
func manyMessagesBody(p, n, textLen, maxBytes int) []byte {
	mp := manyMessageProtocols[p]
	user, model := mp.message(true, strings.Repeat("a", textLen)), mp.message(false, strings.Repeat("b", textLen))
	if room := 2 * (maxBytes - len(mp.head) - len(mp.tail)) / (len(user) + len(model) + 2); maxBytes > 0 && room < n {
		n = room
	}
	b := bytes.NewBuffer(make([]byte, 0, len(mp.head)+n*(len(model)+1)+len(mp.tail)))
	b.WriteString(mp.head)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		if i%2 == 0 {
			b.WriteString(user)
		} else {
			b.WriteString(model)
		}
	}
	b.WriteString(mp.tail)
	return b.Bytes()
}

// manyMessageShapes are the bodies the memory benchmark and test send: the hostile ones
// (900k one-letter messages in 29 MB, and 6 MB of them; Gemini's contents are longer, so only
// 770k fit under proxy.max_body_bytes), which the peek refuses at anthropic.MaxMessages, and
// the two the proxy takes that cost it the most per body byte: as many one-letter messages as
// it takes (3 MB), and as many 260-letter ones (28 MB), which go through the compaction engine
// and a Layer-3 summary.
type manyMessageShape struct {
	name                        string
	messages, textLen, maxBytes int
	status                      int
}

var manyMessageShapes = []manyMessageShape{
	{"900k-tiny", 900_000, 1, 32_000_000, http.StatusBadRequest},
	{"6MB-tiny", 900_000, 1, 6_000_000, http.StatusBadRequest},
	{"100k-tiny", anthropic.MaxMessages, 1, 0, http.StatusOK},
	{"100k-260B", anthropic.MaxMessages, 260, 0, http.StatusOK},
}

// body is the shape's request in the protocol at index p of manyMessageProtocols.
func (s manyMessageShape) body(p int) []byte {
	return manyMessagesBody(p, s.messages, s.textLen, s.maxBytes)
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

// BenchmarkManyMessages sends each of manyMessageShapes in each protocol through the real
// handler to an Anthropic account (so every other protocol is translated) and reports the
// bytes allocated per byte of body.
func BenchmarkManyMessages(b *testing.B) {
	up := discardUpstream(proxytest.TextMessage(proxytest.DefaultModel, "ok").JSON())
	defer up.Close()
	for _, shape := range manyMessageShapes {
		for p, mp := range manyMessageProtocols {
			b.Run(shape.name+"/"+mp.name, func(b *testing.B) {
				srv, err := New(Config{}, Options{})
				if err != nil {
					b.Fatal(err)
				}
				srv.SetAccounts([]pool.Account{{ID: 1, Label: "bench", Kind: pool.KindAnthropic, BaseURL: up.URL, Secret: "sk-ant-bench-upstream-0001", Enabled: true}})
				front := httptest.NewServer(srv.Handler())
				defer front.Close()
				body := shape.body(p)
				client := front.Client()
				send := func() {
					resp, err := postTo(client, front.URL+mp.path, body)
					if err != nil {
						b.Fatal(err)
					}
					got, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != shape.status {
						b.Fatalf("status %d, %v; want %d: %.300s", resp.StatusCode, err, shape.status, got)
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
