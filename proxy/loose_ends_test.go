package proxy

import (
	"strings"
	"testing"

	"longhaul/proxy/compact"
	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

// A stream that opens with 200 and then an error as its first event has sent the client
// nothing yet: the next account answers, and the client never sees the error.
func TestStreamOpeningWithAnErrorEventIsRetried(t *testing.T) {
	f := newRotationFixture(t, 2, Config{Policy: pool.PolicyFillFirst, NoSessionAffinity: true})
	f.ups[0].SetDefault(proxytest.Reply{ErrorEventFirst: true})
	resp, body := f.post(t, strings.Replace(rotReq, `"max_tokens"`, `"stream":true,"max_tokens"`, 1))
	if resp.StatusCode != 200 || strings.Contains(body, "event: error") || len(f.ups[1].Requests()) != 1 {
		t.Fatalf("status %d body %q; want account 2's stream and no error", resp.StatusCode, body)
	}
	ex := f.obs.last(t)
	if len(ex.Attempts) != 2 || ex.Attempts[0].Status != 529 || ex.Attempts[1].Status != 200 {
		t.Errorf("attempts %+v; want account 1 failed as overloaded (529), account 2 answered", ex.Attempts)
	}
	if st := f.status(1); st.CoolingUntil["claude-sonnet-4-5"].IsZero() {
		t.Errorf("account 1 status %+v; want it cooling down for the model", st)
	}
}

// Cooldowns are kept by the model an account was sent: a mapped model that fails cools down
// what was sent, and another model the client asks for, sent as itself, is not held back.
func TestCooldownIsKeptByTheModelSent(t *testing.T) {
	f := newRotationFixture(t, 1, Config{ModelMap: []pool.ModelMapping{{Pattern: "claude-3-5-haiku*", Model: "claude-haiku-4-5"}}})
	f.ups[0].Enqueue(proxytest.Overloaded())
	resp, _ := f.post(t, `{"model":"claude-3-5-haiku-20241022","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`)
	resp.Body.Close()
	st := f.status(1)
	if st.CoolingUntil["claude-haiku-4-5"].IsZero() || !st.CoolingUntil["claude-3-5-haiku-20241022"].IsZero() {
		t.Fatalf("cooling %v; want the model sent (claude-haiku-4-5) cooling, not the name asked", st.CoolingUntil)
	}
	if resp, body := f.post(t, rotReq); resp.StatusCode != 200 {
		t.Errorf("another model on the same account: status %d %s; want 200", resp.StatusCode, body)
	}
	// The mapped model is still cooling: a request for it waits, whatever name it used.
	resp, _ = f.post(t, `{"model":"claude-haiku-4-5","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`)
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Errorf("the cooling model by its own name: status %d; want 503", resp.StatusCode)
	}
}

// The ledger names the model map's rename, on the step the proxy adds around the engine's.
func TestLedgerRecordsTheModelMap(t *testing.T) {
	f := newRotationFixture(t, 1, Config{ModelMap: []pool.ModelMapping{{Pattern: "claude-3-5-haiku*", Model: "claude-haiku-4-5"}}})
	resp, _ := f.post(t, `{"model":"claude-3-5-haiku-20241022","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`)
	resp.Body.Close()
	ex := f.obs.last(t)
	if len(ex.Compaction) != 1 || ex.Compaction[0].Layer != StepModelMap || len(ex.Compaction[0].Edits) != 1 {
		t.Fatalf("ledger %+v; want one model-map step", ex.Compaction)
	}
	e := ex.Compaction[0].Edits[0]
	if e.Kind != compact.EditModelRenamed || e.Before != "claude-3-5-haiku-20241022" || e.After != "claude-haiku-4-5" {
		t.Errorf("model-map edit %+v", e)
	}
}
