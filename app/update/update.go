// Package update is self-update: it asks a GitHub release source for a newer
// release, installs it in place of the binary (verified against checksums.txt
// and, when a key is built in, its signature) and restarts into it when the
// user asks. The app turns it on and off with the app.check_updates setting.
package update

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/creativeprojects/go-selfupdate"
)

// Config is the release source, built into the binary (main.go's
// -ldflags -X variables). The zero value turns updates off.
type Config struct {
	// Repo is the GitHub repository whose releases carry the builds, "owner/name".
	// Empty: updates are off.
	Repo string
	// APIURL is the GitHub API base for a GitHub Enterprise server (or a test
	// server), e.g. "https://git.example.com/api/v3/". Empty: api.github.com.
	APIURL string
	// PublicKey is a PEM ECDSA public key (or a certificate holding one; either
	// may be base64-encoded) that signs checksums.txt: with it, a release must
	// carry checksums.txt.sig (ASN.1 signature of the file's SHA-256).
	// Empty: checksums.txt alone is checked.
	PublicKey string
	// Executable is the file an update replaces. Empty: the running binary.
	Executable string
	// Interval between automatic checks. Zero: a day.
	Interval time.Duration
}

// Options are the Updater's optional collaborators.
type Options struct {
	Logger *slog.Logger // nil: discard
	// OnChange is told every new Status (the app publishes it to the UI).
	// It runs on the goroutine that changed the state; nil: nobody is told.
	OnChange func(Status)
}

// States of Status.State.
const (
	Off         = "off"         // no release source built in, a development build, or the setting is off
	Idle        = "idle"        // not checked yet
	Checking    = "checking"    // asking the release source
	UpToDate    = "up-to-date"  // the latest release is this one
	Downloading = "downloading" // a newer release is being downloaded, verified and installed
	Ready       = "ready"       // installed; restart to finish
	Failed      = "error"       // the last check or install failed; the binary is unchanged
)

// Status is what the UI shows about self-update.
type Status struct {
	State     string    `json:"state"`
	Message   string    `json:"message"`
	Current   string    `json:"current"`
	Latest    string    `json:"latest,omitempty"`
	Source    string    `json:"source,omitempty"` // owner/name
	Signed    bool      `json:"signed"`           // checksums.txt must carry a valid signature
	CheckedAt time.Time `json:"checkedAt,omitempty,omitzero" ts_type:"string"`
	Error     string    `json:"error,omitempty"`
}

// checkTimeout bounds a whole check, download included.
const checkTimeout = 15 * time.Minute

// ErrOff is returned by a manual check when updates are not possible in this build.
var ErrOff = errors.New("updates are off")

// Updater checks for releases on start and every Interval while the
// app.check_updates setting is on, and installs a newer one in place of the
// binary: downloaded, verified (checksums.txt, and its signature when a key is
// built in), extracted, written next to the binary and renamed over it, so the
// binary is either the old one or the new one, never a mix. The running
// process keeps running the old code until it restarts (restart.go).
type Updater struct {
	cfg      Config
	version  string
	log      *slog.Logger
	onChange func(Status)
	disabled string // why updates can never run in this build; "" when they can

	up   *selfupdate.Updater
	repo selfupdate.Repository

	check sync.Mutex // one check at a time
	mu    sync.Mutex
	st    Status
	on    bool          // the setting
	wake  chan struct{} // the setting turned on
	quit  func()        // closes the window (Restart); nil without one

	restart atomic.Bool // Restart was asked: start again once the window has closed
}

