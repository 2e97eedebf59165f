package proxy

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

// Requests far below every threshold pass the screen unparsed, yet each reply's real count
// still teaches the estimator: after 20 of them the next request of the session is estimated
// within 3% of what the upstream (counting with its own tokenizer) will count. A session the
// proxy has not seen is estimated from the character classes alone, further off.
func TestCalibrationFromUntouchedRequests(t *testing.T) {
	up := proxytest.NewUpstream()
	t.Cleanup(up.Close)
	up.SetSimulation(proxytest.Simulation{CountTokens: true})
	// A large window: every request is far below Layer 1, and the screen lets it through unparsed.
	obs := newRecorder()
	srv, err := New(Config{Compaction: CompactionConfig{ContextLimits: map[string]int{"claude-*": 1_000_000}}}, Options{Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetAccounts([]pool.Account{{ID: 1, Label: "a", BaseURL: up.URL, Secret: "sk-ant-calib-00000000001", Enabled: true}})
	front := httptest.NewServer(srv.Handler())
	t.Cleanup(front.Close)

	s := newAgentSession()
	var sent []string
	for i := range 20 {
		s.addRound(i)
		sent = append(sent, s.body())
		resp, err := http.Post(front.URL+"/v1/messages", "application/json", strings.NewReader(sent[i]))
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: status %d", i+1, resp.StatusCode)
		}
	}
	for i, r := range up.Requests() {
		if string(r.Body) != sent[i] {
			t.Fatalf("request %d was changed on its way: the test needs untouched requests", i+1)
		}
	}
	s.addRound(20)
	next := s.body()
	real, err := proxytest.CountTokens([]byte(next))
	if err != nil {
		t.Fatal(err)
	}
	comp := srv.comp.Load()
	session := obs.last(t).SessionID
	est, err := comp.pipe.Count([]byte(next), "claude-sonnet-4-5", session)
	if err != nil {
		t.Fatal(err)
	}
	if off := relOff(est, real); off > 0.03 {
		t.Errorf("estimate %d for an upstream count of %d: %.1f%% off; want within 3%%", est, real, 100*off)
	}
	cold, _ := comp.pipe.Count([]byte(next), "claude-sonnet-4-5", "a-session-never-seen")
	t.Logf("after 20 untouched requests: %d estimated, %d counted (%.2f%% off); unseen session: %d (%.1f%% off)",
		est, real, 100*relOff(est, real), cold, 100*relOff(cold, real))
	if relOff(cold, real) <= 0.03 {
		t.Errorf("an unseen session is estimated within 3%% too (%d for %d): the test shows nothing", cold, real)
	}
}

func relOff(est, real int) float64 {
	d := float64(est - real)
	if d < 0 {
		d = -d
	}
	return d / float64(real)
}
