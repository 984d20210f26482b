package state

import (
	"container/list"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// Blobs keeps stored outputs where every process that serves their owner
// can read them. A name is a slash path relative to memory_dir, as package
// layout gives it (owners/alice/run-1/iteration-0/scratchpad/x.json).
//
// [Local] has nothing to do: the file the caller wrote is the blob.
// [Redis] keeps the bytes in chunks of at most [BlobChunkBytes] and makes
// them a local file again on the replica that needs them, through a cache
// bounded by [RedisOptions.CacheBytes].
type Blobs interface {
	// PutBlob keeps data under name; ttl 0 means no expiry. The caller
	// has already written the local file atomically.
	PutBlob(ctx context.Context, name string, data []byte, ttl time.Duration) error
	// FetchBlob makes name present as a local regular file under
	// memory_dir; nil if it already is. Missing everywhere: an error
	// wrapping [fs.ErrNotExist]. A name that is not local
	// ([fs.ValidPath]): an error wrapping [ErrBadBlobName].
	FetchBlob(ctx context.Context, name string) error
	// ListBlobs is the names of the live blobs under dir (a slash path
	// relative to memory_dir; "" or "." for all), sorted, at most limit of
	// them (limit <= 0: no bound): what a search over every stored output
	// must fetch first. [Local] lists none: its files are the blobs.
	ListBlobs(ctx context.Context, dir string, limit int) ([]string, error)
}

// BlobChunkBytes is the bound: no Redis value of a blob is larger, so one
// big stored output never becomes one big Redis value (which would stall
// the server and every other client while it is copied).
const BlobChunkBytes = 1 << 20

// ErrBadBlobName is wrapped by the error of a blob name that is absolute,
// holds "..", or otherwise is not a local slash path: it could name a file
// outside memory_dir.
var ErrBadBlobName = errors.New("state: blob name is not a local path under memory_dir")

// checkBlobName refuses names that could leave memory_dir; os.Root
// refuses them again when the file is touched.
func checkBlobName(name string) error {
	if !fs.ValidPath(name) || name == "." {
		return fmt.Errorf("%w: %q", ErrBadBlobName, name)
	}
	return nil
}

func (l *Local) initBlobs() {}

// PutBlob is a no-op: the caller wrote the file, which is the blob.
func (l *Local) PutBlob(_ context.Context, name string, _ []byte, _ time.Duration) error {
	return checkBlobName(name)
}

// FetchBlob reports whether the file exists under memory_dir.
// ListBlobs lists none: a Local store's blobs are the files under
// memory_dir, which a search walks itself.
func (l *Local) ListBlobs(context.Context, string, int) ([]string, error) { return nil, nil }

func (l *Local) FetchBlob(_ context.Context, name string) error {
	if err := checkBlobName(name); err != nil {
		return err
	}
	if l.opts.MemoryDir == "" {
		return fmt.Errorf("state: blob %q: no memory_dir: %w", name, fs.ErrNotExist)
	}
	root, err := os.OpenRoot(l.opts.MemoryDir)
	if err != nil {
		return fmt.Errorf("state: blob %q: %w", name, err)
	}
	defer root.Close()
	return statRegular(root, name)
}

// statRegular is nil when name is a regular file in root; a missing file
// is an error wrapping fs.ErrNotExist (as os errors do).
func statRegular(root *os.Root, name string) error {
	fi, err := root.Stat(name)
	if err != nil {
		return fmt.Errorf("state: blob %q: %w", name, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("state: blob %q is not a regular file: %w", name, fs.ErrNotExist)
	}
	return nil
}

// redisBlobs is the local cache of a Redis store's blobs: the files it
// wrote (never the ones the caller wrote itself), least recently used
// first out once their sizes sum over CacheBytes.
type redisBlobs struct {
	blobMu  sync.Mutex
	lru     *list.List // of *cached, most recent at the front
	cached  map[string]*list.Element
	used    int64
	fetches map[string]*fetchCall // downloads under way, one per name
}

type cached struct {
	name string
	size int64
}

// fetchCall is one download that concurrent FetchBlob calls of a name wait
// for, so a name is downloaded once.
type fetchCall struct {
	done chan struct{}
	err  error
}

func (r *Redis) initBlobs() {
	r.lru = list.New()
	r.cached = map[string]*list.Element{}
	r.fetches = map[string]*fetchCall{}
}

// blob metadata fields of the meta hash.
const (
	blobSize   = "size"
	blobChunks = "chunks"
	blobSHA    = "sha256"
	blobGen    = "gen"
)

// putRetries bounds the optimistic retries of PutBlob when another
// replica writes the same name at the same moment.
const putRetries = 5

func (r *Redis) metaKey(name string) string { return r.key("blob", name, "meta") }

// indexKey is the sorted set of the names of the blobs in one owner's
// tree ([layout.TreeOf]), scored by the unix milliseconds they expire at
// (+inf: never), so [Redis.ListBlobs] reads the live ones of the tree it
// lists without scanning the keyspace, and what it reads grows with that
// owner's blobs, not every owner's.
func (r *Redis) indexKey(tree string) string {
	if tree == "" {
		return r.key("blob-index")
	}
	return r.key("blob-index", tree)
}

// chunkKey names chunk i of generation gen: gen and i never hold ':', so
// no two names' keys meet.
func (r *Redis) chunkKey(name, gen string, i int) string {
	return r.key("blob", name, gen, strconv.Itoa(i))
}

// PutBlob writes data's chunks under a fresh generation and swaps the
// meta hash to it, in one MULTI/EXEC that also drops the old generation:
// a reader sees the old blob or the new one, never half of either.
func (r *Redis) PutBlob(ctx context.Context, name string, data []byte, ttl time.Duration) error {
	if err := checkBlobName(name); err != nil {
		return err
	}
	gen, err := newGen()
	if err != nil {
		return fmt.Errorf("state: blob %q: %w", name, err)
	}
	sum := sha256.Sum256(data)
	n := (len(data) + BlobChunkBytes - 1) / BlobChunkBytes
	meta := r.metaKey(name)
	now := time.Now() // the index's expiry: a bound for listing, not for reading
	put := func(tx *redis.Tx) error {
		// The old generation, dropped in the same transaction; WATCH makes
		// a concurrent swap fail this one, which then retries.
		old, err := tx.HMGet(ctx, meta, blobGen, blobChunks).Result()
		if err != nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for i := 0; i < n; i++ {
				p.Set(ctx, r.chunkKey(name, gen, i), data[i*BlobChunkBytes:min(len(data), (i+1)*BlobChunkBytes)], ttl)
			}
			p.Del(ctx, meta)
			p.HSet(ctx, meta, blobSize, len(data), blobChunks, n, blobSHA, hex.EncodeToString(sum[:]), blobGen, gen)
			score := math.Inf(1)
			if ttl > 0 {
				p.PExpire(ctx, meta, ttl)
				score = float64(now.Add(ttl).UnixMilli())
			}
			p.ZAdd(ctx, r.indexKey(layout.TreeOf(name)), redis.Z{Score: score, Member: name})
			if og, ok := old[0].(string); ok {
				oc, _ := strconv.Atoi(fmt.Sprint(old[1]))
				for i := 0; i < oc; i++ {
					p.Del(ctx, r.chunkKey(name, og, i))
				}
			}
			return nil
		})
		return err
	}
	for attempt := 0; ; attempt++ {
		err = r.client.Watch(ctx, put, meta)
		if !errors.Is(err, redis.TxFailedErr) || attempt == putRetries {
			return r.wrap("put blob "+name, err)
		}
	}
}

