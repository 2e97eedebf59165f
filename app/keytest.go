package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/store"
)

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

// Test sends a minimal real request (max_tokens 1) with a stored account's key.
func (s *Accounts) Test(id int64) (KeyTest, error) {
	a, ctx := s.app, s.ctx()
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
// the stored key of that account is used (an edit form never holds the secret) — only
// against the origin it was stored for; another origin is a "key" field error.
func (s *Accounts) TestKey(id int64, in AccountInput) (KeyTest, error) {
	a, ctx := s.app, s.ctx()
	acct := store.Account{Kind: in.Kind, BaseURL: in.BaseURL, Secret: in.Key, Models: in.Models}
	if strings.TrimSpace(in.Key) == "" && id > 0 {
		stored, err := a.store.Account(ctx, id)
		if err != nil {
			return KeyTest{}, err
		}
		if strings.TrimSpace(acct.BaseURL) == "" {
			acct.BaseURL = stored.BaseURL // {"id": N} alone tests the account as stored
		}
		// The stored key only ever goes to the origin it was stored for.
		if !store.SameOrigin(stored.BaseURL, acct.BaseURL) {
			return KeyTest{}, FieldErrors{{Field: "key", Message: store.ErrSecretOriginChanged.Error()}}
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
	req, err := anthropic.NewHTTPRequest(ctx, http.MethodPost, acct.BaseURL, "/v1/messages", secret, nil, bytes.NewReader(body))
	if err != nil {
		res.Message = "bad base URL"
		return res
	}
	start := time.Now()
	// Redirects are not followed: the client would carry x-api-key (a header it does not
	// know to be secret) to wherever the Location points. The 3xx is the result.
	noRedirects := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := (&http.Client{Transport: rt, CheckRedirect: noRedirects}).Do(req)
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
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch {
	case err != nil:
		res.Message = clean(err.Error())
	case res.OK:
	default:
		if e, ok := anthropic.ParseError(b); ok && e.Message != "" {
			res.Message = clean(e.Type + ": " + e.Message)
		} else {
			res.Message = clean(http.StatusText(resp.StatusCode))
		}
	}
	return res
}
