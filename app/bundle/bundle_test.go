package bundle

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"longhaul/store"
	"longhaul/store/leaks"
)

// Planted secrets. The client key and the late account key are not key-shaped: only their
// values can find them. The pasted keys are key-shaped: the patterns find them.
const (
	clientKey      = "lh-local-client-key-4242-wxyz"
	accountKey     = "sk-ant-api03-account-key-in-store-000-abcd"
	lateAccountKey = "upstream-key-added-later-7788-qrst" // configured after the exchange was stored
	pastedKey      = "sk-ant-api03-pasted-into-a-prompt-1111-zzzz"
	pastedBearer   = "eyJhbGciOiJIUzI1NiJ9.pasted-bearer-token-2222"
)

// secretExchange is a finished exchange whose bodies hold every planted secret, raw and base64.
func secretExchange(start time.Time) store.Exchange {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	request := `{"model":"claude-sonnet-4-5","stream":false,"max_tokens":64,"messages":[` +
		`{"role":"user","content":"my key is ` + pastedKey + ` and the header was Authorization: Bearer ` + pastedBearer + `"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"sh","input":{"cmd":"env"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"LONGHAUL_KEY=` + clientKey +
		` UPSTREAM=` + lateAccountKey + ` AUTH_B64=` + b64(clientKey) + ` LATE_B64=` + b64("x:"+lateAccountKey) + `"}]}]}`
	return store.Exchange{
		ID: "lh_bundle_01", State: "finished", Route: "messages", Method: "POST", Path: "/v1/messages",
		ClientProtocol: "anthropic", UpstreamProtocol: "anthropic", UserAgent: "claude-cli/2.1.0 key=" + pastedKey,
		SessionID: "sess-1", Model: "claude-sonnet-4-5", ModelSent: "claude-sonnet-4-5-20250929",
		AccountID: 1, AccountName: "work", Start: start, FirstByte: start.Add(100 * time.Millisecond),
		End: start.Add(time.Second), Duration: time.Second, TTFB: 100 * time.Millisecond, Status: 200,
		StopReason: "end_turn", InputTokens: 1200, OutputTokens: 30, ContextLimit: 200000,
		TokensBefore: 9000, TokensAfter: 4000, Layers: []string{"Layer-1"},
		Attempts: []store.Attempt{
			{AccountID: 2, AccountName: "home", Status: 429, Error: "rate limited for " + lateAccountKey, Start: start, Duration: 20 * time.Millisecond},
			{AccountID: 1, AccountName: "work", Status: 200, Start: start.Add(30 * time.Millisecond), Duration: 900 * time.Millisecond},
		},
		Compaction: []store.CompactionStep{
			{Layer: "tool-results", TokensBefore: 9000, TokensAfter: 8000, RawBefore: 8000, RawAfter: 7200, Items: 1, Duration: time.Millisecond, Edits: []store.Edit{
				{Kind: "result-shortened", Message: 2, Through: 2, Block: 0, Count: 1, TokensBefore: 900, TokensAfter: 100,
					Before: "LONGHAUL_KEY=" + clientKey + " UPSTREAM=" + lateAccountKey, After: "LONGHAUL_KEY=" + clientKey + " …", Note: "toolu_01"},
			}},
			{Layer: "Layer-1", TokensBefore: 8000, TokensAfter: 4000, RawBefore: 7200, RawAfter: 3500, Items: 3, Duration: time.Millisecond, Edits: []store.Edit{
				{Kind: "rounds-removed", Message: 1, Through: 2, Block: -1, Count: 2, TokensBefore: 4000, Before: "assistant: [tool_use sh] key " + pastedKey},
			}},
			{Layer: "model-map", Items: 1, Edits: []store.Edit{
				{Kind: "model-renamed", Message: -1, Through: -1, Block: -1, Count: 1, Before: "claude-sonnet-4-5", After: "claude-sonnet-4-5-20250929", Note: "proxy.model_map"},
			}},
		},
		Bodies: &store.Bodies{
			Request:   request,
			Forwarded: `{"model":"claude-sonnet-4-5-20250929","messages":[{"role":"user","content":"my key is ` + pastedKey + `"}]}`,
			Reply:     `{"id":"msg_1","type":"message","content":[{"type":"text","text":"your key ` + clientKey + ` works"}]}`,
		},
	}
}

