// Package store keeps Longhaul's state in one SQLite file: settings, accounts, the
// request history and the estimator's calibration.
// Every exported method is its own transaction boundary, and times come from Store.Now.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"longhaul/store/leaks"
)

// ErrNotFound is returned (wrapped) when a row or a map entry does not exist.
var ErrNotFound = errors.New("not found")

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store is an open Longhaul database. It is safe for concurrent use, including by several
// processes on the same file (the desktop app and the CLI).
type Store struct {
	// Now returns the current time; stored times are its value in UTC. Open sets it to time.Now.
	Now func() time.Time
	// Logger receives warnings such as ignored corrupt settings. If nil, slog.Default() is used.
	Logger *slog.Logger

	db       *sql.DB
	path     string       // the database file, absolute (Watch watches its directory)
	keychain Keychain     // nil: secrets are kept in the database (SecretStorage)
	redactor *Redactor    // masks patterns, the leak rules' finds and this store's known secrets in stored text
	leaks    *leaks.Rules // the rules redactor runs (WithLeakRules; else gitleaks')
	bodies   *bodyMemory  // what the history writer remembers of recent bodies (store/bodies.go)
}

// Open opens (creating if needed) the database at path and brings its schema up to date.
// The parent directory is created 0700 and the file kept at 0600 (its -wal and -shm files
// too), because it holds secrets unless a keychain keeps them (WithKeychain).
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	if err := prepareFile(path); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	dsn, err := dataSourceName(path)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open store: %w", err), db.Close())
	}
	st := &Store{Now: time.Now, db: db, path: abs, bodies: newBodyMemory()}
	for _, o := range opts {
		o(st)
	}
	if st.leaks == nil {
		if st.leaks, err = leaks.Gitleaks(); err != nil {
			return nil, errors.Join(fmt.Errorf("open store: %w", err), db.Close())
		}
	}
	st.redactor = NewRedactor(st.leaks)
	if err := st.migrate(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("open store: %w", err), db.Close())
	}
	st.setUpKeychain(ctx)
	// SQLite creates the -wal and -shm files with the database's mode, but a file left by an
	// older version or another tool may be wider.
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := narrowMode(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, errors.Join(fmt.Errorf("open store: %w", err), db.Close())
		}
	}
	return st, nil
}

// LeakRules are the rules the store's redaction runs (store/leaks), for a caller that redacts
// what it reads from the store once more (app/bundle).
func (st *Store) LeakRules() *leaks.Rules { return st.leaks }

// Close closes the database. Cancel any Watch first.
func (st *Store) Close() error {
	return st.db.Close()
}

func (st *Store) now() string {
	return formatTime(st.Now())
}

func (st *Store) logger() *slog.Logger {
	if st.Logger != nil {
		return st.Logger
	}
	return slog.Default()
}

// prepareFile creates the file ourselves so that SQLite never creates it with the umask's
// wider default, and narrows an existing file that someone made group/world readable.
func prepareFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		return f.Close()
	}
	if !errors.Is(err, fs.ErrExist) {
		return err
	}
	return narrowMode(path)
}

// narrowMode makes a group/world readable file 0600.
func narrowMode(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if info.Mode().Perm()&0o077 != 0 {
		return os.Chmod(path, 0o600)
	}
	return nil
}

// dataSourceName builds a URI filename. The pragmas sit in the DSN so that every pooled
// connection gets them; _txlock=immediate makes write transactions take the lock at BEGIN, so a
// read-then-write transaction waits (busy_timeout) instead of failing with SQLITE_BUSY when the
// CLI writes at the same moment.
func dataSourceName(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") { // Windows: SQLite expects file:/C:/...
		p = "/" + p
	}
	// Characters that mean something in a URI must be escaped in the path.
	p = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
	// auto_vacuum only takes on a database without tables: it makes a new
	// file INCREMENTAL from the start (history retention gives space back);
	// an older file is switched once in the background (EnableIncrementalVacuum).
	// temp_store(MEMORY) keeps statement journals off the disk: an exchange's upsert needs
	// one (it writes a row and its indexes and may abort), and in a batch of hundreds it
	// spilled to a temp file, a tenth of the history writer's CPU in pwrite calls
	// (BenchmarkRecorderSmallExchange). A statement journal holds the pages one statement
	// changed. The other temp structures, the history views' GROUP BY sorters
	// (history_views.go), hold a few dozen bytes per row grouped.
	// wal_autocheckpoint(4000): the writer checkpoints when the WAL passes 16 MiB instead of
	// 4 MiB. A checkpoint copies the latest version of each page the WAL holds, and the
	// history's index pages change in nearly every batch (its ids are random), so fewer, larger
	// checkpoints copy each page fewer times: they were a tenth of the writer's CPU at 1,000
	// pages. The retention loop truncates the WAL when it runs (history_retention.go).
	return "file:" + p + "?_pragma=auto_vacuum(INCREMENTAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)" +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=temp_store(MEMORY)&_pragma=wal_autocheckpoint(4000)&_txlock=immediate", nil
}

