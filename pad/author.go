package pad

import "context"

type authorKey struct{}

// WithAuthor returns ctx naming the agent behind a request; the server
// sets it from the session's identity, and append_scratchpad records it
// on the ledger entry.
func WithAuthor(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, authorKey{}, name)
}

// AuthorFrom returns the name [WithAuthor] stored in ctx, or "".
func AuthorFrom(ctx context.Context) string {
	s, _ := ctx.Value(authorKey{}).(string)
	return s
}
