//go:build linux

package store

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// On Linux the watch wakes on writes to the database's files, not on a clock: a setting another
// Store (another process, such as the CLI) writes is reported although no poll is due for an
// hour. Which files wake it: TestNamesDatabase.
func TestWatchWakesOnWritesToTheDatabase(t *testing.T) {
	app, path := openTemp(t)
	cli, _ := openAt(t, path)
	changes, stop, err := dbChanges(app.path)
	if err != nil {
		t.Fatalf("dbChanges: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	changed := make(chan struct{}, 16)
	polls := make(chan struct{}, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer stop()
		app.watchFiles(ctx, changes, 10*time.Millisecond, time.Hour, func() { changed <- struct{}{} }, func() { polls <- struct{}{} })
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	await := func(c chan struct{}, what string) {
		t.Helper()
		select {
		case <-c:
		case <-time.After(waitLimit):
			t.Fatalf("no %s within %v", what, waitLimit)
		}
	}
	await(polls, "first poll")
	await(changed, "report that the watch is established")

	if _, err := cli.SetSetting(context.Background(), "proxy.port", "9410"); err != nil {
		t.Fatal(err)
	}
	await(changed, "report of the setting another Store wrote")
	if got, err := app.GetSetting(context.Background(), "proxy.port"); err != nil || got != "9410" {
		t.Errorf("GetSetting(proxy.port) = %q, %v; want 9410", got, err)
	}
}

// namesDatabase reads the events of one inotify read: the database's own files, or a lost
// event, count; other names do not, wherever they are in the read.
func TestNamesDatabase(t *testing.T) {
	event := func(mask uint32, name string) []byte {
		n := (len(name) + 1 + 15) / 16 * 16 // NUL-padded, as the kernel aligns names
		b := make([]byte, unix.SizeofInotifyEvent+n)
		binary.NativeEndian.PutUint32(b[4:8], mask)
		binary.NativeEndian.PutUint32(b[12:16], uint32(n))
		copy(b[unix.SizeofInotifyEvent:], name)
		return b
	}
	cat := func(es ...[]byte) (b []byte) {
		for _, e := range es {
			b = append(b, e...)
		}
		return b
	}
	for _, c := range []struct {
		name   string
		events []byte
		want   bool
	}{
		{"the WAL", event(unix.IN_MODIFY, "longhaul.db-wal"), true},
		{"the database", event(unix.IN_MODIFY, "longhaul.db"), true},
		{"a rollback journal", event(unix.IN_CREATE, "longhaul.db-journal"), true},
		{"after other names", cat(event(unix.IN_MODIFY, "notes.txt"), event(unix.IN_MODIFY, "longhaul.db-wal")), true},
		{"lost events", event(unix.IN_Q_OVERFLOW, ""), true},
		{"other files", cat(event(unix.IN_MODIFY, "notes.txt"), event(unix.IN_MODIFY, "longhaul.db-shm"), event(unix.IN_MODIFY, "longhaul.db.bak")), false},
		{"a name with the database's as a prefix", event(unix.IN_MODIFY, "longhaul.db-wal2"), false},
		{"nothing", nil, false},
	} {
		if got := namesDatabase(c.events, "longhaul.db"); got != c.want {
			t.Errorf("%s: namesDatabase = %v; want %v", c.name, got, c.want)
		}
	}
}
