package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/state"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// A 2025 session behind a load balancer: with a replicated store
// ([Options].State on Redis) what a session is — its owner, what the
// client said at initialize, the version negotiated, its log level — is
// kept in the store as a [sessionRecord], and a replica that gets a
// request naming a session it does not hold takes the session up from
// the record instead of answering "session not found". Upstreams,
// streams in flight and the GET stream stay on the replica that has them.

// sessionRecord is what any replica needs to take a session up.
type sessionRecord struct {
	Owner    string                 `json:"owner"`
	State    mcp.ServerSessionState `json:"state"`
	LogLevel string                 `json:"logLevel,omitempty"`
}

// recordTTL is how long a record lasts without a request renewing it:
// the idle timeout when there is one, else a day.
func (h *httpHandler) recordTTL() time.Duration {
	if h.timeout > 0 {
		return h.timeout
	}
	return 24 * time.Hour
}

// replicated reports whether sessions are kept for other replicas.
func (h *httpHandler) replicated() bool {
	return h.s.opts.State != nil && h.s.opts.State.Replicated()
}

// keep writes hs's record, after initialize and after a level change,
// before the client hears the answer. A failure is logged: the session goes on
// here, and another replica answers "session not found" as without
// replicas.
func (h *httpHandler) keep(ctx context.Context, hs *httpSession) {
	if !h.replicated() {
		return
	}
	ip := hs.ss.InitializeParams()
	if ip == nil {
		return
	}
	rec := sessionRecord{Owner: hs.se.owner, LogLevel: hs.se.logLevel()}
	rec.State.InitializeParams = ip
	rec.State.InitializedParams = &mcp.InitializedParams{}
	rec.State.NegotiatedProtocolVersion = negotiated(ip.ProtocolVersion)
	rec.State.LogLevel = mcp.LoggingLevel(rec.LogLevel)
	b, err := json.Marshal(rec)
	if err == nil {
		err = h.s.opts.State.PutSession(context.WithoutCancel(ctx), hs.conn.id, b, h.recordTTL())
	}
	if err != nil {
		h.s.log.Warn("keeping the session for other replicas failed", "session", hs.conn.id, "error", err)
	}
}

// renew pushes the record's expiry back after a request. It never
// writes a record (PEXPIRE): a session deleted meanwhile stays deleted.
func (h *httpHandler) renew(ctx context.Context, hs *httpSession) {
	if !h.replicated() || hs.ss.InitializeParams() == nil {
		return
	}
	if err := h.s.opts.State.RenewSession(context.WithoutCancel(ctx), hs.conn.id, h.recordTTL()); err != nil {
		h.s.log.Warn("renewing the session's record failed", "session", hs.conn.id, "error", err)
	}
}

// negotiated is the version go-sdk answers an initialize asking for v
// with: v when served, else the newest 2025 revision.
func negotiated(v string) string {
	l := wire.Revisions2025()
	if slices.Contains(l, v) {
		return v
	}
	return l[0]
}

// takeUp makes the session id, held by another replica (or by this one
// before a restart), live here from its record; nil when there is no
// record or it is another owner's (answered as unknown, like a live
// session of another owner).
func (h *httpHandler) takeUp(r *http.Request, id string) *httpSession {
	if !h.replicated() {
		return nil
	}
	b, err := h.s.opts.State.GetSession(r.Context(), id)
	if err != nil {
		if !errors.Is(err, state.ErrNoSession) {
			h.s.log.Warn("reading a session another replica made failed", "session", id, "error", err)
		}
		return nil
	}
	var rec sessionRecord
	if json.Unmarshal(b, &rec) != nil || rec.State.InitializeParams == nil || rec.Owner != ownerOf(r) {
		return nil
	}
	hs, err := h.make(r, id, &rec.State)
	if err != nil {
		if !errors.Is(err, ErrTooManySessions) {
			h.s.log.Warn("taking up a session failed", "session", id, "error", err)
		}
		return nil
	}
	if rec.LogLevel != "" {
		hs.se.setLogLevel(rec.LogLevel)
	}
	h.s.log.Info("session taken up from the shared store", "session", id, "owner", rec.Owner)
	return hs
}

// forgetRecord drops a session's record (DELETE, idle timeout): no
// replica takes it up after.
func (h *httpHandler) forgetRecord(id string) {
	if !h.replicated() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.s.opts.State.DeleteSession(ctx, id); err != nil {
		h.s.log.Warn("forgetting the session's record failed", "session", id, "error", err)
	}
}
