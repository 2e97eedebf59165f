package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"longhaul/store"
)

// protocolUpstream is a scripted upstream of one kind that accepts goodKey and refuses any
// other key the way the real API does (status and error body). It records what it saw.
type protocolUpstream struct {
	*httptest.Server
	mu   sync.Mutex
	seen []seenRequest
}

type seenRequest struct {
	method, path string
	header       http.Header
}

func (u *protocolUpstream) requests() []seenRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]seenRequest(nil), u.seen...)
}

// Error bodies as each API answers a bad key (the key echoed, as OpenAI does, so that the test
// sees it cut out of the result).
func newProtocolUpstream(t *testing.T, kind, goodKey string) *protocolUpstream {
	t.Helper()
	u := &protocolUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.seen = append(u.seen, seenRequest{r.Method, r.URL.Path, r.Header.Clone()})
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch kind {
		case store.KindOpenAI, store.KindOpenAIResponses:
			key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			if r.Method != http.MethodGet || r.URL.Path != "/v1/models" {
				http.NotFound(w, r)
				return
			}
			if key != goodKey {
				w.WriteHeader(http.StatusUnauthorized)
				w.Write([]byte(`{"error":{"message":"Incorrect API key provided: ` + key + `.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`))
				return
			}
			w.Write([]byte(`{"object":"list","data":[{"id":"gpt-4o","object":"model","created":1,"owned_by":"system"}]}`))
		case store.KindGemini:
			if r.Method != http.MethodGet || r.URL.Path != "/v1beta/models" {
				http.NotFound(w, r)
				return
			}
			if r.Header.Get("X-Goog-Api-Key") != goodKey {
				w.WriteHeader(http.StatusBadRequest)
				w.Write([]byte(`{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`))
				return
			}
			w.Write([]byte(`{"models":[{"name":"models/gemini-2.5-flash","supportedGenerationMethods":["generateContent"]}]}`))
		default:
			if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
				http.NotFound(w, r)
				return
			}
			if key := r.Header.Get("X-Api-Key"); key != goodKey {
				w.WriteHeader(http.StatusUnauthorized)
				w.Write([]byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + key + `"}}`))
				return
			}
			w.Write([]byte(`{"type":"message","content":[{"type":"text","text":"p"}],"usage":{"input_tokens":8,"output_tokens":1}}`))
		}
	}))
	t.Cleanup(u.Close)
	return u
}

func TestKeyTestSpeaksTheAccountsProtocol(t *testing.T) {
	const good, wrong = "sk-good-key-000000000000000000wxyz", "sk-wrong-key-0000000000000000000zz"
	tests := []struct {
		kind        string
		basePath    string // appended to the server's URL: what a user gives for this kind
		wantRequest string
		authHeader  string // the one header that carries the key
		wantStatus  int    // for the wrong key
		wantMessage string // part of the message for the wrong key
	}{
		{store.KindAnthropic, "", "POST /v1/messages", "X-Api-Key", 401, "authentication_error: invalid x-api-key [key]"},
		{store.KindOpenAI, "/v1", "GET /v1/models", "Authorization", 401, "invalid_request_error: Incorrect API key provided: [key]."},
		{store.KindOpenAIResponses, "/v1", "GET /v1/models", "Authorization", 401, "invalid_request_error: Incorrect API key provided"},
		{store.KindGemini, "", "GET /v1beta/models", "X-Goog-Api-Key", 400, "INVALID_ARGUMENT: API key not valid"},
	}
	keyHeaders := []string{"X-Api-Key", "Authorization", "X-Goog-Api-Key"}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			up := newProtocolUpstream(t, tt.kind, good)
			a, _ := newTestApp(t)
			accounts := a.Facades(context.Background).Accounts

			res, err := accounts.TestKey(0, AccountInput{Kind: tt.kind, BaseURL: up.URL + tt.basePath, Key: good})
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK || res.Status != 200 || res.Request != tt.wantRequest || res.Message != "" {
				t.Errorf("TestKey(%s, good key) = %+v; want ok 200 from %s", tt.kind, res, tt.wantRequest)
			}
			seen := up.requests()
			if len(seen) != 1 {
				t.Fatalf("upstream saw %d requests; want 1", len(seen))
			}
			for _, h := range keyHeaders {
				if got := seen[0].header.Get(h); (h == tt.authHeader) != (got != "") {
					t.Errorf("header %s = %q; want the key in %s only", h, got, tt.authHeader)
				}
			}

			v, err := accounts.Add(AccountInput{Kind: tt.kind, BaseURL: up.URL + tt.basePath, Key: wrong})
			if err != nil {
				t.Fatal(err)
			}
			res, err = accounts.Test(v.ID)
			if err != nil {
				t.Fatal(err)
			}
			if res.OK || res.Status != tt.wantStatus || !strings.Contains(res.Message, tt.wantMessage) {
				t.Errorf("Test(%s, wrong key) = %+v; want %d with %q", tt.kind, res, tt.wantStatus, tt.wantMessage)
			}
			if b, _ := json.Marshal(res); strings.Contains(string(b), "wrong-key") {
				t.Errorf("key test result echoes the secret: %s", b)
			}
		})
	}
}

