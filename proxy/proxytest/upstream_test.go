package proxytest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func post(t *testing.T, u *Upstream, path, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", u.URL+path, strings.NewReader(body))
	req.Header.Set("x-api-key", "sk-test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestStreamOverHTTP(t *testing.T) {
	u := NewUpstream()
	defer u.Close()
	m := fullMessage()
	u.Enqueue(Reply{Message: m})
	body := `{"model":"x","messages":[{"role":"user","content":"say \"stream\": false"}],"stream":true}`
	resp := post(t, u, "/v1/messages?beta=true", body)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
		t.Fatalf("content-type %q", ct)
	}
	if !strings.HasPrefix(resp.Header.Get("request-id"), "req_") || resp.Header.Get("anthropic-ratelimit-requests-remaining") == "" {
		t.Fatalf("headers %v", resp.Header)
	}
	got, _ := io.ReadAll(resp.Body)
	if !bytes.Equal(got, m.SSE()) {
		t.Fatalf("body differs from SSE()")
	}
	r := u.LastRequest()
	if r.Method != "POST" || r.Path != "/v1/messages" || r.RawQuery != "beta=true" || string(r.Body) != body ||
		r.Header.Get("x-api-key") != "sk-test" || r.Canceled {
		t.Fatalf("recorded %+v", r)
	}
}

func TestNonStreamJSON(t *testing.T) {
	u := NewUpstream()
	defer u.Close()
	m := fullMessage()
	u.Enqueue(Reply{Message: m})
	resp := post(t, u, "/v1/messages", `{"model":"x","stream":false,"messages":[]}`)
	if resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("content-type %q", resp.Header.Get("Content-Type"))
	}
	var got Message
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.Model != m.Model || got.StopReason != "tool_use" || got.Usage != m.Usage || len(got.Content) != 3 {
		t.Fatalf("decoded %+v", got)
	}
	for i, b := range got.Content {
		want := m.Content[i]
		if b.Type == "tool_use" { // compare JSON values, not spellings
			b.Input, want.Input = compactInput(b.Input), compactInput(want.Input)
		}
		if !reflect.DeepEqual(b, want) {
			t.Fatalf("block %d: %+v vs %+v", i, b, want)
		}
	}
	for _, f := range []string{`"type":"message"`, `"role":"assistant"`, `"stop_sequence":null`, `<this>`} {
		if !bytes.Contains(raw, []byte(f)) {
			t.Fatalf("body lacks %s: %s", f, raw)
		}
	}
}

func TestErrorsAndQueue(t *testing.T) {
	u := NewUpstream()
	defer u.Close()
	u.Enqueue(RateLimited(7), Overloaded(), ServerError(), Unauthorized(), ErrorReply(413, "request_too_large", "too big"),
		Reply{Status: 403})
	cases := []struct {
		status int
		typ    string
	}{{429, "rate_limit_error"}, {529, "overloaded_error"}, {500, "api_error"}, {401, "authentication_error"},
		{413, "request_too_large"}, {403, "permission_error"}}
	for i, c := range cases {
		resp := post(t, u, "/v1/messages", `{"stream":true}`)
		var e struct {
			Type  string
			Error struct{ Type, Message string }
			ID    string `json:"request_id"`
		}
		json.NewDecoder(resp.Body).Decode(&e)
		if resp.StatusCode != c.status || e.Type != "error" || e.Error.Type != c.typ || e.Error.Message == "" ||
			e.ID != resp.Header.Get("request-id") || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("case %d: %d %+v %v", i, resp.StatusCode, e, resp.Header)
		}
		if i == 0 && (resp.Header.Get("retry-after") != "7" || resp.Header.Get("anthropic-ratelimit-requests-remaining") != "0") {
			t.Fatalf("429 headers %v", resp.Header)
		}
	}
	// Queue drained: the default reply follows.
	u.SetDefault(Reply{Message: TextMessage("d", "default!")})
	var got Message
	json.NewDecoder(post(t, u, "/v1/messages", `{}`).Body).Decode(&got)
	if len(got.Content) != 1 || got.Content[0].Text != "default!" {
		t.Fatalf("default reply %+v", got)
	}
}

