//go:build !linux

package recorder

import "runtime"

// backgroundThread locks the writer to its own thread; lowering that thread's priority is
// only done on Linux (priority_linux.go).
func backgroundThread() bool {
	runtime.LockOSThread()
	return false
}

func threadNice() (int, error) { return 0, nil }
