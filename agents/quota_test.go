package agents

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

func TestOwnerQuota(t *testing.T) {
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, "old.txt"), make([]byte, 600), 0o600); err != nil {
		t.Fatal(err)
	}
	q := &quotas{max: 1000, by: map[string]*ownerUse{}}
	if err := q.reserve("alice", base, 300); err != nil {
		t.Fatalf("600 stored + 300: %v", err)
	}
	err := q.reserve("alice", base, 200)
	if !errors.Is(err, ErrOwnerFull) || !strings.Contains(err.Error(), "stores 900 B and its bound is 1000 B") {
		t.Fatalf("900 + 200 over 1000: %v", err)
	}
	// Another owner, and no owner (no tokens), are not bound by alice's.
	if err := q.reserve("bob", t.TempDir(), 900); err != nil {
		t.Fatal(err)
	}
	if err := q.reserve("", base, 1<<30); err != nil {
		t.Fatal(err)
	}
	// Once the old output is gone and the count is stale, it is recounted.
	if err := os.Remove(filepath.Join(base, "old.txt")); err != nil {
		t.Fatal(err)
	}
	q.by["alice"].counted = time.Now().Add(-2 * quotaRecount)
	if err := q.reserve("alice", base, 900); err != nil {
		t.Fatalf("after the sweep: %v", err)
	}
	// No bound configured.
	if err := (&quotas{by: map[string]*ownerUse{}}).reserve("alice", base, 1<<40); err != nil {
		t.Fatal(err)
	}
}

// With replicas, [retention] owner_max_bytes bounds what an owner keeps
// on the shared store, all replicas together: what A stored counts on
// B; an output stored again replaces its claim; another owner has its
// own bound; an output whose blob expired frees its bytes.
func TestOwnerBoundAcrossReplicas(t *testing.T) {
	url := testredis.Start(t).URL()
	bound := func(c *config.Config) { c.Retention.OwnerMaxBytes = 1000 }
	a, _ := replica(t, url, bound)
	b, _ := replica(t, url, bound)
	agent := func(r *Registry, sid, owner string) *Agent {
		t.Helper()
		ag, err := r.Resolve(sessionCtx(t, r, sid, Identity{Agent: "w", Owner: owner}))
		if err != nil {
			t.Fatal(err)
		}
		return ag
	}
	aliceA, aliceB, bobB := agent(a, "s1", "alice"), agent(b, "s2", "alice"), agent(b, "s3", "bob")
	ctx := context.Background()
	put := func(ag *Agent, name string, n int, ttl time.Duration) error {
		return ag.Divert().Blobs.PutBlob(ctx, "owners/"+ag.ID.Owner+"/scratchpad/"+name, make([]byte, n), ttl)
	}
	for _, c := range []struct {
		why  string
		ag   *Agent
		name string
		n    int
		ttl  time.Duration
		full bool
	}{
		{"A stores 600", aliceA, "x.json", 600, 0, false},
		{"B is over the bound with A's", aliceB, "y.json", 500, 0, true},
		{"the same output again replaces its claim", aliceB, "x.json", 700, 0, false},
		{"another owner has its own bound", bobB, "y.json", 900, 0, false},
		{"one that expires", aliceB, "short.json", 300, 300 * time.Millisecond, false},
		{"full while it lives", aliceA, "z.json", 100, 0, true},
	} {
		err := put(c.ag, c.name, c.n, c.ttl)
		if full := errors.Is(err, ErrOwnerFull); full != c.full || (err != nil && !full) {
			t.Fatalf("%s: %v", c.why, err)
		}
		if c.full && !strings.Contains(err.Error(), "owner_max_bytes") {
			t.Fatalf("%s: the error does not name the bound: %v", c.why, err)
		}
	}
	// Through divert, as a tool's output: refused, and the model is told
	// the bound, not to call again once the store answers.
	res := []byte(`{"content":[{"type":"text","text":"` + strings.Repeat("word ", 30) + `"}]}`)
	out, err := divert.Decide(divert.Call{Server: "s", Tool: "t", Threshold: 10, Result: res}, aliceA.Divert(), divert.Options{Logger: slog.New(slog.DiscardHandler)})
	if text := string(out.Result); err != nil || out.Diverted || !strings.Contains(text, "was not stored") || !strings.Contains(text, "owner_max_bytes") || strings.Contains(text, "could not be shared") {
		t.Fatalf("a divert past the replicas' bound: %v, diverted %v: %s", err, out.Diverted, out.Result)
	}
	testwait.For(t, "the expired output's bytes freed", func() bool { return put(aliceA, "z.json", 100, 0) == nil })
}
