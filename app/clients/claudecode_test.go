package clients

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestClaudeCodeConfigureKeepsOtherKeysAndUndoRestores(t *testing.T) {
	home := t.TempDir()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := ClaudeCode{Home: func() (string, error) { return home, nil }, Now: func() time.Time { now = now.Add(time.Second); return now }}
	p := filepath.Join(home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	original := []byte(`{"model": "opus", "env": {"FOO": "bar", "ANTHROPIC_BASE_URL": "https://elsewhere"}, "statusLine": {"type": "command"}}`)
	if err := os.WriteFile(p, original, 0o644); err != nil {
		t.Fatal(err)
	}

	st, err := c.Configure("http://127.0.0.1:8045", "longhaul")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Configured || st.Backup == "" {
		t.Errorf("status after configure = %+v; want configured with a backup", st)
	}
	var doc struct {
		Model      string            `json:"model"`
		Env        map[string]string `json:"env"`
		StatusLine map[string]string `json:"statusLine"`
	}
	b, _ := os.ReadFile(p)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Model != "opus" || doc.Env["FOO"] != "bar" || doc.StatusLine["type"] != "command" ||
		doc.Env["ANTHROPIC_BASE_URL"] != "http://127.0.0.1:8045" || doc.Env["ANTHROPIC_AUTH_TOKEN"] != "longhaul" {
		t.Errorf("settings.json after configure = %s", b)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode after configure = %v; want the file's own 0644 kept", fi.Mode().Perm())
	}

	st, err = c.Undo("http://127.0.0.1:8045")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != string(original) {
		t.Errorf("after undo the file is %s; want the original bytes", b)
	}
	if st.Configured || st.Backup != "" {
		t.Errorf("status after undo = %+v; want not configured, no backup left", st)
	}
	if _, err := c.Undo("http://127.0.0.1:8045"); err == nil {
		t.Error("a second undo with no backup succeeded")
	}
}

func TestClaudeCodeConfigureWithoutAFileAndUndoRemovesIt(t *testing.T) {
	home := t.TempDir()
	c := ClaudeCode{Home: func() (string, error) { return home, nil }}
	st, err := c.Configure("http://127.0.0.1:9000", "k")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Exists || !st.Configured {
		t.Errorf("status = %+v", st)
	}
	if fi, err := os.Stat(st.Path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("new settings.json: %v, %v; want mode 0600", fi, err)
	}
	if _, err := c.Undo("http://127.0.0.1:9000"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(st.Path); !os.IsNotExist(err) {
		t.Errorf("settings.json still exists after undoing its creation: %v", err)
	}
}

func TestClaudeCodeRefusesAFileThatIsNotAnObject(t *testing.T) {
	home := t.TempDir()
	c := ClaudeCode{Home: func() (string, error) { return home, nil }}
	p := filepath.Join(home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(p), 0o700) //nolint:errcheck // WriteFile reports it
	if err := os.WriteFile(p, []byte(`[1, 2`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Configure("http://127.0.0.1:8045", "x"); err == nil {
		t.Fatal("Configure accepted a broken settings.json")
	}
	if b, _ := os.ReadFile(p); string(b) != `[1, 2` {
		t.Errorf("broken file was changed to %s", b)
	}
}
