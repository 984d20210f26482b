package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// Session counts behind a load balancer: with a replicated store each
// 2025 session is a bounded claim ([state.Leases].Claim) in two sets, all
// owners' and its owner's, so [StreamableHTTPOptions].MaxSessions and
// MaxSessionsPerOwner hold across the replicas, not per process. A
// session is one member whichever replicas hold a copy of it (taken up,
// replica_recover.go); each replica renews the claims of the sessions it holds
// every third of the lease, so those of a replica that dies expire. The
// bounds of one process (its own sessions' memory) stay as they are.

// DefaultLease is [Options].Lease when it is 0.
const DefaultLease = 30 * time.Second

// claimTimeout bounds the store's answer when a session is made.
const claimTimeout = 5 * time.Second

// sessionSets are the claim sets a session of owner counts in: every
// owner's, and owner's own.
func sessionSets(owner string) (all, mine string) {
	return "sessions/all", layout.OwnerSegment(owner) + "sessions/owner"
}

func (h *httpHandler) lease() time.Duration {
	if l := h.s.opts.Lease; l > 0 {
		return l
	}
	return DefaultLease
}

// claim counts session id of owner across the replicas, or says which
// bound it would pass. A session taken up (takenUp) is counted already by
// the replica that made it: its claim is renewed, never refused.
func (h *httpHandler) claim(ctx context.Context, owner, id string, takenUp bool) error {
	if !h.replicated() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	st, ttl := h.s.opts.State, h.lease()
	all, mine := sessionSets(owner)
	for _, c := range []struct {
		set, what string
		limit     int
	}{
		{all, "the replicas hold their limit of %d sessions", h.maxAll},
		{mine, "this owner holds its limit of %d sessions on the replicas", h.maxOwner},
	} {
		var err error
		ok := true
		if takenUp || c.limit <= 0 {
			err = st.Lease(ctx, c.set, id, ttl)
		} else {
			ok, err = st.Claim(ctx, c.set, id, ttl, c.limit)
		}
		if err == nil && !ok {
			err = fmt.Errorf("%w: "+c.what+"; end one (DELETE) or try again later", ErrTooManySessions, c.limit)
		}
		if err != nil {
			if c.set == mine {
				h.unclaim(owner, id) // the first set's claim too
			}
			return err
		}
	}
	return nil
}

// unclaim gives session id's places back: its copy here ended. A copy on
// another replica claims it again at its next renewal.
func (h *httpHandler) unclaim(owner, id string) {
	if !h.replicated() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	all, mine := sessionSets(owner)
	for _, set := range []string{all, mine} {
		if err := h.s.opts.State.Release(ctx, set, id); err != nil {
			h.s.log.Warn("giving a session's place back failed; it expires with its lease", "session", id, "error", err)
			return
		}
	}
}

// renewClaims renews the claims of the sessions held here, every third of
// the lease, until the server shuts down.
func (h *httpHandler) renewClaims() {
	t := time.NewTicker(h.lease() / 3)
	defer t.Stop()
	for {
		select {
		case <-h.s.ctx.Done():
			return
		case <-t.C:
		}
		h.mu.Lock()
		byOwner := map[string][]string{}
		for id, hs := range h.sessions {
			byOwner[hs.se.owner] = append(byOwner[hs.se.owner], id)
		}
		h.mu.Unlock()
		ctx, cancel := context.WithTimeout(h.s.ctx, claimTimeout)
		var all []string
		var err error
		for owner, ids := range byOwner {
			all = append(all, ids...)
			_, mine := sessionSets(owner)
			err = errors.Join(err, h.s.opts.State.LeaseAll(ctx, mine, ids, h.lease()))
		}
		allSet, _ := sessionSets("")
		err = errors.Join(err, h.s.opts.State.LeaseAll(ctx, allSet, all, h.lease()))
		cancel()
		if err != nil && h.s.ctx.Err() == nil {
			h.s.log.Warn("renewing the sessions' places on the shared store failed", "error", err)
		}
	}
}