// storedExchange records ex in a fresh store whose client key and first account are set
// before it, and returns the store, the exchange as read back, and the account secrets known
// when the bundle is made (the late key was added after the exchange was stored).
func storedExchange(t *testing.T, ex store.Exchange) (*store.Store, store.Exchange, []string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "longhaul.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() }) //nolint:errcheck // test
	if _, err := st.SetSetting(ctx, "proxy.client_key", clientKey); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddAccount(ctx, store.Account{Label: "work", Kind: store.KindAnthropic, Secret: accountKey, Enabled: true, Weight: 1}); err != nil {
		t.Fatal(err)
	}
	if err := st.WriteExchanges(ctx, []store.Exchange{ex}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddAccount(ctx, store.Account{Label: "home", Kind: store.KindAnthropic, Secret: lateAccountKey, Enabled: true, Weight: 1}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Exchange(ctx, ex.ID)
	if err != nil {
		t.Fatal(err)
	}
	accounts, err := st.Accounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var secrets []string
	for _, a := range accounts {
		secrets = append(secrets, a.Secret)
	}
	return st, got, secrets
}

// unzip returns every file of a zip by name.
func unzip(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("the bundle is not a zip: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(rc); err != nil {
			t.Fatal(err)
		}
		rc.Close() //nolint:errcheck // test
		out[f.Name] = buf.Bytes()
	}
	return out
}

// leakForms are what a grep for secret looks for: the value, and its base64 (both alphabets)
// at each alignment, without the characters that depend on the neighbouring bytes.
func leakForms(secret string) []string {
	forms := []string{secret}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for pad := range 3 {
			s := enc.EncodeToString(append(make([]byte, pad), secret...))
			forms = append(forms, s[(pad*8+5)/6:(pad+len(secret))*8/6])
		}
	}
	return forms
}

func TestBundleHoldsNoSecret(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	st, ex, accountSecrets := storedExchange(t, secretExchange(start))
	settings, err := st.Settings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if settings.Proxy.ClientKey != clientKey {
		t.Fatalf("settings hold client key %q; the test needs it set", store.MaskSecret(settings.Proxy.ClientKey))
	}
	var zipped bytes.Buffer
	if err := Write(&zipped, ex, settings, Meta{Version: "1.2.3", GOOS: "linux", GOARCH: "amd64"}, accountSecrets, st.LeakRules()); err != nil {
		t.Fatal(err)
	}
	files := unzip(t, zipped.Bytes())
	wantNames := []string{ManifestFile, ReadmeFile, RequestFile, ForwardedFile, ReplyJSONFile, AttemptsFile, LedgerFile, SettingsFile}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	slices.Sort(wantNames)
	if !slices.Equal(names, wantNames) {
		t.Errorf("bundle files = %v; want %v", names, wantNames)
	}
	for _, secret := range []string{clientKey, accountKey, lateAccountKey, pastedKey, pastedBearer} {
		for _, form := range leakForms(secret) {
			for name, data := range files {
				if bytes.Contains(data, []byte(form)) {
					t.Errorf("%s holds %q (a form of %s)", name, form, store.MaskSecret(secret))
				}
			}
		}
	}
	// Masked, not dropped: the request is still the request.
	if !json.Valid(files[RequestFile]) || !bytes.Contains(files[RequestFile], []byte(`"tool_use_id":"toolu_01"`)) {
		t.Errorf("request.json is not the request: %.300s", files[RequestFile])
	}
	var s map[string]map[string]any
	if err := json.Unmarshal(files[SettingsFile], &s); err != nil {
		t.Fatal(err)
	}
	if got := s["proxy"]["client_key"]; got != removedSecret {
		t.Errorf("settings.json proxy.client_key = %v; want %q", got, removedSecret)
	}
	if got := s["proxy"]["port"]; got != float64(8045) {
		t.Errorf("settings.json proxy.port = %v; want the setting (8045)", got)
	}
}

