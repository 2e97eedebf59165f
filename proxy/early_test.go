package proxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

// earlyUpstream is an Anthropic upstream that counts the requests whose body it read whole
// and those whose body broke off, and tells when a request's body has brought its first
// prefixLen bytes.
type earlyUpstream struct {
	*httptest.Server
	mu       sync.Mutex
	armed    *prefixSignal // the signal of the next request's body, once armed
	complete [][]byte
	broken   int
	replies  chan struct{}
}

// prefixSignal is closed when a body has brought its first n bytes.
type prefixSignal struct {
	n    int
	c    chan struct{}
	once sync.Once
}

// arm returns a channel closed when the body of a request that starts after now has brought
// its first n bytes.
func (u *earlyUpstream) arm(n int) <-chan struct{} {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.armed = &prefixSignal{n: n, c: make(chan struct{})}
	return u.armed.c
}

func newEarlyUpstream(t *testing.T) *earlyUpstream {
	return newEarlyUpstreamReplying(t, proxytest.TextMessage(proxytest.DefaultModel, "Done.").JSON())
}

func newEarlyUpstreamReplying(t *testing.T, reply []byte) *earlyUpstream {
	u := &earlyUpstream{replies: make(chan struct{}, 16)}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		signal := u.armed
		u.armed = nil
		u.mu.Unlock()
		var got bytes.Buffer
		buf := make([]byte, 4096)
		for {
			n, err := r.Body.Read(buf)
			got.Write(buf[:n])
			if signal != nil && got.Len() >= signal.n {
				signal.once.Do(func() { close(signal.c) })
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				u.mu.Lock()
				u.broken++
				u.mu.Unlock()
				u.replies <- struct{}{}
				return
			}
		}
		u.mu.Lock()
		u.complete = append(u.complete, got.Bytes())
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(reply) //nolint:errcheck // the test reads it through the proxy
		u.replies <- struct{}{}
	}))
	t.Cleanup(u.Close)
	return u
}

// expect checks that the upstream read complete whole requests and broken ones, and that the
// last whole one was want (nil: not checked).
func (u *earlyUpstream) expect(t *testing.T, complete, broken int, want []byte) {
	t.Helper()
	gotComplete, gotBroken := u.counts()
	if gotComplete != complete || gotBroken != broken {
		t.Fatalf("upstream read %d whole requests and %d broken; want %d and %d", gotComplete, gotBroken, complete, broken)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if last := u.complete[len(u.complete)-1]; want != nil && !bytes.Equal(last, want) {
		t.Errorf("the upstream received %d bytes that differ from the %d the client sent", len(last), len(want))
	}
}

func (u *earlyUpstream) counts() (complete, broken int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.complete), u.broken
}

// waitReplies waits for n handler runs to end.
func (u *earlyUpstream) waitReplies(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-u.replies:
		case <-time.After(waitLimit):
			t.Fatal("the upstream did not finish a request (hang guard)")
		}
	}
}

// turnBody is turn n of a session: rounds of tool output, then the turn's own message and
// the metadata (which Claude Code sends after the messages).
func turnBody(session string, n int, extra string) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"Fix the tests."}`)
	for i := range n {
		fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"tool_use","id":"t%d","name":"Read","input":{"path":"/f%d"}}]}`, i, i)
		fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":%q}]}`, i, strings.Repeat(fmt.Sprintf("line of file %d\n", i), 300))
	}
	fmt.Fprintf(&b, `,{"role":"user","content":"continue (turn %d)%s"}],"metadata":{"user_id":"user_x_account_y_session_%s"}}`, n, extra, session)
	return []byte(b.String())
}

// postInTwoParts sends body with its first half at once and the rest only after proceed is
// closed (or at once when proceed is nil), and returns the reply's status and body.
func postInTwoParts(t *testing.T, url string, body []byte, proceed <-chan struct{}) (int, string) {
	t.Helper()
	return postPartsTo(t, url+"/v1/messages", body, proceed)
}

