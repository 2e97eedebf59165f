package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

// rotationFixture is a proxy with a fixed clock in front of several scripted upstreams.
type rotationFixture struct {
	ups     []*proxytest.Upstream
	srv     *Server
	front   *httptest.Server
	obs     *recorder
	now     time.Time
	revoked chan string
}

func newRotationFixture(t *testing.T, n int, cfg Config) *rotationFixture {
	t.Helper()
	f := &rotationFixture{obs: newRecorder(), now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), revoked: make(chan string, 10)}
	var accounts []pool.Account
	for i := range n {
		up := proxytest.NewUpstream()
		up.SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", fmt.Sprint("from account ", i+1))})
		f.ups = append(f.ups, up)
		accounts = append(accounts, pool.Account{ID: int64(i + 1), Label: fmt.Sprint("acct", i+1), BaseURL: up.URL, Secret: fmt.Sprintf("sk-ant-key-%012d", i+1), Enabled: true, Weight: 1})
	}
	srv, err := New(cfg, Options{Observer: f.obs, Now: func() time.Time { return f.now },
		OnAccountRevoked: func(id int64, reason string) { f.revoked <- fmt.Sprint(id, " ", reason) }})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetAccounts(accounts)
	f.srv = srv
	f.front = httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		f.front.Close()
		for _, up := range f.ups {
			up.Release()
			up.Close()
		}
	})
	return f
}