// migrate applies the embedded migrations in lexical order, each in its own transaction
// together with its schema_migrations row, so a crash never leaves one half applied.
func (st *Store) migrate(ctx context.Context) error {
	if _, err := st.db.ExecContext(ctx,
		`CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return err
	}
	slices.Sort(names)
	for _, path := range names {
		name := strings.TrimPrefix(path, "migrations/")
		if err := st.applyMigration(ctx, name, path); err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
	}
	return nil
}

func (st *Store) applyMigration(ctx context.Context, name, path string) error {
	body, err := migrationFiles.ReadFile(path)
	if err != nil {
		return err
	}
	tx, err := st.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer st.rollback(tx)
	// Checked inside the write transaction: two processes opening a fresh file at once must not
	// both apply the same migration.
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE name = ?`, name).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)`, name, st.now()); err != nil {
		return err
	}
	return tx.Commit()
}

// rollback is deferred after BeginTx; after a successful Commit it is a no-op returning
// sql.ErrTxDone, which is the only error worth ignoring here.
func (st *Store) rollback(tx *sql.Tx) {
	if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		st.logger().Warn("store: rollback failed", "err", err)
	}
}

// Watch calls onChange whenever settings or accounts changed — through this Store or another
// connection, usually another process such as the CLI — by reading a counter that triggers keep
// (migration 004). It blocks until ctx is done. Writes to other tables (the request history,
// many a second) do not count. onChange is also called once as soon as the watch is
// established: a commit that landed between the caller's last read and that moment would
// otherwise never be reported.
//
// Where the OS tells about file changes (Linux: inotify, dbChanges) the counter is read only
// after the database's files were written, within every of the write, and at most once per
// every however often they are; an idle app then does not wake for it at all (it polled
// twice a second, its last wake-ups while idle: docs/performance.md). Elsewhere it is read
// every every.
func (st *Store) Watch(ctx context.Context, every time.Duration, onChange func()) {
	if ctx.Err() != nil {
		return
	}
	changes, stop, err := dbChanges(st.path)
	if err != nil {
		st.logger().Debug("store: watch: no file notifications; polling", "every", every, "err", err)
		t := time.NewTicker(every)
		defer t.Stop()
		st.watch(ctx, t.C, onChange, nil)
		return
	}
	defer stop()
	st.watchFiles(ctx, changes, every, watchBackstop, onChange, nil)
}

// watchBackstop is how often Watch reads the counter with no file written: what a lost
// notification can delay a change by (an event queue that overflowed is reported as a
// change, so this is for a file system that does not notify).
const watchBackstop = time.Minute

// watchFiles is Watch driven by changes (one value per burst of writes to the database's
// files): each burst is read once, every after it began, so that a commit whose last write
// woke it is visible (SQLite publishes a commit in its shared-memory index just after its
// last write to the WAL, and only that write is seen); writes during the wait join it.
func (st *Store) watchFiles(ctx context.Context, changes <-chan struct{}, every, backstop time.Duration, onChange, polled func()) {
	ticks := make(chan time.Time)
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Go(func() {
		wait := time.NewTimer(backstop)
		defer wait.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-changes:
				wait.Reset(every)
				select {
				case <-ctx.Done():
					return
				case <-wait.C:
				}
			case <-wait.C:
			}
			select {
			case <-ctx.Done():
				return
			case ticks <- time.Now():
			}
			wait.Reset(backstop)
		}
	})
	st.watch(ctx, ticks, onChange, polled)
}

// watch is Watch with its clock passed in: it polls once at once and then on every tick, and
// calls polled (if not nil) after each poll, so a test can drive and count polls instead of
// sleeping.
func (st *Store) watch(ctx context.Context, ticks <-chan time.Time, onChange, polled func()) {
	// After a failed poll we cannot know what we missed, so the next good one reports a change.
	last, known, failed := int64(0), false, false
	// Prepared once (again after a failure): the poll runs twice a second for as long as the
	// app does, and parsing the query each time was most of its cost.
	var version *sql.Stmt
	defer func() {
		if version != nil {
			version.Close()
		}
	}()
	poll := func() {
		if polled != nil {
			defer polled()
		}
		var v int64
		var err error
		if version == nil {
			version, err = st.db.PrepareContext(ctx, `SELECT version FROM config_version WHERE id = 1`)
		}
		if err == nil {
			err = version.QueryRowContext(ctx).Scan(&v)
		}
		if err != nil {
			if ctx.Err() == nil {
				st.logger().Warn("store: watch: read config version", "err", err)
				failed = true
			}
			return
		}
		if !known || v != last || failed {
			onChange()
		}
		last, known, failed = v, true, false
	}
	poll()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
			poll()
		}
	}
}