// postPartsTo is postInTwoParts to any route.
func postPartsTo(t *testing.T, url string, body []byte, proceed <-chan struct{}) (int, string) {
	t.Helper()
	pr, pw := io.Pipe()
	half := len(body) / 2
	go func() {
		pw.Write(body[:half]) //nolint:errcheck // the reply tells
		if proceed != nil {
			select {
			case <-proceed:
			case <-time.After(waitLimit):
				pw.CloseWithError(fmt.Errorf("the upstream received nothing of the body before the client sent all of it"))
				return
			}
		}
		pw.Write(body[half:]) //nolint:errcheck
		pw.Close()
	}()
	req, err := http.NewRequest(http.MethodPost, url, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(reply)
}

func earlyProxy(t *testing.T, cfg Config, up string) (*httptest.Server, *recorder) {
	front, obs, _ := earlyProxyServer(t, cfg, up)
	return front, obs
}

func earlyProxyServer(t *testing.T, cfg Config, up string) (*httptest.Server, *recorder, *Server) {
	obs := newRecorder()
	srv, err := New(cfg, Options{Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetAccounts([]pool.Account{{ID: 1, Label: "primary", BaseURL: up, Secret: "sk-ant-upstream-secret-0001", Enabled: true}})
	front := httptest.NewServer(srv.Handler())
	t.Cleanup(front.Close)
	return front, obs, srv
}

// TestEarlySendToAnAccountNoLongerPicked: the session's account is disabled between two
// turns. The next turn is sent early to it (the binding still names it) and the attempt loop
// picks the other account: the early send is abandoned short of a whole request, and the
// other account gets the client's bytes whole.
func TestEarlySendToAnAccountNoLongerPicked(t *testing.T) {
	first, next := turnBody("s1", 20, ""), turnBody("s1", 21, "")
	bound, other := newEarlyUpstream(t), newEarlyUpstream(t)
	front, obs, srv := earlyProxyServer(t, Config{}, bound.URL)
	if status, reply := postInTwoParts(t, front.URL, first, nil); status != http.StatusOK {
		t.Fatalf("first turn: %d %s", status, reply)
	}
	bound.waitReplies(t, 1)
	obs.last(t)
	srv.SetAccounts([]pool.Account{
		{ID: 1, Label: "primary", BaseURL: bound.URL, Secret: "sk-ant-upstream-secret-0001", Enabled: false},
		{ID: 2, Label: "other", BaseURL: other.URL, Secret: "sk-ant-upstream-secret-0002", Enabled: true},
	})
	if status, reply := postInTwoParts(t, front.URL, next, bound.arm(len(next)/4)); status != http.StatusOK {
		t.Fatalf("next turn: %d %s", status, reply)
	}
	bound.waitReplies(t, 1)
	other.waitReplies(t, 1)
	obs.last(t)
	bound.expect(t, 1, 1, first) // the first turn whole, the early send broken
	other.expect(t, 1, 0, next)
}

// TestNextTurnIsSentWhileItArrives: a session's next turn, which repeats the previous one
// forwarded as it came, reaches the upstream while the client is still sending it — the
// client holds back the second half of its body until the upstream has read a quarter of it
// — and the upstream gets exactly the client's bytes, once.
func TestNextTurnIsSentWhileItArrives(t *testing.T) {
	first, next := turnBody("s1", 20, ""), turnBody("s1", 21, "")
	up := newEarlyUpstream(t)
	front, obs := earlyProxy(t, Config{}, up.URL)
	if status, reply := postInTwoParts(t, front.URL, first, nil); status != http.StatusOK {
		t.Fatalf("first turn: %d %s", status, reply)
	}
	up.waitReplies(t, 1)
	obs.last(t)
	if status, reply := postInTwoParts(t, front.URL, next, up.arm(len(next)/4)); status != http.StatusOK {
		t.Fatalf("next turn: %d %s", status, reply)
	}
	up.waitReplies(t, 1)
	ex := obs.last(t)
	up.expect(t, 2, 0, next)
	if ex.Status != http.StatusOK || len(ex.Attempts) != 1 || ex.RequestRepeats.Bytes == 0 {
		t.Errorf("exchange: status %d, %d attempts, repeats %+v; want 200, one attempt, the previous turn repeated", ex.Status, len(ex.Attempts), ex.RequestRepeats)
	}
}

// TestEarlySendAbandoned: when the finished body shows the request must not go as it came (a
// tool result the compressor shrinks), or the client leaves mid-body, the send started early
// never gives the upstream a whole request; a request the proxy does forward reaches it
// whole, once.
func TestEarlySendAbandoned(t *testing.T) {
	for _, tc := range []struct {
		name string
		next []byte
		// leave: the client hangs up after the first half.
		leave bool
		// forwarded: what the upstream must receive whole for the next turn (nil: nothing).
		forwarded func(next []byte, got []byte) bool
	}{
		{name: "a tool result to shrink", next: turnBody("s1", 21, strings.Repeat("z", 300_000)), forwarded: func(next, got []byte) bool { return len(got) < len(next) }},
		{name: "the client leaves", next: turnBody("s1", 21, ""), leave: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newEarlyUpstream(t)
			front, obs := earlyProxy(t, Config{}, up.URL)
			if status, reply := postInTwoParts(t, front.URL, turnBody("s1", 20, ""), nil); status != http.StatusOK {
				t.Fatalf("first turn: %d %s", status, reply)
			}
			up.waitReplies(t, 1)
			obs.last(t)
			if tc.leave {
				leaveMidBody(t, front.URL, tc.next, up.arm(len(tc.next)/4))
				up.waitReplies(t, 1) // the early send, broken off
				obs.last(t)
				up.expect(t, 1, 1, nil) // the first turn whole, the next broken off
				return
			}
			if status, reply := postInTwoParts(t, front.URL, tc.next, up.arm(len(tc.next)/4)); status != http.StatusOK {
				t.Fatalf("next turn: %d %s", status, reply)
			}
			up.waitReplies(t, 2) // the early send, broken off, and the request sent
			obs.last(t)
			up.expect(t, 2, 1, nil) // the first turn and the next as decided whole, the early send broken
			up.mu.Lock()
			got := up.complete[1]
			up.mu.Unlock()
			if !tc.forwarded(tc.next, got) {
				t.Errorf("the upstream received %d bytes for a next turn of %d; not what the proxy should send", len(got), len(tc.next))
			}
		})
	}
}

// leaveMidBody sends the first half of body, waits until the upstream has some of it, and
// hangs up.
func leaveMidBody(t *testing.T, url string, body []byte, started <-chan struct{}) {
	t.Helper()
	pr, pw := io.Pipe()
	go func() {
		pw.Write(body[:len(body)/2]) //nolint:errcheck
		select {
		case <-started:
		case <-time.After(waitLimit):
		}
		pw.CloseWithError(io.ErrUnexpectedEOF)
	}()
	req, err := http.NewRequest(http.MethodPost, url+"/v1/messages", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}

// TestEarlySendThatFailsIsRetried: the next turn, sent early and taken, is refused as
// overloaded; the attempt loop retries it the usual way, and the client gets the retry's
// reply with both attempts recorded.
func TestEarlySendThatFailsIsRetried(t *testing.T) {
	up := proxytest.NewUpstream()
	t.Cleanup(up.Close)
	f := newFixture(t, Config{},
		pool.Account{ID: 1, Label: "primary", BaseURL: up.URL, Secret: "sk-ant-upstream-secret-0001", Enabled: true},
		pool.Account{ID: 2, Label: "second", BaseURL: up.URL, Secret: "sk-ant-upstream-secret-0002", Enabled: true})
	f.up = up
	first, next := turnBody("s1", 20, ""), turnBody("s1", 21, "")
	if status, reply := postInTwoParts(t, f.front.URL, first, nil); status != http.StatusOK {
		t.Fatalf("first turn: %d %s", status, reply)
	}
	f.obs.last(t)
	f.up.Enqueue(proxytest.Reply{Status: 529, Body: []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)},
		proxytest.Reply{Message: proxytest.TextMessage(proxytest.DefaultModel, "second try")})
	status, reply := postInTwoParts(t, f.front.URL, next, nil)
	if status != http.StatusOK || !strings.Contains(reply, "second try") {
		t.Fatalf("next turn: %d %s; want the retry's reply", status, reply)
	}
	ex := f.obs.last(t)
	if len(ex.Attempts) != 2 || ex.Attempts[0].Status != 529 || ex.RequestRepeats.Bytes == 0 {
		t.Fatalf("attempts %+v, repeats %+v; want the early send refused, then the retry", ex.Attempts, ex.RequestRepeats)
	}
	reqs := f.up.Requests()
	for i, r := range reqs[len(reqs)-2:] {
		if !bytes.Equal(r.Body, next) {
			t.Errorf("attempt %d sent %d bytes that differ from the client's %d", i, len(r.Body), len(next))
		}
	}
}

// chatTurn is turn n of a Chat Completions conversation, with the session in "user" at the end.
func chatTurn(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"gpt-4.1","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Fix the tests."}`)
	for i := range n {
		fmt.Fprintf(&b, `,{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"read","arguments":"{\"path\":\"/f%d\"}"}}]}`, i, i)
		fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":"call_%d","content":%q}`, i, strings.Repeat(fmt.Sprintf("line of file %d\n", i), 300))
	}
	fmt.Fprintf(&b, `,{"role":"user","content":"continue (turn %d)"}],"user":"chat-session-1"}`, n)
	return []byte(b.String())
}

