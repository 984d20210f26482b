package state

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// newRedisStore opens a store on srv with its own memory_dir.
func newRedisStore(tb testing.TB, srv *testredis.Server, cacheBytes int64) (*Redis, string) {
	tb.Helper()
	dir := tb.TempDir()
	return openTestRedis(tb, srv.URL(), RedisOptions{MemoryDir: dir, CacheBytes: cacheBytes}), dir
}

func randomBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	rng := rand.New(rand.NewPCG(seed, seed))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// listFiles returns every file under dir, relative, slash-separated.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRedisBlobRoundTrip(t *testing.T) {
	srv := testredis.Start(t)
	a, _ := newRedisStore(t, srv, 0)
	b, bdir := newRedisStore(t, srv, 0)
	ctx := context.Background()
	tests := []struct {
		name string
		size int
	}{
		{"owners/alice/run-1/iteration-0/scratchpad/github_list_1234.json", 3*BlobChunkBytes + BlobChunkBytes/2},
		{"owners/alice/run-1/iteration-0/scratchpad/bound.json", BlobChunkBytes},
		{"owners/alice/run-1/iteration-0/scratchpad/bound-plus-one.json", BlobChunkBytes + 1},
		{"owners/alice/run-1/iteration-0/scratchpad/empty.json", 0},
		{"top.txt", 17},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := randomBytes(tc.size, uint64(i))
			if err := a.PutBlob(ctx, tc.name, data, 0); err != nil {
				t.Fatal(err)
			}
			if err := b.FetchBlob(ctx, tc.name); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(bdir, filepath.FromSlash(tc.name)))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("fetched %d bytes, not the %d put", len(got), len(data))
			}
			// Every Redis value is within the bound.
			keys, err := a.client.Keys(ctx, "*").Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				if typ := a.client.Type(ctx, k).Val(); typ != "string" {
					continue
				}
				if n := a.client.StrLen(ctx, k).Val(); n > BlobChunkBytes {
					t.Errorf("key %s holds %d bytes, over the bound", k, n)
				}
			}
			// Already local: nil again.
			if err := b.FetchBlob(ctx, tc.name); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, f := range listFiles(t, bdir) {
		if strings.Contains(f, ".tmp-") {
			t.Errorf("temporary file left: %s", f)
		}
	}
}

// TestRedisBlobOverwrite checks that a second put replaces the blob and
// drops the old generation's chunks.
func TestRedisBlobOverwrite(t *testing.T) {
	srv := testredis.Start(t)
	a, _ := newRedisStore(t, srv, 0)
	b, bdir := newRedisStore(t, srv, 0)
	ctx := context.Background()
	name := "owners/bob/x.json"
	if err := a.PutBlob(ctx, name, randomBytes(3*BlobChunkBytes, 1), 0); err != nil {
		t.Fatal(err)
	}
	second := randomBytes(BlobChunkBytes/2, 2)
	if err := a.PutBlob(ctx, name, second, 0); err != nil {
		t.Fatal(err)
	}
	keys := a.client.Keys(ctx, a.key("blob", name)+":*").Val()
	if len(keys) != 2 { // the meta and one chunk
		t.Fatalf("keys after overwrite: %v", keys)
	}
	if n := a.client.ZCard(ctx, a.indexKey(layout.TreeOf(name))).Val(); n != 1 {
		t.Errorf("the index lists %d names after an overwrite, want 1", n)
	}
	if err := b.FetchBlob(ctx, name); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(bdir, name))
	if !bytes.Equal(got, second) {
		t.Fatalf("fetched %d bytes, want the second put's %d", len(got), len(second))
	}
}

func TestRedisBlobMissing(t *testing.T) {
	srv := testredis.Start(t)
	r, dir := newRedisStore(t, srv, 0)
	err := r.FetchBlob(context.Background(), "owners/alice/nothing.json")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("FetchBlob of a missing blob: %v, want fs.ErrNotExist", err)
	}
	if files := listFiles(t, dir); len(files) != 0 {
		t.Fatalf("files written for a missing blob: %v", files)
	}
}

func TestRedisBlobCorrupt(t *testing.T) {
	srv := testredis.Start(t)
	a, _ := newRedisStore(t, srv, 0)
	b, bdir := newRedisStore(t, srv, 0)
	ctx := context.Background()
	name := "c.json"
	if err := a.PutBlob(ctx, name, randomBytes(100, 3), 0); err != nil {
		t.Fatal(err)
	}
	gen := a.client.HGet(ctx, a.metaKey(name), blobGen).Val()
	a.client.Set(ctx, a.chunkKey(name, gen, 0), randomBytes(100, 4), 0)
	err := b.FetchBlob(ctx, name)
	if err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("FetchBlob of a corrupt blob: %v, want a sha256 mismatch", err)
	}
	if files := listFiles(t, bdir); len(files) != 0 {
		t.Fatalf("files written for a corrupt blob: %v", files)
	}
}

