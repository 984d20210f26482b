package agents

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
)

// Replicas share the registry of live runs through the store's leases
// ([state.Leases]): each replica that has a live agent of a run holds a
// lease on the run's set, renewed while the agent lives and released when
// the last one here ends, so that retention on any replica keeps a run
// live on another ([Registry.LiveRun]). The lease lasts [cluster] lease:
// the leases of a replica that dies (SIGKILL, no release) expire with it.

// leaseTimeout bounds each lease command: a registry never waits on a
// stalled Redis longer than this.
const leaseTimeout = 5 * time.Second

// liveLeases is a replicated registry's share of its live runs.
type liveLeases struct {
	st      state.Store
	replica string        // this registry's member in every set
	ttl     time.Duration // [cluster] lease

	// mu serialises each run's lease with its release: the last call
	// made for a run reflects whether it is live here now.
	mu sync.Mutex

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// newLiveLeases starts the renewal of r's leases: every third of the
// lease, so two renewals can fail before a live run's lease expires.
func (r *Registry) newLiveLeases() *liveLeases {
	ttl := r.opts.Config.Cluster.Lease
	if ttl <= 0 {
		ttl = 30 * time.Second
	}
	host, _ := os.Hostname()
	l := &liveLeases{st: r.opts.State, ttl: ttl, stop: make(chan struct{}), done: make(chan struct{}),
		// host:pid names the replica in Redis; the random part tells
		// apart two registries of one process (tests) and a pid reused.
		replica: fmt.Sprintf("%s:%d:%s", host, os.Getpid(), rand.Text()[:8])}
	go func() {
		defer close(l.done)
		t := time.NewTicker(ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				r.renewLeases()
			}
		}
	}()
	return l
}

// close stops the renewals, once; leases still held expire.
func (l *liveLeases) close() {
	l.stopOnce.Do(func() { close(l.stop) })
	<-l.done
}

// runSet is the lease set of owner's run: one per run, its members the
// replicas with a live agent of it.
func runSet(owner, run string) string { return layout.OwnerSegment(owner) + "live-run/" + run }

// runOf names the run whose folder is dir (absolute, as [layout.Tree.Run]
// gives it): its owner and id, or false for a folder that is no run's.
func (r *Registry) runOf(dir string) (owner, run string, ok bool) {
	rel, err := filepath.Rel(r.opts.Config.MemoryDir, dir)
	if err != nil {
		return "", "", false
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	switch {
	case len(parts) == 1 && parts[0] != "." && parts[0] != ".." && !layout.Reserved(parts[0]):
		return "", parts[0], true
	case len(parts) == 3 && parts[0] == layout.OwnersDir:
		return parts[1], parts[2], true
	}
	return "", "", false
}

// syncRun makes this replica's lease on owner's run match what is live
// here: held while an agent of it lives, released after the last.
func (r *Registry) syncRun(owner, run string) {
	l := r.live
	if l == nil || run == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r.mu.Lock()
	live := r.keepRuns[layout.For(r.opts.Config.MemoryDir, owner).Run(run)] > 0
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), leaseTimeout)
	defer cancel()
	var err error
	if live {
		err = l.st.Lease(ctx, runSet(owner, run), l.replica, l.ttl)
	} else {
		err = l.st.Release(ctx, runSet(owner, run), l.replica)
	}
	if err != nil {
		// A lease not taken is taken at the next renewal; one not
		// released expires.
		r.log.Warn("sharing a live run with the other replicas failed", "owner", owner, "run", run, "live", live, "error", err)
	}
}

// renewLeases renews the lease of every run live here.
func (r *Registry) renewLeases() {
	type key struct{ owner, run string }
	r.mu.Lock()
	runs := make([]key, 0, len(r.keepRuns))
	for dir := range r.keepRuns {
		if owner, run, ok := r.runOf(dir); ok {
			runs = append(runs, key{owner, run})
		}
	}
	r.mu.Unlock()
	for _, k := range runs {
		r.syncRun(k.owner, k.run)
	}
}

// liveShared reports whether a replica (this one included) holds a lease
// on the run whose folder is dir. An error of the store keeps the run: a sweep that
// cannot ask must not remove what may be live.
func (r *Registry) liveShared(dir string) bool {
	l := r.live
	if l == nil {
		return false
	}
	owner, run, ok := r.runOf(dir)
	if !ok {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), leaseTimeout)
	defer cancel()
	holders, err := l.st.Live(ctx, runSet(owner, run))
	if err != nil {
		r.log.Warn("retention cannot ask the other replicas whether a run is live; keeping it", "owner", owner, "run", run, "error", err)
		return true
	}
	return len(holders) > 0
}
