package server

import (
	"net/http"
	"testing"
)

// OnStdioRead has f called each time go-sdk asks a stdio connection for
// its next message, until t ends.
func OnStdioRead(t testing.TB, f func()) {
	stdioReading.Store(&f)
	t.Cleanup(func() { stdioReading.Store(nil) })
}

// OnHTTPPush has f called by each POST carrying requests just before its
// messages are handed to the session, until t ends.
func OnHTTPPush(t testing.TB, f func(*http.Request)) {
	httpPushing.Store(&f)
	t.Cleanup(func() { httpPushing.Store(nil) })
}