func TestBlobHostileNames(t *testing.T) {
	srv := testredis.Start(t)
	parent := t.TempDir()
	mem := filepath.Join(parent, "mem")
	r, err := NewRedis(RedisOptions{URL: srv.URL(), MemoryDir: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l := NewLocal(LocalOptions{MemoryDir: mem})
	ctx := context.Background()
	for _, name := range []string{"../x", "/etc/passwd", "a/../../b", "", ".", "a//b", "./a"} {
		for _, s := range []Store{r, l} {
			if err := s.PutBlob(ctx, name, []byte("x"), 0); !errors.Is(err, ErrBadBlobName) {
				t.Errorf("%T.PutBlob(%q): %v, want ErrBadBlobName", s, name, err)
			}
			if err := s.FetchBlob(ctx, name); !errors.Is(err, ErrBadBlobName) {
				t.Errorf("%T.FetchBlob(%q): %v, want ErrBadBlobName", s, name, err)
			}
		}
	}
	if keys := r.client.Keys(ctx, "*").Val(); len(keys) != 0 {
		t.Errorf("keys written for hostile names: %v", keys)
	}
	for _, f := range listFiles(t, parent) {
		t.Errorf("file written: %s", f)
	}
}

// TestRedisBlobSymlinkEscape checks that os.Root refuses a folder that is a
// symlink out of memory_dir.
func TestRedisBlobSymlinkEscape(t *testing.T) {
	srv := testredis.Start(t)
	a, _ := newRedisStore(t, srv, 0)
	b, bdir := newRedisStore(t, srv, 0)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(bdir, "link")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := a.PutBlob(ctx, "link/x.json", []byte("secret"), 0); err != nil {
		t.Fatal(err)
	}
	if err := b.FetchBlob(ctx, "link/x.json"); err == nil {
		t.Fatal("FetchBlob through a symlink out of memory_dir succeeded")
	}
	if files := listFiles(t, outside); len(files) != 0 {
		t.Fatalf("files written outside memory_dir: %v", files)
	}
}

func TestRedisBlobCacheEvictsLRU(t *testing.T) {
	srv := testredis.Start(t)
	a, _ := newRedisStore(t, srv, 0)
	const size = 1000
	b, bdir := newRedisStore(t, srv, 2*size+size/2) // room for two
	ctx := context.Background()
	names := []string{"p/1.json", "p/2.json", "p/3.json"}
	for i, n := range names {
		if err := a.PutBlob(ctx, n, randomBytes(size, uint64(i)), 0); err != nil {
			t.Fatal(err)
		}
	}
	// The caller's own file: never evicted by the cache.
	own := filepath.Join(bdir, "own.json")
	if err := os.WriteFile(own, randomBytes(10*size, 9), 0o644); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		fetch string
		want  []string // files present after the fetch
	}{
		{"p/1.json", []string{"own.json", "p/1.json"}},
		{"p/2.json", []string{"own.json", "p/1.json", "p/2.json"}},
		{"p/1.json", []string{"own.json", "p/1.json", "p/2.json"}}, // touch: 2 is now the oldest
		{"p/3.json", []string{"own.json", "p/1.json", "p/3.json"}},
		{"own.json", []string{"own.json", "p/1.json", "p/3.json"}},
		{"p/2.json", []string{"own.json", "p/2.json", "p/3.json"}},
	}
	for i, st := range steps {
		if err := b.FetchBlob(ctx, st.fetch); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		got := strings.Join(listFiles(t, bdir), " ")
		if want := strings.Join(st.want, " "); got != want {
			t.Fatalf("step %d (fetch %s): files %q, want %q", i, st.fetch, got, want)
		}
	}
	if b.used != 2*size {
		t.Errorf("cache counts %d bytes, want %d", b.used, 2*size)
	}
}

func TestRedisBlobTTL(t *testing.T) {
	srv := testredis.Start(t)
	r, _ := newRedisStore(t, srv, 0)
	ctx := context.Background()
	tests := []struct {
		name string
		ttl  time.Duration
	}{
		{"ttl.json", time.Hour},
		{"forever.json", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := r.PutBlob(ctx, tc.name, randomBytes(2*BlobChunkBytes+5, 5), tc.ttl); err != nil {
				t.Fatal(err)
			}
			keys := r.client.Keys(ctx, r.key("blob", tc.name)+":*").Val()
			if len(keys) != 4 { // the meta and three chunks
				t.Fatalf("keys: %v", keys)
			}
			for _, k := range keys {
				pttl := r.client.PTTL(ctx, k).Val()
				if tc.ttl == 0 && pttl != -1 {
					t.Errorf("%s: PTTL %v, want none (-1)", k, pttl)
				}
				if tc.ttl > 0 && (pttl <= tc.ttl-time.Minute || pttl > tc.ttl) {
					t.Errorf("%s: PTTL %v, want about %v", k, pttl, tc.ttl)
				}
			}
		})
	}
}

