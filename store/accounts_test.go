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

	b, err := st.AddAccount(ctx, Account{Label: "backup", Kind: KindOpenAICompatible, BaseURL: "http://localhost:8080/v1",
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
