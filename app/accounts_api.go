package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"longhaul/store"
)

// AccountInput is an account as the add/edit form sends it. Key is the secret: required to
// add, empty on edit to keep the stored one. It is never sent back (AccountView masks it).
type AccountInput struct {
	Label    string   `json:"label"`
	Kind     string   `json:"kind"`
	BaseURL  string   `json:"baseURL"`
	Key      string   `json:"key"`
	Enabled  *bool    `json:"enabled"` // nil: enabled when added, unchanged when edited
	Models   []string `json:"models"`
	Priority int      `json:"priority"`
	Weight   int      `json:"weight"`
}

// accountField names a store validation field as the form does.
func accountField(f string) string {
	switch f {
	case "base_url":
		return "baseURL"
	case "secret":
		return "key"
	}
	return f
}

// AddAccount stores a new account and pushes it to the proxy at once.
func (a *App) AddAccount(ctx context.Context, in AccountInput) (AccountView, error) {
	acct := store.Account{
		Label: in.Label, Kind: in.Kind, BaseURL: in.BaseURL, Secret: in.Key, Enabled: true,
		Models: in.Models, Priority: in.Priority, Weight: in.Weight,
	}
	if in.Enabled != nil {
		acct.Enabled = *in.Enabled
		if !acct.Enabled {
			acct.DisabledReason = "disabled by the user"
		}
	}
	added, err := a.store.AddAccount(ctx, acct)
	if err != nil {
		return AccountView{}, fieldErrorsOr(err, accountField)
	}
	return a.accountChanged(ctx, added.ID)
}

// UpdateAccount edits an account; an empty Key keeps the stored secret.
func (a *App) UpdateAccount(ctx context.Context, id int64, in AccountInput) (AccountView, error) {
	cur, err := a.store.Account(ctx, id)
	if err != nil {
		return AccountView{}, err
	}
	cur.Label, cur.Kind, cur.BaseURL, cur.Secret = in.Label, in.Kind, in.BaseURL, in.Key
	cur.Models, cur.Priority, cur.Weight = in.Models, in.Priority, in.Weight
	if in.Enabled != nil && *in.Enabled != cur.Enabled {
		cur.Enabled = *in.Enabled
		cur.DisabledReason = ""
		if !cur.Enabled {
			cur.DisabledReason = "disabled by the user"
		}
	}
	if err := a.store.UpdateAccount(ctx, cur); err != nil {
		return AccountView{}, fieldErrorsOr(err, accountField)
	}
	return a.accountChanged(ctx, id)
}

// SetAccountEnabled enables an account (clearing why it was disabled) or disables it by hand.
func (a *App) SetAccountEnabled(ctx context.Context, id int64, on bool) (AccountView, error) {
	if err := a.store.SetAccountEnabled(ctx, id, on, "disabled by the user"); err != nil {
		return AccountView{}, err
	}
	return a.accountChanged(ctx, id)
}

// DeleteAccount removes an account.
func (a *App) DeleteAccount(ctx context.Context, id int64) error {
	if err := a.store.DeleteAccount(ctx, id); err != nil {
		return err
	}
	return a.Reload(ctx)
}

// accountChanged pushes the accounts into the proxy (the store watch would, within a second;
// the UI wants the result now) and returns the account's view.
func (a *App) accountChanged(ctx context.Context, id int64) (AccountView, error) {
	if err := a.Reload(ctx); err != nil {
		return AccountView{}, err
	}
	views, err := a.Accounts(ctx)
	if err != nil {
		return AccountView{}, err
	}
	for _, v := range views {
		if v.ID == id {
			return v, nil
		}
	}
	return AccountView{}, fmt.Errorf("account %d: %w", id, store.ErrNotFound)
}

// KeyTest is the result of a minimal real request with an account's key.
type KeyTest struct {
	OK        bool   `json:"ok"`
	Status    int    `json:"status"` // the upstream's HTTP status; 0 when it was not reached
	LatencyMs int64  `json:"latencyMs"`
	Model     string `json:"model"`
	// Message is the upstream's error message (redacted), or why it was not reached.
	Message   string            `json:"message"`
	RateLimit map[string]string `json:"rateLimit,omitempty"` // anthropic-ratelimit-* headers
}

// keyTestTimeout bounds a key test; it is one tiny request.
const keyTestTimeout = 20 * time.Second

// TestAccount sends a minimal real request (max_tokens 1) with the stored account's key.
func (a *App) TestAccount(ctx context.Context, id int64) (KeyTest, error) {
	acct, err := a.store.Account(ctx, id)
	if err != nil {
		return KeyTest{}, err
	}
	settings, err := a.store.Settings(ctx)
	if err != nil {
		return KeyTest{}, err
	}
	return testKey(ctx, http.DefaultTransport, acct, settings.Compaction.SummaryModel), nil
}