func TestRedisBlobUnavailable(t *testing.T) {
	srv := testredis.Start(t)
	a, _ := newRedisStore(t, srv, 0)
	b, bdir := newRedisStore(t, srv, 0)
	ctx := context.Background()
	name := "owners/alice/big.json"
	if err := a.PutBlob(ctx, name, randomBytes(2*BlobChunkBytes, 6), 0); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	for _, err := range []error{b.FetchBlob(ctx, name), a.PutBlob(ctx, "other.json", []byte("x"), 0)} {
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "[cluster] redis_url") {
			t.Errorf("with Redis down: %v, want ErrUnavailable naming [cluster] redis_url", err)
		}
	}
	if files := listFiles(t, bdir); len(files) != 0 {
		t.Fatalf("files written with Redis down: %v", files)
	}
}

// TestRedisBlobConcurrentFetch checks that concurrent fetches of one name
// all succeed and leave one whole file.
func TestRedisBlobConcurrentFetch(t *testing.T) {
	srv := testredis.Start(t)
	a, _ := newRedisStore(t, srv, 0)
	b, bdir := newRedisStore(t, srv, 0)
	ctx := context.Background()
	name := "c/shared.json"
	data := randomBytes(4*BlobChunkBytes, 7)
	if err := a.PutBlob(ctx, name, data, 0); err != nil {
		t.Fatal(err)
	}
	// Redis counts the GETs: one download of four chunks is four.
	if err := a.client.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = b.FetchBlob(ctx, name) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("fetch %d: %v", i, err)
		}
	}
	got, _ := os.ReadFile(filepath.Join(bdir, name))
	if !bytes.Equal(got, data) {
		t.Fatal("concurrent fetches left a file unlike the blob")
	}
	if files := listFiles(t, bdir); len(files) != 1 {
		t.Fatalf("files: %v", files)
	}
	stats := a.client.Info(ctx, "commandstats").Val()
	if !strings.Contains(stats, "cmdstat_get:calls=4,") {
		t.Fatalf("want one download (4 GETs); commandstats:\n%s", stats)
	}
}

func TestLocalBlobs(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "owners/alice/d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "owners/alice/x.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := NewLocal(LocalOptions{MemoryDir: dir})
	none := NewLocal(LocalOptions{})
	ctx := context.Background()
	tests := []struct {
		store   *Local
		name    string
		missing bool
	}{
		{l, "owners/alice/x.json", false},
		{l, "owners/alice/y.json", true},
		{l, "owners/alice/d", true}, // a folder is not a stored output
		{none, "owners/alice/x.json", true},
	}
	for _, tc := range tests {
		err := tc.store.FetchBlob(ctx, tc.name)
		if tc.missing != errors.Is(err, fs.ErrNotExist) || (!tc.missing && err != nil) {
			t.Errorf("FetchBlob(%q) with memory_dir %q: %v, missing %v", tc.name, tc.store.opts.MemoryDir, err, tc.missing)
		}
	}
	// PutBlob writes nothing: the caller's file is the blob.
	if err := l.PutBlob(ctx, "owners/alice/z.json", []byte("data"), 0); err != nil {
		t.Fatal(err)
	}
	if err := l.FetchBlob(ctx, "owners/alice/z.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Local.PutBlob wrote a file: %v", err)
	}
}

