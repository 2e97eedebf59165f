package leaks

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func gitleaksRules(tb testing.TB) *Rules {
	tb.Helper()
	rs, err := Gitleaks()
	if err != nil {
		tb.Fatal(err)
	}
	return rs
}

// randomString draws n characters of alphabet from a fixed seed: keys that look like keys
// (their entropy is a real one's) without being anyone's.
func randomString(rng *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	alnum       = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	base64Chars = alnum + "+/"
)

// plantedSecret is a secret of one kind and the text around it in a tool's output.
type plantedSecret struct {
	kind, secret, context string // context holds %s where the secret goes
}

// PlantedSecrets returns one secret of each kind coding agents print (AWS, GitHub, Slack, JWT,
// PEM, URL passwords, generic keys), as a coding agent would
// meet them (a `cat .env`, a config file, a key file).
func plantedSecrets() []plantedSecret {
	rng := rand.New(rand.NewPCG(1, 2))
	pem := "-----BEGIN RSA PRIVATE KEY-----\n"
	for range 25 {
		pem += randomString(rng, base64Chars, 64) + "\n"
	}
	pem += randomString(rng, base64Chars, 20) + "==\n-----END RSA PRIVATE KEY-----"
	return []plantedSecret{
		{"aws-access-key-id", "AKIA" + randomString(rng, upperDigits, 16), "AWS_ACCESS_KEY_ID=%s\n"},
		{"aws-secret-key", randomString(rng, base64Chars, 40), "aws_secret_access_key = %s\n"},
		{"github-pat", "ghp_" + randomString(rng, alnum, 36), "GITHUB_TOKEN=%s\n"},
		{"github-fine-grained", "github_pat_" + randomString(rng, alnum, 22) + "_" + randomString(rng, alnum, 59), "token: %s\n"},
		{"slack-bot", "xoxb-" + randomString(rng, "0123456789", 11) + "-" + randomString(rng, "0123456789", 13) + "-" + randomString(rng, alnum, 24), "SLACK_BOT=%s\n"},
		{"jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUgUm9lIiwiaWF0IjoxNzE2MjM5MDIyfQ." + randomString(rng, alnum+"_-", 43), "session cookie %s\n"},
		{"private-key", pem, "%s\n"},
		{"generic", randomString(rng, alnum, 32), "API_KEY=%s\n"},
	}
}

// toolResult wraps text as Claude Code sends a tool's output: a JSON string in a tool_result.
func toolResult(text string) string {
	j, err := json.Marshal(text)
	if err != nil {
		panic(err)
	}
	return `{"type":"tool_result","tool_use_id":"toolu_01","content":` + string(j) + `}`
}

func TestFindsEveryPlantedKind(t *testing.T) {
	rs := gitleaksRules(t)
	for _, p := range plantedSecrets() {
		t.Run(p.kind, func(t *testing.T) {
			for _, text := range []string{fmt.Sprintf(p.context, p.secret), toolResult(fmt.Sprintf(p.context, p.secret))} {
				found := rs.Find([]byte(text))
				if masked := maskAll(text, found); strings.Contains(masked, strings.ReplaceAll(p.secret, "\n", "")) ||
					strings.Contains(masked, p.secret[max(0, len(p.secret)/2-8):len(p.secret)/2+8]) {
					t.Errorf("Find(%q) = %v; the secret survives: %q", text, found, masked)
				}
			}
		})
	}
}

// maskAll replaces what Find found by "#".
func maskAll(text string, found []Secret) string {
	b := []byte(text)
	for _, s := range found {
		for i := s.Start; i < s.End; i++ {
			b[i] = '#'
		}
	}
	return string(b)
}

// Hashes and ids are long random strings too, and a body is full of them: none is a secret.
func TestLeavesHashesAndIdsAlone(t *testing.T) {
	rs := gitleaksRules(t)
	rng := rand.New(rand.NewPCG(3, 4))
	png := randomString(rng, base64Chars, 4000)
	texts := []string{
		"commit 3f2a9c1e0b7d4a6f8e5c2b1a0d9f8e7c6b5a4d3e\nAuthor: someone",
		"git checkout 3f2a9c1e0b7d4a6f8e5c2b1a0d9f8e7c6b5a4d3e",
		`{"id":"6d0b8f3e-1111-4222-8333-944455556666","session_id":"0d9f8e7c-6b5a-4d3e-9f2a-3f2a9c1e0b7d"}`,
		"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  go1.26.linux-amd64.tar.gz",
		"h1:PmEvCfVI7ti9dV3s5aMZUY7sS2GxRvG3yzih7E+cS3w=",
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo` + png + `"}}`,
		`{"type":"tool_use","id":"toolu_01ABCdefGHIjklMNOpqrSTUvw","name":"Bash","input":{"command":"go test ./..."}}`,
		toolResult("func key(k string) string { return k }\nvar token = flag.String(\"token\", \"\", \"the token\")\n"),
	}
	for _, text := range texts {
		if found := rs.Find([]byte(text)); len(found) > 0 {
			t.Errorf("Find(%.80q) = %v (%q); want nothing", text, found, text[found[0].Start:found[0].End])
		}
	}
}

// wholeTextFind is gitleaks' own way, the reference the windows must agree with: every rule
// whose keyword occurs runs over the whole text.
func wholeTextFind(rs *Rules, b []byte) []Secret {
	text := string(b)
	lower := strings.ToLower(text)
	var found []Secret
	for _, r := range rs.rules {
		if !slices.ContainsFunc(r.keywords, func(k string) bool { return strings.Contains(lower, k) }) {
			continue
		}
		if err := r.compile(); err != nil {
			panic(err)
		}
		f := finder{rs: rs, r: r, b: b, text: text}
		f.window(0, len(b), true)
		found = append(found, f.found...)
	}
	return merge(found)
}

// goSources returns up to limit .go files under dir, in a fixed order.
func goSources(tb testing.TB, dir string, limit int) []string {
	tb.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && p != dir) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && len(files) < limit {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

// TestWindowsFindWhatTheWholeTextScanFinds: the windows around keywords (extent.go, scan.go)
// are an optimisation only. On real sources with every kind of secret planted between them,
// raw and as JSON, they find exactly what running each rule over the whole text finds.
func TestWindowsFindWhatTheWholeTextScanFinds(t *testing.T) {
	rs := gitleaksRules(t)
	files := goSources(t, filepath.Join(runtime.GOROOT(), "src", "net", "http"), 20)
	planted := plantedSecrets()
	var raw strings.Builder
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		raw.Write(b)
		p := planted[i%len(planted)]
		fmt.Fprintf(&raw, p.context, p.secret)
	}
	for name, text := range map[string]string{"raw": raw.String(), "json": toolResult(raw.String())} {
		got, want := rs.Find([]byte(text)), wholeTextFind(rs, []byte(text))
		if !slices.Equal(got, want) {
			t.Errorf("%s: windows found %d secrets, the whole-text scan %d", name, len(got), len(want))
			for _, s := range want {
				if !slices.Contains(got, s) {
					t.Errorf("  missed %s %q", s.Rule, text[s.Start:s.End])
				}
			}
			for _, s := range got {
				if !slices.Contains(want, s) {
					t.Errorf("  extra %s %q", s.Rule, text[s.Start:s.End])
				}
			}
		}
		if len(want) < len(files)/2 {
			t.Errorf("%s: %d secrets found; want at least the %d planted", name, len(want), len(files))
		}
	}
}
