package door

import (
	"context"
	"strings"
	"testing"

	"longhaul/app"
	"longhaul/app/recorder"
	"longhaul/proxy/compact"
	"longhaul/proxy/proxytest"
	"longhaul/store"
)

// The pressure endpoint says which window applies and why, and what the session's prompt
// cache holds and for how long.
func TestPressureShowsTheWindowsSourceAndTheCache(t *testing.T) {
	f := newFixture(t, recorder.Options{})
	f.up.SetSimulation(proxytest.Simulation{Caching: &proxytest.CacheSim{MinTokens: -1}})
	if _, err := f.st.AddAccount(context.Background(), store.Account{Label: "work", BaseURL: f.up.URL, Secret: "sk-ant-api03-pressure-cache-account-0001", Enabled: true, Weight: 1}); err != nil {
		t.Fatal(err)
	}
	if err := f.app.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	body := `{"model":"claude-sonnet-4-5","max_tokens":64,"metadata":{"user_id":"user_x_account_y_session_cachy"},` +
		`"system":[{"type":"text","text":"` + strings.Repeat("You are careful. ", 200) + `","cache_control":{"type":"ephemeral"}}],` +
		`"messages":[{"role":"user","content":"hi"}]}`
	resp := f.post(t, body)
	f.waitRecorded(t, resp.Header.Get("Longhaul-Request-Id"))
	var p app.Pressure
	if code := f.getJSON(t, "/longhaul/v1/sessions/cachy/pressure", &p); code != 200 {
		t.Fatalf("pressure = %d", code)
	}
	if p.LimitSource != compact.WindowDefault || p.Limit != 200000 {
		t.Errorf("limit %d from %q; want the default 200000", p.Limit, p.LimitSource)
	}
	if c := p.Cache; c == nil || !c.Warm || c.Tokens <= 0 || c.TTLSeconds != 300 || c.ColdInSeconds <= 0 ||
		!strings.HasPrefix(c.Summary, "cache warm,") {
		t.Errorf("cache %+v; want warm, holding the system prompt, cold in under 5 minutes", c)
	}
}
