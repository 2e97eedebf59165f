package store

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"longhaul/store/leaks"
)

// An upstream token of no known shape: only redaction by value can catch it.
const oddSecret = "Zq9.Xw7:mT4/uP2+kL8=rN5@yB1"

func TestRedactorMasksKnownSecretsInEveryForm(t *testing.T) {
	r := NewRedactor(nil)
	r.setKnown(knownAccounts, []string{oddSecret, "short"})
	b64 := func(prefix string) string {
		return base64.StdEncoding.EncodeToString([]byte(prefix + oddSecret + " and more"))
	}
	for _, tc := range []struct{ name, text string }{
		{"raw", `{"note":"my key is ` + oddSecret + `"}`},
		{"query-escaped", "https://x.example/?k=" + url.QueryEscape(oddSecret)},
		{"path-escaped", "https://x.example/" + url.PathEscape(oddSecret)},
		{"base64 aligned", b64("")},
		{"base64 shifted by 1", b64("a")},
		{"base64 shifted by 2", b64("ab")},
		{"base64 url alphabet", base64.URLEncoding.EncodeToString([]byte("ab" + oddSecret))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := r.RedactString(tc.text)
			if got == tc.text {
				t.Fatalf("Redact(%q) changed nothing", tc.text)
			}
			if strings.Contains(got, oddSecret) || strings.Contains(got, url.QueryEscape(oddSecret)) {
				t.Errorf("Redact(%q) = %q; still holds the secret", tc.text, got)
			}
			if dec, err := base64.StdEncoding.DecodeString(got); err == nil && bytes.Contains(dec, []byte(oddSecret)) {
				t.Errorf("Redact(%q) = %q; decodes to the secret", tc.text, got)
			}
			if again := r.RedactString(got); again != got {
				t.Errorf("Redact is not idempotent: %q then %q", got, again)
			}
		})
	}
	// Secrets too short to mask by value are left to the patterns ("short" is a word).
	if got := r.RedactString("a short note"); got != "a short note" {
		t.Errorf("Redact(a short note) = %q; want it unchanged", got)
	}
	// Nothing to mask: the same slice comes back.
	clean := []byte(strings.Repeat("nothing secret here. ", 100))
	if got := r.Redact(clean); &got[0] != &clean[0] {
		t.Error("Redact of clean text returned a copy; want the input itself")
	}
	// Forgetting a secret (the account was deleted and the accounts reread) stops masking it.
	r.setKnown(knownAccounts, nil)
	if got := r.RedactString(oddSecret); got != oddSecret {
		t.Errorf("after the secret was dropped, Redact = %q; want it unchanged", got)
	}
}

