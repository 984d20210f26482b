// Package testwait is the tests' one way to wait for a state that comes
// about asynchronously (a process has started, a session is gone, a file is
// there): [For] polls a condition until it holds and fails the test, naming
// what it waited for, when it never does.
//
// A test that must show that something did not happen waits for the event
// or state that proves it instead (an answer that came after it would have,
// a counter that stayed put at a point that is reached), never for a
// stretch of time to pass.
package testwait

import (
	"testing"
	"time"
)

// Timeout bounds every wait: generous, because the machines tests run on
// are shared and slow at times; a condition that holds returns at once.
const Timeout = 30 * time.Second

// interval is how often a condition is polled.
const interval = 10 * time.Millisecond

// For polls cond until it returns true, or fails tb after [Timeout] with
// "timed out waiting for {what}".
func For(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	if !Until(Timeout, cond) {
		tb.Fatalf("timed out waiting for %s", what)
	}
}

// Until polls cond until it returns true (and reports true) or d passes
// (and reports false), for a caller that handles the failure itself.
func Until(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
	return true
}
