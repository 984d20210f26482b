package server_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/server"
)

// A client that sends initialize, initialized and a call in one write,
// without waiting, gets an initialized session, whatever holds the
// first message up (a delay injected where every message passes, the
// session's context): go-sdk handles initialize and notifications one
// at a time, in order, and the stdio filter keeps the order, so
// initialized cannot overtake initialize. A client that cancels its
// initialize (MCP forbids it, but a client whose first-run initialize
// outlasts its timeout does it) gets one too: go-sdk answers a request
// cancelled before its handler starts without running it, which for
// initialize left the session uninitialized for good ("initialized
// before initialize", then every call refused). There a notification
// ahead of the initialize holds go-sdk's queue, so the cancellation
// always lands before the initialize runs.
func TestInitializeInOneWrite(t *testing.T) {
	const (
		initialize  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
		initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		list        = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
		roots       = `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`
		cancel      = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0,"reason":"timeout"}}`
	)
	for _, tc := range []struct {
		name  string
		lines []string
		reach int // of lines, those go-sdk reads: the filter drops a cancelled initialize's cancellation (ids.go)
	}{
		{"initialize held", []string{initialize, initialized, list}, 3},
		{"initialize cancelled while queued", []string{roots, initialize, cancel, initialized, list}, 4},
		{"again", []string{roots, initialize, cancel, initialized, list}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var once sync.Once
			held := make(chan struct{})
			reads := make(chan struct{}, 64)
			server.OnStdioRead(t, func() {
				select {
				case reads <- struct{}{}:
				default:
				}
			})
			own := &server.Own{Context: func(ctx context.Context, _ http.Header) context.Context {
				// The first message holds go-sdk's queue until its
				// reader has taken in every line after it: it asks
				// for a message once more than there are lines.
				once.Do(func() {
					close(held)
					for range tc.reach + 1 {
						select {
						case <-reads:
						case <-time.After(20 * time.Second):
							t.Error("go-sdk's reader did not take in the lines after the first while it was held")
							return
						}
					}
				})
				return ctx
			}}
			e := startEnvWith(t, envOptions{own: own})
			from, to := e.stdioPipes(t)
			lines := make(chan string, 10)
			go func() {
				sc := bufio.NewScanner(from)
				for sc.Scan() {
					if !strings.Contains(sc.Text(), `"method"`) {
						lines <- sc.Text()
					}
				}
				close(lines)
			}()
			// One write, as a client that does not wait would send them.
			_, _ = fmt.Fprint(to, strings.Join(tc.lines, "\n")+"\n")
			<-held
			next := func() string {
				t.Helper()
				select {
				case l := <-lines:
					return l
				case <-time.After(20 * time.Second):
					t.Fatal("no answer")
					return ""
				}
			}
			if got := next(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":0,"result":{`) {
				t.Errorf("initialize answered %.200s", got)
			}
			if got := next(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":1,"result":{"tools":`) {
				t.Errorf("tools/list after it answered %.200s", got)
			}
		})
	}
}
