package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testflood"
)

// floodScale is the flood's sockets, [http] max_connections and the
// clients that come during it: small by default (CI), the issue's
// (4,100 sockets against 4,096, 46 clients) with
// SCRATCHPAD_FLOOD=4100,4096,46.
func floodScale(t *testing.T) (sockets, max, clients int) {
	sockets, max, clients = 80, 64, 12
	if v := os.Getenv("SCRATCHPAD_FLOOD"); v != "" {
		f := strings.Split(v, ",")
		var err error
		if len(f) == 3 {
			if sockets, err = strconv.Atoi(f[0]); err == nil {
				if max, err = strconv.Atoi(f[1]); err == nil {
					clients, err = strconv.Atoi(f[2])
				}
			}
		}
		if len(f) != 3 || err != nil {
			t.Fatalf("SCRATCHPAD_FLOOD=%q: want sockets,max_connections,clients", v)
		}
	}
	return sockets, max, clients
}

// An unauthenticated flood cannot lock owners out ([http]
// max_connections with tokens): sockets that never send a byte, more
// than max_connections of them, each reopened as soon as the server
// closes it, while owners' clients connect (new connections each),
// initialize and call a tool: every one of them is served. On the code
// before the unproven share, nearly all got 503.
func TestUnauthenticatedFloodLocksNoOneOut(t *testing.T) {
	sockets, max, clients := floodScale(t)
	cfg, _, tok := tenancyConfig(t, fmt.Sprintf("max_connections = %d\n", max), "alice")
	addr, _ := serveInProcess(t, cfg)
	stop := testflood.Silent(addr, sockets)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	time.Sleep(500 * time.Millisecond) // the flood takes what it can before the clients come
	var served, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	work := make(chan struct{})
	start := time.Now()
	for range min(clients, 8) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				if err := ownerCall(addr, tok["alice"]); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				served.Add(1)
			}
		}()
	}
	for range clients {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	took := time.Since(start)
	opened := stop()
	stopped = true
	t.Logf("%d of %d owners' clients served (initialize + tools/call, %s in all) under a flood of %d silent sockets against max_connections = %d (%d opened)",
		served.Load(), clients, took.Round(time.Millisecond), sockets, max, opened)
	if failed.Load() > 0 {
		t.Errorf("%d of %d owners' clients failed, the first with: %v", failed.Load(), clients, firstErr.Load())
	}
}

// ownerCall is one owner's client: on connections of its own, with its
// token, it initializes, lists the tools and calls one.
func ownerCall(addr, token string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: headerTransport{map[string]string{"Authorization": "Bearer " + token}, tr}}
	c := mcp.NewClient(&mcp.Implementation{Name: "owner", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_scratchpad", Arguments: map[string]any{}})
	if err != nil {
		return fmt.Errorf("tools/call: %w", err)
	}
	if res.IsError {
		return fmt.Errorf("tools/call: %s", text(res))
	}
	return nil
}
