package store

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// syncBuffer collects log output; Watch logs from its own goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// openAt opens a Store at path with a fixed clock and a captured log, closed at cleanup.
func openAt(tb testing.TB, path string) (*Store, *syncBuffer) {
	tb.Helper()
	st, err := Open(context.Background(), path)
	if err != nil {
		tb.Fatalf("Open(%q) = %v", path, err)
	}
	tb.Cleanup(func() {
		if err := st.Close(); err != nil {
			tb.Errorf("Close() = %v", err)
		}
	})
	logs := &syncBuffer{}
	st.Now = func() time.Time { return testNow }
	st.Logger = slog.New(slog.NewTextHandler(logs, nil))
	return st, logs
}

func openTemp(tb testing.TB) (*Store, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "longhaul.db")
	st, _ := openAt(tb, path)
	return st, path
}

func countRows(tb testing.TB, st *Store, table string) int {
	tb.Helper()
	var n int
	if err := st.db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		tb.Fatalf("count %s: %v", table, err)
	}
	return n
}

func TestOpenTwiceIsNoOp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "longhaul.db")
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("embedded migrations = %v, %v; want some", names, err)
	}

	first, _ := openAt(t, path)
	if got := countRows(t, first, "schema_migrations"); got != len(names) {
		t.Errorf("schema_migrations rows after first Open = %d; want %d", got, len(names))
	}
	if _, err := first.SetSetting(context.Background(), "proxy.port", "9000"); err != nil {
		t.Fatal(err)
	}
	var appliedAt string
	if err := first.db.QueryRow(`SELECT applied_at FROM schema_migrations WHERE name = '001_init.sql'`).Scan(&appliedAt); err != nil {
		t.Fatal(err)
	}

	second, _ := openAt(t, path)
	second.Now = func() time.Time { return testNow.Add(time.Hour) }
	if err := second.migrate(context.Background()); err != nil {
		t.Fatalf("migrate() again = %v", err)
	}
	if got := countRows(t, second, "schema_migrations"); got != len(names) {
		t.Errorf("schema_migrations rows after second Open = %d; want %d", got, len(names))
	}
	var again string
	if err := second.db.QueryRow(`SELECT applied_at FROM schema_migrations WHERE name = '001_init.sql'`).Scan(&again); err != nil {
		t.Fatal(err)
	}
	if again != appliedAt {
		t.Errorf("applied_at after second Open = %q; want unchanged %q", again, appliedAt)
	}
	if got, err := second.GetSetting(context.Background(), "proxy.port"); err != nil || got != "9000" {
		t.Errorf("GetSetting(proxy.port) after reopen = %q, %v; want 9000 (data kept)", got, err)
	}
}

func TestOpenFileMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix permissions")
	}
	t.Run("new file is 0600 in a 0700 directory", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "new", "dir", "longhaul.db")
		st, _ := openAt(t, path)
		if _, err := st.SetSetting(context.Background(), "proxy.port", "9000"); err != nil {
			t.Fatal(err)
		}
		assertMode(t, path, 0o600)
		assertMode(t, path+"-wal", 0o600) // SQLite copies the main file's mode
		assertMode(t, filepath.Dir(path), 0o700|fs.ModeDir)
	})
	t.Run("existing world-readable file is narrowed to 0600", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "longhaul.db")
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o644); err != nil { // the umask may have narrowed it already
			t.Fatal(err)
		}
		openAt(t, path)
		assertMode(t, path, 0o600)
	})
	t.Run("path with URI characters", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "a b#c?d%20e", "longhaul.db")
		st, _ := openAt(t, path)
		if _, err := st.SetSetting(context.Background(), "proxy.port", "9001"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("database not at %q: %v", path, err)
		}
	})
}

func assertMode(tb testing.TB, path string, want fs.FileMode) {
	tb.Helper()
	info, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	if got := info.Mode() & (fs.ModePerm | fs.ModeDir); got != want {
		tb.Errorf("mode of %s = %v; want %v", path, got, want)
	}
}
