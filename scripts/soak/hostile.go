//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The hostile mix runs next to the normal clients (issue 26): clients
// that stall their GET stream while asking for every log message (and
// one that floods them with log messages), bursts of refused sockets, a
// session flood up to the server's cap, and greps with a slow regexp
// cancelled mid-run. The normal clients must see no errors of their own,
// and descriptors, goroutines and memory stay within the bounds run
// states.

// hostileSessionsCap is [http] max_sessions in the soak's config: the
// flood meets it while the normal clients keep theirs.
const hostileSessionsCap = 200

// maxFDGrowth bounds the proxy's open descriptors between start and end.
const maxFDGrowth = 64

// hostileCounts is what the hostile mix did and met.
type hostileCounts struct {
	stalled, refusedSockets, refusedOpen, floodSessions, flood429, greps, grepsCancelled atomic.Int64
}

func (h *hostileCounts) String() string {
	return fmt.Sprintf("%d stalled readers; %d refused sockets (%d left open); session flood: %d sessions made, %d answered 429; %d slow greps cancelled of %d",
		h.stalled.Load(), h.refusedSockets.Load(), h.refusedOpen.Load(), h.floodSessions.Load(), h.flood429.Load(), h.grepsCancelled.Load(), h.greps.Load())
}

// hostile runs the mix until end.
func hostile(ctx context.Context, base string, end time.Time, file string, hc *hostileCounts) *sync.WaitGroup {
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() { stall(ctx, base, i, hc) })
	}
	wg.Go(func() { floodLogs(ctx, base, end) })
	wg.Go(func() {
		for time.Now().Before(end) && ctx.Err() == nil {
			refusedBurst(base, 100, hc)
			time.Sleep(2 * time.Second)
		}
	})
	wg.Go(func() {
		for time.Now().Before(end) && ctx.Err() == nil {
			sessionFlood(base, hc)
			time.Sleep(5 * time.Second)
		}
	})
	wg.Go(func() { cancelledGreps(ctx, base, end, file, hc) })
	return &wg
}

// rawPost sends one JSON-RPC message and returns the session id and status.
func rawPost(base, sid, body string) (string, int, error) {
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("X-Scratchpad-Agent", "hostile")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Header.Get("Mcp-Session-Id"), resp.StatusCode, nil
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}`

// stall opens a session that asks for every log message and never reads
// its GET stream.
func stall(ctx context.Context, base string, i int, hc *hostileCounts) {
	sid, _, err := rawPost(base, "", initBody)
	if err != nil || sid == "" {
		return
	}
	_, _, _ = rawPost(base, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, _, _ = rawPost(base, sid, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		return
	}
	defer conn.Close()
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	fmt.Fprintf(conn, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-11-25\r\nX-Scratchpad-Agent: stalled-%d\r\n\r\n", strings.TrimPrefix(base, "http://"), sid, i)
	hc.stalled.Add(1)
	<-ctx.Done() // never read
}

// floodLogs has an upstream send log messages every second: what the
// stalled readers are sent.
func floodLogs(ctx context.Context, base string, end time.Time) {
	c := mcp.NewClient(&mcp.Implementation{Name: "flooder", Version: "1"}, nil)
	hcl := &http.Client{Transport: header{"X-Scratchpad-Agent": "flooder"}}
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hcl}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return
	}
	defer cs.Close()
	for time.Now().Before(end) && ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, _ = cs.CallTool(cctx, &mcp.CallToolParams{Name: "a__log_flood", Arguments: map[string]any{"n": 500, "size": 1000}})
		cancel()
		time.Sleep(time.Second)
	}
}

// refusedBurst opens n sockets whose request is refused (a rebound Host)
// and counts those the server left open.
func refusedBurst(base string, n int, hc *hostileCounts) {
	addr := strings.TrimPrefix(base, "http://")
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
			hc.refusedSockets.Add(1)
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.Copy(io.Discard, conn); err != nil {
				hc.refusedOpen.Add(1) // the deadline passed: the server kept it open
			}
		})
	}
	wg.Wait()
}

// sessionFlood makes sessions (never ended) until the server answers 429.
func sessionFlood(base string, hc *hostileCounts) {
	for range hostileSessionsCap + 20 {
		_, status, err := rawPost(base, "", initBody)
		switch {
		case err != nil:
			return
		case status == http.StatusTooManyRequests:
			hc.flood429.Add(1)
			return
		case status == http.StatusOK:
			hc.floodSessions.Add(1)
		}
	}
}

// cancelledGreps runs a grep whose regexp is slow on the stored listing
// and cancels it after 50 ms, again and again.
func cancelledGreps(ctx context.Context, base string, end time.Time, file string, hc *hostileCounts) {
	if file == "" {
		return
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "grepper", Version: "1"}, nil)
	// The stored listing is in the soak-0 agent's scratchpad.
	hcl := &http.Client{Transport: header{"X-Scratchpad-Agent": "soak-0"}}
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hcl}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak: grepper:", err)
		return
	}
	defer cs.Close()
	for time.Now().Before(end) && ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		hc.greps.Add(1)
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "grep", Arguments: map[string]any{"file": file, "pattern": `[^\n]{0,1000}[^\n]{0,1000}[JQ]`}})
		cancel()
		if err != nil {
			hc.grepsCancelled.Add(1)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// openFDs counts the proxy's open descriptors.
func openFDs(pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	return len(ents)
}
