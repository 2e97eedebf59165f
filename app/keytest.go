package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"longhaul/proxy"
	"longhaul/proxy/anthropic"
	"longhaul/proxy/gemini"
	"longhaul/proxy/openai"
	"longhaul/store"
)

// KeyTest is the result of a minimal real request with an account's key.
type KeyTest struct {
	OK        bool   `json:"ok"`
	Status    int    `json:"status"` // the upstream's HTTP status; 0 when it was not reached
	LatencyMs int64  `json:"latencyMs"`
	Model     string `json:"model"`   // the model asked for (anthropic), "" for a models list
	Request   string `json:"request"` // what was sent, method and path: "GET /v1/models"
	// Message is the upstream's error message (redacted), or why it was not reached.
	Message   string            `json:"message"`
	RateLimit map[string]string `json:"rateLimit,omitempty"` // anthropic-ratelimit-* headers
}

// keyTestTimeout bounds a key test; it is one tiny request.
const keyTestTimeout = 20 * time.Second

// Test sends a minimal real request with a stored account's key, in its protocol.
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

// TestKey tests a key typed in the form before it is saved; an empty base URL is the kind's
// default (store.DefaultBaseURL), as saving would store it. With id > 0 and an empty key,
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
			if acct.Kind == "" || acct.Kind == stored.Kind {
				acct.Kind, acct.BaseURL = stored.Kind, stored.BaseURL // {"id": N} alone tests the account as stored
			} else {
				acct.BaseURL = store.DefaultBaseURL(acct.Kind) // where saving the form would send it
			}
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
	if store.DefaultBaseURL(acct.Kind) == "" {
		return KeyTest{}, FieldErrors{{Field: "kind", Message: "must be one of " + strings.Join(store.Kinds(), ", ")}}
	}
	settings, err := a.store.Settings(ctx)
	if err != nil {
		return KeyTest{}, err
	}
	return testKey(ctx, http.DefaultTransport, acct, settings.Compaction.SummaryModel), nil
}

// testKey sends the cheapest request that proves a key works, in the account's protocol
// (keyTestRequest), and reports what came back. The secret never appears in the result:
// upstream messages are redacted and the key itself is cut out.
func testKey(ctx context.Context, rt http.RoundTripper, acct store.Account, fallbackModel string) KeyTest {
	kind := acct.Kind
	if kind == "" {
		kind = store.KindAnthropic
	}
	model := fallbackModel
	for _, m := range acct.Models {
		if m != "" && !strings.ContainsAny(m, "*?[") {
			model = m
			break
		}
	}
	var res KeyTest
	secret := strings.TrimSpace(acct.Secret)
	clean := func(s string) string {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "[key]")
		}
		return store.RedactString(s)
	}
	baseURL := acct.BaseURL
	if strings.TrimSpace(baseURL) == "" {
		baseURL = store.DefaultBaseURL(kind)
	}
	ctx, cancel := context.WithTimeout(ctx, keyTestTimeout)
	defer cancel()
	req, err := keyTestRequest(ctx, kind, baseURL, secret, model)
	if err != nil {
		res.Message = err.Error()
		return res
	}
	res.Request = req.Method + " " + req.URL.Path
	if kind == store.KindAnthropic {
		res.Model = model
	}
	start := time.Now()
	// Sent by the RoundTripper itself, never an http.Client: it follows no redirect, which
	// would carry the key (in a header net/http does not know to be secret) to wherever the
	// Location points. The 3xx is the result.
	resp, err := rt.RoundTrip(req)
	res.LatencyMs = time.Since(start).Milliseconds()
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // drop "Post <url>:", the URL may carry credentials
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
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		res.Message = clean(proxy.RedirectRefused(resp).Error())
	default:
		res.Message = clean(keyTestError(kind, resp.StatusCode, b))
	}
	return res
}

// keyTestRequest builds the probe of a kind, each checked against its API reference:
//   - anthropic: POST /v1/messages, max_tokens 1 (a models list would not prove the key may
//     use the model the account serves);
//   - openai, openai-responses: GET {base}/models with Authorization: Bearer — the OpenAI
//     SDKs' models.list (developers.openai.com API reference: GET /models under the base
//     URL), which compatible servers (Ollama, vLLM, LM Studio, OpenRouter) serve too and which
//     costs no tokens;
//   - gemini: GET {base}/v1beta/models with x-goog-api-key (ai.google.dev models.list, the
//     header the Google Gen AI SDKs send), also free.
func keyTestRequest(ctx context.Context, kind, baseURL, secret, model string) (*http.Request, error) {
	base := strings.TrimRight(strings.TrimSpace(baseURL), "/")
	var req *http.Request
	var err error
	switch kind {
	case store.KindAnthropic:
		body, merr := json.Marshal(map[string]any{
			"model": model, "max_tokens": 1,
			"messages": []map[string]string{{"role": "user", "content": "ping"}},
		})
		if merr != nil {
			return nil, fmt.Errorf("build the key test: %w", merr)
		}
		req, err = anthropic.NewHTTPRequest(ctx, http.MethodPost, base, "/v1/messages", secret, nil, bytes.NewReader(body))
	case store.KindOpenAI, store.KindOpenAIResponses:
		if req, err = http.NewRequestWithContext(ctx, http.MethodGet, base+"/models", nil); err == nil {
			req.Header.Set("Authorization", "Bearer "+secret)
		}
	case store.KindGemini:
		if req, err = http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1beta/models", nil); err == nil {
			req.Header.Set("x-goog-api-key", secret)
		}
	default:
		return nil, fmt.Errorf("unknown account kind %q", kind)
	}
	if err != nil || req.URL.Host == "" || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		return nil, errors.New("bad base URL") // never the URL itself: it may carry credentials
	}
	return req, nil
}

// keyTestError is the message of a refused probe, read from the error body of the kind's
// protocol: "type: message" (Anthropic, OpenAI) or "STATUS: message" (Google).
func keyTestError(kind string, status int, body []byte) string {
	switch kind {
	case store.KindAnthropic:
		if e, ok := anthropic.ParseError(body); ok && e.Message != "" {
			return e.Type + ": " + e.Message
		}
	case store.KindOpenAI, store.KindOpenAIResponses:
		var e openai.ErrorBody
		if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
			if e.Error.Type == "" {
				return e.Error.Message
			}
			return e.Error.Type + ": " + e.Error.Message
		}
	case store.KindGemini:
		if e, ok := gemini.ParseError(body); ok && e.Message != "" {
			return e.Status + ": " + e.Message
		}
	}
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		return http.StatusText(status) + ": the upstream refused the key"
	}
	return http.StatusText(status)
}
