package server

import (
	"errors"
)

// ErrOwnerRevoked: the owner's bearer token was revoked (or replaced by a
// new one) while its session or call lived ([Server.EndOwner]).
var ErrOwnerRevoked = errors.New("the owner's bearer token is no longer in force")

// EndOwner ends every live session and 2026-07-28 agent of owner, as
// [Server.Shutdown] ends all of them: its calls in flight (in either
// era: a 2026-07-28 call, listen and parked call ends with its agent)
// are cancelled ([ErrOwnerRevoked]) and its streams close, so a client holding a GET
// stream open learns at once that its token is gone, instead of when it
// next sends a request. Other owners are not touched. The front door's
// token set calls it when a token stops being in force
// ([config.TokenSet].Revoked).
func (s *Server) EndOwner(owner string) {
	if owner == "" {
		return
	}
	s.agents20260728.endOwner(owner)
	for _, se := range s.live() {
		if se.owner != owner {
			continue
		}
		se.stop(ErrOwnerRevoked)
		if ss := se.serverSession(); ss != nil {
			go func() { _ = ss.Close() }()
		}
	}
}

// endOwner ends every agent of owner.
func (m *agents20260728) endOwner(owner string) {
	m.endWhere(ErrOwnerRevoked, func(a *agent20260728) bool { return a.owner == owner })
}
