package recorder

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// backgroundThread puts the calling goroutine on an OS thread of its own at the lowest CPU
// priority (nice 19), for the rest of its life: the thread ends with the goroutine, so no
// other goroutine ever runs at that priority. History is written behind the requests it
// records; when the CPU is short (a burst of small requests on two cores), the kernel gives
// it to the requests first and the writer catches up after, its queue bounded (Options).
// It returns false when the priority could not be lowered.
func backgroundThread() bool {
	runtime.LockOSThread()
	return unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 19) == nil
}

// threadNice returns the calling thread's nice value (for tests).
func threadNice() (int, error) {
	// getpriority returns 20 - nice on Linux, so that it is never negative.
	p, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
	return 20 - p, err
}
