//go:build unix

package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The one-request part of the hostile mix (issue 39): arguments sized to
// take the server down (a grep context of 10^8 lines, a field list of a
// megabyte) and greps whose client hangs up instead of cancelling. Each
// must be answered, or its work ended, without the normal clients
// noticing; the idle CPU check at the end of the soak shows no abandoned
// work still running.

// oneRequestCounts is what that part did and met.
type oneRequestCounts struct {
	hugeContext, hugeContextRefused, hugeFields, hugeFieldsRefused, disconnected atomic.Int64
	firstUnexpected                                                              atomic.Value // string
}

func (o *oneRequestCounts) String() string {
	s := fmt.Sprintf("huge context: %d refused of %d; megabyte fields: %d refused of %d; %d greps abandoned by a closed connection",
		o.hugeContextRefused.Load(), o.hugeContext.Load(), o.hugeFieldsRefused.Load(), o.hugeFields.Load(), o.disconnected.Load())
	if v, ok := o.firstUnexpected.Load().(string); ok {
		s += "; first unexpected answer: " + v
	}
	return s
}

func (o *oneRequestCounts) unexpected(s string) {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	o.firstUnexpected.CompareAndSwap(nil, s)
}

// oneRequest runs the huge arguments and the hung-up greps until end, as
// agent "one-request", which owns a stored listing of its own (so its
// calls never take the normal clients' exploration slots).
func oneRequest(ctx context.Context, base string, end time.Time, o *oneRequestCounts) {
	c := mcp.NewClient(&mcp.Implementation{Name: "one-request", Version: "1"}, nil)
	hcl := &http.Client{Transport: header{"X-Scratchpad-Agent": "one-request"}}
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hcl}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak: one-request:", err)
		return
	}
	defer cs.Close()
	m := fileRe.FindStringSubmatch(call(ctx, cs, &stats{errs: map[string]int{}}, "a__listing", map[string]any{"n": 2000}))
	if m == nil {
		fmt.Fprintln(os.Stderr, "soak: one-request: the listing was not diverted")
		return
	}
	file := m[1]
	fields := strings.Repeat("a", 1<<20)
	for time.Now().Before(end) && ctx.Err() == nil {
		o.hugeContext.Add(1)
		if out := call(ctx, cs, &stats{errs: map[string]int{}}, "grep", map[string]any{"file": file, "pattern": "Running", "context": 100_000_000}); strings.Contains(out, "invalid_arguments") {
			o.hugeContextRefused.Add(1)
		} else {
			o.unexpected("grep context 1e8: " + out)
		}
		o.hugeFields.Add(1)
		if out := call(ctx, cs, &stats{errs: map[string]int{}}, "iterate_over", map[string]any{"file": file, "path": "$.items", "fields": fields}); strings.Contains(out, "invalid_arguments") {
			o.hugeFieldsRefused.Add(1)
		} else {
			o.unexpected("iterate_over 1 MiB fields: " + out)
		}
		if hangUpGrep(base, cs.ID(), file) {
			o.disconnected.Add(1)
		}
		time.Sleep(time.Second)
	}
}

// hangUpGrep sends a slow grep on the session's own connection and closes
// the connection 100 ms later without cancelling: the server must end
// the work itself.
func hangUpGrep(base, sid, file string) bool {
	addr := strings.TrimPrefix(base, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return false
	}
	defer conn.Close()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"grep","arguments":{"file":%q,"pattern":"[^\\n]{0,1000}[^\\n]{0,1000}[JQ]"}}}`, time.Now().UnixNano(), file)
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-11-25\r\nX-Scratchpad-Agent: one-request\r\nContent-Length: %d\r\n\r\n%s", addr, sid, len(body), body)
	_ = conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	_, _ = bufio.NewReader(conn).ReadString('\n')
	return true
}
