package agents

import (
	"context"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
)

func newRegistry(t testing.TB, cfg *config.Config) *Registry {
	t.Helper()
	r, err := NewRegistry(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// newMaskingRegistry is newRegistry with a redactor that masks what it
// finds.
func newMaskingRegistry(t testing.TB, cfg *config.Config) *Registry {
	t.Helper()
	red, err := redact.New(redact.Options{Mode: redact.Mask})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(Options{Config: cfg, Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sessionCtx is the context of a request of session sid of agent id, as
// the server makes it.
func sessionCtx(t testing.TB, r *Registry, sid string, id Identity) context.Context {
	t.Helper()
	s, err := r.SessionFor(sid, id)
	if err != nil {
		t.Fatal(err)
	}
	return s.Context(context.Background(), nil)
}
