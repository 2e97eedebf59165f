package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/proxytest"
)

// budgetBody is a Messages request of about n bytes: one user message of text.
func budgetBody(n int, stream bool) []byte {
	head := `{"model":"claude-sonnet-4-5","max_tokens":16,"stream":` + map[bool]string{true: "true", false: "false"}[stream] + `,"messages":[{"role":"user","content":"`
	tail := `"}]}`
	return []byte(head + strings.Repeat("a", max(n-len(head)-len(tail), 1)) + tail)
}

// heldRequest is a request whose body stops halfway until it is finished or cut.
type heldRequest struct {
	pw     *io.PipeWriter
	rest   []byte
	result chan heldResult
}

type heldResult struct {
	status int
	body   string
	err    error
}

// holdRequest posts body to url with its Content-Length and sends only its first half.
func holdRequest(t *testing.T, url string, body []byte) *heldRequest {
	t.Helper()
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, url, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/json")
	h := &heldRequest{pw: pw, rest: body[len(body)/2:], result: make(chan heldResult, 1)}
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			h.result <- heldResult{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		h.result <- heldResult{status: resp.StatusCode, body: string(b), err: err}
	}()
	go pw.Write(body[:len(body)/2]) //nolint:errcheck // the pipe fails only when the test cuts it
	return h
}

// finish sends the rest of the body and returns the answer.
func (h *heldRequest) finish(t *testing.T) heldResult {
	t.Helper()
	go func() {
		h.pw.Write(h.rest) //nolint:errcheck // as above
		h.pw.Close()
	}()
	return h.wait(t)
}

// cut makes the client give up on the request mid-body.
func (h *heldRequest) cut(t *testing.T) {
	t.Helper()
	h.pw.CloseWithError(errors.New("client gave up"))
	if r := h.wait(t); r.err == nil && r.status < 400 {
		t.Errorf("a request cut mid-body was answered %d", r.status)
	}
}

func (h *heldRequest) wait(t *testing.T) heldResult {
	t.Helper()
	select {
	case r := <-h.result:
		return r
	case <-t.Context().Done():
		t.Fatal("test ended before the request")
	}
	return heldResult{}
}

