package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

// The hostile-input corpus (issue 11): raw bytes on a real connection to a real Server
// listening on 127.0.0.1, in front of the scripted upstream. Every case must end in a reply
// (an error in Anthropic's shape, or net/http's own refusal followed by a closed connection)
// or a closed connection, within waitLimit (a hang guard, not a measure); no case may panic
// the server or leave a goroutine behind; and after every case the server still serves a good
// request.

const hostileKey = "lh-hostile-key-0001"

// hostile is one case. raw is written at once, or script writes (and may stall until stop
// closes: the server must end the connection by itself). vanish cases close the connection
// themselves and read nothing. want lists the statuses the (first) reply may have; closed
// says a connection closed without a reply is a good outcome.
type hostile struct {
	class, name string
	raw         string
	script      func(c net.Conn, stop <-chan struct{})
	method      string // of the request, for reading the reply (HEAD has no body); "" = GET
	want        []int
	closed      bool
	replies     int              // replies to read (pipelining); 0 = 1
	vanish      bool             // the client hangs up; no reply is read
	upstream    *proxytest.Reply // the upstream's reply while this case runs; nil = the normal one
}

// req renders a raw HTTP/1.1 request with the key, a JSON content type and a correct length;
// extra are more header lines ("Name: value").
func req(method, path, body string, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: %s\r\n", method, path, hostileKey)
	if body != "" {
		fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	for _, h := range extra {
		b.WriteString(h + "\r\n")
	}
	return b.String() + "\r\n" + body
}

// bare renders a request with exactly the header lines given and the body as is.
func bare(requestLine string, headers []string, body string) string {
	return requestLine + "\r\n" + strings.Join(append(headers, ""), "\r\n") + "\r\n" + body
}

func msg(stream bool) string {
	return `{"model":"claude-sonnet-4-5","max_tokens":16,"stream":` + strconv.FormatBool(stream) + `,"messages":[{"role":"user","content":"hi"}]}`
}

func deep(open, close string, n int) string {
	return `{"model":"claude-sonnet-4-5","max_tokens":16,"messages":[{"role":"user","content":` + strings.Repeat(open, n) + strings.Repeat(close, n) + `}]}`
}

// stall is a script that writes s and then holds the connection open.
func stall(s string) func(net.Conn, <-chan struct{}) {
	return func(c net.Conn, stop <-chan struct{}) {
		io.WriteString(c, s) //nolint:errcheck // the server may close first
		<-stop
	}
}

// hangUp is a vanish script: write s, read the reply's first readBytes bytes (0: none), then
// close the connection (with a reset instead of a FIN when reset).
func hangUp(s string, readBytes int, reset bool) func(net.Conn, <-chan struct{}) {
	return func(c net.Conn, _ <-chan struct{}) {
		io.WriteString(c, s) //nolint:errcheck
		if readBytes > 0 {
			io.ReadFull(c, make([]byte, readBytes)) //nolint:errcheck // the reply's first bytes, or the end
		}
		if tc, ok := c.(*net.TCPConn); ok && reset {
			tc.SetLinger(0) //nolint:errcheck // a reset instead of a FIN
		}
		c.Close()
	}
}

// hangUpWhenForwarded is a vanish script: write s, wait until the upstream has the request
// (upstreamSaw counts what it received), then close.
func hangUpWhenForwarded(s string, upstreamSaw func() int) func(net.Conn, <-chan struct{}) {
	return func(c net.Conn, _ <-chan struct{}) {
		before := upstreamSaw()
		io.WriteString(c, s) //nolint:errcheck
		deadline := time.Now().Add(waitLimit)
		for upstreamSaw() == before && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		c.Close()
	}
}

// hostileCorpus returns the cases; upstreamSaw counts the requests the upstream received.
func hostileCorpus(upstreamSaw func() int) []hostile {
	ok, bad := []int{200}, []int{400}
	either := []int{200, 400}
	m := "/v1/messages"
	post := func(body string, extra ...string) string { return req("POST", m, body, extra...) }
	var cs []hostile
	add := func(class string, list ...hostile) {
		for _, h := range list {
			h.class = class
			cs = append(cs, h)
		}
	}

	add("json",
		hostile{name: "truncated JSON", raw: post(`{"model":"claude-sonnet-4-5","messages":[`), want: bad},
		hostile{name: "not JSON", raw: post(`hello upstream`), want: bad},
		hostile{name: "empty body", raw: req("POST", m, "", "Content-Type: application/json", "Content-Length: 0"), want: bad},
		hostile{name: "top-level array", raw: post(`[1,2,3]`), want: either},
		hostile{name: "top-level string", raw: post(`"x"`), want: either},
		hostile{name: "invalid UTF-8 in a string", raw: post("{\"model\":\"\xff\xfe\",\"max_tokens\":1,\"messages\":[]}"), want: either},
		hostile{name: "invalid UTF-8 outside strings", raw: post("{\xff:1}"), want: bad},
		// The peek reads what it needs, not every string: the rest goes upstream as is.
		hostile{name: "raw NUL in a string", raw: post("{\"model\":\"a\x00b\",\"messages\":[]}"), want: either},
		hostile{name: "NUL bytes only", raw: post("\x00\x00\x00\x00"), want: bad},
		hostile{name: "escaped NUL", raw: post(`{"model":"claude-sonnet-4-5","max_tokens":1,"messages":[{"role":"user","content":"a\u0000b"}]}`), want: either},
		hostile{name: "100,000-deep arrays", raw: post(deep("[", "]", 100000)), want: either},
		hostile{name: "100,000-deep objects", raw: post(deep(`{"a":`, "}", 100000)), want: either},
		hostile{name: "100,000-deep, unterminated", raw: post(`{"messages":` + strings.Repeat("[", 100000)), want: bad},
		hostile{name: "huge exponent", raw: post(`{"model":"claude-sonnet-4-5","max_tokens":1e999999,"messages":[{"role":"user","content":"hi"}]}`), want: either},
		hostile{name: "10,000-digit integer", raw: post(`{"model":"claude-sonnet-4-5","max_tokens":` + strings.Repeat("9", 10000) + `,"messages":[{"role":"user","content":"hi"}]}`), want: either},
		hostile{name: "huge negative", raw: post(`{"model":"claude-sonnet-4-5","max_tokens":-` + strings.Repeat("9", 400) + `,"messages":[]}`), want: either},
		hostile{name: "duplicate model", raw: post(`{"model":"a","model":"claude-sonnet-4-5","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`), want: either},
		hostile{name: "duplicate stream", raw: post(`{"model":"claude-sonnet-4-5","stream":true,"stream":false,"max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`), want: either},
		hostile{name: "duplicate messages", raw: post(`{"model":"claude-sonnet-4-5","max_tokens":1,"messages":[],"messages":[{"role":"user","content":"hi"}]}`), want: either},
		hostile{name: "byte-order mark", raw: post("\xef\xbb\xbf" + msg(false)), want: either},
		hostile{name: "trailing garbage", raw: post(msg(false) + "xyz"), want: either},
		hostile{name: "two documents", raw: post(msg(false) + msg(false)), want: either},
		hostile{name: "lone surrogate escape", raw: post(`{"model":"claude-sonnet-4-5","max_tokens":1,"messages":[{"role":"user","content":"\ud800"}]}`), want: either},
		hostile{name: "count_tokens, invalid JSON", raw: req("POST", m+"/count_tokens", `{"model":`), want: bad},
	)

	big := strings.Repeat("x", hostileMaxBody)
	add("body",
		hostile{name: "declared length over the limit", raw: req("POST", m, "", "Content-Type: application/json", fmt.Sprintf("Content-Length: %d", 2*hostileMaxBody)) + "{", want: []int{413}, closed: true},
		hostile{name: "chunked body over the limit", script: func(c net.Conn, stop <-chan struct{}) {
			io.WriteString(c, req("POST", m, "", "Content-Type: application/json", "Transfer-Encoding: chunked")) //nolint:errcheck
			for i := 0; i < 3; i++ {
				if _, err := fmt.Fprintf(c, "%x\r\n%s\r\n", len(big)/2, big[:len(big)/2]); err != nil {
					break
				}
			}
			io.WriteString(c, "0\r\n\r\n") //nolint:errcheck
			<-stop
		}, want: []int{413}, closed: true},
		hostile{name: "chunked body that never ends", script: stall(req("POST", m, "", "Content-Type: application/json", "Transfer-Encoding: chunked") + "5\r\n{\"mod\r\n"), closed: true},
		hostile{name: "length 100, 10 bytes sent, stalled", script: stall(req("POST", m, "", "Content-Type: application/json", "Content-Length: 100") + `{"model":"`), closed: true},
		hostile{name: "length 100, 10 bytes sent, write side closed", script: func(c net.Conn, stop <-chan struct{}) {
			io.WriteString(c, req("POST", m, "", "Content-Type: application/json", "Content-Length: 100")+`{"model":"`) //nolint:errcheck
			c.(*net.TCPConn).CloseWrite()                                                                               //nolint:errcheck
			<-stop
		}, closed: true},
		hostile{name: "non-numeric length", raw: req("POST", m, "", "Content-Type: application/json", "Content-Length: abc") + "{}", want: bad, closed: true},
		hostile{name: "negative length", raw: req("POST", m, "", "Content-Type: application/json", "Content-Length: -1") + "{}", want: bad, closed: true},
		hostile{name: "conflicting lengths", raw: req("POST", m, "", "Content-Type: application/json", "Content-Length: 2", "Content-Length: 3") + "{}", want: bad, closed: true},
		hostile{name: "plus-signed length", raw: req("POST", m, "", "Content-Type: application/json", "Content-Length: +2") + "{}", want: bad, closed: true},
		hostile{name: "length and chunked", raw: req("POST", m, "", "Content-Type: application/json", "Content-Length: 4", "Transfer-Encoding: chunked") + "2\r\n{}\r\n0\r\n\r\n", want: []int{200, 400}, closed: true},
		hostile{name: "unknown transfer coding", raw: req("POST", m, "", "Content-Type: application/json", "Transfer-Encoding: gzip") + "{}", want: []int{400, 501}, closed: true},
		hostile{name: "invalid chunk size", script: stall(req("POST", m, "", "Content-Type: application/json", "Transfer-Encoding: chunked") + "zz\r\n{}\r\n0\r\n\r\n"), want: bad, closed: true},
		hostile{name: "chunked with trailer", raw: req("POST", m, "", "Content-Type: application/json", "Transfer-Encoding: chunked") + fmt.Sprintf("%x\r\n%s\r\n0\r\nX-Trailer: 1\r\n\r\n", len(msg(false)), msg(false)), want: ok},
		hostile{name: "Expect: 100-continue", raw: post(msg(false), "Expect: 100-continue"), want: ok},
		hostile{name: "text/plain body", raw: strings.Replace(post(msg(false)), "application/json", "text/plain", 1), want: []int{415}},
		hostile{name: "no content type", raw: strings.Replace(post(msg(false)), "Content-Type: application/json\r\n", "", 1), want: ok},
	)

	add("headers",
		hostile{name: "headers one byte at a time", script: func(c net.Conn, stop <-chan struct{}) {
			for _, b := range []byte(post(msg(false))) {
				if _, err := c.Write([]byte{b}); err != nil {
					return
				}
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond): // the client's pace
				}
			}
			<-stop
		}, want: []int{400, 408}, closed: true},
		hostile{name: "oversized header value", raw: post(msg(false), "X-Big: "+strings.Repeat("b", 16<<10)), want: []int{431}, closed: true},
		hostile{name: "2,000 headers", raw: post(msg(false), slices.Repeat([]string{"X-Many: 1"}, 2000)...), want: []int{431}, closed: true},
		hostile{name: "space in a header name", raw: post(msg(false), "X Bad: 1"), want: bad, closed: true},
		hostile{name: "NUL in a header value", raw: post(msg(false), "X-Nul: a\x00b"), want: bad, closed: true},
		hostile{name: "header line without a colon", raw: post(msg(false), "NoColonHere"), want: bad, closed: true},
		hostile{name: "obsolete line folding", raw: post(msg(false), "X-Fold: a", " folded"), want: either, closed: true},
		hostile{name: "no Host on HTTP/1.1", raw: bare("GET /healthz HTTP/1.1", nil, ""), want: bad, closed: true},
		hostile{name: "two Host headers", raw: bare("GET /healthz HTTP/1.1", []string{"Host: 127.0.0.1", "Host: localhost"}, ""), want: bad, closed: true},
		hostile{name: "foreign Host (DNS rebinding)", raw: strings.Replace(post(msg(false)), "Host: 127.0.0.1", "Host: evil.example", 1), want: []int{403}},
		hostile{name: "no key", raw: strings.Replace(post(msg(false)), "X-Api-Key: "+hostileKey+"\r\n", "", 1), want: []int{401}},
		hostile{name: "wrong key", raw: strings.Replace(post(msg(false)), hostileKey, "lh-hostile-key-0002", 1), want: []int{401}},
		hostile{name: "empty bearer", raw: strings.Replace(post(msg(false)), "X-Api-Key: "+hostileKey, "Authorization: Bearer ", 1), want: []int{401}},
		hostile{name: "key with invalid UTF-8", raw: strings.Replace(post(msg(false)), hostileKey, "\xff\xfe", 1), want: []int{401}},
		hostile{name: "16 KiB URL", raw: req("GET", "/v1/models?q="+strings.Repeat("q", 16<<10), ""), want: []int{414, 431}, closed: true},
		hostile{name: "bare LF line ends", raw: strings.ReplaceAll(req("GET", "/v1/models", ""), "\r\n", "\n"), want: []int{200, 400}, closed: true},
		hostile{name: "cross-site page", raw: post(msg(false), "Origin: https://evil.example", "Sec-Fetch-Site: cross-site"), want: []int{403}},
	)

	add("method",
		hostile{name: "PUT messages", raw: req("PUT", m, msg(false)), want: []int{404, 405}},
		hostile{name: "DELETE messages", raw: req("DELETE", m, ""), want: []int{404, 405}},
		hostile{name: "PATCH models", raw: req("PATCH", "/v1/models", "{}"), want: []int{404, 405}},
		hostile{name: "TRACE root", raw: req("TRACE", "/", ""), want: []int{404, 405}},
		hostile{name: "unknown method", raw: req("FOO", m, ""), want: []int{404, 405}},
		hostile{name: "lowercase method", raw: req("post", m, msg(false)), want: []int{404, 405}},
		hostile{name: "CONNECT", raw: bare("CONNECT 127.0.0.1:443 HTTP/1.1", []string{"Host: 127.0.0.1:443"}, ""), want: []int{400, 404, 405}, closed: true},
		hostile{name: "OPTIONS without an Origin", raw: req("OPTIONS", m, ""), want: []int{403}},
		hostile{name: "HEAD messages", raw: req("HEAD", m, ""), method: "HEAD", want: []int{404, 405}},
		hostile{name: "OPTIONS *", raw: bare("OPTIONS * HTTP/1.1", []string{"Host: 127.0.0.1"}, ""), want: []int{200, 400, 404}},
		hostile{name: "method of 10,000 letters", raw: req(strings.Repeat("G", 10000), m, ""), want: []int{400, 404, 405, 431}, closed: true},
	)

	// Path tricks reach for the UI's API without the key; the stub UI counts any that get in.
	noKey := func(method, path string) string {
		return bare(method+" "+path+" HTTP/1.1", []string{"Host: 127.0.0.1"}, "")
	}
	refused := []int{301, 307, 308, 400, 401, 404}
	add("path",
		hostile{name: "dot-dot into the API", raw: noKey("GET", "/longhaul/../longhaul/v1/status"), want: refused, closed: true},
		hostile{name: "dot-dot inside the API", raw: noKey("GET", "/longhaul/v1/../v1/status"), want: refused, closed: true},
		hostile{name: "double slash", raw: noKey("GET", "/longhaul//v1/status"), want: refused, closed: true},
		hostile{name: "encoded slash", raw: noKey("GET", "/longhaul/v1%2fstatus"), want: refused, closed: true},
		hostile{name: "encoded slashes throughout", raw: noKey("GET", "/longhaul%2fv1%2fstatus"), want: refused, closed: true},
		hostile{name: "encoded NUL", raw: noKey("GET", "/longhaul/v1/status%00"), want: refused, closed: true},
		hostile{name: "raw NUL", raw: noKey("GET", "/longhaul/v1/st\x00atus"), want: refused, closed: true},
		hostile{name: "dot segment", raw: noKey("GET", "/longhaul/./v1/status"), want: refused, closed: true},
		hostile{name: "encoded dot-dot", raw: noKey("GET", "/longhaul/%2e%2e/longhaul/v1/status"), want: refused, closed: true},
		hostile{name: "encoded letter", raw: noKey("GET", "/%6conghaul/v1/status"), want: refused, closed: true},
		hostile{name: "absolute form", raw: noKey("GET", "http://127.0.0.1/longhaul/v1/status"), want: refused, closed: true},
		hostile{name: "asterisk target", raw: noKey("GET", "*"), want: refused, closed: true},
		hostile{name: "semicolon parameter", raw: noKey("GET", "/longhaul/v1/status;x=1"), want: refused, closed: true},
		hostile{name: "backslashes", raw: noKey("GET", `/longhaul\v1\status`), want: refused, closed: true},
		hostile{name: "login path trick", raw: noKey("GET", "/longhaul/v1/login/../status"), want: refused, closed: true},
		hostile{name: "write through dot-dot", raw: bare("POST /v1/messages/../../longhaul/v1/proxy HTTP/1.1", []string{"Host: 127.0.0.1", "Content-Type: application/json", "Content-Length: 2"}, "{}"), want: refused, closed: true},
	)

	add("protocol",
		hostile{name: "HTTP/1.0 health check", raw: bare("GET /healthz HTTP/1.0", nil, ""), want: ok},
		hostile{name: "HTTP/1.0 message", raw: strings.Replace(post(msg(false)), "HTTP/1.1", "HTTP/1.0", 1), want: ok},
		hostile{name: "HTTP/1.0 stream", raw: strings.Replace(post(msg(true)), "HTTP/1.1", "HTTP/1.0", 1), want: ok},
		hostile{name: "HTTP/0.9", raw: "GET /\r\n\r\n", want: []int{400, 505}, closed: true},
		hostile{name: "HTTP/2 preface", raw: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", want: []int{400, 505}, closed: true},
		hostile{name: "HTTP/3.0", raw: bare("GET /healthz HTTP/3.0", []string{"Host: 127.0.0.1"}, ""), want: []int{400, 505}, closed: true},
		hostile{name: "pipelined health checks", raw: strings.Repeat(bare("GET /healthz HTTP/1.1", []string{"Host: 127.0.0.1"}, ""), 10), want: ok, replies: 10},
		hostile{name: "pipelined message and health check", raw: post(msg(false)) + bare("GET /healthz HTTP/1.1", []string{"Host: 127.0.0.1"}, ""), want: ok, replies: 2},
		hostile{name: "pipelined stream and message", raw: post(msg(true)) + post(msg(false)), want: ok, replies: 2},
		hostile{name: "pipelined after an error", raw: post(`{"model":`) + bare("GET /healthz HTTP/1.1", []string{"Host: 127.0.0.1"}, ""), want: []int{400, 200}, replies: 2},
		hostile{name: "websocket upgrade", raw: post(msg(false), "Connection: Upgrade", "Upgrade: websocket"), want: ok},
		hostile{name: "Connection: close", raw: post(msg(false), "Connection: close"), want: ok},
	)

	stalled := func(after int) *proxytest.Reply {
		return &proxytest.Reply{Message: proxytest.ManyEvents(40, ""), StallAfter: after}
	}
	add("vanish",
		hostile{name: "mid request line", script: hangUp("POST /v1/mess", 0, false), vanish: true},
		hostile{name: "mid headers", script: hangUp(post(msg(true))[:60], 0, false), vanish: true},
		hostile{name: "after headers, before the body", script: hangUp(strings.SplitAfter(post(msg(true)), "\r\n\r\n")[0], 0, false), vanish: true},
		hostile{name: "mid body", script: hangUp(post(msg(true))[:len(post(msg(true)))-10], 0, false), vanish: true},
		hostile{name: "after the request", script: hangUp(post(msg(true)), 0, false), vanish: true, upstream: stalled(3)},
		hostile{name: "while the upstream waits to answer", script: hangUpWhenForwarded(post(msg(true)), upstreamSaw), vanish: true, upstream: &proxytest.Reply{Message: proxytest.ManyEvents(5, ""), FirstByteDelay: time.Hour}},
		hostile{name: "after the first event", script: hangUp(post(msg(true)), 1, false), vanish: true, upstream: stalled(2)},
		hostile{name: "mid stream", script: hangUp(post(msg(true)), 1500, false), vanish: true, upstream: stalled(20)},
		hostile{name: "mid stream, reset", script: hangUp(post(msg(true)), 1500, true), vanish: true, upstream: stalled(20)},
		hostile{name: "non-stream while the upstream stalls", script: hangUpWhenForwarded(post(msg(false)), upstreamSaw), vanish: true, upstream: stalled(1)},
		hostile{name: "count_tokens mid body", script: hangUp(req("POST", m+"/count_tokens", msg(false))[:150], 0, false), vanish: true},
	)
	// Other spellings of the UI's API and the proxy's, without the key (app/door/spellings_test.go
	// tries them all on every route with the real UI, with the key and without it).
	neverServed := []int{401, 404}
	for _, p := range []string{
		"/longhaul/longhaul/v1/settings", "/longhaul/%6conghaul/v1/settings", "//longhaul/v1/settings",
		"/longhaul//v1/settings", "/longhaul/./v1/settings", "/longhaul/x/../v1/settings", "/LONGHAUL/v1/settings",
		"/longhaul./v1/settings", "/longhaul/v1/settings.", "/longhaul%2fv1%2fsettings",
		"/longhaul/v1%2Fsettings", `/longhaul\v1\settings`, "/longhaul/%2e/v1/settings", "/longhaul/%76%31/settings",
		"//v1/messages", "/v1//messages", "/./v1/messages", "/V1/messages", "/v1/%6dessages", "/v1%2fmessages",
		"/longhaul/v1/messages", "/longhaul/longhaul/", "/longhaul/%2e%2e/v1/messages",
	} {
		add("spellings",
			hostile{name: "GET " + p, raw: bare("GET "+p+" HTTP/1.1", []string{"Host: 127.0.0.1"}, ""), want: neverServed},
			hostile{name: "PUT " + p, raw: bare("PUT "+p+" HTTP/1.1", []string{"Host: 127.0.0.1", "Content-Type: application/json", "Content-Length: 2"}, "{}"), want: neverServed},
		)
	}
	// A declared body over the limit is refused at once, before any of it is read, and the
	// connection closes; so is a body that stops arriving (TestRefusalsDoNotWaitForTheBody
	// shows both without the short deadlines of this corpus).
	add("declared sizes",
		hostile{name: "declares 300 MB, sends 20 bytes", script: stall(req("POST", m, "", "Content-Type: application/json", "Content-Length: 314572800") + `{"model":"claude-son`), want: []int{413}, closed: true},
		hostile{name: "declares 300 MB without the key", script: stall(bare("POST "+m+" HTTP/1.1", []string{"Host: 127.0.0.1", "Content-Type: application/json", "Content-Length: 314572800"}, `{"model":`)), want: []int{401}, closed: true},
		hostile{name: "declares 1000 bytes without the key, sends 9", script: stall(bare("POST "+m+" HTTP/1.1", []string{"Host: 127.0.0.1", "Content-Type: application/json", "Content-Length: 1000"}, `{"model":`)), want: []int{401}, closed: true},
		hostile{name: "UI write declares 2 MiB", script: stall(bare("PUT /longhaul/v1/settings HTTP/1.1", []string{"Host: 127.0.0.1", "X-Api-Key: " + hostileKey, "Content-Type: application/json", "Content-Length: 2097152"}, `{"values":`)), want: []int{413}, closed: true},
		hostile{name: "UI write without the key, stalled", script: stall(bare("PUT /longhaul/v1/settings HTTP/1.1", []string{"Host: 127.0.0.1", "Content-Type: application/json", "Content-Length: 100"}, `{"values":`)), want: []int{401}, closed: true},
		hostile{name: "UI write as text/plain", raw: bare("POST /longhaul/v1/proxy HTTP/1.1", []string{"Host: 127.0.0.1", "X-Api-Key: " + hostileKey, "Content-Type: text/plain", "Content-Length: 2"}, "{}"), want: []int{415}},
		hostile{name: "UI write without a content type", raw: bare("DELETE /longhaul/v1/accounts/1 HTTP/1.1", []string{"Host: 127.0.0.1", "X-Api-Key: " + hostileKey}, ""), want: []int{415}},
	)
	return cs
}

