package divert

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// A diverted output is shared through Agent.Blobs: another replica, with
// a memory_dir of its own, fetches the very file the pointer names. With
// Redis down the divert fails (the model reads why) instead of returning
// a pointer other replicas cannot follow.
func TestDivertSharesStoredOutput(t *testing.T) {
	srv := testredis.Start(t)
	open := func(mem string) *state.Redis {
		r, err := state.NewRedis(state.RedisOptions{URL: srv.URL(), MemoryDir: mem, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		return r
	}
	memA, memB := t.TempDir(), t.TempDir()
	a, b := open(memA), open(memB)
	dir := filepath.Join(memA, "owners", "alice", "run-1", "iteration-0", "scratchpad")
	agent := &Agent{Enabled: true, Dir: dir, Top: memA, Counter: tokens.ForModel("openai", "gpt-4o"), Blobs: a, BlobTTL: time.Hour}
	opts := Options{Logger: slog.New(slog.DiscardHandler)}
	res := []byte(`{"content":[{"type":"text","text":"` + strings.Repeat("word ", 5000) + `"}]}`)

	out, err := Decide(Call{Server: "s", Tool: "t", Threshold: 10, Result: bytes.Clone(res)}, agent, opts)
	if err != nil || !out.Diverted {
		t.Fatalf("Decide: %v, diverted %v: %s", err, out.Diverted, out.Result)
	}
	rel, err := filepath.Rel(memA, out.Pointer.Stored.Path)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.ToSlash(rel)
	if err := b.FetchBlob(context.Background(), name); err != nil {
		t.Fatalf("replica B fetching %s: %v", name, err)
	}
	want, _ := os.ReadFile(out.Pointer.Stored.Path)
	got, err := os.ReadFile(filepath.Join(memB, rel))
	if err != nil || len(want) == 0 || !bytes.Equal(got, want) {
		t.Fatalf("replica B read %d bytes (%v), want the %d stored", len(got), err, len(want))
	}

	srv.Kill()
	out, err = Decide(Call{Server: "s", Tool: "t2", Threshold: 10, Result: bytes.Clone(res)}, agent, opts)
	if err != nil || out.Diverted || !strings.Contains(string(out.Result), "[cluster] redis_url") || !strings.Contains(string(out.Result), "could not be shared") {
		t.Fatalf("Decide with Redis down: %v, diverted %v: %s", err, out.Diverted, out.Result)
	}
}