func TestBundleReadsBackWhatWasWritten(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	_, ex, secrets := storedExchange(t, secretExchange(start))
	var zipped bytes.Buffer
	meta := Meta{Version: "1.2.3", GOOS: "darwin", GOARCH: "arm64"}
	if err := Write(&zipped, ex, store.DefaultSettings(), meta, secrets, nil); err != nil {
		t.Fatal(err)
	}
	b, err := Read(bytes.NewReader(zipped.Bytes()), int64(zipped.Len()))
	if err != nil {
		t.Fatal(err)
	}
	m := b.Manifest
	if m.Format != FormatVersion || m.Kind != Kind || m.Longhaul != meta || m.ExchangeID != ex.ID || m.Path != "/v1/messages" ||
		m.Route != "messages" || m.ClientProtocol != "anthropic" || m.Model != "claude-sonnet-4-5" ||
		m.ModelSent != "claude-sonnet-4-5-20250929" || m.Status != 200 || !m.Start.Equal(start) || m.Duration != time.Second {
		t.Errorf("manifest = %+v", m)
	}
	if !bytes.HasPrefix(b.Request, []byte(`{"model":"claude-sonnet-4-5","stream":false`)) || !json.Valid(b.Request) {
		t.Errorf("request = %.200s", b.Request)
	}
	if b.Forwarded == nil || b.ReplyFile != ReplyJSONFile {
		t.Errorf("forwarded %d bytes, reply file %q; want both", len(b.Forwarded), b.ReplyFile)
	}
	if len(b.Attempts) != 2 || b.Attempts[0].Status != 429 || strings.Contains(b.Attempts[0].Error, lateAccountKey) {
		t.Errorf("attempts = %+v", b.Attempts)
	}
	if b.Ledger.Source != LedgerFromEdits || len(b.Ledger.Steps) != len(ex.Compaction) {
		t.Fatalf("ledger = %+v; want the %d recorded steps, source %q", b.Ledger, len(ex.Compaction), LedgerFromEdits)
	}
	for i, c := range ex.Compaction {
		got := b.Ledger.Steps[i]
		if got.Step != c.Layer || got.TokensBefore != c.TokensBefore || got.TokensAfter != c.TokensAfter || len(got.Edits) != len(c.Edits) {
			t.Errorf("ledger step %d = %+v; want the recorded %+v", i, got, c)
		}
	}
	// The edits as recorded, but for the account key added after the exchange was stored,
	// which only the bundle's redaction knows.
	shortened := b.Ledger.Steps[0].Edits[0]
	if strings.Contains(shortened.Before, lateAccountKey) || shortened.Message != 2 || shortened.Block != 0 || shortened.Note != "toolu_01" {
		t.Errorf("tool-results edit = %+v; want messages[2].content[0] (toolu_01) with the late key masked", shortened)
	}
	if got, want := b.Ledger.Steps[2].Edits, ex.Compaction[2].Edits; !reflect.DeepEqual(got, want) {
		t.Errorf("model-map edits = %+v; want %+v", got, want)
	}
	// The same exchange gives the same bytes (file times are the exchange's, not the clock's).
	var again bytes.Buffer
	if err := Write(&again, ex, store.DefaultSettings(), meta, secrets, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), zipped.Bytes()) {
		t.Error("two bundles of one exchange differ")
	}
}

