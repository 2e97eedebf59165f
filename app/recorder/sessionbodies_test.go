package recorder

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
	"longhaul/store"
)

// sessionTurn is turn n of a conversation: a fixed head, n tool rounds of ~6 KB, and the turn's
// own last message, as a client that resends the conversation sends it.
func sessionTurn(session, system string, n int, edit string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"model":"claude-sonnet-4-5","max_tokens":64,"metadata":{"user_id":"user_x_account_y_session_%s"},"system":%q,"messages":[{"role":"user","content":"Fix the tests.%s"}`, session, system, edit)
	for i := range n {
		fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"tool_use","id":"t%d","name":"Read","input":{"path":"/f%d"}}]}`, i, i)
		fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":%q}]}`, i, strings.Repeat(fmt.Sprintf("line of file %d\n", i), 400))
	}
	fmt.Fprintf(&b, `,{"role":"user","content":"continue (turn %d)"}]}`, n)
	return b.String()
}

// TestSessionTurnsStoredFromWhatTheProxyFound sends two interleaved growing sessions, and a
// turn that edits an early message, through the real proxy: every request body reads back
// byte-identical, and from each session's second turn on the writer took the part a body
// shares with the session's previous one from the proxy's comparison (it read none of it).
func TestSessionTurnsStoredFromWhatTheProxyFound(t *testing.T) {
	f := newFixture(t, Options{})
	var sent []string
	var ids []string
	for turn := 12; turn < 22; turn++ {
		for _, s := range []struct{ session, system, edit string }{{"aaaa", "Be brief.", ""}, {"bbbb", "Be thorough.", ""}} {
			edit := s.edit
			if turn == 18 && s.session == "aaaa" {
				edit = " (edited)"
			}
			body := sessionTurn(s.session, s.system, turn, edit)
			resp, reply := f.post(t, body, "Anthropic-Version", "2023-06-01")
			if resp.StatusCode != 200 {
				t.Fatalf("turn %d: status %d: %s", turn, resp.StatusCode, reply)
			}
			sent, ids = append(sent, body), append(ids, resp.Header.Get("Longhaul-Request-Id"))
		}
	}
	// Each session's first turn has no previous one; the edited turn repeats nothing (its first
	// message changed); the turn after it repeats the turn before the edit, not the body the
	// writer remembers (the edited one), so the writer compares it itself.
	f.checkStoredFromProxy(t, sent, ids, len(ids)-4)
}

// checkStoredFromProxy checks that every request body sent (ids their exchanges) reads back
// byte-identical, and that repeated of them were stored from the proxy's comparison.
func (f *fixture) checkStoredFromProxy(t *testing.T, sent, ids []string, repeated int) {
	t.Helper()
	for i, id := range ids {
		e := f.waitRecorded(t, id)
		if e.Bodies == nil || e.Bodies.Request != sent[i] {
			t.Fatalf("exchange %d: the stored request body differs from the one sent", i)
		}
	}
	if got := f.rec.Stats().BodiesRepeated; got != int64(repeated) {
		t.Errorf("%d bodies stored from the proxy's comparison; want %d", got, repeated)
	}
}

// chatTurn is turn n of a Chat Completions conversation, as sessionTurn is of a Messages one.
func chatTurn(system string, n int, edit string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"model":"gpt-4.1","messages":[{"role":"system","content":%q},{"role":"user","content":"Fix the tests.%s"}`, system, edit)
	for i := range n {
		fmt.Fprintf(&b, `,{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"read","arguments":"{\"path\":\"/f%d\"}"}}]}`, i, i)
		fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":"call_%d","content":%q}`, i, strings.Repeat(fmt.Sprintf("line of file %d\n", i), 400))
	}
	fmt.Fprintf(&b, `,{"role":"user","content":"continue (turn %d)"}]}`, n)
	return b.String()
}

// TestChatSessionTurnsStoredFromWhatTheProxyFound is the same for a Chat Completions client
// passed through to an OpenAI account: the Chat peek's comparison reaches the history too.
func TestChatSessionTurnsStoredFromWhatTheProxyFound(t *testing.T) {
	f := newFixture(t, Options{})
	chat := proxytest.NewChatUpstream()
	defer chat.Close()
	f.srv.SetAccounts([]pool.Account{{ID: 2, Label: "openai", Kind: store.KindOpenAI, BaseURL: chat.URL + "/v1", Secret: "sk-openai-upstream-0001", Enabled: true, Weight: 1}})
	var sent, ids []string
	for turn := 12; turn < 20; turn++ {
		for _, system := range []string{"Be brief.", "Be thorough."} {
			edit := ""
			if turn == 16 && system == "Be brief." {
				edit = " (edited)"
			}
			body := chatTurn(system, turn, edit)
			req, err := http.NewRequest(http.MethodPost, f.front.URL+"/v1/chat/completions", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := f.front.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			reply, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("turn %d: status %d, %v: %s", turn, resp.StatusCode, err, reply)
			}
			sent, ids = append(sent, body), append(ids, resp.Header.Get("Longhaul-Request-Id"))
		}
	}
	// As with Messages: each conversation's first turn, the edited one and the one after it
	// are stored from the writer's own comparison.
	f.checkStoredFromProxy(t, sent, ids, len(ids)-4)
}