// errorReply is an error reply in any of the shapes: Anthropic's type/error.type/message,
// OpenAI's error.type/message, Gemini's error.status/message.
type errorReply struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Status  string `json:"status"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeError(t *testing.T, body string) errorReply {
	t.Helper()
	var e errorReply
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("error reply %q: %v", body, err)
	}
	return e
}

// Requests in flight hold the budget while their bodies arrive: with room for three, the
// fourth is refused (529 for Anthropic's clients, 503 for OpenAI's and Gemini's, each in its
// shape) until they are done, and after them the budget is empty again.
func TestMemoryBudgetHoldsRequestsWhileTheirBodiesArrive(t *testing.T) {
	const held = 3
	body := budgetBody(256<<10, false)
	cost := bodyCost(int64(len(body)))
	f := newFixture(t, Config{MemoryBudgetBytes: held*cost + cost/2})

	var reqs []*heldRequest
	for range held {
		reqs = append(reqs, holdRequest(t, f.front.URL+"/v1/messages", body))
	}
	waitFor(t, "three requests reserving their bodies", func() bool { return f.srv.budget.inUse() == held*cost })

	for _, route := range []struct {
		path, shape string
		status      int
	}{
		{"/v1/messages", "anthropic", 529},
		{"/v1/chat/completions", "openai", http.StatusServiceUnavailable},
		{"/v1/responses", "openai", http.StatusServiceUnavailable},
		{"/v1beta/models/claude-sonnet-4-5:generateContent", "gemini", http.StatusServiceUnavailable},
	} {
		resp := f.post(t, route.path, string(body), "Content-Type", "application/json")
		got := readAll(t, resp.Body)
		resp.Body.Close()
		e := decodeError(t, got)
		shaped := map[string]bool{
			"anthropic": e.Type == "error" && e.Error.Type == anthropic.OverloadedError,
			"openai":    e.Type == "" && e.Error.Type != "" && e.Error.Status == "",
			"gemini":    e.Error.Status == "UNAVAILABLE",
		}[route.shape]
		if resp.StatusCode != route.status || !shaped || !strings.Contains(e.Error.Message, "proxy.memory_budget_bytes") || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s while the budget is held: %d %s (Retry-After %q); want %d, a %s overload naming the setting, and when to retry",
				route.path, resp.StatusCode, got, resp.Header.Get("Retry-After"), route.status, route.shape)
		}
	}
	if got := f.srv.budget.inUse(); got != held*cost {
		t.Errorf("refused requests left %d bytes reserved; want the held requests' %d", got-held*cost, held*cost)
	}

	reqs[0].cut(t)
	for _, h := range reqs[1:] {
		if r := h.finish(t); r.status != http.StatusOK {
			t.Errorf("a held request finished with %d %s, %v; want 200", r.status, r.body, r.err)
		}
	}
	waitFor(t, "the budget empty after the requests", func() bool { return f.srv.budget.inUse() == 0 })

	resp := f.post(t, "/v1/messages", string(body), "Content-Type", "application/json")
	got := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("after the held requests: %d %s; want 200", resp.StatusCode, got)
	}
	waitFor(t, "the budget empty after the last request", func() bool { return f.srv.budget.inUse() == 0 })
}

// Requests whose upstream has not answered yet hold the budget too: two streams stalled after
// their first event fill it, the next is refused, and once they end it is taken.
func TestMemoryBudgetHoldsRequestsWaitingOnTheUpstream(t *testing.T) {
	const held = 2
	body := budgetBody(64<<10, true)
	cost := bodyCost(int64(len(body))) + itemsCost(1, 0)
	f := newFixture(t, Config{MemoryBudgetBytes: held*cost + cost/2})
	f.up.SetDefault(proxytest.Reply{Message: proxytest.ManyEvents(5, ""), StallAfter: 1})

	var wg sync.WaitGroup
	statuses := make(chan int, held)
	for range held {
		wg.Go(func() {
			resp := f.post(t, "/v1/messages", string(body), "Content-Type", "application/json")
			defer resp.Body.Close()
			io.Copy(io.Discard, resp.Body) //nolint:errcheck // the status is what counts
			statuses <- resp.StatusCode
		})
	}
	waitFor(t, "two streams waiting on the upstream", func() bool { return f.srv.budget.inUse() == held*cost })

	resp := f.post(t, "/v1/messages", string(body), "Content-Type", "application/json")
	got := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 529 || decodeError(t, got).Error.Type != anthropic.OverloadedError {
		t.Errorf("third stream while two hold the budget: %d %s; want 529 overloaded_error", resp.StatusCode, got)
	}

	f.up.Release()
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != http.StatusOK {
			t.Errorf("a stalled stream ended with %d; want 200", s)
		}
	}
	waitFor(t, "the budget empty after the streams", func() bool { return f.srv.budget.inUse() == 0 })
	resp = f.post(t, "/v1/messages", string(body), "Content-Type", "application/json")
	io.Copy(io.Discard, resp.Body) //nolint:errcheck // the status is what counts
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a stream after the others ended: %d; want 200", resp.StatusCode)
	}
	waitFor(t, "the budget empty at the end", func() bool { return f.srv.budget.inUse() == 0 })
}

// A request that alone costs more than the whole budget is refused with 413 before its body is
// read, whether it declares its length or sends it in chunks; one that fails is given back.
func TestMemoryBudgetRefusesWhatCanNeverFit(t *testing.T) {
	body := budgetBody(1<<20, false)
	budget := bodyCost(int64(len(body))) / 2
	f := newFixture(t, Config{MemoryBudgetBytes: budget})
	for _, chunked := range []bool{false, true} {
		var src io.Reader = strings.NewReader(string(body))
		if chunked {
			src = struct{ io.Reader }{src} // a reader of unknown length: sent chunked
		}
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, f.front.URL+"/v1/messages", src)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := f.front.Client().Do(req)
		if err != nil {
			t.Fatalf("chunked %v: %v", chunked, err)
		}
		got := readAll(t, resp.Body)
		resp.Body.Close()
		e := decodeError(t, got)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || e.Error.Type != anthropic.RequestTooLarge || !strings.Contains(e.Error.Message, "proxy.memory_budget_bytes") {
			t.Errorf("chunked %v: %d %s; want 413 request_too_large naming the setting", chunked, resp.StatusCode, got)
		}
		waitFor(t, "the budget empty after a refusal", func() bool { return f.srv.budget.inUse() == 0 })
	}
	if n := len(f.up.Requests()); n != 0 {
		t.Errorf("the upstream received %d requests; want none", n)
	}

	// Malformed JSON, a peek's refusal and a client that leaves give their share back too.
	if err := f.srv.Reconfigure(Config{}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{"model":`, string(manyMessagesBody(0, anthropic.MaxMessages+1, 1, 0))} {
		resp := f.post(t, "/v1/messages", bad, "Content-Type", "application/json")
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("a bad request: %d; want 400", resp.StatusCode)
		}
	}
	holdRequest(t, f.front.URL+"/v1/messages", budgetBody(64<<10, false)).cut(t)
	waitFor(t, "the budget empty after failed requests", func() bool { return f.srv.budget.inUse() == 0 })
}