// TestBundleLedgerSource: the ledger names where its steps come from; an exchange recorded
// before the ledger gives its steps with no edits (an empty list, never null).
func TestBundleLedgerSource(t *testing.T) {
	edit := store.Edit{Kind: "thinking-elided", Message: 5, Through: 5, Block: 0, Count: 1, TokensBefore: 300, TokensAfter: 2, Before: "let me think", After: "..."}
	for _, tc := range []struct {
		name  string
		steps []store.CompactionStep
		want  Ledger
	}{
		{"no step", nil, Ledger{Format: FormatVersion, Source: LedgerFromCompaction, Steps: []LedgerStep{}}},
		{"recorded before the ledger", []store.CompactionStep{{Layer: "Layer-2", TokensBefore: 900, TokensAfter: 600, Items: 4}},
			Ledger{Format: FormatVersion, Source: LedgerFromCompaction, Steps: []LedgerStep{{Step: "Layer-2", TokensBefore: 900, TokensAfter: 600, Items: 4, Edits: []store.Edit{}}}}},
		{"recorded ledger", []store.CompactionStep{{Layer: "purify"}, {Layer: "Layer-2", TokensBefore: 900, TokensAfter: 600, Items: 1, Edits: []store.Edit{edit}}},
			Ledger{Format: FormatVersion, Source: LedgerFromEdits, Steps: []LedgerStep{{Step: "purify", Edits: []store.Edit{}},
				{Step: "Layer-2", TokensBefore: 900, TokensAfter: 600, Items: 1, Edits: []store.Edit{edit}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := store.Exchange{ID: "lh_l", State: "finished", Route: "messages", Start: time.Unix(1e9, 0).UTC(), Compaction: tc.steps}
			var zipped bytes.Buffer
			if err := Write(&zipped, ex, store.DefaultSettings(), Meta{}, nil, nil); err != nil {
				t.Fatal(err)
			}
			if raw := unzip(t, zipped.Bytes())[LedgerFile]; bytes.Contains(raw, []byte(`"edits": null`)) {
				t.Errorf("ledger.json has null edits: %s", raw)
			}
			b, err := Read(bytes.NewReader(zipped.Bytes()), int64(zipped.Len()))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(b.Ledger, tc.want) {
				t.Errorf("ledger = %+v; want %+v", b.Ledger, tc.want)
			}
		})
	}
}

func TestBundleFilesFollowWhatWasKept(t *testing.T) {
	base := store.Exchange{ID: "lh_x", State: "finished", Route: "messages", Path: "/v1/messages", Start: time.Unix(1e9, 0).UTC()}
	for _, tc := range []struct {
		name   string
		bodies *store.Bodies
		want   []string // besides manifest, README, attempts, ledger, settings
	}{
		{"no bodies kept", nil, nil},
		{"forwarded as received", &store.Bodies{Request: `{"a":1}`, Reply: `{"b":2}`}, []string{RequestFile, ReplyJSONFile}},
		{"forwarded changed", &store.Bodies{Request: `{"a":1}`, Forwarded: `{"a":2}`, Reply: `{"b":2}`}, []string{RequestFile, ForwardedFile, ReplyJSONFile}},
		{"event stream kept", &store.Bodies{Request: `{"a":1}`, Reply: "event: message_start\ndata: {}\n\n"}, []string{RequestFile, ReplySSEFile}},
		{"reply cut at the capture limit", &store.Bodies{Request: `{"a":1}`, Reply: `{"id":"msg_1","content":[{"te`}, []string{RequestFile, ReplyTextFile}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := base
			ex.Bodies = tc.bodies
			var zipped bytes.Buffer
			if err := Write(&zipped, ex, store.DefaultSettings(), Meta{}, nil, nil); err != nil {
				t.Fatal(err)
			}
			b, err := Read(bytes.NewReader(zipped.Bytes()), int64(zipped.Len()))
			if err != nil {
				t.Fatal(err)
			}
			want := append([]string{ManifestFile, ReadmeFile}, tc.want...)
			want = append(want, AttemptsFile, LedgerFile, SettingsFile)
			if !slices.Equal(b.Manifest.Files, want) {
				t.Errorf("files = %v; want %v", b.Manifest.Files, want)
			}
			if got := len(unzip(t, zipped.Bytes())); got != len(want) {
				t.Errorf("the zip holds %d files; the manifest lists %d", got, len(want))
			}
		})
	}
}

func TestReadRefusesWhatIsNotABundle(t *testing.T) {
	zipOf := func(files map[string]string) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for name, text := range files {
			w, err := zw.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte(text)) //nolint:errcheck // bytes.Buffer
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"no manifest", zipOf(map[string]string{RequestFile: `{}`})},
		{"another kind", zipOf(map[string]string{ManifestFile: `{"format":1,"kind":"something-else"}`})},
		{"a newer format", zipOf(map[string]string{ManifestFile: `{"format":99,"kind":"longhaul-repro-bundle"}`})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(tc.data), int64(len(tc.data)))
			if !errors.Is(err, ErrNotBundle) {
				t.Errorf("Read = %v; want ErrNotBundle", err)
			}
		})
	}
	if _, err := Read(strings.NewReader("not a zip"), 9); err == nil {
		t.Error("Read of text = nil error; want one")
	}
}

