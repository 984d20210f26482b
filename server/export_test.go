package server

import "testing"

// OnStdioRead has f called each time go-sdk asks a stdio connection for
// its next message, until t ends.
func OnStdioRead(t testing.TB, f func()) {
	stdioReading.Store(&f)
	t.Cleanup(func() { stdioReading.Store(nil) })
}
