// Package wait is the one way tests under app/ wait for something to happen:
// poll a condition until it holds, with a deadline generous enough for a busy
// machine. A passing wait returns as soon as the condition holds, so the
// deadline costs nothing; it only bounds how long a failure takes to report.
// Use it instead of sleeping and then asserting.
package wait

import (
	"testing"
	"time"
)

// Timeout is how long Until waits before it fails the test. Pass it too to
// helpers that take a deadline of their own (traytest's WaitMenu).
const Timeout = 30 * time.Second

// poll is how often Until checks: often enough that a wait adds no visible
// time to a test, rarely enough not to load a busy machine.
const poll = 10 * time.Millisecond

// Until calls cond until it returns true, and fails the test with what (a
// description of the condition) when it has not within Timeout.
func Until(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not true within %v", what, Timeout)
		}
		time.Sleep(poll)
	}
}

// Receive returns the next value from ch, and fails the test with what when
// none arrives within Timeout. ok is false when ch was closed.
func Receive[T any](tb testing.TB, what string, ch <-chan T) (v T, ok bool) {
	tb.Helper()
	timer := time.NewTimer(Timeout)
	defer timer.Stop()
	select {
	case v, ok = <-ch:
		return v, ok
	case <-timer.C:
		tb.Fatalf("%s: nothing within %v", what, Timeout)
	}
	return v, false
}
