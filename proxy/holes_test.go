package proxy

import (
	"net/http"
	"strings"
	"testing"
)

// Tests for the holes issue 11 names (items 2 and 3): each failed on the code before the
// guard, and passes with it.

// A web page may POST to the proxy with a "simple" content type (no preflight): the browser
// sends it, and the user pays even though the page cannot read the reply.
func TestHoleCrossSitePageCannotSpendQuota(t *testing.T) {
	f := newFixture(t, Config{})
	for _, tc := range []struct {
		name   string
		header []string
		want   int
	}{
		{"cross-site text/plain with Origin", []string{"Content-Type", "text/plain", "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"cross-site JSON with Origin", []string{"Content-Type", "application/json", "Origin", "https://evil.example"}, http.StatusForbidden},
		{"Sec-Fetch-Site cross-site without Origin", []string{"Content-Type", "application/json", "Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"same-site page", []string{"Content-Type", "application/json", "Sec-Fetch-Site", "same-site"}, http.StatusForbidden},
		{"text/plain from a script", []string{"Content-Type", "text/plain"}, http.StatusUnsupportedMediaType},
		{"form post", []string{"Content-Type", "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(f.up.Requests())
			resp := f.post(t, "/v1/messages", streamRequest("claude-sonnet-4-5"), tc.header...)
			body := readAll(t, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want || !strings.Contains(body, `"type":"error"`) {
				t.Errorf("status %d body %s; want %d in Anthropic's error shape", resp.StatusCode, body, tc.want)
			}
			if n := len(f.up.Requests()) - before; n != 0 {
				t.Errorf("%d requests reached the upstream; want none", n)
			}
		})
	}
}

// Client headers that say where a request came from, or carry browser state, must not reach
// the upstream; nor may headers the proxy does not know.
func TestHoleClientHeadersStayLocal(t *testing.T) {
	f := newFixture(t, Config{})
	leaks := []string{"Referer", "Cookie", "Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Real-Ip", "Sec-Ch-Ua", "X-Custom-Thing"}
	var header []string
	for _, h := range leaks {
		header = append(header, h, "leak-"+h)
	}
	resp := f.post(t, "/v1/messages", streamRequest("claude-sonnet-4-5"), append(header, "Content-Type", "application/json")...)
	readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d; want 200", resp.StatusCode)
	}
	got := f.up.LastRequest().Header
	for _, h := range leaks {
		if v := got.Values(h); len(v) > 0 {
			t.Errorf("%s reached the upstream: %q", h, v)
		}
	}
}