// New returns an Updater for the running binary's version; it is off until
// SetEnabled(true), and checks only while Run runs.
func New(cfg Config, version string, opts Options) *Updater {
	if cfg.Interval <= 0 {
		cfg.Interval = 24 * time.Hour
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	u := &Updater{cfg: cfg, version: version, log: log, onChange: opts.OnChange, wake: make(chan struct{}, 1)}
	u.st = Status{State: Off, Current: version, Source: cfg.Repo}
	if err := u.configure(); err != nil {
		u.disabled = err.Error()
	}
	u.st.Message = u.offMessage()
	return u
}

func (u *Updater) configure() error {
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

func (u *Updater) offMessage() string {
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
func (u *Updater) Status() Status {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.st
}

func (u *Updater) set(change func(*Status)) Status {
	u.mu.Lock()
	change(&u.st)
	st := u.st
	u.mu.Unlock()
	if u.onChange != nil {
		u.onChange(st)
	}
	return st
}

// SetEnabled applies the app.check_updates setting; turning it on checks soon.
func (u *Updater) SetEnabled(on bool) {
	u.mu.Lock()
	was := u.on
	u.on = on
	u.mu.Unlock()
	if on == was || u.disabled != "" {
		return
	}
	u.set(func(st *Status) {
		switch {
		case !on && st.State != Ready:
			st.State, st.Message = Off, u.offMessage()
		case on && st.State == Off:
			st.State, st.Message = Idle, "not checked yet"
		}
	})
	if on {
		select {
		case u.wake <- struct{}{}:
		default:
		}
	}
}

func (u *Updater) enabled() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.on && u.disabled == ""
}

// Run checks when the setting turns on (which the app's first settings load
// does at start) and then every Interval, until ctx ends. A check in progress
// is cancelled with ctx; the binary is only ever replaced by a rename.
func (u *Updater) Run(ctx context.Context) { u.run(ctx, nil, nil) }

// run is Run with its steps visible to tests: ticks stand in for the
// interval (nil: a timer of Config.Interval), and turned, when not nil, is
// told each time the loop has handled a wake-up or a tick, check included.
func (u *Updater) run(ctx context.Context, ticks <-chan time.Time, turned chan<- struct{}) {
	if u.disabled != "" {
		return
	}
	var timer *time.Timer
	if ticks == nil {
		timer = time.NewTimer(u.cfg.Interval)
		defer timer.Stop()
		ticks = timer.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-u.wake:
		case <-ticks:
		}
		if u.enabled() {
			if _, err := u.Check(ctx); err != nil && ctx.Err() == nil {
				u.log.Warn("update check", "err", err)
			}
		}
		if timer != nil {
			timer.Reset(u.cfg.Interval)
		}
		if turned != nil {
			turned <- struct{}{}
		}
	}
}

// Check asks the release source for a newer release and installs it. It is
// the "check now" button; it works whatever the setting says, as long as this
// build has a release source. While a check runs, another returns the
// current status at once.
func (u *Updater) Check(ctx context.Context) (Status, error) {
	if u.disabled != "" {
		return u.Status(), fmt.Errorf("%w: %s", ErrOff, u.disabled)
	}
	if !u.check.TryLock() {
		return u.Status(), nil // a check is running; its states follow through OnChange
	}
	defer u.check.Unlock()
	if st := u.Status(); st.State == Ready {
		return st, nil // installed already: one restart away
	}
	// The release source's client has no timeout of its own.
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	u.set(func(st *Status) { st.State, st.Message, st.Error = Checking, "checking for updates", "" })
	fail := func(action string, err error) (Status, error) {
		err = fmt.Errorf("%s: %w", action, err)
		return u.set(func(st *Status) {
			st.State, st.Message, st.Error = Failed, "update failed; this version stays installed", err.Error()
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
		return u.set(func(st *Status) {
			st.State, st.Latest, st.CheckedAt = UpToDate, latest, time.Now()
			st.Message = "Longhaul is up to date"
		}), nil
	}
	u.set(func(st *Status) {
		st.State, st.Latest = Downloading, rel.Version()
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
	return u.set(func(st *Status) {
		st.State, st.CheckedAt = Ready, time.Now()
		st.Message = "version " + rel.Version() + " is installed: restart Longhaul to finish"
	}), nil
}
