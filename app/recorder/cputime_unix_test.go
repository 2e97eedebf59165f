//go:build unix

package recorder

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time this process has used (user and system, every thread): on a
// machine shared with other work it varies less than the wall time a benchmark reports.
func processCPU(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
