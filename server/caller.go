package server

import (
	"context"
	"net/http"
)

// Caller is who sends a request, put in its context once by the front
// door ([FrontDoor], [WithCaller]) and read wherever the server needs to
// know (which sessions a request may name, whose proxy a session holds).
// Over stdio, and without a front door, it is the zero Caller.
//
// Owner is all it holds today; the era a request speaks and its agent key
// join it when requests, not sessions, become the unit (MCP 2026-07-28).
type Caller struct {
	// Owner is the owner of the request's bearer token; "" without
	// tokens.
	Owner string
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

// ownerOf is the owner of the Caller of r; "" for no request (stdio).
func ownerOf(r *http.Request) string {
	if r == nil {
		return ""
	}
	return CallerOf(r.Context()).Owner
}
