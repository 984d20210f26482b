package frontdoor

import (
	"context"
)

// Caller is who sends a request, put in its context once by the front
// door ([FrontDoor], [WithCaller]) and read wherever the server needs to
// know (which sessions a request may name, whose proxy a session holds).
// Over stdio, and without a front door, it is the zero Caller.
//
// A 2025 session is fixed by the request that creates it; a 2026-07-28
// request has no session, so the Caller of each request is who it is: its
// agent's state (budget, pad, usage record) is found by Agent.
type Caller struct {
	// Owner is the owner of the request's bearer token; "" without
	// tokens.
	Owner string
	// Agent names the agent the request's identity headers describe,
	// owner included (the same string for the same agent, whatever the
	// request); "" when nothing identified it (then Owner alone does).
	Agent string
}

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf is the Caller ctx carries, the zero Caller when none.
func CallerOf(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}
