package agents

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
