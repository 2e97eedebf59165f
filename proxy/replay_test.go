package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

func TestReplayUncompactedElsewhereAndUnderAnotherModel(t *testing.T) {
	cfg := Config{CaptureBodies: true, Compaction: CompactionConfig{ContextLimits: map[string]int{"claude-tiny": 600}}}
	s := newSeam(t, cfg, pool.KindAnthropic)
	second := proxytest.NewUpstream()
	defer second.Close()
	second.SetRecordBodies(true)
	s.anthropic.SetRecordBodies(true)
	s.srv.SetAccounts(append(s.srv.Pool().Accounts(), pool.Account{ID: 7, Label: "other", Kind: pool.KindAnthropic, BaseURL: second.URL, Secret: "sk-ant-other-account-0007", Enabled: true}))

	var rounds []string
	for i := range 8 {
		id := fmt.Sprintf("toolu_%02d", i)
		rounds = append(rounds, `{"role":"assistant","content":[{"type":"tool_use","id":"`+id+`","name":"run","input":{}}]},`+
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"`+id+`","content":"`+strings.Repeat("output ", 40)+`"}]}`)
	}
	original := `{"model":"claude-tiny","max_tokens":16,"metadata":{"user_id":"session-r"},"messages":[{"role":"user","content":"go"},` + strings.Join(rounds, ",") + `,{"role":"user","content":"next"}]}`
	resp, body := s.post(t, "/v1/messages?beta=true", original, "Content-Type", "application/json", "Anthropic-Beta", "b1")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}
	first := s.obs.last(t)
	if len(first.Compaction) == 0 {
		t.Fatalf("the original was not compacted; the test needs it to be")
	}
	factor := s.srv.Calibrator().Factor("claude")

	h := http.Header{"Anthropic-Beta": {"b1"}, "Anthropic-Version": {"2023-06-01"}}
	id, status, err := s.srv.Replay(context.Background(), Replay{Of: first.ID, Path: "/v1/messages?beta=true", Body: []byte(original), Header: h, NoCompaction: true, AccountID: 7}, nil)
	if err != nil || status != 200 || id == "" || id == first.ID {
		t.Fatalf("Replay = %q, %d, %v", id, status, err)
	}
	got := second.LastRequest()
	if string(got.Body) != original || got.RawQuery != "beta=true" || got.Header.Get("Anthropic-Beta") != "b1" {
		t.Errorf("the other account got %s?%s (beta %q): want the request as received", got.Path, got.RawQuery, got.Header.Get("Anthropic-Beta"))
	}
	ex := s.obs.last(t)
	if ex.ID != id || ex.ReplayOf != first.ID || len(ex.Compaction) != 0 || ex.Attempts[0].AccountID != 7 {
		t.Errorf("replay exchange %s of %q, compaction %v, account %d", ex.ID, ex.ReplayOf, ex.Compaction, ex.Attempts[0].AccountID)
	}
	if f := s.srv.Calibrator().Factor("claude"); f != factor {
		t.Errorf("a replay changed the calibration: %v → %v", factor, f)
	}

	// Under another model, on whatever account the pool picks.
	if _, _, err := s.srv.Replay(context.Background(), Replay{Of: first.ID, Path: "/v1/messages", Body: []byte(original), Model: "claude-opus-4-1", NoCompaction: true}, nil); err != nil {
		t.Fatal(err)
	}
	if ex := s.obs.last(t); ex.Model != "claude-opus-4-1" || ex.ReplayOf != first.ID {
		t.Errorf("replay under another model: model %q, of %q", ex.Model, ex.ReplayOf)
	}
	if _, _, err := s.srv.Replay(context.Background(), Replay{Path: "/v1/models", Body: []byte(`{}`)}, nil); !errors.Is(err, ErrReplayRoute) {
		t.Errorf("replay of /v1/models: %v; want ErrReplayRoute", err)
	}
}
