package pad

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// fakeSession is a client session: notifications for it land in ch.
type fakeSession struct {
	id string
	ch chan string
}

// harness serves the pad tools the way a server adapter does: handlers
// called with raw JSON arguments, subscriptions passed to a Watcher.
type harness struct {
	t      *testing.T
	padFor PadFunc
	w      *Watcher
	defs   map[string]tool.Def
}

func newHarness(t *testing.T, padFor func(context.Context) (*Pad, error), opts Options) *harness {
	w := NewWatcher()
	defs, err := Tools(padFor, opts, w)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, padFor: padFor, w: w, defs: map[string]tool.Def{}}
	for _, d := range defs {
		h.defs[d.Name] = d
	}
	return h
}

func (h *harness) session(id string) (context.Context, *fakeSession) {
	return context.Background(), &fakeSession{id: id, ch: make(chan string, 64)}
}

// subscribe subscribes s to the pad of ctx, as a server does on
// resources/subscribe.
func (h *harness) subscribe(ctx context.Context, s *fakeSession) {
	h.t.Helper()
	p, err := h.padFor(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	h.w.Subscribe(s.id, p, func() { s.ch <- ResourceURI })
}

func (h *harness) unsubscribe(s *fakeSession) { h.w.Unsubscribe(s.id) }

// tool calls a tool with args sent as JSON and returns its text and
// isError.
func (h *harness) tool(ctx context.Context, name string, args any) (string, bool) {
	h.t.Helper()
	d, ok := h.defs[name]
	if !ok {
		h.t.Fatalf("no tool %s", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		h.t.Fatal(err)
	}
	res := d.Handler(ctx, raw)
	return res.Text, res.IsError
}

func drain(ch chan string) []string {
	var out []string
	for {
		select {
		case n := <-ch:
			out = append(out, n)
		default:
			return out
		}
	}
}

func TestToolsResourcePrompt(t *testing.T) {
	p := newPad(t, Options{})
	h := newHarness(t, func(context.Context) (*Pad, error) { return p, nil }, Options{})
	ctx, sess := h.session("s1")

	for _, d := range h.defs {
		for _, banned := range []string{"owner", "agent", "run", `"pad"`, "thread"} {
			if strings.Contains(string(d.InputSchema), banned) {
				t.Errorf("%s schema has identity argument %s: %s", d.Name, banned, d.InputSchema)
			}
		}
	}
	if len(h.defs) != 3 {
		t.Fatalf("tools: %+v", h.defs)
	}

	h.subscribe(ctx, sess)

	text, isErr := h.tool(ctx, ToolUpdate, map[string]any{"patches": []map[string]any{{"section": "Plan", "op": "append", "content": "first step"}}})
	if isErr || !strings.Contains(text, "+1. [ ] first step") {
		t.Fatalf("update: %v %s", isErr, text)
	}
	notes := drain(sess.ch)
	if len(notes) != 1 || notes[0] != ResourceURI {
		t.Fatalf("notifications after update: %+v", notes)
	}

	text, isErr = h.tool(ctx, ToolUpdate, map[string]any{"patches": []map[string]any{{"section": "Vibes", "op": "append", "content": "x"}}})
	var obj map[string]any
	if isErr || json.Unmarshal([]byte(text), &obj) != nil || obj["error"] != "unknown_section" || !strings.Contains(obj["message"].(string), `unknown section "Vibes"`) {
		t.Fatalf("unknown section: %v %s", isErr, text)
	}
	text, _ = h.tool(ctx, ToolUpdate, map[string]any{"patches": []any{}})
	if text != "no change\n" {
		t.Fatalf("empty patch list: %q", text)
	}
	if n := drain(sess.ch); len(n) != 0 {
		t.Fatalf("no-op notified: %+v", n)
	}

	text, _ = h.tool(ctx, ToolAppend, map[string]any{"note": ""})
	if !strings.Contains(text, `"error":"empty_note"`) {
		t.Fatalf("empty note: %s", text)
	}
	text, isErr = h.tool(ctx, ToolAppend, map[string]any{"note": "the API paginates at 100", "tags": []string{"api"}})
	if isErr || !strings.HasPrefix(text, "appended") || len(drain(sess.ch)) != 1 {
		t.Fatalf("append: %s", text)
	}

	text, _ = h.tool(ctx, ToolRead, map[string]any{"tags": []string{"api"}})
	if !strings.Contains(text, "1. [ ] first step") || !strings.Contains(text, "[api] the API paginates at 100") {
		t.Fatalf("read:\n%s", text)
	}

	res := Resource(h.padFor)
	if res.URI != ResourceURI || res.MIMEType != "text/markdown" {
		t.Fatalf("resource: %+v", res)
	}
	if text, err := res.Read(ctx); err != nil || !strings.Contains(text, "first step") {
		t.Fatalf("resource read: %v\n%s", err, text)
	}
	pr := Prompt(h.padFor)
	if desc, text, err := pr.Get(ctx); pr.Name != PromptName || err != nil || desc == "" || !strings.Contains(text, "first step") {
		t.Fatalf("prompt %s: %q %v\n%s", pr.Name, desc, err, text)
	}
	noPad := func(context.Context) (*Pad, error) { return nil, nil }
	if _, err := Resource(noPad).Read(ctx); err == nil {
		t.Fatal("resource without a pad")
	}
	if text, isErr := newHarness(t, noPad, Options{}).tool(ctx, ToolRead, nil); !isErr || !strings.Contains(text, `"error":"no_pad"`) {
		t.Fatalf("tool without a pad: %v %s", isErr, text)
	}

	h.unsubscribe(sess)
	h.tool(ctx, ToolUpdate, map[string]any{"patches": []map[string]any{{"section": "Next", "op": "replace", "content": "x"}}})
	if n := drain(sess.ch); len(n) != 0 {
		t.Fatalf("notified after unsubscribe: %+v", n)
	}
}

func TestToolsNotifiesOnlySessionsOfTheChangedPad(t *testing.T) {
	root := t.TempDir()
	pads := map[string]*Pad{}
	for _, run := range []string{"runA", "runB"} {
		p, err := Open(filepath.Join(root, run, "pad"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		pads[run] = p
	}
	type runKey struct{}
	h := newHarness(t, func(ctx context.Context) (*Pad, error) {
		run, _ := ctx.Value(runKey{}).(string)
		if p := pads[run]; p != nil {
			return p, nil
		}
		return nil, fmt.Errorf("no run")
	}, Options{})
	ctxA1, a1 := h.session("a1")
	ctxA1 = context.WithValue(ctxA1, runKey{}, "runA")
	ctxA2, a2 := h.session("a2")
	ctxA2 = context.WithValue(ctxA2, runKey{}, "runA")
	ctxB, b := h.session("b")
	ctxB = context.WithValue(ctxB, runKey{}, "runB")
	h.subscribe(ctxA1, a1)
	h.subscribe(ctxA2, a2)
	h.subscribe(ctxB, b)
	h.tool(ctxA1, ToolAppend, map[string]any{"note": "shared by run A"})
	if len(drain(a1.ch)) != 1 || len(drain(a2.ch)) != 1 || len(drain(b.ch)) != 0 {
		t.Fatal("notification fan-out does not follow the pad")
	}
	text, _ := h.tool(ctxA2, ToolRead, map[string]any{})
	if !strings.Contains(text, "shared by run A") {
		t.Fatalf("run A's second agent does not see the shared ledger:\n%s", text)
	}
	text, _ = h.tool(ctxB, ToolRead, map[string]any{})
	if strings.Contains(text, "shared by run A") {
		t.Fatal("run B sees run A's pad")
	}
}

func TestToolsStructuredUpdate(t *testing.T) {
	opts := Options{Format: FormatJSON, Schema: fixture(t, "schema.json")}
	p := newPad(t, opts)
	h := newHarness(t, func(context.Context) (*Pad, error) { return p, nil }, opts)
	ctx, _ := h.session("s")
	text, isErr := h.tool(ctx, ToolUpdate, map[string]any{"state": map[string]any{"task": "t", "step": 1}})
	if isErr || !strings.Contains(text, `+  "step": 1,`) {
		t.Fatalf("merge: %s", text)
	}
	text, _ = h.tool(ctx, ToolUpdate, map[string]any{"state": map[string]any{"step": "two"}})
	if !strings.Contains(text, `"error":"schema_violation"`) || !strings.Contains(text, `"state_unchanged":true`) {
		t.Fatalf("schema violation: %s", text)
	}
	text, _ = h.tool(ctx, ToolUpdate, map[string]any{"patches": []any{}})
	if !strings.Contains(text, `"error":"wrong_format"`) {
		t.Fatalf("patches on structured pad: %s", text)
	}
}

func TestToolsNotifiesChangesMadeElsewhere(t *testing.T) {
	old := pollInterval
	pollInterval = 5 * time.Millisecond
	t.Cleanup(func() { pollInterval = old })

	p := newPad(t, Options{})
	h := newHarness(t, func(context.Context) (*Pad, error) { return p, nil }, Options{})
	ctx, sess := h.session("s")
	h.subscribe(ctx, sess)

	// Another process appends to the shared ledger: simulate with a second
	// *Pad on the same directory, which this server's tools never see.
	other, err := Open(p.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Append("from another process", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-sess.ch:
		if n != ResourceURI {
			t.Fatalf("notification %+v", n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no notification for a change made outside the tools")
	}

	// A tool change is announced once, not again by the watcher.
	h.tool(ctx, ToolAppend, map[string]any{"note": "via tool"})
	<-sess.ch
	from := h.w.rounds.Load()
	testwait.For(t, "two poll rounds after the tool's change", func() bool { return h.w.rounds.Load() >= from+2 })
	if extra := drain(sess.ch); len(extra) != 0 {
		t.Fatalf("duplicate notifications: %d", len(extra))
	}

	// Unsubscribing stops the watcher's notifications: the poll ends at
	// its next round, before it looks at the pad again.
	h.unsubscribe(sess)
	other.Append("after unsubscribe", nil)
	testwait.For(t, "the poll to end", func() bool { h.w.mu.Lock(); defer h.w.mu.Unlock(); return !h.w.polling })
	if extra := drain(sess.ch); len(extra) != 0 {
		t.Fatalf("notified after unsubscribe: %d", len(extra))
	}
}

// An unknown op's answer lists every op, the same in its message and in
// its ops array.
func TestUnknownOpListsEveryOp(t *testing.T) {
	p := newPad(t, Options{})
	h := newHarness(t, func(context.Context) (*Pad, error) { return p, nil }, Options{})
	ctx, _ := h.session("s")
	got, _ := h.tool(ctx, ToolUpdate, map[string]any{"patches": []map[string]any{{"section": "Plan", "op": "tick", "content": "1"}}})
	var o struct {
		Error   string   `json:"error"`
		Message string   `json:"message"`
		Ops     []string `json:"ops"`
	}
	if err := json.Unmarshal([]byte(got), &o); err != nil || o.Error != "unknown_op" {
		t.Fatalf("%s (%v)", got, err)
	}
	if len(o.Ops) != len(Ops)+len(KeyOps) || !strings.Contains(o.Message, strings.Join(o.Ops, ", ")) {
		t.Errorf("ops %v, message %q: not the same list", o.Ops, o.Message)
	}
}

// The tools' schemas decide what arguments are: a wrong type or a missing
// required argument is invalid_arguments naming each problem, and nothing is
// written.
func TestArgumentsCheckedBySchema(t *testing.T) {
	p := newPad(t, Options{})
	h := newHarness(t, func(context.Context) (*Pad, error) { return p, nil }, Options{})
	ctx, _ := h.session("s")
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{ToolAppend, map[string]any{}, "note is required"},
		{ToolAppend, map[string]any{"note": 7, "tags": "k8s"}, "note must be a string, not an integer; tags must be an array, not a string"},
		{ToolRead, map[string]any{"format": "yaml"}, `format must be one of \"markdown\", \"xml\", \"json\", \"kv\"`},
		{ToolRead, map[string]any{"max_tokens": 1.5}, "max_tokens must be an integer, not a number"},
	} {
		text, _ := h.tool(ctx, tc.tool, tc.args)
		if !strings.Contains(text, `"error":"invalid_arguments"`) || !strings.Contains(text, tc.want) {
			t.Errorf("%s %v: %s, want %q", tc.tool, tc.args, text, tc.want)
		}
	}
	if entries, _ := ledgerOf(t, p); len(entries) != 0 {
		t.Fatalf("a refused append wrote %v", entries)
	}
}
