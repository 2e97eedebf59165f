package app

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"longhaul/store"
)

func TestAccountsAddEditDisableDelete(t *testing.T) {
	a, st := newTestApp(t)
	ctx := context.Background()
	accounts := a.Facades(context.Background).Accounts
	const secret = "sk-ant-api03-secret-value-0000abcd"

	_, err := accounts.Add(AccountInput{BaseURL: "ftp://nope", Key: secret})
	var fe FieldErrors
	if !errors.As(err, &fe) || fe[0].Field != "baseURL" {
		t.Fatalf("Add(bad URL) error = %#v; want a FieldError on baseURL", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error %q echoes the secret", err)
	}

	v, err := accounts.Add(AccountInput{Label: "work", BaseURL: "https://api.anthropic.com", Key: secret})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Enabled || v.Key != "sk-…abcd" || v.Label != "work" {
		t.Errorf("added account view = %+v; want enabled, masked key sk-…abcd", v)
	}
	if b, _ := json.Marshal(v); strings.Contains(string(b), "secret-value") {
		t.Errorf("account view JSON carries the secret: %s", b)
	}
	if n := len(a.proxy.Pool().Accounts()); n != 1 {
		t.Errorf("proxy has %d accounts right after Add; want 1", n)
	}

	// Edit without a key keeps the stored one.
	v, err = accounts.Update(v.ID, AccountInput{Label: "renamed", BaseURL: "https://api.anthropic.com", Weight: 3})
	if err != nil {
		t.Fatal(err)
	}
	if stored, _ := st.Account(ctx, v.ID); stored.Secret != secret || stored.Label != "renamed" || stored.Weight != 3 {
		t.Errorf("stored after edit = %+v (secret kept: %v)", stored, stored.Secret == secret)
	}

	v, err = accounts.SetEnabled(v.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if v.Enabled || v.DisabledReason == "" {
		t.Errorf("after disable: %+v; want disabled with a reason", v)
	}
	if v, err = accounts.SetEnabled(v.ID, true); err != nil || !v.Enabled || v.DisabledReason != "" {
		t.Errorf("after enable: %+v, %v", v, err)
	}
	if err := accounts.Delete(v.ID); err != nil {
		t.Fatal(err)
	}
	if err := accounts.Delete(v.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second delete = %v; want ErrNotFound", err)
	}
}

func TestTestKeySendsAMinimalRequest(t *testing.T) {
	const secret = "sk-ant-api03-good-key-000000000000wxyz"
	var got struct {
		key, version string
		body         map[string]any
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" {
			http.NotFound(w, r)
			return
		}
		got.key, got.version = r.Header.Get("X-Api-Key"), r.Header.Get("Anthropic-Version")
		json.NewDecoder(r.Body).Decode(&got.body) //nolint:errcheck // checked below
		w.Header().Set("anthropic-ratelimit-requests-remaining", "49")
		if got.key != secret {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + got.key + `"}}`))
			return
		}
		w.Write([]byte(`{"type":"message","content":[{"type":"text","text":"p"}],"usage":{"input_tokens":8,"output_tokens":1}}`))
	}))
	defer up.Close()
	a, _ := newTestApp(t)
	accounts := a.Facades(context.Background).Accounts

	res, err := accounts.TestKey(0, AccountInput{BaseURL: up.URL, Key: secret})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Status != 200 || res.RateLimit["requests-remaining"] != "49" {
		t.Errorf("TestKey(good) = %+v; want ok 200 with the quota header", res)
	}
	if got.body["max_tokens"] != float64(1) || got.version == "" {
		t.Errorf("upstream saw body %v, version %q; want max_tokens 1 and a version", got.body, got.version)
	}

	const wrong = "sk-ant-api03-wrong-key-00000000000000zz"
	v, err := accounts.Add(AccountInput{BaseURL: up.URL, Key: wrong})
	if err != nil {
		t.Fatal(err)
	}
	res, err = accounts.Test(v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || res.Status != 401 || !strings.Contains(res.Message, "authentication_error") {
		t.Errorf("Test(wrong key) = %+v; want 401 authentication_error", res)
	}
	if b, _ := json.Marshal(res); strings.Contains(string(b), "wrong-key") {
		t.Errorf("key test result echoes the secret: %s", b)
	}

	// Nobody listening: reported, not an error.
	res, err = accounts.TestKey(0, AccountInput{BaseURL: "http://127.0.0.1:1", Key: secret})
	if err != nil || res.OK || res.Status != 0 || res.Message == "" {
		t.Errorf("TestKey(unreachable) = %+v, %v; want a message and status 0", res, err)
	}
}
