package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/creativeprojects/go-selfupdate"
)

// EventUpdateStatus carries UpdateStatus to the UI (mirror it in frontend/src/events.ts).
const EventUpdateStatus = "update:status"

// UpdateConfig is the release source, built into the binary (main.go's
// -ldflags -X variables). The zero value turns updates off.
type UpdateConfig struct {
	// Repo is the GitHub repository whose releases carry the builds, "owner/name".
	// Empty: updates are off.
	Repo string
	// APIURL is the GitHub API base for a GitHub Enterprise server (or a test
	// server), e.g. "https://git.example.com/api/v3/". Empty: api.github.com.
	APIURL string
	// PublicKey is a PEM ECDSA public key (or a certificate holding one; either
	// may be base64-encoded) that
	// signs checksums.txt: with it, a release must carry checksums.txt.sig
	// (ASN.1 signature of the file's SHA-256). Empty: checksums.txt alone is checked.
	PublicKey string
	// Executable is the file an update replaces. Empty: the running binary.
	Executable string
	// Interval between automatic checks. Zero: a day.
	Interval time.Duration
}

// Update states.
const (
	UpdateOff         = "off"         // no release source built in, a development build, or the setting is off
	UpdateIdle        = "idle"        // not checked yet
	UpdateChecking    = "checking"    // asking the release source
	UpdateUpToDate    = "up-to-date"  // the latest release is this one
	UpdateDownloading = "downloading" // a newer release is being downloaded, verified and installed
	UpdateReady       = "ready"       // installed; restart to finish
	UpdateFailed      = "error"       // the last check or install failed; the binary is unchanged
)

// UpdateStatus is what the UI shows about self-update.
type UpdateStatus struct {
	State     string    `json:"state"`
	Message   string    `json:"message"`
	Current   string    `json:"current"`
	Latest    string    `json:"latest,omitempty"`
	Source    string    `json:"source,omitempty"` // owner/name
	Signed    bool      `json:"signed"`           // checksums.txt must carry a valid signature
	CheckedAt time.Time `json:"checkedAt,omitzero"`
	Error     string    `json:"error,omitempty"`
}

// checkTimeout bounds a whole check, download included.
const checkTimeout = 15 * time.Minute

// ErrUpdatesOff is returned by a manual check when updates are not possible.
var ErrUpdatesOff = errors.New("updates are off")

// updater checks for releases on start and every Interval while the
// app.check_updates setting is on, and installs a newer one in place of the
// binary: downloaded, verified (checksums.txt, and its signature when a key is
// built in), extracted, written next to the binary and renamed over it, so the
// binary is either the old one or the new one, never a mix. The running
// process keeps running the old code until it restarts.
type updater struct {
	cfg      UpdateConfig
	version  string
	log      *slog.Logger
	publish  func(UpdateStatus)
	disabled string // why updates can never run in this build; "" when they can

	up   *selfupdate.Updater
	repo selfupdate.Repository

	check sync.Mutex // one check at a time
	mu    sync.Mutex
	st    UpdateStatus
	on    bool          // the setting
	wake  chan struct{} // the setting turned on
	quit  func()        // closes the window (Restart); nil without one

	restart atomic.Bool // Restart was asked: start again once the window has closed
}

func newUpdater(cfg UpdateConfig, version string, log *slog.Logger, publish func(UpdateStatus)) *updater {
	if cfg.Interval <= 0 {
		cfg.Interval = 24 * time.Hour
	}
	u := &updater{cfg: cfg, version: version, log: log, publish: publish, wake: make(chan struct{}, 1)}
	u.st = UpdateStatus{State: UpdateOff, Current: version, Source: cfg.Repo}
	if err := u.configure(); err != nil {
		u.disabled = err.Error()
	}
	u.st.Message = u.offMessage()
	return u
}

