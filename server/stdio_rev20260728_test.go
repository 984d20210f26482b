package server_test

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"time"
)

// stdioLines writes lines to a stdio connection of e's server and reads
// its answers.
type stdioLines struct {
	t   testing.TB
	w   io.Writer
	out chan string
}

func newStdioLines(t testing.TB, e *env) *stdioLines {
	from, to := e.stdioPipes(t)
	s := &stdioLines{t: t, w: to, out: make(chan string, 64)}
	go func() {
		sc := bufio.NewScanner(from)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			s.out <- sc.Text()
		}
		close(s.out)
	}()
	return s
}

func (s *stdioLines) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.w, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// next is the next line holding want.
func (s *stdioLines) next(want string) string {
	s.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-s.out:
			if !ok {
				s.t.Fatalf("connection closed waiting for %q", want)
			}
			if strings.Contains(l, want) {
				return l
			}
		case <-deadline:
			s.t.Fatalf("no line with %q", want)
		}
	}
}

// TestStdioModern: over stdio a 2026-07-28 client discovers, lists and
// calls with no initialize; answers carry its ids and the 2026 stamps.
func TestStdioModern(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	s := newStdioLines(t, e)
	s.send(modernBody(1, "server/discover", ""))
	if l := s.next(`"id":1`); !strings.Contains(l, `"supportedVersions":["2026-07-28"`) || !strings.Contains(l, `"resultType":"complete"`) {
		t.Errorf("discover: %s", l)
	}
	s.send(modernBody(2, "tools/list", ""))
	if l := s.next(`"id":2`); !strings.Contains(l, `"echo"`) || !strings.Contains(l, `"ttlMs":`) || !strings.Contains(l, `"cacheScope":"private"`) {
		t.Errorf("tools/list: %s", l)
	}
	s.send(`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},` + envelope("") + `}}`)
	if l := s.next(`"id":"c"`); !strings.Contains(l, "hello") {
		t.Errorf("tools/call: %s", l)
	}
	// The connection speaks 2026-07-28 now: initialize is refused.
	s.send(`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if l := s.next(`"id":3`); !strings.Contains(l, `-32600`) || !strings.Contains(l, "speaks MCP 2026-07-28") {
		t.Errorf("initialize after 2026 requests: %s", l)
	}
	// A malformed envelope is refused with its code.
	s.send(`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	if l := s.next(`"id":4`); !strings.Contains(l, `-32602`) {
		t.Errorf("no capabilities: %s", l)
	}
	s.send(modernBody(5, "ping", ""))
	if l := s.next(`"id":5`); !strings.Contains(l, `-32601`) {
		t.Errorf("ping: %s", l)
	}
	s.send("[" + modernBody(6, "tools/list", "") + "]")
	if l := s.next(`batches are not part`); !strings.Contains(l, `-32600`) {
		t.Errorf("batch: %s", l)
	}
}

// TestStdioEraLock: a connection that initialized refuses 2026-07-28
// requests (server/discover before it is served: a client may probe).
func TestStdioEraLock(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	s := newStdioLines(t, e)
	s.send(modernBody(1, "server/discover", ""))
	s.next(`"id":1`)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if l := s.next(`"id":2`); !strings.Contains(l, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize after a probe: %s", l)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(modernBody(3, "tools/list", ""))
	if l := s.next(`"id":3`); !strings.Contains(l, `-32600`) || !strings.Contains(l, "session of MCP 2025-11-25") {
		t.Errorf("2026 request on a 2025 session: %s", l)
	}
	s.send(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	if l := s.next(`"id":4`); !strings.Contains(l, `"echo"`) {
		t.Errorf("the session's own tools/list: %s", l)
	}
}

// TestStdioModernCancel: notifications/cancelled naming a 2026-07-28
// request in flight cancels it.
func TestStdioModernCancel(t *testing.T) {
	own, started, cancelled := blockingTool()
	e := startEnvWith(t, envOptions{own: own})
	s := newStdioLines(t, e)
	s.send(modernBody(9, "tools/call", `"name":"block"`))
	<-started
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`)
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("not cancelled")
	}
}