// A setting whose name says it holds a secret must be in SecretSettings, or settings.json
// would carry its value.
func TestSecretSettingsAreListed(t *testing.T) {
	for _, key := range store.SettingKeys() {
		leaf := key[strings.LastIndex(key, ".")+1:]
		looksSecret := false
		for _, word := range []string{"key", "secret", "token", "password", "credential"} {
			if strings.Contains(leaf, word) && !strings.Contains(leaf, "tokens") {
				looksSecret = true
			}
		}
		if looksSecret != slices.Contains(SecretSettings, key) {
			t.Errorf("setting %s: looks secret %t, in SecretSettings %t", key, looksSecret, !looksSecret)
		}
	}
}

// TestBundleMasksWhatGitleaksFinds: the bundle's own pass masks what the store's rules find,
// even in an exchange that never went through the store's redaction (one recorded before the
// rules existed), and leaves the hashes beside them alone.
func TestBundleMasksWhatGitleaksFinds(t *testing.T) {
	rules, err := leaks.Gitleaks()
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{
		"AKIAZ7QWE3RTY5UIO2PA",
		"ghp_Q3vZ8xLm2NpR7tYw4KjH9bCd6FgS1aE0uIoP",
		"xoxb-123456789012-1234567890123-Zx8Cv7Bn6Mq5Wl4Ek3Rj2Th1",
		"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBn2kX9mQ4vR7tYw4KjH9bCd6FgS1aE0uIoPZx8Cv7Bn6oAoGCCqGSM49\nAwEHoUQDQgAEq5Wl4Ek3Rj2Th1Zx8Cv7Bn6Mq5Wl4Ek3Rj2Th1Zx8Cv7Bn6Mq5Wl4Ek\n-----END EC PRIVATE KEY-----",
	}
	const sha = "3f2a9c1e0b7d4a6f8e5c2b1a0d9f8e7c6b5a4d3e"
	text := "AWS_ACCESS_KEY_ID=" + secrets[0] + "\nGITHUB_TOKEN=" + secrets[1] + "\nSLACK=" + secrets[2] + "\n" + secrets[3] + "\ncommit " + sha + "\n"
	body, err := json.Marshal(map[string]any{"messages": []any{map[string]any{"role": "user", "content": text}}})
	if err != nil {
		t.Fatal(err)
	}
	ex := store.Exchange{ID: "lh_000001", State: "finished", ErrorMessage: "bad token " + secrets[1], Bodies: &store.Bodies{Request: string(body)}}
	var zipped bytes.Buffer
	if err := Write(&zipped, ex, store.DefaultSettings(), Meta{}, nil, rules); err != nil {
		t.Fatal(err)
	}
	for name, data := range unzip(t, zipped.Bytes()) {
		for _, s := range secrets {
			s = strings.ReplaceAll(s, "\n", `\n`)
			if bytes.Contains(data, []byte(s[len(s)/2-6:len(s)/2+6])) {
				t.Errorf("%s holds %.12s…", name, s)
			}
		}
	}
	if !bytes.Contains(unzip(t, zipped.Bytes())[RequestFile], []byte(sha)) {
		t.Errorf("request.json lost the commit hash")
	}
}