func TestStallUntilRelease(t *testing.T) {
	u := NewUpstream()
	defer u.Close()
	m := fullMessage()
	u.Enqueue(Reply{Message: m, StallAfter: 1})
	br := bufio.NewReader(post(t, u, "/v1/messages", `{"stream":true}`).Body)
	if ev, err := readEvent(br); err != nil || ev.Name != "message_start" {
		t.Fatalf("first event %v %v", ev.Name, err)
	}
	next := make(chan error, 1)
	go func() { _, err := readEvent(br); next <- err }()
	select {
	case err := <-next:
		t.Fatalf("read did not block (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	u.Release()
	if err := <-next; err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Join(m.Events()[2:], nil); !bytes.Equal(rest, want) {
		t.Fatalf("rest differs")
	}
}

func TestFailAfter(t *testing.T) {
	u := NewUpstream()
	defer u.Close()
	u.Enqueue(Reply{Message: fullMessage(), FailAfter: 3})
	evs, err := parseSSE(t, post(t, u, "/v1/messages", `{"stream":true}`).Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(evs) != 3 {
		t.Fatalf("got %d events, err %v", len(evs), err)
	}
	// Non-stream: half a body then a dropped connection.
	u.Enqueue(Reply{Message: fullMessage(), FailAfter: 1})
	if _, err := io.ReadAll(post(t, u, "/v1/messages", `{}`).Body); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("non-stream err %v", err)
	}
	if u.WaitCanceled(0) {
		t.Fatal("an upstream abort is not a client cancellation")
	}
}

func TestErrorEventAfter(t *testing.T) {
	u := NewUpstream()
	defer u.Close()
	u.Enqueue(Reply{Message: fullMessage(), ErrorEventAfter: 4})
	evs, err := parseSSE(t, post(t, u, "/v1/messages", `{"stream":true}`).Body)
	if err != nil || len(evs) != 5 {
		t.Fatalf("%d events, err %v", len(evs), err)
	}
	last := evs[4]
	if last.Name != "error" || string(last.Data) != `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` {
		t.Fatalf("last event %s %s", last.Name, last.Data)
	}
}

func TestClientCancel(t *testing.T) {
	u := NewUpstream()
	defer u.Close()
	u.Enqueue(Reply{Message: fullMessage(), StallAfter: 1})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", u.URL+"/v1/messages", strings.NewReader(`{"stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := readEvent(bufio.NewReader(resp.Body)); err != nil {
		t.Fatal(err)
	}
	if u.WaitCanceled(50 * time.Millisecond) {
		t.Fatal("cancelled before the client left")
	}
	cancel()
	if !u.WaitCanceled(30*time.Second) || !u.LastRequest().Canceled {
		t.Fatal("cancellation not observed")
	}
}

func TestFirstByteDelayHonoursHangUp(t *testing.T) {
	u := NewUpstream()
	defer u.Close()
	u.Enqueue(Reply{Message: fullMessage(), FirstByteDelay: time.Minute})
	// Hang up only once the handler has the request: a fixed client timeout
	// can fire before the handler starts on a loaded machine.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u.URL+"/v1/messages", strings.NewReader(`{}`))
		_, err := http.DefaultClient.Do(req)
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second) // a hang guard, not a measure
	for len(u.Requests()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the upstream never received the request")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("request succeeded; want it cancelled")
	}
	if !u.WaitCanceled(30 * time.Second) {
		t.Fatal("delay did not end on hang-up")
	}
}

func TestCloseDoesNotHang(t *testing.T) {
	u := NewUpstream()
	u.Enqueue(Reply{Message: fullMessage(), StallAfter: 2}, Reply{Message: fullMessage(), EventGap: time.Minute})
	for range 2 {
		resp := post(t, u, "/v1/messages", `{"stream":true}`)
		readEvent(bufio.NewReader(resp.Body))
	}
	done := make(chan struct{})
	go func() { u.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // a hang guard, not a measure
		t.Fatal("Close hung")
	}
	u.Close() // idempotent
	if u.WaitCanceled(0) {
		t.Fatal("Close must not count as a client cancellation")
	}
}

func TestReleaseGate(t *testing.T) {
	u := NewUpstream()
	defer u.Close()
	u.Release()                                                // opens the gate...
	u.SetDefault(Reply{Message: fullMessage(), StallAfter: 1}) // ...and this re-arms it
	br := bufio.NewReader(post(t, u, "/v1/messages", `{"stream":true}`).Body)
	readEvent(br)
	next := make(chan error, 1)
	go func() { _, err := readEvent(br); next <- err }()
	select {
	case <-next:
		t.Fatal("re-armed gate did not stall")
	case <-time.After(50 * time.Millisecond):
	}
	u.Release()
	if err := <-next; err != nil {
		t.Fatal(err)
	}
	// The gate stays open until the next Enqueue/SetDefault: no stall now.
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Post(u.URL+"/v1/messages", "application/json", strings.NewReader(`{"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
}

func TestCountTokensModelsAnd404(t *testing.T) {
	u := NewUpstream()
	defer u.Close()
	body := strings.Repeat("x", 400)
	var ct struct {
		InputTokens *int `json:"input_tokens"`
	}
	json.NewDecoder(post(t, u, "/v1/messages/count_tokens", body).Body).Decode(&ct)
	if ct.InputTokens == nil || *ct.InputTokens != 100 || u.LastRequest().Path != "/v1/messages/count_tokens" {
		t.Fatalf("count_tokens %+v", ct)
	}

	resp, err := http.Get(u.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			Type, ID    string
			DisplayName string `json:"display_name"`
			CreatedAt   string `json:"created_at"`
		}
		HasMore *bool  `json:"has_more"`
		FirstID string `json:"first_id"`
		LastID  string `json:"last_id"`
	}
	json.NewDecoder(resp.Body).Decode(&list)
	if len(list.Data) != 2 || list.HasMore == nil || *list.HasMore || list.FirstID != list.Data[0].ID ||
		list.LastID != list.Data[1].ID {
		t.Fatalf("models %+v", list)
	}
	for _, m := range list.Data {
		if m.Type != "model" || !strings.HasPrefix(m.ID, "claude-") || m.DisplayName == "" {
			t.Fatalf("model %+v", m)
		}
		if _, err := time.Parse(time.RFC3339, m.CreatedAt); err != nil {
			t.Fatal(err)
		}
	}

	r404 := post(t, u, "/v1/complete", `{}`)
	var e struct{ Error struct{ Type string } }
	json.NewDecoder(r404.Body).Decode(&e)
	if r404.StatusCode != 404 || e.Error.Type != "not_found_error" {
		t.Fatalf("404: %d %+v", r404.StatusCode, e)
	}
	if n := len(u.Requests()); n != 3 {
		t.Fatalf("%d requests recorded", n)
	}
}

func TestRecordingCapAndBodiesOff(t *testing.T) {
	u := NewUpstream()
	defer u.Close()
	u.SetRecordBodies(false)
	for i := range maxRecords + 5 {
		io.ReadAll(post(t, u, "/v1/messages/count_tokens", fmt.Sprint(i)).Body)
	}
	reqs := u.Requests()
	if len(reqs) != maxRecords || reqs[0].Body != nil {
		t.Fatalf("%d records", len(reqs))
	}
	if reqs[0].Header == nil || u.LastRequest().Path != "/v1/messages/count_tokens" {
		t.Fatal("bad record")
	}
	u.SetRecordBodies(true)
	io.ReadAll(post(t, u, "/v1/messages/count_tokens", "last").Body)
	if reqs = u.Requests(); string(reqs[len(reqs)-1].Body) != "last" || string(u.LastRequest().Body) != "last" {
		t.Fatal("ring order wrong")
	}
}

func TestConcurrentStreamsNoLeak(t *testing.T) {
	base := runtime.NumGoroutine()
	u := NewUpstream()
	m := ManyEvents(200, "m")
	u.SetDefault(Reply{Message: m})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Go(func() {
			resp, err := http.Post(u.URL+"/v1/messages", "application/json", strings.NewReader(`{"stream":true}`))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			if got, err := io.ReadAll(resp.Body); err != nil || !bytes.Equal(got, m.SSE()) {
				errs <- fmt.Errorf("stream differs (err %v)", err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	u.Close()
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(30 * time.Second) // a hang guard, not a measure
	for runtime.NumGoroutine() > base+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base+2 {
		t.Fatalf("%d goroutines after Close, %d before", n, base)
	}
}

func TestStreamFlag(t *testing.T) {
	cases := []string{
		`{"stream":true}`, `{"stream":false}`, ` { "stream" : true } `, `{}`, `[]`, ``, `{"stream":"true"}`,
		`{"messages":[{"content":"\"stream\":true","stream":true}],"stream":false}`,
		`{"a":"x\\","stream":true}`, `{"a":"x\\\"stream\":true","b":1}`, `{"a":{"stream":true},"n":-1.5e3,"z":null}`,
		`{"stream":true,"stream":false}`, `{"system":[{"text":"}]"}],"stream":true,"x":[1,[2,{"y":"]"}]]}`,
	}
	for _, c := range cases {
		var v struct{ Stream bool }
		json.Unmarshal([]byte(c), &v)
		if got := streamFlag([]byte(c)); got != v.Stream {
			t.Errorf("streamFlag(%s) = %v, want %v", c, got, v.Stream)
		}
	}
}

func BenchmarkLargeBodyNoRecord(b *testing.B) {
	u := NewUpstream()
	defer u.Close()
	u.SetRecordBodies(false)
	body := []byte(`{"model":"x","messages":[{"role":"user","content":"` + strings.Repeat("lorem ipsum ", 70000) + `"}],"stream":true}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		resp, err := http.Post(u.URL+"/v1/messages", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