func TestStoredExchangesNeverHoldConfiguredSecrets(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)
	if _, err := st.AddAccount(ctx, Account{BaseURL: "https://upstream.example", Secret: oddSecret, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	const clientKey = "my-local-client-key-4242"
	if _, err := st.SetSetting(ctx, clientKeySetting, clientKey); err != nil {
		t.Fatal(err)
	}
	body := `{"messages":[{"role":"user","content":"key ` + oddSecret + ` encoded ` +
		base64.StdEncoding.EncodeToString([]byte("x"+clientKey)) + ` url ` + url.QueryEscape(oddSecret) + `"}]}`
	e := Exchange{ID: "lh_secret", State: "finished", Route: "messages", Status: 502, Layers: []string{},
		ErrorMessage: "upstream said: bad key " + oddSecret, UserAgent: "client/" + clientKey,
		Attempts: []Attempt{{AccountID: 1, Status: 401, Error: "invalid x-api-key " + clientKey}},
		Bodies:   &Bodies{Request: body, Forwarded: body, Reply: `{"error":"` + oddSecret + `"}`}}
	if err := st.WriteExchanges(ctx, []Exchange{e}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Exchange(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	stored := strings.Join([]string{got.ErrorMessage, got.UserAgent, got.Attempts[0].Error, got.Bodies.Request, got.Bodies.Forwarded, got.Bodies.Reply}, "\n")
	for _, s := range []string{oddSecret, clientKey, url.QueryEscape(oddSecret), base64.StdEncoding.EncodeToString([]byte("x" + clientKey))[4:]} {
		if strings.Contains(stored, s) {
			t.Errorf("stored exchange holds %q:\n%s", s, stored)
		}
	}
	if !strings.Contains(got.Bodies.Request, "…[redacted]") {
		t.Errorf("stored request = %q; want the masks in place", got.Bodies.Request)
	}
}

// BenchmarkRedact measures redaction of an 800 KB body (a long session's request) without a
// secret in it: patterns only, and patterns plus 10 known secrets.
func BenchmarkRedact(b *testing.B) {
	var body bytes.Buffer
	for body.Len() < 800<<10 {
		body.WriteString(`{"type":"tool_result","tool_use_id":"toolu_01","content":"func main() { fmt.Println(\"task-runner output: 42 files, ok\") } // see https://example.com/docs?q=1"},`)
	}
	secrets := make([]string, 10)
	for i := range secrets {
		secrets[i] = "upstream-token-" + strings.Repeat(string(rune('a'+i)), 24)
	}
	b.Run("patterns", func(b *testing.B) {
		b.SetBytes(int64(body.Len()))
		for b.Loop() {
			Redact(body.Bytes())
		}
	})
	b.Run("patterns+10known", func(b *testing.B) {
		r := NewRedactor(nil)
		r.setKnown(knownAccounts, secrets)
		b.SetBytes(int64(body.Len()))
		for b.Loop() {
			r.Redact(body.Bytes())
		}
	})
	// A late Claude Code request: tool definitions, then tool results of real code (this
	// repository's store/ sources, JSON-escaped), 800 KB; patterns alone, then with gitleaks'
	// rules (store/leaks), as the history writer runs them.
	code := claudeCodeLikeBody(b, 800<<10)
	b.Run("claude-code/patterns", func(b *testing.B) {
		b.SetBytes(int64(len(code)))
		for b.Loop() {
			Redact(code)
		}
	})
	b.Run("claude-code/patterns+gitleaks", func(b *testing.B) {
		rules, err := leaks.Gitleaks()
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(code)))
		for b.Loop() {
			RedactWith(rules, code)
		}
	})
	b.Run("10known-only", func(b *testing.B) {
		ks := newKnownSet(map[string][]string{knownAccounts: secrets})
		b.SetBytes(int64(body.Len()))
		for b.Loop() {
			ks.redact(body.Bytes())
		}
	})
}

// TestKnownSetFindsWhatANaiveScanFinds checks the strided scan against the obvious one on
// texts with secrets at every alignment, back to back and overlapping.
func TestKnownSetFindsWhatANaiveScanFinds(t *testing.T) {
	secrets := []string{"abcdefgh", "abcdefghijkl", "zzzzzzzzz", "0123456789abcdef", "efghabcd"}
	ks := newKnownSet(map[string][]string{knownAccounts: secrets})
	var forms []knownForm
	for _, ws := range ks.byWindow {
		for _, w := range ws {
			if !slices.ContainsFunc(forms, func(f knownForm) bool { return bytes.Equal(f.text, w.form.text) }) {
				forms = append(forms, w.form)
			}
		}
	}
	slices.SortFunc(forms, func(a, b knownForm) int { return len(b.text) - len(a.text) })
	naive := func(b []byte) []byte {
		var out []byte
		for i := 0; i < len(b); {
			matched := false
			for _, f := range forms {
				if bytes.HasPrefix(b[i:], f.text) {
					out, i, matched = append(out, f.masked...), i+len(f.text), true
					break
				}
			}
			if !matched {
				out, i = append(out, b[i]), i+1
			}
		}
		return out
	}
	seed := uint32(1)
	next := func(n int) int { seed = seed*1664525 + 1013904223; return int(seed>>8) % n }
	for round := 0; round < 2000; round++ {
		var text []byte
		for len(text) < 80 {
			if next(3) == 0 {
				text = append(text, secrets[next(len(secrets))]...)
			} else {
				text = append(text, "xyzabefgh 01z"[next(13)])
			}
		}
		if got, want := ks.redact(text), naive(text); !bytes.Equal(got, want) {
			t.Fatalf("redact(%q) = %q; want %q", text, got, want)
		}
	}
}

func TestStoreRedactExchangeMasksKnownSecretsForTheLiveView(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)
	if _, err := st.AddAccount(ctx, Account{BaseURL: "https://upstream.example", Secret: oddSecret, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	e := Exchange{ErrorMessage: "bad key " + oddSecret, Attempts: []Attempt{{Error: "401 " + oddSecret}}}
	got := st.RedactExchange(e)
	if strings.Contains(got.ErrorMessage+got.Attempts[0].Error, oddSecret) {
		t.Errorf("RedactExchange() = %q / %q; want the secret masked", got.ErrorMessage, got.Attempts[0].Error)
	}
	if e.Attempts[0].Error != "401 "+oddSecret {
		t.Error("RedactExchange modified the caller's attempts")
	}
}

// TestRedactFindsWhatAPerPositionScanFinds checks Redact's strided pass (byte pairs at every
// second position) against a scan that tries every marker at every position, on texts full
// of markers in every case, at every alignment, near misses and real secrets back to back.
func TestRedactFindsWhatAPerPositionScanFinds(t *testing.T) {
	naive := func(b []byte) []byte {
		var out []byte
		last := 0
		for at := 0; at < len(b); at++ {
			start, end, keep, ok := secretFrom(b, at)
			if !ok || start < last {
				continue
			}
			out = append(append(out, b[last:start]...), mask(b[start:end], keep)...)
			last, at = end, end-1
		}
		return append(out, b[last:]...)
	}
	pieces := []string{
		"sk-", "sk-ant-", "task-", "AIza", "aiza", "Bearer ", "BEARER\t", "bEaReR", "bearers", "api-key", "API_KEY=", "ApiKey: ",
		"x-api-key\":\"", "abcdefghijklmnopqrstuvwx", "0123456789AB", "Zz09_-", ".~+/=", " ", "\"", ",", "é", "K",
	}
	seed := uint32(7)
	next := func(n int) int { seed = seed*1664525 + 1013904223; return int(seed>>8) % n }
	masked := 0
	for round := 0; round < 20000; round++ {
		var text []byte
		for range 1 + next(3) { // shift the alignment of everything that follows
			text = append(text, 'q')
		}
		for len(text) < 120 {
			text = append(text, pieces[next(len(pieces))]...)
		}
		got, want := Redact(text), naive(text)
		if !bytes.Equal(got, want) {
			t.Fatalf("Redact(%q) = %q; want %q", text, got, want)
		}
		if !bytes.Equal(got, text) {
			masked++
		}
	}
	if masked < 1000 {
		t.Fatalf("only %d of 20000 texts had a secret to mask; the test needs more", masked)
	}
}

// claudeCodeLikeBody builds a request of about size bytes as Claude Code sends late in a
// session: a system prompt, tool definitions, and tool results holding this package's own
// source files, JSON-escaped, read in a fixed order.
func claudeCodeLikeBody(tb testing.TB, size int) []byte {
	tb.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		tb.Fatalf("read sources: %v (%d files)", err, len(files))
	}
	var b bytes.Buffer
	b.WriteString(`{"model":"claude-sonnet-4-5","max_tokens":32000,"system":[{"type":"text","text":"You are Claude Code. Use the tools to read and edit files; never print secrets, API keys or tokens."}],"tools":[`)
	for i, name := range []string{"Bash", "Read", "Edit", "Write", "Grep", "Glob", "WebFetch", "TodoWrite"} {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":%q,"description":"Runs %s. The command's output, including any error, is returned; pass an absolute path, a timeout in milliseconds, and a short description of what it does and why.","input_schema":{"type":"object","properties":{"path":{"type":"string"},"command":{"type":"string"},"timeout":{"type":"integer"}},"required":["path"]}}`, name, name)
	}
	b.WriteString(`],"messages":[{"role":"user","content":"Fix the failing tests in store."}`)
	for round := 0; b.Len() < size; round++ {
		src, err := os.ReadFile(files[round%len(files)])
		if err != nil {
			tb.Fatal(err)
		}
		content, err := json.Marshal(string(src))
		if err != nil {
			tb.Fatal(err)
		}
		fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_%024d","name":"Read","input":{"path":%q}}]}`, round, files[round%len(files)])
		fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%024d","content":%s}]}`, round, content)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}
