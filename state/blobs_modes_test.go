package state

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
)

// TestRedisBlobModes: a fetched blob is written as every file under
// memory_dir is (memdir's atomic write): 0600, in folders made 0700, and
// a memory_dir that did not exist is made 0700 too.
func TestRedisBlobModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	srv := testredis.Start(t)
	a, _ := newRedisStore(t, srv, 0)
	mem := filepath.Join(t.TempDir(), "memory")
	b := openTestRedis(t, srv.URL(), RedisOptions{MemoryDir: mem})
	ctx := context.Background()
	const name = "owners/alice/run-1/iteration-0/scratchpad/x.json"
	if err := a.PutBlob(ctx, name, []byte(`{"a":1}`), 0); err != nil {
		t.Fatal(err)
	}
	if err := b.FetchBlob(ctx, name); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{
		mem:                                    0o700,
		filepath.Join(mem, "owners"):           0o700,
		filepath.Join(mem, filepath.Dir(name)): 0o700,
		filepath.Join(mem, name):               0o600,
	} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o, want %o", p, got, want)
		}
	}
}
