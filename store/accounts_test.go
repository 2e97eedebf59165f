package store

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

const testSecret = "sk-ant-api03-VERYSECRETKEYMATERIAL-abcd"

func TestAccountsCRUD(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)

	a, err := st.AddAccount(ctx, Account{Label: " work ", BaseURL: "https://api.anthropic.com/", Secret: testSecret + "\n", Enabled: true})
	if err != nil {
		t.Fatalf("AddAccount() = %v", err)
	}
	want := Account{ID: a.ID, Label: "work", Kind: KindAnthropic, BaseURL: "https://api.anthropic.com", Secret: testSecret,
		Enabled: true, Models: []string{}, Weight: 1, CreatedAt: testNow, UpdatedAt: testNow, SecretStorage: SecretsInDatabase}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("AddAccount() = %+v; want %+v", a, want)
	}
	if got, err := st.Account(ctx, a.ID); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Account(%d) = %+v, %v; want %+v", a.ID, got, err, want)
	}

	b, err := st.AddAccount(ctx, Account{Label: "backup", Kind: KindOpenAI, BaseURL: "http://localhost:8080/v1",
		Secret: "key-2", Models: []string{"gpt-4o"}, Priority: 5, Weight: 3})
	if err != nil {
		t.Fatalf("AddAccount(backup) = %v", err)
	}
	c, err := st.AddAccount(ctx, Account{Label: "third", BaseURL: "https://example.com", Secret: "key-3", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	list, err := st.Accounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := accountIDs(list); !reflect.DeepEqual(got, []int64{b.ID, a.ID, c.ID}) {
		t.Errorf("Accounts() ids = %v; want priority desc then id asc %v", got, []int64{b.ID, a.ID, c.ID})
	}

	// Update with an empty secret keeps the stored one (edit forms do not hold secrets).
	later := testNow.Add(time.Minute)
	st.Now = func() time.Time { return later }
	a.Label, a.Secret, a.Models, a.Priority = "work (main)", "", []string{"claude-opus-4-1"}, 9
	if err := st.UpdateAccount(ctx, a); err != nil {
		t.Fatalf("UpdateAccount() = %v", err)
	}
	got, err := st.Account(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Label != "work (main)" || got.Secret != testSecret || got.Priority != 9 ||
		!reflect.DeepEqual(got.Models, []string{"claude-opus-4-1"}) || !got.CreatedAt.Equal(testNow) || !got.UpdatedAt.Equal(later) {
		t.Errorf("Account(%d) after update = %+v; want new label, models, priority and updated_at, old secret", a.ID, got)
	}

	if err := st.SetAccountEnabled(ctx, a.ID, false, "401 from upstream"); err != nil {
		t.Fatalf("SetAccountEnabled(false) = %v", err)
	}
	if got, _ := st.Account(ctx, a.ID); got.Enabled || got.DisabledReason != "401 from upstream" {
		t.Errorf("after disabling: enabled=%v reason=%q; want false, the reason", got.Enabled, got.DisabledReason)
	}
	if err := st.SetAccountEnabled(ctx, a.ID, true, "ignored"); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Account(ctx, a.ID); !got.Enabled || got.DisabledReason != "" {
		t.Errorf("after enabling: enabled=%v reason=%q; want true and no reason", got.Enabled, got.DisabledReason)
	}

	if err := st.DeleteAccount(ctx, b.ID); err != nil {
		t.Fatalf("DeleteAccount(%d) = %v", b.ID, err)
	}
	list, err = st.Accounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := accountIDs(list); !reflect.DeepEqual(got, []int64{a.ID, c.ID}) {
		t.Errorf("Accounts() ids after delete = %v; want %v", got, []int64{a.ID, c.ID})
	}
}

func accountIDs(list []Account) []int64 {
	var ids []int64
	for _, a := range list {
		ids = append(ids, a.ID)
	}
	return ids
}

func TestAccountsNotFound(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)
	const missing = 42
	tests := []struct {
		name string
		call func() error
	}{
		{"get", func() error { _, err := st.Account(ctx, missing); return err }},
		{"update", func() error {
			return st.UpdateAccount(ctx, Account{ID: missing, BaseURL: "https://x.example", Secret: "k"})
		}},
		{"enable", func() error { return st.SetAccountEnabled(ctx, missing, true, "") }},
		{"delete", func() error { return st.DeleteAccount(ctx, missing) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s of missing account = %v; want ErrNotFound", tt.name, err)
			}
		})
	}
	if list, err := st.Accounts(ctx); err != nil || list == nil || len(list) != 0 {
		t.Errorf("Accounts() on empty store = %#v, %v; want empty non-nil list", list, err)
	}
}