// TestKey tests a key typed in the form before it is saved. With id > 0 and an empty key,
// the stored key of that account is used (an edit form never holds the secret).
func (a *App) TestKey(ctx context.Context, id int64, in AccountInput) (KeyTest, error) {
	acct := store.Account{Kind: in.Kind, BaseURL: in.BaseURL, Secret: in.Key, Models: in.Models}
	if strings.TrimSpace(in.Key) == "" && id > 0 {
		stored, err := a.store.Account(ctx, id)
		if err != nil {
			return KeyTest{}, err
		}
		acct.Secret = stored.Secret
	}
	if strings.TrimSpace(acct.Secret) == "" {
		return KeyTest{}, FieldErrors{{Field: "key", Message: "must not be empty"}}
	}
	if acct.Kind == "" {
		acct.Kind = store.KindAnthropic
	}
	settings, err := a.store.Settings(ctx)
	if err != nil {
		return KeyTest{}, err
	}
	return testKey(ctx, http.DefaultTransport, acct, settings.Compaction.SummaryModel), nil
}

// testKey posts {"model": M, "max_tokens": 1, "messages": [{"role": "user", "content": "ping"}]}
// to the account's /v1/messages and reports what came back. The secret never appears in the
// result: upstream messages are redacted and the key itself is cut out.
func testKey(ctx context.Context, rt http.RoundTripper, acct store.Account, fallbackModel string) KeyTest {
	model := fallbackModel
	for _, m := range acct.Models {
		if m != "" && !strings.ContainsAny(m, "*?[") {
			model = m
			break
		}
	}
	res := KeyTest{Model: model}
	if acct.Kind != store.KindAnthropic && acct.Kind != "" {
		res.Message = "testing " + acct.Kind + " keys is not supported yet"
		return res
	}
	secret := strings.TrimSpace(acct.Secret)
	clean := func(s string) string {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "[key]")
		}
		return store.RedactString(s)
	}
	body, err := json.Marshal(map[string]any{
		"model": model, "max_tokens": 1,
		"messages": []map[string]string{{"role": "user", "content": "ping"}},
	})
	if err != nil {
		res.Message = err.Error()
		return res
	}
	ctx, cancel := context.WithTimeout(ctx, keyTestTimeout)
	defer cancel()
	url := strings.TrimRight(strings.TrimSpace(acct.BaseURL), "/") + "/v1/messages"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		res.Message = "bad base URL"
		return res
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", secret)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	start := time.Now()
	resp, err := (&http.Client{Transport: rt}).Do(req)
	res.LatencyMs = time.Since(start).Milliseconds()
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			err = ue.Unwrap() // drop "Post <url>:", the URL may carry credentials
		}
		res.Message = clean(err.Error())
		return res
	}
	defer resp.Body.Close() //nolint:errcheck // read below
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	res.Status = resp.StatusCode
	res.OK = resp.StatusCode == http.StatusOK
	for name, v := range resp.Header {
		if lower := strings.ToLower(name); strings.HasPrefix(lower, "anthropic-ratelimit-") && len(v) > 0 {
			if res.RateLimit == nil {
				res.RateLimit = map[string]string{}
			}
			res.RateLimit[strings.TrimPrefix(lower, "anthropic-ratelimit-")] = v[0]
		}
	}
	if err != nil {
		res.Message = clean(err.Error())
		return res
	}
	if !res.OK {
		var e struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
			res.Message = clean(e.Error.Type + ": " + e.Error.Message)
		} else {
			res.Message = clean(http.StatusText(resp.StatusCode))
		}
	}
	return res
}

// AddAccount adds an upstream account; the key is stored and never shown again (masked).
func (s *System) AddAccount(in AccountInput) (AccountView, error) {
	return s.app.AddAccount(s.ctx(), in)
}

// UpdateAccount edits an account; an empty key keeps the stored one.
func (s *System) UpdateAccount(id int64, in AccountInput) (AccountView, error) {
	return s.app.UpdateAccount(s.ctx(), id, in)
}

// SetAccountEnabled enables or disables an account.
func (s *System) SetAccountEnabled(id int64, on bool) (AccountView, error) {
	return s.app.SetAccountEnabled(s.ctx(), id, on)
}

// DeleteAccount removes an account.
func (s *System) DeleteAccount(id int64) error { return s.app.DeleteAccount(s.ctx(), id) }

// TestAccount sends a minimal real request (max_tokens 1) with a stored account's key.
func (s *System) TestAccount(id int64) (KeyTest, error) { return s.app.TestAccount(s.ctx(), id) }

// TestKey tests a key from the form before saving (id > 0 with an empty key: the stored one).
func (s *System) TestKey(id int64, in AccountInput) (KeyTest, error) {
	return s.app.TestKey(s.ctx(), id, in)
}
