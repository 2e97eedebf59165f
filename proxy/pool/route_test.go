package pool

import (
	"errors"
	"testing"
	"time"
)

func TestPickRoutesModelsToTheKindThatHostsThem(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	accounts := []Account{
		{ID: 1, Label: "claude", Kind: KindAnthropic, Secret: "sk-ant-1", Enabled: true, Weight: 1},
		{ID: 2, Label: "openai", Kind: KindOpenAI, Secret: "sk-oai-2", Enabled: true, Weight: 1},
		{ID: 3, Label: "google", Kind: KindGemini, Secret: "gem-3", Enabled: true, Weight: 1},
		{ID: 4, Label: "deepseek", Kind: KindOpenAI, Secret: "sk-ds-4", Enabled: true, Weight: 1, Models: []string{"deepseek-*"}},
	}
	mappings := []ModelMapping{{Pattern: "claude-haiku-*", Model: "deepseek-chat", Account: "deepseek"}}
	tests := []struct {
		name  string
		model string
		want  []int64 // the accounts the pick may land on
	}{
		{"claude goes to the Anthropic account", "claude-sonnet-4-5", []int64{1}},
		{"gpt goes to OpenAI accounts that serve it", "gpt-4o", []int64{2}},
		{"o-series goes to OpenAI", "o3-mini", []int64{2}},
		{"gemini goes to the Gemini account", "gemini-2.5-pro", []int64{3}},
		{"a map entry naming an account wins over the family", "claude-haiku-4-5", []int64{4}},
		{"an unknown family may go to any account that serves it", "deepseek-chat", []int64{1, 2, 3, 4}},
		{"an allow-list keeps other models out", "gpt-4o-mini", []int64{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(nil)
			p.SetAccounts(accounts)
			seen := map[int64]bool{}
			for range 8 {
				a, err := p.Pick(Pick{Model: tt.model, ModelMap: mappings}, now)
				if err != nil {
					t.Fatalf("Pick(%q) error: %v", tt.model, err)
				}
				seen[a.ID] = true
			}
			for id := range seen {
				found := false
				for _, w := range tt.want {
					found = found || w == id
				}
				if !found {
					t.Errorf("Pick(%q) landed on account %d; want one of %v", tt.model, id, tt.want)
				}
			}
		})
	}
}

func TestPickWithOneKindSendsEverythingToIt(t *testing.T) {
	p := New(nil)
	p.SetAccounts([]Account{{ID: 7, Kind: KindOpenAI, Secret: "sk-local-key-0007", Enabled: true, Weight: 1}})
	for _, model := range []string{"claude-sonnet-4-5", "gemini-2.5-pro", "llama3"} {
		if a, err := p.Pick(Pick{Model: model}, time.Now()); err != nil || a.ID != 7 {
			t.Errorf("Pick(%q) = %d, %v; want account 7", model, a.ID, err)
		}
	}
}

func TestPickCoolingPreferredKindDoesNotSpillToAnother(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	p := New(nil)
	p.SetAccounts([]Account{
		{ID: 1, Kind: KindAnthropic, Secret: "sk-ant-000001", Enabled: true, Weight: 1},
		{ID: 2, Kind: KindOpenAI, Secret: "sk-oai-000002", Enabled: true, Weight: 1},
	})
	p.Report(1, "claude-sonnet-4-5", Outcome{Kind: OutcomeRateLimited, RetryAfter: time.Minute}, now)
	_, err := p.Pick(Pick{Model: "claude-sonnet-4-5"}, now)
	var na *NoAccountError
	if !errors.As(err, &na) || na.RetryAfter <= 0 || na.Unserved {
		t.Fatalf("Pick while the only Anthropic account cools = %v; want a cooling-down NoAccountError (never the OpenAI account)", err)
	}
}

func TestPickKindsAndUnservedModels(t *testing.T) {
	p := New(nil)
	p.SetAccounts([]Account{
		{ID: 1, Kind: KindAnthropic, Secret: "sk-ant-000001", Enabled: true, Weight: 1, Models: []string{"claude-*"}},
		{ID: 2, Kind: KindOpenAI, Secret: "sk-oai-000002", Enabled: true, Weight: 1, Models: []string{"gpt-*"}},
	})
	if a, err := p.Pick(Pick{Model: "gpt-4o", Kinds: []string{KindAnthropic}}, time.Now()); err == nil {
		t.Errorf("Pick limited to anthropic for gpt-4o = account %d; want no account", a.ID)
	}
	_, err := p.Pick(Pick{Model: "mistral-large"}, time.Now())
	var na *NoAccountError
	if !errors.As(err, &na) || !na.Unserved {
		t.Fatalf("Pick(mistral-large) = %v; want an Unserved NoAccountError", err)
	}
	if want := "account kinds configured: anthropic, openai"; !contains(na.Reason, want) {
		t.Errorf("reason %q; want it to name %q", na.Reason, want)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