func (u *updater) configure() error {
	if u.cfg.Repo == "" {
		return errors.New("this build has no release source")
	}
	if _, err := semver.StrictNewVersion(stripV(u.version)); err != nil {
		return fmt.Errorf("%q is a development build, not a release version", u.version)
	}
	src, err := selfupdate.NewGitHubSource(selfupdate.GitHubConfig{EnterpriseBaseURL: u.cfg.APIURL})
	if err != nil {
		return fmt.Errorf("release source: %w", err)
	}
	var validator selfupdate.Validator = &selfupdate.ChecksumValidator{UniqueFilename: "checksums.txt"}
	if u.cfg.PublicKey != "" {
		key, err := parseECDSAPublicKey([]byte(u.cfg.PublicKey))
		if err != nil {
			return fmt.Errorf("built-in public key: %w", err)
		}
		validator = new(selfupdate.PatternValidator).
			Add("checksums.txt", &selfupdate.ECDSAValidator{PublicKey: key}).
			Add("*", &selfupdate.ChecksumValidator{UniqueFilename: "checksums.txt"}).
			SkipValidation("*.sig")
		u.st.Signed = true
	}
	up, err := selfupdate.NewUpdater(selfupdate.Config{Source: src, Validator: validator})
	if err != nil {
		return fmt.Errorf("updater: %w", err)
	}
	u.up, u.repo = up, selfupdate.ParseSlug(u.cfg.Repo)
	return nil
}

func (u *updater) offMessage() string {
	if u.disabled != "" {
		return u.disabled
	}
	return "turned off in settings (app.check_updates)"
}

// parseECDSAPublicKey reads a PEM "PUBLIC KEY" or "CERTIFICATE" block, or
// the same base64-encoded (easier to pass through -ldflags -X than newlines).
func parseECDSAPublicKey(pemData []byte) (*ecdsa.PublicKey, error) {
	block, _ := pem.Decode(pemData)
	if block == nil {
		if raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(pemData))); err == nil {
			block, _ = pem.Decode(raw)
		}
	}
	if block == nil {
		return nil, errors.New("no PEM block (give the PEM text, or its base64)")
	}
	var pub any
	switch block.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		pub = k
	case "CERTIFICATE":
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		pub = cert.PublicKey
	default:
		return nil, fmt.Errorf("PEM block %q: want PUBLIC KEY or CERTIFICATE", block.Type)
	}
	key, ok := pub.(*ecdsa.PublicKey)
	if !ok {
		return nil, errors.New("not an ECDSA key")
	}
	return key, nil
}

func stripV(v string) string {
	if len(v) > 0 && v[0] == 'v' {
		return v[1:]
	}
	return v
}

// Status reports the latest state.
func (u *updater) Status() UpdateStatus {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.st
}

func (u *updater) set(change func(*UpdateStatus)) UpdateStatus {
	u.mu.Lock()
	change(&u.st)
	st := u.st
	u.mu.Unlock()
	if u.publish != nil {
		u.publish(st)
	}
	return st
}

// setEnabled applies the app.check_updates setting; turning it on checks soon.
func (u *updater) setEnabled(on bool) {
	u.mu.Lock()
	was := u.on
	u.on = on
	u.mu.Unlock()
	if on == was || u.disabled != "" {
		return
	}
	u.set(func(st *UpdateStatus) {
		switch {
		case !on && st.State != UpdateReady:
			st.State, st.Message = UpdateOff, u.offMessage()
		case on && st.State == UpdateOff:
			st.State, st.Message = UpdateIdle, "not checked yet"
		}
	})
	if on {
		select {
		case u.wake <- struct{}{}:
		default:
		}
	}
}

// setQuitHook registers how to close the window (nil: no window).
func (u *updater) setQuitHook(quit func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.quit = quit
}

func (u *updater) quitHook() func() {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.quit
}

func (u *updater) enabled() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.on && u.disabled == ""
}

// run checks when the setting turns on (which Reload does at start) and then
// every Interval, until ctx ends. A check in progress is cancelled with ctx;
// the binary is only ever replaced by a rename.
func (u *updater) run(ctx context.Context) {
	if u.disabled != "" {
		return
	}
	timer := time.NewTimer(u.cfg.Interval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-u.wake:
		case <-timer.C:
		}
		if u.enabled() {
			if _, err := u.Check(ctx); err != nil && ctx.Err() == nil {
				u.log.Warn("update check", "err", err)
			}
		}
		timer.Reset(u.cfg.Interval)
	}
}

