package agents

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
)

// ErrOwnerFull is the error of a store refused because its owner holds
// its bound of stored data ([retention] owner_max_bytes).
var ErrOwnerFull = errors.New("owner's stored data is at its bound")

// quotaRecount is how often an owner's stored bytes are counted again
// from disk: between counts what it stores is added, and what retention
// or a delete removed is only seen at the next count.
const quotaRecount = time.Minute

// quotas bounds what each owner stores: one owner filling memory_dir
// must not make every other owner's divert fail.
type quotas struct {
	max int64

	mu sync.Mutex
	by map[string]*ownerUse
}

type ownerUse struct {
	mu      sync.Mutex
	bytes   int64
	counted time.Time
}

// reserve counts n bytes about to be stored under base (owner's tree), or
// refuses them when they would take the owner past its bound. The count
// is from disk at most quotaRecount old.
func (q *quotas) reserve(owner, base string, n int64) error {
	if q == nil || q.max <= 0 || owner == "" {
		return nil
	}
	q.mu.Lock()
	u := q.by[owner]
	if u == nil {
		u = &ownerUse{}
		q.by[owner] = u
	}
	q.mu.Unlock()
	// Per owner: one owner's count never waits on another's walk.
	u.mu.Lock()
	defer u.mu.Unlock()
	if time.Since(u.counted) > quotaRecount {
		u.bytes, u.counted = treeBytes(base), time.Now()
	}
	if u.bytes+n > q.max {
		return fmt.Errorf("%w: this owner stores %s and its bound is %s ([retention] owner_max_bytes), so this output of %s was not stored; delete finished runs or wait for retention to sweep old outputs", ErrOwnerFull, config.SizeText(u.bytes), config.SizeText(q.max), config.SizeText(n))
	}
	u.bytes += n
	return nil
}

// treeBytes is the size of the regular files under dir; what cannot be
// read counts as nothing.
func treeBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// sharedQuota is the store stored outputs are shared through, with
// replicas, bounded by [retention] owner_max_bytes across them: each
// stored output is a size claim ([state.Leases].ClaimSize) named by its
// blob's name, lasting as long as the blob (the same ttl), so the bound
// counts what the owner keeps on the shared store whichever replica wrote
// it; an output stored again replaces its claim rather than adding one.
// The count of this replica's own tree ([quotas]) still bounds its disk.
type sharedQuota struct {
	st    state.Store
	owner string
	max   int64
}

// storedBytesSet is owner's set of size claims.
func storedBytesSet(owner string) string { return layout.OwnerSegment(owner) + "stored-bytes" }

// PutBlob implements divert.BlobPutter: the claim first, then the blob.
func (q sharedQuota) PutBlob(ctx context.Context, name string, data []byte, ttl time.Duration) error {
	if q.max > 0 && q.owner != "" {
		n := int64(len(data))
		total, ok, err := q.st.ClaimSize(ctx, storedBytesSet(q.owner), name, n, ttl, q.max)
		if err != nil {
			return err
		}
		if !ok {
			return refusal{fmt.Errorf("%w: this owner stores %s on the replicas and its bound is %s ([retention] owner_max_bytes), so this output of %s was not stored; delete finished runs or wait for old outputs to expire (max_age)", ErrOwnerFull, config.SizeText(total), config.SizeText(q.max), config.SizeText(n))}
		}
		if err := q.st.PutBlob(ctx, name, data, ttl); err != nil {
			// Not kept: its claim holds nothing (best effort; it
			// expires with the blob's ttl otherwise).
			_, _, _ = q.st.ClaimSize(ctx, storedBytesSet(q.owner), name, 0, ttl, q.max)
			return err
		}
		return nil
	}
	return q.st.PutBlob(ctx, name, data, ttl)
}

// refusal is an error divert tells the model as a refusal
// ([divert.ErrRefused]), not as a store to call again once it answers.
type refusal struct{ error }

func (r refusal) Unwrap() error      { return r.error }
func (refusal) Is(target error) bool { return target == divert.ErrRefused }