func TestAddAccountValidation(t *testing.T) {
	tests := []struct {
		name      string
		account   Account
		wantField string
	}{
		{"empty secret", Account{BaseURL: "https://api.anthropic.com"}, "secret"},
		{"blank secret", Account{BaseURL: "https://api.anthropic.com", Secret: " \n"}, "secret"},
		{"no scheme", Account{BaseURL: "api.anthropic.com", Secret: testSecret}, "base_url"},
		{"ftp scheme", Account{BaseURL: "ftp://files.example", Secret: testSecret}, "base_url"},
		{"no host", Account{BaseURL: "https://", Secret: testSecret}, "base_url"},
		{"credentials in a bad URL", Account{BaseURL: "https//user:" + testSecret + "@x", Secret: testSecret}, "base_url"},
		{"unknown kind", Account{Kind: "azure", BaseURL: "https://x.example", Secret: testSecret}, "kind"},
		{"negative weight", Account{BaseURL: "https://x.example", Secret: testSecret, Weight: -1}, "weight"},
		{"blank model", Account{BaseURL: "https://x.example", Secret: testSecret, Models: []string{""}}, "models"},
	}
	ctx := context.Background()
	st, _ := openTemp(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := st.AddAccount(ctx, tt.account)
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.wantField {
				t.Fatalf("AddAccount(%s) = %v; want ValidationError for %s", tt.name, err, tt.wantField)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("AddAccount(%s) error %q reveals the secret", tt.name, err)
			}
		})
	}
	if n := countRows(t, st, "accounts"); n != 0 {
		t.Errorf("accounts rows after rejected adds = %d; want 0", n)
	}
}

func TestMaskedSecret(t *testing.T) {
	tests := []struct{ secret, want string }{
		{"", ""},
		{"abc", "…"},
		{"abcdefg", "…"},
		{"abcdefgh", "…gh"},
		{"0123456789abcde", "…de"},
		{"sk-0123456789abcd", "sk-…abcd"},
		{testSecret, "sk-…abcd"},
	}
	for _, tt := range tests {
		t.Run(tt.want+"/"+tt.secret, func(t *testing.T) {
			got := Account{Secret: tt.secret}.MaskedSecret()
			if got != tt.want {
				t.Errorf("MaskedSecret(%q) = %q; want %q", tt.secret, got, tt.want)
			}
			if shown := len([]rune(strings.ReplaceAll(got, "…", ""))); shown > 7 || (len(tt.secret) > 0 && shown*2 > len(tt.secret)) {
				t.Errorf("MaskedSecret(%q) = %q shows %d characters; want at most 7 and under half", tt.secret, got, shown)
			}
		})
	}
}

func TestAccountJSONHasNoSecret(t *testing.T) {
	b, err := json.Marshal(Account{Secret: testSecret, BaseURL: "https://x.example"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "SECRET") {
		t.Errorf("json.Marshal(Account) = %s; want no secret", b)
	}
}

func TestAccountKindsAndDefaultBaseURLs(t *testing.T) {
	tests := []struct {
		name          string
		kind, baseURL string
		wantKind      string
		wantBaseURL   string
	}{
		{"no kind is anthropic at its official endpoint", "", "", KindAnthropic, "https://api.anthropic.com"},
		{"anthropic at its official endpoint", KindAnthropic, "", KindAnthropic, "https://api.anthropic.com"},
		{"openai at the SDK's base URL", KindOpenAI, "", KindOpenAI, "https://api.openai.com/v1"},
		{"openai-responses at the SDK's base URL", KindOpenAIResponses, "", KindOpenAIResponses, "https://api.openai.com/v1"},
		{"gemini at the generativelanguage host", KindGemini, "", KindGemini, "https://generativelanguage.googleapis.com"},
		{"openai on a local Ollama over http", KindOpenAI, "http://localhost:11434/v1", KindOpenAI, "http://localhost:11434/v1"},
		{"openai on a compatible service, trailing slash trimmed", KindOpenAI, "https://api.deepseek.com/", KindOpenAI, "https://api.deepseek.com"},
		{"kind written loosely", " OpenAI ", "", KindOpenAI, "https://api.openai.com/v1"},
	}
	ctx := context.Background()
	st, _ := openTemp(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := st.AddAccount(ctx, Account{Kind: tt.kind, BaseURL: tt.baseURL, Secret: testSecret, Enabled: true})
			if err != nil {
				t.Fatalf("AddAccount(kind %q, base URL %q) = %v", tt.kind, tt.baseURL, err)
			}
			got, err := st.Account(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Kind != tt.wantKind || got.BaseURL != tt.wantBaseURL {
				t.Errorf("stored (kind %q, base URL %q) = (%q, %q); want (%q, %q)", tt.kind, tt.baseURL, got.Kind, got.BaseURL, tt.wantKind, tt.wantBaseURL)
			}
		})
	}
}

