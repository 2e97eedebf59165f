package keychain_test

import (
	"errors"
	"testing"

	"longhaul/store/keychain"
	"longhaul/store/keychain/keychaintest"
)

func TestOSKeychainAgainstSecretService(t *testing.T) {
	keychaintest.SecretService(t)
	k := keychain.OS{Service: "longhaul-test"}

	if _, err := k.Get("account-1"); !errors.Is(err, keychain.ErrNotFound) {
		t.Fatalf("Get(missing) = %v; want ErrNotFound", err)
	}
	const secret = "sk-ant-api03-keychain-roundtrip-0123456789"
	if err := k.Set("account-1", secret); err != nil {
		t.Fatalf("Set() = %v", err)
	}
	if got, err := k.Get("account-1"); err != nil || got != secret {
		t.Fatalf("Get() = %q, %v; want the stored secret", got, err)
	}
	// Set on an existing name replaces the entry.
	if err := k.Set("account-1", secret+"-v2"); err != nil {
		t.Fatalf("Set(again) = %v", err)
	}
	if got, err := k.Get("account-1"); err != nil || got != secret+"-v2" {
		t.Fatalf("Get() after replace = %q, %v; want the new secret", got, err)
	}
	if err := k.Delete("account-1"); err != nil {
		t.Fatalf("Delete() = %v", err)
	}
	if _, err := k.Get("account-1"); !errors.Is(err, keychain.ErrNotFound) {
		t.Fatalf("Get(deleted) = %v; want ErrNotFound", err)
	}
	if err := k.Delete("account-1"); err != nil {
		t.Fatalf("Delete(missing) = %v; want nil", err)
	}
}

func TestOSKeychainWithoutSecretService(t *testing.T) {
	keychaintest.NoSecretService(t)
	k := keychain.OS{Service: "longhaul-test"}
	err := k.Set("account-1", "sk-nowhere-to-go-0123456789")
	if err == nil {
		t.Fatal("Set() without a Secret Service = nil; want an error")
	}
	if _, err := k.Get("account-1"); err == nil || errors.Is(err, keychain.ErrNotFound) {
		t.Fatalf("Get() without a Secret Service = %v; want an error other than ErrNotFound", err)
	}
}