func TestKeyTestOfAStoredKeyKeepsItsKindAndOrigin(t *testing.T) {
	const secret = "sk-stored-key-00000000000000000wxyz"
	up := newProtocolUpstream(t, store.KindOpenAI, secret)
	elsewhere := newProtocolUpstream(t, store.KindOpenAI, secret)
	a, _ := newTestApp(t)
	accounts := a.Facades(context.Background).Accounts
	v, err := accounts.Add(AccountInput{Kind: store.KindOpenAI, BaseURL: up.URL + "/v1", Key: secret})
	if err != nil {
		t.Fatal(err)
	}

	// {"id": N} alone: the stored kind at the stored base URL.
	res, err := accounts.TestKey(v.ID, AccountInput{})
	if err != nil || !res.OK || res.Request != "GET /v1/models" {
		t.Errorf("TestKey(stored, empty form) = %+v, %v; want ok from GET /v1/models", res, err)
	}
	for _, in := range []AccountInput{
		{Kind: store.KindOpenAI, BaseURL: elsewhere.URL + "/v1"},
		{Kind: store.KindGemini}, // the gemini default is another origin
	} {
		_, err := accounts.TestKey(v.ID, in)
		var fe FieldErrors
		if !errors.As(err, &fe) || len(fe) != 1 || fe[0].Field != "key" {
			t.Errorf("TestKey(stored key, %+v) = %v; want a key field error", in, err)
		}
	}
	if n := len(elsewhere.requests()); n != 0 {
		t.Errorf("another origin received %d requests with the stored key; want 0", n)
	}

	_, err = accounts.TestKey(0, AccountInput{Kind: "azure", Key: secret})
	var fe FieldErrors
	if !errors.As(err, &fe) || len(fe) != 1 || fe[0].Field != "kind" {
		t.Errorf("TestKey(kind azure) = %v; want a kind field error", err)
	}
}

// A key test answered with a redirect reports it and never follows it: the key would go to
// wherever Location points, in a header net/http does not know to be secret.
func TestKeyTestNeverFollowsARedirect(t *testing.T) {
	const key = "sk-redirected-key-0000000000000wxyz"
	const querySecret = "AIza-location-query-secret-0042"
	for _, kind := range []string{store.KindAnthropic, store.KindOpenAI, store.KindOpenAIResponses, store.KindGemini} {
		for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
			t.Run(fmt.Sprintf("%s %d", kind, status), func(t *testing.T) {
				var followed atomic.Int64
				elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					followed.Add(1)
				}))
				defer elsewhere.Close()
				redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, elsewhere.URL+r.URL.Path+"?key="+querySecret, status)
				}))
				defer redirecting.Close()
				a, _ := newTestApp(t)
				res, err := a.Facades(context.Background).Accounts.TestKey(0, AccountInput{Kind: kind, BaseURL: redirecting.URL, Key: key})
				if err != nil {
					t.Fatal(err)
				}
				if n := followed.Load(); n != 0 {
					t.Fatalf("the redirect's target got %d requests; want none", n)
				}
				host := strings.TrimPrefix(elsewhere.URL, "http://")
				if res.OK || res.Status != status || !strings.Contains(res.Message, fmt.Sprintf("redirected (%d", status)) || !strings.Contains(res.Message, host) {
					t.Errorf("TestKey = %+v; want not ok, status %d, a message naming the redirect to %s", res, status, host)
				}
				if b, _ := json.Marshal(res); strings.Contains(string(b), querySecret) || strings.Contains(string(b), key) {
					t.Errorf("key test result %s holds the Location's query or the key", b)
				}
			})
		}
	}
}