// TestNextChatTurnIsSentWhileItArrives: a Chat Completions client on an OpenAI account gets
// the same: its next turn starts as the previous one did, which went upstream as received, so
// it reaches the upstream while the client is still sending it, and the upstream gets the
// client's bytes exactly, once.
func TestNextChatTurnIsSentWhileItArrives(t *testing.T) {
	completion := []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4.1","choices":[{"index":0,"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`)
	up := newEarlyUpstreamReplying(t, completion)
	obs := newRecorder()
	srv, err := New(Config{Compaction: CompactionConfig{ContextLimits: map[string]int{"gpt-*": 10_000_000}}}, Options{Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetAccounts([]pool.Account{{ID: 1, Label: "openai", Kind: pool.KindOpenAI, BaseURL: up.URL + "/v1", Secret: "sk-openai-secret-0001", Enabled: true}})
	front := httptest.NewServer(srv.Handler())
	t.Cleanup(front.Close)
	first, next := chatTurn(20), chatTurn(21)
	if status, reply := postPartsTo(t, front.URL+"/v1/chat/completions", first, nil); status != http.StatusOK {
		t.Fatalf("first turn: %d %s", status, reply)
	}
	up.waitReplies(t, 1)
	obs.last(t)
	if status, reply := postPartsTo(t, front.URL+"/v1/chat/completions", next, up.arm(len(next)/4)); status != http.StatusOK {
		t.Fatalf("next turn: %d %s", status, reply)
	}
	up.waitReplies(t, 1)
	obs.last(t)
	up.expect(t, 2, 0, next)
}

// TestRecentPrefixes: a start is matched only for its own protocol, a request that starts as a
// kept one replaces it, and no more than maxPrefixes are kept.
func TestRecentPrefixes(t *testing.T) {
	var rp recentPrefixes
	start := func(i int) []byte { return []byte(fmt.Sprintf("%08d%s", i, strings.Repeat("x", 100))) }
	notes := make([]*turnNote, maxPrefixes+2)
	for i := range notes {
		notes[i] = &turnNote{session: fmt.Sprint(i)}
		rp.remember("chat", start(i), notes[i])
	}
	if rp.match("responses", start(maxPrefixes+1)) != nil {
		t.Error("a Chat request's start matched a Responses request")
	}
	if rp.match("chat", start(0)) != nil || rp.match("chat", start(1)) != nil {
		t.Error("more than maxPrefixes starts are kept")
	}
	for i := 2; i < len(notes); i++ {
		if rp.match("chat", start(i)) != notes[i] {
			t.Errorf("start %d not matched to its note", i)
		}
	}
	again := &turnNote{session: "again"}
	rp.remember("chat", start(5), again)
	if rp.match("chat", start(5)) != again || len(rp.entries) != maxPrefixes {
		t.Errorf("a request starting as a kept one did not replace it (%d kept)", len(rp.entries))
	}
}
