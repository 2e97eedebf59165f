package cli

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"longhaul/app/bundle"
	"longhaul/store"
)

// received is what the scripted server saw of one request.
type received struct {
	method, path, query string
	header              http.Header
	body                []byte
}

// recordingServer answers every request with reply (as contentType) and records what it got.
func recordingServer(t *testing.T, contentType, reply string) (*httptest.Server, func() []received) {
	t.Helper()
	var mu sync.Mutex
	var got []received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read body: %v", err)
		}
		mu.Lock()
		got = append(got, received{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		mu.Unlock()
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, reply) //nolint:errcheck // test server
	}))
	t.Cleanup(srv.Close)
	return srv, func() []received {
		mu.Lock()
		defer mu.Unlock()
		return append([]received(nil), got...)
	}
}

// writeBundle writes the bundle of ex to a file and returns its path.
func writeBundle(t *testing.T, ex store.Exchange) string {
	t.Helper()
	var buf bytes.Buffer
	if err := bundle.Write(&buf, ex, store.DefaultSettings(), bundle.Meta{Version: "test"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bundle.zip")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func exchangeAt(path, request string) store.Exchange {
	return store.Exchange{ID: "lh_replay", State: "finished", Route: "messages", Method: "POST", Path: path,
		Start: time.Unix(1_700_000_000, 0).UTC(), Status: 200, Bodies: &store.Bodies{Request: request, Reply: `{"ok":true}`}}
}

func TestReplaySendsTheReceivedBodyToItsRoute(t *testing.T) {
	// Spacing and key order as a client sent them: replay must not re-encode the body.
	const body = `{ "model":"m",  "max_tokens":16, "messages":[{"role":"user","content":"hi"}] }`
	const key = "lh-replay-client-key-0099"
	for _, tc := range []struct {
		name      string
		path      string
		key       string
		wantQuery string
		wantAuth  map[string]string // header → value; every other auth header must be absent
	}{
		{"messages with the key from stdin", "/v1/messages", "-", "", map[string]string{"X-Api-Key": key, "Anthropic-Version": "2023-06-01"}},
		{"count_tokens without a key", "/v1/messages/count_tokens", "", "", map[string]string{"Anthropic-Version": "2023-06-01"}},
		{"chat completions as a bearer", "/v1/chat/completions", "-", "", map[string]string{"Authorization": "Bearer " + key}},
		{"responses without a key", "/v1/responses", "", "", nil},
		{"gemini stream as SSE", "/v1beta/models/gemini-2.5-pro:streamGenerateContent", "-", "alt=sse", map[string]string{"X-Goog-Api-Key": key}},
		{"gemini generate", "/v1beta/models/gemini-2.5-pro:generateContent", "-", "", map[string]string{"X-Goog-Api-Key": key}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, got := recordingServer(t, "application/json", `{"id":"msg_replayed"}`)
			c, out, errOut := newCLI(t)
			c.Stdin = strings.NewReader(key + "\n")
			args := []string{"replay", writeBundle(t, exchangeAt(tc.path, body)), "--base-url", srv.URL}
			if tc.key != "" {
				args = append(args, "--key", tc.key)
			}
			if err := c.Run(context.Background(), args); err != nil {
				t.Fatalf("replay = %v (%s)", err, errOut.String())
			}
			reqs := got()
			if len(reqs) != 1 {
				t.Fatalf("server got %d requests; want 1", len(reqs))
			}
			r := reqs[0]
			if r.method != http.MethodPost || r.path != tc.path || r.query != tc.wantQuery {
				t.Errorf("server got %s %s?%s; want POST %s?%s", r.method, r.path, r.query, tc.path, tc.wantQuery)
			}
			if string(r.body) != body {
				t.Errorf("server got body %q; want the received body byte for byte %q", r.body, body)
			}
			for _, h := range []string{"X-Api-Key", "Authorization", "X-Goog-Api-Key", "Anthropic-Version"} {
				if want, got := tc.wantAuth[h], r.header.Get(h); got != want {
					t.Errorf("header %s = %q; want %q", h, got, want)
				}
			}
			if out.String() != `{"id":"msg_replayed"}` {
				t.Errorf("printed %q; want the reply", out.String())
			}
			if !strings.Contains(errOut.String(), "200 OK") || strings.Contains(errOut.String()+out.String(), key) {
				t.Errorf("stderr = %q; want the status and never the key", errOut.String())
			}
		})
	}
}

func TestReplayPrintsAStreamEventByEvent(t *testing.T) {
	const events = "event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	srv, _ := recordingServer(t, "text/event-stream", events)
	c, out, errOut := newCLI(t)
	path := writeBundle(t, exchangeAt("/v1/messages", `{"model":"m","stream":true}`))
	if err := c.Run(context.Background(), []string{"replay", path, "--base-url", srv.URL}); err != nil {
		t.Fatalf("replay = %v (%s)", err, errOut.String())
	}
	if out.String() != events {
		t.Errorf("printed %q; want the events %q", out.String(), events)
	}
}

func TestReplayRefuses(t *testing.T) {
	srv, got := recordingServer(t, "application/json", `{}`)
	cut := exchangeAt("/v1/messages", `{"model":"m","messages":[{"role":"user","content":"he`)
	cut.BodiesTruncated = true
	noBody := exchangeAt("/v1/messages", "")
	noBody.Bodies = nil
	for _, tc := range []struct {
		name string
		args func(bundlePath string) []string
		ex   store.Exchange
		want string
	}{
		{"without --base-url", func(p string) []string { return []string{"replay", p} }, exchangeAt("/v1/messages", `{}`), "--base-url is required"},
		{"a base URL that is not http", func(p string) []string { return []string{"replay", p, "--base-url", "file:///etc"} }, exchangeAt("/v1/messages", `{}`), "want http(s)"},
		{"a path that is not a model route", func(p string) []string { return []string{"replay", p, "--base-url", srv.URL} }, exchangeAt("/longhaul/v1/settings", `{}`), "not a model API route"},
		{"a body cut when it was recorded", func(p string) []string { return []string{"replay", p, "--base-url", srv.URL} }, cut, "not JSON"},
		{"a bundle without bodies", func(p string) []string { return []string{"replay", p, "--base-url", srv.URL} }, noBody, "holds no request body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := newCLI(t)
			err := c.Run(context.Background(), tc.args(writeBundle(t, tc.ex)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("replay = %v; want an error saying %q", err, tc.want)
			}
		})
	}
	if n := len(got()); n != 0 {
		t.Errorf("the server got %d requests; refusals send none", n)
	}
}

func TestReplayReportsAnErrorStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error"}}`) //nolint:errcheck // test server
	}))
	defer srv.Close()
	c, out, _ := newCLI(t)
	err := c.Run(context.Background(), []string{"replay", writeBundle(t, exchangeAt("/v1/messages", `{}`)), "--base-url", srv.URL})
	if err == nil || !strings.Contains(err.Error(), "429") {
		t.Errorf("replay = %v; want an error naming 429", err)
	}
	if !strings.Contains(out.String(), "rate_limit_error") {
		t.Errorf("printed %q; want the error body", out.String())
	}
}

