package agents

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/artifacts"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// A session's identity is read once, from the request that creates it:
// the guard's parse when it left one in the context, the headers
// otherwise; later requests change only the per-request figures.
func TestSessionIdentityOnce(t *testing.T) {
	cfg := config.Default()
	cfg.MemoryDir = t.TempDir()
	cfg.Agent.ContextWindow = 100_000
	cfg.Agent.Scratchpad.ContextSafetyMargin = 0 // no margin: the budget is the window
	small := 3000
	cfg.Orchestration.Workers["w1"] = config.Worker{Name: "w1", Scratchpad: config.ScratchpadOverride{MaxExtractionTokens: &small}}
	r := newRegistry(t, cfg)

	req := httptest.NewRequest("POST", "/mcp?X-Scratchpad-Run=r1", nil)
	req.Header.Set(HeaderAgent, "w1")
	req.Header.Set(HeaderRole, "Coordinator")
	parsed, err := FromRequest(req, "alice")
	if err != nil {
		t.Fatal(err)
	}
	want := Identity{Agent: "w1", Role: RoleCoordinator, Run: "r1", Owner: "alice"}
	if parsed != want {
		t.Fatalf("FromRequest = %+v, want %+v", parsed, want)
	}
	s, err := r.Session("s1", req.WithContext(WithRequestIdentity(req.Context(), parsed)))
	if err != nil || s.Identity != want {
		t.Fatalf("Session = %+v, %v", s, err)
	}
	// Without the guard's parse the headers are read (and no owner).
	if s2, err := r.Session("s2", req); err != nil || s2.Identity.Owner != "" || s2.Identity.Agent != "w1" {
		t.Fatalf("Session without the guard: %+v, %v", s2, err)
	}
	// The worker's own limits, and the artifact writer for a coordinator.
	if !strings.Contains(s.Instructions, "max_extraction_tokens=3000") || !strings.Contains(s.Instructions, "context_window=100000") ||
		!strings.Contains(s.Instructions, `{"$scratchpad":{"file":NAME,"path":P}}`) {
		t.Errorf("instructions: %s", s.Instructions)
	}
	if lim := s.InitializeMeta["scratchpad/limits"].(map[string]any); lim["max_extraction_tokens"] != 3000 {
		t.Errorf("limits: %v", lim)
	}
	if !hasTool(s, artifacts.ToolWrite) {
		t.Error("a coordinator is not offered write_artifact")
	}

	// A later request's headers name someone else: ignored. Its context
	// figure is taken.
	h := http.Header{}
	h.Set(HeaderAgent, "intruder")
	h.Set(HeaderContextTokens, "60000")
	a, err := r.Resolve(s.Context(context.Background(), h))
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != want || a.Layout != layout.For(cfg.MemoryDir, "alice") {
		t.Fatalf("agent %+v in %s", a.ID, a.Layout.Base)
	}
	if got := a.Budget.Used(); got != 60000 {
		t.Errorf("used after the reported context use: %d", got)
	}
	if a.Budget.Total() != 100_000 {
		t.Errorf("budget %d with no margin, want the whole window", a.Budget.Total())
	}

	// Refusals: a bad header, a reserved run, a call outside any session.
	for _, hdr := range [][2]string{{HeaderRole, "boss"}, {HeaderRun, "owners"}, {HeaderIteration, "x"}, {HeaderContextTokens, "-1"}, {HeaderAgent, "a/b"}} {
		bad := httptest.NewRequest("POST", "/mcp", nil)
		bad.Header.Set(hdr[0], hdr[1])
		if _, err := FromRequest(bad, ""); !errors.Is(err, ErrInvalidIdentity) {
			t.Errorf("%s: %q accepted (%v)", hdr[0], hdr[1], err)
		}
	}
	if _, err := r.Resolve(context.Background()); !errors.Is(err, ErrNoSession) {
		t.Errorf("Resolve outside a session: %v", err)
	}
}

func hasTool(s *Session, name string) bool {
	for _, d := range s.Tools {
		if d.Name == name {
			return true
		}
	}
	return false
}

// TestIdentityKey: one key per agent, whatever the request (a
// 2026-07-28 client's agent is found again by it), and a different key
// for any field that names another agent.
func TestIdentityKey(t *testing.T) {
	base := Identity{Agent: "w1", Role: RoleWorker, Run: "r1", Iteration: 2, Owner: "alice"}
	n, err := Identity{Agent: "w1", Role: "Worker", Run: "r1", Iteration: 2, Owner: "alice"}.Normalize()
	if err != nil || n.Key() != base.Key() {
		t.Fatalf("normalized key %q, want %q (%v)", n.Key(), base.Key(), err)
	}
	seen := map[string]string{base.Key(): "base"}
	for name, id := range map[string]Identity{
		"agent":     {Agent: "w2", Role: RoleWorker, Run: "r1", Iteration: 2, Owner: "alice"},
		"role":      {Agent: "w1", Role: RoleCoordinator, Run: "r1", Iteration: 2, Owner: "alice"},
		"run":       {Agent: "w1", Role: RoleWorker, Run: "r2", Iteration: 2, Owner: "alice"},
		"iteration": {Agent: "w1", Role: RoleWorker, Run: "r1", Iteration: 3, Owner: "alice"},
		"owner":     {Agent: "w1", Role: RoleWorker, Run: "r1", Iteration: 2, Owner: "bob"},
		"no run":    {Agent: "w1", Role: RoleWorker, Iteration: 2, Owner: "alice"},
	} {
		if prev, dup := seen[id.Key()]; dup {
			t.Errorf("%s: key %q is %s's too", name, id.Key(), prev)
		}
		seen[id.Key()] = name
	}
}

// TestResolveOncePerCall: the agent Identify resolved rides in the
// call's context; the rest of the call gets that one.
func TestResolveOncePerCall(t *testing.T) {
	cfg := config.Default()
	cfg.MemoryDir = t.TempDir()
	r := newRegistry(t, cfg)
	s, err := r.SessionFor("s1", Identity{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, _, err := r.Identify(s.Context(context.Background(), nil), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := r.Resolve(ctx)
	r.Finish("s1") // a second Resolve from the session would make a new agent
	b, err := r.Resolve(ctx)
	if err != nil || a != b {
		t.Errorf("resolved %p then %p (%v): not the call's agent", a, b, err)
	}
}
