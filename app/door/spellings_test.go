package door

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"longhaul/app/recorder"
)

// spellings are the ways of writing a path that a router or a guard might read as another
// path: doubled prefixes, encoded letters, "//", "/./", "/../", case, trailing dots, escaped
// slashes and backslashes. Each takes a canonical path ("/longhaul/v1/settings") and returns
// another spelling of it, or of a path next to it.
var spellings = []struct {
	name  string
	spell func(p string, segs []string) string
}{
	{"doubled first segment", func(p string, s []string) string { return "/" + s[0] + p }},
	{"under the UI's prefix", func(p string, s []string) string { return "/longhaul" + p }},
	{"doubled, encoded letter", func(p string, s []string) string { return "/" + s[0] + "/" + pctFirst(s[0]) + p[len(s[0])+1:] }},
	{"encoded first letter", func(p string, s []string) string { return "/" + pctFirst(p[1:]) }},
	{"encoded letter of segment 2", func(p string, s []string) string { return "/" + s[0] + "/" + pctFirst(strings.Join(s[1:], "/")) }},
	{"encoded last letter", func(p string, s []string) string { return p[:len(p)-1] + fmt.Sprintf("%%%02x", p[len(p)-1]) }},
	{"leading //", func(p string, s []string) string { return "/" + p }},
	{"// after segment 1", func(p string, s []string) string { return "/" + s[0] + "//" + strings.Join(s[1:], "/") }},
	{"// before the last segment", func(p string, s []string) string { return lastSlash(p, "//") }},
	{"leading /./", func(p string, s []string) string { return "/." + p }},
	{"/./ after segment 1", func(p string, s []string) string { return "/" + s[0] + "/./" + strings.Join(s[1:], "/") }},
	{"/x/../ after segment 1", func(p string, s []string) string { return "/" + s[0] + "/x/../" + strings.Join(s[1:], "/") }},
	{"trailing /.", func(p string, s []string) string { return p + "/." }},
	{"trailing /..", func(p string, s []string) string { return p + "/.." }},
	{"/../ back to the last segment", func(p string, s []string) string { return p + "/../" + s[len(s)-1] }},
	{"upper case", func(p string, s []string) string { return strings.ToUpper(p) }},
	{"title-case segment 1", func(p string, s []string) string { return "/" + strings.ToUpper(p[1:2]) + p[2:] }},
	{"upper-case last segment", func(p string, s []string) string {
		return p[:strings.LastIndexByte(p, '/')+1] + strings.ToUpper(s[len(s)-1])
	}},
	{"trailing dot on segment 1", func(p string, s []string) string { return "/" + s[0] + "." + p[len(s[0])+1:] }},
	{"trailing dot", func(p string, s []string) string { return p + "." }},
	{"trailing dots", func(p string, s []string) string { return p + ".." }},
	{"every slash as %2f", func(p string, s []string) string { return "/" + strings.ReplaceAll(p[1:], "/", "%2f") }},
	{"last slash as %2F", func(p string, s []string) string { return lastSlash(p, "%2F") }},
	{"leading %2f", func(p string, s []string) string { return "/%2f" + p[1:] }},
	{"backslashes", func(p string, s []string) string { return "/" + strings.ReplaceAll(p[1:], "/", `\`) }},
	{"last slash as a backslash", func(p string, s []string) string { return lastSlash(p, `\`) }},
	{"last slash as %5c", func(p string, s []string) string { return lastSlash(p, "%5c") }},
	{"%2e segment", func(p string, s []string) string { return "/" + s[0] + "/%2e/" + strings.Join(s[1:], "/") }},
	{"%2e%2e back to the start", func(p string, s []string) string { return "/" + s[0] + "/%2e%2e" + p }},
	{"trailing slash", func(p string, s []string) string { return p + "/" }},
	{"trailing %2f", func(p string, s []string) string { return p + "%2f" }},
	{"trailing ;x", func(p string, s []string) string { return p + ";x" }},
	{"trailing %00", func(p string, s []string) string { return p + "%00" }},
	{"trailing %20", func(p string, s []string) string { return p + "%20" }},
}

func pctFirst(s string) string { return fmt.Sprintf("%%%02x", s[0]) + s[1:] }

func lastSlash(p, with string) string {
	i := strings.LastIndexByte(p, '/')
	return p[:i] + with + p[i+1:]
}

// route is one API route to try: its method and canonical path.
type route struct{ method, path string }

// proxyRoutes are the proxy's own API routes (proxy/server.go's routes).
var proxyAPIRoutes = []route{
	{"POST", "/v1/messages"},
	{"POST", "/v1/messages/count_tokens"},
	{"POST", "/v1/chat/completions"},
	{"POST", "/v1/responses"},
	{"POST", "/v1beta/models/gemini-2.5-flash:generateContent"},
	{"GET", "/v1/models"},
	{"GET", "/v1beta/models"},
	{"GET", "/v1beta/models/gemini-2.5-flash"},
}

// liveFeeds are the routes that answer with a stream that does not end.
var liveFeeds = map[string]bool{"/longhaul/v1/events": true, "/longhaul/v1/history/live": true}

// One decision per request, on the path that is routed: every route of the UI's API on both
// ports, and every route of the proxy's API, in every spelling, with and without the client
// key. Without the key nothing gets in; with it, only the canonical spelling does (each other
// spelling is 401 or 404), and no refusal carries any of the API's data.
func TestEverySpellingOfEveryRouteMeetsTheGuard(t *testing.T) {
	f := newFixture(t, recorder.Options{})
	const key = "lh-spellings-key-0123456789"
	if _, err := f.app.Facades(context.Background).Settings.Set(map[string]any{"proxy.client_key": key}); err != nil {
		t.Fatal(err)
	}
	d := New(f.app, fstest.MapFS{"index.html": {Data: []byte("<h1>Longhaul</h1>")}}, Options{Guard: f.srv.Guard()})
	f.srv.SetUI(d.ProxyHandler())
	ports := map[string]string{"proxy port": f.front.URL, "UI port": f.door.URL}

	var uiRoutes []route
	for _, p := range d.patterns {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			continue // the catch-alls: no API behind them
		}
		uiRoutes = append(uiRoutes, route{method, strings.NewReplacer("{id}", "1").Replace(path)})
	}
	if len(uiRoutes) < 25 {
		t.Fatalf("found %d routes of the UI's API; want them all (patternMux)", len(uiRoutes))
	}

	tried, outcomes := 0, map[int]int{}
	try := func(base string, rt route, path string, withKey bool) (int, string) {
		t.Helper()
		tried++
		status, body := rawRequest(t, base, rt.method, path, withKey, key)
		outcomes[status]++
		return status, body
	}
	for portName, base := range ports {
		routes := uiRoutes
		if portName == "proxy port" {
			routes = append(routes, proxyAPIRoutes...)
		}
		for _, rt := range routes {
			// The canonical spelling: the key is needed, and (for reads, which change nothing)
			// it is enough.
			if status, body := try(base, rt, rt.path, false); status != http.StatusUnauthorized {
				t.Errorf("%s: %s %s without the key = %d %.200s; want 401", portName, rt.method, rt.path, status, body)
			}
			if rt.method == "GET" && !liveFeeds[rt.path] {
				if status, body := try(base, rt, rt.path, true); status == http.StatusUnauthorized || strings.Contains(body, "must be written plainly") {
					t.Errorf("%s: %s %s with the key = %d %.200s; want it served", portName, rt.method, rt.path, status, body)
				}
			}
			segs := strings.Split(rt.path[1:], "/")
			for _, sp := range spellings {
				path := sp.spell(rt.path, segs)
				if path == rt.path {
					continue
				}
				for _, withKey := range []bool{false, true} {
					status, body := try(base, rt, path, withKey)
					if status != http.StatusUnauthorized && status != http.StatusNotFound && !(status == http.StatusBadRequest && body == "") {
						t.Errorf("%s: %s %s (%s, key %v) = %d %.200s; want 401 or 404", portName, rt.method, path, sp.name, withKey, status, body)
						continue
					}
					if !refusalOnly(body) {
						t.Errorf("%s: %s %s (%s, key %v) answered %.300s; want an error and nothing else", portName, rt.method, path, sp.name, withKey, body)
					}
				}
			}
		}
	}
	t.Logf("%d requests over %d spellings: %v", tried, len(spellings), outcomes)
}

// refusalOnly reports whether body holds an error and no data: empty (net/http's own 400,
// whose body is read as ""), the UI's file server's 404, or a JSON object whose only member is the error (the door's
// shape) or "type":"error" with it (Anthropic's).
func refusalOnly(body string) bool {
	if body == "" || body == "404 page not found\n" { // the UI's file server: no such file
		return true
	}
	var v map[string]json.RawMessage
	if json.Unmarshal([]byte(body), &v) != nil {
		return false
	}
	delete(v, "error")
	if t, ok := v["type"]; ok && string(t) == `"error"` {
		delete(v, "type")
	}
	return len(v) == 0
}

// rawRequest sends method path on a connection of its own, exactly as written (a client
// library would clean or escape it), and returns the status and body (net/http's plain-text
// refusals of a malformed request line as ""). A 200 event stream is not read.
func rawRequest(t *testing.T, base, method, path string, withKey bool, key string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second)) //nolint:errcheck // a hang guard, not a measure
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n", method, path)
	if withKey {
		fmt.Fprintf(&b, "X-Api-Key: %s\r\n", key)
	}
	body := ""
	if method != "GET" {
		body = "{}"
		fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	if _, err := io.WriteString(c, b.String()+"\r\n"+body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s %s: no reply: %v", method, path, err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.StatusCode, "(event stream)"
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the reply: %v", method, path, err)
	}
	if resp.StatusCode == http.StatusBadRequest && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		return resp.StatusCode, "" // net/http refused the request line before any handler ran
	}
	return resp.StatusCode, string(raw)
}