// The whole path a maintainer takes: `history bundle` of a recorded exchange whose request
// held a pasted key and whose settings hold a client key, then `replay` of that file: the
// server gets the body as recorded, and no file of the bundle holds either key.
func TestHistoryBundleThenReplay(t *testing.T) {
	const clientKey = "lh-cli-client-key-5151-wxyz"
	const pasted = "sk-ant-api03-pasted-in-a-prompt-3131-yyyy"
	c, out, errOut := newCLI(t)
	ctx := context.Background()
	st, err := c.Open(ctx, c.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetSetting(ctx, "proxy.client_key", clientKey); err != nil {
		t.Fatal(err)
	}
	request := `{"model":"m","messages":[{"role":"user","content":"key ` + pasted + ` and ` + clientKey + `"}]}`
	if err := st.WriteExchanges(ctx, []store.Exchange{exchangeAt("/v1/messages", request)}); err != nil {
		t.Fatal(err)
	}
	stored, err := st.Exchange(ctx, "lh_replay")
	if err != nil {
		t.Fatal(err)
	}
	st.Close() //nolint:errcheck // test

	if err := c.Run(ctx, []string{"history", "bundle", "lh_replay"}); err != nil {
		t.Fatalf("history bundle = %v (%s)", err, errOut.String())
	}
	zipped := append([]byte(nil), out.Bytes()...)
	zr, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
	if err != nil {
		t.Fatalf("history bundle wrote no zip: %v", err)
	}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close() //nolint:errcheck // test
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{clientKey, pasted} {
			b64 := base64.StdEncoding.EncodeToString([]byte(secret))
			if bytes.Contains(data, []byte(secret)) || bytes.Contains(data, []byte(b64[:len(b64)-4])) {
				t.Errorf("%s holds %s", f.Name, store.MaskSecret(secret))
			}
		}
	}
	path := filepath.Join(t.TempDir(), "bundle.zip")
	if err := os.WriteFile(path, zipped, 0o600); err != nil {
		t.Fatal(err)
	}
	srv, got := recordingServer(t, "application/json", `{}`)
	out.Reset()
	if err := c.Run(ctx, []string{"replay", path, "--base-url", srv.URL + "/"}); err != nil {
		t.Fatalf("replay = %v (%s)", err, errOut.String())
	}
	reqs := got()
	if len(reqs) != 1 || reqs[0].path != "/v1/messages" || string(reqs[0].body) != stored.Bodies.Request {
		t.Errorf("server got %+v; want one POST /v1/messages with the stored body %q", reqs, stored.Bodies.Request)
	}
}

