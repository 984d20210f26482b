package proxy

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// stdioServer is the test binary as a stdio upstream named name.
func stdioServer(t *testing.T, name string, shared bool) config.Server {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return config.Server{Name: name, Transport: config.TransportStdio, Cmd: []string{exe},
		Env: map[string]string{testupstream.EnvMode: "stdio"}, Timeout: 20 * time.Second, Shared: shared}
}

// callText calls tool on u directly and returns its first text.
func callText(t *testing.T, u *upstream.Upstream, tool string) string {
	t.Helper()
	if !testwait.Until(testwait.Timeout, func() bool { st, _ := u.State(); return st == upstream.StateReady }) {
		st, err := u.State()
		t.Fatalf("upstream %s not ready: %s %v", u.Name(), st, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	raw, err := u.Call(ctx, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var res struct {
		Content []struct{ Text string } `json:"content"`
	}
	_ = json.Unmarshal(raw, &res)
	if len(res.Content) == 0 {
		t.Fatalf("%s: %s", tool, raw)
	}
	return res.Content[0].Text
}

func TestPoolGivesEachOwnerItsOwnUpstreams(t *testing.T) {
	pl := NewPool(PoolOptions{Proxy: Options{Logger: quiet(), Servers: []config.Server{stdioServer(t, "own", false), stdioServer(t, "common", true)}}, Idle: time.Hour})
	defer pl.Close()
	a, releaseA := pl.Acquire("alice")
	b, releaseB := pl.Acquire("bob")
	defer releaseA()
	defer releaseB()
	if a == b {
		t.Fatal("alice and bob got one proxy")
	}
	if again, release := pl.Acquire("alice"); again != a {
		t.Fatal("alice's second session got another proxy")
	} else {
		release()
		release() // a second call does nothing
	}
	ownA, ownB := a.Upstreams()[0], b.Upstreams()[0]
	if ownA == ownB || callText(t, ownA, "pid") == callText(t, ownB, "pid") {
		t.Fatal("alice and bob share an instance of a server that is not shared")
	}
	sharedA, sharedB := a.Upstreams()[1], b.Upstreams()[1]
	if sharedA != sharedB || callText(t, sharedA, "pid") != callText(t, sharedB, "pid") {
		t.Fatal("a shared server has two instances")
	}
	// A shared server's request to a client could be any owner's: refused.
	if got := callText(t, sharedA, "ask_sampling"); !strings.Contains(got, "shared by every owner") {
		t.Fatalf("shared server's sampling: %q", got)
	}
	if pl.Owners() != 2 {
		t.Fatalf("owners: %d", pl.Owners())
	}
}

func TestPoolStopsAnIdleOwnersUpstreams(t *testing.T) {
	pl := NewPool(PoolOptions{Proxy: Options{Logger: quiet(), Servers: []config.Server{stdioServer(t, "own", false)}}, Idle: 50 * time.Millisecond})
	defer pl.Close()
	p, release := pl.Acquire("alice")
	u := p.Upstreams()[0]
	callText(t, u, "pid")
	release()
	if !testwait.Until(testwait.Timeout, func() bool { return pl.Owners() == 0 }) {
		t.Fatal("alice's upstreams were not stopped once idle")
	}
	if !testwait.Until(testwait.Timeout, func() bool { st, _ := u.State(); return st == upstream.StateStopped }) {
		st, _ := u.State()
		t.Fatalf("idle upstream state %s", st)
	}
	// Her next session starts them again.
	q, release := pl.Acquire("alice")
	defer release()
	if q == p {
		t.Fatal("a stopped proxy was handed out again")
	}
	callText(t, q.Upstreams()[0], "pid")
}

// A held owner is never put on the idle clock: while one session still
// holds alice, no idle timer runs, so nothing can stop her upstreams
// (read from the pool itself, not by waiting for nothing to happen);
// the last release starts it, and it stops them.
func TestPoolKeepsAHeldOwner(t *testing.T) {
	pl := NewPool(PoolOptions{Proxy: Options{Logger: quiet(), Servers: []config.Server{stdioServer(t, "own", false)}}, Idle: 20 * time.Millisecond})
	defer pl.Close()
	p, release1 := pl.Acquire("alice")
	_, release2 := pl.Acquire("alice")
	release1()
	idling := func() bool {
		pl.mu.Lock()
		defer pl.mu.Unlock()
		o := pl.owners["alice"]
		return o == nil || o.idle != nil
	}
	if idling() {
		t.Fatal("alice is on the idle clock while a session still holds her")
	}
	callText(t, p.Upstreams()[0], "pid")
	release2()
	if !idling() {
		t.Fatal("alice's last release started no idle clock")
	}
	if !testwait.Until(testwait.Timeout, func() bool { return pl.Owners() == 0 }) {
		t.Fatal("alice's upstreams were not stopped once idle")
	}
}

// An owner whose proxy has no upstream of its own lists a shared
// upstream's tools when it comes after the shared upstream listed
// (issue 39, item 5): before, its catalogue was built only when one of
// its upstreams listed, so it stayed empty.
func TestPoolListsSharedToolsForALaterOwner(t *testing.T) {
	pl := NewPool(PoolOptions{Proxy: Options{Logger: quiet(), Servers: []config.Server{stdioServer(t, "common", true)}}, Idle: time.Hour})
	defer pl.Close()
	hasPid := func(p *Proxy) bool {
		for _, tl := range p.Tools() {
			if tl.Name == "pid" {
				return true
			}
		}
		return false
	}
	a, releaseA := pl.Acquire("alice")
	defer releaseA()
	testwait.For(t, "alice's listing of the shared server", func() bool { return hasPid(a) })
	b, releaseB := pl.Acquire("bob")
	defer releaseB()
	if !hasPid(b) {
		t.Fatalf("bob, acquired after the shared server listed, lists %v", b.Tools())
	}
}
