package explore

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// An agent's exploration calls running at once are bounded by its Env's
// slots: a call beyond them answers busy at once and runs nothing; once a
// slot is free calls run again.
func TestConcurrencyBoundedPerAgent(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.log"), "one\ntwo\n")
	env := dirEnv(t, dir)
	env.Slots = make(chan struct{}, 2)
	h := Tools(func(context.Context) (*Env, error) { return env, nil })[0].Handler
	args, _ := json.Marshal(map[string]any{"file": "a.log"})
	env.Slots <- struct{}{}
	env.Slots <- struct{}{} // two calls running
	res := h(context.Background(), args)
	if !strings.Contains(res.Text, `"error":"busy"`) || !strings.Contains(res.Text, "2 exploration calls") {
		t.Fatalf("a third call: %s", res.Text)
	}
	<-env.Slots
	if res := h(context.Background(), args); strings.Contains(res.Text, `"error"`) {
		t.Fatalf("with a slot free: %s", res.Text)
	}
	if len(env.Slots) != 1 {
		t.Fatalf("the call kept its slot: %d taken", len(env.Slots))
	}
}

// The calls of an owner's agents running at once are bounded together
// by their shared OwnerSlots: an agent with slots of its own free still
// answers busy, naming its owner's bound, while its owner's are taken;
// a call refused takes no slot of either.
func TestConcurrencyBoundedPerOwner(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.log"), "one\ntwo\n")
	owner := make(chan struct{}, 2)
	a, b := dirEnv(t, dir), dirEnv(t, dir)
	for _, e := range []*Env{a, b} {
		e.Slots, e.OwnerSlots = make(chan struct{}, 4), owner
	}
	handler := func(e *Env) tool.Handler {
		return Tools(func(context.Context) (*Env, error) { return e, nil })[0].Handler
	}
	args, _ := json.Marshal(map[string]any{"file": "a.log"})
	// Agent a runs two calls: its owner's bound is reached.
	a.Slots <- struct{}{}
	a.Slots <- struct{}{}
	owner <- struct{}{}
	owner <- struct{}{}
	for _, c := range []struct {
		name string
		env  *Env
	}{{"the agent running them", a}, {"another agent of the owner", b}} {
		res := handler(c.env)(context.Background(), args)
		if !strings.Contains(res.Text, `"error":"busy"`) || !strings.Contains(res.Text, "owner already has 2 exploration calls") {
			t.Fatalf("%s: %s", c.name, res.Text)
		}
	}
	if len(a.Slots) != 2 || len(b.Slots) != 0 || len(owner) != 2 {
		t.Fatalf("refused calls kept slots: agent a %d, agent b %d, owner %d", len(a.Slots), len(b.Slots), len(owner))
	}
	<-owner
	<-a.Slots
	if res := handler(b)(context.Background(), args); strings.Contains(res.Text, `"error"`) {
		t.Fatalf("with an owner's slot free: %s", res.Text)
	}
	if len(b.Slots) != 0 || len(owner) != 1 {
		t.Fatalf("the call kept its slots: agent %d, owner %d", len(b.Slots), len(owner))
	}
}

// Arguments the schema refuses are answered invalid_arguments even when
// every slot is taken: refused calls take no slot, so a flood of them
// cannot make good calls busy.
func TestRefusedArgumentsTakeNoSlot(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.log"), "one\ntwo\n")
	env := dirEnv(t, dir)
	env.Slots = make(chan struct{}, 1)
	env.Slots <- struct{}{} // the agent's one slot is taken
	var grep tool.Handler
	for _, d := range Tools(func(context.Context) (*Env, error) { return env, nil }) {
		if d.Name == ToolGrep {
			grep = d.Handler
		}
	}
	for _, args := range []map[string]any{
		{"file": "a.log", "pattern": "one", "context": 100_000_000},
		{"file": strings.Repeat("a", 1<<20), "pattern": "one"},
		{"file": "a.log", "pattern": "one", "PATTERN": "x"},
	} {
		raw, _ := json.Marshal(args)
		if res := grep(context.Background(), raw); !strings.Contains(res.Text, `"error":"invalid_arguments"`) {
			t.Errorf("refused arguments with every slot taken: %.200s", res.Text)
		}
	}
	raw, _ := json.Marshal(map[string]any{"file": "a.log", "pattern": "one"})
	if res := grep(context.Background(), raw); !strings.Contains(res.Text, `"error":"busy"`) {
		t.Errorf("good arguments with every slot taken: %.200s", res.Text)
	}
}
