package door

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"longhaul/app"
	"longhaul/app/recorder"
	"longhaul/store"
)

// keyCatcher is a server that should never be reached: it records every key sent to it.
type keyCatcher struct {
	*httptest.Server
	mu   sync.Mutex
	keys []string
}

func newKeyCatcher(t *testing.T) *keyCatcher {
	c := &keyCatcher{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.keys = append(c.keys, r.Header.Get("x-api-key")+r.Header.Get("Authorization"))
		c.mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *keyCatcher) received() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.keys...)
}

// call sends a JSON request to the door with the client key (so it passes the door's guard
// whether or not the guard asks for it) and returns the status and the decoded object.
func call(t *testing.T, f *fixture, clientKey, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, f.door.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if clientKey != "" {
		req.Header.Set("x-api-key", clientKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	if v == nil {
		v = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, v
}

// fieldError returns the message the door's error ({"error": {"fields": …}}) gives field, or "".
func fieldError(v map[string]any, field string) string {
	e, _ := v["error"].(map[string]any)
	fields, _ := e["fields"].([]any)
	for _, f := range fields {
		if m, ok := f.(map[string]any); ok && m["field"] == field {
			s, _ := m["message"].(string)
			return s
		}
	}
	return ""
}

func TestStoredKeyIsNeverSentToAnotherOrigin(t *testing.T) {
	f := newFixture(t, recorder.Options{})
	attacker := newKeyCatcher(t)
	const secret = "sk-ant-api03-stored-key-never-leaves-0000wxyz"

	status, added := call(t, f, "", http.MethodPost, "/longhaul/v1/accounts",
		app.AccountInput{Label: "real", BaseURL: f.up.URL, Key: secret})
	if status != http.StatusOK {
		t.Fatalf("add account = %d %v", status, added)
	}
	id := int64(added["id"].(float64))
	path := "/longhaul/v1/accounts/" + jsonNumber(id)

	// 1. A key test of the stored key against another base URL, plainly or dressed up as the
	// real one (userinfo: "http://127.0.0.1:PORT@attacker").
	for _, other := range []string{attacker.URL, f.up.URL + "@" + strings.TrimPrefix(attacker.URL, "http://"), strings.Replace(attacker.URL, "http://", "https://", 1)} {
		code, v := call(t, f, "", http.MethodPost, "/longhaul/v1/accounts/test",
			map[string]any{"id": id, "baseURL": other, "kind": "anthropic"})
		if code != http.StatusBadRequest || !strings.Contains(fieldError(v, "key"), "origin") {
			t.Errorf("test stored key at %s = %d %v; want 400 with a key field error about the origin", other, code, v)
		}
	}

	// 2. An edit that moves the account to another origin and keeps the key.
	status, v := call(t, f, "", http.MethodPut, path, app.AccountInput{Label: "real", BaseURL: attacker.URL + "/v1"})
	if status != http.StatusBadRequest || !strings.Contains(fieldError(v, "key"), "origin") {
		t.Errorf("move account to another origin without the key = %d %v; want 400 with a key field error", status, v)
	}
	stored, err := f.st.Account(context.Background(), id)
	if err != nil || stored.BaseURL != f.up.URL {
		t.Errorf("after the refused edit the account points to %q (%v); want %q", stored.BaseURL, err, f.up.URL)
	}
	// Whatever the proxy forwards now still goes to the real upstream.
	if resp := f.post(t, messagesBody(false, "s1")); resp.StatusCode != http.StatusOK {
		t.Errorf("proxy request after the refused edit = %d; want 200 from the real upstream", resp.StatusCode)
	}
	if got := attacker.received(); len(got) != 0 {
		t.Fatalf("the other origin received %d requests: %q", len(got), got)
	}

	// The same origin still works without the key (another path is fine) ...
	status, v = call(t, f, "", http.MethodPost, "/longhaul/v1/accounts/test",
		map[string]any{"id": id, "baseURL": f.up.URL + "/", "kind": "anthropic"})
	if status != http.StatusOK {
		t.Errorf("test stored key at its own origin = %d %v; want 200", status, v)
	}
	if got := f.up.LastRequest().Header.Get("x-api-key"); got != secret {
		t.Errorf("the real upstream got key %q; want the stored one", store.MaskSecret(got))
	}
	// {"id": N} alone tests the account where it is.
	status, v = call(t, f, "", http.MethodPost, "/longhaul/v1/accounts/test", map[string]any{"id": id})
	if status != http.StatusOK || v["status"] != float64(http.StatusOK) {
		t.Errorf("test stored account as it is = %d %v; want 200 from the real upstream", status, v)
	}
	// ... and another origin works once the key is given again: that key goes there, no other.
	const other = "sk-ant-api03-a-key-meant-for-there-1111abcd"
	status, v = call(t, f, "", http.MethodPut, path, app.AccountInput{Label: "moved", BaseURL: attacker.URL, Key: other})
	if status != http.StatusOK {
		t.Errorf("move with a new key = %d %v; want 200", status, v)
	}
	status, _ = call(t, f, "", http.MethodPost, "/longhaul/v1/accounts/test",
		map[string]any{"id": id, "baseURL": attacker.URL, "kind": "anthropic"})
	if status != http.StatusOK {
		t.Errorf("test the new key at its origin = %d; want 200 (the upstream's 401 is in the result)", status)
	}
	for _, k := range attacker.received() {
		if strings.Contains(k, secret) {
			t.Errorf("the first key reached the other origin: %s", store.MaskSecret(k))
		}
	}
}

func TestSettingsNeverCarryTheClientKey(t *testing.T) {
	f := newFixture(t, recorder.Options{})
	const key = "local-client-key-for-the-door-test-7777wxyz"
	ctx := context.Background()
	if _, err := f.st.SetSetting(ctx, "proxy.client_key", key); err != nil {
		t.Fatal(err)
	}
	if err := f.app.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	masked := store.MaskSecret(key)

	status, v := call(t, f, key, http.MethodGet, "/longhaul/v1/settings", nil)
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusOK || strings.Contains(string(b), "door-test") || !strings.Contains(string(b), masked) {
		t.Errorf("GET settings = %d %s; want 200 with the key masked as %q", status, b, masked)
	}

	// The form sends back what it was shown, with another change: the key stays.
	status, v = call(t, f, key, http.MethodPut, "/longhaul/v1/settings",
		map[string]any{"values": map[string]any{"proxy.client_key": masked, "proxy.max_body_bytes": 2048}})
	if status != http.StatusOK {
		t.Errorf("PUT settings with the masked key = %d %v; want 200", status, v)
	}
	s, err := f.st.Settings(ctx)
	if err != nil || s.Proxy.ClientKey != key || s.Proxy.MaxBodyBytes != 2048 {
		t.Errorf("after saving the masked key: key %q, max body %d, %v; want the key unchanged and the other change saved",
			store.MaskSecret(s.Proxy.ClientKey), s.Proxy.MaxBodyBytes, err)
	}
	// A masked value that is not the current key's mask is refused, never stored as the key.
	status, v = call(t, f, key, http.MethodPut, "/longhaul/v1/settings",
		map[string]any{"values": map[string]any{"proxy.client_key": "sk-…zzzz"}})
	if status != http.StatusBadRequest || fieldError(v, "proxy.client_key") == "" {
		t.Errorf("PUT settings with another masked key = %d %v; want 400 with a field error", status, v)
	}
	if s, _ := f.st.Settings(ctx); s.Proxy.ClientKey != key {
		t.Errorf("client key became %q; want it unchanged", store.MaskSecret(s.Proxy.ClientKey))
	}
}

func jsonNumber(id int64) string {
	b, _ := json.Marshal(id) //nolint:errcheck // an int64 always marshals
	return string(b)
}