func TestAccountKindValidation(t *testing.T) {
	tests := []struct {
		name          string
		kind, baseURL string
		wantField     string
		wantMessage   string // a part of it
	}{
		{"unknown kind names every kind", "azure", "", "kind", "anthropic, openai, openai-responses, gemini"},
		{"the kind's name before migration 006", "openai-compatible", "http://localhost:8000/v1", "kind", "openai"},
		{"openai URL with the endpoint appended", KindOpenAI, "https://api.openai.com/v1/chat/completions", "base_url", "/chat/completions"},
		{"openai-responses URL with the endpoint appended", KindOpenAIResponses, "https://api.openai.com/v1/responses", "base_url", "/responses"},
		{"gemini URL with the API version", KindGemini, "https://generativelanguage.googleapis.com/v1beta", "base_url", "/v1beta"},
		{"anthropic URL with the endpoint appended", KindAnthropic, "https://api.anthropic.com/v1/messages", "base_url", "/v1/messages"},
	}
	ctx := context.Background()
	st, _ := openTemp(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := st.AddAccount(ctx, Account{Kind: tt.kind, BaseURL: tt.baseURL, Secret: testSecret})
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.wantField || !strings.Contains(ve.Message, tt.wantMessage) {
				t.Fatalf("AddAccount(kind %q, base URL %q) = %v; want a ValidationError on %s mentioning %q", tt.kind, tt.baseURL, err, tt.wantField, tt.wantMessage)
			}
		})
	}
	if n := countRows(t, st, "accounts"); n != 0 {
		t.Errorf("accounts rows after rejected adds = %d; want 0", n)
	}
}

// TestAccountKindsMigrationRewritesOldRows opens a database as the version before 006 left it:
// an "openai-compatible" account, exchanges without protocol columns.
func TestAccountKindsMigrationRewritesOldRows(t *testing.T) {
	st, path := openTemp(t)
	ctx := context.Background()
	for _, q := range []string{
		`ALTER TABLE exchanges DROP COLUMN client_protocol`, `ALTER TABLE exchanges DROP COLUMN upstream_protocol`,
		`DELETE FROM schema_migrations WHERE name = '006_account_kinds.sql'`,
		`INSERT INTO accounts (label, kind, base_url, secret, created_at, updated_at)
			VALUES ('local', 'openai-compatible', 'http://localhost:11434/v1', 'key-1', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'),
			       ('main', 'anthropic', 'https://api.anthropic.com', 'key-2', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`,
		`INSERT INTO exchanges (id, state, start_ns) VALUES ('lh_old', 'finished', 1)`,
	} {
		if _, err := st.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	again, _ := openAt(t, path)
	accounts, err := again.Accounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, a := range accounts {
		kinds[a.Label] = a.Kind
	}
	if want := map[string]string{"local": KindOpenAI, "main": KindAnthropic}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds after 006 = %v; want %v", kinds, want)
	}
	old, err := again.Exchange(ctx, "lh_old")
	if err != nil || old.ClientProtocol != "" || old.UpstreamProtocol != "" {
		t.Errorf("an exchange recorded before 006 = %+v, %v; want it readable with no protocols", old, err)
	}
}