func (f *rotationFixture) post(t *testing.T, body string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Post(f.front.URL+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func (f *rotationFixture) status(id int64) pool.AccountStatus {
	for _, st := range f.srv.Pool().Status(f.now) {
		if st.ID == id {
			return st
		}
	}
	return pool.AccountStatus{}
}

const rotReq = `{"model":"claude-sonnet-4-5","max_tokens":32,"stream":true,"messages":[{"role":"user","content":"hi"}]}`

func TestRateLimitedAccountCoolsForExactlyRetryAfter(t *testing.T) {
	f := newRotationFixture(t, 2, Config{Policy: pool.PolicyFillFirst, NoSessionAffinity: true})
	f.ups[0].SetDefault(proxytest.RateLimited(37))
	resp, body := f.post(t, rotReq)
	if resp.StatusCode != 200 || len(f.ups[1].Requests()) != 1 || !strings.Contains(body, "message_stop") {
		t.Fatalf("status %d; want 200 from account 2", resp.StatusCode)
	}
	if until := f.status(1).CoolingUntil["claude-sonnet-4-5"]; !until.Equal(f.now.Add(37 * time.Second)) {
		t.Errorf("account 1 cools until %v; want exactly now+37s (%v)", until, f.now.Add(37*time.Second))
	}
	// Fill-first would prefer account 1; while it cools, account 2 serves without trying 1.
	f.post(t, rotReq)
	if n := len(f.ups[0].Requests()); n != 1 {
		t.Errorf("cooling account received %d requests; want 1", n)
	}
	f.now = f.now.Add(37 * time.Second)
	f.ups[0].SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", "back")})
	f.post(t, rotReq)
	if n := len(f.ups[0].Requests()); n != 2 {
		t.Errorf("after the cooldown account 1 received %d requests in total; want 2", n)
	}
}

func TestUnauthorizedDisablesAccountWithReason(t *testing.T) {
	f := newRotationFixture(t, 2, Config{Policy: pool.PolicyFillFirst, NoSessionAffinity: true})
	f.ups[0].SetDefault(proxytest.Unauthorized())
	resp, _ := f.post(t, rotReq)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d; want 200 from account 2", resp.StatusCode)
	}
	select {
	case got := <-f.revoked:
		if got != "1 401: invalid x-api-key" {
			t.Errorf("revocation = %q; want account 1 with the upstream's message", got)
		}
	case <-time.After(waitLimit):
		t.Fatal("OnAccountRevoked not called")
	}
	if st := f.status(1); st.Available || st.DisabledBy != "401: invalid x-api-key" {
		t.Errorf("status = %+v; want disabled with the reason", st)
	}
	f.now = f.now.Add(24 * time.Hour) // no cooldown: it stays off until the user acts
	f.post(t, rotReq)
	if n := len(f.ups[0].Requests()); n != 1 {
		t.Errorf("revoked account received %d requests; want 1", n)
	}
}

func TestFailureAfterFirstEventIsNotRetried(t *testing.T) {
	f := newRotationFixture(t, 2, Config{Policy: pool.PolicyFillFirst, NoSessionAffinity: true})
	f.ups[0].SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", "partial answer here"), FailAfter: 2})
	resp, body := f.post(t, rotReq)
	if resp.StatusCode != 200 || !strings.Contains(body, "event: error") {
		t.Fatalf("status %d body %q; want 200 with an in-band error", resp.StatusCode, body)
	}
	if n := len(f.ups[1].Requests()); n != 0 {
		t.Errorf("second account received %d requests; want none (no retry after the first byte)", n)
	}
	if st := f.status(1); st.CoolingUntil["claude-sonnet-4-5"].IsZero() || st.Errors != 1 {
		t.Errorf("account 1 status %+v; want its failure recorded (cooling, 1 error)", st)
	}
}

func TestAllCoolingAnswers503WithSoonest(t *testing.T) {
	f := newRotationFixture(t, 2, Config{NoSessionAffinity: true})
	f.ups[0].SetDefault(proxytest.RateLimited(120))
	f.ups[1].SetDefault(proxytest.RateLimited(45))
	resp, body := f.post(t, rotReq)
	if resp.StatusCode != 429 {
		t.Fatalf("first request: %d; want the last upstream 429 passed on", resp.StatusCode)
	}
	resp, body = f.post(t, rotReq)
	var e errorBody
	json.Unmarshal([]byte(body), &e)
	if resp.StatusCode != 503 || e.Error.Type != "overloaded_error" || !strings.Contains(e.Error.Message, "2026-11-22T10:00:45Z") || resp.Header.Get("Retry-After") != "45" {
		t.Errorf("all cooling: %d %s retry-after %q; want 503 overloaded_error naming 10:00:45 with retry-after 45", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
}

func TestRequestScoped429CoolsNothing(t *testing.T) {
	f := newRotationFixture(t, 3, Config{Policy: pool.PolicyFillFirst, NoSessionAffinity: true})
	tooBig := proxytest.ErrorReply(429, "rate_limit_error", "This request would exceed the rate limit for your organization (org) of 1,000 input tokens per minute.")
	for _, up := range f.ups {
		up.SetDefault(tooBig)
	}
	big := `{"model":"claude-sonnet-4-5","max_tokens":32,"messages":[{"role":"user","content":"` + strings.Repeat("w", 20000) + `"}]}`
	resp, body := f.post(t, big)
	if resp.StatusCode != 429 {
		t.Errorf("status %d %s; want the upstream's 429 passed on", resp.StatusCode, body)
	}
	for id := int64(1); id <= 3; id++ {
		if st := f.status(id); len(st.CoolingUntil) != 0 {
			t.Errorf("account %d cools down after a request-scoped 429: %+v", id, st.CoolingUntil)
		}
	}
	// A normal request right after is served at once.
	f.ups[0].SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", "fine")})
	if resp, _ := f.post(t, rotReq); resp.StatusCode != 200 {
		t.Errorf("next request: %d; want 200", resp.StatusCode)
	}
}

func TestSessionStaysOnItsAccountThroughTheProxy(t *testing.T) {
	f := newRotationFixture(t, 3, Config{})
	withSession := func(s string) string {
		return `{"model":"claude-sonnet-4-5","max_tokens":8,"metadata":{"user_id":"user_ab_account_cd_session_` + s + `"},"messages":[]}`
	}
	for range 4 {
		f.post(t, withSession("s-1"))
	}
	served := 0
	for _, up := range f.ups {
		if n := len(up.Requests()); n == 4 {
			served++
		} else if n != 0 {
			t.Errorf("an account served %d of one session's 4 requests", n)
		}
	}
	if served != 1 {
		t.Errorf("one session was served by %d accounts; want exactly 1", served)
	}
	if ex := f.obs.last(t); ex.SessionID != "s-1" {
		t.Errorf("exchange session = %q; want s-1", ex.SessionID)
	}
}

// 200 concurrent requests over 3 accounts, one failing half the time: every
// request ends as a 200 or a protocol-shaped error, and the counts add up.
func TestConcurrentRequestsWithAFlakyAccount(t *testing.T) {
	f := newRotationFixture(t, 3, Config{NoSessionAffinity: true})
	var flip atomic.Int64
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if flip.Add(1)%2 == 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(529)
			io.WriteString(w, string(errorJSON("overloaded_error", "Overloaded")))
			return
		}
		f.ups[2].ServeHTTP(w, r)
	}))
	defer flaky.Close()
	accounts := f.srv.Pool().Accounts()
	accounts[2].BaseURL = flaky.URL
	f.srv.SetAccounts(accounts)

	const n = 200
	var wg sync.WaitGroup
	var ok, shaped, other atomic.Int64
	for i := range n {
		wg.Go(func() {
			body := fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":8,"stream":%t,"messages":[{"role":"user","content":"%d"}]}`, i%2 == 0, i)
			resp, err := http.Post(f.front.URL+"/v1/messages", "application/json", strings.NewReader(body))
			if err != nil {
				other.Add(1)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var e errorBody
			switch {
			case resp.StatusCode == 200 && (strings.Contains(string(b), "message_stop") || strings.Contains(string(b), `"type":"message"`)):
				ok.Add(1)
			case json.Unmarshal(b, &e) == nil && e.Type == "error" && e.Error.Type != "":
				shaped.Add(1)
			default:
				other.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load()+shaped.Load() != n || other.Load() != 0 {
		t.Fatalf("ok %d + error %d + other %d; want %d with no other", ok.Load(), shaped.Load(), other.Load(), n)
	}
	served := int64(len(f.ups[0].Requests()) + len(f.ups[1].Requests()) + len(f.ups[2].Requests()))
	if served != ok.Load() {
		t.Errorf("upstreams served %d; clients got %d successes", served, ok.Load())
	}
	var requests, errs int64
	for id := int64(1); id <= 3; id++ {
		st := f.status(id)
		requests += st.Requests
		errs += st.Errors
	}
	if requests != flip.Load()+int64(len(f.ups[0].Requests())+len(f.ups[1].Requests())) {
		t.Errorf("pool counted %d attempts; upstreams saw %d", requests, flip.Load()+int64(len(f.ups[0].Requests())+len(f.ups[1].Requests())))
	}
	if errs != flip.Load()/2 {
		t.Errorf("pool counted %d errors; the flaky account failed %d times", errs, flip.Load()/2)
	}
}

func TestModelMapRewritesOnlyTheModel(t *testing.T) {
	f := newRotationFixture(t, 1, Config{ModelMap: []pool.ModelMapping{{Pattern: "claude-3-5-haiku*", Model: "claude-haiku-4-5"}}})
	body := `{"model" : "claude-3-5-haiku-20241022",  "max_tokens":8,"zeta":{"cache_control":{"type":"ephemeral"}},"messages":[{"role":"user","content":"hé \"q\""}]}`
	if resp, _ := f.post(t, body); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	want := strings.Replace(body, `"claude-3-5-haiku-20241022"`, `"claude-haiku-4-5"`, 1)
	if got := string(f.ups[0].LastRequest().Body); got != want {
		t.Errorf("upstream body:\n got %s\nwant %s", got, want)
	}
	if ex := f.obs.last(t); ex.Model != "claude-3-5-haiku-20241022" || ex.ModelSent != "claude-haiku-4-5" {
		t.Errorf("exchange model %q → %q", ex.Model, ex.ModelSent)
	}
	// A model no pattern matches is forwarded byte for byte.
	other := `{"model":"claude-sonnet-4-5", "max_tokens":8,"messages":[]}`
	f.post(t, other)
	if got := string(f.ups[0].LastRequest().Body); got != other {
		t.Errorf("unmapped body changed: %s", got)
	}
}

func TestSessionWithoutUserIDIsTheConversation(t *testing.T) {
	f := newRotationFixture(t, 1, Config{})
	req := func(system, first, last string) string {
		return `{"model":"m","system":"` + system + `","messages":[{"role":"user","content":[{"type":"text","text":"` + first + `"}]},{"role":"assistant","content":"ok"},{"role":"user","content":"` + last + `"}]}`
	}
	session := func(body string) string {
		t.Helper()
		f.post(t, body)
		return f.obs.last(t).SessionID
	}
	a1 := session(req("You are helpful.", "Fix the bug", "turn 1"))
	a2 := session(req("You are helpful.", "Fix the bug", "turn 2, later"))
	b := session(req("You are helpful.", "Write docs", "turn 1"))
	c := session(req("You are terse.", "Fix the bug", "turn 1"))
	if a1 == "" || a1 != a2 {
		t.Errorf("one conversation got sessions %q and %q; want one non-empty id", a1, a2)
	}
	if b == a1 || c == a1 || b == c {
		t.Errorf("different conversations share a session: %q %q %q", a1, b, c)
	}
}
