package store

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"longhaul/store/keychain"
	"longhaul/store/keychain/keychaintest"
)

const (
	secretA   = "sk-ant-api03-first-account-secret-AAAA"
	secretB   = "plain-upstream-token-of-another-shape-BBBB" // matches no redaction pattern
	clientKey = "local-client-key-0123456789-CCCC"
)

// openWithKeychain opens path with k as its keychain and a captured log.
func openWithKeychain(t *testing.T, path string, k Keychain) (*Store, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	st, err := Open(context.Background(), path, WithKeychain(k), WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	if err != nil {
		t.Fatalf("Open(%q) = %v", path, err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	return st, logs
}

// fillPlaintext makes a database as an older version left it: two accounts and a client key,
// all in clear.
func fillPlaintext(t *testing.T, path string) (a, b Account) {
	t.Helper()
	ctx := context.Background()
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close() //nolint:errcheck // test
	if a, err = st.AddAccount(ctx, Account{Label: "a", BaseURL: "https://api.anthropic.com", Secret: secretA, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if b, err = st.AddAccount(ctx, Account{Label: "b", BaseURL: "https://upstream.example:8443", Secret: secretB, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetSetting(ctx, clientKeySetting, clientKey); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// fileContains reports which of the database's files (main, -wal, -shm) hold s in any of the
// forms a grep would find: as is, or base64.
func filesContaining(t *testing.T, path, s string) []string {
	t.Helper()
	var found []string
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(path + suffix)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(s)) || bytes.Contains(b, []byte(base64.StdEncoding.EncodeToString([]byte(s)))) {
			found = append(found, filepath.Base(path+suffix))
		}
	}
	return found
}

func rawSecretColumn(t *testing.T, st *Store, id int64) string {
	t.Helper()
	var v string
	if err := st.db.QueryRow(`SELECT secret FROM accounts WHERE id = ?`, id).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSecretsMoveToTheKeychainOnFirstStart(t *testing.T) {
	keychaintest.SecretService(t)
	k := keychain.OS{Service: "longhaul-test"}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "longhaul.db")
	a, b := fillPlaintext(t, path)
	if len(filesContaining(t, path, secretA)) == 0 {
		t.Fatal("the plaintext database does not contain the secret; the grep below proves nothing")
	}

	st, logs := openWithKeychain(t, path, k)
	if got := st.SecretStorage(); got != SecretsInKeychain {
		t.Fatalf("SecretStorage() = %q; want %q (log: %s)", got, SecretsInKeychain, logs)
	}
	for _, want := range []Account{a, b} {
		got, err := st.Account(ctx, want.ID)
		if err != nil || got.Secret != want.Secret || got.SecretStorage != SecretsInKeychain {
			t.Errorf("Account(%d) = secret %q in %q, %v; want the original secret in the keychain", want.ID, got.MaskedSecret(), got.SecretStorage, err)
		}
		raw := rawSecretColumn(t, st, want.ID)
		name, ok := strings.CutPrefix(raw, keychainRef)
		if !ok {
			t.Fatalf("secret column of account %d = %q; want a keychain reference", want.ID, MaskSecret(raw))
		}
		if got, err := k.Get(name); err != nil || got != want.Secret {
			t.Errorf("keychain entry %s = %q, %v; want the account's secret", name, MaskSecret(got), err)
		}
	}
	if got, err := st.GetSetting(ctx, clientKeySetting); err != nil || got != clientKey {
		t.Errorf("GetSetting(client key) = %q, %v; want the key, read from the keychain", MaskSecret(got), err)
	}
	for _, s := range []string{secretA, secretB, clientKey} {
		if files := filesContaining(t, path, s); len(files) > 0 {
			t.Errorf("after the move, %s still contain %s", files, MaskSecret(s))
		}
	}
	if !strings.Contains(logs.String(), "moved secrets") {
		t.Errorf("log does not say secrets were moved: %s", logs)
	}

	// A second start has nothing to move and reads the same secrets.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	again, logs := openWithKeychain(t, path, k)
	if got, err := again.Account(ctx, b.ID); err != nil || got.Secret != secretB {
		t.Errorf("after reopening, Account(%d) secret = %q, %v; want it unchanged", b.ID, got.MaskedSecret(), err)
	}
	if strings.Contains(logs.String(), "moved secrets") {
		t.Errorf("second start moved secrets again: %s", logs)
	}
}

// failingKeychain fails Set from the failAt'th call on, as an interrupted run would stop.
type failingKeychain struct {
	Keychain
	sets, failAt int
}

func (f *failingKeychain) Set(name, secret string) error {
	f.sets++
	if f.sets >= f.failAt {
		return errors.New("interrupted")
	}
	return f.Keychain.Set(name, secret)
}

func TestInterruptedMoveLosesNothingAndFinishesLater(t *testing.T) {
	keychaintest.SecretService(t)
	k := keychain.OS{Service: "longhaul-test"}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "longhaul.db")
	a, b := fillPlaintext(t, path)

	// Set 1 is the probe, 2 moves account a, 3 (account b) fails.
	st, logs := openWithKeychain(t, path, &failingKeychain{Keychain: k, failAt: 3})
	if !strings.Contains(logs.String(), "retried at the next start") {
		t.Errorf("log does not say the move is unfinished: %s", logs)
	}
	if raw := rawSecretColumn(t, st, a.ID); !strings.HasPrefix(raw, keychainRef) {
		t.Errorf("account a was not moved before the interruption")
	}
	if raw := rawSecretColumn(t, st, b.ID); raw != secretB {
		t.Errorf("account b's column = %q; want its secret still in the database", MaskSecret(raw))
	}
	for _, want := range []Account{a, b} {
		if got, err := st.Account(ctx, want.ID); err != nil || got.Secret != want.Secret {
			t.Errorf("mid-move Account(%d) = %q, %v; want its secret readable", want.ID, got.MaskedSecret(), err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st, _ = openWithKeychain(t, path, k)
	for _, want := range []Account{a, b} {
		got, err := st.Account(ctx, want.ID)
		if err != nil || got.Secret != want.Secret || got.SecretStorage != SecretsInKeychain {
			t.Errorf("after the second start Account(%d) = %q in %q, %v; want it in the keychain", want.ID, got.MaskedSecret(), got.SecretStorage, err)
		}
	}
	for _, s := range []string{secretA, secretB, clientKey} {
		if files := filesContaining(t, path, s); len(files) > 0 {
			t.Errorf("after the finished move, %s still contain %s", files, MaskSecret(s))
		}
	}
}

func TestKeychainFollowsAccountEditsAndDeletes(t *testing.T) {
	keychaintest.SecretService(t)
	k := keychain.OS{Service: "longhaul-test"}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "longhaul.db")
	st, _ := openWithKeychain(t, path, k)

	a, err := st.AddAccount(ctx, Account{BaseURL: "https://api.anthropic.com", Secret: secretA, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := strings.CutPrefix(rawSecretColumn(t, st, a.ID), keychainRef)
	if got, err := k.Get(first); err != nil || got != secretA {
		t.Fatalf("after AddAccount the keychain holds %q, %v; want the secret", MaskSecret(got), err)
	}

	a.Secret = secretB
	if err := st.UpdateAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	second, _ := strings.CutPrefix(rawSecretColumn(t, st, a.ID), keychainRef)
	if got, err := k.Get(second); err != nil || got != secretB {
		t.Errorf("after UpdateAccount the keychain holds %q, %v; want the new secret", MaskSecret(got), err)
	}
	if _, err := k.Get(first); !errors.Is(err, keychain.ErrNotFound) {
		t.Errorf("the replaced secret's entry is still there (%v)", err)
	}

	if err := st.DeleteAccount(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Get(second); !errors.Is(err, keychain.ErrNotFound) {
		t.Errorf("the deleted account's entry is still there (%v)", err)
	}

	// The client key: set, read, reset.
	if _, err := st.SetSetting(ctx, clientKeySetting, clientKey); err != nil {
		t.Fatal(err)
	}
	var row string
	if err := st.db.QueryRow(`SELECT value FROM settings WHERE key = ?`, clientKeySetting).Scan(&row); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(row, clientKey) || !strings.Contains(row, keychainRef) {
		t.Errorf("client key row = %s; want a keychain reference", row)
	}
	if got, err := st.Settings(ctx); err != nil || got.Proxy.ClientKey != clientKey {
		t.Errorf("Settings().Proxy.ClientKey = %q, %v; want the key", MaskSecret(got.Proxy.ClientKey), err)
	}
	name := strings.Trim(strings.TrimPrefix(strings.Trim(row, `"`), keychainRef), `"`)
	if err := st.ResetSetting(ctx, clientKeySetting); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Get(name); !errors.Is(err, keychain.ErrNotFound) {
		t.Errorf("the reset client key's entry is still there (%v)", err)
	}
	if files := filesContaining(t, path, clientKey); len(files) > 0 {
		t.Errorf("%s contain the client key", files)
	}
}

func TestNoKeychainKeepsSecretsInTheDatabaseAndSaysSo(t *testing.T) {
	keychaintest.NoSecretService(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "longhaul.db")
	st, logs := openWithKeychain(t, path, keychain.OS{Service: "longhaul-test"})
	if got := st.SecretStorage(); got != SecretsInDatabase {
		t.Fatalf("SecretStorage() = %q; want %q", got, SecretsInDatabase)
	}
	if !strings.Contains(logs.String(), "secrets are kept in the database file (mode 0600): no keychain answered") {
		t.Errorf("log does not say where secrets are: %s", logs)
	}
	a, err := st.AddAccount(ctx, Account{BaseURL: "https://api.anthropic.com", Secret: secretA, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.Account(ctx, a.ID); err != nil || got.Secret != secretA || got.SecretStorage != SecretsInDatabase {
		t.Errorf("Account() = %q in %q, %v; want the secret, in the database", got.MaskedSecret(), got.SecretStorage, err)
	}
	if raw := rawSecretColumn(t, st, a.ID); raw != secretA {
		t.Errorf("secret column = %q; want the secret itself", MaskSecret(raw))
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		info, err := os.Stat(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s mode = %o; want 600", filepath.Base(path+suffix), perm)
		}
	}
}

func TestSecretsThatLookLikeReferencesAreRefused(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)
	_, err := st.AddAccount(ctx, Account{BaseURL: "https://api.anthropic.com", Secret: "keychain:account-x"})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "secret" {
		t.Errorf("AddAccount(secret keychain:…) = %v; want a ValidationError on secret", err)
	}
	if _, err := st.SetSetting(ctx, clientKeySetting, "keychain:client-key-x"); !errors.As(err, &ve) || ve.Field != clientKeySetting {
		t.Errorf("SetSetting(client key keychain:…) = %v; want a ValidationError on %s", err, clientKeySetting)
	}
}

func TestUpdateAccountBindsTheSecretToItsOrigin(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)
	a, err := st.AddAccount(ctx, Account{BaseURL: "https://api.anthropic.com", Secret: secretA, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		baseURL, secret string
		ok              bool
	}{
		{"https://api.anthropic.com/v1", "", true},    // same origin, another path
		{"https://API.anthropic.com:443", "", true},   // same origin written differently
		{"http://api.anthropic.com", "", false},       // scheme
		{"https://api.anthropic.com:8443", "", false}, // port
		{"https://attacker.example", "", false},       // host
		{"https://attacker.example", secretB, true},   // a new key may go anywhere
		{"https://api.anthropic.com", "", false},      // back to the old origin: the key is now bound to attacker.example
	} {
		a.BaseURL, a.Secret = tc.baseURL, tc.secret
		err := st.UpdateAccount(ctx, a)
		var ve *ValidationError
		switch {
		case tc.ok && err != nil:
			t.Errorf("UpdateAccount(%s, key given: %v) = %v; want nil", tc.baseURL, tc.secret != "", err)
		case !tc.ok && (!errors.As(err, &ve) || ve.Field != "secret"):
			t.Errorf("UpdateAccount(%s, no key) = %v; want a ValidationError on secret", tc.baseURL, err)
		}
	}
	got, err := st.Account(ctx, a.ID)
	if err != nil || got.BaseURL != "https://attacker.example" || got.Secret != secretB {
		t.Errorf("account = %s with %s, %v; want the last accepted change", got.BaseURL, got.MaskedSecret(), err)
	}
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"https://api.anthropic.com", "https://api.anthropic.com/v1/", true},
		{"https://api.anthropic.com", "https://api.anthropic.com:443", true},
		{"http://localhost", "http://localhost:80", true},
		{"https://api.anthropic.com", "http://api.anthropic.com", false},
		{"https://api.anthropic.com", "https://api.anthropic.com.attacker.example", false},
		{"https://api.anthropic.com", "https://user@attacker.example", false},
		{"https://api.anthropic.com", "", false},
		{"", "", false},
	} {
		if got := SameOrigin(tc.a, tc.b); got != tc.want {
			t.Errorf("SameOrigin(%q, %q) = %v; want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
