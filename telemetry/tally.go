package telemetry

import (
	"context"
	"sync"
)

// Tally is what the layers under the server learn of one call, for its
// audit [Record]: who the agent is (agents), what the result counted and
// where it went (proxy's divert, the own tools' charging). The server
// reads it back with [Span.Tally] when it writes the record. Zero fields
// are "not known".
type Tally struct {
	Agent, Run, Role string
	Counted          int // the result's tokens as counted
	Out              int // tokens that reached the context
	Diverted         int // tokens stored instead of returned
	Charged          int // tokens charged to the budget
	ByReference      int // tokens of stored outputs put in the arguments by reference
	File             string
	Referenced       []string // the stored outputs the arguments referred to
	// Budget, when set, reads the agent's budget (left, whole; ok false
	// for an unlimited one) when the server writes the record: after
	// the call's charges.
	Budget func() (left, size int, ok bool)
}

// tally is a server span's Tally; a call's layers may note from other
// goroutines (a parked call, a task), hence the lock.
type tally struct {
	mu sync.Mutex
	t  Tally
}

// serverSpanKey holds, in a request's context, its server [Span].
type serverSpanKey struct{}

// ServerSpan is the server span of the request ctx belongs to (the one
// [Provider.StartServer] started), nil when telemetry is off or ctx is
// no request's: [Span.Note] on nil does nothing.
func ServerSpan(ctx context.Context) *Span {
	s, _ := ctx.Value(serverSpanKey{}).(*Span)
	return s
}

// Note merges t's set fields into the span's tally.
func (s *Span) Note(t Tally) {
	if s == nil || s.tally == nil {
		return
	}
	s.tally.mu.Lock()
	defer s.tally.mu.Unlock()
	x := &s.tally.t
	for _, f := range []struct {
		dst *string
		v   string
	}{{&x.Agent, t.Agent}, {&x.Run, t.Run}, {&x.Role, t.Role}, {&x.File, t.File}} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
	x.Counted += t.Counted
	x.Out += t.Out
	x.Diverted += t.Diverted
	x.Charged += t.Charged
	x.ByReference += t.ByReference
	x.Referenced = append(x.Referenced, t.Referenced...)
	if t.Budget != nil {
		x.Budget = t.Budget
	}
}

// Tally is what was noted on the span so far.
func (s *Span) Tally() Tally {
	if s == nil || s.tally == nil {
		return Tally{}
	}
	s.tally.mu.Lock()
	defer s.tally.mu.Unlock()
	return s.tally.t
}

// Owner is the Op.Owner the span was started with.
func (s *Span) Owner() string {
	if s == nil {
		return ""
	}
	return s.op.Owner
}
