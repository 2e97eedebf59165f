package door

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"longhaul/app"
	"longhaul/app/internal/wait"
	"longhaul/app/recorder"
	"longhaul/proxy/pool"
	"longhaul/store"
)

func TestDoorStatusToggleAndEvents(t *testing.T) {
	f := newFixture(t, recorder.Options{})
	if code, st := f.do(t, "POST", "/longhaul/v1/proxy", `{"enabled":true}`); code != 200 || st["running"] != true {
		t.Fatalf("toggle on = %d %v", code, st)
	}
	resp, err := http.Get(f.door.URL + "/longhaul/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewReader(resp.Body)
	nextStatus := func() app.ProxyStatus {
		t.Helper()
		for name := ""; ; {
			line, err := events.ReadString('\n')
			if err != nil {
				t.Fatalf("event stream: %v", err)
			}
			if n, ok := strings.CutPrefix(line, "event: "); ok {
				name = strings.TrimSpace(n)
			}
			if data, ok := strings.CutPrefix(line, "data: "); ok && name == app.EventProxyStatus {
				var st app.ProxyStatus
				if err := json.Unmarshal([]byte(data), &st); err != nil {
					t.Fatal(err)
				}
				return st
			}
		}
	}
	if st := nextStatus(); !st.Running {
		t.Errorf("first status event = %+v; want the current (running) status", st)
	}

	code, v := f.do(t, "POST", "/longhaul/v1/proxy", `{"enabled":false}`)
	if code != 200 || v["running"] != false || f.srv.Running() {
		t.Errorf("toggle off = %d %v; proxy running %t", code, v, f.srv.Running())
	}
	// A status event published before the toggle (the app's start announces itself more than
	// once) may still be queued ahead of the toggle's: read on to the stopped one, which must
	// come within a few events.
	stopped := false
	for range 5 {
		if st := nextStatus(); !st.Running {
			stopped = true
			break
		}
	}
	if !stopped {
		t.Errorf("no stopped status among the 5 events after toggle off")
	}
	// The port is closed; another test may bind the freed port a moment later, so the check is
	// that a dial is refused at some point, not at the first try.
	wait.Until(t, "the proxy's port refuses connections after toggle off", func() bool {
		c, err := net.DialTimeout("tcp", v["address"].(string), time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	if code, v := f.do(t, "GET", "/longhaul/v1/status", ""); code != 200 || v["running"] != false || v["version"] != "test" {
		t.Errorf("GET status = %d %v; want stopped, version test", code, v)
	}

	r, err := http.Get(f.door.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || !strings.Contains(string(page), "Longhaul") {
		t.Errorf("GET / = %d %q; want the UI", r.StatusCode, page)
	}
}

func TestDoorRefusesForeignHostsAndOrigins(t *testing.T) {
	f := newFixture(t, recorder.Options{})
	tests := []struct {
		name, host, origin, body string
		want                     int
	}{
		{"bad body", "", "", `{}`, 400},
		{"rebound host", "attacker.example", "", `{"enabled":true}`, 403},
		{"rebound host with a port", "attacker.example:8046", "", `{"enabled":true}`, 403},
		{"cross-origin post", "", "https://attacker.example", `{"enabled":true}`, 403},
		{"same-origin post", "", "SAME", `{"enabled":true}`, 200},
		{"localhost", "localhost:8046", "", `{"enabled":true}`, 200},
		{"IPv6 loopback", "[::1]:8046", "", `{"enabled":true}`, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, f.door.URL+"/longhaul/v1/proxy", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.origin == "SAME" {
				req.Header.Set("Origin", f.door.URL)
			} else if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			r, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				Error struct{ Message string } `json:"error"`
			}
			json.NewDecoder(r.Body).Decode(&body) //nolint:errcheck // checked through the status
			r.Body.Close()
			if r.StatusCode != tt.want || (tt.want != 200 && body.Error.Message == "") {
				t.Errorf("status = %d, error %q; want %d (with a message when refused)", r.StatusCode, body.Error.Message, tt.want)
			}
		})
	}
	// On the proxy's port the proxy runs the same guard in front of the door.
	f.srv.SetUI(New(f.app, fstest.MapFS{}, Options{}).ProxyHandler())
	for origin, want := range map[string]int{"": 200, "https://attacker.example": 403} {
		req, _ := http.NewRequest(http.MethodPost, f.front.URL+"/longhaul/v1/proxy", strings.NewReader(`{"enabled":true}`))
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != want {
			t.Errorf("proxy port, Origin %q = %d; want %d", origin, r.StatusCode, want)
		}
	}
}

func TestAccountsViewMasksSecretsAndShowsLiveState(t *testing.T) {
	f := newFixture(t, recorder.Options{})
	ctx := context.Background()
	added, err := f.st.AddAccount(ctx, store.Account{Label: "work", BaseURL: "https://api.anthropic.com", Secret: "sk-ant-api03-very-secret-key-WXYZ", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.app.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	f.srv.Pool().Report(added.ID, "claude-sonnet-4-5", pool.Outcome{Kind: pool.OutcomeRateLimited, RetryAfter: time.Minute,
		Header: http.Header{"Anthropic-Ratelimit-Requests-Remaining": {"0"}}}, time.Now())
	r, err := http.Get(f.door.URL + "/longhaul/v1/accounts")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if strings.Contains(string(raw), "very-secret") {
		t.Fatalf("accounts view leaks the secret: %s", raw)
	}
	var views []app.AccountView
	if err := json.Unmarshal(raw, &views); err != nil || len(views) != 1 {
		t.Fatalf("accounts = %s (%v)", raw, err)
	}
	v := views[0]
	if v.Key != "sk-…WXYZ" || v.CoolingUntil["claude-sonnet-4-5"].IsZero() || v.RateLimit["Anthropic-Ratelimit-Requests-Remaining"] != "0" || v.Errors != 1 {
		t.Errorf("view = %+v; want masked key, cooldown, quota header and one error", v)
	}
}