// Check asks the release source for a newer release and installs it. It is
// the "check now" button; it works whatever the setting says, as long as this
// build has a release source. While a check runs, another returns the
// current status at once.
func (u *updater) Check(ctx context.Context) (UpdateStatus, error) {
	if u.disabled != "" {
		return u.Status(), fmt.Errorf("%w: %s", ErrUpdatesOff, u.disabled)
	}
	if !u.check.TryLock() {
		return u.Status(), nil // a check is running; its states follow as events
	}
	defer u.check.Unlock()
	if st := u.Status(); st.State == UpdateReady {
		return st, nil // installed already: one restart away
	}
	// The release source's client has no timeout of its own.
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	u.set(func(st *UpdateStatus) { st.State, st.Message, st.Error = UpdateChecking, "checking for updates", "" })
	fail := func(action string, err error) (UpdateStatus, error) {
		err = fmt.Errorf("%s: %w", action, err)
		return u.set(func(st *UpdateStatus) {
			st.State, st.Message, st.Error = UpdateFailed, "update failed; this version stays installed", err.Error()
			st.CheckedAt = time.Now()
		}), err
	}
	rel, found, err := u.up.DetectLatest(ctx, u.repo)
	if err != nil {
		return fail("check for updates", err)
	}
	current := semver.MustParse(stripV(u.version))
	if !found || !rel.GreaterThan(current.String()) {
		latest := u.version
		if found {
			latest = rel.Version()
		}
		return u.set(func(st *UpdateStatus) {
			st.State, st.Latest, st.CheckedAt = UpdateUpToDate, latest, time.Now()
			st.Message = "Longhaul is up to date"
		}), nil
	}
	u.set(func(st *UpdateStatus) {
		st.State, st.Latest = UpdateDownloading, rel.Version()
		st.Message = "downloading version " + rel.Version()
	})
	exe, err := u.executable()
	if err != nil {
		return fail("find the binary to update", err)
	}
	if err := u.install(ctx, rel, exe); err != nil {
		return fail("install version "+rel.Version(), err)
	}
	u.log.Info("update installed; restart to finish", "version", rel.Version(), "binary", exe)
	return u.set(func(st *UpdateStatus) {
		st.State, st.CheckedAt = UpdateReady, time.Now()
		st.Message = "version " + rel.Version() + " is installed: restart Longhaul to finish"
	}), nil
}

func (u *updater) executable() (string, error) {
	exe := u.cfg.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return "", err
		}
	}
	resolved, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return "", err
	}
	return resolved, nil
}

// install downloads, verifies and extracts rel, then puts it in place of exe.
// go-selfupdate swaps files with two renames (exe → .old, .new → exe), which
// leaves no binary at exe for a moment and does not sync the new file. On
// Unix the swap here is one rename of a synced file instead, so exe is always
// a whole binary, the old one or the new one. Windows cannot rename over a
// running executable: there the library's swap (with its rollback) is the way.
func (u *updater) install(ctx context.Context, rel *selfupdate.Release, exe string) error {
	if runtime.GOOS == "windows" {
		return u.up.UpdateTo(ctx, rel, exe)
	}
	info, err := os.Stat(exe)
	if err != nil {
		return err
	}
	staging, err := os.MkdirTemp(filepath.Dir(exe), ".longhaul-update-")
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%s is not writable by this user (installed by a package manager? update it there): %w", filepath.Dir(exe), err)
	}
	if err != nil {
		return fmt.Errorf("stage the update next to the binary: %w", err)
	}
	defer os.RemoveAll(staging) //nolint:errcheck // best effort; it holds nothing once renamed
	// The library replaces a file of the same name (it finds the binary in the
	// archive by that name): an empty placeholder in the staging folder.
	staged := filepath.Join(staging, filepath.Base(exe))
	if err := os.WriteFile(staged, nil, 0o700); err != nil {
		return err
	}
	if err := u.up.UpdateTo(ctx, rel, staged); err != nil {
		return err
	}
	if err := syncFile(staged, info.Mode().Perm()); err != nil {
		return fmt.Errorf("sync the new binary: %w", err)
	}
	if err := os.Rename(staged, exe); err != nil {
		return fmt.Errorf("put the new binary in place: %w", err)
	}
	if dir, err := os.Open(filepath.Dir(exe)); err == nil {
		dir.Sync()  //nolint:errcheck // durability of the rename is best effort
		dir.Close() //nolint:errcheck // read-only
	}
	return nil
}

// syncFile gives path the mode and flushes it to disk.
func syncFile(path string, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close() //nolint:errcheck // the chmod error is the one to report
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close() //nolint:errcheck // the sync error is the one to report
		return err
	}
	return f.Close()
}
