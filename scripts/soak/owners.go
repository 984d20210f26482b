//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The owners' part of the hostile mix (issue 39) runs on a second proxy
// with bearer tokens: two owners call a shared upstream (shared = true)
// and one of their own, while a flood of unauthenticated sockets holds
// more than max_connections and reopens each one the server closes.
// Every owner must list and call the shared server's tools, and fresh
// authenticated connections must get through the flood.

// ownersMaxConnections is [http] max_connections of the owners' proxy:
// small, so the flood passes it at once.
const ownersMaxConnections = 256

// ownerTokens are the owners' bearer tokens.
var ownerTokens = map[string]string{"alice": "soak-alice-token-0123456789", "bob": "soak-bob-token-0123456789"}

// ownersCounts is what the owners' part did and met.
type ownersCounts struct {
	calls, failed, sharedListed, sharedMissing atomic.Int64
	fresh, freshOK                             atomic.Int64
	floodOpen, floodReopened                   atomic.Int64
	firstFailure                               atomic.Value // string
}

func (o *ownersCounts) String() string {
	s := fmt.Sprintf("two owners: %d calls, %d failed; shared tools listed %d times, missing %d; unauthenticated flood of %d sockets (%d reopened): %d of %d fresh authenticated connections answered",
		o.calls.Load(), o.failed.Load(), o.sharedListed.Load(), o.sharedMissing.Load(), o.floodOpen.Load(), o.floodReopened.Load(), o.freshOK.Load(), o.fresh.Load())
	if v, ok := o.firstFailure.Load().(string); ok {
		s += "; first failure: " + v
	}
	return s
}

func (o *ownersCounts) fail(s string) {
	o.failed.Add(1)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	o.firstFailure.CompareAndSwap(nil, s)
}

// ownersProxy starts the second proxy and returns its base URL and pid.
// Besides its stdio upstreams it has a 2025 one over streamable HTTP
// that asks its client mid-call (modern.go).
func ownersProxy(ctx context.Context, bin, self, dir string) (*exec.Cmd, string, error) {
	asking, err := askingUpstream()
	if err != nil {
		return nil, "", err
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "memory_dir = %q\n\n[http]\nmax_connections = %d\n", filepath.Join(dir, "owners-mem"), ownersMaxConnections)
	for owner, tok := range ownerTokens {
		fmt.Fprintf(&cfg, "\n[[http.tokens]]\nowner = %q\ntoken = %q\n", owner, tok)
	}
	fmt.Fprintf(&cfg, "\n[mcp.servers.s]\ncmd = [%q]\nenv = { SCRATCHPAD_TESTUPSTREAM = \"stdio\" }\nprefix = \"s\"\nshared = true\n", self)
	fmt.Fprintf(&cfg, "\n[mcp.servers.o]\ncmd = [%q]\nenv = { SCRATCHPAD_TESTUPSTREAM = \"stdio\" }\nprefix = \"o\"\n", self)
	fmt.Fprintf(&cfg, "\n[mcp.servers.h]\ntransport = \"http_streamable\"\nurl = %q\nprotocol = \"2025-11-25\"\nprefix = \"h\"\n", asking)
	path := filepath.Join(dir, "owners.toml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o600); err != nil {
		return nil, "", err
	}
	return startProxy(ctx, bin, path)
}

// owners runs the two owners' clients, the flood and the fresh
// connections until end.
func owners(ctx context.Context, base string, end time.Time, o *ownersCounts) *sync.WaitGroup {
	var wg sync.WaitGroup
	for owner, tok := range ownerTokens {
		wg.Go(func() { ownerClient(ctx, base, owner, tok, end, o) })
	}
	wg.Go(func() { unauthFlood(ctx, base, end, o) })
	wg.Go(func() {
		time.Sleep(2 * time.Second) // the flood first
		for time.Now().Before(end) && ctx.Err() == nil {
			freshConnection(ctx, base, o)
			time.Sleep(500 * time.Millisecond)
		}
	})
	return &wg
}

// ownerClient lists and calls the shared server's tools and its own.
func ownerClient(ctx context.Context, base, owner, tok string, end time.Time, o *ownersCounts) {
	c := mcp.NewClient(&mcp.Implementation{Name: "owner-" + owner, Version: "1"}, nil)
	hcl := &http.Client{Transport: header{"Authorization": "Bearer " + tok}}
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hcl}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		o.fail(owner + ": connect: " + err.Error())
		return
	}
	defer cs.Close()
	waitTools(ctx, cs, "s__words")
	waitTools(ctx, cs, "o__words")
	for time.Now().Before(end) && ctx.Err() == nil {
		res, err := cs.ListTools(ctx, nil)
		listed := false
		if err == nil {
			for _, t := range res.Tools {
				listed = listed || t.Name == "s__words"
			}
		}
		if listed {
			o.sharedListed.Add(1)
		} else {
			o.sharedMissing.Add(1)
		}
		for _, name := range []string{"s__words", "o__words"} {
			o.calls.Add(1)
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			r, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"n": 20}})
			cancel()
			switch {
			case err != nil:
				o.fail(owner + " " + name + ": " + err.Error())
			case r.IsError:
				o.fail(owner + " " + name + ": tool error")
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// unauthFlood holds more silent sockets than max_connections and opens a
// new one for each the server closes.
func unauthFlood(ctx context.Context, base string, end time.Time, o *ownersCounts) {
	addr := strings.TrimPrefix(base, "http://")
	var wg sync.WaitGroup
	for i := range ownersMaxConnections + 64 {
		wg.Go(func() {
			for n := 0; time.Now().Before(end) && ctx.Err() == nil; n++ {
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					time.Sleep(50 * time.Millisecond)
					continue
				}
				if n == 0 {
					o.floodOpen.Add(1)
				} else {
					o.floodReopened.Add(1)
				}
				_ = conn.SetReadDeadline(end)
				_, _ = io.Copy(io.Discard, conn) // until the server closes it
				conn.Close()
				time.Sleep(20 * time.Millisecond) // bounded: at most 50 reopens a second per socket
			}
		})
		if i%32 == 31 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	wg.Wait()
}

// freshConnection is an owner's client arriving during the flood: a new
// connection, an initialize with its token.
func freshConnection(ctx context.Context, base string, o *ownersCounts) {
	o.fresh.Add(1)
	cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/mcp", strings.NewReader(initBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+ownerTokens["alice"])
	resp, err := cl.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode == http.StatusOK {
		o.freshOK.Add(1)
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			del, _ := http.NewRequest("DELETE", base+"/mcp", nil)
			del.Header.Set("Mcp-Session-Id", sid)
			del.Header.Set("Authorization", "Bearer "+ownerTokens["alice"])
			if r, err := cl.Do(del); err == nil {
				r.Body.Close()
			}
		}
	}
}
