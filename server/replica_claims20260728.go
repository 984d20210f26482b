package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// Agent counts behind a load balancer: with a replicated store each
// 2026-07-28 caller's agent is a bounded claim in two sets, all owners'
// and its owner's, as a 2025 session is (replica_claims.go), so MaxSessions and
// MaxSessionsPerOwner bound the agents of all the replicas together. The
// member is the agent's key, the same on every replica the caller
// reaches, so a caller is counted once however many replicas hold a copy
// of its agent. A replica cannot end another's idle agent to make room
// (this process's least recently used one still can be): a new caller
// past the shared bound is refused until an agent ends somewhere, or a
// dead replica's claims expire with their lease.

// agentSets are the claim sets an agent of owner counts in.
func agentSets(owner string) (all, mine string) {
	return "agents/all", layout.OwnerSegment(owner) + "agents/owner"
}

func (m *agents20260728) replicated() bool {
	return m.srv.opts.State != nil && m.srv.opts.State.Replicated()
}

func (m *agents20260728) lease() time.Duration {
	if l := m.srv.opts.Lease; l > 0 {
		return l
	}
	return DefaultLease
}

// claim counts the new agent key of owner across the replicas, or says
// which bound it would pass; the renewal of every agent held here starts
// with the first.
func (m *agents20260728) claim(owner, key string) error {
	if !m.replicated() {
		return nil
	}
	m.renewOnce.Do(func() { go m.renewClaims() })
	ctx, cancel := context.WithTimeout(m.srv.ctx, claimTimeout)
	defer cancel()
	st, ttl := m.srv.opts.State, m.lease()
	all, mine := agentSets(owner)
	for _, c := range []struct {
		set, what string
		limit     int
	}{
		{all, "the replicas hold their limit of %d agents", m.max},
		{mine, "this owner holds its limit of %d agents on the replicas", m.maxOwner},
	} {
		var err error
		ok := true
		if c.limit <= 0 {
			err = st.Lease(ctx, c.set, key, ttl)
		} else {
			ok, err = st.Claim(ctx, c.set, key, ttl, c.limit)
		}
		if err == nil && !ok {
			err = fmt.Errorf("%w: "+c.what+"; try again later", ErrTooManySessions, c.limit)
		}
		if err != nil {
			if c.set == mine {
				m.unclaim(owner, key)
			}
			return err
		}
	}
	return nil
}

// unclaim gives agent key's places back: its copy here ended (a copy on
// another replica claims it again at its next renewal).
func (m *agents20260728) unclaim(owner, key string) {
	if !m.replicated() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	all, mine := agentSets(owner)
	for _, set := range []string{all, mine} {
		if err := m.srv.opts.State.Release(ctx, set, key); err != nil {
			m.srv.log.Warn("giving an agent's place back failed; it expires with its lease", "agent", key, "error", err)
			return
		}
	}
}

// renewClaims renews the claims of the agents held here, every third of
// the lease, until the server shuts down.
func (m *agents20260728) renewClaims() {
	t := time.NewTicker(m.lease() / 3)
	defer t.Stop()
	for {
		select {
		case <-m.srv.ctx.Done():
			return
		case <-t.C:
		}
		m.mu.Lock()
		byOwner := map[string][]string{}
		var every []string
		for key, a := range m.byKey {
			byOwner[a.owner] = append(byOwner[a.owner], key)
			every = append(every, key)
		}
		m.mu.Unlock()
		if len(every) == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(m.srv.ctx, claimTimeout)
		var err error
		for owner, keys := range byOwner {
			_, mine := agentSets(owner)
			err = errors.Join(err, m.srv.opts.State.LeaseAll(ctx, mine, keys, m.lease()))
		}
		all, _ := agentSets("")
		err = errors.Join(err, m.srv.opts.State.LeaseAll(ctx, all, every, m.lease()))
		cancel()
		if err != nil && m.srv.ctx.Err() == nil {
			m.srv.log.Warn("renewing the agents' places on the shared store failed", "error", err)
		}
	}
}
