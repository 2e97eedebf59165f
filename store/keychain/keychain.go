// Package keychain keeps secrets in the operating system's credential store: the macOS
// Keychain, the Windows Credential Manager, or a Secret Service (GNOME Keyring, KWallet) on
// the Linux session bus, through github.com/zalando/go-keyring. The store decides what to keep
// here (store.Keychain); this package only talks to the OS.
package keychain

import (
	"errors"
	"fmt"
	"time"

	"github.com/zalando/go-keyring"
)

// ErrNotFound is returned (wrapped) when the keychain has no entry under a name.
var ErrNotFound = errors.New("keychain: no such entry")

// ErrTimeout is returned when the OS keychain did not answer in time. A Secret Service that
// wants to show an unlock prompt nobody can see would otherwise block forever.
var ErrTimeout = errors.New("keychain: no answer")

// ErrNoSessionBus is returned on Linux and the BSDs when no session bus is known. go-keyring's
// DBus library would then "autolaunch" one (dbus-launch): a session bus and a keyring daemon
// that outlive the process, one more with each run — a headless server must get "no keychain"
// instead.
var ErrNoSessionBus = errors.New("keychain: no session bus (DBUS_SESSION_BUS_ADDRESS is unset)")

// OS is the operating system's keychain. Entries live under Service, named by the caller.
type OS struct {
	// Service groups Longhaul's entries ("longhaul" if empty).
	Service string
	// Timeout bounds each call (10 s if zero).
	Timeout time.Duration
}

func (k OS) service() string {
	if k.Service == "" {
		return "longhaul"
	}
	return k.Service
}

// Set stores secret under name, replacing an entry of that name.
func (k OS) Set(name, secret string) error {
	_, err := k.call(func() (string, error) { return "", keyring.Set(k.service(), name, secret) })
	if err != nil {
		return fmt.Errorf("keychain: store %s: %w", name, err)
	}
	return nil
}

// Get returns the secret stored under name.
func (k OS) Get(name string) (string, error) {
	v, err := k.call(func() (string, error) { return keyring.Get(k.service(), name) })
	if err != nil {
		return "", fmt.Errorf("keychain: read %s: %w", name, err)
	}
	return v, nil
}

// Delete removes the entry under name; a missing entry is not an error.
func (k OS) Delete(name string) error {
	_, err := k.call(func() (string, error) { return "", keyring.Delete(k.service(), name) })
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("keychain: delete %s: %w", name, err)
	}
	return nil
}

// call runs one go-keyring call with a deadline. go-keyring takes no context, so on timeout
// the call's goroutine is left to finish on its own when the OS answers or the bus connection
// drops; the caller is not kept waiting.
func (k OS) call(fn func() (string, error)) (string, error) {
	if err := checkBus(); err != nil {
		return "", err
	}
	timeout := k.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	type result struct {
		v   string
		err error
	}
	done := make(chan result, 1) // buffered: a late answer never blocks the goroutine
	go func() {
		v, err := fn()
		if errors.Is(err, keyring.ErrNotFound) {
			err = ErrNotFound
		}
		done <- result{v, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.v, r.err
	case <-t.C:
		return "", ErrTimeout
	}
}
