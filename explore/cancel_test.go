package explore

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A grep whose pattern RE2 runs slowly (bounded repeats over every byte)
// stops soon after it is cancelled: the file is searched a window at a
// time and the context checked between windows. Measured against the same
// search run to its end, not against a clock figure.
func TestSlowGrepCancels(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a slow regexp for seconds")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "big.log"), strings.Repeat(strings.Repeat("abcdefghik ", 30)+"\n", 200))
	env := dirEnv(t, dir)
	args := map[string]any{"file": "big.log", "pattern": `[^\n]{0,1000}[^\n]{0,1000}[JQ]`}
	start := time.Now()
	if got := run(t, env, "grep", args); errCode(got) != "" {
		t.Fatalf("the whole search: %s", got)
	}
	whole := time.Since(start)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(whole/20, cancel)
	start = time.Now()
	got := text(Call(ctx, env, "grep", args))
	took := time.Since(start)
	if errCode(got) != "cancelled" {
		t.Fatalf("cancelled grep answered %.200s", got)
	}
	if took > whole/2 {
		t.Errorf("cancelled after %s, it ran %s of the %s the whole search takes", whole/20, took, whole)
	}
	t.Logf("whole search %s; cancelled at %s, returned after %s", whole, whole/20, took)
}