func TestHistoryBundleRefusesATerminal(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no /dev/null")
	}
	// /dev/null is a character device, as a terminal is: what isTerminal looks at.
	tty, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close() //nolint:errcheck // test
	c, _, _ := newCLI(t)
	c.Stdout = tty
	err = c.Run(context.Background(), []string{"history", "bundle", "lh_any"})
	if err == nil || !strings.Contains(err.Error(), "> bundle.zip") {
		t.Errorf("history bundle to a terminal = %v; want a hint to redirect", err)
	}
	if errors.Is(err, ErrUsage) {
		t.Error("a terminal is not a usage error")
	}
}

// A replay answered with a redirect prints it and fails, and sends nothing to where it points:
// net/http would follow it with x-api-key or x-goog-api-key on (it strips only Authorization
// and Cookie across hosts), and with the bundle's body.
func TestReplayNeverFollowsARedirect(t *testing.T) {
	const key = "lh-replay-client-key-0099"
	const querySecret = "AIza-location-query-secret-0042"
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		for _, tc := range []struct{ name, path, authHeader string }{
			{"messages, x-api-key", "/v1/messages", "X-Api-Key"},
			{"chat completions, bearer", "/v1/chat/completions", "Authorization"},
			{"gemini, x-goog-api-key", "/v1beta/models/gemini-2.5-pro:generateContent", "X-Goog-Api-Key"},
		} {
			t.Run(fmt.Sprintf("%d %s", status, tc.name), func(t *testing.T) {
				var mu sync.Mutex
				var followed []string // the key each request that reached the redirect's target carried
				elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					followed = append(followed, r.Header.Get(tc.authHeader))
					mu.Unlock()
					io.WriteString(w, `{"stolen":true}`) //nolint:errcheck // test server
				}))
				defer elsewhere.Close()
				redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, elsewhere.URL+r.URL.Path+"?key="+querySecret, status)
				}))
				defer redirecting.Close()

				c, out, errOut := newCLI(t)
				c.Stdin = strings.NewReader(key + "\n")
				args := []string{"replay", writeBundle(t, exchangeAt(tc.path, `{"model":"m"}`)), "--base-url", redirecting.URL, "--key", "-"}
				err := c.Run(context.Background(), args)
				mu.Lock()
				if len(followed) != 0 {
					t.Errorf("the redirect's target got %d requests, with %s %q; want none", len(followed), tc.authHeader, followed)
				}
				mu.Unlock()
				if err == nil || !strings.Contains(err.Error(), strconv.Itoa(status)) || !strings.Contains(err.Error(), "not followed") {
					t.Errorf("replay = %v; want an error naming the %d redirect", err, status)
				}
				location := elsewhere.URL + tc.path
				if !strings.Contains(errOut.String(), strconv.Itoa(status)) || !strings.Contains(errOut.String(), "Location: "+location) {
					t.Errorf("stderr = %q; want the status %d and the Location %s", errOut.String(), status, location)
				}
				if printed := out.String() + errOut.String() + fmt.Sprint(err); strings.Contains(printed, querySecret) || strings.Contains(printed, key) {
					t.Errorf("printed %q (error %v); want neither the Location's query nor the key", out.String()+errOut.String(), err)
				}
			})
		}
	}
}
