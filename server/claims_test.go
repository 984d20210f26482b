package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
)

// initialize starts a 2025 session of owner on the replica at base and
// returns its status and session id.
func initialize(t *testing.T, base, owner string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, base, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Test-Owner", owner)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
}

// The session bounds hold across replicas sharing a store: sessions made
// on A count on B; a session ended (DELETE) gives its place back, and so
// does one of a replica that died, once its claim's lease expired; the
// claims of a live replica are renewed past their lease.
func TestSessionBoundsAcrossReplicas(t *testing.T) {
	const lease = 600 * time.Millisecond
	rs := testredis.Start(t)
	mk := func() *state.Redis {
		st, err := state.NewRedis(state.RedisOptions{URL: rs.URL(), Prefix: "claims", Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	bounds := StreamableHTTPOptions{MaxSessions: 3, MaxSessionsPerOwner: 2}
	stA := mk()
	a, _ := replicaWith(t, stA, "a", lease, bounds)
	b, _ := replicaWith(t, mk(), "b", lease, bounds)
	must := func(base, owner string, want int) string {
		t.Helper()
		code, sid := initialize(t, base, owner)
		if code != want {
			t.Fatalf("initialize of %s on %s: %d, want %d", owner, base, code, want)
		}
		return sid
	}
	must(a.URL, "alice", http.StatusOK)
	must(b.URL, "alice", http.StatusOK)
	// B holds one of alice's sessions, its own bound is 2: the third is
	// refused by the count of both replicas.
	must(b.URL, "alice", http.StatusTooManyRequests)
	bobB := must(b.URL, "bob", http.StatusOK)
	// Three sessions on the replicas: the bound of all owners, though A
	// holds one.
	must(a.URL, "bob", http.StatusTooManyRequests)

	// Renewed while their replicas live: still counted after the lease.
	time.Sleep(lease + lease/2)
	must(b.URL, "alice", http.StatusTooManyRequests)

	// DELETE gives the place back.
	del, _ := http.NewRequest(http.MethodDelete, b.URL, nil)
	del.Header.Set("Mcp-Session-Id", bobB)
	del.Header.Set("X-Test-Owner", "bob")
	if r, err := http.DefaultClient.Do(del); err != nil || r.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE on b: %v %v", r, err)
	}
	must(a.URL, "bob", http.StatusOK)

	// A dies (its store's connections gone: no renewal, no release):
	// its sessions' places come back once their lease expired.
	_ = stA.Close()
	must(b.URL, "alice", http.StatusTooManyRequests)
	time.Sleep(lease + lease/2)
	must(b.URL, "alice", http.StatusOK)
}
