package pool

import (
	"testing"
	"time"
)

func TestSessionAccountViewsBindingWithoutRenewingIt(t *testing.T) {
	p := New(nil)
	p.SetAccounts([]Account{{ID: 1, Label: "a", Secret: "sk-ant-a-secret-000001", Enabled: true}, {ID: 2, Label: "b", Secret: "sk-ant-b-secret-000002", Enabled: true}})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	picked, err := p.Pick(Pick{Model: "m", SessionID: "s1"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := p.SessionAccount("s1", t0.Add(time.Minute))
	if !ok || got.ID != picked.ID || got.Secret != "" {
		t.Errorf("SessionAccount(s1) = %+v, %t; want account %d without its secret", got, ok, picked.ID)
	}
	// Viewing must not renew: an hour after the pick the binding is gone.
	if _, ok := p.SessionAccount("s1", t0.Add(affinityTTL)); ok {
		t.Errorf("SessionAccount after the TTL = ok; want expired")
	}
	p.SetAccounts([]Account{{ID: picked.ID, Secret: "sk-ant-unlabelled-000000abcd", Enabled: true}})
	if got, ok := p.SessionAccount("s1", t0.Add(time.Minute)); !ok || got.Name() != "sk-…abcd" || got.Secret != "" {
		t.Errorf("unlabelled SessionAccount = %+v (name %q), %t; want the masked key as its name, no secret", got, got.Name(), ok)
	}
	if _, ok := p.SessionAccount("unknown", t0); ok {
		t.Errorf("SessionAccount(unknown) = ok; want not bound")
	}
}