// A chunked body reserves as it grows: one that stops halfway holds what it has reserved so
// far, not its whole size, and gives it back when it fails.
func TestMemoryBudgetReservesAChunkedBodyAsItGrows(t *testing.T) {
	f := newFixture(t, Config{})
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, f.front.URL+"/v1/messages", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	body := budgetBody(4*chunkedStep, false)
	pw.Write(body[:2*chunkedStep+1]) //nolint:errcheck // the server reads it
	want := int64(requestBaseCost + 3*costPerBodyByte*chunkedStep)
	waitFor(t, "the arrived part of the chunked body reserved", func() bool { return f.srv.budget.inUse() == want })
	pw.CloseWithError(errors.New("client gave up"))
	<-done
	waitFor(t, "the budget empty after the chunked body failed", func() bool { return f.srv.budget.inUse() == 0 })
}

// A chunked body of proxy.max_body_bytes is taken, one byte more is not: the buffer that
// doubles as it arrives stops one byte past the limit.
func TestChunkedBodyAtTheLimit(t *testing.T) {
	const limit = 3*chunkedStep + 17
	f := newFixture(t, Config{MaxBodyBytes: limit})
	for _, tc := range []struct {
		size   int
		status int
	}{{limit, http.StatusOK}, {limit + 1, http.StatusRequestEntityTooLarge}, {100, http.StatusOK}} {
		body := budgetBody(tc.size, false)
		req, err := http.NewRequest(http.MethodPost, f.front.URL+"/v1/messages", struct{ io.Reader }{strings.NewReader(string(body))})
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := f.front.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("a chunked body of %d bytes (limit %d): %d %.200s; want %d", len(body), limit, resp.StatusCode, got, tc.status)
		}
		if tc.status == http.StatusOK && !bytes.Equal(f.up.LastRequest().Body, body) {
			t.Errorf("a chunked body of %d bytes did not reach the upstream as it was sent", len(body))
		}
	}
	waitFor(t, "the budget empty after chunked bodies", func() bool { return f.srv.budget.inUse() == 0 })
}

// A client that leaves in the middle of a stream gives its share back with the handler: the
// upstream request is cancelled and nothing stays reserved.
func TestMemoryBudgetGivenBackWhenTheClientLeaves(t *testing.T) {
	f := newFixture(t, Config{})
	f.up.SetDefault(proxytest.Reply{Message: proxytest.ManyEvents(5, ""), StallAfter: 1})
	ctx, cancel := context.WithCancel(context.Background())
	resp, rd := openStream(t, ctx, f.front.URL)
	nextEvent(t, rd, waitLimit)
	if f.srv.budget.inUse() == 0 {
		t.Fatal("a stream in flight holds nothing of the budget")
	}
	cancel()
	resp.Body.Close()
	if !f.up.WaitCanceled(waitLimit) {
		t.Fatal("the upstream request was not cancelled")
	}
	waitFor(t, "the budget empty after the client left", func() bool { return f.srv.budget.inUse() == 0 })
}