const hostileMaxBody = 1 << 20

func TestHostileInputCorpus(t *testing.T) {
	up := proxytest.NewUpstream()
	defer up.Close()
	normal := proxytest.Reply{Message: proxytest.TextMessage("", "ok")}
	up.SetDefault(normal)
	upTransport := newTransport()
	var logs syncBuffer
	ui := &uiStub{}
	srv, err := New(Config{ClientKey: hostileKey, MaxBodyBytes: hostileMaxBody},
		Options{UI: ui, Transport: upTransport, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			Timeouts: Timeouts{ReadHeader: time.Second, BodyRead: time.Second, Idle: 10 * time.Second, MaxHeaderBytes: 8 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetAccounts([]pool.Account{{ID: 1, Label: "up", BaseURL: up.URL, Secret: "sk-ant-upstream-hostile-0001", Enabled: true}})
	addr := startListening(t, srv)

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	good := func(t *testing.T) {
		t.Helper()
		r, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages", strings.NewReader(msg(false)))
		r.Header.Set("X-Api-Key", hostileKey)
		r.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(r)
		if err != nil {
			t.Fatalf("the next good request failed: %v", err)
		}
		body := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(body, `"type":"message"`) {
			t.Fatalf("the next good request: %d %.200s; want 200 with a message", resp.StatusCode, body)
		}
	}
	good(t)
	settle := func() int {
		upTransport.CloseIdleConnections()
		return runtime.NumGoroutine()
	}
	// The fewest goroutines seen while the warm-up's connections wind down.
	baseline := settle()
	for range 50 {
		time.Sleep(10 * time.Millisecond)
		baseline = min(baseline, settle())
	}

	cases := hostileCorpus(func() int { return len(up.Requests()) })
	outcomes := map[string]map[string]int{}
	var classes []string
	for i, hc := range cases {
		if i == 0 || cases[i-1].class != hc.class {
			classes = append(classes, hc.class)
			outcomes[hc.class] = map[string]int{}
		}
		t.Run(hc.class+"/"+hc.name, func(t *testing.T) {
			apiBefore := ui.api.Load()
			if hc.upstream != nil {
				up.SetDefault(*hc.upstream)
				defer up.SetDefault(normal)
			}
			outcome := runHostile(t, addr, hc)
			outcomes[hc.class][outcome]++
			if hc.upstream != nil {
				up.SetDefault(normal) // before the good request: the stalled reply is for this case only
			}
			if ui.api.Load() != apiBefore && hc.class == "path" {
				t.Errorf("a keyless request reached the UI's API")
			}
			good(t)
		})
		if i == len(cases)-1 || cases[i+1].class != hc.class {
			waitFor(t, "goroutines back to the baseline after class "+hc.class, func() bool { return settle() <= baseline })
		}
	}
	if strings.Contains(logs.String(), "panic") {
		t.Errorf("the server logged a panic:\n%s", logs.String())
	}
	t.Logf("hostile corpus: %d cases in %d classes; goroutines back to %d after each class", len(cases), len(classes), baseline)
	for _, c := range classes {
		var parts []string
		for o, n := range outcomes[c] {
			parts = append(parts, fmt.Sprintf("%s ×%d", o, n))
		}
		sort.Strings(parts)
		t.Logf("  %-9s %s", c, strings.Join(parts, ", "))
	}
}

// runHostile sends one case and returns its outcome: the statuses of the replies ("413"),
// with "+closed" when the server then closed the connection, "closed" for no reply, or
// "client gone" for a vanish case.
func runHostile(t *testing.T, addr string, hc hostile) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(waitLimit)) //nolint:errcheck // the hang guard
	stop := make(chan struct{})
	var writer sync.WaitGroup
	writer.Go(func() {
		if hc.script != nil {
			hc.script(c, stop)
			return
		}
		io.WriteString(c, hc.raw) //nolint:errcheck // the server may close first
	})
	defer writer.Wait()
	defer close(stop)
	if hc.vanish {
		writer.Wait()
		return "client gone"
	}

	br := bufio.NewReader(c)
	method := hc.method
	if method == "" {
		method = "GET"
	}
	var statuses []string
	lastClose := false
	n := max(hc.replies, 1)
	for i := range n {
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		for err == nil && resp.StatusCode == http.StatusContinue {
			resp, err = http.ReadResponse(br, &http.Request{Method: method})
		}
		if err != nil {
			if isTimeout(err) {
				t.Fatalf("no reply and no close within %v", waitLimit)
			}
			if i == 0 && !hc.closed {
				t.Fatalf("connection closed without a reply (%v); want one of %v", err, hc.want)
			}
			if i > 0 {
				t.Fatalf("reply %d of %d missing: %v", i+1, n, err)
			}
			return "closed"
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if isTimeout(err) {
			t.Fatalf("reply body still open after %v", waitLimit)
		}
		if !slices.Contains(hc.want, resp.StatusCode) {
			t.Errorf("reply %d: status %d %.200q; want one of %v", i+1, resp.StatusCode, body, hc.want)
		}
		statuses = append(statuses, strconv.Itoa(resp.StatusCode))
		lastClose = resp.Close
		if resp.StatusCode >= 400 && method != "HEAD" {
			if anthropicShaped(body) {
				continue
			}
			// net/http's own refusal (before any handler): plain text, then the end.
			if !resp.Close {
				t.Errorf("status %d with body %.200q: neither Anthropic's error shape nor a closed connection", resp.StatusCode, body)
			}
		}
	}
	out := strings.Join(slices.Compact(statuses), "+")
	if lastClose {
		// The server said it closes: it must, and send nothing more.
		if rest, err := br.ReadByte(); err == nil {
			t.Errorf("unexpected bytes after the replies: %q", rest)
		} else if isTimeout(err) {
			t.Fatalf("the server announced a close but kept the connection open %v", waitLimit)
		}
		out += "+closed"
	}
	return out
}

// anthropicShaped reports whether body is an error in Anthropic's shape, of any type.
func anthropicShaped(body []byte) bool {
	e, ok := anthropic.ParseError(body)
	return ok && e.Type != "" && e.Message != "" && bytes.HasPrefix(body, []byte(`{"type":"error"`))
}

func isTimeout(err error) bool {
	var ne net.Error
	return err != nil && errors.As(err, &ne) && ne.Timeout()
}
