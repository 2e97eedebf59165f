//go:build !((dragonfly && cgo) || (freebsd && cgo) || linux || netbsd || openbsd)

package keychain

// checkBus: macOS and Windows keychains need no session bus.
func checkBus() error { return nil }
