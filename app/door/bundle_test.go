package door

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"longhaul/app/bundle"
	"longhaul/app/cli"
	"longhaul/app/recorder"
	"longhaul/store"
)

func TestDoorServesARedactedReproBundle(t *testing.T) {
	const (
		clientKey  = "local-client-key-of-the-bundle-test-3030"
		accountKey = "sk-ant-api03-bundle-test-account-key-4040-wxyz"
		pastedKey  = "sk-proj-pasted-by-the-user-into-a-prompt-5050"
	)
	f := newFixture(t, recorder.Options{})
	ctx := context.Background()
	if _, err := f.st.AddAccount(ctx, store.Account{Label: "work", BaseURL: f.up.URL, Secret: accountKey, Enabled: true, Weight: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.SetSetting(ctx, "proxy.client_key", clientKey); err != nil {
		t.Fatal(err)
	}
	if err := f.app.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	body := `{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"keys: ` + pastedKey + `, ` + clientKey +
		`, ` + base64.StdEncoding.EncodeToString([]byte(accountKey)) + `"}]}`
	req, err := http.NewRequest(http.MethodPost, f.front.URL+"/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", clientKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body) //nolint:errcheck // test
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("proxy answered %d", resp.StatusCode)
	}
	id := resp.Header.Get("Longhaul-Request-Id")
	f.waitRecorded(t, id)

	get := func(path, key string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, f.door.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if key != "" {
			req.Header.Set("x-api-key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if r := get("/longhaul/v1/history/"+id+"/bundle", ""); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("bundle without the client key = %d; want 401 (the door's one guard)", r.StatusCode)
	}
	if r := get("/longhaul/v1/history/lh_nosuch/bundle", clientKey); r.StatusCode != http.StatusNotFound || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("bundle of an unknown id = %d %s; want a JSON 404", r.StatusCode, r.Header.Get("Content-Type"))
	}
	r := get("/longhaul/v1/history/"+id+"/bundle", clientKey)
	if r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != "application/zip" ||
		r.Header.Get("Content-Disposition") != `attachment; filename="longhaul-bundle-`+id+`.zip"` {
		t.Fatalf("bundle = %d, %s, %s; want 200, a zip attachment", r.StatusCode, r.Header.Get("Content-Type"), r.Header.Get("Content-Disposition"))
	}
	zipped, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Read(bytes.NewReader(zipped), int64(len(zipped)))
	if err != nil {
		t.Fatal(err)
	}
	if b.Manifest.ExchangeID != id || b.Manifest.Longhaul.Version != "test" || b.Manifest.Path != "/v1/messages" || len(b.Request) == 0 || len(b.Attempts) != 1 {
		t.Errorf("bundle manifest %+v, %d request bytes, %d attempts; want this exchange with its request and one attempt", b.Manifest, len(b.Request), len(b.Attempts))
	}
	zr, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
	if err != nil {
		t.Fatal(err)
	}
	for _, zf := range zr.File {
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close() //nolint:errcheck // test
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{clientKey, accountKey, pastedKey} {
			b64 := base64.StdEncoding.EncodeToString([]byte(secret))
			if bytes.Contains(data, []byte(secret)) || bytes.Contains(data, []byte(b64[:len(b64)-4])) {
				t.Errorf("%s holds %s", zf.Name, store.MaskSecret(secret))
			}
		}
	}

	// The window's binding returns the same zip, base64-encoded.
	encoded, err := f.app.Facades(func() context.Context { return ctx }).History.Bundle(id)
	if err != nil {
		t.Fatal(err)
	}
	if fromWindow, err := base64.StdEncoding.DecodeString(encoded); err != nil || !bytes.Equal(fromWindow, zipped) {
		t.Errorf("History.Bundle = %d bytes (%v); want the door's zip", len(fromWindow), err)
	}
}

// What a maintainer does with a report: `longhaul replay bundle.zip` against a Longhaul in
// front of the scripted upstream sends the upstream what the reporter's Longhaul sent it.
func TestReplayOfABundleReproducesTheForwardedBody(t *testing.T) {
	f := newFixture(t, recorder.Options{})
	ctx := context.Background()
	if _, err := f.st.AddAccount(ctx, store.Account{Label: "work", BaseURL: f.up.URL, Secret: "sk-ant-api03-replay-test-account-6060-wxyz", Enabled: true, Weight: 1}); err != nil {
		t.Fatal(err)
	}
	// A mapped model: what went upstream is not what the client sent.
	if _, err := f.st.SetSetting(ctx, "proxy.model_map", `[{"pattern":"claude-sonnet-*","model":"claude-mapped-for-replay"}]`); err != nil {
		t.Fatal(err)
	}
	if err := f.app.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	resp := f.post(t, messagesBody(false, "replayed"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("proxy answered %d", resp.StatusCode)
	}
	id := resp.Header.Get("Longhaul-Request-Id")
	f.waitRecorded(t, id)
	first := f.up.LastRequest()
	if !bytes.Contains(first.Body, []byte(`"claude-mapped-for-replay"`)) {
		t.Fatalf("the upstream got %s; want the mapped model", first.Body)
	}

	var zipped bytes.Buffer
	if err := f.app.WriteBundle(ctx, id, &zipped); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bundle.zip")
	if err := os.WriteFile(path, zipped.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	c := &cli.CLI{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}
	if err := c.Run(ctx, []string{"replay", path, "--base-url", f.front.URL}); err != nil {
		t.Fatalf("replay = %v (%s)", err, errOut.String())
	}
	reqs := f.up.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the upstream got %d requests; want the original and the replay", len(reqs))
	}
	if !bytes.Equal(reqs[1].Body, first.Body) || reqs[1].Path != first.Path {
		t.Errorf("replay reached the upstream as %s %s; the original as %s %s", reqs[1].Path, reqs[1].Body, first.Path, first.Body)
	}
	if !strings.Contains(out.String(), `"type":"message"`) {
		t.Errorf("replay printed %q; want the reply", out.String())
	}
}
