package proxy

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"longhaul/proxy/anthropic"
)

// Wrong client keys from one address: free up to freeStrikes, then a lockout that doubles with
// each further wrong key, during which even the right key is refused uncompared (429, with
// Retry-After), so a guesser cannot tell a right guess; other addresses, browser sessions and
// requests without a key are not held up; the right key after the lockout clears the address.
func TestWrongKeysAreThrottledPerAddress(t *testing.T) {
	const key = "lh-throttle-key-0000001"
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	var clock atomic.Pointer[time.Time]
	clock.Store(&now)
	advance := func(d time.Duration) {
		t := clock.Load().Add(d)
		clock.Store(&t)
	}
	srv, err := New(Config{ClientKey: key}, Options{UI: &uiStub{}, Now: func() time.Time { return *clock.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	ask := func(from, presented string) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest("GET", "/v1/models", nil)
		r.Host, r.RemoteAddr = "127.0.0.1", from+":40000"
		if presented != "" {
			r.Header.Set("X-Api-Key", presented)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	const attacker, other = "127.0.0.1", "127.0.0.2"

	for i := range freeStrikes {
		if w := ask(attacker, "lh-guess-"+strings.Repeat("x", i+10)); w.Code != 401 {
			t.Fatalf("wrong key %d = %d; want 401", i+1, w.Code)
		}
	}
	if w := ask(attacker, key); w.Code != 200 {
		t.Fatalf("the right key after %d wrong ones = %d; want 200 (not locked yet)", freeStrikes, w.Code)
	}
	// The right key cleared the address: five more wrong keys are free again, the sixth locks.
	for i := range freeStrikes + 1 {
		ask(attacker, "lh-guess-again-"+strings.Repeat("y", i+10))
	}
	w := ask(attacker, key)
	if e, ok := anthropic.ParseError(w.Body.Bytes()); w.Code != 429 || !ok || e.Type != anthropic.RateLimitError || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("the right key while locked out = %d %s (Retry-After %q); want 429 rate_limit_error, Retry-After 1", w.Code, w.Body, w.Header().Get("Retry-After"))
	}
	if w := ask(other, key); w.Code != 200 {
		t.Errorf("another address while the first is locked = %d; want 200", w.Code)
	}
	for range 20 {
		if w := ask(attacker, ""); w.Code != 401 {
			t.Fatalf("no key at all, while locked out = %d; want 401 (it guesses nothing)", w.Code)
		}
	}

	// Each wrong key once the lockout is over doubles it: 2 s, 4 s, … up to maxLockout.
	want := 2 * time.Second
	for range 10 {
		advance(maxLockout)
		if w := ask(attacker, "lh-guess-on-and-on-00"); w.Code != 401 {
			t.Fatalf("a wrong key after the lockout = %d; want 401 (compared, and wrong)", w.Code)
		}
		w := ask(attacker, key)
		if w.Code != 429 || w.Header().Get("Retry-After") != strconv.Itoa(int(want/time.Second)) {
			t.Fatalf("locked out: %d, Retry-After %q; want 429, %v", w.Code, w.Header().Get("Retry-After"), want)
		}
		want = min(2*want, maxLockout)
	}
	advance(maxLockout)
	if w := ask(attacker, key); w.Code != 200 {
		t.Errorf("the right key once the lockout is over = %d; want 200", w.Code)
	}

	// A browser login is throttled the same way; an open session is not held up.
	login := func(typed string) int {
		r := httptest.NewRequest("POST", LoginPath, strings.NewReader(`{"key":"`+typed+`"}`))
		r.Host, r.RemoteAddr = "127.0.0.1", attacker+":40001"
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	sessionToken := srv.guard.newSession("")
	for range freeStrikes + 1 {
		login("lh-typed-wrong-000000")
	}
	if got := login(key); got != 429 {
		t.Errorf("login with the right key while locked out = %d; want 429", got)
	}
	r := httptest.NewRequest("GET", "/longhaul/v1/status", nil)
	r.Host, r.RemoteAddr = "127.0.0.1", attacker+":40002"
	r.AddCookie(&http.Cookie{Name: sessionCookie(""), Value: sessionToken})
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Errorf("a browser session while its address is locked out = %d; want 200", w.Code)
	}
}

func TestStrikeTableIsBounded(t *testing.T) {
	g := NewGuard(nil, Timeouts{})
	now := time.Now()
	for i := range maxStrikeEntries * 2 {
		g.strikes.fail("10.0."+strconv.Itoa(i/256)+"."+strconv.Itoa(i%256), now.Add(time.Duration(i)))
	}
	if n := len(g.strikes.entries); n > maxStrikeEntries {
		t.Errorf("strike entries = %d; want at most %d", n, maxStrikeEntries)
	}
}

func TestClientAddressGroupsIPv6By64(t *testing.T) {
	for _, tc := range []struct{ remote, want string }{
		{"127.0.0.1:5000", "127.0.0.1"},
		{"[2001:db8:1:2:3:4:5:6]:5000", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff::1]:6000", "2001:db8:1:2::/64"},
		{"[::1]:5000", "::/64"},
	} {
		r := &http.Request{RemoteAddr: tc.remote}
		if got := clientAddress(r); got != tc.want {
			t.Errorf("clientAddress(%q) = %q; want %q", tc.remote, got, tc.want)
		}
	}
}
