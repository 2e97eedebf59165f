// Package clients points coding agents at Longhaul by editing their own configuration, with a
// backup an undo restores. Today that is Claude Code's ~/.claude/settings.json.
package clients

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ClaudeCodeConfig is the state of Claude Code's user settings as the "configure Claude Code"
// card shows it.
type ClaudeCodeConfig struct {
	Path string `json:"path"` // ~/.claude/settings.json
	// Exists says whether the file exists; Configured whether its env block points at BaseURL.
	Exists     bool   `json:"exists"`
	Configured bool   `json:"configured"`
	BaseURL    string `json:"baseURL"` // ANTHROPIC_BASE_URL in the file now ("" when unset)
	// Backup is the backup an undo restores (the newest), "" when there is none; BackupAt its time.
	Backup   string    `json:"backup"`
	BackupAt time.Time `json:"backupAt,omitempty,omitzero" ts_type:"string"`
}

// ClaudeCode edits ~/.claude/settings.json. The zero value uses the user's home folder and the
// wall clock.
type ClaudeCode struct {
	Home func() (string, error) // nil: os.UserHomeDir
	Now  func() time.Time       // nil: time.Now
}

const (
	backupInfix  = ".longhaul-backup-"
	backupStamp  = "20060102T150405.000000000Z"
	absentSuffix = ".absent" // a backup saying "there was no file": undo removes it
)

func (c ClaudeCode) path() (string, error) {
	home := os.UserHomeDir
	if c.Home != nil {
		home = c.Home
	}
	h, err := home()
	if err != nil {
		return "", fmt.Errorf("find the home folder: %w", err)
	}
	return filepath.Join(h, ".claude", "settings.json"), nil
}

func (c ClaudeCode) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Status reads the file and lists backups; baseURL is Longhaul's own address.
func (c ClaudeCode) Status(baseURL string) (ClaudeCodeConfig, error) {
	p, err := c.path()
	if err != nil {
		return ClaudeCodeConfig{}, err
	}
	st := ClaudeCodeConfig{Path: p}
	b, err := os.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return st, fmt.Errorf("read %s: %w", p, err)
	default:
		st.Exists = true
		var doc struct {
			Env map[string]any `json:"env"`
		}
		if err := json.Unmarshal(b, &doc); err == nil {
			if v, ok := doc.Env["ANTHROPIC_BASE_URL"].(string); ok {
				st.BaseURL = v
			}
		}
		st.Configured = st.BaseURL != "" && strings.TrimRight(st.BaseURL, "/") == strings.TrimRight(baseURL, "/")
	}
	backups, err := c.backups(p)
	if err != nil {
		return st, err
	}
	if n := len(backups); n > 0 {
		st.Backup = backups[n-1].path
		st.BackupAt = backups[n-1].at
	}
	return st, nil
}

type backup struct {
	path string
	at   time.Time
}

// backups lists the backups next to p, oldest first.
func (c ClaudeCode) backups(p string) ([]backup, error) {
	entries, err := os.ReadDir(filepath.Dir(p))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list backups: %w", err)
	}
	prefix := filepath.Base(p) + backupInfix
	var out []backup
	for _, e := range entries {
		stamp, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		t, err := time.Parse(backupStamp, strings.TrimSuffix(stamp, absentSuffix))
		if err != nil {
			continue
		}
		out = append(out, backup{filepath.Join(filepath.Dir(p), e.Name()), t})
	}
	slices.SortFunc(out, func(a, b backup) int { return a.at.Compare(b.at) })
	return out, nil
}

// Configure sets env.ANTHROPIC_BASE_URL and env.ANTHROPIC_AUTH_TOKEN, keeping every other key,
// after backing the file up (or noting that there was none). A file that is not a JSON object
// is left alone and reported.
func (c ClaudeCode) Configure(baseURL, token string) (ClaudeCodeConfig, error) {
	p, err := c.path()
	if err != nil {
		return ClaudeCodeConfig{}, err
	}
	doc := map[string]json.RawMessage{}
	old, err := os.ReadFile(p)
	exists := err == nil
	mode := fs.FileMode(0o600)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return ClaudeCodeConfig{}, fmt.Errorf("read %s: %w", p, err)
	default:
		if len(bytes.TrimSpace(old)) > 0 {
			if err := json.Unmarshal(old, &doc); err != nil || doc == nil {
				return ClaudeCodeConfig{}, fmt.Errorf("%s is not a JSON object; fix or move it first (left unchanged)", p)
			}
		}
		if fi, err := os.Stat(p); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	env := map[string]json.RawMessage{}
	if raw, ok := doc["env"]; ok {
		if err := json.Unmarshal(raw, &env); err != nil || env == nil {
			return ClaudeCodeConfig{}, fmt.Errorf("%s: \"env\" is not an object; fix it first (left unchanged)", p)
		}
	}
	for k, v := range map[string]string{"ANTHROPIC_BASE_URL": baseURL, "ANTHROPIC_AUTH_TOKEN": token} {
		b, err := json.Marshal(v)
		if err != nil {
			return ClaudeCodeConfig{}, err
		}
		env[k] = b
	}
	envJSON, err := json.Marshal(env)
	if err != nil {
		return ClaudeCodeConfig{}, err
	}
	doc["env"] = envJSON
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return ClaudeCodeConfig{}, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return ClaudeCodeConfig{}, fmt.Errorf("create %s: %w", filepath.Dir(p), err)
	}
	name := p + backupInfix + c.now().UTC().Format(backupStamp)
	if exists {
		err = writeFileAtomic(name, old, mode)
	} else {
		err = writeFileAtomic(name+absentSuffix, nil, 0o600)
	}
	if err != nil {
		return ClaudeCodeConfig{}, fmt.Errorf("back up %s: %w", p, err)
	}
	if err := writeFileAtomic(p, append(out, '\n'), mode); err != nil {
		return ClaudeCodeConfig{}, fmt.Errorf("write %s: %w", p, err)
	}
	return c.Status(baseURL)
}

// Undo restores the newest backup (removing the file when there was none before) and deletes
// that backup, so a second undo goes one step further back.
func (c ClaudeCode) Undo(baseURL string) (ClaudeCodeConfig, error) {
	p, err := c.path()
	if err != nil {
		return ClaudeCodeConfig{}, err
	}
	backups, err := c.backups(p)
	if err != nil {
		return ClaudeCodeConfig{}, err
	}
	if len(backups) == 0 {
		return ClaudeCodeConfig{}, errors.New("there is no backup of Claude Code's settings to restore")
	}
	last := backups[len(backups)-1]
	if strings.HasSuffix(last.path, absentSuffix) {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return ClaudeCodeConfig{}, fmt.Errorf("remove %s: %w", p, err)
		}
	} else {
		b, err := os.ReadFile(last.path)
		if err != nil {
			return ClaudeCodeConfig{}, fmt.Errorf("read backup: %w", err)
		}
		mode := fs.FileMode(0o600)
		if fi, err := os.Stat(last.path); err == nil {
			mode = fi.Mode().Perm()
		}
		if err := writeFileAtomic(p, b, mode); err != nil {
			return ClaudeCodeConfig{}, fmt.Errorf("restore %s: %w", p, err)
		}
	}
	if err := os.Remove(last.path); err != nil {
		return ClaudeCodeConfig{}, fmt.Errorf("remove backup: %w", err)
	}
	return c.Status(baseURL)
}

// writeFileAtomic writes through a temp file in the same folder and a rename, so a crash never
// leaves a half-written settings file.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".longhaul-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // gone after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close() //nolint:errcheck // the write error is the one to report
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close() //nolint:errcheck // the chmod error is the one to report
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
