//go:build linux

package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// dbChanges reports, on the returned channel (one value per burst), writes by any process to
// the database at path or its WAL, as the kernel sees them (inotify on their directory). A
// commit always writes the WAL; a read writes nothing there (the shared-memory index is
// mapped, and mapped writes raise no event), so an idle app gets no value at all. stop ends
// the watch and waits for its reader.
func dbChanges(path string) (changes <-chan struct{}, stop func(), err error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, nil, fmt.Errorf("inotify: %w", err)
	}
	const events = unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_DELETE
	if _, err := unix.InotifyAddWatch(fd, filepath.Dir(path), events); err != nil {
		unix.Close(fd) //nolint:errcheck // the error that matters is the watch's
		return nil, nil, fmt.Errorf("inotify %s: %w", filepath.Dir(path), err)
	}
	// Non-blocking, so the runtime's poller waits for it (no thread parked in read) and Close
	// ends a pending Read.
	f := os.NewFile(uintptr(fd), "inotify")
	ch := make(chan struct{}, 1)
	done := make(chan struct{})
	base := filepath.Base(path)
	go func() {
		defer close(done)
		buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
		for {
			n, err := f.Read(buf)
			if err != nil {
				return // closed by stop
			}
			if namesDatabase(buf[:n], base) {
				select {
				case ch <- struct{}{}:
				default: // one is pending: this write joins its burst
				}
			}
		}
	}()
	return ch, func() { f.Close(); <-done }, nil //nolint:errcheck // closing a notification fd
}

// namesDatabase reports whether a read of inotify events holds one for the database named
// base or its WAL or rollback journal, or says events were lost (the queue overflowed).
func namesDatabase(events []byte, base string) bool {
	for len(events) >= unix.SizeofInotifyEvent {
		mask := binary.NativeEndian.Uint32(events[4:8])
		n := int(binary.NativeEndian.Uint32(events[12:16]))
		if mask&unix.IN_Q_OVERFLOW != 0 {
			return true
		}
		end := min(unix.SizeofInotifyEvent+n, len(events))
		name := string(bytes.TrimRight(events[unix.SizeofInotifyEvent:end], "\x00"))
		if name == base || name == base+"-wal" || name == base+"-journal" {
			return true
		}
		events = events[end:]
	}
	return false
}
