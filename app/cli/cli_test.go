package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"longhaul/store"
)

func newCLI(t *testing.T) (*CLI, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var out, errOut bytes.Buffer
	return &CLI{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, DataDir: t.TempDir(),
		Open: func(ctx context.Context, dir string) (*store.Store, error) {
			return store.Open(ctx, filepath.Join(dir, "longhaul.db"))
		}}, &out, &errOut
}

func TestCLIHistoryExport(t *testing.T) {
	cli, out, errOut := newCLI(t)
	ctx := context.Background()
	st, err := cli.Open(ctx, cli.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var rows []store.Exchange
	for i, sess := range []string{"one", "two"} {
		rows = append(rows, store.Exchange{ID: "lh_" + sess, State: "finished", Route: "messages", SessionID: sess, Status: 200,
			Start: start.Add(time.Duration(i) * time.Millisecond), Layers: []string{},
			Bodies: &store.Bodies{Request: `{"model":"m"}`, Reply: `{"content":[{"type":"text","text":"Hello from ` + sess + `."}]}`}})
	}
	if err := st.WriteExchanges(ctx, rows); err != nil {
		t.Fatal(err)
	}
	st.Close()

	if err := cli.Run(ctx, []string{"history", "export", "--session", "two", "--since", "2000-01-01T00:00:00Z"}); err != nil {
		t.Fatalf("history export: %v (%s)", err, errOut.String())
	}
	var e store.Exchange
	if err := json.Unmarshal(out.Bytes(), &e); err != nil || e.ID != "lh_two" || e.Bodies == nil || !strings.Contains(e.Bodies.Reply, "Hello from two.") {
		t.Errorf("export = %q, %v; want one line: the session two exchange with its decompressed reply", out.String(), err)
	}
	err = cli.Run(ctx, []string{"history", "export", "--since", "yesterday"})
	if err == nil || errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "RFC 3339") {
		t.Errorf("export --since yesterday = %v; want an RFC 3339 error", err)
	}
}

func TestCLIAccountsAndSettings(t *testing.T) {
	cli, out, errOut := newCLI(t)
	ctx := context.Background()
	cli.Stdin = strings.NewReader("sk-ant-api03-from-stdin-0000wxyz\n")
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"account", "add", "--base-url", "https://api.anthropic.com", "--key", "-", "--label", "cli"}, "added account 1"},
		{[]string{"account", "disable", "1"}, "disabled account 1"},
		{[]string{"account", "list"}, "disabled: disabled by the user"},
		{[]string{"settings", "set", "proxy.max_body_bytes", "1024", "--data-dir", cli.DataDir}, "proxy.max_body_bytes = 1024"},
		{[]string{"settings", "get", "proxy.max_body_bytes"}, "1024"},
		{[]string{"account", "rm", "1"}, "removed account 1"},
	}
	for _, s := range steps {
		out.Reset()
		if err := cli.Run(ctx, s.args); err != nil || !strings.Contains(out.String(), s.want) {
			t.Errorf("longhaul %v = %v, %q (stderr %q); want %q", s.args, err, out.String(), errOut.String(), s.want)
		}
	}
	if strings.Contains(out.String(), "from-stdin") {
		t.Errorf("output shows the key: %q", out.String())
	}
	for _, args := range [][]string{{"account"}, {"account", "frob"}, {"settings", "set", "only-key"}} {
		if err := cli.Run(ctx, args); !errors.Is(err, ErrUsage) {
			t.Errorf("longhaul %v = %v; want ErrUsage", args, err)
		}
	}
}

func TestCLIAccountAddKinds(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		wantKind    string
		wantBaseURL string
	}{
		{"no kind is anthropic at its endpoint", nil, store.KindAnthropic, "https://api.anthropic.com"},
		{"openai at the official API", []string{"--kind", "openai"}, store.KindOpenAI, "https://api.openai.com/v1"},
		{"openai on a local Ollama", []string{"--kind", "openai", "--base-url", "http://localhost:11434/v1"}, store.KindOpenAI, "http://localhost:11434/v1"},
		{"openai-responses at the official API", []string{"--kind", "openai-responses"}, store.KindOpenAIResponses, "https://api.openai.com/v1"},
		{"gemini at the generativelanguage API", []string{"--kind", "gemini"}, store.KindGemini, "https://generativelanguage.googleapis.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cli, out, errOut := newCLI(t)
			ctx := context.Background()
			cli.Stdin = strings.NewReader("sk-test-from-stdin-0000wxyz\n")
			args := append([]string{"account", "add", "--key", "-"}, tt.args...)
			if err := cli.Run(ctx, args); err != nil {
				t.Fatalf("longhaul %v = %v (stderr %q)", args, err, errOut.String())
			}
			if want := "added account 1 (" + tt.wantKind + ", " + tt.wantBaseURL + ", sk-…wxyz)"; !strings.Contains(out.String(), want) {
				t.Errorf("longhaul %v printed %q; want %q", args, out.String(), want)
			}
			out.Reset()
			if err := cli.Run(ctx, []string{"account", "list"}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 2 || !strings.Contains(lines[0], "KIND") || strings.Fields(lines[1])[1] != tt.wantKind {
				t.Errorf("account list = %q; want one account of kind %s in the KIND column", out.String(), tt.wantKind)
			}
		})
	}
}

func TestCLIAccountAddModels(t *testing.T) {
	tests := []struct {
		name   string
		models []string // nil: no --models
		want   []string
	}{
		{"no flag serves any model", nil, []string{}},
		{"one pattern", []string{"--models", "gpt-4o*"}, []string{"gpt-4o*"}},
		{"a list, blanks dropped", []string{"--models", " claude-*, ,gpt-5 "}, []string{"claude-*", "gpt-5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cli, out, errOut := newCLI(t)
			ctx := context.Background()
			cli.Stdin = strings.NewReader("sk-test-from-stdin-0000wxyz\n")
			args := append([]string{"account", "add", "--kind", "openai", "--key", "-"}, tt.models...)
			if err := cli.Run(ctx, args); err != nil {
				t.Fatalf("longhaul %v = %v (stderr %q)", args, err, errOut.String())
			}
			if len(tt.want) > 0 && !strings.Contains(out.String(), "models "+strings.Join(tt.want, ",")+")") {
				t.Errorf("longhaul %v printed %q; want the models named", args, out.String())
			}
			st, err := cli.Open(ctx, cli.DataDir)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			accounts, err := st.Accounts(ctx)
			if err != nil || len(accounts) != 1 {
				t.Fatalf("Accounts() = %v, %v; want one", accounts, err)
			}
			if !slices.Equal(accounts[0].Models, tt.want) {
				t.Errorf("stored models = %q; want %q", accounts[0].Models, tt.want)
			}
		})
	}
}

func TestCLIAccountAddRefusesAnUnknownKindBeforeReadingTheKey(t *testing.T) {
	cli, out, _ := newCLI(t)
	stdin := strings.NewReader("sk-test-from-stdin-0000wxyz\n")
	cli.Stdin = stdin
	err := cli.Run(context.Background(), []string{"account", "add", "--kind", "openai-compatible", "--key", "-"})
	if err == nil || !strings.Contains(err.Error(), "anthropic, openai, openai-responses, gemini") {
		t.Errorf("account add --kind openai-compatible = %v; want an error naming the kinds", err)
	}
	if stdin.Len() == 0 || out.Len() != 0 {
		t.Errorf("stdin left %d bytes, stdout %q; want the key unread and nothing added", stdin.Len(), out.String())
	}
}