// ListBlobs reads the index of dir's owner tree: names whose expiry is
// still ahead, under dir (expired ones are dropped from it on the way).
// "" is the single-user tree, never another owner's.
func (r *Redis) ListBlobs(ctx context.Context, dir string, limit int) ([]string, error) {
	if dir = strings.TrimSuffix(dir, "/"); dir == "." {
		dir = ""
	}
	if dir != "" {
		if err := checkBlobName(dir); err != nil {
			return nil, err
		}
	}
	tree := layout.TreeOf(dir)
	if dir == layout.OwnersDir {
		return nil, fmt.Errorf("%w: %q spans every owner's tree", ErrBadBlobName, dir)
	}
	index := r.indexKey(tree)
	nowMS := strconv.FormatInt(time.Now().UnixMilli(), 10)
	if err := r.client.ZRemRangeByScore(ctx, index, "-inf", "("+nowMS).Err(); err != nil {
		return nil, r.wrap("list blobs", err)
	}
	names, err := r.client.ZRange(ctx, index, 0, -1).Result()
	if err != nil {
		return nil, r.wrap("list blobs", err)
	}
	out := names[:0]
	for _, n := range names {
		if (dir == "" || strings.HasPrefix(n, dir+"/")) && layout.TreeOf(n) == tree {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func newGen() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// FetchBlob returns at once when the file is local (and marks it recently
// used); otherwise it downloads the blob, checks its size and sha256, and
// writes it atomically (temporary file, fsync, rename). Concurrent calls
// for one name share one download.
func (r *Redis) FetchBlob(ctx context.Context, name string) error {
	if err := checkBlobName(name); err != nil {
		return err
	}
	if r.opts.MemoryDir == "" {
		return fmt.Errorf("state: blob %q: no memory_dir to cache it in: %w", name, fs.ErrNotExist)
	}
	// memory_dir, if missing, is created as memdir creates it (0700).
	if err := memdir.At(r.opts.MemoryDir).Make(); err != nil {
		return fmt.Errorf("state: blob %q: %w", name, err)
	}
	root, err := os.OpenRoot(r.opts.MemoryDir)
	if err != nil {
		return fmt.Errorf("state: blob %q: %w", name, err)
	}
	defer root.Close()
	if err := statRegular(root, name); err == nil {
		r.touch(name)
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}

	r.blobMu.Lock()
	if c, ok := r.fetches[name]; ok {
		r.blobMu.Unlock()
		select {
		case <-c.done:
			return c.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c := &fetchCall{done: make(chan struct{})}
	r.fetches[name] = c
	r.blobMu.Unlock()

	c.err = r.download(ctx, root, name)
	r.blobMu.Lock()
	delete(r.fetches, name)
	r.blobMu.Unlock()
	close(c.done)
	return c.err
}

// fetchRetries bounds how often a read starts again because a concurrent
// PutBlob swapped the generation (and dropped its chunks) mid-read.
const fetchRetries = 3

// download reads the blob from Redis and writes it under root.
func (r *Redis) download(ctx context.Context, root *os.Root, name string) error {
	var data []byte
	for attempt := 0; ; attempt++ {
		var swapped bool
		var err error
		data, swapped, err = r.read(ctx, name)
		if err != nil {
			return err
		}
		if !swapped {
			break
		}
		if attempt == fetchRetries {
			return fmt.Errorf("state: blob %q: rewritten during %d reads in a row", name, fetchRetries+1)
		}
	}
	// memdir's atomic write, as every file under memory_dir: 0600 in
	// folders 0700, synced, renamed, the folder synced.
	if err := memdir.At(r.opts.MemoryDir).WriteFile(filepath.FromSlash(name), data); err != nil {
		return fmt.Errorf("state: blob %q: %w", name, err)
	}
	r.add(root, name, int64(len(data)))
	return nil
}

// read returns the blob's bytes, checked; swapped is true when a chunk was
// gone, as when another PutBlob replaced the generation between the meta
// and the chunks.
func (r *Redis) read(ctx context.Context, name string) (data []byte, swapped bool, err error) {
	meta, err := r.client.HGetAll(ctx, r.metaKey(name)).Result()
	if err = r.wrap("fetch blob "+name, err); err != nil {
		return nil, false, err
	}
	if len(meta) == 0 {
		return nil, false, fmt.Errorf("state: blob %q: %w", name, fs.ErrNotExist)
	}
	size, err1 := strconv.ParseInt(meta[blobSize], 10, 64)
	n, err2 := strconv.Atoi(meta[blobChunks])
	if err1 != nil || err2 != nil || size < 0 || n < 0 || int64(n) != (size+BlobChunkBytes-1)/BlobChunkBytes {
		return nil, false, fmt.Errorf("state: blob %q: bad metadata %v", name, meta)
	}
	cmds := make([]*redis.StringCmd, n)
	if n > 0 {
		_, err = r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := range cmds {
				cmds[i] = p.Get(ctx, r.chunkKey(name, meta[blobGen], i))
			}
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, false, r.wrap("fetch blob "+name, err)
		}
	}
	data = make([]byte, 0, size)
	for _, c := range cmds {
		b, err := c.Bytes()
		if errors.Is(err, redis.Nil) {
			return nil, true, nil
		}
		if err != nil {
			return nil, false, r.wrap("fetch blob "+name, err)
		}
		if len(b) > BlobChunkBytes {
			return nil, false, fmt.Errorf("state: blob %q: a chunk of %d bytes is over the bound", name, len(b))
		}
		data = append(data, b...)
	}
	sum := sha256.Sum256(data)
	if int64(len(data)) != size || hex.EncodeToString(sum[:]) != meta[blobSHA] {
		return nil, false, fmt.Errorf("state: blob %q: %d bytes do not match the stored size %d and sha256", name, len(data), size)
	}
	return data, false, nil
}

// touch marks a cached file recently used; files the cache did not write
// are not tracked.
func (r *Redis) touch(name string) {
	r.blobMu.Lock()
	defer r.blobMu.Unlock()
	if e, ok := r.cached[name]; ok {
		r.lru.MoveToFront(e)
	}
}

// add tracks a file the cache wrote and removes the least recently used
// ones while the sum is over the bound. The newest is kept even alone over
// the bound: its caller is about to read it.
func (r *Redis) add(root *os.Root, name string, size int64) {
	r.blobMu.Lock()
	defer r.blobMu.Unlock()
	if e, ok := r.cached[name]; ok {
		r.used -= e.Value.(*cached).size
		r.lru.Remove(e)
	}
	r.cached[name] = r.lru.PushFront(&cached{name: name, size: size})
	r.used += size
	for r.used > r.opts.CacheBytes && r.lru.Len() > 1 {
		e := r.lru.Back()
		c := e.Value.(*cached)
		r.lru.Remove(e)
		delete(r.cached, c.name)
		r.used -= c.size
		// A file already gone is as good as removed.
		_ = root.Remove(c.name)
	}
}
