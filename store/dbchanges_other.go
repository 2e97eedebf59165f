//go:build !linux

package store

import "errors"

// dbChanges: file notifications are used on Linux only (dbchanges_linux.go); elsewhere Watch
// polls.
func dbChanges(string) (<-chan struct{}, func(), error) {
	return nil, nil, errors.ErrUnsupported
}
