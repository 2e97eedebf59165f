package door

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"longhaul/app/internal/wait"
	"longhaul/app/recorder"
	"longhaul/proxy"
)

// Hostile input on the UI's routes: the real door behind the real guard (a client key set, a
// short body deadline), on a real listener. Each case gets an error in the door's shape
// ({"error":{"message":…}}) or a closed connection, the door keeps serving, and no goroutine
// is left behind. The proxy's own corpus is proxy/hostile_test.go.
func TestDoorHostileInput(t *testing.T) {
	f := newFixture(t, recorder.Options{})
	const key = "lh-door-hostile-key"
	guard := proxy.NewGuard(nil, proxy.Timeouts{BodyRead: 500 * time.Millisecond})
	guard.Configure(key, nil)
	srv := httptest.NewServer(New(f.app, fstest.MapFS{"index.html": {Data: []byte("<h1>Longhaul</h1>")}}, Options{Guard: guard}).Handler(true))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	raw := func(method, path, body string, header ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n", method, path)
		for _, h := range header {
			b.WriteString(h + "\r\n")
		}
		if body != "" {
			fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
		}
		return b.String() + "\r\n" + body
	}
	withKey := func(method, path, body string, header ...string) string {
		return raw(method, path, body, append([]string{"X-Api-Key: " + key, "Content-Type: application/json"}, header...)...)
	}
	settingsPut := func(body string, header ...string) string {
		return withKey("PUT", "/longhaul/v1/settings", body, header...)
	}
	cases := []struct {
		name   string
		req    string
		stall  bool // the client holds the connection open after writing
		want   []int
		closed bool // a close without a reply is a good outcome
	}{
		{name: "malformed JSON", req: settingsPut(`{"values":`), want: []int{400}},
		{name: "not JSON", req: settingsPut(`hello`), want: []int{400}},
		{name: "NUL bytes", req: settingsPut("\x00\x00\x00"), want: []int{400}},
		{name: "100,000-deep nesting", req: settingsPut(`{"values":{"proxy.model_map":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}}`), want: []int{400}},
		{name: "huge number", req: settingsPut(`{"values":{"proxy.port":1e999999}}`), want: []int{400}},
		{name: "invalid UTF-8 value", req: settingsPut("{\"values\":{\"proxy.bind\":\"\xff\xfe\"}}"), want: []int{400}},
		{name: "duplicate keys", req: settingsPut(`{"values":{"proxy.port":1},"values":{"proxy.port":99999}}`), want: []int{400}},
		{name: "body over the 1 MiB limit", req: settingsPut(`{"values":{"compaction.summary_model":"` + strings.Repeat("m", 1<<20) + `"}}`), want: []int{413}, closed: true},
		{name: "text/plain write", req: raw("PUT", "/longhaul/v1/settings", `{"values":{}}`, "X-Api-Key: "+key, "Content-Type: text/plain"), want: []int{415}},
		{name: "cross-origin write", req: settingsPut(`{"values":{}}`, "Origin: https://evil.example"), want: []int{403}},
		{name: "cross-site write without Origin", req: settingsPut(`{"values":{}}`, "Sec-Fetch-Site: cross-site"), want: []int{403}},
		{name: "no key", req: raw("GET", "/longhaul/v1/settings", ""), want: []int{401}},
		{name: "wrong key", req: raw("GET", "/longhaul/v1/accounts", "", "X-Api-Key: lh-guess"), want: []int{401}},
		{name: "wrong login", req: raw("POST", proxy.LoginPath, `{"key":"lh-guess"}`, "Content-Type: application/json"), want: []int{401}},
		{name: "login as a form", req: raw("POST", proxy.LoginPath, `key=`+key, "Content-Type: application/x-www-form-urlencoded"), want: []int{415}},
		{name: "foreign Host", req: strings.Replace(withKey("GET", "/longhaul/v1/status", ""), "Host: 127.0.0.1", "Host: evil.example", 1), want: []int{403}},
		{name: "dot-dot to the API", req: raw("GET", "/assets/../longhaul/v1/settings", ""), want: []int{301, 307, 401, 404}},
		{name: "encoded slashes", req: raw("GET", "/longhaul%2fv1%2fsettings", ""), want: []int{401, 404}},
		{name: "encoded NUL", req: raw("GET", "/longhaul/v1/settings%00", ""), want: []int{401, 404}},
		{name: "unknown method", req: withKey("BREW", "/longhaul/v1/settings", ""), want: []int{405}},
		{name: "unknown route", req: withKey("GET", "/longhaul/v1/nothing", ""), want: []int{404}},
		{name: "account id not a number", req: withKey("PUT", "/longhaul/v1/accounts/1e999", `{}`), want: []int{400, 404}},
		{name: "body that never ends", req: strings.Replace(settingsPut(`{"values":`), "Content-Length: 10", "Content-Length: 500", 1), stall: true, want: []int{400}, closed: true},
		{name: "chunked body that never ends", req: withKey("PUT", "/longhaul/v1/settings", "", "Transfer-Encoding: chunked") + "4\r\n{\"va\r\n", stall: true, want: []int{400}, closed: true},
	}
	good := func(t *testing.T) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/longhaul/v1/status", nil)
		req.Header.Set("X-Api-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("the next good request: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	good(t)
	http.DefaultClient.CloseIdleConnections()
	baseline := runtime.NumGoroutine()

	outcomes := map[string]int{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(30 * time.Second)) //nolint:errcheck // the hang guard
			go io.WriteString(c, tc.req)                    //nolint:errcheck // the server may close first
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				var ne net.Error
				if (errors.As(err, &ne) && ne.Timeout()) || !tc.closed {
					t.Fatalf("no reply: %v; want one of %v", err, tc.want)
				}
				outcomes["closed"]++
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			outcomes[fmt.Sprint(resp.StatusCode)]++
			if !slices.Contains(tc.want, resp.StatusCode) {
				t.Errorf("status %d %.200s; want one of %v", resp.StatusCode, body, tc.want)
			}
			if resp.StatusCode >= 400 || strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				var e struct {
					Error struct{ Message string } `json:"error"`
				}
				if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
					t.Errorf("status %d body %.200q: not the door's error shape", resp.StatusCode, body)
				}
			}
			good(t)
		})
	}

	// Live feeds: clients that vanish before, during and after the stream's first bytes.
	for _, readBytes := range []int{0, 1, 64} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, withKey("GET", "/longhaul/v1/events", "")) //nolint:errcheck
		if readBytes > 0 {
			c.SetReadDeadline(time.Now().Add(30 * time.Second)) //nolint:errcheck
			io.ReadFull(c, make([]byte, readBytes))             //nolint:errcheck // the stream's first bytes
		}
		c.Close()
		outcomes["client gone"]++
	}
	good(t)
	wait.Until(t, "goroutines back to the baseline", func() bool {
		http.DefaultClient.CloseIdleConnections()
		return runtime.NumGoroutine() <= baseline
	})
	t.Logf("door corpus: %d cases + 3 vanishing event streams; outcomes %v; goroutines back to %d", len(cases), outcomes, baseline)
}