// TestRedisBlobFetchWhilePut checks that a reader racing writers of one
// name always gets one whole version, never a mix or a partial file.
func TestRedisBlobFetchWhilePut(t *testing.T) {
	srv := testredis.Start(t)
	a, _ := newRedisStore(t, srv, 0)
	b, bdir := newRedisStore(t, srv, 0)
	ctx := context.Background()
	name := "race/x.json"
	versions := [][]byte{randomBytes(3*BlobChunkBytes, 10), randomBytes(2*BlobChunkBytes+7, 11)}
	if err := a.PutBlob(ctx, name, versions[0], 0); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := a.PutBlob(ctx, name, versions[i%2], 0); err != nil {
				t.Error(err)
				return
			}
		}
	})
	path := filepath.Join(bdir, name)
	for i := 0; i < 30; i++ {
		if err := b.FetchBlob(ctx, name); err != nil && !strings.Contains(err.Error(), "rewritten during") {
			t.Fatalf("fetch %d: %v", i, err)
		} else if err == nil {
			got, _ := os.ReadFile(path)
			if !bytes.Equal(got, versions[0]) && !bytes.Equal(got, versions[1]) {
				t.Fatalf("fetch %d: %d bytes that are neither version", i, len(got))
			}
			_ = os.Remove(path)
		}
	}
	close(stop)
	wg.Wait()
}

// ListBlobs lists the live blobs under a folder, from an index the puts
// keep (no scan of the keyspace): what another replica wrote is listed,
// an expired blob is not, a folder's name is not a prefix of its
// neighbour's ("run-1" does not list "run-10"), and a name leaving
// memory_dir is refused. A Local store lists none.
func TestRedisListBlobs(t *testing.T) {
	srv := testredis.Start(t)
	a, _ := newRedisStore(t, srv, 0)
	b, _ := newRedisStore(t, srv, 0)
	ctx := context.Background()
	for _, p := range []struct {
		name string
		ttl  time.Duration
	}{
		{"owners/alice/run-1/iteration-0/scratchpad/b.json", 0},
		{"owners/alice/run-1/iteration-1/scratchpad/a.json", time.Hour},
		{"owners/alice/run-10/iteration-0/scratchpad/c.json", 0},
		{"owners/bob/scratchpad/d.json", 0},
		{"owners/alice/run-1/iteration-0/scratchpad/gone.json", 100 * time.Millisecond},
		{"run-1/iteration-0/scratchpad/e.json", 0}, // the single-user tree
	} {
		if err := a.PutBlob(ctx, p.name, []byte("x"), p.ttl); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond) // a lower bound only: gone.json's ttl has passed by then
	for _, tc := range []struct {
		dir   string
		limit int
		want  []string
	}{
		{"owners/alice/run-1", 0, []string{"owners/alice/run-1/iteration-0/scratchpad/b.json", "owners/alice/run-1/iteration-1/scratchpad/a.json"}},
		{"owners/alice/run-1/", 1, []string{"owners/alice/run-1/iteration-0/scratchpad/b.json"}},
		{"owners/bob", 0, []string{"owners/bob/scratchpad/d.json"}},
		// The single-user tree: its own, no owner's (each tree has its
		// own index: bob's blobs are not read to list alice's).
		{"", 0, []string{"run-1/iteration-0/scratchpad/e.json"}},
		{"run-1", 0, []string{"run-1/iteration-0/scratchpad/e.json"}},
		{"owners/carol", 0, nil},
	} {
		got, err := b.ListBlobs(ctx, tc.dir, tc.limit)
		if err != nil || strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("ListBlobs(%q, %d) = %q, %v; want %q", tc.dir, tc.limit, got, err, tc.want)
		}
	}
	if n, err := a.client.ZCard(ctx, a.indexKey("owners/alice")).Result(); err != nil || n != 3 {
		t.Errorf("alice's index holds %d names (%v), want her 3 live ones", n, err)
	}
	if _, err := b.ListBlobs(ctx, "owners", 0); !errors.Is(err, ErrBadBlobName) {
		t.Errorf("ListBlobs(owners): %v, want ErrBadBlobName", err)
	}
	if _, err := b.ListBlobs(ctx, "../etc", 0); !errors.Is(err, ErrBadBlobName) {
		t.Errorf("ListBlobs(../etc): %v, want ErrBadBlobName", err)
	}
	if got, err := NewLocal(LocalOptions{MemoryDir: t.TempDir()}).ListBlobs(ctx, "", 0); err != nil || got != nil {
		t.Errorf("Local ListBlobs = %v, %v", got, err)
	}
	srv.Kill()
	if _, err := b.ListBlobs(ctx, "", 0); !errors.Is(err, ErrUnavailable) {
		t.Errorf("ListBlobs with Redis away: %v, want ErrUnavailable", err)
	}
}
