package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
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
	a, b, stA := twoBoundedReplicas(t, lease)
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

// The agent bounds of 2026-07-28 callers hold across replicas sharing a
// store, as the session bounds do: an agent made on A counts on B, a
// caller whose agent lives on A is not counted again when it reaches B,
// and a dead replica's agents give their places back once their lease
// expired; a live replica's are renewed past it.
func TestAgentBoundsAcrossReplicas(t *testing.T) {
	const lease = 600 * time.Millisecond
	a, b, stA := twoBoundedReplicas(t, lease)
	call := func(base, owner, agent string, want int) {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, _ := http.NewRequest(http.MethodPost, base, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		req.Header.Set("X-Test-Owner", owner)
		req.Header.Set("X-Test-Agent", agent)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := http.StatusOK
		if resp.StatusCode != http.StatusOK || strings.Contains(string(b), `"error"`) {
			got = http.StatusTooManyRequests
			if !strings.Contains(string(b), "limit") {
				got = resp.StatusCode
			}
		}
		if got != want {
			t.Fatalf("tools/list of %s/%s on %s: HTTP %d %s, want %d", owner, agent, base, resp.StatusCode, b, want)
		}
	}
	call(a.URL, "alice", "one", http.StatusOK)
	call(b.URL, "alice", "two", http.StatusOK)
	call(b.URL, "alice", "one", http.StatusOK) // the same caller on another replica: counted once
	// Alice holds her 2 on the replicas: a third agent is refused on A,
	// whose own count of her agents is 1.
	call(a.URL, "alice", "three", http.StatusTooManyRequests)
	// "one" counted once: bob's is the third of the replicas' 3.
	call(a.URL, "bob", "one", http.StatusOK)
	// Three agents on the replicas: the bound of all owners (A holds 2).
	call(a.URL, "carol", "one", http.StatusTooManyRequests)

	// Renewed while their replicas live.
	time.Sleep(lease + lease/2)
	call(a.URL, "carol", "one", http.StatusTooManyRequests)

	// A dies (no renewal, no release): bob's agent, held by A alone,
	// gives its place back once its lease expired; alice's "one" stays
	// counted, B renews it.
	_ = stA.Close()
	call(b.URL, "carol", "one", http.StatusTooManyRequests)
	time.Sleep(lease + lease/2)
	call(b.URL, "carol", "one", http.StatusOK)
}

// twoBoundedReplicas are replicas A and B on one redis-server, bounded to
// 3 sessions (or agents) in all and 2 per owner; stA is A's store, whose
// Close is A's death as the others see it.
func twoBoundedReplicas(t *testing.T, lease time.Duration) (a, b *httptest.Server, stA *state.Redis) {
	t.Helper()
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
	stA = mk()
	a, _ = replicaWith(t, stA, "a", lease, bounds)
	b, _ = replicaWith(t, mk(), "b", lease, bounds)
	return a, b, stA
}
