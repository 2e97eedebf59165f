package door

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"longhaul/app/recorder"
	"longhaul/proxy/proxytest"
	"longhaul/store"
)

// proxy.allowed_origins travels store → app (convert.go) → proxy.Config → the guard: a page of
// a listed origin may call the API with CORS, others are refused, and a bad entry is refused
// with the field named.
func TestAllowedOriginsSettingReachesTheProxy(t *testing.T) {
	f := newFixture(t, recorder.Options{})
	ctx := context.Background()
	if _, err := f.st.AddAccount(ctx, store.Account{Label: "up", BaseURL: f.up.URL, Secret: "sk-ant-origins-0001", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	f.up.SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", "ok")})
	set := func(v any) int {
		code, _ := f.do(t, "PUT", "/longhaul/v1/settings", `{"values":{"proxy.allowed_origins":`+mustJSON(t, v)+`}}`)
		return code
	}
	if code := set([]string{"chat.example.com"}); code != http.StatusBadRequest {
		t.Errorf("an origin without a scheme = %d; want 400", code)
	}
	if code := set([]string{"https://chat.example.com"}); code != http.StatusOK {
		t.Fatalf("a valid origin = %d; want 200", code)
	}
	if err := f.app.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	page := func(origin string) *http.Response {
		req, _ := http.NewRequest("POST", f.front.URL+"/v1/messages", strings.NewReader(messagesBody(false, "o1")))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := page("https://chat.example.com"); r.StatusCode != 200 || r.Header.Get("Access-Control-Allow-Origin") != "https://chat.example.com" {
		t.Errorf("listed origin: %d ACAO %q; want 200 with CORS", r.StatusCode, r.Header.Get("Access-Control-Allow-Origin"))
	}
	if r := page("https://other.example.com"); r.StatusCode != http.StatusForbidden {
		t.Errorf("unlisted origin: %d; want 403", r.StatusCode)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
