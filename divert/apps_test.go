package divert

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// TestAppResults: MCP Apps results (issue 55). An app-only result passes
// whole and uncharged whatever its size, the budget or the agent's
// settings; a diverted result of a tool with a page keeps its
// structuredContent, byte for byte, for the page (up to KeepStructured
// bytes, and not for a client that shows the model structuredContent),
// and the pointer is an error result only when the schema is listed and
// nothing was kept.
func TestAppResults(t *testing.T) {
	c := tokens.ForModel("openai", "gpt-4o")
	data := testupstream.Listing(40)
	// The upstream's own layout (spaces, an escaped slash) must reach the
	// page as it is.
	structured := json.RawMessage(`{"items": ` + string(data) + `, "url": "a\/b"}`)
	// Written by hand: encoding/json would compact structured.
	quoted, _ := json.Marshal(string(data))
	res := func() []byte {
		return []byte(`{"content":[{"type":"text","text":` + string(quoted) + `}], "structuredContent": ` + string(structured) + `}`)
	}
	onlyStructured := func() []byte {
		return []byte(`{"content":[], "structuredContent": ` + string(structured) + `}`)
	}
	n := c.Count(data)
	for _, tt := range []struct {
		name          string
		call          Call
		structuredOff bool // the agent's client shows structuredContent (result_view = "structured")
		disabled      bool // [agent.scratchpad] enabled = false
		left          int  // the budget left; 0: no bound
		wantDiverted  bool
		wantKept      bool // the pointer's structuredContent is the upstream's
		wantError     bool
		wantCharged   bool // the account was charged something
	}{
		{name: "app-only over its threshold", call: Call{AppOnly: true, Threshold: 1}},
		{name: "app-only over the budget", call: Call{AppOnly: true}, left: 10},
		{name: "app-only with the scratchpad off", call: Call{AppOnly: true, Threshold: 1}, disabled: true},
		{name: "app-only, structured only", call: Call{AppOnly: true, Threshold: 1, Result: onlyStructured()}},
		{name: "page tool kept", call: Call{Threshold: n, KeepStructured: 1 << 20, SchemaListed: true}, wantDiverted: true, wantKept: true, wantCharged: true},
		{name: "page tool, structured only, kept", call: Call{Threshold: 10, KeepStructured: 1 << 20, SchemaListed: true, Result: onlyStructured()}, wantDiverted: true, wantKept: true, wantCharged: true},
		{name: "page tool over the bound", call: Call{Threshold: n, KeepStructured: 100, SchemaListed: true}, wantDiverted: true, wantError: true, wantCharged: true},
		{name: "page tool, client shows structured", call: Call{Threshold: n, KeepStructured: 1 << 20, SchemaListed: true}, structuredOff: true, wantDiverted: true, wantError: true, wantCharged: true},
		{name: "page tool under its threshold", call: Call{Threshold: n + 1, KeepStructured: 1 << 20, SchemaListed: true}, wantCharged: true},
		{name: "other tool", call: Call{Threshold: n}, wantDiverted: true, wantCharged: true},
		{name: "other tool, schema listed", call: Call{Threshold: n, SchemaListed: true}, wantDiverted: true, wantError: true, wantCharged: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			charged := 0
			acc := funcs{charged: func(k int) { charged += k }}
			if tt.left > 0 {
				acc.left = func() int { return tt.left }
			}
			a := &Agent{Enabled: !tt.disabled, Dir: t.TempDir(), Counter: c, Structured: tt.structuredOff, Account: acc}
			call := tt.call
			call.Server, call.Tool, call.Owned = "monitor", "get-system-info", true
			if call.Result == nil {
				call.Result = res()
			}
			orig := bytes.Clone(call.Result)
			out, err := Decide(call, a, Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			if out.Diverted != tt.wantDiverted {
				t.Fatalf("diverted %v, want %v: %.300s", out.Diverted, tt.wantDiverted, out.Result)
			}
			if !out.Diverted && !bytes.Equal(out.Result, orig) {
				t.Errorf("passed, but not as it came: %.300s", out.Result)
			}
			if call.AppOnly && (!out.Charged || charged != 0) {
				t.Errorf("app-only: Charged %v, the account told %d; want nothing charged and the caller told not to", out.Charged, charged)
			}
			if got := charged > 0; got != tt.wantCharged {
				t.Errorf("charged %d, want charged %v", charged, tt.wantCharged)
			}
			if !out.Diverted {
				return
			}
			if !jsonscan.Valid(out.Result) {
				t.Fatalf("the pointer is not JSON: %s", out.Result)
			}
			kept, has := jsonscan.Lookup(out.Result, "structuredContent")
			if has != tt.wantKept || has && !bytes.Equal(kept, structured) {
				t.Errorf("structuredContent %.120q… (present %v), want the upstream's bytes: %v", kept, has, tt.wantKept)
			}
			var ptr struct {
				IsError bool `json:"isError"`
			}
			_ = json.Unmarshal(out.Result, &ptr)
			if ptr.IsError != tt.wantError {
				t.Errorf("isError %v, want %v", ptr.IsError, tt.wantError)
			}
			// The model is charged the pointer's text, not the kept data.
			if want := a.cost(withoutStructured(t, out.Result), true); charged != want {
				t.Errorf("charged %d, want the pointer's text: %d", charged, want)
			}
		})
	}
}

// withoutStructured is a pointer result without its structuredContent.
func withoutStructured(t *testing.T, raw []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "structuredContent")
	b, _ := json.Marshal(m)
	return b
}
