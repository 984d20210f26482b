//lint:file-ignore SA1019 logging is part of what this test checks stays with its owner (deprecated in 2026-07-28, still served)

package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// sharedPeer is one owner's client: how many tools/list_changed it was
// sent and the log messages it received.
type sharedPeer struct {
	cs      *mcp.ClientSession
	changed atomic.Int32
	mu      sync.Mutex
	logs    int
}

func (p *sharedPeer) logged() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs
}

func connectShared(t *testing.T, base, token string) *sharedPeer {
	t.Helper()
	p := &sharedPeer{}
	c := mcp.NewClient(&mcp.Implementation{Name: "shared-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { p.changed.Add(1) },
		LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) {
			p.mu.Lock()
			p.logs++
			p.mu.Unlock()
		},
	})
	hc := &http.Client{Transport: headerTransport{map[string]string{"Authorization": "Bearer " + token}, http.DefaultTransport}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	p.cs = cs
	return p
}

// toolNames lists the session's tools.
func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// lists waits until the session lists every one of names; it fails the
// test with what it lists when that does not come about.
func lists(t *testing.T, who string, cs *mcp.ClientSession, names ...string) {
	t.Helper()
	var got []string
	if !testwait.Until(testwait.Timeout, func() bool {
		got = toolNames(t, cs)
		for _, n := range names {
			if !slices.Contains(got, n) {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("%s does not list %v after %s; it lists %d tools: %v", who, names, testwait.Timeout, len(got), got)
	}
}

// sharedConfig is a config with bearer tokens for owners and one
// shared = true stdio server, "common" (prefix common): alone, or after
// the usual own (not shared) server k8s.
func sharedConfig(t *testing.T, withOwn bool, owners ...string) (cfg string, tokens map[string]string) {
	t.Helper()
	shared := fmt.Sprintf("\n[mcp.servers.common]\ntransport = \"stdio\"\ncmd = [%q]\nenv = { SCRATCHPAD_TESTUPSTREAM = \"stdio\" }\nprefix = \"common\"\nshared = true\n", upstreamCmd())
	if withOwn {
		cfg, _, tokens = tenancyConfig(t, shared, owners...)
		return cfg, tokens
	}
	dir := t.TempDir()
	cfg = filepath.Join(dir, "scratchpad.toml")
	text := fmt.Sprintf("memory_dir = %q\n\n[http]\ntokens_file = \"tokens.toml\"\n%s", filepath.Join(dir, "mem"), shared)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens = map[string]string{}
	for _, o := range owners {
		code, out, errOut := runCLI(t, "token", "add", o, "--config", cfg)
		if code != 0 {
			t.Fatalf("token add %s: %d %s", o, code, errOut)
		}
		tokens[o] = strings.TrimSpace(out)
	}
	return cfg, tokens
}

// One shared = true upstream and two owners (issue 39, item 5): whichever
// owner's session comes first, both list the shared server's tools and
// call them on its one process; a tool the server adds is announced
// (tools/list_changed) to both and callable by both; after the server's
// process dies and restarts, both list and call it again. With an own
// (not shared) upstream as well, that one stays each owner's own; one
// owner's log messages reach no one else.
//
// Before, an owner whose proxy had no upstream of its own listed none of
// the shared server's tools when it came second: the shared server had
// listed before that owner's proxy existed, and a proxy's catalogue was
// built only when one of its upstreams listed.
func TestSharedUpstreamServesEveryOwner(t *testing.T) {
	for _, tc := range []struct {
		order   [2]string
		withOwn bool
	}{
		{[2]string{"alice", "bob"}, false},
		{[2]string{"bob", "alice"}, false},
		{[2]string{"alice", "bob"}, true},
	} {
		name := tc.order[0] + " first"
		if tc.withOwn {
			name += ", own upstream too"
		}
		t.Run(name, func(t *testing.T) { sharedServesEveryOwner(t, tc.order, tc.withOwn) })
	}
}

func sharedServesEveryOwner(t *testing.T, order [2]string, withOwn bool) {
	cfg, tokens := sharedConfig(t, withOwn, "alice", "bob")
	base := startHTTP(t, "http", cfg)

	first := connectShared(t, base, tokens[order[0]])
	lists(t, order[0], first.cs, "common__pid")
	pid := callTextOf(t, first.cs, "common__pid", nil)

	second := connectShared(t, base, tokens[order[1]])
	lists(t, order[1], second.cs, "common__pid")
	if got := callTextOf(t, second.cs, "common__pid", nil); got != pid {
		t.Fatalf("the shared server answered %s from process %s and %s from %s: two instances", order[0], pid, order[1], got)
	}
	if withOwn {
		if a, b := callTextOf(t, first.cs, "pid", nil), callTextOf(t, second.cs, "pid", nil); a == b {
			t.Fatalf("the owners share the process %s of a server that is not shared", a)
		}
	}

	// A tool the shared server adds reaches both owners.
	before1, before2 := first.changed.Load(), second.changed.Load()
	callTextOf(t, first.cs, "common__add_tool", map[string]any{"name": "added"})
	testwait.For(t, "tools/list_changed at both owners", func() bool {
		return first.changed.Load() > before1 && second.changed.Load() > before2
	})
	lists(t, order[0], first.cs, "common__added")
	lists(t, order[1], second.cs, "common__added")
	for _, p := range []*sharedPeer{first, second} {
		if got := callTextOf(t, p.cs, "common__added", nil); got != "hello from added" {
			t.Fatalf("the added tool answered %q", got)
		}
	}

	// The shared process dies; it restarts (without the added tool) and
	// serves both again.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	_, _ = first.cs.CallTool(ctx, &mcp.CallToolParams{Name: "common__crash"})
	cancel()
	for i, p := range []*sharedPeer{first, second} {
		testwait.For(t, order[i]+"'s call on the restarted shared server", func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "common__pid"})
			return err == nil && !res.IsError && text(res) != pid
		})
		lists(t, order[i], p.cs, "common__pid")
		if slices.Contains(toolNames(t, p.cs), "common__added") {
			t.Fatalf("%s still lists the tool the dead process added", order[i])
		}
	}
	if !withOwn {
		return
	}

	// Both ask for every log message; the shared server's are nobody's
	// and first's own upstream's are first's only: second's own four are
	// then all it has.
	for _, p := range []*sharedPeer{first, second} {
		if err := p.cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
	}
	callTextOf(t, first.cs, "common__log", nil)
	callTextOf(t, first.cs, "log", nil)
	testwait.For(t, order[0]+"'s own log messages", func() bool { return first.logged() >= 4 })
	callTextOf(t, second.cs, "log", nil)
	testwait.For(t, order[1]+"'s own log messages", func() bool { return second.logged() >= 4 })
	if n := second.logged(); n != 4 {
		t.Fatalf("%s got %d log messages; its own are 4", order[1], n)
	}
}
