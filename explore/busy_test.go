package explore

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
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
